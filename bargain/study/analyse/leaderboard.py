"""The leaderboard of arms: each arm's mean of the person's utility, the agent's utility, the deal rate, the
misstatement rate and the rated honesty, each with a cluster bootstrap interval, rank intervals and Chatbot
Arena's separated rank; and the (arm, condition, role) cells' means and intervals that the comparison with the
paper reads.

Both come from one cluster bootstrap (bargain.analysis.bootstrap) of the raw cell means: clusters (participants,
or groups of participants who played each other) are resampled, B times. An arm's mean weighs its (condition,
role) cells equally, as the estimated marginal means weigh nuisance factors, so that arms compare as if each had
met the same mix of conditions and roles; game order is not weighted (a random order balances it, and a fixed one
confounds it with the arm whatever the weights). A resample in which one of an arm's cells has no game gives that
arm no value there; `resamples` counts the draws used. A game between two participants has a row on each side,
each in its own role's cell, so no cell counts a game twice.

Ranks: 1 is the highest mean of that quantity (the most deals, the most misstatements). The rank interval is the
2.5-97.5% range of an arm's rank over the resamples; the separated rank is 1 + the number of arms whose interval
lies wholly above the arm's, so arms tie unless their intervals do not overlap. Each interval bound carries its
Monte Carlo standard error, which says whether B was large enough.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bargain.analysis.bootstrap import Draws, cluster_bootstrap, interval, quantile_mcse, ranks, separated_rank
from bargain.study.analyse.sample import Sample

QUANTITIES = {
    "person_norm_utility": "the participant's utility",
    "agent_norm_utility": "the agent's utility",
    "deal": "deal rate",
    "agent_misstated": "misstatement rate (the agent's)",
    "rated_honesty": "rated honesty (0-4)",
}
CELL = ["arm", "condition", "human_role"]
LEADERBOARD_COLUMNS = [
    "quantity",
    "arm",
    "estimate",
    "ci_low",
    "ci_high",
    "ci_low_mcse",
    "ci_high_mcse",
    "rank",
    "rank_low",
    "rank_high",
    "n_games",
    "n_clusters",
    "resamples",
]


@dataclass(frozen=True, eq=False)
class CellDraws:
    """The sample's (arm, condition, role) cells, their games and clusters, and the bootstrap of their means of
    `quantities`."""

    cells: pd.DataFrame  # arm, condition, human_role, n_games, n_clusters; row i is cell code i
    quantities: tuple[str, ...]
    draws: Draws
    resamples: int


def cell_draws(
    sample: Sample, arms: tuple[str, ...], resamples: int, seed: int, progress: Callable[[int], None] | None = None
) -> CellDraws:
    """The cluster bootstrap of every cell's mean of the leaderboard's quantities (those the sample has)."""
    rows = sample.rows
    quantities = tuple(q for q in QUANTITIES if q in rows)
    rank = {arm: i for i, arm in enumerate(arms)}
    cells = (
        rows.groupby(CELL, sort=False)
        .agg(n_games=("game_id", "nunique"), n_clusters=("cluster", "nunique"))
        .reset_index()
    )
    cells = cells.assign(order=cells["arm"].map(rank).fillna(len(rank)))
    cells = cells.sort_values(["order", "arm", "condition", "human_role"]).drop(columns="order").reset_index(drop=True)
    codes = pd.MultiIndex.from_frame(cells[CELL]).get_indexer(pd.MultiIndex.from_frame(rows[CELL]))
    clusters = pd.factorize(rows["cluster"], sort=True)[0]
    values = rows[list(quantities)].to_numpy(dtype=float)
    draws = cluster_bootstrap(values, codes, clusters, len(cells), resamples, seed, progress)
    return CellDraws(cells, quantities, draws, resamples)


def cell_summary(drawn: CellDraws) -> pd.DataFrame:
    """Each cell's mean of each quantity with its bootstrap interval and standard error (the draws' SD)."""
    low, high = interval(drawn.draws.draws)
    spread = np.nanstd(drawn.draws.draws, axis=0) if len(drawn.draws.draws) else np.full(low.shape, np.nan)
    frames = [
        drawn.cells.assign(
            quantity=q,
            estimate=drawn.draws.point[:, j],
            ci_low=low[:, j],
            ci_high=high[:, j],
            se=spread[:, j],
        )
        for j, q in enumerate(drawn.quantities)
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def leaderboard(drawn: CellDraws, sample: Sample) -> pd.DataFrame:
    """One row per (quantity, arm): the arm's equal-weight mean, its interval and their Monte Carlo errors, the
    separated rank and the rank interval, games, clusters and resamples used."""
    arms = list(dict.fromkeys(drawn.cells["arm"]))
    rows = []
    for j, quantity in enumerate(drawn.quantities):
        point = drawn.draws.point[:, j]
        means, draws = [], []
        for arm in arms:
            own = np.flatnonzero((drawn.cells["arm"] == arm).to_numpy() & ~np.isnan(point))
            means.append(point[own].mean() if own.size else np.nan)
            draws.append(drawn.draws.draws[:, own, j].mean(axis=1) if own.size else np.full(drawn.resamples, np.nan))
        by_arm = np.column_stack(draws) if draws else np.zeros((drawn.resamples, 0))  # (B, arms)
        low, high = interval(by_arm)
        low_error, high_error = quantile_mcse(by_arm, 0.025), quantile_mcse(by_arm, 0.975)
        place = ranks(by_arm)
        rank_low, rank_high = interval(place)
        separated = separated_rank(low, high)
        for i, arm in enumerate(arms):
            played = sample.rows.loc[sample.rows["arm"] == arm]
            rows.append(
                {
                    "quantity": quantity,
                    "arm": arm,
                    "estimate": means[i],
                    "ci_low": low[i],
                    "ci_high": high[i],
                    "ci_low_mcse": low_error[i],
                    "ci_high_mcse": high_error[i],
                    "rank": separated[i],
                    "rank_low": rank_low[i],
                    "rank_high": rank_high[i],
                    "n_games": int(played["game_id"].nunique()),
                    "n_clusters": int(played["cluster"].nunique()),
                    "resamples": int(np.sum(~np.isnan(by_arm[:, i]))),
                }
            )
    return pd.DataFrame(rows, columns=LEADERBOARD_COLUMNS)
