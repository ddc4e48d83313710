"""A game between two people as they meet it on the page, in two headless Chromium contexts (two browsers that
share nothing): the inviter waits with a link to send, the other person opens it and the game begins, each page
shows its own side only and follows the other's moves without being touched, a reload shows the game as it was,
and at the end both read the outcome and the other person's price; stopping the wait cancels the game and leaves
the link refused in words."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from arena_helpers import BROWSER_ARGS, CHROMIUM, launch, need_browser

from bargain.arena.views import money
from bargain.records.store import Store

DESKTOP = {"width": 1200, "height": 900}
PHONE = {"width": 390, "height": 844}
SMALL_PHONE = {"width": 360, "height": 780}
LINK = re.compile(r"(http\S+\?join=[0-9a-f]{32})")
INVITE = "a person: I send them a link"
GRADIO_INTERNALS = ("didn't return enough output values", "Traceback", "Error:")


@pytest.fixture
def server(tmp_path):
    running = launch(tmp_path / "arena.db")
    yield running
    running.demo.close()


@pytest.fixture
def browser():
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def person(browser, url: str, viewport: dict):
    """A page in a context of its own: another person, with a browser of their own (nothing kept is shared)."""
    page = browser.new_context(viewport=viewport).new_page()
    page.goto(url)
    return page


def snap(page, name: str) -> None:
    """A screenshot for looking at how the page reads (only where BARGAIN_SCREENSHOTS names a folder)."""
    folder = os.environ.get("BARGAIN_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def invite(page) -> str:
    """Start a game against a person by invitation; the link the page gives to send."""
    page.get_by_role("button", name="Start game").wait_for(timeout=20000)
    page.get_by_label("Opponent").click()
    page.get_by_role("option", name=INVITE).click()
    page.get_by_role("button", name="Start game").click()
    page.wait_for_selector("text=Waiting for the other person to join", timeout=20000)
    page.wait_for_selector("#invitation >> text=Send this link", timeout=10000)
    text = page.locator("#invitation").inner_text()
    assert "Send this link to the person you want to play" in text
    found = LINK.search(text)
    assert found, text
    within = page.locator("#invitation").evaluate("e => e.scrollWidth <= e.clientWidth")
    assert within, "the link runs past the edge of the page"
    return found.group(1)


def offer(page, price: str, message: str) -> None:
    page.get_by_role("textbox", name="Your message (optional)").fill(message)
    page.get_by_role("textbox", name="Price").fill(price)
    page.get_by_role("button", name="Offer", exact=True).click()


def chat(page) -> str:
    return page.locator("#negotiation").inner_text()


def body(page) -> str:
    text = page.inner_text("body")
    assert not any(internal in text for internal in GRADIO_INTERNALS), text
    return text


def hidden_price(page, price: float, own: float, offered: tuple[str, ...] = ()) -> None:
    """The other side's reservation price is not on the page (unless it reads the same as a figure the page has
    reason to show: the person's own price, a bound of any range they are told, of the other's price or of what
    the other believes of theirs, or a price offered so far, `offered`)."""
    text = body(page)
    bounds = re.findall(r"between ([\d,.]+) and ([\d,.]+)", text)
    assert bounds, text
    shown = {money(own), *offered, *(bound for pair in bounds for bound in pair)}
    assert "had a reservation price of" not in text
    if money(price) not in shown:
        assert money(price) not in text


def wait_text(page, text: str, timeout_s: float = 20) -> None:
    page.wait_for_selector(f"text={text}", timeout=timeout_s * 1000)


@pytest.mark.slow
def test_two_people_play_a_whole_game_each_page_following_the_other(server, browser):
    began = time.monotonic()
    alice = person(browser, server.url, DESKTOP)
    link = invite(alice)
    assert link.startswith(server.url.rstrip("/"))
    assert alice.get_by_role("button", name="Stop waiting").is_visible()
    alice.locator("#negotiation >> text=waiting for the other person").wait_for(timeout=10000)  # not "thinking"
    assert alice.locator(".generating").count() == 0  # the page says it waits: no progress pulsing all over it
    snap(alice, "people-desktop-waiting")

    bob = person(browser, link, PHONE)
    wait_text(bob, "Round 1 of 4")
    wait_text(alice, "Round 1 of 4")  # the inviter's page followed the other person's arrival
    store = Store(f"sqlite:///{server.db}")
    (game_id,) = store.games_frame()["id"]
    trial = store.game(game_id)["trial"]
    buyer, seller = trial["buyer_price"], trial["seller_price"]
    for page, role, own, other in ((alice, "BUYER", buyer, seller), (bob, "SELLER", seller, buyer)):
        text = body(page)
        assert f"You are the {role}." in text and f"Your reservation price: {money(own)}" in text
        assert "Send this link" not in text and "Waiting for the other person" not in text
        assert not page.get_by_role("button", name="Stop waiting").is_visible()
        hidden_price(page, other, own)
    assert alice.locator("#invitation").inner_text().strip() == ""
    snap(bob, "people-phone-joined")

    # Round 1 (simultaneous): the first move stays private until the other side has moved too.
    offer(alice, money(buyer * 0.5), "alice opens low")
    wait_text(alice, "waiting for the other person")
    assert "alice opens low" in chat(alice)
    bob.wait_for_timeout(1500)
    assert "alice opens low" not in chat(bob) and "Round 1 of 4" in body(bob)
    offer(bob, money(seller * 2), "bob opens high")
    for page in (alice, bob):
        wait_text(page, "Round 2 of 4")  # alice's page settled the round with nothing done there
        page.locator("#negotiation >> text=bob opens high").wait_for(timeout=10000)
        assert "alice opens low" in chat(page)
    snap(alice, "people-desktop-round2")

    # Round 2: they meet in the middle (offers a cent apart where it falls between two), and alice reloads while
    # her offer waits for bob's.
    cents = round((buyer + seller) * 100)
    bid, ask = f"{(cents + cents % 2) / 200:.2f}", f"{(cents - cents % 2) / 200:.2f}"
    deal = money((float(bid) + float(ask)) / 2)
    offer(alice, bid, "meet in the middle")
    wait_text(alice, "waiting for the other person")
    alice.reload()
    wait_text(alice, "Round 2 of 4")
    alice.locator("#negotiation >> text=meet in the middle").wait_for(timeout=10000)
    wait_text(alice, "waiting for the other person")  # the reloaded page follows the game
    assert alice.locator(".generating").count() == 0
    snap(alice, "people-desktop-reloaded")
    shown = chat(alice)
    assert "alice opens low" in shown and "bob opens high" in shown  # the chat so far
    assert "You are the BUYER." in body(alice)
    assert not alice.get_by_role("button", name="Offer", exact=True).is_enabled()  # her move is in
    assert "meet in the middle" not in chat(bob)
    offered = (money(buyer * 0.5), money(seller * 2), bid)  # alice's bid may read as either price
    hidden_price(alice, seller, buyer, offered)
    hidden_price(bob, buyer, seller, offered)
    offer(bob, ask, "fine")

    # The end: the reloaded page followed it too, and each person reads the outcome and the other's price.
    for page, role, price in ((alice, "seller", seller), (bob, "buyer", buyer)):
        wait_text(page, f"Deal at {deal}")
        wait_text(page, "Debrief")
        text = body(page)
        assert "Game over" in text and "the deal is right on it" in text  # they met in the middle
        assert f"The other person ({role}) had a reservation price of {money(price)}" in text
        assert "The agent" not in text and "its private strategy" not in text.lower()
        heads = page.locator("th").filter(has_text="normalised")
        assert heads.evaluate("e => e.getBoundingClientRect().height < 50"), "the table's heading breaks on a phone"
    assert "fine" in chat(alice) and "meet in the middle" in chat(bob)
    snap(alice, "people-desktop-debrief")
    snap(bob, "people-phone-debrief")
    assert store.game(game_id)["status"] == "finished"
    assert time.monotonic() - began < 60


@pytest.mark.slow
def test_stopping_the_wait_cancels_the_game_and_the_link_is_refused(server, browser):
    alice = person(browser, server.url, SMALL_PHONE)
    link = invite(alice)
    snap(alice, "people-phone-waiting")
    alice.get_by_role("button", name="Stop waiting").click()
    wait_text(alice, "Cancelled: nobody joined")
    assert not alice.get_by_role("button", name="Stop waiting").is_visible()
    assert "Send this link" not in body(alice)
    snap(alice, "people-phone-cancelled")

    bob = person(browser, link, DESKTOP)
    wait_text(bob, "already taken, or the game was cancelled")
    text = body(bob)
    assert "Round 1" not in text and "You are the" not in text
    snap(bob, "people-desktop-refused")


@pytest.fixture
def one_place(tmp_path):
    """The app with one place in its queue (--concurrency 1); started before the browser, whose own event loop
    would stop the app's start-up check from running."""
    running = launch(tmp_path / "arena.db", "--concurrency", "1")
    yield running
    running.demo.close()


@pytest.mark.slow
def test_people_waiting_for_a_partner_do_not_hold_up_anyone_elses_game(one_place, browser):
    """Following a game waits, it does not work: with one place in the queue, two people waiting for a partner
    still leave a third person's game against a tactic to be started and played at once."""
    for _ in range(2):
        invite(person(browser, one_place.url, DESKTOP))
    third = person(browser, one_place.url, DESKTOP)
    third.get_by_role("button", name="Start game").wait_for(timeout=20000)
    began = time.monotonic()
    third.get_by_role("button", name="Start game").click()  # the default opponent: a tactic
    third.wait_for_selector("text=Round 1 of 4", timeout=15000)
    offer(third, "0.01", "")  # under every seller's own price (the item is drawn): no tactic takes it in round 1
    third.wait_for_selector("text=Round 2 of 4", timeout=15000)
    assert time.monotonic() - began < 15
