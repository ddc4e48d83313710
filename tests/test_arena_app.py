"""The arena app end to end: a real server, gradio_client, SQLite, and headless Chromium."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from arena_helpers import (
    BROWSER_ARGS,
    CHROMIUM,
    browser_page,
    free_port,
    launch,
    need_browser,
    play,
    play_out,
    start,
    stored,
)
from gradio_client import Client

from bargain.arena.controller import ALREADY_PLAYED
from bargain.engine.game import Action, Turn, replay
from bargain.engine.trial import Role, Trial
from bargain.records.store import Store


@pytest.fixture
def server(tmp_path):
    running = launch(tmp_path / "arena.db")
    yield running
    running.demo.close()


@pytest.mark.parametrize("mode", ["simultaneous", "sequential"])
@pytest.mark.parametrize("role", ["buyer", "seller"])
def test_full_games_through_the_api_are_stored_move_by_move(server, mode, role):
    client = Client(server.url, verbose=False)
    views = play_out(client, start(client, role=role, mode=mode))
    final = views[-1]
    assert final["status"] == "finished" and final["outcome"] is not None and final["debrief"] is not None
    row = stored(server.db, final["game_id"])
    assert row["status"] == "finished" and row["human_role"] == role and row["mode"] == mode
    moves = row["moves"]
    assert [m["seq"] for m in moves] == list(range(len(moves)))
    if mode == "simultaneous":  # the person's move of a round is stored when made, before the agent's: as shown
        moves = sorted(moves, key=lambda m: (m["round"], m["role"] != "buyer"))
    assert [(m["round"], m["role"], m["action"], m["price"], m["message"]) for m in moves] == [
        (t["round"], t["role"], t["action"], t["price"], t["message"]) for t in final["transcript"]
    ]
    assert {m["actor"] for m in moves if m["role"] == role} == {"human"}
    turns = [
        Turn(
            m["round"],
            Role(m["role"]),
            Action(m["action"]),
            m["price"],
            m["message"],
            m["thought"],
            m["raw"],
            m["error"],
        )
        for m in moves
    ]
    outcome = replay(Trial.from_dict(row["trial"]), turns).outcome()
    assert (row["deal"], row["deal_price"], row["paper_rounds"]) == (outcome.deal, outcome.deal_price, outcome.rounds)
    assert row["rounds"] == moves[-1]["round"]  # the round in which the game ended
    assert final["outcome"]["deal"] == outcome.deal and final["outcome"]["paper_rounds"] == outcome.rounds


def test_bad_input_is_refused_and_changes_nothing(server):
    client = Client(server.url, verbose=False)
    view = start(client)
    for price in ("", "abc", "-3", "nan", "1e15"):
        with pytest.raises(Exception) as refused:
            play(client, view, price=price)
        assert "price" in str(refused.value).lower()
    with pytest.raises(Exception, match="500"):
        play(client, view, price=2.0, message="x" * 501)
    with pytest.raises(Exception, match="(?i)not possible"):
        play(client, view, action="DEAL")
    after = play(client, view)
    again = play(client, view)  # a second click on the same move: the game as stored, said so
    assert again["notice"] == ALREADY_PLAYED and again["transcript"] == after["transcript"]
    with pytest.raises(Exception, match="(?i)no such game"):
        client.predict(game_id="nope", api_name="/get_game")
    assert len(stored(server.db, view["game_id"])["moves"]) == 2 and after["round"] == 2


@pytest.mark.slow  # a second app server started (seconds)
def test_reload_and_server_restart_resume_the_game(tmp_path):
    db = tmp_path / "arena.db"
    first = launch(db)
    try:
        client = Client(first.url, verbose=False)
        view = play(client, start(client))
        reloaded = Client(first.url, verbose=False).predict(game_id=view["game_id"], api_name="/get_game")
        assert reloaded == view
    finally:
        first.demo.close()
    second = launch(db)
    try:
        client = Client(second.url, verbose=False)
        resumed = client.predict(game_id=view["game_id"], wait_s=5, api_name="/get_game")  # rebuilt, then settled
        assert resumed["round"] == 2 and resumed["transcript"] == view["transcript"] and resumed["your_turn"]
        final = play_out(client, resumed)[-1]
        assert final["status"] == "finished"
        assert len(stored(db, view["game_id"])["moves"]) == len(final["transcript"])
    finally:
        second.demo.close()


def test_two_sessions_never_see_each_other(server):
    results = {}

    def player(name: str, role: str) -> None:
        client = Client(server.url, verbose=False)
        results[name] = play_out(client, start(client, role=role))

    threads = [
        threading.Thread(target=player, args=("a", "buyer")),
        threading.Thread(target=player, args=("b", "seller")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    a, b = results["a"], results["b"]
    assert a[0]["game_id"] != b[0]["game_id"]
    assert all(v["game_id"] == a[0]["game_id"] and v["role"] == "buyer" for v in a)
    assert all(v["game_id"] == b[0]["game_id"] and v["role"] == "seller" for v in b)
    for views in (a, b):
        row = stored(server.db, views[0]["game_id"])
        assert len(row["moves"]) == len(views[-1]["transcript"])


@pytest.fixture
def page(server):
    """A headless Chromium page on the arena."""
    with browser_page(server.url) as page:
        yield page


@pytest.mark.slow
def test_a_person_plays_a_game_in_the_browser(server, page):
    page.get_by_role("radio", name="seller").first.check()  # "You play" (the first radio group)
    page.get_by_role("button", name="Start game").click()
    page.wait_for_selector("text=Round 1 of 4", timeout=20000)
    body = page.inner_text("body")
    assert "You are the SELLER" in body and "Your reservation price" in body
    page.get_by_role("textbox", name="Price").fill("abc")
    page.get_by_role("button", name="Offer", exact=True).click()
    page.wait_for_selector("text=is not a price", timeout=20000)
    assert page.get_by_role("textbox", name="Price").input_value() == "abc"  # what was typed stays
    for round_ in range(1, 5):
        page.get_by_role("textbox", name="Your message (optional)").fill(f"my round {round_} offer")
        page.get_by_role("textbox", name="Price").fill("15")  # above any buyer of the low tier: four rounds are played
        page.get_by_role("button", name="Offer", exact=True).click()
        page.wait_for_selector(f"text=Round {round_ + 1} of 4" if round_ < 4 else "text=Game over", timeout=20000)
        # A move that was played empties the boxes for the next one.
        assert page.get_by_role("textbox", name="Price").input_value() == ""
        assert page.get_by_role("textbox", name="Your message (optional)").input_value() == ""
    assert page.locator("#negotiation button[aria-label='Clear']").count() in (0, 1)
    assert not page.locator("#negotiation button[aria-label='Clear']").is_visible()  # no wiping the transcript
    page.reload()  # a finished game stays shown, with its outcome, until the person starts another
    page.wait_for_selector("text=Game over", timeout=20000)
    page.get_by_role("button", name="Play again").wait_for(timeout=20000)
    player_games = Store(f"sqlite:///{server.db}").games_frame()
    assert len(player_games) == 1 and player_games.iloc[0]["status"] == "finished"
    assert player_games.iloc[0]["human_role"] == "seller"


def test_the_public_api_is_the_named_endpoints(server):
    import httpx

    info = httpx.get(server.url + "gradio_api/info", timeout=30).json()
    assert set(info["named_endpoints"]) == {"/start_game", "/play_move", "/get_game", "/join_game", "/cancel_game"}
    assert not info.get("unnamed_endpoints")


@pytest.mark.slow
def test_games_against_a_tiny_model_arm(tmp_path, tiny_model, tiny_adapters):
    running = launch(
        tmp_path / "arena.db",
        "--backend",
        "hf",
        "--model",
        str(tiny_model),
        "--adapters-dir",
        str(tiny_adapters),
        "--max-reply-tokens",
        "16",  # a random model's reply runs to the limit: 1,024 tokens by default, some 20 s a move here
    )
    try:
        client = Client(running.url, verbose=False)
        for mode in ("simultaneous", "sequential"):
            view = start(
                client, role="seller", opponent="arm:buyer-grpo", condition="seller_unaware", mode=mode, rounds=2
            )
            final = play_out(client, view)[-1]
            assert final["status"] == "finished"
            row = stored(running.db, final["game_id"])
            agent_moves = [m for m in row["moves"] if m["actor"] == "agent"]
            assert agent_moves and all(m["raw"] is not None and m["prompt_messages"] for m in agent_moves)
            assert row["backend"]["backend"] == "hf" and row["out_of_distribution"]  # 2 rounds, not 4
    finally:
        running.demo.close()


def test_the_seller_can_open_a_sequential_game(server):
    client = Client(server.url, verbose=False)
    view = start(client, role="seller", mode="sequential", first_actor="seller")
    assert view["round"] == 1 and view["transcript"] == [] and view["your_turn"]  # the person (seller) opens
    after = play(client, view)
    assert [(t["round"], t["speaker"]) for t in after["transcript"]] == [(1, "you"), (2, "agent")]


@pytest.mark.slow
def test_a_page_resumes_its_game_after_a_server_restart(tmp_path):
    """The game id kept in the browser survives a restart (a stable browser-state key), and the new
    server rebuilds the game from its stored moves."""
    need_browser()
    from playwright.sync_api import sync_playwright

    db, port = tmp_path / "arena.db", free_port()
    first = launch(db, port=port)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        page.goto(first.url)
        page.get_by_role("button", name="Start game").click()
        page.wait_for_selector("text=Round 1 of 4", timeout=20000)
        page.get_by_role("textbox", name="Price").fill("0.01")
        page.get_by_role("button", name="Offer", exact=True).click()
        page.wait_for_selector("text=Round 2 of 4", timeout=20000)
        first.demo.close()
        started: list[SimpleNamespace] = []  # built on a thread of its own: Playwright's loop runs on this one
        builder = threading.Thread(target=lambda: started.append(launch(db, port=port)))
        builder.start()
        builder.join(60)
        second = started[0]
        try:
            page.reload()
            page.wait_for_selector("text=Round 2 of 4", timeout=20000)
            assert "offers 0.01" in page.inner_text("body")  # the move made before the restart
        finally:
            browser.close()
            second.demo.close()
