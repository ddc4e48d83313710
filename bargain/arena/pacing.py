"""A human-like pace for a program's replies, so that how fast the other side answers does not tell a person from a
program (a study asks its participants which it was).

A paced agent hands over its move no sooner than a delay drawn afresh for each move from a lognormal distribution
(its median and spread set in the study file), whatever the time its model took: a tactic's instant move waits the
whole delay, a slow model's move waits what is left of it. The delay drawn is recorded with the move. Draws are
seeded by the game and the turn, so that a game taken over by another process paces the same move the same way.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from dataclasses import asdict, dataclass

from bargain.engine.game import Move, Observation


@dataclass(frozen=True)
class Pace:
    """The delays a paced agent's replies take: lognormal with this median and spread (the sigma of its log;
    0: always the median), never more than `max_s`."""

    median_s: float
    spread: float
    max_s: float

    def draw(self, rng: random.Random) -> float:
        return min(self.max_s, self.median_s * math.exp(rng.gauss(0.0, self.spread)))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Pace:
        return cls(float(data["median_s"]), float(data["spread"]), float(data["max_s"]))


class Paced:
    """An agent whose moves are handed over at `pace`; `paced` holds the delay drawn for each (round, role)."""

    instant = False

    def __init__(self, agent, pace: Pace, seed: int):
        self.agent, self.pace, self.seed = agent, pace, seed
        self.paced: dict[tuple[int, str], float] = {}

    @property
    def records(self) -> list[dict]:
        return getattr(self.agent, "records", [])

    async def act(self, obs: Observation) -> Move:
        began = time.monotonic()
        move = await self.agent.act(obs)
        delay = self.pace.draw(random.Random(f"{self.seed}:{obs.round}:{obs.role.value}"))
        await asyncio.sleep(max(0.0, delay - (time.monotonic() - began)))
        self.paced[(obs.round, obs.role.value)] = delay
        return move
