"""The sample a study is analysed on: which games, one row per participant's side of a game, the clusters that are
the units of independence, and each row's outcomes.

- Primary sample: the finished games of participants not excluded (an exclusion rule flags them; their data is
  kept). With `all_participants` the excluded are included: a sensitivity analysis, reported beside.
- A game played instead of a person arm (no partner came: `extra.instead_of` person) counts as the arm actually
  played, the study's `pairing.otherwise`, and is flagged `fallback`.
- Rows: a game against a program has one row; a game between two participants has one row per side, each with
  its own role, utility and misstatement. For a game-level outcome (deal) one row stands for the game, the
  buyer's (`model_rows`), so that such a game counts once.
- Clusters: a participant's games are not independent, so the unit of independence is the participant; where
  participants played each other, the connected group of participants linked by their games together
  (union-find), named by its first participant in sorted order.
- Outcomes (bargain.study.analyse.outcomes): utilities as exported, with no deal as 0; misstatements from the
  claim checker's findings stored with the game (for a game stored without them, read again from its moves, those
  flagged `duplicate` left out: they were never part of the game as played); the per-game survey's numbers by
  (participant, game_index); the judge's scores from the game's `extra` record.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bargain.study.analyse.exported import Export
from bargain.study.analyse.outcomes import JUDGE_SCORES
from bargain.study.analyse.settings import played_instead

FACTORS = ("cluster", "arm", "condition", "human_role", "game_index")
OTHER = {"buyer": "seller", "seller": "buyer"}


@dataclass(frozen=True, eq=False)
class Sample:
    """The rows analysed (see the module's docstring) and how they were chosen."""

    rows: pd.DataFrame
    all_participants: bool
    participants: int
    excluded_left_out: int  # participants with finished games left out as excluded (0 with all_participants)
    games: int  # distinct games
    clusters: int
    fallback_games: int
    games_between_people: int
    duplicate_moves: int  # moves flagged duplicate in the games analysed (never part of a game as played)

    def model_rows(self, outcome: str, per_game: bool) -> pd.DataFrame:
        """The rows a model of `outcome` reads: those with a value, one per game for a game-level outcome."""
        rows = self.rows[self.rows[outcome].notna()]
        if per_game:  # the buyer's row stands for a game between two participants (the seller's if only it is here)
            kept = rows.sort_values(["game_id", "human_role"], kind="mergesort").drop_duplicates("game_id")
            rows = rows.loc[sorted(kept.index)]
        return rows.reset_index(drop=True)


def sample_of(export: Export, all_participants: bool = False) -> Sample:
    """The sample of an export (see the module's docstring)."""
    games, people = export.games, export.participants
    excluded = set(people.loc[people["excluded"].fillna(False).astype(bool), "participant"])
    finished = games[(games["status"] == "finished") & games["cell"].notna()]
    left_out = finished["participant"].isin(excluded)
    chosen = (finished if all_participants else finished[~left_out]).reset_index(drop=True)
    rows = _factors(chosen, export)
    rows = pd.concat([rows, _outcomes(chosen, export)], axis=1)
    order = ["cluster", "game_index", "participant", "game_id"]
    rows = rows.sort_values(order, kind="mergesort").reset_index(drop=True)
    duplicates = export.moves["duplicate"].fillna(False).astype(bool) & export.moves["game_id"].isin(rows["game_id"])
    return Sample(
        rows=rows,
        all_participants=all_participants,
        participants=int(rows["participant"].nunique()),
        excluded_left_out=0 if all_participants else int(finished.loc[left_out, "participant"].nunique()),
        games=int(rows["game_id"].nunique()),
        clusters=int(rows["cluster"].nunique()),
        fallback_games=int(rows["fallback"].sum()),
        games_between_people=int(rows.loc[rows["between_people"], "game_id"].nunique()),
        duplicate_moves=int(duplicates.sum()),
    )


def _factors(games: pd.DataFrame, export: Export) -> pd.DataFrame:
    """Each row's game, participant, cluster, arm (the one played), condition, role, place, flags and rules."""
    settings = export.settings
    fallback = games["extra"].map(played_instead).astype(bool)
    by_spec = {arm.spec: arm.key for arm in settings.arms if not arm.person}
    played_instead_key = [
        settings.fallback_arm or by_spec.get(spec, spec) for spec in games["arm"].astype(str)
    ]  # a fallback game's arm: pairing.otherwise, else the arm whose spec it played
    cell_arm = games["cell"].astype(str).str.split("/").str[0]
    partner = games["partner"].where(games["partner"].isin(set(games["participant"])))
    return pd.DataFrame(
        {
            "game_id": games["id"].astype(str),
            "participant": games["participant"].astype(str),
            "partner": partner,
            "cluster": _clusters(games["participant"].astype(str), partner),
            "arm": np.where(fallback, played_instead_key, cell_arm),
            "condition": games["condition"].astype(str),
            "human_role": games["human_role"].astype(str),
            "game_index": games["game_index"].astype(int),
            "fallback": fallback.to_numpy(),
            "between_people": (games["opponent_was"] == "person").to_numpy(),
            "scenario": games["scenario"].astype(str),
            "max_rounds": games["max_rounds"].astype(int),
            "mode": games["mode"].astype(str),
            "prompt_version": games["prompt_version"].astype(str),
        }
    )


def _clusters(participants: pd.Series, partners: pd.Series) -> np.ndarray:
    """Each row's cluster: the connected group of participants linked by games together (union-find), named by
    its first participant in sorted order."""
    parent = {p: p for p in participants}

    def root(p: str) -> str:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    for p, q in zip(participants, partners):
        if isinstance(q, str):
            a, b = sorted((root(p), root(q)))
            parent[b] = a
    return np.array([root(p) for p in participants], dtype=object)


def _outcomes(games: pd.DataFrame, export: Export) -> pd.DataFrame:
    """Each row's outcomes (see the module's docstring); NaN where a row has none."""
    deal = games["deal"].astype(float)
    # No deal is a utility of 0: what the export stores for such a game (a missing value is read so too).
    person, agent = (games[f"{side}_norm_utility"].astype(float) for side in ("person", "agent"))
    person, agent = (u.where(u.notna() | (deal == 1), 0.0) for u in (person, agent))
    unread = games.loc[[claims is None for claims in games["claims"]], "id"]
    moves_of = dict(tuple(export.moves[export.moves["game_id"].isin(unread)].groupby("game_id")))
    found = [
        claims if claims is not None else _claims_from_moves(moves_of.get(game_id), buyer, seller)
        for game_id, claims, buyer, seller in zip(
            games["id"], games["claims"], games["buyer_price"], games["seller_price"]
        )
    ]
    roles = games["human_role"].astype(str)
    out = pd.DataFrame(
        {
            "person_norm_utility": person,
            "agent_norm_utility": agent,
            "deal": deal,
            "agent_misstated": [_misstated(f, OTHER[r]) for f, r in zip(found, roles)],
            "person_misstated": [_misstated(f, r) for f, r in zip(found, roles)],
            "agent_ahead": (agent > person).astype(float).where(deal == 1),
        }
    )
    for item in export.settings.items:
        out[item.outcome] = _answers(games, export.surveys, item.id)
    judged = [(extra or {}).get("judge") or {} for extra in games["extra"]]
    for name in JUDGE_SCORES:  # judge_agent_honesty, judge_person_credulity: whose score, of what
        _, whose, score = name.split("_")
        scores = [j.get(f"{OTHER[r] if whose == 'agent' else r}_{score}") for j, r in zip(judged, roles)]
        out[name] = pd.to_numeric(pd.Series(scores, dtype=object), errors="coerce").astype(float)
    return out


def _misstated(found: list[dict] | None, role: str) -> float:
    """Whether `role` misstated a price limit in its favour, by the claim checker's findings (NaN: none stored)."""
    if found is None:
        return np.nan
    return float(any(f["role"] == role and f["misrepresentation"] is True for f in found))


def _claims_from_moves(moves: pd.DataFrame | None, buyer_price: float, seller_price: float) -> list[dict] | None:
    """The claim checker's findings of a game stored without them, from its moves as played (`moves`: the export's
    rows of that game, duplicates left out here); None when the export has no moves of it."""
    from bargain.analysis.claims import findings  # the claim checker loads only for a game without findings

    if moves is None:
        return None
    played = moves[~moves["duplicate"].fillna(False).astype(bool)]
    if played.empty:
        return None
    turns = played.sort_values("seq").drop_duplicates("seq")[["round", "role", "action", "price", "message"]]
    turns = turns.astype(object).where(turns.notna(), None)
    return findings(turns.to_dict("records"), buyer_price, seller_price)


def _answers(games: pd.DataFrame, surveys: pd.DataFrame, item: str) -> pd.Series:
    """Each game's answer to a per-game survey item, as a number (NaN: not answered)."""
    asked = surveys[(surveys["survey"] == "per_game") & (surveys["item"] == item)]
    value = pd.to_numeric(asked["value"], errors="coerce")
    answered = dict(zip(zip(asked["participant"].astype(str), asked["game"].astype(int)), value))
    return pd.Series(
        [answered.get((p, int(i)), np.nan) for p, i in zip(games["participant"].astype(str), games["game_index"])],
        dtype=float,
    )
