"""`bargain analyse`: a study's results from its export, in one call each.

- `read_export(path)`: the export's folder or zip archive (bargain.study.analyse.exported);
- `analysis_of(export, ...)`: the analysis in memory, every number and table (bargain.study.analyse.analysis):
  the sample (sample), the models per outcome (outcomes, fits), the leaderboard (leaderboard), the cells beside
  the paper and the runs (beside);
- `write_report(analysis, out, ...)`: report.html, report.md, analysis.json, tables and figures (report,
  render, figures); with a plan (plan: `--plan-only` writes one from the study file), the deviations from it.

Why one command: one participant plays several games, so games are not independent, and the usual per-game means,
t-tests and bootstraps are wrong for this data; here every interval and test treats the participant (or the group
of participants who played each other) as the unit, as a careful statistician would, and says what it assumed.
"""

from bargain.study.analyse.analysis import Analysis, analysis_of
from bargain.study.analyse.exported import AnalysisError, Export, read_export
from bargain.study.analyse.report import write_report

__all__ = ["Analysis", "AnalysisError", "Export", "analysis_of", "read_export", "write_report"]
