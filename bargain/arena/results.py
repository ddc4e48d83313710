"""The Results tab's tables and figure: the person's own games, and everyone's finished games per opponent and
condition with cluster-bootstrap intervals (read from the store; no Gradio)."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np
import pandas as pd

from bargain.arena.controller import Arena
from bargain.arena.views import money
from bargain.engine.trial import Condition

MINE = "Your games (newest first)"  # the tables' captions
EVERYONE = "Everyone's finished games on this server, per opponent and condition"
RESULTS_RESAMPLES = 2000  # cluster resamples behind the Results tab's intervals (seed 0: the same table each time)
NO_GAMES = pd.DataFrame({"results": ["No games yet"]})  # what a table without a game shows instead
# Each condition's colour in the figure, whichever conditions have games (colour-blind-safe, Okabe-Ito).
CONDITION_COLOURS = {
    Condition.FULL: "#0072B2",
    Condition.BUYER_UNAWARE: "#E69F00",
    Condition.SELLER_UNAWARE: "#009E73",
    Condition.BOTH_UNAWARE: "#CC79A7",
}


def my_games(arena: Arena, player: str | None) -> pd.DataFrame:
    """The person's own latest games, newest first."""
    games = arena.store.player_games(player) if player else pd.DataFrame()
    if games.empty:
        return pd.DataFrame(
            columns=["started", "opponent", "role", "condition", "status", "deal", "deal_price", "your_norm_utility"]
        )
    return games.assign(
        started=games["started"].astype(str).str[:19],
        opponent=opponents_named(arena, games["opponent"]),
        deal=games["deal"].map(lambda v: "" if pd.isna(v) else "yes" if v else "no"),  # a game under way: blank
        deal_price=games["deal_price"].map(lambda v: money(v) if pd.notna(v) else ""),
        your_norm_utility=games["your_norm_utility"].astype(float).round(3),
    )


# The other side is an agent or, where the opponent is "person", another person: the headers name neither.
SHORT_HEADERS = {
    "your_norm_utility": "you (norm.)",
    "agent_norm_utility": "other side (norm.)",
    "agent_misrepresentation_rate": "other side misstated (rate)",
    "deal_rate": "deal rate",
    "deal_price": "price",
}


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """A table as the page shows it: short headers in words, so that a phone shows most of its columns; a table
    without a row says "No games yet" rather than showing bare headers."""
    if table.empty:
        return NO_GAMES.copy()
    return table.rename(columns=lambda name: SHORT_HEADERS.get(name, name.replace("_", " ")))


def as_html(table: pd.DataFrame, caption: str) -> str:
    """A table as the page shows it (`readable`'s headers), in HTML under its caption: each cell carries its
    column's name (`data-label`), so that on a phone the page's style (bargain.web) stacks each row into a card of
    "name value" lines instead of cutting columns off; a blank for a missing number; every text escaped."""
    shown = readable(table)
    if table.empty:
        return f"<p class='results-caption'>{escape(caption)}</p><p>{escape(shown.iloc[0, 0])}</p>"
    labels = [escape(str(column)) for column in shown.columns]
    head = "".join(f"<th>{label}</th>" for label in labels)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td data-label="{label}">{"" if pd.isna(value) else escape(str(value))}</td>'
            for label, value in zip(labels, row)
        )
        + "</tr>"
        for row in shown.itertuples(index=False)
    )
    return f"<table><caption>{escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def per_arm(arena: Arena) -> pd.DataFrame:
    """Per opponent and condition (finished games): games, deal rate, mean normalised utility of the person (with
    its 95% interval, `your_low` to `your_high`) and of the agent, and how often the agent misstated a price limit
    in its favour (stored when each game ended). The interval is a cluster bootstrap's (bargain.analysis.bootstrap):
    one person's games are resampled together, since they are not independent; a cell with games of fewer than two
    people has none."""
    from bargain.analysis.bootstrap import cluster_bootstrap, interval

    table = arena.store.results_by_arm()
    if table.empty:  # no finished game: nothing to resample
        return table.assign(your_low=pd.Series(dtype=float), your_high=pd.Series(dtype=float))
    games = arena.store.result_utilities()
    cell = pd.MultiIndex.from_frame(table[["opponent", "condition"]]).get_indexer(
        pd.MultiIndex.from_frame(games[["opponent", "condition"]])
    )
    person = pd.factorize(games["person"])[0]
    draws = cluster_bootstrap(
        games["your_norm_utility"].to_numpy(float), cell, person, len(table), RESULTS_RESAMPLES, seed=0
    )
    low, high = interval(draws.draws[:, :, 0])
    people = pd.Series(person).groupby(cell).nunique().reindex(range(len(table)), fill_value=0).to_numpy()
    numbers = ["deal_rate", "your_norm_utility", "agent_norm_utility", "agent_misrepresentation_rate"]
    return table.assign(
        **{c: table[c].astype(float).round(3) for c in numbers},
        your_low=np.where(people > 1, low, np.nan).round(3),
        your_high=np.where(people > 1, high, np.nan).round(3),
        opponent=opponents_named(arena, table["opponent"]),
    )


