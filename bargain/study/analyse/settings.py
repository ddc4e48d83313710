"""What the analysis needs to know of a study, from its settings (an export's study.json, or the study file itself
for the plan) or, for an export written before study.json, from what its games tell.

The arms come in the study file's order (the first is the reference arm unless `--reference` names another), with
their labels and whether each is a person arm; conditions and roles in the order of the study's cells; the
design; the per-game survey items that are numbers (the built-in honesty and credulity ratings, 0-4, and Likert
scales: each an outcome); the rules a game was played under (for setting cells beside the paper's); the
exclusion rules; and the arm a participant plays when no partner comes. Several versions of one study are read
as one: arms, cells and items are joined in order of first appearance, the rules are the newest version's.

An older export has no study.json: its arms, conditions and roles are read from the games' `cell` column
(arm/condition/role) in order of first appearance, an arm's spec from the games it played, its label unknown;
the design is within when some participant played more than one cell; survey items are the per-game answers that
are all numbers (`honesty` and `credulity` by their built-in ids). `source` says which was used.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from bargain.arena import PERSON
from bargain.engine.scenarios import ScenarioError
from bargain.study.config import SETTINGS_FILE, ScenarioPool

FROM_GAMES = "the games' cells (an export without study.json: arms in order of first appearance, labels unknown)"
RATINGS = ("honesty", "credulity")  # built-in per-game items stored as the rubric's level, 0-4


@dataclass(frozen=True)
class ArmInfo:
    """An arm of the study: its key in the study file, its agent spec and what participants were told it is."""

    key: str
    spec: str
    label: str

    @property
    def person(self) -> bool:
        """Whether the arm is another participant (the human-human baseline)."""
        return self.spec == PERSON


@dataclass(frozen=True)
class RatedItem:
    """A per-game survey item whose answers are numbers: a built-in rating (honesty, credulity) or a Likert scale."""

    id: str
    kind: str  # "honesty", "credulity" or "likert"
    text: str

    @property
    def outcome(self) -> str:
        """The outcome's name: rated_honesty, rated_credulity, or survey_<id> for a scale."""
        return f"rated_{self.kind}" if self.kind in RATINGS else f"survey_{self.id}"


@dataclass(frozen=True)
class StudySettings:
    """The study as the analysis reads it (see the module's docstring)."""

    name: str
    versions: tuple[int, ...]
    hashes: tuple[str, ...]
    arms: tuple[ArmInfo, ...]
    conditions: tuple[str, ...]
    roles: tuple[str, ...]
    within: bool
    items: tuple[RatedItem, ...]
    rounds: int | None
    mode: str | None
    prompt_version: str | None
    scenarios: tuple[str, ...]  # the scenarios games were drawn from, as TIER:INDEX (empty: unknown)
    exclusions: tuple[str, ...]
    fallback_arm: str | None  # the arm played when no partner came (pairing.otherwise)
    source: str

    def arm(self, key: str) -> ArmInfo:
        """The arm with this key."""
        return next(arm for arm in self.arms if arm.key == key)

    @property
    def has_person_arm(self) -> bool:
        """Whether participants played each other in some arm."""
        return any(arm.person for arm in self.arms)


def settings_from_configs(name: str, configs: Sequence[dict]) -> StudySettings:
    """The settings of a study's versions, oldest first, each as `Study.to_dict()` gives it."""
    newest = configs[-1]
    arms = _first_seen(
        ArmInfo(arm["key"], arm["spec"], arm["label"]) for config in configs for arm in config["arms"].values()
    )
    items = _first_seen(
        RatedItem(item["id"], item["builtin"] or "likert", " ".join(item["text"].split()))
        for config in configs
        for item in config["surveys"]["per_game"]
        if item["builtin"] in RATINGS or item["type"] == "likert"
    )
    pairing = newest.get("pairing") or {}
    return StudySettings(
        name=name,
        versions=tuple(int(c["version"]) for c in configs),
        hashes=tuple(str(c["hash"]) for c in configs),
        arms=tuple(_unique_keys(arms)),
        conditions=tuple(_first_seen(cell["condition"] for c in configs for cell in c["cells"])),
        roles=tuple(_first_seen(cell["role"] for c in configs for cell in c["cells"])),
        within=newest["design"]["assignment"] == "within",
        items=tuple(_unique_keys(items, key=lambda item: item.id)),
        rounds=int(newest["rounds"]),
        mode=str(newest["mode"]),
        prompt_version=str(newest["prompt_version"]),
        scenarios=_scenarios(newest["scenarios"]),
        exclusions=tuple(f"{rule['rule']} {rule['threshold']}" for rule in newest["exclusions"]),
        fallback_arm=pairing.get("otherwise") if pairing.get("otherwise") not in (None, "end") else None,
        source=SETTINGS_FILE,
    )


def settings_from_games(games: pd.DataFrame, surveys: pd.DataFrame) -> StudySettings:
    """What an export without study.json tells of its study (see the module's docstring)."""
    cells = games["cell"].dropna().astype(str)
    parts = cells.str.split("/", expand=True) if len(cells) else pd.DataFrame(columns=[0, 1, 2])
    fallback = games["extra"].map(played_instead).astype(bool)
    arms = []
    for key in _first_seen(parts[0]):
        played = games.loc[cells.index[parts[0].to_numpy() == key]]
        specs = played.loc[~fallback.loc[played.index], "arm"].dropna().astype(str)
        arms.append(ArmInfo(key, specs.iloc[0] if len(specs) else "", key))
    per_game = surveys[surveys["survey"] == "per_game"]
    numeric = pd.to_numeric(per_game["value"], errors="coerce").notna().groupby(per_game["item"], sort=False).all()
    items = [
        RatedItem(item, item if item in RATINGS else "likert", item) for item, numbers in numeric.items() if numbers
    ]
    distinct = games.dropna(subset=["cell"]).groupby("participant")["cell"].nunique()
    return StudySettings(
        name=str(games["study"].dropna().iloc[0]) if games["study"].notna().any() else "",
        versions=tuple(sorted({int(v) for v in games["version"].dropna()})),
        hashes=(),
        arms=tuple(arms),
        conditions=tuple(_first_seen(parts[1])),
        roles=tuple(_first_seen(parts[2])),
        within=bool((distinct > 1).any()),
        items=tuple(items),
        rounds=None,
        mode=None,
        prompt_version=None,
        scenarios=(),
        exclusions=(),
        fallback_arm=None,
        source=FROM_GAMES,
    )


def played_instead(extra: object) -> bool:
    """Whether a game's `extra` record says it was played instead of a person arm (no partner came)."""
    return isinstance(extra, dict) and extra.get("instead_of") == PERSON


def _scenarios(pool: dict) -> tuple[str, ...]:
    """The scenarios a study's pool holds, as TIER:INDEX (empty when the bundled set cannot be read)."""
    try:
        chosen = ScenarioPool(pool.get("tier"), pool.get("split"), tuple(pool.get("refs") or ())).scenarios()
    except (ScenarioError, KeyError, ValueError):
        return ()
    return tuple(sorted(f"{s.tier}:{s.index}" for s in chosen))


def _first_seen(values: Iterable) -> list:
    """The distinct values in order of first appearance."""
    return list(dict.fromkeys(values))


def _unique_keys(values: Iterable, key=lambda arm: arm.key) -> list:
    """The first of the values sharing a key (an arm or item changed between versions keeps its first form)."""
    seen: dict = {}
    for value in values:
        seen.setdefault(key(value), value)
    return list(seen.values())
