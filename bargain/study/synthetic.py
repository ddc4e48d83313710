"""A simulated study laid out as `bargain export` writes a real one, so that what analyses an export (`bargain
analyse`, benchmarks/analysis.py) can be run on a study whose truth is known.

`write_export` takes `bargain.study.simulate`'s game rows and writes `games`, `participants`, `moves` and
`surveys_long` (CSV and Parquet, through the export's own `write_table`) with the columns the export names in
`export.DESCRIPTIONS`, in its order, participant ids as a hashed export shows them (no `player`). Every simulated
participant completed the study, none is excluded, every game finished against a program. The outcomes go where
the export keeps them: `person_norm_utility`, `agent_norm_utility`, `deal` and `agent_misstated` in games (the
buyer's and seller's normalised utilities from the first two, by role), built-in ratings (`honesty`,
`credulity`, whole levels 0-4) in surveys_long after each game. What the simulation has no value for (prices,
the trial, the moves) is left empty; the moves table has its columns and no row.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd

from bargain.records.store import GameRow, MoveRow, write_table
from bargain.study.config import Study
from bargain.study.export import DESCRIPTIONS, LONG_COLUMNS, NUMERIC_BUILTINS

START = datetime(2025, 1, 1, 9, 0)  # the first simulated arrival (UTC); each participant comes a minute later
GAME_MINUTES = 5  # each game lasts this long


def write_export(study: Study, games: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """Write `games` (simulate's rows, arms as the study's keys) as the study's export into `out_dir`; the paths."""
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    tables = {
        "participants": _participants(study, games),
        "games": _games(study, games),
        "moves": pd.DataFrame(columns=_columns("moves", list(MoveRow.__table__.columns.keys()))),
        "surveys_long": _ratings(study, games),
    }
    return [path for name, table in tables.items() for path in write_table(table, directory, name)]


def _started(games: pd.DataFrame) -> pd.Series:
    """When each game started: its participant's arrival plus the games before it."""
    arrival = pd.Series(pd.factorize(games["cluster"], sort=True)[0], index=games.index)
    minutes = arrival + (games["game_index"].astype(int) - 1) * GAME_MINUTES
    return START + pd.to_timedelta(minutes, unit="min")


def _column(games: pd.DataFrame, name: str) -> pd.Series:
    """An outcome's values, or empty where the simulation drew none."""
    return games[name].astype(float) if name in games.columns else pd.Series(float("nan"), index=games.index)


def _games(study: Study, games: pd.DataFrame) -> pd.DataFrame:
    """One row per game, with the columns of the export's games table in its order."""
    started = _started(games)
    buyer = games["human_role"] == "buyer"
    person, agent = _column(games, "person_norm_utility"), _column(games, "agent_norm_utility")
    scenarios = [s.ref for s in study.scenarios.scenarios()]
    table = pd.DataFrame(
        {
            "id": [f"sim-{i + 1:06d}" for i in range(len(games))],
            "created_at": started,
            "updated_at": started + timedelta(minutes=GAME_MINUTES),
            "finished_at": started + timedelta(minutes=GAME_MINUTES),
            "status": "finished",
            "generation": 0,
            "participant": games["cluster"],
            "study": study.name,
            "game_index": pd.array(games["game_index"], dtype="Int64"),
            "human_role": games["human_role"],
            "arm": [study.arms[arm].spec for arm in games["arm"]],
            "scenario": [scenarios[i % len(scenarios)] for i in range(len(games))],
            "seed": range(len(games)),
            "condition": games["condition"],
            "mode": study.mode.value,
            "max_rounds": study.rounds,
            "first_actor": study.first_actor.value,
            "prompt_version": study.prompt_version.value,
            "parsing": "strict",
            "out_of_distribution": False,
            "ood_reasons": [[] for _ in range(len(games))],
            "deal": _flag(games, "deal"),
            "buyer_norm_utility": person.where(buyer, agent),
            "seller_norm_utility": agent.where(buyer, person),
            "claims": _claims(games),
            "agent_misstated": _flag(games, "agent_misstated"),
            "extra": [{} for _ in range(len(games))],
            "version": pd.array([study.version] * len(games), dtype="Int64"),
            "cell": [f"{a}/{c}/{r}" for a, c, r in zip(games["arm"], games["condition"], games["human_role"])],
            "person_norm_utility": person,
            "agent_norm_utility": agent,
            "timed_out": False,
            "opponent_was": "program",
        },
        index=games.index,
    )
    arena = [*GameRow.__table__.columns.keys(), "partner"]  # the partner comes with the arena's rows
    return table.reindex(columns=_columns("games", arena)).reset_index(drop=True)


