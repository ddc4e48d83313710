"""The arena's page as a person meets it, in headless Chromium: errors said plainly on every path, the move
shown while the other side thinks, a finished game kept across a reload, a new game only after confirming,
prices with two decimals, the last round announced, and the Results tab."""

from __future__ import annotations

import asyncio
import re
import threading

import pandas as pd
import pytest
from arena_helpers import Slow, a_view, browser_page, keep_screenshot, launch, serve

from bargain import app as arena_app
from bargain.agents.backends import Backends
from bargain.arena.controller import Arena, Setup
from bargain.arena.results import per_arm, results_figure
from bargain.engine.trial import Role
from bargain.records.store import Store
from bargain.web.arena_page import ArenaPage, Options
from bargain.web.panel import round_markdown

GRADIO_INTERNALS = ("didn't return enough output values", "Traceback", "Error:")


def open_setup(page):
    """Open the setup (open on a fresh page, closed while a game is shown) unless it is open: once the page shows
    its Start button or a game, it is settled."""
    start = page.get_by_role("button", name="Start game")
    start.or_(page.get_by_text(re.compile(r"Round \d+ of \d+|Game over"))).first.wait_for(timeout=20000)
    if not start.is_visible():
        page.get_by_text("Game setup").click()


def start_game(page, opponent: str | None = None, sequential: bool = False, wait: str = "Round 1 of 4"):
    open_setup(page)
    if opponent:
        page.get_by_label("Opponent").click()
        page.get_by_role("option", name=opponent).click()
    if sequential:
        page.get_by_role("radio", name="sequential").check()
    page.get_by_role("button", name="Start game").click()
    page.wait_for_selector(f"text={wait}", timeout=20000)


def offer(page, price: str, message: str = ""):
    page.get_by_role("textbox", name="Your message (optional)").fill(message)
    page.get_by_role("textbox", name="Price").fill(price)
    page.get_by_role("button", name="Offer", exact=True).click()


def offer_again_until(page, price: str, shown: str, tries: int = 4) -> None:
    """Offer `price` until `shown` appears, as a person clicks again when nothing happens: a click made right after
    a refusal, while its event is still finishing (under load), is dropped by Gradio (`trigger_mode="once"`) and
    never reaches the server. A second click that does reach it after the first was played is refused by round."""
    for _ in range(tries - 1):
        offer(page, price)
        try:
            page.wait_for_selector(f"text={shown}", timeout=5000)
            return
        except Exception:
            continue
    offer(page, price)
    page.wait_for_selector(f"text={shown}", timeout=20000)


def plain_page(page) -> str:
    body = page.inner_text("body")
    assert not any(text in body for text in GRADIO_INTERNALS), body
    return body


@pytest.fixture
def server(tmp_path):
    running = launch(tmp_path / "arena.db")
    yield running
    running.demo.close()


@pytest.mark.slow
def test_every_error_path_of_the_page_says_what_is_wrong_plainly(tmp_path):
    running = launch(tmp_path / "arena.db", "--games-per-hour", "3")
    try:
        with browser_page(running.url) as page:
            # A model arm with no backend: refused at start, in the page's own words.
            page.get_by_label("Opponent").click()
            page.get_by_role("option", name="arm:base (unavailable)").click()
            page.get_by_role("button", name="Start game").click()
            page.wait_for_selector("text=started without a model backend", timeout=20000)
            plain_page(page)
            # A price that is not one, and one that is absurd.
            start_game(page, "tactic:hardliner")
            offer(page, "1,2,3")
            page.wait_for_selector("text=is not a price", timeout=20000)
            offer_again_until(page, "99999", "far more than anything")  # right after a refusal
            plain_page(page)
            # (A database locked past its busy timeout pauses the game: tests/test_arena_adversarial.py, in process.)
            offer_again_until(page, "0.01", "Round 2 of 4")  # right after a refusal
            # Too many games (three an hour here, the refused start above included): refused with how long to
            # wait, and the game in progress goes on.
            for shown in ("Round 1 of 4", "Too many games started"):
                open_setup(page)
                page.get_by_role("button", name="Start game").click()
                page.get_by_role("button", name="Leave it and start a new game").click()
                page.wait_for_selector(f"text={shown}", timeout=20000)
            plain_page(page)
    finally:
        running.demo.close()


