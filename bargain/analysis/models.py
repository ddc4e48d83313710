"""The study's three models of game rows, each checked against its reference implementation in R
(tests/data/analysis/reference.R, tests/test_analysis_models.py).

- M1, `fit_mixed`: a linear mixed model of a continuous outcome with a random intercept per cluster,
  fitted by REML as lme4's `lmer(y ~ arm * condition + human_role + factor(game_index) + (1 |
  cluster))` fits it (`bargain.analysis.reml`, which says why not statsmodels MixedLM), the fixed
  effects' covariance lme4's `vcov`.
- M2, `fit_gee`: a marginal logistic model of a binary outcome (statsmodels GEE; geepack's
  `geeglm(..., family = binomial, corstr = "exchangeable")`), its exchangeable correlation estimated
  as geepack does (no degrees-of-freedom correction), its errors the sandwich, with Mancl and
  DeRouen's bias reduction below `BIAS_REDUCED_BELOW` clusters, where the plain sandwich is too
  small.
- M3, `fit_conditional_logit`: a conditional logit of a binary outcome grouped by cluster, for
  designs where each participant meets several arms (statsmodels ConditionalLogit, exact likelihood;
  survival's `clogit`), each arm's coefficient read on the arena-score scale 1000 + 400 beta / ln
  10, the reference arm at 1000.

The mean structure and what is dropped are `bargain.analysis.design`'s. A fit never raises on the
data's account once its columns are there: a failure or non-convergence comes back as
`converged=False` with the message, and statsmodels' warnings are kept in the result rather than
printed. Intervals are Wald intervals on the normal distribution (what statsmodels reports; emmeans'
Kenward-Roger degrees of freedom are not applied).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.base.model import LikelihoodModel
from statsmodels.discrete.conditional_models import ConditionalLogit
from statsmodels.genmod import cov_struct, families
from statsmodels.genmod.generalized_estimating_equations import GEE
from statsmodels.tools.sm_exceptions import PerfectSeparationError

from bargain.analysis.design import Design, build_design, game_rows
from bargain.analysis.reml import RandomInterceptFit, fit_random_intercept

# clusters: under this many, GEE's errors are Mancl-DeRouen's bias-reduced sandwich
BIAS_REDUCED_BELOW = 50
# cluster variance / residual variance below this is a singular fit (lme4: theta < 1e-4)
SINGULAR_RATIO = 1e-8
Z95 = float(stats.norm.ppf(0.975))
ELO = 400.0 / math.log(10.0)  # arena score points per unit of log odds
FAILURES = (
    np.linalg.LinAlgError,
    ValueError,
    ZeroDivisionError,
    FloatingPointError,
    PerfectSeparationError,
)
NOT_CONVERGED = "the model did not converge (see its warnings)"
T = TypeVar("T")


@dataclass(frozen=True)
class Coefficient:
    """A fixed effect, named in words ("arm[model-a] x condition[both_unaware]"), with its standard
    error."""

    name: str
    estimate: float
    se: float


@dataclass(frozen=True)
class MixedFit:
    """M1: a REML linear mixed model's fixed effects, their covariance and the variance
    components."""

    outcome: str
    design: Design
    coefficients: tuple[Coefficient, ...]
    cov: tuple[tuple[float, ...], ...]
    cluster_variance: float
    residual_variance: float
    icc: float
    reml_log_likelihood: float
    n_games: int
    n_clusters: int
    converged: bool
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class GeeFit:
    """M2: a binomial GEE's coefficients (log odds) with their robust covariance, `cov_type`
    "robust" (the sandwich) or "bias_reduced" (Mancl-DeRouen), and the exchangeable working
    correlation."""

    outcome: str
    design: Design
    coefficients: tuple[Coefficient, ...]
    cov: tuple[tuple[float, ...], ...]
    cov_type: str
    working_correlation: float
    n_games: int
    n_clusters: int
    converged: bool
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class ArenaScore:
    """An arm on the arena-score scale (reference 1000, +400 points per tenfold odds), 95% interval;
    NaN with a `reason` when the data cannot place it."""

    arm: str
    score: float
    ci_low: float
    ci_high: float
    n_clusters: int
    reason: str


@dataclass(frozen=True)
class ConditionalLogitFit:
    """M3: a conditional logit's coefficients (log odds ratios within clusters) and the arms' arena
    scores. Only clusters whose outcome varies inform it (`n_informative_clusters`); its design is
    built on them."""

    outcome: str
    design: Design
    coefficients: tuple[Coefficient, ...]
    cov: tuple[tuple[float, ...], ...]
    scores: tuple[ArenaScore, ...]
    n_games: int
    n_clusters: int
    n_informative_clusters: int
    converged: bool
    warnings: tuple[str, ...]


def fit_mixed(games: pd.DataFrame, outcome: str, reference_arm: str) -> MixedFit:
    """M1: `outcome ~ arm * condition + human_role + game_index + (1 | cluster)` by REML, as lme4
    fits it."""
    rows = game_rows(games, outcome)
    design, x = build_design(rows, reference_arm)
    y, clusters = rows[outcome].to_numpy(), rows["cluster"].to_numpy()

    def fit() -> RandomInterceptFit:
        _require_clusters(rows)
        return fit_random_intercept(y, x, clusters)

    fitted, messages = _quietly(fit)
    if fitted is None:
        nan = math.nan
        return MixedFit(
            outcome, design, *_unfitted(design), nan, nan, nan, nan, *_sizes(rows), False, messages
        )
    tau2, sigma2 = fitted.cluster_variance, fitted.residual_variance
    if fitted.message:
        messages += (fitted.message,)
    if tau2 < SINGULAR_RATIO * sigma2:
        messages += ("singular fit: the cluster variance is estimated at 0 (lme4's isSingular)",)
    return MixedFit(
        outcome,
        design,
        _coefficients(design, fitted.beta, fitted.cov),
        _matrix(fitted.cov),
        tau2,
        sigma2,
        tau2 / (tau2 + sigma2),
        fitted.log_likelihood,
        *_sizes(rows),
        fitted.converged,
        messages,
    )


def fit_gee(games: pd.DataFrame, outcome: str, reference_arm: str) -> GeeFit:
    """M2: a binomial logit GEE of `outcome ~ arm * condition + human_role + game_index`,
    exchangeable within clusters, robust errors (bias-reduced under `BIAS_REDUCED_BELOW` clusters),
    as geepack's geeglm fits it."""
    rows = game_rows(games, outcome)
    _require_binary(rows, outcome)
    design, x = build_design(rows, reference_arm)
    n_games, n_clusters = _sizes(rows)
    cov_type = "bias_reduced" if n_clusters < BIAS_REDUCED_BELOW else "robust"
    y, clusters = rows[outcome].to_numpy(), rows["cluster"].to_numpy()

    def fit() -> tuple[np.ndarray, np.ndarray, float, bool]:
        _require_clusters(rows)
        model = GEE(
            y, x, groups=clusters, family=families.Binomial(), cov_struct=cov_struct.Exchangeable()
        )
        result = model.fit(maxiter=100, ctol=1e-10, ddof_scale=0, cov_type=cov_type)
        if result is None:  # statsmodels has warned why
            raise ValueError("GEE could not estimate the parameters")
        dependence = float(np.atleast_1d(model.cov_struct.dep_params)[0])
        return (
            np.asarray(result.params),
            np.asarray(result.cov_params()),
            dependence,
            bool(result.converged),
        )

    fitted, messages = _quietly(fit)
    if fitted is None:
        return GeeFit(
            outcome,
            design,
            *_unfitted(design),
            cov_type,
            math.nan,
            n_games,
            n_clusters,
            False,
            messages,
        )
    beta, cov, alpha, converged = fitted
    return GeeFit(
        outcome,
        design,
        _coefficients(design, beta, cov),
        _matrix(cov),
        cov_type,
        alpha,
        n_games,
        n_clusters,
        converged,
        messages,
    )


