"""What a game is set up with: roles, information conditions, modes, a scenario and a trial.

docs/PROTOCOL.md §1-3 and §7. A `Trial` is everything the rules need to start a game: one scenario,
the two reservation prices drawn for it, the information condition and the rules (mode, rounds,
first actor). It is plain data, shared by the engine, the prompts, the store and the trainer.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


class Role(enum.StrEnum):
    """A side of the table."""

    BUYER = "buyer"
    SELLER = "seller"

    @property
    def other(self) -> Role:
        """The opposite side."""
        return _OTHER[self]

    @property
    def title(self) -> str:  # type: ignore[override]  # a role's name, where str.title would capitalise a value
        """`Buyer` or `Seller`, as the per-turn user messages name the opponent."""
        return _TITLE[self]


_OTHER = {Role.BUYER: Role.SELLER, Role.SELLER: Role.BUYER}
_TITLE = {Role.BUYER: "Buyer", Role.SELLER: "Seller"}


class Condition(enum.StrEnum):
    """Who knows the other side's reservation price ("transparency" in the paper's tables)."""

    FULL = "full"
    BUYER_UNAWARE = "buyer_unaware"
    SELLER_UNAWARE = "seller_unaware"
    BOTH_UNAWARE = "both_unaware"

    def knows_other_price(self, role: Role) -> bool:
        """Whether `role` is told the other side's exact reservation price."""
        return role not in _UNAWARE[self]


_UNAWARE = {
    Condition.FULL: (),
    Condition.BUYER_UNAWARE: (Role.BUYER,),
    Condition.SELLER_UNAWARE: (Role.SELLER,),
    Condition.BOTH_UNAWARE: (Role.BUYER, Role.SELLER),
}
ROLES = (Role.BUYER, Role.SELLER)  # iterating a tuple is much cheaper than iterating the enum


class Mode(enum.StrEnum):
    """Simultaneous (every paper experiment, the adapters' training mode) or sequential."""

    SIMULTANEOUS = "simultaneous"
    SEQUENTIAL = "sequential"


class TrialError(ValueError):
    """A trial that cannot be played (the message says which field is wrong)."""


@dataclass(frozen=True)
class Scenario:
    """One item with both personas and both reservation-price ranges.

    Range bounds keep the type they have in the JSON (int or float) because prompts render
    them with `str()`: `6000` and `3750.0` must stay as written.
    """

    tier: str
    index: int
    product_name: str
    product_description: str
    buyer_persona: str
    seller_persona: str
    buyer_range: tuple[float, float]
    seller_range: tuple[float, float]

    @property
    def ref(self) -> str:
        """The reference `tier:index`, e.g. `low:1508`."""
        return f"{self.tier}:{self.index}"

    def persona(self, role: Role) -> str:
        """The persona text of one side."""
        return self.buyer_persona if role is Role.BUYER else self.seller_persona

    def price_range(self, role: Role) -> tuple[float, float]:
        """The range a side's reservation price is drawn from (the other side's prior on it)."""
        return self.buyer_range if role is Role.BUYER else self.seller_range

    def to_dict(self) -> dict:
        """JSON-ready fields (ranges as two-element lists, as in the dataset)."""
        return {
            "tier": self.tier,
            "index": self.index,
            "product_name": self.product_name,
            "product_description": self.product_description,
            "buyer_persona": self.buyer_persona,
            "seller_persona": self.seller_persona,
            "buyer_res_price_range": list(self.buyer_range),
            "seller_res_price_range": list(self.seller_range),
        }

    @classmethod
    def from_dict(cls, tier: str, index: int, data: Mapping) -> Scenario:
        """Build a scenario from one dataset record, checking every field is there."""
        keys = (
            "product_name",
            "product_description",
            "buyer_persona",
            "seller_persona",
            "buyer_res_price_range",
            "seller_res_price_range",
        )
        missing = [k for k in keys if k not in data]
        if missing:
            raise TrialError(f"scenario {tier}:{index} lacks {', '.join(missing)}")
        return cls(
            tier=tier,
            index=index,
            product_name=str(data["product_name"]),
            product_description=str(data["product_description"]),
            buyer_persona=str(data["buyer_persona"]),
            seller_persona=str(data["seller_persona"]),
            buyer_range=_price_range(data["buyer_res_price_range"], f"{tier}:{index} buyer"),
            seller_range=_price_range(data["seller_res_price_range"], f"{tier}:{index} seller"),
        )


def _price_range(value: Sequence, what: str) -> tuple[float, float]:
    if len(value) != 2:
        raise TrialError(f"scenario {what} range must have two bounds, got {value!r}")
    lo, hi = value
    if not (_finite(lo) and _finite(hi) and lo <= hi):
        raise TrialError(f"scenario {what} range [{lo}, {hi}] is not an interval of finite numbers")
    return (lo, hi)


def _finite(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


@dataclass(frozen=True)
class Trial:
    """One game's set-up: the scenario, v_B and v_S, the condition and the rules."""

    trial_id: int
    scenario: Scenario
    condition: Condition
    buyer_price: float
    seller_price: float
    max_rounds: int = 4
    mode: Mode = Mode.SIMULTANEOUS
    first_actor: Role = Role.BUYER

    def __post_init__(self) -> None:
        if not (_finite(self.buyer_price) and _finite(self.seller_price)):
            raise TrialError(f"reservation prices must be finite numbers, got {self.buyer_price}, {self.seller_price}")
        if not isinstance(self.max_rounds, int) or self.max_rounds < 1:
            raise TrialError(f"max_rounds must be a positive integer, got {self.max_rounds!r}")
        for name, kind in (("condition", Condition), ("mode", Mode), ("first_actor", Role)):
            if not isinstance(getattr(self, name), kind):
                raise TrialError(f"{name} must be a {kind.__name__}, got {getattr(self, name)!r}")

    def reservation(self, role: Role) -> float:
        """A side's reservation price (v_B for the buyer, v_S for the seller)."""
        return self.buyer_price if role is Role.BUYER else self.seller_price

    @property
    def surplus(self) -> float:
        """S = v_B - v_S, the size of the pie (can be 0 after rounding; never divide by it blindly)."""
        return self.buyer_price - self.seller_price

    def to_dict(self) -> dict:
        """JSON-ready fields; `from_dict` rebuilds an equal trial."""
        return {
            "trial_id": self.trial_id,
            "scenario": self.scenario.to_dict(),
            "condition": self.condition.value,
            "buyer_price": self.buyer_price,
            "seller_price": self.seller_price,
            "max_rounds": self.max_rounds,
            "mode": self.mode.value,
            "first_actor": self.first_actor.value,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> Trial:
        """Inverse of `to_dict`."""
        scenario = data["scenario"]
        return cls(
            trial_id=int(data["trial_id"]),
            scenario=Scenario.from_dict(scenario["tier"], int(scenario["index"]), scenario),
            condition=Condition(data["condition"]),
            buyer_price=data["buyer_price"],
            seller_price=data["seller_price"],
            max_rounds=int(data["max_rounds"]),
            mode=Mode(data["mode"]),
            first_actor=Role(data["first_actor"]),
        )