@pytest.mark.slow
def test_the_persons_move_shows_at_once_while_the_other_side_thinks(tmp_path):
    answer = threading.Event()  # the model thinks until the test has seen the page meanwhile
    arena = Arena(Store(f"sqlite:///{tmp_path / 'a.db'}"), Backends(Slow(gate=answer)))
    running = serve(ArenaPage(arena, Options({s: True for s in arena.arms}, browser_secret="k")).build().queue(), arena)
    try:
        with browser_page(running.url) as page:
            for sequential in (False, True):
                answer.clear()
                start_game(page, "arm:base", sequential=sequential)
                offer(page, "1.00", f"my move {sequential}")
                page.wait_for_selector("text=the other side is thinking", timeout=10000)
                body = page.inner_text("body")
                assert f"my move {sequential}" in body and "offers 1.00" in body  # shown before the agent answers
                assert not page.locator(".pending, .generating").is_visible()  # the page is not greyed out
                answer.set()
                page.wait_for_selector(f"text=Round {3 if sequential else 2} of 4", timeout=20000)  # the agent moved
                page.wait_for_timeout(300)
                assert "thinking" not in page.inner_text("body")
                page.get_by_role("button", name="Walk away").click()
                page.wait_for_selector("text=Game over", timeout=20000)
    finally:
        running.demo.close()


@pytest.mark.slow
def test_a_finished_game_stays_after_a_reload_and_a_new_one_needs_confirming(server, tmp_path):
    with browser_page(server.url) as page:
        start_game(page, "tactic:hardliner")
        offer(page, "0.01")
        page.wait_for_selector("text=Round 2 of 4", timeout=20000)
        assert "offers 0.01" in page.inner_text("body")  # two decimals
        # Starting again mid-game asks first, where the person clicked; keeping the game changes nothing.
        open_setup(page)
        page.get_by_role("button", name="Start game").click()
        asked = page.get_by_role("button", name="Keep playing this game")
        asked.wait_for(timeout=10000)
        below = page.get_by_role("button", name="Start game").bounding_box()
        box = asked.bounding_box()
        assert 0 < box["y"] - below["y"] < 250  # right under the Start button, not at the bottom of the page
        asked.click()
        page.wait_for_timeout(500)
        assert "Round 2 of 4" in page.inner_text("body")
        store = Store(f"sqlite:///{server.db}")
        (first,) = store.games_frame()["id"]
        # Leaving it records it as abandoned by the person.
        open_setup(page)
        page.get_by_role("button", name="Start game").click()
        page.get_by_role("button", name="Leave it and start a new game").click()
        page.wait_for_selector("text=Round 1 of 4", timeout=20000)
        row = store.game(first)
        assert row["status"] == "abandoned" and row["abandoned_by"] == "person"
        page.get_by_role("button", name="Walk away").click()
        page.wait_for_selector("text=Debrief", timeout=20000)
        page.reload()
        page.wait_for_selector("text=Debrief", timeout=20000)  # the outcome and debrief are still shown
        body = page.inner_text("body")
        assert "Game over" in body and "No deal" in body and "had a reservation price of" in body
        assert "Play again" in body
        shot = tmp_path / "arena.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        keep_screenshot(shot)
        # The Results tab is filled when it opens; on a phone its tables are cards, nothing cut off or sideways.
        page.get_by_role("tab", name="Results").click()
        page.locator("table").filter(has_text="tactic:hardliner").first.wait_for(timeout=20000)
        page.set_viewport_size({"width": 390, "height": 900})
        cell = page.locator(".results-table td[data-label='opponent']").filter(has_text="tactic:hardliner").first
        assert cell.evaluate("e => getComputedStyle(e, '::before').content") == '"opponent"'  # its column's name
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert (
            page.evaluate(
                "() => [...document.querySelectorAll('.results-table td')].filter("
                "e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > 390).length"
            )
            == 0
        )