def fit_conditional_logit(
    games: pd.DataFrame, outcome: str, reference_arm: str
) -> ConditionalLogitFit:
    """M3: a conditional logit of `outcome ~ arm + condition + human_role + game_index`, strata the
    clusters (what does not vary within clusters drops out), as survival's clogit fits it, with the
    arms' arena scores."""
    rows = game_rows(games, outcome)
    _require_binary(rows, outcome)
    n_games, n_clusters = _sizes(rows)
    informative = rows[rows.groupby("cluster")[outcome].transform("nunique") > 1].reset_index(
        drop=True
    )
    n_informative = int(informative["cluster"].nunique())
    # else the design names the columns of all the rows
    usable = reference_arm in set(informative["arm"])
    design, x = build_design(informative if usable else rows, reference_arm, within_clusters=True)
    y, clusters = informative[outcome].to_numpy(), informative["cluster"].to_numpy()

    def fit() -> tuple[np.ndarray, np.ndarray, bool]:
        if not usable:
            raise ValueError(
                f"no cluster whose {outcome} varies played the reference arm {reference_arm}"
            )
        _require_clusters(informative)
        if not design.columns:
            raise ValueError("nothing varies within the clusters whose outcome varies")
        model = ConditionalLogit(y, x, groups=clusters)
        # ConditionalLogit.fit passes neither a tolerance on nor the solver's report back; its base
        # class does both
        result = LikelihoodModel.fit(model, method="newton", maxiter=100, tol=1e-12, disp=False)
        return (
            np.asarray(result.params),
            np.asarray(result.cov_params()),
            bool(result.mle_retvals["converged"]),
        )

    fitted, messages = _quietly(fit)
    if fitted is None:
        coefficients, cov = _unfitted(design)
        beta, covariance, converged = np.full(len(design.columns), math.nan), np.asarray(cov), False
    else:
        beta, covariance, converged = fitted
        coefficients, cov = _coefficients(design, beta, covariance), _matrix(covariance)
    scores = _arena_scores(design, informative, beta, covariance, converged)
    return ConditionalLogitFit(
        outcome,
        design,
        coefficients,
        cov,
        scores,
        n_games,
        n_clusters,
        n_informative,
        converged,
        messages,
    )


