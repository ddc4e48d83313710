"""The random-intercept logit's marginal scale: Gauss-Hermite against adaptive quadrature, and each inverse."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from bargain.analysis.latent import (
    MAX_SD,
    conditional_logit,
    marginal_probability,
    participant_sd,
    within_correlation,
)


def by_quad(function, sd: float) -> float:
    return integrate.quad(lambda z: function(sd * z) * stats.norm.pdf(z), -40, 40, epsabs=1e-15, limit=400)[0]


@pytest.mark.parametrize("sd", [0.0, 0.3, 1.0, 2.0])
@pytest.mark.parametrize("eta", [-3.0, -0.5, 0.0, 1.2, 4.0])
def test_the_marginal_probability_is_the_integral_over_participants(eta, sd):
    assert marginal_probability(eta, sd) == pytest.approx(by_quad(lambda u: special.expit(eta + u), sd), abs=1e-9)


def test_without_participant_differences_the_marginal_is_the_conditional():
    assert marginal_probability(0.7, 0.0) == pytest.approx(special.expit(0.7), abs=1e-15)
    assert conditional_logit(0.3, 0.0) == pytest.approx(special.logit(0.3), abs=1e-12)


@pytest.mark.parametrize("probability", [0.02, 0.3, 0.5, 0.6, 0.97])
@pytest.mark.parametrize("sd", [0.0, 0.5, 2.0, 4.0])
def test_the_conditional_logit_inverts_the_marginal(probability, sd):
    eta = conditional_logit(probability, sd)
    assert marginal_probability(eta, sd) == pytest.approx(probability, abs=1e-12)
    assert abs(eta) >= abs(special.logit(probability)) - 1e-12  # the marginal is pulled towards 1/2


def test_a_probability_outside_zero_and_one_has_no_log_odds():
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        conditional_logit(1.0, 0.5)


@pytest.mark.parametrize("probability, sd", [(0.6, 0.5), (0.2, 1.5), (0.5, 0.1)])
def test_the_within_participant_correlation_is_the_second_moments(probability, sd):
    eta = conditional_logit(probability, sd)
    second = by_quad(lambda u: special.expit(eta + u) ** 2, sd)
    expected = (second - probability**2) / (probability * (1 - probability))
    assert within_correlation(probability, sd) == pytest.approx(expected, abs=1e-9)
    assert participant_sd(probability, expected) == pytest.approx(sd, abs=1e-7)


def test_a_correlation_of_zero_or_less_is_no_participant_effect_and_one_past_reach_is_the_bound():
    assert participant_sd(0.6, 0.0) == 0.0 and participant_sd(0.6, -0.05) == 0.0
    assert participant_sd(0.6, 0.99) == MAX_SD
    assert math.isclose(within_correlation(0.6, 0.0), 0.0, abs_tol=1e-12)
    assert np.all(np.diff([within_correlation(0.6, sd) for sd in (0.1, 0.5, 1.0, 2.0)]) > 0)
