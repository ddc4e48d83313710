"""The episode loop: games to the end, many at once, bounded, without batch barriers."""

import asyncio
from dataclasses import replace

import pytest

from bargain.agents.factory import make_agent
from bargain.engine import scenarios
from bargain.engine.game import Action, Move, new_initial_state
from bargain.engine.trial import Mode, Role
from bargain.runs.episodes import play, play_many


@pytest.fixture
def trials(scenario_set):
    spec = scenarios.GridSpec(tier="low", start=0, stop=3, trials_per_cell=1, max_rounds=4)
    return scenarios.make_trials(spec, scenario_set)


class Waiting:
    """A buyer that takes `delay` seconds per move, tracking games in flight and finish order."""

    def __init__(self, game, delay, live, peaks, finished):
        self.game, self.delay, self.live, self.peaks, self.finished = game, delay, live, peaks, finished

    async def act(self, obs):
        self.live.add(self.game)
        self.peaks.append(len(self.live))
        await asyncio.sleep(self.delay)
        if obs.round == obs.max_rounds:
            self.live.discard(self.game)
            self.finished.append(self.game)
        return Move(Action.OFFER, price=1.0)


def test_play_runs_a_game_to_the_end_and_reports_each_turn(trials):
    state = new_initial_state(trials[0])
    seen = []
    asyncio.run(
        play(
            state,
            make_agent("tactic:boulware", 0),
            make_agent("tactic:conceder", 0),
            on_turn=lambda s: seen.append(len(s.turns)),
        )
    )
    assert state.is_terminal() and seen == list(range(2, 2 * state.outcome().rounds + 1, 2))


def test_play_drives_sequential_games(trials):
    state = new_initial_state(replace(trials[0], mode=Mode.SEQUENTIAL, max_rounds=5))
    asyncio.run(play(state, make_agent("tactic:linear", 0), make_agent("tactic:linear", 0)))
    roles = [t.role for t in state.turns]
    assert state.is_terminal() and roles == [Role.BUYER, Role.SELLER, Role.BUYER, Role.SELLER, Role.BUYER][: len(roles)]


def test_many_games_in_trial_order(trials):
    episodes = asyncio.run(
        play_many(
            trials,
            lambda t: (make_agent("tactic:boulware", 0), make_agent("tactic:linear", 0)),
            ("tactic:boulware", "tactic:linear"),
            concurrency=5,
            progress=False,
        )
    )
    assert [e.trial for e in episodes] == trials
    assert all(e.state.is_terminal() and e.error is None and e.buyer == "tactic:boulware" for e in episodes)


def test_concurrency_is_bounded_and_a_slow_game_holds_up_no_one(scenario_set):
    spec = scenarios.GridSpec(
        tier="low", start=0, stop=11, trials_per_cell=1, max_rounds=4, conditions=scenarios.GridSpec().conditions[:1]
    )
    trials = scenarios.make_trials(spec, scenario_set)
    live, peaks, finished = set(), [], []

    def agents_for(trial):
        delay = 0.25 if trial.trial_id == 1 else 0.005
        return Waiting(trial.trial_id, delay, live, peaks, finished), make_agent("tactic:hardliner", 0)

    asyncio.run(play_many(trials, agents_for, ("w", "h"), concurrency=2, progress=False))
    assert max(peaks) == 2  # two games in flight, never more
    # The slow game 1 ends last: the ten fast ones went through the other slot meanwhile.
    assert finished[-1] == 1 and sorted(finished[:-1]) == list(range(2, 12))


def test_a_failing_game_is_recorded_and_the_rest_go_on(trials):
    class Broken:
        async def act(self, obs):
            raise ConnectionError("backend went away")

    def agents_for(trial):
        if trial.trial_id == 2:
            return Broken(), make_agent("tactic:linear", 0)
        return make_agent("tactic:linear", 0), make_agent("tactic:linear", 0)

    episodes = asyncio.run(play_many(trials, agents_for, ("x", "y"), progress=False))
    assert episodes[1].error == "ConnectionError: backend went away" and not episodes[1].state.is_terminal()
    assert all(e.error is None and e.state.is_terminal() for i, e in enumerate(episodes) if i != 1)


def test_concurrency_must_be_positive(trials):
    with pytest.raises(ValueError, match="at least 1"):
        asyncio.run(play_many(trials, lambda t: None, ("a", "b"), concurrency=0))


class Boom(RuntimeError):
    pass


async def _move(delay: float, log: list, name: str, fail: bool = False) -> Move:
    try:
        await asyncio.sleep(delay)
    except asyncio.CancelledError:
        log.append(f"{name} cancelled")
        raise
    if fail:
        raise Boom(name)
    log.append(f"{name} moved")
    return Move(Action.OFFER, 1.0)


@pytest.mark.parametrize("failing", ["first", "second"])
def test_when_one_side_fails_the_others_pending_move_is_cancelled_at_once(failing):
    """A person's turn (either side) is not left waiting in a round that will never be applied."""
    from bargain.runs.episodes import both

    async def scenario():
        log = []
        started = asyncio.get_running_loop().time()
        with pytest.raises(Boom):
            await both(
                _move(0.05 if failing == "first" else 30, log, "first", failing == "first"),
                _move(0.05 if failing == "second" else 30, log, "second", failing == "second"),
            )
        elapsed = asyncio.get_running_loop().time() - started
        await asyncio.sleep(0.01)  # a pending cancellation would land here
        return log, elapsed

    log, elapsed = asyncio.run(scenario())
    other = "second" if failing == "first" else "first"
    assert log == [f"{other} cancelled"] and elapsed < 5


def test_both_moves_come_back_in_order_and_a_late_failure_cancels_nothing_afterwards():
    from bargain.runs.episodes import both

    async def scenario():
        log = []
        moves = await both(_move(0.02, log, "first"), _move(0.01, log, "second"))
        # the second fails in the same instant the first completes: no stray cancellation may reach the caller
        with pytest.raises(Boom):
            await both(_move(0.01, log, "first"), _move(0.01, log, "second", fail=True))
        await asyncio.sleep(0.05)
        return moves, log

    moves, log = asyncio.run(scenario())
    assert [m.action for m in moves] == [Action.OFFER, Action.OFFER]
    assert log[:2] == ["second moved", "first moved"]


def test_cancelling_the_game_cancels_both_sides():
    from bargain.runs.episodes import both

    async def scenario():
        log = []
        game = asyncio.ensure_future(both(_move(30, log, "first"), _move(30, log, "second")))
        await asyncio.sleep(0.01)
        game.cancel()
        with pytest.raises(asyncio.CancelledError):
            await game
        await asyncio.sleep(0.01)
        return log

    assert sorted(asyncio.run(scenario())) == ["first cancelled", "second cancelled"]
