"""Estimated marginal means of the study's (arm, condition) cells and the arms' contrasts with the
reference arm, from a fitted M1 (`MixedFit`) or M2 (`GeeFit`), or a cluster-robust fit (`RobustFit`,
read as M1 with the identity link and as M2 with the logit); Holm's correction of an outcome's
contrasts.

A cell's mean is emmeans' (Lenth): the model's prediction averaged with equal weights over the
reference grid of the nuisance factors, every human_role and game_index level present in the data,
whatever the numbers of games in them, so that cells compare as if each had the same mix of roles
and games. For M1 this is exactly emmeans' linear function of the coefficients. For M2 the
predictions are averaged on the probability scale (marginal standardisation, so that a cell's mean
is a proportion of games and a contrast a risk difference); emmeans' `type = "response"` instead
averages on the logit scale and back-transforms, which differs when the grid's probabilities spread.
Standard errors are the delta method's from the fit's covariance (exact for M1), intervals and
p-values Wald's on the normal distribution; a probability's interval is built on the logit scale and
back-transformed, so that it stays in (0, 1).

A contrast is arm minus reference in each condition, and averaged over conditions with equal weights
(left out when there is one condition, where it is the same contrast). What cannot be estimated
comes back as NaN with a reason, never as an exception: a cell with fewer than two clusters
(`MIN_CLUSTERS`), a grid point the design cannot estimate (emmeans' non-estimable), or a model that
did not converge.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from bargain.analysis.models import NOT_CONVERGED, GeeFit, MixedFit
from bargain.analysis.robust import Link, RobustFit

MIN_CLUSTERS = 2  # a cell seen in fewer clusters than this says nothing about arms in general
# A cell probability this close to 0 or 1 is a cell whose games all had one outcome (the logit runs
# off to infinity):
# its interval on the logit scale means nothing.
SEPARATED = 1e-6
Fit = MixedFit | GeeFit | RobustFit


@dataclass(frozen=True)
class CellMean:
    """An (arm, condition) cell's estimated marginal mean (for M2 a probability), 95% interval; NaN
    with a `reason` when not estimable."""

    arm: str
    condition: str
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    n_games: int
    n_clusters: int
    reason: str


@dataclass(frozen=True)
class Contrast:
    """Arm minus reference arm (for M2 a risk difference) in `condition`, or averaged over
    conditions when `condition` is None; `p_holm` is Holm-adjusted over the contrasts of the same
    fit (one outcome)."""

    arm: str
    reference_arm: str
    condition: str | None
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p: float
    p_holm: float
    reason: str


def marginal_means(fit: Fit) -> tuple[CellMean, ...]:
    """Every (arm, condition) cell's estimated marginal mean, arms and conditions in the design's
    order."""
    means = []
    for arm in fit.design.factor_levels("arm"):
        for condition in fit.design.factor_levels("condition"):
            cell = fit.design.cell(arm, condition)
            value = _cell_value(fit, arm, condition)
            if isinstance(value, str):
                nan = math.nan
                means.append(
                    CellMean(
                        arm, condition, nan, nan, nan, nan, cell.n_games, cell.n_clusters, value
                    )
                )
                continue
            estimate, gradient = value
            se, reason, critical = _se(fit, gradient), "", _read_on(fit).ppf(0.975)
            # every game of the cell alike
            if not _linear(fit) and not SEPARATED < estimate < 1 - SEPARATED:
                low = high = math.nan
                reason = (
                    f"every game of the cell has the outcome {round(estimate)}: no interval on the "
                    "logit scale"
                )
            elif not _linear(fit):
                logit, half = special.logit(estimate), critical * se / (estimate * (1 - estimate))
                low, high = float(special.expit(logit - half)), float(special.expit(logit + half))
            else:
                low, high = estimate - critical * se, estimate + critical * se
            means.append(
                CellMean(
                    arm, condition, estimate, se, low, high, cell.n_games, cell.n_clusters, reason
                )
            )
    return tuple(means)


def contrasts(fit: Fit) -> tuple[Contrast, ...]:
    """Each arm minus the reference in every condition, then averaged over conditions, with Holm's
    p-values."""
    reference = fit.design.reference_arm
    conditions = fit.design.factor_levels("condition")
    found: list[tuple[str, str | None, tuple[float, np.ndarray] | str]] = []
    for arm in fit.design.factor_levels("arm")[1:]:
        per_condition = []
        for condition in conditions:
            difference = _difference(
                _cell_value(fit, arm, condition), _cell_value(fit, reference, condition)
            )
            per_condition.append(difference)
            found.append((arm, condition, difference))
        if len(conditions) > 1:
            reasons = [f"{c}: {d}" for c, d in zip(conditions, per_condition) if isinstance(d, str)]
            if reasons:
                found.append((arm, None, "; ".join(reasons)))
            else:
                values = [d for d in per_condition if not isinstance(d, str)]
                found.append(
                    (
                        arm,
                        None,
                        (
                            float(np.mean([v for v, _ in values])),
                            np.mean([g for _, g in values], 0),
                        ),
                    )
                )

    rows: list[tuple[str, str | None, float, float, float, str]] = []
    for arm, where, difference in found:
        if isinstance(difference, str):
            rows.append((arm, where, math.nan, math.nan, math.nan, difference))
            continue
        estimate, gradient = difference
        se = _se(fit, gradient)
        p = float(2 * _read_on(fit).sf(abs(estimate / se))) if se > 0 else math.nan
        rows.append((arm, where, estimate, se, p, ""))
    adjusted, critical = holm([p for *_, p, _ in rows]), _read_on(fit).ppf(0.975)
    return tuple(
        Contrast(
            arm,
            reference,
            where,
            estimate,
            se,
            estimate - critical * se,
            estimate + critical * se,
            p,
            p_holm,
            reason,
        )
        for (arm, where, estimate, se, p, reason), p_holm in zip(rows, adjusted)
    )


def holm(pvalues: Sequence[float]) -> tuple[float, ...]:
    """Holm's step-down adjustment (R's `p.adjust(method = "holm")`), in the given order; NaN stays
    NaN and does not count among the tests."""
    finite = [i for i, p in enumerate(pvalues) if not math.isnan(p)]
    adjusted = [math.nan] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(sorted(finite, key=lambda i: pvalues[i])):
        running = max(running, min(1.0, (len(finite) - rank) * pvalues[i]))
        adjusted[i] = running
    return tuple(adjusted)


def _cell_value(fit: Fit, arm: str, condition: str) -> tuple[float, np.ndarray] | str:
    """A cell's mean over the equal-weight nuisance grid and its gradient in the coefficients, or
    why not."""
    design = fit.design
    cell = design.cell(arm, condition)
    if cell.n_clusters < MIN_CLUSTERS:
        return f"{cell.n_clusters} cluster(s) in {arm}/{condition} (needs at least {MIN_CLUSTERS})"
    beta = np.array([c.estimate for c in fit.coefficients])
    if not fit.converged or not np.all(np.isfinite(beta)):
        return NOT_CONVERGED
    grid = [
        design.row({"arm": arm, "condition": condition, "human_role": role, "game_index": game})
        for role in design.factor_levels("human_role")
        for game in design.factor_levels("game_index")
    ]
    if not all(design.estimable(row) for row in grid):
        return f"{arm}/{condition} is not estimable from the design ({'; '.join(design.dropped)})"
    x = np.array([design.kept(row) for row in grid])  # (grid points, coefficients)
    if _linear(fit):
        return float(np.mean(x @ beta)), x.mean(axis=0)
    probability = special.expit(x @ beta)  # (grid points,)
    return float(np.mean(probability)), (probability * (1 - probability)) @ x / len(grid)


def _read_on(fit: Fit):
    """The distribution an estimate over its standard error is read on: the normal for M1 (REML, as
    emmeans' asymptotic intervals), Student's t with G - 1 degrees of freedom for a sandwich
    (cluster-robust) fit, whose errors are estimated from G clusters: read on the normal they are
    too narrow at tens of clusters (a study's null rejected 6.6% of the time at 120 participants),
    and with G - 1 they stay near their level (Stata's practice)."""
    if isinstance(fit, MixedFit):
        return stats.norm
    return _student(max(1, fit.df if isinstance(fit, RobustFit) else fit.n_clusters - 1))


@functools.cache
def _student(df: int):
    """Student's t with `df` degrees of freedom, frozen once per df (freezing a scipy distribution
    takes about a millisecond, as long as a simulated study's fit in `bargain plan`)."""
    return stats.t(df)


def _linear(fit: Fit) -> bool:
    """Whether the fit models the mean itself (M1, least squares), not its log odds."""
    return isinstance(fit, MixedFit) or isinstance(fit, RobustFit) and fit.link is Link.IDENTITY


def _difference(
    arm: tuple[float, np.ndarray] | str, reference: tuple[float, np.ndarray] | str
) -> tuple[float, np.ndarray] | str:
    """Arm minus reference, value and gradient, or the reasons either side is missing."""
    if isinstance(arm, str) or isinstance(reference, str):
        return "; ".join(r for r in (arm, reference) if isinstance(r, str))
    return arm[0] - reference[0], arm[1] - reference[1]


def _se(fit: Fit, gradient: np.ndarray) -> float:
    """The delta method's standard error of a function with this gradient in the coefficients."""
    return math.sqrt(max(0.0, float(gradient @ np.array(fit.cov) @ gradient)))
