"""A study's analysis, end to end and in memory: the sample, every outcome's models, the leaderboard, the cells
beside the paper and the runs, and every number as one JSON-ready record (`Analysis.numbers`, written as
analysis.json) with the tables written beside it (`Analysis.tables`).

Deterministic: the same export, runs and seed give the same numbers to the last digit (no clock, no unseeded
randomness; rows in canonical order; the bootstrap seeded), so that analysis.json and the tables are identical
byte for byte from one run to the next. Nothing here writes a file (bargain.study.analyse.report does).
"""

from __future__ import annotations

import importlib.metadata
import math
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import bargain
from bargain.analysis.bootstrap import LEVEL
from bargain.analysis.marginal import MIN_CLUSTERS
from bargain.study.analyse.beside import beside_table, read_runs
from bargain.study.analyse.exported import AnalysisError, Export
from bargain.study.analyse.fits import (
    ModelResult,
    cells_table,
    coefficients_table,
    contrasts_table,
    fit_outcome,
    reasons,
    variance_table,
)
from bargain.study.analyse.leaderboard import LEADERBOARD_COLUMNS, cell_draws, cell_summary, leaderboard
from bargain.study.analyse.outcomes import FORMULAS, SCALES, Outcome, planned_outcomes
from bargain.study.analyse.plan import ALPHA, plan_of
from bargain.study.analyse.sample import Sample, sample_of

PACKAGES = ("numpy", "pandas", "scipy", "statsmodels", "matplotlib")


@dataclass(frozen=True, eq=False)
class Analysis:
    """Every number of a study's analysis (`numbers`, analysis.json) and its tables by name (tables/NAME.csv)."""

    numbers: dict
    tables: dict[str, pd.DataFrame]

    @property
    def contrasts(self) -> pd.DataFrame:
        """contrasts.csv: one row per contrast, columns outcome, model, arm, reference, condition, estimate, ci_low,
        ci_high, se, p, p_holm, n_games, n_clusters."""
        return self.tables["contrasts"]


def analysis_of(
    export: Export,
    *,
    reference: str | None = None,
    runs: Sequence[Path] = (),
    bootstrap: int = 2000,
    seed: int = 0,
    all_participants: bool = False,
    progress: bool = False,
) -> Analysis:
    """The analysis of an export (no file written): `reference` the arm contrasted with (default the study's first
    arm), `runs` run directories set beside the cells, `bootstrap` resamples with `seed`, `all_participants` adds
    the sensitivity analysis with the excluded included, `progress` shows a bar for the bootstrap."""
    settings = export.settings
    keys = [arm.key for arm in settings.arms]
    if reference is not None and reference not in keys:
        raise AnalysisError(f"unknown --reference {reference!r}: the study's arms are {', '.join(keys) or 'none'}")
    if bootstrap < 1:
        raise AnalysisError(f"--bootstrap must be at least 1, not {bootstrap}")
    reference = reference or (keys[0] if keys else "")
    read = read_runs(runs)
    sample = sample_of(export)
    results = _fitted(sample, export, reference)
    drawn = cell_draws(sample, tuple(keys), bootstrap, seed, _bar(bootstrap, progress)) if sample.games else None
    human = cell_summary(drawn) if drawn else pd.DataFrame(columns=["arm", "condition", "human_role", "quantity"])
    tables = {
        "contrasts": contrasts_table(results),
        "cells": cells_table(results),
        "leaderboard": leaderboard(drawn, sample) if drawn else pd.DataFrame(columns=LEADERBOARD_COLUMNS),
        "beside_paper": beside_table(human, settings, read, sample.rows),
        "variance_components": variance_table(results),
        **{
            f"models_{o.name}": coefficients_table([r for r in results if r.outcome == o])
            for o in _fitted_outcomes(results)
        },
    }
    sensitivity = None
    if all_participants:
        everyone = sample_of(export, all_participants=True)
        tables["contrasts_all_participants"] = contrasts_table(_fitted(everyone, export, reference))
        sensitivity = everyone
    numbers = {
        "bargain": bargain.__version__,
        "packages": {"python": platform.python_version(), **{p: importlib.metadata.version(p) for p in PACKAGES}},
        "inputs": {name: digest for name, digest in export.sha256} | {r.file: r.sha256 for r in read},
        "study": {
            "name": settings.name,
            "versions": list(settings.versions),
            "hashes": list(settings.hashes),
            "settings_from": settings.source,
            "design": "within" if settings.within else "between",
            "arms": [{"key": a.key, "spec": a.spec, "label": a.label, "person": a.person} for a in settings.arms],
            "conditions": list(settings.conditions),
            "roles": list(settings.roles),
            "exclusions": list(settings.exclusions),
        },
        "settings": {
            "reference": reference,
            "bootstrap": bootstrap,
            "seed": seed,
            "alpha": ALPHA,
            "interval_percent": round(LEVEL * 100),
            "min_clusters": MIN_CLUSTERS,
            "all_participants": all_participants,
            "runs": [r.name for r in read],
        },
        "plan": plan_of(settings, reference, bootstrap, seed),
        "sample": {"primary": _counts(sample), **({"all_participants": _counts(sensitivity)} if sensitivity else {})},
        "models": [_model_record(r) for r in results],
        "tables": {name: _records(table) for name, table in tables.items()},
        "contrast_reasons": reasons(results),
        "plan_sha256": None,  # with a plan, write_report gives its SHA-256 and the deviations from it
        "deviations": None,
    }
    return Analysis(_plain_dict(numbers), tables)


