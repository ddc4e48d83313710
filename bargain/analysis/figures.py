"""PNG figures of a run: outcomes by condition, and deal prices against the Nash bargaining
solution."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bargain.engine.trial import Condition


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def outcomes_by_condition(
    table: pd.DataFrame, path: Path, title: str, paper: pd.DataFrame | None = None
) -> Path:
    """Deal rate and each side's mean normalised utility per condition (the paper's beside ours when
    given)."""
    plt = _pyplot()
    cells = table[table["transparency"] != "ALL"].set_index("transparency")
    conditions = [c.value for c in Condition if c.value in cells.index]
    quantities = ("deal_rate", "buyer_norm_utility", "seller_norm_utility")
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=False)
    for ax, quantity in zip(axes, quantities):
        x = range(len(conditions))
        ax.bar(
            [i - 0.2 for i in x] if paper is not None else list(x),
            [cells.loc[c, quantity] for c in conditions],
            width=0.4 if paper is not None else 0.6,
            label="this run",
        )
        if paper is not None:
            reference = paper.set_index("transparency")
            ax.bar(
                [i + 0.2 for i in x],
                [reference[f"paper_{quantity}"].get(c) for c in conditions],
                width=0.4,
                label="paper",
            )
            ax.legend(fontsize=8)
        ax.set_xticks(list(x), [c.replace("_", "\n") for c in conditions], fontsize=8)
        ax.set_title(quantity.replace("_", " "))
        ax.axhline(0, color="black", linewidth=0.5)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def deal_price_vs_nbs(trials: pd.DataFrame, path: Path, title: str) -> Path:
    """Each deal's price against the true NBS price (v_B + v_S) / 2, coloured by condition."""
    plt = _pyplot()
    deals = trials[trials["deal"] == "deal"]
    fig, ax = plt.subplots(figsize=(5.5, 5))
    for condition in Condition:
        subset = deals[deals["transparency"] == condition.value]
        if len(subset):
            ax.scatter(
                subset["true_nbs_price"],
                subset["deal_price"],
                s=12,
                alpha=0.7,
                label=condition.value,
            )
    if len(deals):
        low = min(deals["true_nbs_price"].min(), deals["deal_price"].min())
        high = max(deals["true_nbs_price"].max(), deals["deal_price"].max())
        ax.plot([low, high], [low, high], color="black", linewidth=0.8, label="deal at NBS")
        ax.legend(fontsize=8)
    ax.set_xlabel("NBS price (v_B + v_S) / 2")
    ax.set_ylabel("deal price")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
