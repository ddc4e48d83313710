"""A model move has one deadline, its retries included: a model server that takes the connection and never
answers (or fails and is retried) costs the person that long, once; the round is not applied (the person's own move
is kept), the person is told, a reload answers at once meanwhile, and the round can be retried. The server is a
real HTTP server (`bargain.agents.stub_server.StubServer`) reached through the real OpenAI-compatible backend."""

from __future__ import annotations

import asyncio
import time

import pytest

from bargain.agents.backends import Backends
from bargain.agents.backends.openai_server import OpenAIServer
from bargain.agents.stub_server import StubServer
from bargain.arena.controller import VIEW_WAIT_S, Arena, Setup
from bargain.engine.trial import Mode, Role
from bargain.records.store import Store

DEADLINE_S = 1.5
SLACK_S = 1.0  # scheduling and the database, on a busy two-core machine
pytestmark = pytest.mark.slow  # each waits out real deadlines (seconds)


def arena_on(tmp_path, server: StubServer) -> Arena:
    return Arena(
        Store(f"sqlite:///{tmp_path / 'arena.db'}"),
        Backends(OpenAIServer(server.url)),
        arms=["arm:base"],
        move_deadline=DEADLINE_S,
    )


@pytest.mark.parametrize(
    "failing",
    [{"delay_s": 3600.0}, {"fail_first": 10_000, "fail_status": 503}],
    ids=["never-answers", "fails-and-is-retried"],
)
def test_a_model_that_does_not_answer_costs_one_deadline_and_the_round_can_be_retried(tmp_path, failing):
    with StubServer(["Qwen/Qwen3-8B"], **failing) as server:

        async def scenario():
            arena = arena_on(tmp_path, server)
            view = await arena.start(Setup(role=Role.BUYER, arm="arm:base", rounds=3))
            began = time.monotonic()
            moved = await arena.move(view.game_id, 1, "OFFER", "1.00", "my offer")
            assert time.monotonic() - began < DEADLINE_S + SLACK_S
            assert "took too long" in moved.error and moved.retry and moved.round == 1
            assert not moved.your_turn and [t["message"] for t in moved.transcript] == ["my offer"]
            stored = arena.store.game(view.game_id)["moves"]  # the person's move kept, nothing of the agent's
            assert [(m["actor"], m["message"]) for m in stored] == [("human", "my offer")]
            server.delay_s, server.fail_first = 0.0, 0  # the server is back
            moved = await arena.view(view.game_id, wait_s=DEADLINE_S + SLACK_S)  # Try again: the agent, asked again
            assert moved.round == 2 and moved.error is None
            assert [m["actor"] for m in arena.store.game(view.game_id)["moves"]] == ["human", "agent"]

        asyncio.run(scenario())


def test_a_reload_answers_at_once_while_the_model_hangs(tmp_path):
    with StubServer(["Qwen/Qwen3-8B"], delay_s=3600.0) as server:

        async def scenario():
            arena = arena_on(tmp_path, server)
            # Sequential, the model opening: its move is under way from the start.
            view = await arena.start(
                Setup(role=Role.BUYER, arm="arm:base", mode=Mode.SEQUENTIAL, first_actor=Role.SELLER, rounds=3)
            )
            assert "took too long" in view.error and view.retry  # the start waited one deadline, no more
            arena.live.clear()  # a reload that reaches another process: the game is rebuilt, the model asked again
            began = time.monotonic()
            reload = await arena.view(view.game_id, wait_s=VIEW_WAIT_S)
            assert time.monotonic() - began < VIEW_WAIT_S + SLACK_S
            assert reload.thinking and not reload.your_turn and reload.error is None
            await asyncio.sleep(DEADLINE_S)
            later = await arena.view(view.game_id, wait_s=0, retry=False)  # a reload: the failure, at once
            assert "took too long" in later.error and not later.thinking
            assert arena.store.game(view.game_id)["moves"] == []

        asyncio.run(scenario())


def test_a_look_answers_at_once_while_ones_own_move_waits_on_a_hanging_model(tmp_path):
    """Free play: `get_game`'s default look (and a page's reload) while the person's move waits on a model that never
    answers shows the game as stored at once, their move in it, the other side thinking; in a study, a move and the
    reload after it answer at once too (the model's deadline here is far longer than any of them may take)."""
    from test_study_people import PROGRAM_ONLY, runner, to_game

    from bargain.study.flow import StudyRunner

    with StubServer(["Qwen/Qwen3-8B"], delay_s=3600.0) as server:

        async def free_play():
            arena = arena_on(tmp_path, server)
            arena.move_deadline = 60.0
            view = await arena.start(Setup(role=Role.BUYER, arm="arm:base", rounds=3))
            moving = asyncio.ensure_future(arena.move(view.game_id, 1, "OFFER", "1.00", "my offer"))
            await asyncio.sleep(0.2)
            for look in (arena.view(view.game_id), arena.view(view.game_id, wait_s=VIEW_WAIT_S)):
                began = time.monotonic()
                shown = await look
                assert time.monotonic() - began < VIEW_WAIT_S + SLACK_S
                assert shown.thinking and not shown.your_turn and shown.error is None
                assert [(t["speaker"], t["price"]) for t in shown.transcript] == [("you", 1.0)]
            assert not moving.done()
            moving.cancel()

        async def study():
            (tmp_path / "study").mkdir()
            study = runner(tmp_path / "study", study_text=PROGRAM_ONLY.replace("tactic:linear", "arm:base")).study
            run = StudyRunner(study, arena_on(tmp_path / "study", server))
            run.arena.move_deadline = 60.0
            page = await to_game(run, "P1")
            for step in (
                run.submit({"participant": "P1"}, "game", {"round": 1, "action": "OFFER", "price": "1.00"}),
                run.page({"participant": "P1"}),
            ):
                began = time.monotonic()
                page = await step
                assert time.monotonic() - began < VIEW_WAIT_S + SLACK_S
                assert page.stage == "game" and page.view.thinking and not page.view.your_turn

        asyncio.run(free_play())
        asyncio.run(study())
