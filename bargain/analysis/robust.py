"""Cluster-robust fits of the study's mean structure, for simulations that fit thousands of studies
(`bargain plan`).

Each outcome is fitted as if its games were independent, ordinary least squares (identity link) or a
logit (a GEE with an independence working correlation), on `bargain.analysis.design`'s columns, and
the clustering is left to the errors: the sandwich summed over clusters, with the CR1 small-sample
factor G/(G-1) (N-1)/(N-K), as statsmodels' `cov_type="cluster"` gives it for both (and Stata's
`regress, vce(cluster)`). Their tests are read on t with G - 1 degrees of freedom (`RobustFit.df`),
which for two arms of one game per participant is the t-test. Why not the study's models: on 1,200
games M1's REML takes 0.05 s and M2's exchangeable GEE 0.5 s; these fit both outcomes in 0.01 s,
their shared design included.

What they simplify: the estimates ignore the correlation within participants, so they are unbiased
but, in a within design where participants meet only some arms, less precise than M1's, which also
compares a participant with themselves; power computed with them is then a little conservative (in
benchmarks/analysis.py's design, 4 arms of which each participant meets 3, a contrast's standard
error is 3% above M1's when participants account for a fifth of the variance, 11% when for half).
They coincide when every participant has the same numbers of games of each arm, condition and role,
or (between subjects) all their games in one cell. Marginal means and contrasts of these fits are
`bargain.analysis.marginal`'s.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from bargain.analysis.design import Design, build_design, game_rows
from bargain.analysis.models import (
    Coefficient,
    _coefficients,
    _matrix,
    _quietly,
    _require_binary,
    _require_clusters,
    _sizes,
)

# a logit that has not converged in this many steps is separated (an estimate at infinity)
NEWTON_STEPS = 50
NEWTON_TOLERANCE = 1e-10


class Link(enum.StrEnum):
    """How an outcome's mean is modelled: directly (least squares), or on the log odds (a logit)."""

    IDENTITY = "identity"
    LOGIT = "logit"


@dataclass(frozen=True)
class RobustFit:
    """One outcome's coefficients with their cluster-robust (CR1) covariance; `df` the degrees of
    freedom its tests are read on (clusters - 1)."""

    outcome: str
    link: Link
    design: Design
    coefficients: tuple[Coefficient, ...]
    cov: tuple[tuple[float, ...], ...]
    df: int
    n_games: int
    n_clusters: int
    converged: bool
    warnings: tuple[str, ...]


def fit_robust(
    games: pd.DataFrame, links: Mapping[str, Link], reference_arm: str
) -> tuple[RobustFit, ...]:
    """Each outcome of `links` fitted with its link on the games where every one of them is present,
    one design for all: `outcome ~ arm * condition + human_role + game_index`, cluster-robust
    errors."""
    rows = game_rows(games, *links)
    design, x = build_design(rows, reference_arm)
    n_games, n_clusters = _sizes(rows)
    codes = pd.factorize(rows["cluster"], sort=True)[0]
    fits = []
    for outcome, link in links.items():
        if link is Link.LOGIT:
            _require_binary(rows, outcome)
        y = rows[outcome].to_numpy()

        def fit(y: np.ndarray = y, link: Link = link) -> tuple[np.ndarray, np.ndarray, bool]:
            _require_clusters(rows)
            return _least_squares(x, y, codes) if link is Link.IDENTITY else _logit(x, y, codes)

        fitted, messages = _quietly(fit)
        p = len(design.columns)
        beta, cov, converged = (
            fitted if fitted is not None else (np.full(p, np.nan), np.full((p, p), np.nan), False)
        )
        fits.append(
            RobustFit(
                outcome,
                link,
                design,
                _coefficients(design, beta, cov),
                _matrix(cov),
                n_clusters - 1,
                n_games,
                n_clusters,
                converged,
                messages,
            )
        )
    return tuple(fits)


def _least_squares(
    x: np.ndarray, y: np.ndarray, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, bool]:
    """OLS and its CR1 covariance."""
    bread = np.linalg.inv(x.T @ x)  # (p, p)
    beta = bread @ (x.T @ y)
    return beta, _sandwich(bread, x * (y - x @ beta)[:, None], codes), True


def _logit(x: np.ndarray, y: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """The logit's maximum likelihood by Newton's method, and its CR1 covariance."""
    beta = np.zeros(x.shape[1])
    converged = False
    for _ in range(NEWTON_STEPS):
        mu = special.expit(x @ beta)  # (n,)
        information = (x * (mu * (1 - mu))[:, None]).T @ x  # (p, p)
        step = np.linalg.solve(information, x.T @ (y - mu))
        beta = beta + step
        if np.max(np.abs(step)) < NEWTON_TOLERANCE:
            converged = True
            break
    mu = special.expit(x @ beta)
    bread = np.linalg.inv((x * (mu * (1 - mu))[:, None]).T @ x)
    return beta, _sandwich(bread, x * (y - mu)[:, None], codes), converged


def _sandwich(bread: np.ndarray, scores: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """bread (sum over clusters of the outer product of each cluster's summed scores) bread, times
    CR1's G/(G-1) (N-1)/(N-K)."""
    (n, p), clusters = scores.shape, int(codes.max()) + 1
    summed = np.stack(
        [np.bincount(codes, weights=column, minlength=clusters) for column in scores.T], axis=1
    )
    factor = clusters / (clusters - 1) * (n - 1) / (n - p)
    return factor * bread @ (summed.T @ summed) @ bread
