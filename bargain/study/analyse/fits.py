"""Each outcome's models fitted to a sample, and their numbers as tables: estimated marginal means per (arm,
condition) cell, contrasts arm - reference per condition and averaged, coefficients, variance components.

The fitting is bargain.analysis's (models, marginal); this module chooses the rows (`Sample.model_rows`), says
why a model was not fitted (no game has the outcome, the reference arm has none), and turns M3's arena scores
into contrasts (arm - reference in arena-score points, one per arm: the conditional logit has no interaction, so
each is averaged over conditions). Holm's correction runs within each outcome and model: the contrasts of one
fit are one family; M3 re-asks M2's question of deal on another scale and is corrected apart. A contrast's
n_games and n_clusters count the rows of its two arms (in its condition, or in all) that the model read.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from bargain.analysis.marginal import CellMean, Contrast, contrasts, holm, marginal_means
from bargain.analysis.models import (
    ELO,
    NOT_CONVERGED,
    Z95,
    ConditionalLogitFit,
    GeeFit,
    MixedFit,
    fit_conditional_logit,
    fit_gee,
    fit_mixed,
)
from bargain.study.analyse.outcomes import Outcome
from bargain.study.analyse.sample import Sample

AVERAGE = "average"  # a contrast averaged over conditions, as contrasts.csv names it
CONTRAST_COLUMNS = (
    "outcome",
    "model",
    "arm",
    "reference",
    "condition",
    "estimate",
    "ci_low",
    "ci_high",
    "se",
    "p",
    "p_holm",
    "n_games",
    "n_clusters",
)
FITTERS: dict[str, Callable[[pd.DataFrame, str, str], MixedFit | GeeFit | ConditionalLogitFit]] = {
    "M1": fit_mixed,
    "M2": fit_gee,
    "M3": fit_conditional_logit,
}


@dataclass(frozen=True, eq=False)
class ModelResult:
    """One model of one outcome: the fit (None with `reason` when there was none), its cells and contrasts (each
    with the games and clusters behind it)."""

    outcome: Outcome
    model: str
    fit: MixedFit | GeeFit | ConditionalLogitFit | None
    reason: str
    cells: tuple[CellMean, ...]
    contrasts: tuple[tuple[Contrast, int, int], ...]


def fit_outcome(sample: Sample, outcome: Outcome, model: str, reference: str) -> ModelResult:
    """Fit `model` (M1, M2 or M3) of `outcome` to the sample, with its marginal means and contrasts."""
    rows = sample.model_rows(outcome.name, outcome.per_game)
    if rows.empty:
        return ModelResult(outcome, model, None, f"no game in the sample has {outcome.name}", (), ())
    if reference not in set(rows["arm"]):
        return ModelResult(
            outcome, model, None, f"the reference arm {reference} has no game with {outcome.name}", (), ()
        )
    fit = FITTERS[model](rows, outcome.name, reference)
    found = _scored(fit) if isinstance(fit, ConditionalLogitFit) else contrasts(fit)
    cells = () if isinstance(fit, ConditionalLogitFit) else marginal_means(fit)
    reason = "" if fit.converged else NOT_CONVERGED
    if reason:  # said once for the model, not once per side of every difference
        found = tuple(dataclasses.replace(c, reason=reason) for c in found)
        cells = tuple(dataclasses.replace(c, reason=reason) for c in cells)
    return ModelResult(outcome, model, fit, reason, cells, tuple((c, *_sizes(rows, c)) for c in found))


def contrasts_table(results: list[ModelResult]) -> pd.DataFrame:
    """contrasts.csv: one row per contrast, exactly CONTRAST_COLUMNS; NaN where not estimable."""
    rows = [
        {
            "outcome": r.outcome.name,
            "model": r.model,
            "arm": c.arm,
            "reference": c.reference_arm,
            "condition": c.condition or AVERAGE,
            "estimate": c.estimate,
            "ci_low": c.ci_low,
            "ci_high": c.ci_high,
            "se": c.se,
            "p": c.p,
            "p_holm": c.p_holm,
            "n_games": games,
            "n_clusters": clusters,
        }
        for r in results
        for c, games, clusters in r.contrasts
    ]
    return pd.DataFrame(rows, columns=list(CONTRAST_COLUMNS))


def reasons(results: list[ModelResult]) -> list[str]:
    """Why each contrast not estimated was not, in contrasts.csv's order (empty where it was)."""
    return [c.reason for r in results for c, _, _ in r.contrasts]