def _columns(file: str, arena: list[str]) -> list[str]:
    """The export's columns of `file` in its order: the arena's (`arena`), then the study's own, without the
    browser's id."""
    return [c for c in [*arena, *(c for c in DESCRIPTIONS[file] if c not in arena)] if c != "player"]


def _claims(games: pd.DataFrame) -> list[list[dict] | None]:
    """The claim checker's findings as a game stores them, to match `agent_misstated` (what an analysis reads it
    from): the agent's one misstatement of its own limit where it misstated, none where it did not, and no findings
    stored (None) where the outcome was not simulated."""
    misstated = _column(games, "agent_misstated")
    agent = games["human_role"].map({"buyer": "seller", "seller": "buyer"})
    return [
        None
        if pd.isna(flag)
        else [{"round": 1, "role": role, "kind": "own_limit", "about": role, "misrepresentation": True}] * int(flag)
        for flag, role in zip(misstated, agent)
    ]


def _flag(games: pd.DataFrame, name: str) -> pd.Series:
    """A 0/1 outcome as the export's nullable boolean."""
    return _column(games, name).map({1.0: True, 0.0: False}).astype("boolean")


def _participants(study: Study, games: pd.DataFrame) -> pd.DataFrame:
    """One row per participant, all of them completed and paid as the study's payment rule pays them."""
    started = _started(games)
    rows = []
    for participant, own in games.assign(started=started).groupby("cluster", sort=True):
        own = own.sort_values("game_index")
        utilities = _column(own, "person_norm_utility").fillna(0.0)
        bonus = study.payment.bonus_for([(u, False) for u in utilities])
        arrived, done = own["started"].min(), own["started"].max() + timedelta(minutes=GAME_MINUTES)
        rows.append(
            {
                "participant": participant,
                "version": study.version,
                "stage": "completed",
                "forgotten": False,
                "consent_version": study.texts.consent_version,
                "comprehension_attempts": 1,
                "cells": ";".join(f"{a}/{c}/{r}" for a, c, r in zip(own["arm"], own["condition"], own["human_role"])),
                "games_done": len(own),
                "attention_failures": 0,
                "timeouts": 0,
                "excluded": False,
                "browser_shared_with": 0,
                "exclusion_reasons": "",
                "bonus": bonus,
                "base_payment": study.payment.base,
                "total_payment": round(study.payment.base + bonus, 2),
                "created_at": arrived,
                "completed_at": done,
                "seconds": (done - arrived).total_seconds(),
            }
        )
    columns = [c for c in DESCRIPTIONS["participants"] if not c.startswith(("seconds_to_", "source_"))]
    return pd.DataFrame(rows, columns=columns)


def _ratings(study: Study, games: pd.DataFrame) -> pd.DataFrame:
    """The built-in ratings the study asks after each game and the simulation drew, one answer a row."""
    asked = [item for item in study.surveys.per_game if item.builtin in NUMERIC_BUILTINS and item.id in games]
    started = _started(games)
    rows = [
        (participant, "per_game", int(game), item.id, 1, str(int(value)), None, when + timedelta(minutes=GAME_MINUTES))
        for item in asked
        for participant, game, value, when in zip(games["cluster"], games["game_index"], games[item.id], started)
    ]
    table = pd.DataFrame(rows, columns=list(LONG_COLUMNS))
    return table.astype({"game": "Int64", "attempt": "Int64", "correct": "boolean", "answered_at": "datetime64[us]"})