@pytest.mark.slow
def test_the_results_tab_can_keep_everyones_games_private(tmp_path):
    running = launch(tmp_path / "arena.db", "--no-public-results")
    try:
        with browser_page(running.url) as page:
            start_game(page)
            page.get_by_role("button", name="Walk away").click()
            page.wait_for_selector("text=Debrief", timeout=20000)
            page.get_by_role("tab", name="Results").click()
            page.locator("table").filter(has_text="tactic:linear").first.wait_for(timeout=20000)
            assert "Everyone's finished games" not in page.inner_text("body")
    finally:
        running.demo.close()


def test_rounds_left_and_the_last_move_are_announced():
    def view(mode, round_, your_turn=True):
        return a_view(mode=mode, round=round_, max_rounds=4, your_turn=your_turn)

    assert "4 rounds left" in round_markdown(view("simultaneous", 1))
    assert "last round" in round_markdown(view("simultaneous", 4)).lower()
    assert "do not cross now" in round_markdown(view("simultaneous", 4))
    assert "Your last offer" in round_markdown(view("sequential", 3))
    assert "Last move of the game" in round_markdown(view("sequential", 4))
    assert "Last move" not in round_markdown(view("sequential", 2))
    assert "thinking... 3 s" in round_markdown(view("sequential", 2, False), thinking_s=3.2)


def test_results_are_grouped_means_with_cluster_intervals_and_no_empty_cells(tmp_path):
    """A cell's interval is the cluster bootstrap's, the person its unit: three games of one person give no interval
    (one person), three people's games one that holds their mean, as wide as the spread between them allows."""
    from bargain.engine.trial import Condition

    async def scenario():
        arena = Arena(Store(f"sqlite:///{tmp_path / 'a.db'}"), Backends())
        for arm, condition, role, player, share in [
            *[("tactic:linear", "full", Role.BUYER, f"p{i}", 0.2 * i) for i in range(3)],  # three people
            *[("tactic:linear", "both_unaware", Role.SELLER, "same", 1.0)] * 3,  # one person, three games
            ("tactic:hardliner", "full", Role.BUYER, "p0", 1.0),
        ]:
            view = await arena.start(Setup(role=role, arm=arm, condition=Condition(condition), rounds=1), player)
            known = view.their_price or view.your_price  # full: the seller's price, told; a bid above it
            await arena.move(view.game_id, 1, "OFFER", f"{max(view.your_price, known) * (1 + share):.2f}", "")
        return arena

    arena = asyncio.run(scenario())
    table = per_arm(arena)
    games = arena.store.games_frame()
    cell = games[(games["arm"] == "tactic:linear") & (games["condition"] == "full")]
    utilities = cell["buyer_norm_utility"].astype(float)
    row = table[(table["opponent"] == "tactic:linear") & (table["condition"] == "full")].iloc[0]
    assert row["games"] == 3 and row["your_norm_utility"] == pytest.approx(utilities.mean(), abs=1e-3)
    assert utilities.min() - 1e-3 <= row["your_low"] <= row["your_norm_utility"] <= row["your_high"]
    assert row["your_high"] <= utilities.max() + 1e-3 and row["your_high"] > row["your_low"]
    one_person = table[table["condition"] == "both_unaware"].iloc[0]
    assert one_person["games"] == 3 and pd.isna(one_person["your_low"]) and pd.isna(one_person["your_high"])
    assert pd.isna(table[table["games"] == 1]["your_low"]).all()  # one game: no interval
    assert per_arm(arena).equals(table)  # the same resamples each time
    figure = results_figure(table)
    bars = [p for p in figure.axes[0].patches]
    assert len(bars) == len(table) == 3  # one bar per cell with games: grouped, not stacked, none for empty cells
    assert all(bar.get_height() <= 1 for bar in bars)
    assert {t.get_text() for t in figure.axes[0].texts} >= {"n=3", "n=1"}
    assert results_figure(table.iloc[0:0]) is None


