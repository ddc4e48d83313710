"""Several servers behind one --base-url: load shared, a dead replica routed around, a game kept on one replica."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter

import pytest
from cli_runner import run_main

from bargain.agents.arms import ADAPTERS, BASE_MODEL
from bargain.agents.backends import BackendError, Request, Sampling, ServerUnavailable
from bargain.agents.backends import replicas as replicas_module
from bargain.agents.backends.build import build_backend
from bargain.agents.backends.replicas import Replicas, split_urls
from bargain.agents.stub_server import StubServer
from bargain.cli import main

MODELS = [BASE_MODEL, *ADAPTERS]


def request(first: str = "You are the BUYER.") -> Request:
    return Request(({"role": "user", "content": first},), BASE_MODEL, Sampling())


def test_urls_are_split_trimmed_and_deduplicated():
    assert split_urls(" http://a:1/v1/, http://b:2/v1,,http://a:1/v1 ") == ["http://a:1/v1", "http://b:2/v1"]
    assert isinstance(build_backend("vllm", base_url="http://a:1/v1,http://b:2/v1"), Replicas)
    with pytest.raises(BackendError, match="names no server"):
        build_backend("vllm", base_url=" , ")


def test_requests_go_to_the_replica_with_the_fewest_in_flight():
    with StubServer(MODELS, delay_s=0.05) as a, StubServer(MODELS, delay_s=0.05) as b:
        backend = Replicas([a.url, b.url])

        async def many():
            done = await asyncio.gather(*(backend.complete(request(f"game {i}")) for i in range(40)))
            await backend.aclose()
            return done

        done = asyncio.run(many())
    assert Counter(c.endpoint for c in done) == {a.url: 20, b.url: 20}
    assert len(a.requests) == len(b.requests) == 20


def test_a_killed_replica_is_routed_around_and_probed_again(monkeypatch):
    """The first replica dies with requests in flight: each is answered by another, and the dead one is asked
    again after its rest, and comes back when it answers (here: a replica that failed with 503s)."""
    monkeypatch.setattr(replicas_module, "REVIVE_AFTER_S", 0.3)
    with StubServer(MODELS, delay_s=0.2) as a, StubServer(MODELS) as b, StubServer(MODELS, fail_first=6) as c:
        backend = Replicas([a.url, b.url, c.url])

        async def scenario():
            first = asyncio.gather(*(backend.complete(request(f"game {i}")) for i in range(9)))
            await asyncio.sleep(0.1)  # a holds its three requests
            a.kill()
            answered = await first
            out = [r.down_since is not None for r in backend.replicas]
            await asyncio.sleep(0.4)
            await backend.complete(request("after the rest"))  # probes the rested replicas before it is sent
            back = [r.down_since is not None for r in backend.replicas]
            later = await asyncio.gather(*(backend.complete(request(f"later {i}")) for i in range(6)))
            await backend.aclose()
            return answered, out, later, back

        answered, out, later, back = asyncio.run(scenario())
    assert len(answered) == 9 and a.url not in {c_.endpoint for c_ in answered}
    assert out[0] and out[2]  # a died; c answered 503 to each try of its three: both out
    assert back == [True, False, False]  # after the rest c answers again, a does not
    assert {c_.endpoint for c_ in later} == {b.url, c.url}


def test_when_every_replica_is_down_the_error_names_them():
    with StubServer(MODELS) as a, StubServer(MODELS) as b:
        a.kill()
        b.kill()
        backend = Replicas([a.url, b.url])
        with pytest.raises(ServerUnavailable, match="no replica could answer") as caught:
            asyncio.run(backend.complete(request()))
    assert a.url in str(caught.value) and b.url in str(caught.value)


def test_a_request_error_is_not_retried_elsewhere():
    with StubServer(["other-model"]) as a, StubServer(["other-model"]) as b:
        backend = Replicas([a.url, b.url])
        with pytest.raises(BackendError, match="404") as caught:
            asyncio.run(backend.complete(request()))
        assert not isinstance(caught.value, ServerUnavailable)
        assert len(a.requests) + len(b.requests) == 1 and all(r.down_since is None for r in backend.replicas)


def test_a_sticky_game_keeps_its_replica_until_it_dies():
    with StubServer(MODELS) as a, StubServer(MODELS) as b:
        backend = Replicas([a.url, b.url], sticky=True)

        async def game(first: str, turns: int):
            return [(await backend.complete(request(first))).endpoint for _ in range(turns)]

        async def scenario():
            games = await asyncio.gather(*(game(f"game {i}", 4) for i in range(8)))
            home = {i: g[0] for i, g in enumerate(games)}
            (a if home[0] == a.url else b).kill()
            after = await game("game 0", 2)
            await backend.aclose()
            return games, home, after

        games, home, after = asyncio.run(scenario())
    assert all(len(set(g)) == 1 for g in games)  # every turn of a game on one replica
    assert set(home.values()) == {a.url, b.url}  # the games are spread over both
    assert after == [b.url if home[0] == a.url else a.url] * 2


def test_evaluate_finishes_every_trial_when_a_replica_dies_halfway(tmp_path):
    servers = [StubServer(MODELS, delay_s=0.01) for _ in range(3)]
    for server in servers:
        server.__enter__()
    victim = servers[1]
    killed = threading.Event()

    def reply(body):  # the victim dies at its thirtieth request, with answers of its own already recorded
        from bargain.agents.backends.canned import canned_reply

        if len(victim.requests) >= 30 and not killed.is_set():
            killed.set()
            threading.Thread(target=victim.kill).start()
        return canned_reply(body["messages"])

    victim.reply = reply
    out = tmp_path / "run"
    try:
        done = run_main(
            main,
            "evaluate",
            "--grid",
            "paper-rl-test",
            "--trials",
            "1",
            "--buyer",
            "arm:buyer-grpo",
            "--seller",
            "arm:base",
            "--seller-preset",
            "frozen-opponent",
            "--backend",
            "vllm",
            "--base-url",
            ",".join(s.url for s in servers),
            "--concurrency",
            "16",
            "--out",
            str(out),
            "--quiet",
            env={"HF_HUB_OFFLINE": "1"},
        )
    finally:
        for server in servers:
            server.__exit__(None, None, None)
    assert done.returncode == 0, done.stderr
    assert killed.is_set()
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    ids = [g["trial"]["trial_id"] if "trial" in g else g["trial_id"] for g in games]
    assert len(ids) == len(set(ids)) == 32  # every trial of the grid at one trial per cell, once
    endpoints = Counter(r["endpoint"] for g in games for r in g["records"])
    assert set(endpoints) <= {s.url for s in servers} and len(endpoints) == 3
    assert not any(g.get("error") for g in games)


def test_arena_games_go_on_when_one_of_two_replicas_dies(tmp_path):
    """Games in progress on the replica that dies finish on the other; the arena's backend is sticky, as app.py
    builds it."""
    from bargain.agents.backends import Backends
    from bargain.arena.controller import Arena, Setup
    from bargain.engine.trial import Condition, Role
    from bargain.records.store import Store

    with StubServer(MODELS) as a, StubServer(MODELS) as b:
        backend = build_backend("vllm", base_url=f"{a.url},{b.url}", sticky=True)

        async def scenario():
            store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
            arena = Arena(store, Backends(backend))
            views = [
                await arena.start(
                    Setup(role=Role.SELLER, arm="arm:buyer-grpo", condition=Condition.SELLER_UNAWARE, seed=seed)
                )
                for seed in range(6)
            ]
            views = [await arena.move(v.game_id, v.round, "OFFER", v.your_price * 1.5) for v in views]
            before = (len(a.requests), len(b.requests))
            a.kill()
            for _ in range(8):  # more rounds than a game has: a stuck game fails the test, not hangs it
                views = [
                    await arena.move(v.game_id, v.round, "OFFER", v.your_price * 1.5) if v.status == "active" else v
                    for v in views
                ]
            await backend.aclose()
            return before, views, [store.game(v.game_id) for v in views]

        before, views, stored = asyncio.run(scenario())
    assert min(before) > 0  # the games were spread over both replicas
    assert all(v.status == "finished" for v in views)
    assert all(t["action"] == "OFFER" for v in views for t in v.transcript if t["speaker"] == "agent")
    served = [[m["endpoint"] for m in game["moves"] if m["actor"] == "agent"] for game in stored]
    assert all(served) and {e for game in served for e in game} == {a.url, b.url}  # stored with every agent move
    assert all(m["endpoint"] is None for game in stored for m in game["moves"] if m["actor"] == "human")
    assert any(game[0] == a.url and game[-1] == b.url for game in served)  # a game moved when its replica died


def test_the_arena_caps_model_replies_at_the_operators_length(tmp_path):
    """`--max-reply-tokens` (a Space on a small GPU bounds a person's wait) reaches every model request; the default
    is the trained preset's length."""
    from bargain import app as arena_app
    from bargain.arena.controller import Setup
    from bargain.engine.trial import Condition, Role

    assert arena_app.parse_args([]).max_reply_tokens == 1024
    with StubServer(MODELS) as server:
        demo, arena = arena_app.build(
            arena_app.parse_args(
                [
                    "--db",
                    str(tmp_path / "a.db"),
                    "--backend",
                    "vllm",
                    "--base-url",
                    server.url,
                    "--max-reply-tokens",
                    "200",
                ]
            )
        )

        async def scenario():
            view = await arena.start(Setup(role=Role.SELLER, arm="arm:buyer-grpo", condition=Condition.SELLER_UNAWARE))
            await arena.move(view.game_id, view.round, "OFFER", view.your_price * 1.5)
            await arena.backends.aclose()

        asyncio.run(scenario())
        demo.close()
    chats = [r for r in server.requests if "messages" in r]
    assert len(chats) >= 2 and {r["max_tokens"] for r in chats} == {200}
