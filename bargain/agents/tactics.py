"""Scripted negotiators for baselines, tests and benchmarks.

Time-dependent concession tactics (Faratin, Sierra & Jennings 1998): the offer moves from an
anchor to the side's own reservation price as alpha(t) = t ** (1 / e), t = (r - 1) / (R - 1):
Boulware (e = 0.2) holds firm until late, linear (e = 1), Conceder (e = 2) gives ground early.
A hardliner never leaves its anchor; tit-for-tat (Faratin's relative imitation) concedes as much
as the opponent conceded last; the random agent plays any move, for property tests.

Each tactic sees only its observation. The anchor is the most it could hope for given what it
knows: an informed side opens at the other's reservation price, an uninformed one at the
favourable end of its prior. No tactic offers beyond its own reservation price, and each
takes (sequential: DEAL; simultaneous: matches) an opponent offer at least as good as its own.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from bargain.engine.game import Action, Move, Observation
from bargain.engine.trial import Mode, Role

if TYPE_CHECKING:  # the protocol the tactics meet; agent.py imports this module
    from bargain.agents.agent import Agent


def anchor(obs: Observation) -> float:
    """The opening price: the other's reservation price if known, else the favourable prior bound."""
    lo, hi = obs.other_bounds
    return lo if obs.role is Role.BUYER else hi


def respond(obs: Observation, target: float, thought: str) -> Move:
    """Offer `target` (kept within the reservation price), or take a better standing opponent offer."""
    limit = obs.reservation_price
    buyer = obs.role is Role.BUYER
    target = round(min(target, limit) if buyer else max(target, limit), 2)
    theirs = obs.last_offer_from(Role.SELLER if buyer else Role.BUYER)
    if theirs is not None and (theirs <= target if buyer else theirs >= target):
        if obs.mode is Mode.SEQUENTIAL:
            return Move(Action.DEAL, message=f"Deal at {theirs}.", thought=thought)
        target = theirs
    return Move(Action.OFFER, price=target, message=f"I can do {target}.", thought=thought)


def _progress(obs: Observation) -> float:
    """Time t in [0, 1]: 0 in the first round, 1 in the last."""
    return 0.0 if obs.max_rounds <= 1 else (obs.round - 1) / (obs.max_rounds - 1)


@dataclass(frozen=True)
class TimeDependent:
    """Concede from the anchor to the reservation price as t ** (1 / e)."""

    instant: ClassVar[bool] = True
    e: float
    thought: str

    async def act(self, obs: Observation) -> Move:
        """The offer for this round (or acceptance of a better standing offer)."""
        start = anchor(obs)
        return respond(obs, start + (obs.reservation_price - start) * _progress(obs) ** (1.0 / self.e), self.thought)


@dataclass(frozen=True)
class Hardliner:
    """Offer the anchor every round; take only an offer at least as good as it."""

    instant: ClassVar[bool] = True
    thought: ClassVar[str] = "Hardliner: repeat my opening price and never concede."

    async def act(self, obs: Observation) -> Move:
        """The anchor again."""
        return respond(obs, anchor(obs), self.thought)


@dataclass(frozen=True)
class TitForTat:
    """Open at the anchor, then concede exactly as much as the opponent conceded last round."""

    instant: ClassVar[bool] = True
    thought: ClassVar[str] = "Tit-for-tat: concede exactly as much as the other side conceded last."

    async def act(self, obs: Observation) -> Move:
        """Mirror the opponent's last concession."""
        mine = [t.price for t in obs.history if t.role is obs.role and t.price is not None]
        theirs = [t.price for t in obs.history if t.role is not obs.role and t.price is not None]
        if not mine:
            return respond(obs, anchor(obs), self.thought)
        conceded = abs(theirs[-1] - theirs[-2]) if len(theirs) >= 2 else 0.0
        return respond(obs, mine[-1] + (conceded if obs.role is Role.BUYER else -conceded), self.thought)


def random_move(rng: random.Random, obs: Observation) -> Move:
    """Any action (INVALID and a simultaneous-mode DEAL included); offers spread around the side's own price."""
    action = rng.choice((Action.OFFER, Action.OFFER, Action.OFFER, Action.NO_DEAL, Action.DEAL, Action.INVALID))
    if action is Action.OFFER:
        price = round(obs.reservation_price * rng.uniform(0.5, 1.5), 2)
        return Move(action, price=price, message=f"How about {price}?", thought="random")
    return Move(action, message=rng.choice(("", "Hmm.", "Let us see.")), thought="random")


@dataclass
class RandomAgent:
    """Any move at all, drawn from its own seeded generator: exercises every rule."""

    instant: ClassVar[bool] = True
    rng: random.Random

    async def act(self, obs: Observation) -> Move:
        """A random move."""
        return random_move(self.rng, obs)


def _concession(name: str, e: float, pace: str) -> TimeDependent:
    return TimeDependent(e, f"{name} (e={e}): {pace} from my opening price towards my reservation price.")


_BOULWARE = _concession("Boulware", 0.2, "hold firm, concede late")
_LINEAR = _concession("Linear", 1.0, "concede evenly")
_CONCEDER = _concession("Conceder", 2.0, "concede early")
_HARDLINER, _TIT_FOR_TAT = Hardliner(), TitForTat()

TACTICS: dict[str, Callable[[int], Agent]] = {
    "boulware": lambda seed: _BOULWARE,
    "linear": lambda seed: _LINEAR,
    "conceder": lambda seed: _CONCEDER,
    "hardliner": lambda seed: _HARDLINER,
    "tit-for-tat": lambda seed: _TIT_FOR_TAT,
    "random": lambda seed: RandomAgent(random.Random(seed)),
}
"""Scripted agents by name; each factory takes the game's seed. The deterministic tactics hold
no state, so every game shares one instance of each; the random agent gets its own generator."""