def test_the_browser_secret_is_kept_beside_the_database(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'elsewhere' / 'x.db'}"
    (tmp_path / "elsewhere").mkdir()
    key = arena_app.browser_secret(None, url)
    assert (tmp_path / "elsewhere" / ".browser_secret").read_text().strip() == key
    assert (tmp_path / "elsewhere" / ".browser_secret").stat().st_mode & 0o777 == 0o600  # the owner's only
    assert not (tmp_path / "data").exists()
    assert arena_app.browser_secret(None, url) == key  # the same across restarts
    monkeypatch.setenv("BARGAIN_DATA_DIR", str(tmp_path / "d"))
    other = arena_app.browser_secret(None, "postgresql+psycopg://u:p@h/db")
    assert (tmp_path / "d" / ".browser_secret").read_text().strip() == other


def test_a_debrief_reads_on_a_phone_and_cuts_a_raw_reply_short():
    """An unreadable model reply is kept whole in the record; the debrief shows its start, in a list (no table
    columns to squeeze on a 390-px screen), and a move not made in time says so."""
    from bargain.web.panel import STRATEGY_SHOWN, chat_messages, strategy_markdown

    raw = "I will think about this carefully. " * 200 + "```json {broken"
    debrief = {
        "agent_role": "seller",
        "agent_price": 3.25,
        "strategy": [
            {"round": 1, "action": "OFFER", "price": 4.5, "thought": "Start high.", "timed_out": False},
            {"round": 2, "action": "INVALID", "price": None, "thought": raw, "timed_out": False},
        ],
    }
    shown = strategy_markdown(debrief, "The other party")
    assert "|" not in shown and "- **Round 1**, offers **4.50**: *Start high\\.*" in shown
    second = shown.split("- **Round 2**")[1]
    assert "passes (no valid move)" in second and second.endswith(" …*") and len(second) < STRATEGY_SHOWN + 80
    view = a_view(
        transcript=[
            {"round": 1, "speaker": "you", "action": "INVALID", "price": None, "message": "", "timed_out": True}
        ]
    )
    assert chat_messages(view)[0]["content"] == "*Round 1: passes: time ran out*"


@pytest.mark.slow
def test_the_form_shows_the_resumed_games_settings_and_play_again_uses_them(server):
    """After a reload the setup shows the game being played, not the defaults; Play again starts a game with the
    finished game's settings whatever the form says."""
    with browser_page(server.url) as page:
        open_setup(page)
        page.get_by_role("radio", name="seller").first.check()
        start_game(page, "tactic:boulware", sequential=True, wait="You are the SELLER")
        page.reload()
        page.wait_for_selector("text=You are the SELLER", timeout=20000)
        open_setup(page)
        assert page.get_by_role("radio", name="seller").first.is_checked()
        assert page.get_by_role("radio", name="sequential").is_checked()
        assert page.get_by_label("Opponent").input_value() == "tactic:boulware"
        page.get_by_role("radio", name="buyer").first.check()  # changed, and then not started
        page.get_by_role("button", name="Walk away").click()
        page.wait_for_selector("text=Debrief", timeout=20000)
        page.get_by_role("button", name="Play again (same settings)").click()
        page.wait_for_selector("text=You are the SELLER", timeout=20000)
    games = Store(f"sqlite:///{server.db}").games_frame()
    assert list(games["human_role"]) == ["seller", "seller"] and list(games["arm"]) == ["tactic:boulware"] * 2
    assert list(games["mode"]) == ["sequential", "sequential"]
