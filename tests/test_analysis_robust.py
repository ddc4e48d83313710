"""The cluster-robust fits `bargain plan` simulates with: statsmodels' OLS and Logit with `cov_type="cluster"` on
the committed synthetic study, to rounding; their marginal means on the right scale; failures quiet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from bargain.analysis.design import build_design, game_rows
from bargain.analysis.marginal import contrasts, marginal_means
from bargain.analysis.robust import Link, fit_robust

GAMES = pd.read_csv(Path(__file__).resolve().parent / "data" / "analysis" / "study_games.csv")
LINKS = {"person_norm_utility": Link.IDENTITY, "deal": Link.LOGIT}


def test_the_fits_are_statsmodels_cluster_robust_ols_and_logit():
    rows = game_rows(GAMES, *LINKS)
    _, x = build_design(rows, "base")
    groups = pd.factorize(rows["cluster"])[0]
    ols = sm.OLS(rows["person_norm_utility"].to_numpy(), x).fit(cov_type="cluster", cov_kwds={"groups": groups})
    logit = sm.Logit(rows["deal"].to_numpy(), x).fit(disp=0, cov_type="cluster", cov_kwds={"groups": groups})
    for fit, reference in zip(fit_robust(GAMES, LINKS, "base"), (ols, logit)):
        assert fit.converged and fit.warnings == ()
        assert np.max(np.abs(np.array([c.estimate for c in fit.coefficients]) - reference.params)) < 1e-10
        assert np.max(np.abs(np.array(fit.cov) - reference.cov_params())) < 1e-12
        assert (fit.n_games, fit.n_clusters, fit.df) == (240, 60, 59)


def test_outcomes_share_the_games_where_all_are_present():
    games = GAMES.assign(deal=GAMES["deal"].where(GAMES.index % 10 != 0))
    utility, deal = fit_robust(games, LINKS, "base")
    assert utility.n_games == deal.n_games == 216 and utility.design == deal.design
    (alone,) = fit_robust(games, {"person_norm_utility": Link.IDENTITY}, "base")
    assert alone.n_games == 240


def test_marginal_means_are_the_cells_own_means_on_each_scale():
    """With the arm the only factor, a cell's estimated mean is its sample mean (least squares) and its share of
    deals (the logit), so the identity link is read on the outcome's scale and the logit on the probability's."""
    games = GAMES.assign(condition="both_aware", human_role="buyer", game_index=1)
    for fit in fit_robust(games, LINKS, "base"):
        observed = games.groupby("arm")[fit.outcome].mean()
        for mean in marginal_means(fit):
            assert mean.estimate == pytest.approx(observed[mean.arm], abs=1e-9)
            assert 0 < mean.ci_low < mean.estimate < mean.ci_high
        for contrast in contrasts(fit):
            assert contrast.estimate == pytest.approx(observed[contrast.arm] - observed["base"], abs=1e-9)


def test_a_separated_logit_is_reported_as_not_converged_never_raised():
    games = GAMES.assign(deal=np.where(GAMES["arm"] == "model-a", 1.0, GAMES["deal"]))
    _, deal = fit_robust(games, LINKS, "base")
    assert not deal.converged
    assert all(c.reason for c in contrasts(deal) if c.arm == "model-a")


def test_a_logit_wants_a_binary_outcome():
    with pytest.raises(ValueError, match="must be 0/1"):
        fit_robust(GAMES, {"person_norm_utility": Link.LOGIT}, "base")
