"""A cluster bootstrap of cell means, and what a leaderboard reads from its draws: percentile
intervals with their Monte Carlo errors, rank intervals, and Chatbot Arena's rank, which separates
only arms whose intervals do not overlap.

Why clusters: one participant plays several games (and in a study with a person arm, participants
who played each other share games), so games are not independent; a bootstrap that resamples games
(as Chatbot Arena's resamples battles, and `bargain report`'s per-game interval does) is too narrow.
Here the unit that was sampled is resampled: whole clusters, drawn with replacement, each with all
its games.

Why this is fast: a resample is the vector of how many times each cluster was drawn, so every cell's
resampled sum and count are that vector times the clusters' per-cell sums and counts. B resamples
are two matrix products, (B, clusters) @ (clusters, cells x quantities), done in blocks of `BLOCK`
resamples (2,000 resamples of 3,000 games in 1,000 clusters take about 0.1 s). The clusters drawn
depend only on the seed and the number of clusters, not on the block size (the means may differ in
their last bit, as BLAS orders a product's sums by its shape).

A cell with no value in a resample (none of its clusters drawn) is NaN there; summaries ignore NaN
draws and say how many they used. Percentile intervals are the plain percentile method (no bias
correction); a bound's Monte Carlo error is read from the order statistics around it (the spread of
the quantile over +-1 binomial standard deviation of its rank), so that a reader sees whether B was
large enough.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

BLOCK = 250  # resamples drawn per step: bounds memory at (BLOCK, clusters) and paces a progress bar
LEVEL = 0.95


@dataclass(frozen=True, eq=False)
class Draws:
    """Cell means of the data, `point` (cells, quantities), and of each resample, `draws` (B, cells,
    quantities); NaN where a cell has no value of a quantity."""

    point: np.ndarray
    draws: np.ndarray


def cluster_bootstrap(
    values: np.ndarray,
    cells: np.ndarray,
    clusters: np.ndarray,
    n_cells: int,
    resamples: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
) -> Draws:
    """Means per cell of each column of `values` (rows, quantities; NaN = no value) over the rows,
    and over `resamples` cluster resamples. `cells` and `clusters` are each row's codes, from 0;
    `progress` is told how many resamples each block made."""
    values = np.asarray(values, dtype=float).reshape(len(values), -1)  # (n, q)
    n_clusters = int(clusters.max()) + 1 if len(clusters) else 0
    present = ~np.isnan(values)
    flat = clusters * n_cells + cells  # (n,) one index per (cluster, cell)
    width = n_clusters * n_cells
    sums = np.stack(
        [
            np.bincount(flat, np.where(present[:, j], values[:, j], 0.0), width)
            for j in range(values.shape[1])
        ],
        -1,
    ).reshape(n_clusters, -1)  # (clusters, cells * q)
    counts = np.stack(
        [np.bincount(flat, present[:, j], width) for j in range(values.shape[1])], -1
    ).reshape(n_clusters, -1)

    def means(total: np.ndarray, n: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, total / np.where(n > 0, n, 1), np.nan)

    point = means(sums.sum(0), counts.sum(0)).reshape(n_cells, -1)
    rng = np.random.default_rng(seed)
    blocks = []
    for start in range(0, resamples, BLOCK):
        size = min(BLOCK, resamples - start)
        # (size, clusters): the clusters drawn
        drawn = rng.integers(0, n_clusters, size=(size, n_clusters))
        offsets = (np.arange(size) * n_clusters)[:, None]
        weights = np.bincount((drawn + offsets).ravel(), minlength=size * n_clusters).reshape(
            size, n_clusters
        )
        weights = weights.astype(float)
        blocks.append(means(weights @ sums, weights @ counts).reshape(size, n_cells, -1))
        if progress:
            progress(size)
    draws = np.concatenate(blocks) if blocks else np.zeros((0, n_cells, values.shape[1]))
    return Draws(point, draws)


def interval(draws: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """The percentile interval along the first axis, NaN draws left out (all NaN: NaN)."""
    tail = (1 - level) / 2 * 100
    with np.errstate(invalid="ignore"):
        return _nanpercentile(draws, tail), _nanpercentile(draws, 100 - tail)


def quantile_mcse(draws: np.ndarray, q: float) -> np.ndarray:
    """The Monte Carlo standard error of the `q` quantile (0-1) of the draws along the first axis:
    half the spread between the quantiles one binomial standard deviation of the rank either side
    (the usual order-statistic estimate; it shrinks as 1/sqrt(B))."""
    used = np.sum(~np.isnan(draws), axis=0)
    step = np.sqrt(q * (1 - q) / np.maximum(used, 1))
    low = _nanpercentile(draws, np.clip(q - step, 0, 1) * 100)
    high = _nanpercentile(draws, np.clip(q + step, 0, 1) * 100)
    return np.where(used > 1, (high - low) / 2, np.nan)


def ranks(draws: np.ndarray) -> np.ndarray:
    """Each arm's rank in each resample, (B, arms) -> (B, arms): 1 for the highest value, ties
    sharing the mean of their places, NaN for an arm with no value (ranked among the arms that have
    one)."""
    # (B, arms): arms higher than each
    above = np.sum(draws[:, None, :] > draws[:, :, None], axis=2)
    tied = np.sum(draws[:, None, :] == draws[:, :, None], axis=2) - 1
    return np.where(np.isnan(draws), np.nan, 1 + above + tied / 2)


def separated_rank(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Chatbot Arena's rank: 1 + the number of arms whose interval lies wholly above this arm's (an
    arm without an interval gets none, NaN)."""
    above = np.sum(low[None, :] > high[:, None], axis=1)
    return np.where(np.isnan(low) | np.isnan(high), np.nan, 1.0 + above)


def _nanpercentile(draws: np.ndarray, percent: float | np.ndarray) -> np.ndarray:
    """np.nanpercentile along the first axis, quiet where a column is all NaN, with one percentile
    per column allowed."""
    flat = draws.reshape(draws.shape[0], -1)
    percents = np.broadcast_to(np.asarray(percent, dtype=float), draws.shape[1:]).ravel()
    out = np.full(flat.shape[1], np.nan)
    for j in range(flat.shape[1]):
        column = flat[:, j][~np.isnan(flat[:, j])]
        if column.size:
            out[j] = np.percentile(column, percents[j])
    return out.reshape(draws.shape[1:])
