"""The analysis's figures, each drawn from its tables and written as PNG (inlined in report.html) and PDF (for a
paper): the forest plot of contrasts, the arm x condition interaction of the primary outcome, the leaderboard with
its intervals, and the participants' cells beside the LLMs'.

Files only (matplotlib's Agg backend), no date in them, so that the same tables draw the same files. Figures are
narrow enough to read on a phone's screen and keep their labels in words.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from bargain.study.analyse.leaderboard import QUANTITIES
from bargain.study.analyse.outcomes import PRIMARY, SCALES

WIDTH = 6.0  # inches: 660 pixels, shown on a phone at about half size, so that labels stay readable there
DPI = 110
FONT = 9  # points, labels and titles


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def draw_all(tables: dict[str, pd.DataFrame], arms: list[str], folder: Path) -> dict[str, list[Path]]:
    """Every figure whose table has rows, by name: forest, interaction, leaderboard, beside_paper."""
    folder.mkdir(parents=True, exist_ok=True)
    drawers: dict[str, tuple[Callable, pd.DataFrame]] = {
        "forest": (_forest, tables["contrasts"]),
        "interaction": (_interaction, tables["cells"]),
        "leaderboard": (_leaderboard, tables["leaderboard"]),
        "beside_paper": (_beside, tables["beside_paper"]),
    }
    written = {}
    for name, (draw, table) in drawers.items():
        figure = draw(table, arms) if not table.empty else None
        if figure is not None:
            written[name] = _save(figure, folder / name)
    return written


def _save(figure, stem: Path) -> list[Path]:
    """The figure as PNG and PDF, without dates."""
    plt = _pyplot()
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    figure.savefig(paths[0], dpi=DPI, metadata={"Software": None})
    figure.savefig(paths[1], metadata={"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None})
    plt.close(figure)
    return paths


def _forest(contrasts: pd.DataFrame, arms: list[str]):
    """Each outcome's contrasts (arm - reference, per condition and averaged) with their 95% intervals, one panel
    per outcome and model, since their scales differ."""
    shown = contrasts.dropna(subset=["estimate"])
    groups = list(shown.groupby(["outcome", "model"], sort=False))
    if not groups:
        return None
    plt = _pyplot()
    heights = [len(g) + 1.5 for _, g in groups]
    figure, axes = plt.subplots(
        len(groups),
        1,
        figsize=(WIDTH, 0.32 * sum(heights) + 0.5),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for ax, ((outcome, model), rows) in zip(axes[:, 0], groups):
        y = np.arange(len(rows))[::-1]
        ax.errorbar(
            rows["estimate"],
            y,
            xerr=[rows["estimate"] - rows["ci_low"], rows["ci_high"] - rows["estimate"]],
            fmt="o",
            color="black",
            markersize=4,
            capsize=2,
        )
        ax.axvline(0, color="grey", linewidth=0.8)
        ax.set_yticks(y, [f"{a} - {r}, {c}" for a, r, c in zip(rows["arm"], rows["reference"], rows["condition"])])
        ax.tick_params(labelsize=FONT)
        ax.set_title(f"{outcome} ({model}, {SCALES[model]})", fontsize=FONT, loc="left")
    figure.tight_layout()
    return figure


def _interaction(cells: pd.DataFrame, arms: list[str]):
    """The primary outcome's estimated marginal mean per arm (a line each) across conditions, 95% intervals."""
    rows = cells[(cells["outcome"] == PRIMARY)].dropna(subset=["estimate"])
    if rows.empty:
        return None
    plt = _pyplot()
    conditions = list(dict.fromkeys(cells.loc[cells["outcome"] == PRIMARY, "condition"]))
    figure, ax = plt.subplots(figsize=(WIDTH, 3.6))
    offsets = np.linspace(-0.12, 0.12, max(len(arms), 1))
    for offset, arm in zip(offsets, arms):
        own = rows[rows["arm"] == arm].set_index("condition").reindex(conditions)
        x = np.arange(len(conditions)) + offset
        ax.errorbar(
            x,
            own["estimate"],
            yerr=[own["estimate"] - own["ci_low"], own["ci_high"] - own["estimate"]],
            marker="o",
            capsize=3,
            label=arm,
        )
    ax.set_xticks(range(len(conditions)), conditions, fontsize=FONT)
    ax.set_ylabel(f"{PRIMARY} (estimated marginal mean)", fontsize=FONT)
    ax.legend(title="arm", fontsize=FONT, title_fontsize=FONT)
    figure.tight_layout()
    return figure


def _leaderboard(board: pd.DataFrame, arms: list[str]):
    """Each quantity's arm means with their bootstrap intervals, one panel per quantity."""
    quantities = [q for q in QUANTITIES if q in set(board["quantity"])]
    plt = _pyplot()
    figure, axes = plt.subplots(
        len(quantities), 1, figsize=(WIDTH, 1.1 + 0.45 * len(arms) * len(quantities)), squeeze=False
    )
    for ax, quantity in zip(axes[:, 0], quantities):
        rows = board[board["quantity"] == quantity].set_index("arm").reindex(arms)
        y = np.arange(len(arms))[::-1]
        ax.errorbar(
            rows["estimate"],
            y,
            xerr=[rows["estimate"] - rows["ci_low"], rows["ci_high"] - rows["estimate"]],
            fmt="s",
            color="tab:blue",
            capsize=3,
        )
        ax.set_yticks(y, [f"{arm} (rank {rank:g})" if rank == rank else arm for arm, rank in zip(arms, rows["rank"])])
        ax.tick_params(labelsize=FONT)
        ax.set_title(QUANTITIES[quantity], fontsize=FONT, loc="left")
    figure.tight_layout()
    return figure


def _beside(beside: pd.DataFrame, arms: list[str]):
    """The participant's utility per (arm, condition, role) cell, with its interval, and each LLM's in the same
    seat."""
    rows = beside[beside["quantity"] == PRIMARY]
    cells = rows.drop_duplicates(["arm", "condition", "human_role"])
    if cells.empty:
        return None
    plt = _pyplot()
    figure, ax = plt.subplots(figsize=(WIDTH, 1.0 + 0.36 * len(cells)))
    y = {key: i for i, key in enumerate(zip(cells["arm"], cells["condition"], cells["human_role"]))}
    top = len(y) - 1
    ax.errorbar(
        cells["human"],
        [top - i for i in range(len(cells))],
        xerr=[cells["human"] - cells["human_ci_low"], cells["human_ci_high"] - cells["human"]],
        fmt="o",
        color="black",
        capsize=2,
        label="participants",
    )
    matched = rows.dropna(subset=["llm"])
    for source, own in matched.groupby("source", sort=True):
        ax.plot(
            own["llm"],
            [top - y[key] for key in zip(own["arm"], own["condition"], own["human_role"])],
            "x",
            markersize=7,
            label=source,
        )
    ax.set_yticks([top - i for i in y.values()], [f"{a}, {c}, {r}" for a, c, r in y])
    ax.tick_params(labelsize=FONT)
    ax.set_xlabel(f"{PRIMARY}: participant vs the LLM in the same seat", fontsize=FONT)
    ax.legend(fontsize=FONT)
    figure.tight_layout()
    return figure
