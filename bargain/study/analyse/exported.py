"""Reading a study's export for analysis: the folder `bargain export` writes, or the zip archive the researcher's
dashboard gives (its files at the top, or inside one folder).

The tables are read from Parquet, which holds every value exactly (the CSV copies round numbers to 10 digits);
JSON columns (a game's `extra` and `claims`) are parsed. The study's settings come from study.json, or, for an
export written before it existed, from the games (`settings.settings_from_games`, which the analysis says it
used). Every file read is fingerprinted (SHA-256), so that a report names exactly the data it came from.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bargain.study.analyse.settings import StudySettings, settings_from_configs, settings_from_games
from bargain.study.config import SETTINGS_FILE

READ = ("games", "participants", "moves", "surveys_long")  # the tables the analysis reads, as .parquet
JSON_COLUMNS = ("extra", "claims")  # of games


class AnalysisError(ValueError):
    """An export or an option the analysis cannot use; the message says why in one line."""


@dataclass(frozen=True, eq=False)
class Export:
    """A study's export as read: its tables, the study's settings and the SHA-256 of each file read."""

    path: Path
    games: pd.DataFrame
    participants: pd.DataFrame
    moves: pd.DataFrame
    surveys: pd.DataFrame
    settings: StudySettings
    sha256: tuple[tuple[str, str], ...]  # (file, digest), by file name


def read_export(path: Path) -> Export:
    """The export in the folder or zip archive at `path`; an AnalysisError says why one cannot be read."""
    path = Path(path)
    files = _zip_files(path) if path.is_file() else _folder_files(path)
    missing = [f"{name}.parquet" for name in READ if f"{name}.parquet" not in files]
    if missing:
        raise AnalysisError(
            f"{path} is not a study export: no {', '.join(missing)} (`bargain export` or the dashboard's Export "
            "writes one)"
        )
    tables = {name: pd.read_parquet(io.BytesIO(files[f"{name}.parquet"])) for name in READ}
    games = tables["games"].copy()
    for column in JSON_COLUMNS:
        games[column] = games[column].map(lambda text: json.loads(text) if isinstance(text, str) and text else None)
    if SETTINGS_FILE in files:
        document = json.loads(files[SETTINGS_FILE])
        settings = settings_from_configs(document["name"], [v["settings"] for v in document["versions"]])
    else:
        settings = settings_from_games(games, tables["surveys_long"])
    digests = {name: hashlib.sha256(content).hexdigest() for name, content in files.items() if _read(name)}
    if path.is_file():
        digests[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return Export(
        path,
        games,
        tables["participants"],
        tables["moves"],
        tables["surveys_long"],
        settings,
        tuple(sorted(digests.items())),
    )


def _read(name: str) -> bool:
    """Whether the analysis reads this file of an export."""
    return name == SETTINGS_FILE or name in {f"{table}.parquet" for table in READ}


def _folder_files(path: Path) -> dict[str, bytes]:
    """The files read from an export folder (or the one folder inside it that holds the export)."""
    if not path.exists():
        raise AnalysisError(f"{path}: no such folder or file")
    if not (path / "games.parquet").exists():
        inside = [child for child in sorted(path.iterdir()) if (child / "games.parquet").exists()]
        path = inside[0] if len(inside) == 1 else path
    return {child.name: child.read_bytes() for child in sorted(path.iterdir()) if child.is_file() and _read(child.name)}


def _zip_files(path: Path) -> dict[str, bytes]:
    """The files read from a zip archive of an export, at its top or inside one folder."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            tops = sorted((n.rpartition("/")[0] for n in names if n.rpartition("/")[2] == "games.parquet"), key=len)
            root = f"{tops[0]}/" if tops and tops[0] else ""
            return {
                name[len(root) :]: archive.read(name)
                for name in names
                if name.startswith(root) and "/" not in name[len(root) :] and _read(name[len(root) :])
            }
    except zipfile.BadZipFile:
        raise AnalysisError(f"{path} is neither an export folder nor a zip archive of one") from None