def opponents_named(arena: Arena, arms: pd.Series) -> pd.Series:
    """Stored arm specs as people know the arms (a remote model without its URL)."""
    return arms.map(arena.names_of(arms))


def _intervals(axes, xs: list[float], rows: list[pd.Series]) -> None:
    """The cluster bootstrap's 95% intervals of the bars at `xs`: only where a cell has one (games of two people or
    more), so that a cell without one shows no error bar at all rather than one of length zero."""
    shown = [(x, r) for x, r in zip(xs, rows) if pd.notna(r["your_low"]) and pd.notna(r["your_high"])]
    if shown:
        axes.errorbar(
            [x for x, _ in shown],
            [r["your_norm_utility"] for _, r in shown],
            yerr=[
                [r["your_norm_utility"] - r["your_low"] for _, r in shown],
                [r["your_high"] - r["your_norm_utility"] for _, r in shown],
            ],
            fmt="none",
            ecolor="black",
            capsize=3,
        )


def results_figure(table: pd.DataFrame):
    """Grouped bars: per opponent, one bar per condition that has games (none where a cell has none), in that
    condition's own colour (CONDITION_COLOURS), the person's mean normalised utility with its 95% interval (where
    the cell has one) and the number of games; None with no game."""
    if table.empty:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    opponents = list(dict.fromkeys(table["opponent"]))
    conditions = [c.value for c in Condition if c.value in set(table["condition"])]
    width = 0.8 / len(conditions)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.6 * len(opponents) + 2), 4.2))
    for k, condition in enumerate(conditions):
        cells = table[table["condition"] == condition].set_index("opponent")
        xs = [i - 0.4 + width * (k + 0.5) for i, o in enumerate(opponents) if o in cells.index]
        rows = [cells.loc[o] for o in opponents if o in cells.index]
        means = [r["your_norm_utility"] for r in rows]
        bars = axes.bar(xs, means, width * 0.92, label=condition, color=CONDITION_COLOURS[Condition(condition)])
        _intervals(axes, xs, rows)
        for bar, row in zip(bars, rows):
            axes.annotate(
                f"n={int(row['games'])}",
                (bar.get_x() + bar.get_width() / 2, 0),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=7,
            )
    axes.set_xticks(range(len(opponents)), opponents, rotation=20, ha="right", fontsize=8)
    axes.axhline(0, color="black", linewidth=0.6)
    axes.set_ylabel("your normalised utility")
    figure.suptitle(
        "Your side's mean normalised utility, by opponent and condition\n(everyone's games; bars: 95% intervals)",
        fontsize=9,
    )
    # The legend below the axes: inside, it covered bars.
    figure.legend(
        *axes.get_legend_handles_labels(),
        loc="lower center",
        ncol=min(4, len(conditions)),
        fontsize=7,
        title="condition",
        title_fontsize=7,
        frameon=False,
    )
    figure.tight_layout(rect=(0, 0.12, 1, 1))
    plt.close(figure)
    return figure


@dataclass(frozen=True)
class Shown:
    """What the Results tab shows after one refresh: the person's own games (HTML), and where results are public,
    everyone's per opponent and condition (HTML) and their figure (None: not public, or no game)."""

    mine: str
    everyone: str | None = None
    figure: Any = None  # a matplotlib Figure


def shown(arena: Arena, player: str | None, public: bool) -> Shown:
    """The Results tab's refresh (bargain.web.arena_page, and its benchmark: benchmarks/results.py): everyone's table
    leaves out the columns that are one person's own."""
    mine = as_html(my_games(arena, player), MINE)
    if not public:
        return Shown(mine)
    table = per_arm(arena)
    return Shown(mine, as_html(table.drop(columns=["your_low", "your_high"]), EVERYONE), results_figure(table))
