"""The cluster bootstrap (bargain.analysis.bootstrap): each resample's cell means equal those of the data rebuilt
from the clusters drawn, whatever the block size; its standard error agrees with the clustered formula; it is
fast; ranks, Chatbot Arena's separated rank and the Monte Carlo errors by hand."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from bargain.analysis import bootstrap
from bargain.analysis.bootstrap import cluster_bootstrap, interval, quantile_mcse, ranks, separated_rank


def clustered(n_clusters: int, per_cluster: int, n_cells: int, seed: int = 1) -> tuple[np.ndarray, ...]:
    """Games of clusters with a shared effect each (SD 1), noise SD 1, cells drawn at random, 10% missing."""
    rng = np.random.default_rng(seed)
    clusters = np.repeat(np.arange(n_clusters), per_cluster)
    cells = rng.integers(0, n_cells, len(clusters))
    values = rng.normal(size=n_clusters)[clusters] + rng.normal(size=len(clusters))
    values[rng.random(len(values)) < 0.1] = np.nan
    return values, cells, clusters


def test_each_resample_is_the_data_rebuilt_from_the_clusters_drawn():
    values, cells, clusters = clustered(12, 3, 4)
    draws = cluster_bootstrap(values, cells, clusters, 4, 30, seed=5)
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"value": values, "cell": cells, "cluster": clusters})
    for b, drawn in enumerate(rng.integers(0, 12, size=(30, 12))):  # 30 resamples: one block
        rebuilt = pd.concat([frame[frame["cluster"] == c] for c in drawn])
        expected = rebuilt.groupby("cell")["value"].mean().reindex(range(4)).to_numpy()
        np.testing.assert_allclose(draws.draws[b, :, 0], expected, rtol=1e-12)
    np.testing.assert_allclose(draws.point[:, 0], frame.groupby("cell")["value"].mean().to_numpy(), rtol=1e-12)


def test_the_draws_do_not_depend_on_the_block_size(monkeypatch):
    """The same clusters are drawn whatever the block size. The means may differ in their last bit: BLAS orders a
    matrix product's sums by its shape (it did, on an AMD EPYC), so they are compared to 1e-13, not bit for bit;
    a resample drawn differently would differ in its first digits."""
    values, cells, clusters = clustered(40, 3, 5)
    whole = cluster_bootstrap(values, cells, clusters, 5, 100, seed=3).draws
    monkeypatch.setattr(bootstrap, "BLOCK", 7)
    np.testing.assert_allclose(cluster_bootstrap(values, cells, clusters, 5, 100, seed=3).draws, whole, rtol=1e-13)


def test_the_standard_error_is_the_clustered_one_not_the_per_game_one():
    """Equal clusters of 5 games, all in one cell: the mean of games is the mean of cluster means, whose standard
    error is their SD / sqrt(clusters); the per-game formula, which treats games as independent, is far smaller."""
    rng = np.random.default_rng(2)
    clusters = np.repeat(np.arange(400), 5)
    values = 2 * rng.normal(size=400)[clusters] + 0.5 * rng.normal(size=len(clusters))
    draws = cluster_bootstrap(values, np.zeros(len(values), int), clusters, 1, 4000, seed=0).draws[:, 0, 0]
    clustered_se = pd.Series(values).groupby(clusters).mean().std() / np.sqrt(400)
    assert np.std(draws) == pytest.approx(clustered_se, rel=0.06)
    assert np.std(draws) > 1.9 * np.std(values) / np.sqrt(len(values))


def test_two_thousand_resamples_of_three_thousand_games_take_well_under_a_second():
    values, cells, clusters = clustered(1000, 3, 16)
    several = np.column_stack([values] * 5)
    started = time.perf_counter()
    draws = cluster_bootstrap(several, cells, clusters, 16, 2000, seed=0)
    low, high = interval(draws.draws)
    elapsed = time.perf_counter() - started
    assert draws.draws.shape == (2000, 16, 5) and np.all(low < high)
    assert elapsed < 1.0, elapsed


def test_a_cell_missing_from_a_resample_is_nan_there_and_left_out_of_its_interval():
    values = np.array([1.0, 2.0, 3.0, 10.0])
    cells = np.array([0, 0, 0, 1])  # cell 1: one cluster's game
    draws = cluster_bootstrap(values, cells, np.array([0, 1, 2, 3]), 2, 200, seed=0).draws[:, :, 0]
    missing = np.isnan(draws[:, 1])
    assert 0 < missing.sum() < 200 and np.all(draws[~missing, 1] == 10.0)
    low, high = interval(draws)
    assert low[1] == high[1] == 10.0 and 1.0 <= low[0] < high[0] <= 3.0


def test_ranks_share_ties_and_skip_arms_without_a_value():
    draws = np.array([[0.3, 0.1, 0.3, np.nan], [0.1, 0.2, 0.3, 0.4]])
    np.testing.assert_array_equal(ranks(draws), [[1.5, 3.0, 1.5, np.nan], [4.0, 3.0, 2.0, 1.0]])


def test_the_separated_rank_counts_only_arms_wholly_above():
    low = np.array([0.50, 0.45, 0.20, 0.10, np.nan])
    high = np.array([0.70, 0.60, 0.48, 0.30, np.nan])
    # Arm 2 lies wholly below arm 0 (0.50 > 0.48) but overlaps arm 1 (0.45 < 0.48); arms 0 and 1 lie wholly above
    # arm 3, whose interval overlaps arm 2's (0.20 < 0.30).
    np.testing.assert_array_equal(separated_rank(low, high), [1.0, 1.0, 2.0, 3.0, np.nan])


def test_a_bounds_monte_carlo_error_is_the_quantiles_own_spread_and_shrinks_as_one_over_root_b():
    """For normal draws the 2.5% quantile's standard error is known: sqrt(q (1 - q) / B) / density at the quantile;
    the estimate averages to it (within 10% over 100 samples) at B = 400 and 1,600."""
    rng = np.random.default_rng(0)
    density = np.exp(-(1.96**2) / 2) / np.sqrt(2 * np.pi)
    for b in (400, 1600):
        mean_estimate = np.mean([quantile_mcse(rng.normal(size=(b, 1)), 0.025)[0] for _ in range(100)])
        assert mean_estimate == pytest.approx(np.sqrt(0.025 * 0.975 / b) / density, rel=0.1), b
