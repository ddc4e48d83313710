"""Estimated marginal means, contrasts and Holm's correction: against emmeans' reference grid computed in R
(tests/data/analysis/reference.R), against hand computations from the coefficients, and on cells that cannot be
estimated."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from bargain.analysis.marginal import MIN_CLUSTERS, contrasts, holm, marginal_means
from bargain.analysis.models import NOT_CONVERGED, Z95, fit_gee, fit_mixed

DATA = Path(__file__).resolve().parent / "data" / "analysis"
GAMES = pd.read_csv(DATA / "study_games.csv")
R = json.loads((DATA / "r_results.json").read_text(encoding="utf-8"))
GAME_TERMS = ("game_index[2]", "game_index[3]", "game_index[4]")


def coefficient(fit, name: str) -> float:
    return next((c.estimate for c in fit.coefficients if c.name == name), 0.0)


def unbalanced() -> pd.DataFrame:
    """The study with model-a's sellers mostly gone and game 4 played by a third of the participants."""
    rng = np.random.default_rng(7)
    drop = (GAMES["arm"] == "model-a") & (GAMES["human_role"] == "seller") & (rng.random(len(GAMES)) < 0.75)
    drop |= (GAMES["game_index"] == 4) & (GAMES["cluster"].str[-1:].astype(int) % 3 != 0)
    return GAMES[~drop].reset_index(drop=True)


@pytest.mark.parametrize("outcome", ["person_norm_utility", "agent_norm_utility"])
def test_cell_means_agree_with_the_reference_grid_in_r(outcome):
    means = {(m.arm, m.condition): m for m in marginal_means(fit_mixed(GAMES, outcome, "base"))}
    assert len(means) == 6
    for r in R["lmer"][outcome]["emm"]:
        mean = means[(r["arm"], r["condition"])]
        assert mean.estimate == pytest.approx(r["estimate"], abs=1e-4)
        assert mean.se == pytest.approx(r["se"], abs=1e-4)


def test_cell_means_weigh_roles_and_games_equally():
    """On unbalanced data each cell averages the two roles half and half and the four games a quarter each,
    whatever their numbers of games: worked out from the coefficients by hand."""
    rows = unbalanced()
    fit = fit_mixed(rows, "person_norm_utility", "base")
    names = [c.name for c in fit.coefficients]
    for mean in marginal_means(fit):
        weights = {"intercept": 1.0, "human_role[seller]": 0.5, **dict.fromkeys(GAME_TERMS, 0.25)}
        weights |= {f"arm[{mean.arm}]": 1.0, f"condition[{mean.condition}]": 1.0}
        weights[f"arm[{mean.arm}] x condition[{mean.condition}]"] = 1.0
        row = np.array([weights.get(name, 0.0) for name in names])
        assert mean.estimate == pytest.approx(sum(weights[n] * coefficient(fit, n) for n in weights), abs=1e-12)
        assert mean.se == pytest.approx(math.sqrt(row @ np.array(fit.cov) @ row), abs=1e-12)
        assert mean.ci_low == pytest.approx(mean.estimate - Z95 * mean.se)
        assert mean.ci_high == pytest.approx(mean.estimate + Z95 * mean.se)
    sellers = rows.query("arm == 'model-a'")["human_role"].eq("seller").mean()
    assert sellers < 0.25  # so that the data's own mix would have weighed the sellers differently


def test_probabilities_average_the_predictions_over_the_grid():
    """M2's cell mean is the mean of the grid's eight predicted probabilities; its error the delta method's, here
    checked against a numerical gradient."""
    rows = unbalanced()
    fit = fit_gee(rows, "deal", "base")
    beta = np.array([c.estimate for c in fit.coefficients])
    names = [c.name for c in fit.coefficients]

    def probability(b: np.ndarray, arm: str, condition: str) -> float:
        values = []
        for role in ("buyer", "seller"):
            for game in (1, 2, 3, 4):
                on = {"intercept", f"arm[{arm}]", f"condition[{condition}]", f"arm[{arm}] x condition[{condition}]"}
                on |= {f"human_role[{role}]", f"game_index[{game}]"}
                values.append(special.expit(sum(bi for bi, n in zip(b, names) if n in on)))
        return float(np.mean(values))

    for mean in marginal_means(fit):
        cell = (mean.arm, mean.condition)
        assert mean.estimate == pytest.approx(probability(beta, *cell), abs=1e-12)
        gradient = np.array(
            [(probability(beta + h, *cell) - probability(beta - h, *cell)) / 2e-6 for h in np.eye(len(beta)) * 1e-6]
        )
        assert mean.se == pytest.approx(math.sqrt(gradient @ np.array(fit.cov) @ gradient), rel=1e-6)
        assert 0 < mean.ci_low < mean.estimate < mean.ci_high < 1


def test_contrasts_per_condition_and_averaged():
    fit = fit_mixed(unbalanced(), "person_norm_utility", "base")
    means = {(m.arm, m.condition): m.estimate for m in marginal_means(fit)}
    found = contrasts(fit)
    assert [(c.arm, c.condition) for c in found] == [
        ("model-a", "both_aware"),
        ("model-a", "both_unaware"),
        ("model-a", None),
        ("model-b", "both_aware"),
        ("model-b", "both_unaware"),
        ("model-b", None),
    ]
    names = [c.name for c in fit.coefficients]
    for c in found:
        if c.condition is not None:
            assert c.estimate == pytest.approx(means[(c.arm, c.condition)] - means[("base", c.condition)], abs=1e-12)
            continue
        per_condition = [d.estimate for d in found if d.arm == c.arm and d.condition is not None]
        assert c.estimate == pytest.approx(np.mean(per_condition), abs=1e-12)
        # arm + half the interaction: the base arm's terms cancel, the roles' and games' too
        weights = {f"arm[{c.arm}]": 1.0, f"arm[{c.arm}] x condition[both_unaware]": 0.5}
        row = np.array([weights.get(n, 0.0) for n in names])
        assert c.se == pytest.approx(math.sqrt(row @ np.array(fit.cov) @ row), abs=1e-12)
    assert [c.p_holm for c in found] == list(holm([c.p for c in found]))
    assert all(c.reference_arm == "base" and c.reason == "" for c in found)


