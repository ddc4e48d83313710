"""Simulated studies: the study's own design, seated by the app's rule (between or within, least-filled first,
distinct arms, the play order, the quotas, counted per cell), outcomes with the stated means and spreads, and the
same rows from the same seed."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from bargain.analysis.latent import marginal_probability
from bargain.study.config import StudyArm, load
from bargain.study.simulate import Binary, Continuous, Effects, Scale, SimulationError, simulate
from benchmarks.analysis import write_study

UTILITY = Continuous(0.3, Effects({"b": 0.05}), participant_sd=0.15, residual_sd=0.3)
DEAL = Binary(0.6, Effects({"b": 0.1}), participant_sd=0.5)
OUTCOMES = {"person_norm_utility": UTILITY, "deal": DEAL}


def study(folder, **design):
    return load(write_study(folder, **design))


def per_participant(rows: pd.DataFrame) -> pd.Series:
    return rows.assign(cell=rows["arm"] + "/" + rows["condition"] + "/" + rows["human_role"]).groupby("cluster")["cell"]


def test_between_subjects_each_participant_plays_one_cell_and_the_quotas_fill_evenly(tmp_path):
    between = study(tmp_path, arms=("a", "b", "c"), games=2, assignment="between", quota=5)
    rows = simulate(between, OUTCOMES, 13, 0)
    cells = per_participant(rows)
    assert (cells.nunique() == 1).all() and (cells.size() == 2).all()
    assert sorted(rows.groupby("cluster")["game_index"].apply(list).iloc[0]) == [1, 2]
    counts = cells.first().value_counts()
    assert len(counts) == 6 and set(counts) == {2, 3}  # 13 participants over 6 cells, within one of each other
    full = per_participant(simulate(between, OUTCOMES, 30, 0)).first().value_counts()
    assert len(full) == 6 and set(full) == {5}
    with pytest.raises(SimulationError, match="seat 30 participants, not 31"):
        simulate(between, OUTCOMES, 31, 0)


def test_within_subjects_with_distinct_arms_each_game_meets_another_arm_and_the_cells_fill_exactly(tmp_path):
    within = study(tmp_path, quota=6)  # 4 arms x 2 conditions, 3 games each against distinct arms
    rows = simulate(within, OUTCOMES, 10, 1)
    assert (rows.groupby("cluster")["arm"].nunique() == 3).all()
    assert set(rows.groupby(["arm", "condition"]).size()) <= {3, 4}  # 30 games over 8 cells
    full = simulate(within, OUTCOMES, 16, 1)
    assert set(full.groupby(["arm", "condition"]).size()) == {6} and len(full.groupby(["arm", "condition"])) == 8
    with pytest.raises(SimulationError, match="6 games in each of its 8 cells"):
        simulate(within, OUTCOMES, 17, 1)


def test_within_subjects_without_distinct_arms_an_arm_may_come_twice_in_distinct_cells(tmp_path):
    within = study(tmp_path, arms=("a", "b"), games=3, distinct_arms=False)
    rows = simulate(within, OUTCOMES, 40, 2)
    cells = per_participant(rows)
    assert (cells.nunique() == 3).all()
    assert (rows.groupby("cluster")["arm"].nunique() == 2).all()  # 3 games, 2 arms: one of them twice


def test_a_fixed_order_plays_the_cells_in_the_study_files_order(tmp_path):
    fixed = study(tmp_path, order="fixed")
    order = [fixed.cell_key(cell) for cell in fixed.cells]
    for _, cells in per_participant(simulate(fixed, OUTCOMES, 20, 3)):
        assert [order.index(c) for c in cells] == sorted(order.index(c) for c in cells)


def test_the_same_seed_gives_the_same_rows_and_another_seed_others(tmp_path):
    within = study(tmp_path)
    first, again = simulate(within, OUTCOMES, 30, 7), simulate(within, OUTCOMES, 30, 7)
    pd.testing.assert_frame_equal(first, again)
    assert not first.equals(simulate(within, OUTCOMES, 30, 8))
    generator = np.random.default_rng(7)
    pd.testing.assert_frame_equal(simulate(within, OUTCOMES, 30, generator), first)  # a Generator is drawn from
    assert list(first.columns) == ["cluster", "arm", "condition", "human_role", "game_index", *OUTCOMES]


def test_outcomes_have_the_stated_means_and_participant_spread(tmp_path):
    both = study(tmp_path, arms=("a", "b"), conditions=("full",), games=2, quota=100_000)  # each plays a and b
    logit = Binary(0.3, Effects({"b": -0.8}), Scale.LOGIT, participant_sd=1.2)
    rows = simulate(both, {**OUTCOMES, "logit": logit}, 20_000, 4)
    by_arm = rows.groupby("arm")
    for arm in ("a", "b"):
        utility = by_arm["person_norm_utility"].mean()[arm]
        assert utility == pytest.approx(UTILITY.cell_mean(arm, "full"), abs=4 * math.sqrt(0.3**2 + 0.15**2) / 141)
        assert by_arm["deal"].mean()[arm] == pytest.approx(DEAL.cell_mean(arm, "full"), abs=0.014)
        assert by_arm["logit"].mean()[arm] == pytest.approx(logit.cell_mean(arm, "full"), abs=0.014)
    assert DEAL.cell_mean("b", "full") == pytest.approx(0.7)
    assert logit.cell_mean("a", "full") == pytest.approx(0.3)
    assert logit.cell_mean("b", "full") == pytest.approx(marginal_probability(logit.cell_logit("a", "full") - 0.8, 1.2))
    wide = rows.pivot(index="cluster", columns="arm", values="person_norm_utility")
    assert wide["a"].corr(wide["b"]) == pytest.approx(0.15**2 / (0.15**2 + 0.3**2), abs=0.03)  # 0.2


def test_a_rating_is_whole_levels_within_its_bounds(tmp_path):
    rating = Continuous(2.0, Effects({"b": 1.0}), participant_sd=1.0, residual_sd=1.5, levels=(0, 4))
    values = simulate(study(tmp_path), {"honesty": rating}, 100, 5)["honesty"]
    assert set(values) == {0.0, 1.0, 2.0, 3.0, 4.0}


def test_what_cannot_be_simulated_is_refused_with_what_to_change(tmp_path):
    with pytest.raises(SimulationError, match="b in full: a rate of 0.6 and an effect of \\+0.5"):
        simulate(study(tmp_path, conditions=("full",)), {"deal": Binary(0.6, Effects({"b": 0.5}))}, 10, 0)
    with pytest.raises(SimulationError, match="strictly between 0 and 1"):
        Binary(1.0)
    with pytest.raises(SimulationError, match="0 or more"):
        Continuous(0.3, participant_sd=-0.1)
    within = study(tmp_path)
    people = dataclasses.replace(within, arms={**within.arms, "b": StudyArm("b", "person")})
    with pytest.raises(SimulationError, match="person arm"):
        simulate(people, OUTCOMES, 10, 0)
