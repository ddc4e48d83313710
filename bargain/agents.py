"""One agent interface for every player: take an observation, return a move (asynchronously).

A tactic computes its move, a model agent asks a backend, a person's move arrives from the UI:
the episode loop cannot tell them apart. Agents are named by a spec string such as
`tactic:boulware`; `make_agent` builds a fresh one per game, so an agent with its own random
generator plays the same moves whatever order concurrent games run in.
"""

from __future__ import annotations

from typing import Callable, Protocol, runtime_checkable

from bargain.game import Move, Observation
from bargain.tactics import TACTICS


@runtime_checkable
class Agent(Protocol):
    """Anything that can sit at the table.

    An agent whose moves are computed without waiting on anything may set `instant = True`;
    the episode loop then skips the machinery of running both sides concurrently.
    """

    async def act(self, obs: Observation) -> Move:
        """The move for the current turn, chosen from `obs` alone."""
        ...


class AgentSpecError(ValueError):
    """An agent spec that names nothing we can build (the message lists what exists)."""


def parse_spec(spec: str) -> tuple[str, str]:
    """Split `kind:name` into its parts (`tactic:boulware` -> (`tactic`, `boulware`))."""
    kind, sep, name = spec.partition(":")
    if not sep or not name:
        raise AgentSpecError(f"bad agent {spec!r}: expected KIND:NAME such as tactic:boulware")
    return kind, name


def agent_factory(spec: str) -> Callable[[int], Agent]:
    """Resolve a spec once; the result builds a fresh agent per game from the game's seed."""
    kind, name = parse_spec(spec)
    if kind != "tactic":
        raise AgentSpecError(f"unknown agent kind {kind!r} in {spec!r}; available: tactic:NAME")
    if name not in TACTICS:
        raise AgentSpecError(f"unknown tactic {name!r}; choose from {', '.join(TACTICS)}")
    return TACTICS[name]


def make_agent(spec: str, seed: int) -> Agent:
    """A fresh agent for one game; `seed` seeds any randomness it has."""
    return agent_factory(spec)(seed)