def _arena_scores(
    design: Design, rows: pd.DataFrame, beta: np.ndarray, cov: np.ndarray, converged: bool
) -> tuple[ArenaScore, ...]:
    """Each arm's score 1000 + 400 beta / ln 10 with its Wald interval; the reference arm at 1000
    exactly."""
    names = [c.name for c in design.columns]
    scores = []
    for arm in design.factor_levels("arm"):
        clusters = rows.loc[rows["arm"] == arm, "cluster"].nunique()
        reason = ""
        if clusters < 2:
            reason = f"{clusters} informative cluster(s) played {arm} (needs at least 2)"
        elif arm != design.reference_arm and f"arm[{arm}]" not in names:
            reason = f"arm[{arm}] is not estimable from the design"
        elif arm != design.reference_arm and not converged:
            reason = NOT_CONVERGED
        if reason or arm == design.reference_arm:
            value = math.nan if reason else 1000.0
            scores.append(ArenaScore(arm, value, value, value, clusters, reason))
            continue
        i = names.index(f"arm[{arm}]")
        b, se = float(beta[i]), math.sqrt(float(cov[i, i]))
        scores.append(
            ArenaScore(
                arm,
                1000 + ELO * b,
                1000 + ELO * (b - Z95 * se),
                1000 + ELO * (b + Z95 * se),
                clusters,
                "",
            )
        )
    return tuple(scores)


def _quietly(fit: Callable[[], T]) -> tuple[T | None, tuple[str, ...]]:
    """Run a fit with its warnings kept, not printed; a failure becomes None and its message. A
    ResourceWarning is not the fit's: it is the garbage collector finalising something else (an
    event loop left by other code) while the fit runs, and would make one fit's warnings depend on
    what ran before it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(all="warn"):
            try:
                value: T | None = fit()
                failure = ""
            except FAILURES as error:
                value, failure = (
                    None,
                    f"the model could not be fitted: {type(error).__name__}: {error}",
                )
    messages = [str(w.message) for w in caught if not issubclass(w.category, ResourceWarning)]
    if failure:
        messages.append(failure)
    return value, tuple(dict.fromkeys(messages))


def _coefficients(design: Design, beta: np.ndarray, cov: np.ndarray) -> tuple[Coefficient, ...]:
    """The design's columns with their estimates and standard errors."""
    se = np.sqrt(np.where(np.diag(cov) >= 0, np.diag(cov), np.nan))
    return tuple(
        Coefficient(c.name, float(b), float(s)) for c, b, s in zip(design.columns, beta, se)
    )


def _unfitted(design: Design) -> tuple[tuple[Coefficient, ...], tuple[tuple[float, ...], ...]]:
    """Coefficients and covariance of a model that could not be fitted: the columns, every number
    NaN."""
    p = len(design.columns)
    return _coefficients(design, np.full(p, math.nan), np.full((p, p), math.nan)), _matrix(
        np.full((p, p), math.nan)
    )


def _matrix(a: np.ndarray) -> tuple[tuple[float, ...], ...]:
    """A matrix as nested tuples of floats (results compare equal and stay immutable)."""
    return tuple(tuple(float(v) for v in row) for row in a)


def _sizes(rows: pd.DataFrame) -> tuple[int, int]:
    """Games and clusters in the rows a model saw."""
    return len(rows), int(rows["cluster"].nunique())


def _require_clusters(rows: pd.DataFrame) -> None:
    """A model of clustered games needs at least two clusters to say anything beyond one
    participant."""
    if rows["cluster"].nunique() < 2:
        raise ValueError("fewer than two clusters")


def _require_binary(rows: pd.DataFrame, outcome: str) -> None:
    """A logit's outcome must be 0/1."""
    values = set(rows[outcome].unique())
    if not values <= {0.0, 1.0}:
        raise ValueError(f"{outcome!r} must be 0/1 for a logit; it has {sorted(values)[:5]}")
