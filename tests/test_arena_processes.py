"""Several app processes on one database: a game is driven by the process that last took it over, a person who
reaches another process goes on where they were, and a round played from a state another process has moved past
is refused by the database (nothing lost, nothing written twice). Two `Arena`s with stores of their own stand for
two processes here; tests/test_study_processes.py runs real ones on PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest
from arena_helpers import Slow

from bargain.agents.backends import Backends
from bargain.arena.controller import ALREADY_PLAYED, Arena, GameInProgress, Setup
from bargain.arena.views import PersonView
from bargain.engine.trial import Role
from bargain.records.store import Store


def two_processes(tmp_path, backend=None) -> tuple[Arena, Arena]:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    return (Arena(Store(url), Backends(backend)), Arena(Store(url), Backends(backend)))


def stored(arena: Arena, game_id: str) -> list[tuple]:
    return [(m["seq"], m["round"], m["role"], m["action"], m["message"]) for m in arena.store.game(game_id)["moves"]]


def test_a_person_moving_between_processes_goes_on_where_they_were(tmp_path):
    async def scenario():
        a, b = two_processes(tmp_path)
        view = await a.start(Setup(role=Role.BUYER, arm="tactic:hardliner", rounds=5))
        game_id = view.game_id
        # offers below any seller's own (the item is drawn at random): the hardliner never takes one, so no round ends
        # the game
        view = await a.move(game_id, 1, "OFFER", "0.01", "on a")
        view = await b.move(game_id, 2, "OFFER", "0.02", "on b")  # reconnected to the other process
        assert view.round == 3 and b.live[game_id].generation == 2  # b took it over
        view = await a.move(game_id, 3, "OFFER", "0.03", "on a again")  # and back: a sees it is out of date
        assert view.round == 4
        assert [t["message"] for t in view.transcript if t["speaker"] == "you"] == ["on a", "on b", "on a again"]
        view = await b.view(game_id)
        assert view.round == 4 and len(view.transcript) == 6
        rows = stored(b, game_id)
        assert [r[0] for r in rows] == list(range(6)) and [r[1] for r in rows] == [1, 1, 2, 2, 3, 3]
        assert b.store.game(game_id)["driver"] == b.process

    asyncio.run(scenario())


def test_a_round_sent_to_two_processes_at_once_is_played_once(tmp_path):
    """The same round sent to two processes (a double submission, a reload that sends it again): both play it, the
    first to commit stores it, the other's write is refused by the database, and both answer with the game as
    stored; the refused one says so."""

    async def scenario():
        a, b = two_processes(tmp_path, Slow(0.4))
        view = await a.start(Setup(role=Role.BUYER, arm="arm:base", rounds=3))
        game_id = view.game_id
        pending = asyncio.ensure_future(a.move(game_id, 1, "OFFER", "1.00", "sent to a"))
        await asyncio.sleep(0.05)  # a's round is in flight (the model thinks) when the person reaches b
        second = await b.move(game_id, 1, "OFFER", "1.05", "sent to b")
        first = await pending
        rows = stored(b, game_id)
        assert [(r[1], r[2], r[4]) for r in rows if r[2] == "buyer"] == [(1, "buyer", "sent to a")] and len(rows) == 2
        assert first.round == second.round == 2 and first.transcript == second.transcript
        assert (first.notice, second.notice) == (None, ALREADY_PLAYED)
        assert (await a.view(game_id)).transcript == first.transcript

    asyncio.run(scenario())


def test_a_browser_has_one_game_going_on_across_tabs_and_processes(tmp_path):
    """A second start from the same browser (another tab, another process, or the start sent twice) asks first;
    leaving the game going on and starting another is one step, and however many such steps race, one game is
    left going on."""

    async def scenario():
        a, b = two_processes(tmp_path)
        first = await a.start(Setup(arm="tactic:hardliner"), player="browser1")
        with pytest.raises(GameInProgress) as going:
            await b.start(Setup(arm="tactic:linear"), player="browser1")
        assert going.value.game_id == first.game_id and "going on" in str(going.value)
        starts = await asyncio.gather(
            *(arena.start(Setup(arm="tactic:linear"), player="browser1", replace=True) for arena in (a, b, a, b)),
            return_exceptions=True,
        )
        games = a.store.games_frame("browser1")
        assert (games["status"] == "active").sum() == 1
        assert a.store.game(first.game_id)["abandoned_by"] == "person"
        assert all(isinstance(s, (PersonView, GameInProgress)) for s in starts)
        assert first.game_id not in a.live  # its loop let go here

    asyncio.run(scenario())