def _fitted(sample: Sample, export: Export, reference: str) -> list[ModelResult]:
    """Every planned outcome's models fitted to the sample (an outcome analysed only where present left out when
    absent)."""
    results = []
    for outcome in planned_outcomes(export.settings):
        if outcome.present_only and (sample.rows.empty or sample.rows[outcome.name].isna().all()):
            continue
        results += [fit_outcome(sample, outcome, model, reference) for model in outcome.models]
    return results


def _fitted_outcomes(results: list[ModelResult]) -> list[Outcome]:
    """The outcomes with at least one model fitted, in order."""
    return list(dict.fromkeys(r.outcome for r in results if r.fit is not None))


def _counts(sample: Sample) -> dict:
    """What the report says of a sample."""
    return {
        "participants": sample.participants,
        "excluded_left_out": sample.excluded_left_out,
        "games": sample.games,
        "rows": len(sample.rows),
        "clusters": sample.clusters,
        "fallback_games": sample.fallback_games,
        "games_between_people": sample.games_between_people,
        "duplicate_moves_ignored": sample.duplicate_moves,
    }


def _model_record(result: ModelResult) -> dict:
    """One model of one outcome, as analysis.json gives it (its numbers are in the tables)."""
    fit = result.fit
    return {
        "outcome": result.outcome.name,
        "description": result.outcome.description,
        "model": result.model,
        "formula": FORMULAS[result.model],
        "scale": SCALES[result.model],
        "fitted": fit is not None,
        "converged": bool(fit and fit.converged),
        "reason": result.reason,
        "n_games": fit.n_games if fit else 0,
        "n_clusters": fit.n_clusters if fit else 0,
        "dropped": list(fit.design.dropped) if fit else [],
        "warnings": list(fit.warnings) if fit else [],
        "cov_type": getattr(fit, "cov_type", None),
    }


def _records(table: pd.DataFrame) -> list[dict]:
    """A table's rows as records, in its order."""
    return table.to_dict("records")


def _plain_dict(record: dict) -> dict:
    """A record made JSON-ready (`_plain`)."""
    return {str(k): _plain(v) for k, v in record.items()}


def _plain(value: object) -> object:
    """JSON-ready: numpy numbers as Python's, NaN and infinities as None, tuples as lists."""
    if isinstance(value, dict):
        return _plain_dict(value)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    return None if value is pd.NA or value is pd.NaT else value


def _bar(total: int, shown: bool):
    """A progress bar for the bootstrap's resamples (on standard error), or nothing."""
    if not shown:
        return None
    from tqdm import tqdm

    bar = tqdm(total=total, desc="bootstrap resamples", unit="resample", leave=False)

    def advance(done: int) -> None:
        bar.update(done)
        if bar.n >= total:
            bar.close()

    return advance
