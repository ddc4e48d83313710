"""Writing an analysis: report.html (one self-contained file, figures inline, readable on a phone: wide tables
scroll sideways), report.md, analysis.json, the tables (tables/NAME.csv, and .tex with `latex`) and the figures
(figures/NAME.png and .pdf).

The report is built once as a list of blocks (headings, paragraphs, lists, tables, figures) and rendered to both
Markdown and HTML, so that the two say the same. Every number in it is formatted by `number` from a number that
analysis.json holds (tests/test_study_analyse.py checks this for report.md), and analysis.json and the tables are
written with sorted keys and fixed row orders, so that the same analysis writes the same bytes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from bargain.study.analyse.analysis import Analysis
from bargain.study.analyse.figures import draw_all
from bargain.study.analyse.leaderboard import QUANTITIES
from bargain.study.analyse.outcomes import PRIMARY
from bargain.study.analyse.plan import deviations, read_plan, sha256
from bargain.study.analyse.render import Block, markdown, page

POINTS = "points"  # arena-score points: one decimal
COUNTS = {"n_games", "n_clusters", "resamples", "llm_n", "informative_clusters", "games", "clusters"}
P_VALUES = {"p", "p_holm"}
RANKS = {"rank", "rank_low", "rank_high"}
FIGURES = {
    "forest": "Contrasts with the reference arm, per condition and averaged, with 95% intervals",
    "interaction": "The primary outcome per arm and condition (estimated marginal means)",
    "leaderboard": "The leaderboard: each arm's mean with its cluster bootstrap interval",
    "beside_paper": "The participants' cells beside the LLMs' in the same seat",
}


def write_report(analysis: Analysis, out: Path, *, latex: bool = False, plan: Path | None = None) -> list[Path]:
    """Write the analysis into `out` (see the module's docstring), with the plan's SHA-256 and the deviations from
    it when given; returns the paths written."""
    out = Path(out)
    numbers = dict(analysis.numbers)
    if plan:
        numbers["plan_sha256"], numbers["deviations"] = sha256(plan), deviations(read_plan(plan), numbers)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    written = []
    for name, table in sorted(analysis.tables.items()):
        written.append(out / "tables" / f"{name}.csv")
        table.to_csv(written[-1], index=False, float_format="%.10g", lineterminator="\n")
        if latex:
            written.append(out / "tables" / f"{name}.tex")
            written[-1].write_text(table.to_latex(index=False, float_format="%.4g", na_rep="", escape=True))
    arms = [arm["key"] for arm in numbers["study"]["arms"]]
    figures = draw_all(analysis.tables, arms, out / "figures")
    written += [path for paths in figures.values() for path in paths]
    (out / "analysis.json").write_text(json.dumps(numbers, indent=1, sort_keys=True, allow_nan=False) + "\n")
    blocks = _blocks(numbers, analysis.tables, sorted(figures))
    (out / "report.md").write_text(markdown(blocks), encoding="utf-8")
    (out / "report.html").write_text(page(blocks, numbers["study"]["name"], out / "figures"), encoding="utf-8")
    return [*written, out / "analysis.json", out / "report.md", out / "report.html"]


def number(value: object, column: str = "") -> str:
    """A number as the report shows it: counts whole, p-values to 3 decimals (under 0.001 in scientific notation),
    ranks as they are, arena points to 1 decimal, other numbers to 3 decimals (1 from 100 on); a missing one as a
    dash."""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if not isinstance(value, float | np.floating):
        return "–" if value is None or value is pd.NA else str(value)
    x = float(value)
    if math.isnan(x):
        return "–"
    if column in COUNTS and x.is_integer():
        return str(int(x))
    if column in P_VALUES:
        return f"{x:.1e}" if x < 0.001 else f"{x:.3f}"
    if column in RANKS:
        return f"{x:g}"
    if column == POINTS:
        return f"{x:.1f}"
    return f"{x:.1f}" if abs(x) >= 100 else f"{x:.3f}"


def _interval(low: object, high: object, column: str = "") -> str:
    """An interval as [low, high], or a dash."""
    shown = number(low, column), number(high, column)
    return "–" if "–" in shown else f"[{shown[0]}, {shown[1]}]"


# --- the report's blocks ------------------------------------------------------------------------------------


def _blocks(numbers: dict, tables: dict[str, pd.DataFrame], figures: list[str]) -> list[Block]:
    """The whole report, top to bottom."""
    study, settings, sample = numbers["study"], numbers["settings"], numbers["sample"]["primary"]
    versions = ", ".join(map(str, study["versions"]))
    blocks = [
        Block("heading", f"Analysis of study {study['name']} (version {versions})", 1),
        Block(
            "items",
            items=(
                f"Design: {study['design']} subjects; reference arm: {settings['reference']}; conditions: "
                f"{', '.join(study['conditions'])}; roles: {', '.join(study['roles'])}.",
                f"Study settings read from {study['settings_from']}.",
                f"Intervals: {settings['interval_percent']}%; alpha {number(settings['alpha'])}; correction: Holm "
                f"within each outcome and model; cluster bootstrap with B = {settings['bootstrap']} resamples, "
                f"seed {settings['seed']}.",
                f"Analysis plan: sha256 `{numbers['plan_sha256']}`."
                if numbers["plan_sha256"]
                else "Analysis plan: none given (`--plan`).",
            ),
        ),
    ]
    blocks += _sample_blocks(numbers)
    if not sample["games"]:
        blocks.append(
            Block(
                "text",
                "The export holds no finished game of a participant in the sample: there is nothing to analyse yet.",
            )
        )
    else:
        blocks += _result_blocks(numbers, tables, figures)
    if numbers["deviations"] is not None:
        blocks += [
            Block("heading", "Deviations from the plan", 2),
            Block("items", items=tuple(numbers["deviations"]))
            if numbers["deviations"]
            else Block("text", "None: the analysis is the plan's."),
        ]
    blocks += _method_blocks(numbers)
    return blocks


def _sample_blocks(numbers: dict) -> list[Block]:
    """The sample and the arms."""
    blocks = [Block("heading", "Sample", 2)]
    for name, counts in numbers["sample"].items():
        label = "Primary sample" if name == "primary" else "All participants (sensitivity analysis)"
        blocks.append(
            Block(
                "text",
                f"{label}: {counts['participants']} participants, {counts['games']} finished games "
                f"({counts['rows']} rows: a game between two participants has one per side), {counts['clusters']} "
                f"clusters; {counts['excluded_left_out']} excluded participants left out; {counts['fallback_games']} "
                f"games played instead of a person arm; {counts['games_between_people']} games between two "
                f"participants; {counts['duplicate_moves_ignored']} duplicate moves ignored.",
            )
        )
    arms = pd.DataFrame(numbers["study"]["arms"], columns=["key", "spec", "label", "person"])
    blocks += [Block("heading", "Arms", 3), Block("table", table=_shown(arms.rename(columns={"person": "person arm"})))]
    return blocks


def _result_blocks(numbers: dict, tables: dict[str, pd.DataFrame], figures: list[str]) -> list[Block]:
    """The primary outcome, every contrast, the leaderboard, the paper beside, the models, the sensitivity."""
    contrasts = tables["contrasts"].assign(note=numbers["contrast_reasons"])
    cells, beside = tables["cells"], tables["beside_paper"]
    blocks = [
        Block("heading", f"Primary outcome: {PRIMARY}", 2),
        Block("text", next(m["description"] for m in numbers["models"] if m["outcome"] == PRIMARY).capitalize() + "."),
        Block("table", table=_contrasts_shown(contrasts[contrasts["outcome"] == PRIMARY])),
        Block("text", "Estimated marginal means per cell (equal weights over roles and games):"),
        Block("table", table=_cells_shown(cells[cells["outcome"] == PRIMARY])),
        *_figure("interaction", figures),
        Block("heading", "Contrasts: every outcome", 2),
        Block("table", table=_contrasts_shown(contrasts)),
        *_figure("forest", figures),
        Block("heading", "Leaderboard of arms", 2),
        Block(
            "text",
            "Each arm's mean, its (condition, role) cells weighted equally; the interval is the cluster bootstrap's; "
            "± its bounds' Monte Carlo errors. Rank 1 is the highest mean; the rank separates only arms whose "
            f"intervals do not overlap; the rank interval is the middle {numbers['settings']['interval_percent']}% "
            "of the bootstrap ranks.",
        ),
        *(
            block
            for quantity, rows in tables["leaderboard"].groupby("quantity", sort=False)
            for block in (
                Block("heading", QUANTITIES[quantity].capitalize(), 3),
                Block("table", table=_leaderboard_shown(rows)),
            )
        ),
        *_figure("leaderboard", figures),
        Block("heading", "Beside the paper and the runs", 2),
        Block(
            "text",
            "Each cell of participants beside the LLM in the same seat against the same arm: the paper's "
            "LLM-vs-LLM cell (the base model in the participant's seat) and the runs given; difference = human "
            "minus LLM. A cell whose rules differ says how. Shown: every cell's participant utility, and each "
            "other quantity where an LLM's is known (tables/beside_paper.csv has them all).",
        ),
        Block("table", table=_beside_shown(beside[(beside["quantity"] == PRIMARY) | beside["llm"].notna()])),
        *_figure("beside_paper", figures),
        Block("heading", "Models", 2),
        Block("table", table=_shown(tables["variance_components"])),
    ]
    for model in numbers["models"]:
        blocks.append(Block("heading", f"{model['outcome']}: {model['model']}", 3))
        blocks.append(
            Block(
                "items",
                items=tuple(
                    filter(
                        None,
                        [
                            f"Formula: `{model['formula']}`; scale: {model['scale']}.",
                            f"Not estimated: {model['reason']}." if model["reason"] else "",
                            f"Dropped: {'; '.join(model['dropped'])}." if model["dropped"] else "",
                            f"Warnings: {'; '.join(model['warnings'])}." if model["warnings"] else "",
                        ],
                    )
                ),
            )
        )
        coefficients = tables.get(f"models_{model['outcome']}")
        if model["fitted"] and coefficients is not None:
            blocks.append(Block("table", table=_shown(coefficients[coefficients["model"] == model["model"]])))
    if "contrasts_all_participants" in tables:
        blocks += [
            Block("heading", "Sensitivity: all participants", 2),
            Block("text", "The same contrasts with the excluded participants included."),
            Block("table", table=_contrasts_shown(tables["contrasts_all_participants"])),
        ]
    return blocks


def _method_blocks(numbers: dict) -> list[Block]:
    """How the numbers were made, and the inputs they were made from."""
    settings = numbers["settings"]
    return [
        Block("heading", "Method", 2),
        Block(
            "items",
            items=(
                "Unit of independence: the participant; where participants played each other, the group of "
                "participants linked by their games (a cluster). Every interval and test accounts for it.",
                "Continuous outcomes: M1, a linear mixed model with a random intercept per cluster (REML, as lme4). "
                "Binary outcomes: M2, GEE with an exchangeable working correlation and robust errors, reported as "
                "probabilities and risk differences. Within designs: M3, a conditional logit within clusters, as "
                "arena scores.",
                "Cells are estimated marginal means (equal weights over roles and games); contrasts are each arm "
                "minus the reference arm per condition and averaged over conditions; p-values are adjusted by Holm "
                "within each outcome and model.",
                f"A cell seen in fewer than {settings['min_clusters']} clusters is not estimable; a term the data "
                "cannot carry is dropped and named.",
                f"The leaderboard and the human cells beside the paper come from one cluster bootstrap (B = "
                f"{settings['bootstrap']}, seed {settings['seed']}): clusters are resampled with all their games.",
            ),
        ),
        Block("heading", "Inputs and software", 3),
        Block(
            "items",
            items=(
                *(f"`{name}`: sha256 `{digest}`" for name, digest in sorted(numbers["inputs"].items())),
                "bargain "
                + numbers["bargain"]
                + "; "
                + ", ".join(f"{name} {version}" for name, version in numbers["packages"].items()),
            ),
        ),
    ]


def _figure(name: str, figures: list[str]) -> list[Block]:
    """A figure's block, if it was drawn."""
    return [Block("figure", text=name, items=(FIGURES[name],))] if name in figures else []


# --- tables as shown ------------------------------------------------------------------------------------------


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    """A table's numbers as text."""
    return pd.DataFrame({c: [number(v, c) if not isinstance(v, str) else v for v in table[c]] for c in table.columns})


def _contrasts_shown(table: pd.DataFrame) -> pd.DataFrame:
    """Contrasts: estimate, interval, p-values, games, clusters, and why one is missing (M3's in arena points)."""
    kind = [POINTS if model == "M3" else "" for model in table["model"]]
    shown = pd.DataFrame(
        {
            "outcome": table["outcome"],
            "model": table["model"],
            "contrast": [f"{a} - {r}" for a, r in zip(table["arm"], table["reference"])],
            "condition": table["condition"],
            "estimate": [number(v, k) for v, k in zip(table["estimate"], kind)],
            "95% interval": [_interval(lo, hi, k) for lo, hi, k in zip(table["ci_low"], table["ci_high"], kind)],
            "p": [number(v, "p") for v in table["p"]],
            "p (Holm)": [number(v, "p_holm") for v in table["p_holm"]],
            "games": [number(v, "n_games") for v in table["n_games"]],
            "clusters": [number(v, "n_clusters") for v in table["n_clusters"]],
        }
    )
    if "note" in table:
        shown["note"] = list(table["note"])
    return shown


def _cells_shown(table: pd.DataFrame) -> pd.DataFrame:
    """Cells: arm, condition, mean, interval, games, clusters, why one is missing."""
    return pd.DataFrame(
        {
            "arm": table["arm"],
            "condition": table["condition"],
            "mean": [number(v) for v in table["estimate"]],
            "95% interval": [_interval(lo, hi) for lo, hi in zip(table["ci_low"], table["ci_high"])],
            "games": [number(v, "n_games") for v in table["n_games"]],
            "clusters": [number(v, "n_clusters") for v in table["n_clusters"]],
            "note": table["reason"],
        }
    )


def _leaderboard_shown(table: pd.DataFrame) -> pd.DataFrame:
    """One quantity of the leaderboard (a narrow table, for a phone)."""
    return pd.DataFrame(
        {
            "arm": table["arm"],
            "mean": [number(v) for v in table["estimate"]],
            "95% interval": [_interval(lo, hi) for lo, hi in zip(table["ci_low"], table["ci_high"])],
            "rank": [number(v, "rank") for v in table["rank"]],
            "rank interval": [
                f"{number(lo, 'rank')} to {number(hi, 'rank')}" for lo, hi in zip(table["rank_low"], table["rank_high"])
            ],
            "Monte Carlo error": [
                f"±{number(lo)} / ±{number(hi)}" for lo, hi in zip(table["ci_low_mcse"], table["ci_high_mcse"])
            ],
            "games": [number(v, "n_games") for v in table["n_games"]],
            "clusters": [number(v, "n_clusters") for v in table["n_clusters"]],
        }
    )


def _beside_shown(table: pd.DataFrame) -> pd.DataFrame:
    """Human cells beside the LLMs'."""
    return pd.DataFrame(
        {
            "cell": [f"{a}, {c}, {r}" for a, c, r in zip(table["arm"], table["condition"], table["human_role"])],
            "quantity": table["quantity"],
            "participants": [number(v) for v in table["human"]],
            "95% interval": [_interval(lo, hi) for lo, hi in zip(table["human_ci_low"], table["human_ci_high"])],
            "games": [number(v, "n_games") for v in table["n_games"]],
            "LLM": [f"{s} ({c})" if s else "–" for s, c in zip(table["source"], table["counterpart"])],
            "LLM mean": [number(v) for v in table["llm"]],
            "LLM games": [number(v, "llm_n") for v in table["llm_n"]],
            "human - LLM": [number(v) for v in table["difference"]],
            "its 95% interval": [_interval(lo, hi) for lo, hi in zip(table["ci_low"], table["ci_high"])],
            "differs": table["differs"],
        }
    )