def cells_table(results: list[ModelResult]) -> pd.DataFrame:
    """cells.csv: each outcome's estimated marginal mean per (arm, condition) cell, from M1 or M2."""
    columns = ["outcome", "model", "arm", "condition", "estimate", "se", "ci_low", "ci_high", "n_games", "n_clusters"]
    rows = [
        {"outcome": r.outcome.name, "model": r.model, **{k: getattr(c, k) for k in columns[2:]}, "reason": c.reason}
        for r in results
        for c in r.cells
    ]
    return pd.DataFrame(rows, columns=[*columns, "reason"])


def coefficients_table(results: list[ModelResult]) -> pd.DataFrame:
    """models_<outcome>.csv: the fitted coefficients of an outcome's models (log odds for M2 and M3), with Wald
    intervals and p-values, then M3's arena scores."""
    rows = []
    for r in results:
        if r.fit is None:
            continue
        for c in r.fit.coefficients:
            z = c.estimate / c.se if c.se > 0 else math.nan
            rows.append(
                {
                    "model": r.model,
                    "term": c.name,
                    "estimate": c.estimate,
                    "se": c.se,
                    "ci_low": c.estimate - Z95 * c.se,
                    "ci_high": c.estimate + Z95 * c.se,
                    "p": float(2 * stats.norm.sf(abs(z))) if not math.isnan(z) else math.nan,
                }
            )
        if isinstance(r.fit, ConditionalLogitFit):
            rows += [
                {
                    "model": r.model,
                    "term": f"arena_score[{s.arm}]",
                    "estimate": s.score,
                    "ci_low": s.ci_low,
                    "ci_high": s.ci_high,
                }
                for s in r.fit.scores
            ]
    return pd.DataFrame(rows, columns=["model", "term", "estimate", "se", "ci_low", "ci_high", "p"])


def variance_table(results: list[ModelResult]) -> pd.DataFrame:
    """variance_components.csv: per fitted model, the cluster and residual variances and the ICC (M1), the working
    correlation (M2) or the clusters whose outcome varies (M3), with the games and clusters read."""
    rows = []
    for r in results:
        fit = r.fit
        if fit is None:
            continue
        rows.append(
            {
                "outcome": r.outcome.name,
                "model": r.model,
                "cluster_variance": fit.cluster_variance if isinstance(fit, MixedFit) else math.nan,
                "residual_variance": fit.residual_variance if isinstance(fit, MixedFit) else math.nan,
                "icc": fit.icc if isinstance(fit, MixedFit) else math.nan,
                "working_correlation": fit.working_correlation if isinstance(fit, GeeFit) else math.nan,
                "informative_clusters": fit.n_informative_clusters
                if isinstance(fit, ConditionalLogitFit)
                else math.nan,
                "n_games": fit.n_games,
                "n_clusters": fit.n_clusters,
                "converged": fit.converged,
            }
        )
    columns = ["outcome", "model", "cluster_variance", "residual_variance", "icc", "working_correlation"]
    return pd.DataFrame(rows, columns=[*columns, "informative_clusters", "n_games", "n_clusters", "converged"])


def _scored(fit: ConditionalLogitFit) -> tuple[Contrast, ...]:
    """M3's arms as contrasts with the reference on the arena-score scale (points above 1000), Holm within."""
    names = [c.name for c in fit.coefficients]
    found = []
    for score in fit.scores:
        if score.arm == fit.design.reference_arm:
            continue
        if score.reason:
            found.append((score.arm, math.nan, math.nan, score.reason))
            continue
        coefficient = fit.coefficients[names.index(f"arm[{score.arm}]")]
        found.append((score.arm, ELO * coefficient.estimate, ELO * coefficient.se, ""))
    adjusted = holm([_p(estimate, se) for _, estimate, se, _ in found])
    return tuple(
        Contrast(
            arm,
            fit.design.reference_arm,
            None,
            estimate,
            se,
            estimate - Z95 * se,
            estimate + Z95 * se,
            _p(estimate, se),
            p_holm,
            reason,
        )
        for (arm, estimate, se, reason), p_holm in zip(found, adjusted)
    )


def _p(estimate: float, se: float) -> float:
    """A Wald test's two-sided p-value (NaN without a standard error)."""
    return float(2 * stats.norm.sf(abs(estimate / se))) if se > 0 else math.nan


def _sizes(rows: pd.DataFrame, contrast: Contrast) -> tuple[int, int]:
    """The games and clusters of a contrast's two arms (in its condition, or in all) among the rows read."""
    chosen = rows["arm"].isin([contrast.arm, contrast.reference_arm])
    if contrast.condition is not None:
        chosen &= rows["condition"] == contrast.condition
    return int(chosen.sum()), int(np.unique(rows.loc[chosen, "cluster"]).size)
