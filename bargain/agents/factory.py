"""What builds an arm's agents: a spec or an `Arm` resolved once, and a fresh agent per game from the game's seed,
so that an agent with its own random generator plays the same moves whatever order concurrent games run in."""

from __future__ import annotations

from collections.abc import Callable

from bargain.agents.agent import Agent, Side
from bargain.agents.arms import Arm, resolve
from bargain.agents.backends import Backends
from bargain.agents.llm import LLMAgent
from bargain.agents.tactics import TACTICS


def agent_factory(spec: str, backends: Backends | None = None, side: Side = Side()) -> Callable[[int], Agent]:
    """Resolve a spec once; the result builds a fresh agent per game from the game's seed (see `arm_factory`)."""
    return arm_factory(resolve(spec), backends, side)


def arm_factory(arm: Arm, backends: Backends | None = None, side: Side = Side()) -> Callable[[int], Agent]:
    """What builds a fresh agent of `arm` per game from the game's seed.

    Tactics need nothing else; model arms get their backend from `backends`.
    """
    if arm.kind == "tactic":
        return TACTICS[arm.name]
    backend = (backends or Backends()).for_arm(arm)
    return lambda seed: LLMAgent(
        arm,
        backend,
        side.sampling,
        side.parsing,
        side.prompt_version,
        side.reask,
        opponent_is_person=side.opponent_is_person,
    )


def make_agent(spec: str, seed: int) -> Agent:
    """A fresh scripted agent for one game (model arms need `agent_factory` with backends)."""
    return agent_factory(spec)(seed)
