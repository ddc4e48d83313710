"""A program's replies at a human-like pace (bargain.arena.pacing): a study's blinding, so that how fast the other side
answers does not tell a person from a program. The delay is drawn per move, held to, recorded with the move, and
kept by a game that another process takes over."""

from __future__ import annotations

import asyncio
import random
import time

from hypothesis import given
from hypothesis import strategies as st

from bargain.agents.backends import Backends
from bargain.arena.controller import Arena, Setup
from bargain.arena.pacing import Pace, Paced
from bargain.engine.game import Action, Move, new_initial_state
from bargain.engine.trial import Condition, Mode, Role, Trial
from bargain.records.store import Store


@given(
    st.floats(0.5, 120),
    st.floats(0.0, 2.0),
    st.floats(0.5, 300),
    st.integers(0, 2**31),
)
def test_a_delay_is_never_more_than_its_bound_and_a_spread_of_zero_is_the_median(median, spread, most, seed):
    delay = Pace(median, spread, most).draw(random.Random(seed))
    assert 0 < delay <= most
    assert Pace(median, 0.0, max(most, median)).draw(random.Random(seed)) == median


def test_a_paced_agent_answers_no_sooner_than_its_delay_and_the_delay_is_stored(tmp_path):
    url = f"sqlite:///{tmp_path / 'paced.db'}"
    pace = Pace(0.4, 0.0, 1.0)

    async def scenario():
        arena = Arena(Store(url), Backends())
        began = time.monotonic()  # the round begins: the agent is asked, and its reply is held to the pace
        view = await arena.start(Setup(role=Role.BUYER, arm="tactic:linear", rounds=3), pace=pace)
        view = await arena.move(view.game_id, 1, "OFFER", "0.01", "")
        assert time.monotonic() - began >= 0.4 and view.round == 2  # the tactic's instant reply waited
        other = Arena(Store(url), Backends())  # another process takes the game over: the same pace
        began = time.monotonic()
        view = await other.move(view.game_id, 2, "OFFER", "0.01", "")
        assert time.monotonic() - began >= 0.4 and view.round == 3
        return view.game_id

    game_id = asyncio.run(scenario())
    moves = Store(url).game(game_id)["moves"]
    assert sorted((m["round"], m["actor"], m["paced_s"]) for m in moves) == [
        (1, "agent", 0.4),
        (1, "human", None),
        (2, "agent", 0.4),
        (2, "human", None),
    ]


def test_an_unpaced_game_stores_no_delay(tmp_path):
    url = f"sqlite:///{tmp_path / 'plain.db'}"

    async def scenario():
        arena = Arena(Store(url), Backends())
        view = await arena.start(Setup(role=Role.BUYER, arm="tactic:linear", rounds=1))
        return (await arena.move(view.game_id, 1, "NO_DEAL", "", "")).game_id

    assert {m["paced_s"] for m in Store(url).game(asyncio.run(scenario()))["moves"]} == {None}


def test_two_processes_pace_the_same_move_of_a_game_alike_and_another_game_otherwise(scenario_set):
    """The delay of a move is drawn from the game's seed and the turn: a process that takes the game over holds the
    same move to the same delay (the record and the participant see one pace), and another game draws its own."""
    trial = Trial(1, scenario_set.get("low:0"), Condition.BOTH_UNAWARE, 2.0, 1.0, 4, Mode.SIMULTANEOUS)
    state = new_initial_state(trial)

    class Instant:
        async def act(self, obs):
            return Move(Action.NO_DEAL)

    async def delays(seed: int) -> dict:
        paced = Paced(Instant(), Pace(0.01, 1.0, 0.2), seed)
        for role in (Role.BUYER, Role.SELLER):
            await paced.act(state.observation(role))
        return paced.paced

    first, taken_over = asyncio.run(delays(7)), asyncio.run(delays(7))
    assert first == taken_over and len(set(first.values())) == 2  # each turn its own draw, the same in both
    assert asyncio.run(delays(8)) != first
