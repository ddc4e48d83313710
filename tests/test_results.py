"""The Results tab's tables and figure (bargain.arena.results) over a small store of finished games, no browser."""

from __future__ import annotations

from html import escape

import pandas as pd
import pytest
from matplotlib.colors import to_hex
from matplotlib.container import ErrorbarContainer

from bargain.arena import PERSON
from bargain.arena.controller import Arena
from bargain.arena.results import (
    CONDITION_COLOURS,
    EVERYONE,
    MINE,
    as_html,
    my_games,
    per_arm,
    readable,
    results_figure,
    shown,
)
from bargain.engine.trial import Condition
from bargain.records.store import Store
from benchmarks.results import finished_row, write_rows


@pytest.fixture
def store(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'results.db'}")
    yield store
    store.engine.dispose()


def games(store: Store, *cells: tuple[str, str, str, bool]) -> Arena:
    """Finished games, one per (player, arm, condition, deal), in the store; the arena over it."""
    write_rows(
        store,
        [
            finished_row(
                i,
                player=player,
                arm=arm,
                condition=condition,
                deal=deal,
                deal_price=4.0 if deal else None,
                buyer_norm_utility=0.1 * (i + 1) if deal else 0.0,
                seller_norm_utility=0.5,
                agent_misstated=False,
            )
            for i, (player, arm, condition, deal) in enumerate(cells)
        ],
    )
    return Arena(store, None)


def test_each_condition_keeps_its_colour_whichever_conditions_have_games(store):
    arena = games(store, ("p0", "tactic:linear", "seller_unaware", True), ("p1", "tactic:linear", "both_unaware", True))
    figure = results_figure(per_arm(arena))
    colours = {to_hex(bar.get_facecolor()) for bar in figure.axes[0].patches}
    assert colours == {
        CONDITION_COLOURS[Condition.SELLER_UNAWARE].lower(),
        CONDITION_COLOURS[Condition.BOTH_UNAWARE].lower(),
    }
    assert len(set(CONDITION_COLOURS.values())) == len(Condition)


def test_a_cell_of_one_game_or_one_person_draws_no_interval(store):
    arena = games(
        store,
        ("p0", "tactic:linear", "full", True),  # one game
        *[("same", "tactic:boulware", "full", True)] * 3,  # one person, three games
        ("p0", "arm:base", "full", True),
        ("p1", "arm:base", "full", True),  # two people: an interval
    )
    table = per_arm(arena)
    assert table["your_low"].notna().sum() == 1
    axes = results_figure(table).axes[0]
    drawn = [c for c in axes.containers if isinstance(c, ErrorbarContainer)]
    assert len(drawn) == 1 and len(drawn[0].lines[2][0].get_segments()) == 1  # one interval, at arm:base's bar


def test_games_against_a_person_are_headed_as_the_other_side(store):
    arena = games(store, ("p0", PERSON, "full", True), ("p1", "tactic:linear", "full", False))
    headers = " ".join(readable(per_arm(arena)).columns)
    assert "agent" not in headers and "other side (norm.)" in headers and "other side misstated" in headers
    assert list(per_arm(arena)["opponent"]) == [PERSON, "tactic:linear"]


def test_a_games_deal_is_yes_or_no_and_per_arm_deals_a_rate(store):
    arena = games(store, ("p0", "tactic:linear", "full", True), ("p0", "tactic:linear", "full", False))
    assert sorted(readable(my_games(arena, "p0"))["deal"]) == ["no", "yes"]
    rates = readable(per_arm(arena))["deal rate"]
    assert list(rates) == [0.5]


def test_no_games_yet_rather_than_empty_tables_and_no_figure(store):
    arena = Arena(store, None)
    for table in (readable(my_games(arena, "p0")), readable(per_arm(arena))):
        assert table.equals(pd.DataFrame({"results": ["No games yet"]}))
    assert results_figure(per_arm(arena)) is None


def test_a_table_in_html_labels_every_cell_with_its_column_and_escapes_every_text(store):
    """On a phone each row is a card of "column value" lines, made from each cell's data-label (bargain.web)."""
    arena = games(store, ("p0", "tactic:linear", "full", True), ("p1", "tactic:linear", "full", False))
    html = as_html(per_arm(arena).drop(columns=["your_low", "your_high"]), "Everyone's <games>")
    assert html.count("<tr>") == 2 and "<caption>Everyone&#x27;s &lt;games&gt;</caption>" in html  # head, one row
    assert '<td data-label="deal rate">0.5</td>' in html and '<td data-label="opponent">tactic:linear</td>' in html
    hostile = pd.DataFrame({"opponent": ['<img src=x onerror="alert(1)">'], "deal_rate": [float("nan")]})
    html = as_html(hostile, "t")
    assert "<img" not in html and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert '<td data-label="deal rate"></td>' in html  # a missing number is a blank
    empty = as_html(my_games(arena, "nobody"), "Your games")
    assert "<table" not in empty and "No games yet" in empty


def test_a_refresh_shows_everyones_table_without_ones_own_interval_and_only_where_results_are_public(store):
    arena = games(store, ("p0", "tactic:linear", "full", True), ("p1", "tactic:linear", "full", False))
    private = shown(arena, "p0", public=False)
    assert (private.everyone, private.figure) == (None, None) and escape(MINE) in private.mine
    public = shown(arena, "p0", public=True)
    assert public.mine == private.mine and escape(EVERYONE) in public.everyone and public.figure is not None
    assert 'data-label="your low"' not in public.everyone and 'data-label="deal rate"' in public.everyone
