"""A random-intercept logit seen on the probability scale: what a participant effect on the log odds
does to the proportions a marginal model (M2, GEE) estimates.

In `logit P(y = 1 | u) = eta + u`, u ~ N(0, sd^2), the share of games with y = 1 is not expit(eta):
it is the average of expit(eta + u) over participants, pulled towards 1/2 as sd grows. A simulated
study is given on the logit scale and checked against M2's estimates on the probability scale, so
the two must be converted exactly. The integral over u is Gauss-Hermite quadrature with `NODES`
points: off adaptive quadrature by under 1e-9 for sd up to 2 (the range participants differ by on
the log odds) and by 3e-7 at sd 3; expit's complex poles slow it beyond. The correlation of two of a
participant's outcomes, which GEE's exchangeable working correlation estimates, converts to sd the
same way, so that a pilot study's GEE gives a participant SD on the logit scale without a mixed
logit (which statsmodels does not fit reliably).
"""

from __future__ import annotations

import math

from numpy.polynomial import hermite_e
from scipy import optimize, special

NODES = 60
_Z, _WEIGHTS = hermite_e.hermegauss(NODES)  # nodes and weights for exp(-z^2 / 2)
_WEIGHTS = _WEIGHTS / math.sqrt(2 * math.pi)  # now an expectation over z ~ N(0, 1)
MAX_SD = 10.0  # the largest participant SD (logit scale) searched for


def marginal_probability(eta: float, sd: float) -> float:
    """P(y = 1) over participants: E[expit(eta + sd z)], z ~ N(0, 1)."""
    return float(_WEIGHTS @ special.expit(eta + sd * _Z))


def conditional_logit(probability: float, sd: float) -> float:
    """The eta whose marginal probability is `probability` (the inverse of `marginal_probability` in
    eta)."""
    if not 0 < probability < 1:
        raise ValueError(
            f"a probability strictly between 0 and 1 has a log odds; got {probability}"
        )
    start = float(special.logit(probability))
    width = 1.0 + 2.0 * sd  # a first bracket around the root, widened until it holds it
    low, high = start - width, start + width
    while marginal_probability(low, sd) > probability:
        low -= width
    while marginal_probability(high, sd) < probability:
        high += width
    return float(
        optimize.brentq(
            lambda eta: marginal_probability(eta, sd) - probability, low, high, xtol=1e-13
        )
    )


def within_correlation(probability: float, sd: float) -> float:
    """The correlation of two outcomes of one participant whose marginal probability is
    `probability`."""
    eta = conditional_logit(probability, sd)
    second_moment = float(_WEIGHTS @ special.expit(eta + sd * _Z) ** 2)
    return (second_moment - probability**2) / (probability * (1 - probability))


def participant_sd(probability: float, correlation: float) -> float:
    """The participant SD on the logit scale that gives this within-participant correlation at this
    marginal probability: 0 for a correlation of 0 or below, MAX_SD for one it cannot reach."""
    if correlation <= 0:
        return 0.0
    if within_correlation(probability, MAX_SD) <= correlation:
        return MAX_SD
    return float(
        optimize.brentq(
            lambda sd: within_correlation(probability, sd) - correlation, 0.0, MAX_SD, xtol=1e-10
        )
    )
