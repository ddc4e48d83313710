"""The study's models against R, and how they behave on data that cannot carry them.

The reference numbers come from tests/data/analysis/reference.R (lme4, geepack, survival) fitted to the
committed synthetic study (make_study_games.py), as statsmodels tests its own estimators; R is needed only to
regenerate them. The bias-reduced sandwich is recomputed here from its formula (Mancl and DeRouen 2001).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from bargain.analysis.design import build_design, game_rows
from bargain.analysis.models import (
    BIAS_REDUCED_BELOW,
    ELO,
    NOT_CONVERGED,
    Z95,
    _quietly,
    fit_conditional_logit,
    fit_gee,
    fit_mixed,
)

DATA = Path(__file__).resolve().parent / "data" / "analysis"
GAMES = pd.read_csv(DATA / "study_games.csv")
R = json.loads((DATA / "r_results.json").read_text(encoding="utf-8"))


def r_name(name: str) -> str:
    """Our coefficient's name as R's model.matrix writes it ("arm[a] x condition[c]" -> "arma:conditionc")."""
    if name == "intercept":
        return "(Intercept)"
    return ":".join(part.replace("[", "").replace("]", "") for part in name.split(" x "))


def estimates(fit) -> np.ndarray:
    return np.array([c.estimate for c in fit.coefficients])


def ses(fit) -> np.ndarray:
    return np.array([c.se for c in fit.coefficients])


# --- agreement with R -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("outcome", ["person_norm_utility", "agent_norm_utility"])
def test_the_mixed_model_agrees_with_lme4(outcome):
    """Fixed effects, their covariance, the variance components and the REML log-likelihood, to 1e-4 (lme4's own
    optimiser's precision); agent_norm_utility's cluster variance is 0, where gradient optimisers go wrong."""
    r = R["lmer"][outcome]
    fit = fit_mixed(GAMES, outcome, "base")
    assert [r_name(c.name) for c in fit.coefficients] == r["terms"]
    assert fit.converged
    assert np.max(np.abs(estimates(fit) - r["coef"])) < 1e-4
    assert np.max(np.abs(ses(fit) - r["se"])) < 1e-4
    assert np.max(np.abs(np.array(fit.cov) - np.array(r["vcov"]))) < 1e-4
    assert fit.cluster_variance == pytest.approx(r["cluster_variance"], abs=1e-4)
    assert fit.residual_variance == pytest.approx(r["residual_variance"], abs=1e-4)
    assert fit.reml_log_likelihood == pytest.approx(r["reml_loglik"], abs=1e-6)
    assert fit.icc == pytest.approx(r["cluster_variance"] / (r["cluster_variance"] + r["residual_variance"]), abs=1e-4)
    assert any("singular fit" in w for w in fit.warnings) == r["singular"]
    assert (fit.n_games, fit.n_clusters) == (240, 60)


def test_the_gee_agrees_with_geepack():
    """Coefficients and robust (plain sandwich, 60 clusters) errors to 1e-5; the working correlation too."""
    r = R["geeglm"]
    fit = fit_gee(GAMES, "deal", "base")
    assert [r_name(c.name) for c in fit.coefficients] == r["terms"]
    assert fit.converged and fit.cov_type == "robust" and fit.warnings == ()
    assert np.max(np.abs(estimates(fit) - r["coef"])) < 1e-5
    assert np.max(np.abs(ses(fit) - r["se"])) < 1e-5
    assert fit.working_correlation == pytest.approx(r["alpha"], abs=1e-5)


def test_the_conditional_logit_agrees_with_survival_clogit():
    """Arms and games vary within participants; condition and role do not, and are named as dropped."""
    r = R["clogit"]
    fit = fit_conditional_logit(GAMES, "deal", "base")
    assert [r_name(c.name) for c in fit.coefficients] == r["terms"]
    assert fit.converged
    assert np.max(np.abs(estimates(fit) - r["coef"])) < 1e-5
    assert np.max(np.abs(ses(fit) - r["se"])) < 1e-5
    assert fit.design.dropped == (
        "condition: does not vary within clusters",
        "human_role: does not vary within clusters",
    )
    informative = GAMES.groupby("cluster")["deal"].nunique().gt(1).sum()
    assert (fit.n_games, fit.n_clusters, fit.n_informative_clusters) == (240, 60, informative)


def numbers_agree(ours, theirs, where="") -> None:
    """Two JSON trees have the same shape, the same text and numbers equal to 1e-8 relative."""
    assert type(ours) is type(theirs) or {type(ours), type(theirs)} <= {int, float}, where
    if isinstance(ours, dict):
        assert ours.keys() == theirs.keys(), where
        for key in ours:
            numbers_agree(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(ours, list):
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            numbers_agree(a, b, f"{where}[{i}]")
    elif isinstance(ours, float | int) and not isinstance(ours, bool):
        assert ours == pytest.approx(theirs, rel=1e-8, abs=1e-12), where
    else:
        assert ours == theirs, where


def r_has(*packages: str) -> bool:
    if shutil.which("Rscript") is None:
        return False
    check = "; ".join(f'stopifnot(requireNamespace("{p}", quietly = TRUE))' for p in packages)
    return subprocess.run(["Rscript", "-e", check], capture_output=True).returncode == 0


@pytest.mark.skipif(not r_has("lme4", "geepack", "survival", "jsonlite"), reason="needs Rscript with lme4, geepack")
def test_the_r_script_reproduces_the_committed_results(tmp_path):
    out = tmp_path / "r_results.json"
    subprocess.run(["Rscript", str(DATA / "reference.R"), str(out)], check=True, capture_output=True, timeout=120)
    fresh = json.loads(out.read_text(encoding="utf-8"))
    numbers_agree({k: v for k, v in fresh.items() if k != "versions"}, {k: v for k, v in R.items() if k != "versions"})


# --- GEE's small-sample errors ----------------------------------------------------------------------------------


def sandwiches(games: pd.DataFrame, fit) -> tuple[np.ndarray, np.ndarray]:
    """The plain and Mancl-DeRouen sandwiches of a binomial exchangeable GEE, from their formulas."""
    rows = game_rows(games, "deal")
    _, x = build_design(rows, "base")
    beta, alpha = estimates(fit), fit.working_correlation
    bread, plain, reduced = 0.0, 0.0, 0.0
    parts = []
    for _, index in rows.groupby("cluster").indices.items():
        xi, yi = x[index], rows["deal"].to_numpy()[index]
        mu = special.expit(xi @ beta)
        d = (mu * (1 - mu))[:, None] * xi  # d mu / d beta, (n_i, p)
        root = np.diag(np.sqrt(mu * (1 - mu)))
        v = root @ ((1 - alpha) * np.eye(len(yi)) + alpha) @ root
        v_inv = np.linalg.inv(v)
        bread = bread + d.T @ v_inv @ d
        parts.append((d, v_inv, yi - mu))
    bread_inv = np.linalg.inv(bread)
    for d, v_inv, r in parts:
        plain = plain + np.outer(d.T @ v_inv @ r, d.T @ v_inv @ r)
        leverage = d @ bread_inv @ d.T @ v_inv
        adjusted = np.linalg.solve(np.eye(len(r)) - leverage, r)
        reduced = reduced + np.outer(d.T @ v_inv @ adjusted, d.T @ v_inv @ adjusted)
    return bread_inv @ plain @ bread_inv, bread_inv @ reduced @ bread_inv


def test_under_50_clusters_the_gee_errors_are_bias_reduced():
    few = GAMES[GAMES["cluster"].isin(sorted(GAMES["cluster"].unique())[: BIAS_REDUCED_BELOW - 10])]
    fit = fit_gee(few, "deal", "base")
    assert fit.cov_type == "bias_reduced" and fit.n_clusters == 40
    plain, reduced = sandwiches(few, fit)
    assert np.max(np.abs(np.array(fit.cov) - reduced)) < 1e-8
    assert np.all(np.diag(reduced) > np.diag(plain))  # the correction widens every interval
    full = fit_gee(GAMES, "deal", "base")
    assert np.max(np.abs(np.array(full.cov) - sandwiches(GAMES, full)[0])) < 1e-8  # 60 clusters: the plain one


# --- what the data cannot carry ---------------------------------------------------------------------------------


def test_terms_that_do_not_vary_are_dropped_and_named():
    buyers = GAMES[(GAMES["human_role"] == "buyer") & (GAMES["condition"] == "both_aware")]
    fit = fit_mixed(buyers, "person_norm_utility", "base")
    assert fit.design.dropped == ("condition: only both_aware", "human_role: only buyer")
    names = [c.name for c in fit.coefficients]
    assert names == ["intercept", "arm[model-a]", "arm[model-b]", "game_index[2]", "game_index[3]", "game_index[4]"]
    gee = fit_gee(buyers, "deal", "base")
    assert [c.name for c in gee.coefficients] == names and gee.design.dropped == fit.design.dropped


def test_an_empty_cell_drops_its_interaction_by_name():
    rows = GAMES[~((GAMES["arm"] == "model-b") & (GAMES["condition"] == "both_unaware"))]
    fit = fit_mixed(rows, "person_norm_utility", "base")
    assert fit.design.dropped == ("arm[model-b] x condition[both_unaware]: no games",)
    assert "arm[model-b] x condition[both_unaware]" not in [c.name for c in fit.coefficients]
    assert fit.converged


def test_aliased_terms_are_dropped_by_name():
    """Everyone plays model-a in game 4 and the base arm before: game 4 cannot be told from model-a."""
    rows = GAMES.assign(arm=np.where(GAMES["game_index"] == 4, "model-a", "base"))
    fit = fit_mixed(rows, "person_norm_utility", "base")
    assert fit.design.dropped == ("game_index[4]: aliased with earlier terms",)
    assert fit.converged and "arm[model-a]" in [c.name for c in fit.coefficients]


@pytest.mark.parametrize("model", [fit_mixed, fit_gee, fit_conditional_logit])
def test_a_single_cluster_is_reported_not_raised(model):
    outcome = "person_norm_utility" if model is fit_mixed else "deal"
    fit = model(GAMES[GAMES["cluster"] == "p01"], outcome, "base")
    assert not fit.converged
    assert any("fewer than two clusters" in w for w in fit.warnings)
    assert all(math.isnan(c.estimate) for c in fit.coefficients)


def test_an_outcome_fixed_per_participant_is_reported_not_raised():
    """A participant's one rating copied to all their games: the cluster variance has no finite REML optimum."""
    rating = dict(zip(GAMES["cluster"].unique(), np.random.default_rng(0).integers(1, 8, 60)))
    fit = fit_mixed(GAMES.assign(rating=GAMES["cluster"].map(rating)), "rating", "base")
    assert not fit.converged
    assert fit.warnings == ("the outcome hardly varies within clusters: the cluster variance is past the search",)


def test_separation_is_reported_quietly(capsys):
    """model-a always gets a deal: the GEE and the conditional logit cannot converge; they say so, print nothing
    and let no warning escape."""
    rows = GAMES.copy()
    rows.loc[rows["arm"] == "model-a", "deal"] = 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gee = fit_gee(rows, "deal", "base")
        logit = fit_conditional_logit(rows, "deal", "base")
    assert not gee.converged and gee.warnings
    assert not logit.converged and logit.warnings
    assert [(s.arm, s.reason) for s in logit.scores] == [
        ("base", ""),
        ("model-a", NOT_CONVERGED),
        ("model-b", NOT_CONVERGED),
    ]
    assert capsys.readouterr() == ("", "")


def test_wrong_input_is_an_error():
    with pytest.raises(ValueError, match="0/1"):
        fit_gee(GAMES, "person_norm_utility", "base")
    with pytest.raises(ValueError, match="reference arm 'nobody'"):
        fit_mixed(GAMES, "person_norm_utility", "nobody")
    with pytest.raises(ValueError, match="lack the column"):
        fit_mixed(GAMES.drop(columns="human_role"), "person_norm_utility", "base")


def test_games_without_the_outcome_are_left_out():
    rows = GAMES.copy()
    rows.loc[rows.index[:10], "person_norm_utility"] = np.nan
    fit = fit_mixed(rows, "person_norm_utility", "base")
    assert fit.n_games == 230 and fit == fit_mixed(rows.iloc[10:], "person_norm_utility", "base")


# --- the arena scores -------------------------------------------------------------------------------------------


def test_arena_scores_put_the_reference_at_1000():
    fit = fit_conditional_logit(GAMES, "deal", "base")
    by_arm = {s.arm: s for s in fit.scores}
    assert (by_arm["base"].score, by_arm["base"].ci_low, by_arm["base"].ci_high) == (1000.0, 1000.0, 1000.0)
    for arm in ("model-a", "model-b"):
        coefficient = next(c for c in fit.coefficients if c.name == f"arm[{arm}]")
        assert by_arm[arm].score == pytest.approx(1000 + 400 * coefficient.estimate / math.log(10), abs=1e-9)
        assert by_arm[arm].ci_high - by_arm[arm].score == pytest.approx(Z95 * ELO * coefficient.se, abs=1e-9)
        assert by_arm[arm].reason == ""
    assert by_arm["model-a"].score > 1000 > by_arm["model-b"].score  # deal odds x1.65 and x0.67, as simulated


def test_an_arm_seen_in_one_informative_cluster_has_no_score():
    informative = GAMES.groupby("cluster")["deal"].nunique().loc[lambda n: n > 1].index
    keep = informative[0]
    rows = GAMES[(GAMES["arm"] != "model-b") | (GAMES["cluster"] == keep)]
    fit = fit_conditional_logit(rows, "deal", "base")
    score = next(s for s in fit.scores if s.arm == "model-b")
    assert math.isnan(score.score) and score.reason == "1 informative cluster(s) played model-b (needs at least 2)"


def test_no_score_when_no_participant_s_outcome_varies():
    fit = fit_conditional_logit(GAMES.assign(deal=1), "deal", "base")
    assert not fit.converged and fit.n_informative_clusters == 0
    assert fit.warnings == (
        "the model could not be fitted: ValueError: no cluster whose deal varies played the reference arm base",
    )
    assert all(math.isnan(s.score) and s.reason.startswith("0 informative cluster(s)") for s in fit.scores)


# --- determinism ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "outcome"),
    [(fit_mixed, "person_norm_utility"), (fit_gee, "deal"), (fit_conditional_logit, "deal")],
)
def test_the_same_games_in_any_order_give_the_same_numbers(model, outcome):
    shuffled = GAMES.sample(frac=1.0, random_state=3)
    assert model(GAMES, outcome, "base") == model(shuffled, outcome, "base")


def test_a_fits_warnings_are_its_own_not_a_finaliser_run_by_the_garbage_collector_meanwhile():
    """Another test's unclosed event loop, collected mid-fit, once made a fit's warnings depend on the
    order the tests ran in."""

    def fit() -> int:
        warnings.warn("unclosed event loop", ResourceWarning, stacklevel=1)
        warnings.warn("the fit did not converge", RuntimeWarning, stacklevel=1)
        return 1

    assert _quietly(fit) == (1, ("the fit did not converge",))