def test_risk_differences_are_differences_of_probabilities():
    """A sandwich fit's contrasts are read on Student's t with one degree of freedom fewer than its clusters: its
    errors are estimated from the clusters, and read on the normal they are too narrow at a study's size."""
    fit = fit_gee(GAMES, "deal", "base")
    means = {(m.arm, m.condition): m.estimate for m in marginal_means(fit)}
    t = stats.t(fit.n_clusters - 1)
    for c in contrasts(fit):
        if c.condition is not None:
            assert c.estimate == pytest.approx(means[(c.arm, c.condition)] - means[("base", c.condition)], abs=1e-12)
        assert c.ci_high - c.estimate == pytest.approx(t.ppf(0.975) * c.se) and t.ppf(0.975) > Z95
        assert c.p == pytest.approx(2 * t.sf(abs(c.estimate / c.se)))


def test_holm_against_hand_computed_values():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> 0.06 (never below an earlier one)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx((0.03, 0.06, 0.06, 0.02))
    assert holm([0.5, 0.6]) == (1.0, 1.0)
    adjusted = holm([0.02, math.nan, 0.01])  # two tests, not three
    assert adjusted[0] == pytest.approx(0.02) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.02)
    assert holm([]) == ()


def test_a_cell_with_one_cluster_is_not_estimable():
    keep = GAMES.query("arm == 'model-b' and condition == 'both_unaware'")["cluster"].iloc[0]
    rows = GAMES[~((GAMES["arm"] == "model-b") & (GAMES["condition"] == "both_unaware") & (GAMES["cluster"] != keep))]
    fit = fit_mixed(rows, "person_norm_utility", "base")
    reason = f"1 cluster(s) in model-b/both_unaware (needs at least {MIN_CLUSTERS})"
    means = {(m.arm, m.condition): m for m in marginal_means(fit)}
    lonely = means[("model-b", "both_unaware")]
    assert math.isnan(lonely.estimate) and math.isnan(lonely.se) and lonely.reason == reason
    assert (lonely.n_games, lonely.n_clusters) == (2, 1)  # that participant met model-b twice
    assert all(not math.isnan(m.estimate) for key, m in means.items() if key != ("model-b", "both_unaware"))
    found = {(c.arm, c.condition): c for c in contrasts(fit)}
    assert found[("model-b", "both_unaware")].reason == reason
    assert found[("model-b", None)].reason == f"both_unaware: {reason}"
    assert math.isnan(found[("model-b", None)].estimate) and math.isnan(found[("model-b", None)].p_holm)
    estimable = [c for c in found.values() if not c.reason]
    assert len(estimable) == 4 and [c.p_holm for c in estimable] == list(holm([c.p for c in estimable]))


def test_an_empty_cell_is_not_estimable():
    rows = GAMES[~((GAMES["arm"] == "model-b") & (GAMES["condition"] == "both_unaware"))]
    fit = fit_gee(rows, "deal", "base")
    empty = next(m for m in marginal_means(fit) if (m.arm, m.condition) == ("model-b", "both_unaware"))
    assert math.isnan(empty.estimate) and empty.reason.startswith("0 cluster(s) in model-b/both_unaware")


def test_cells_the_design_cannot_separate_are_not_estimable():
    """Everyone plays model-a in game 4 only: no cell's average over the four games can be estimated (emmeans
    would say nonEst), and none is made up."""
    rows = GAMES.assign(arm=np.where(GAMES["game_index"] == 4, "model-a", "base"))
    means = marginal_means(fit_mixed(rows, "person_norm_utility", "base"))
    assert all(math.isnan(m.estimate) for m in means)
    assert all(
        m.reason.endswith("is not estimable from the design (game_index[4]: aliased with earlier terms)") for m in means
    )


def test_an_unconverged_model_gives_reasons_not_numbers():
    rows = GAMES.copy()
    rows.loc[rows["arm"] == "model-a", "deal"] = 1
    fit = fit_gee(rows, "deal", "base")
    assert not fit.converged
    assert {m.reason for m in marginal_means(fit)} == {NOT_CONVERGED}
    assert all(math.isnan(c.estimate) for c in contrasts(fit))


def test_one_condition_has_no_averaged_contrast():
    fit = fit_mixed(GAMES[GAMES["condition"] == "both_aware"], "person_norm_utility", "base")
    assert [(c.arm, c.condition) for c in contrasts(fit)] == [("model-a", "both_aware"), ("model-b", "both_aware")]


def test_a_cell_whose_games_all_have_one_binary_outcome_has_no_logit_interval_and_no_crash():
    """A deal rate of 0 (or 1) in a cell, which a small study meets: its mean is said, with no interval and why."""
    rows = [
        {"cluster": f"c{i}", "arm": arm, "condition": "full", "human_role": "buyer", "game_index": 1, "deal": deal}
        for i, (arm, deal) in enumerate([("a", 1), ("a", 0), ("a", 1), ("b", 0), ("b", 0), ("b", 0)])
    ]
    fit = fit_gee(pd.DataFrame(rows), "deal", "a")
    cell = next(m for m in marginal_means(fit) if m.arm == "b")
    assert math.isnan(cell.ci_low) and math.isnan(cell.ci_high) and "no interval" in cell.reason
