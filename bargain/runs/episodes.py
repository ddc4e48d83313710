"""The one loop that plays a game to its end, and many games at once (asyncio).

Every caller plays through here: batch simulation and evaluation, the arena (a person is an
agent whose move arrives from the UI) and training rollouts. Many episodes run concurrently
under a bound on how many are in flight; each goes on to its next turn as soon as its own
moves arrive, so a slow game never holds up the others (no batch barriers).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import cast

from tqdm import tqdm

from bargain.agents.agent import Agent
from bargain.engine.game import GameState, Move, new_initial_state
from bargain.engine.trial import Mode, Role, Trial

AgentsFor = Callable[[Trial], tuple[Agent, Agent]]
"""Builds the (buyer, seller) agents of one trial."""


@dataclass(slots=True)
class Episode:
    """A finished (or failed) game with the names of who played it."""

    trial: Trial
    state: GameState
    buyer: str
    seller: str
    error: str | None = None
    records: list[dict] = field(default_factory=list)  # model agents' per-move records

    @property
    def finished(self) -> bool:
        """Played to the end without an error."""
        return self.error is None and self.state.is_terminal()


async def both(first: Awaitable[Move], second: Awaitable[Move]) -> tuple[Move, Move]:
    """Both sides' moves, concurrently: the second in a task of its own, the first in the calling task (one task
    per round instead of two and a gather: a third of a model-less run's time went to that machinery). If one side
    fails, the other's pending move is cancelled and the failure raised (a person's turn must not be left waiting
    in a round that will never be applied)."""
    other = asyncio.ensure_future(second)
    this = asyncio.current_task()
    if this is None:
        raise RuntimeError("both() runs inside a task: the episode loop's")
    waiting = True

    def stop_waiting(task: asyncio.Future) -> None:  # the second side failed while the first is still awaited
        if waiting and not task.cancelled() and task.exception() is not None:
            this.cancel()

    other.add_done_callback(stop_waiting)
    try:
        move = await first
    except asyncio.CancelledError:
        failure = other.exception() if other.done() and not other.cancelled() else None
        if failure is not None:
            this.uncancel()  # our own cancellation, to stop waiting: raise the second side's failure instead
            raise failure from None
        other.cancel()
        raise
    except BaseException:
        other.cancel()
        raise
    finally:
        waiting = False
    return move, await other


async def play(
    state: GameState, buyer: Agent, seller: Agent, on_turn: Callable[[GameState], Awaitable[None] | None] | None = None
) -> GameState:
    """Play `state` to the end; `on_turn` runs after every applied move or round (e.g. to store it)."""
    agents = {Role.BUYER: buyer, Role.SELLER: seller}
    simultaneous = state.trial.mode is Mode.SIMULTANEOUS
    # When at most one side takes real time, waiting for the two in turn costs nothing.
    in_turn = getattr(buyer, "instant", False) or getattr(seller, "instant", False)
    while not state.is_terminal():
        if simultaneous:
            seen_b, seen_s = state.observation(Role.BUYER), state.observation(Role.SELLER)
            if in_turn:
                b, s = await buyer.act(seen_b), await seller.act(seen_s)
            else:
                b, s = await both(buyer.act(seen_b), seller.act(seen_s))
            state.apply_actions({Role.BUYER: b, Role.SELLER: s})
        else:
            (actor,) = state.current_players()
            state.apply_action(await agents[actor].act(state.observation(actor)), actor)
        if on_turn is not None:
            result = on_turn(state)
            if result is not None:
                await result
    return state


async def play_many(
    trials: Iterable[Trial],
    agents_for: AgentsFor,
    names: tuple[str, str],
    concurrency: int = 64,
    sanity_check: bool = False,
    progress: bool = True,
    desc: str = "episodes",
    on_done: Callable[[Episode], dict | None] | None = None,
) -> list[Episode]:
    """Play every trial with at most `concurrency` games in flight; results in trial order.

    A game whose agent fails is kept with its error and the moves it reached, so one broken
    game never loses the rest of a grid. `on_done` sees each episode as it ends (to store it);
    a dict it returns is shown on the progress bar.
    """
    trials = list(trials)
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    episodes: list[Episode | None] = [None] * len(trials)
    queue = iter(enumerate(trials))
    bar = tqdm(total=len(trials), desc=desc, unit="game", disable=not progress)

    async def worker() -> None:
        # Each worker takes the next trial the moment its game ends: no batch barriers.
        for index, trial in queue:
            state = new_initial_state(trial, sanity_check)
            error, agents = None, cast(tuple[Agent, ...], ())
            try:
                buyer, seller = agents = agents_for(trial)
                await play(state, buyer, seller)
            except Exception as exc:  # recorded per game; the grid goes on
                error = f"{type(exc).__name__}: {exc}"
            records = [r for agent in agents for r in getattr(agent, "records", ())]
            episode = episodes[index] = Episode(trial, state, names[0], names[1], error, records)
            shown = on_done(episode) if on_done is not None else None
            if shown:
                bar.set_postfix(shown, refresh=False)
            bar.update(1)

    try:
        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(trials)))))
    finally:
        bar.close()
    return cast(list[Episode], episodes)  # every slot was filled: a worker that fails raises out of gather
