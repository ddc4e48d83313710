"""`bargain analyse` as one call: an export analysed and its report written, or the analysis plan written from the
study file alone; what the command line prints, or an AnalysisError of one line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bargain.study.analyse.analysis import analysis_of
from bargain.study.analyse.exported import AnalysisError, read_export
from bargain.study.analyse.plan import write_plan
from bargain.study.analyse.report import write_report


def analyse(
    export: str | None,
    out: Path,
    *,
    plan_only: str | None,
    reference: str | None,
    runs: Sequence[str],
    plan: str | None,
    bootstrap: int,
    seed: int,
    all_participants: bool,
    latex: bool,
) -> str:
    """Run `bargain analyse` and say in one line what was written."""
    if (export is None) == (plan_only is None):
        raise AnalysisError("give an export (a folder or zip) to analyse, or --plan-only STUDY.yaml, not both")
    if plan_only is not None:
        written = write_plan(Path(plan_only), out, reference=reference, bootstrap=bootstrap, seed=seed)
        return f"analysis plan written to {written[0]} and {written[1].name}"
    if plan is not None and not Path(plan).is_file():
        raise AnalysisError(f"{plan}: no such plan file")
    analysis = analysis_of(
        read_export(Path(str(export))),
        reference=reference,
        runs=[Path(r) for r in runs],
        bootstrap=bootstrap,
        seed=seed,
        all_participants=all_participants,
        progress=True,
    )
    write_report(analysis, out, latex=latex, plan=Path(plan) if plan else None)
    games = analysis.numbers["sample"]["primary"]["games"]
    said = f"{games} finished games analysed" if games else "no finished game to analyse yet (the report says so)"
    return f"{said}; report written to {out / 'report.html'}"
