"""The rules: moves, rounds, resolution and termination in both modes (docs/PROTOCOL.md §3, §6-7).

A pure state machine in the spirit of OpenSpiel's `State`: `current_players`, `legal_actions`,
`apply_action` (sequential) / `apply_actions` (simultaneous), `is_terminal`, `returns`, and
`observation(role)`, which applies the information condition and is the only way a prompt, a UI
or an API learns anything about a game. Every applied move is appended to a log; replaying the
log rebuilds an equal state. No I/O, no clock, no randomness: agents and episodes live elsewhere.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from bargain.engine.outcome import Outcome, settle
from bargain.engine.trial import ROLES, Condition, Mode, Role, Trial

SANITY_FACTOR = 5.0  # training-time check: an offer outside [v_S / 5, 5 v_B] is INVALID


class Action(enum.StrEnum):
    """What a move does. INVALID is a pass: the round still counts, its message is still relayed."""

    OFFER = "OFFER"
    DEAL = "DEAL"
    NO_DEAL = "NO_DEAL"
    INVALID = "INVALID"


# What the prompt offers a side to move: DEAL exists only in sequential mode (docs/PROTOCOL.md §4).
_LEGAL = {
    Mode.SIMULTANEOUS: (Action.OFFER, Action.NO_DEAL),
    Mode.SEQUENTIAL: (Action.OFFER, Action.DEAL, Action.NO_DEAL),
}


class GameError(ValueError):
    """A call the rules do not allow; the message says what was wrong and what to do instead."""


class GameOverError(GameError):
    """A move was applied to a game that has already ended."""


class OutOfTurnError(GameError):
    """A move came from the wrong side, or in the wrong way for the game's mode."""


class _MoveFields(NamedTuple):
    action: Action
    price: float | None
    message: str
    thought: str
    raw: str | None
    error: str | None


class Move(_MoveFields):
    """One side's move: an action, a price for OFFER, a public message and a private thought.

    `raw` keeps a model's whole reply; `error` says why a move is INVALID (unparseable reply,
    failed sanity check) so that records can tell a deliberate pass from a broken one.
    Immutable and checked on construction. Like the views, a named tuple: the engine makes
    several per round and its speed (benchmarks/) rests on them being cheap.
    """

    __slots__ = ()

    def __new__(
        cls,
        action: Action,
        price: float | None = None,
        message: str = "",
        thought: str = "",
        raw: str | None = None,
        error: str | None = None,
    ) -> Move:
        if action.__class__ is not Action:
            raise GameError(f"a move's action must be an Action, got {action!r}")
        if action is Action.OFFER:
            if not (price.__class__ is float and math.isfinite(price) or is_price(price)):
                raise GameError(f"an OFFER needs a finite number as its price, got {price!r}")
        elif price is not None:
            raise GameError(f"only an OFFER carries a price; {action} got {price!r}")
        if message.__class__ is not str or thought.__class__ is not str:
            raise GameError("a move's message and thought must be strings")
        return tuple.__new__(cls, (action, price, message, thought, raw, error))

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return {
            "action": self.action.value,
            "price": self.price,
            "message": self.message,
            "thought": self.thought,
            "raw": self.raw,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> Move:
        """Inverse of `to_dict`."""
        return cls(
            Action(data["action"]),
            data.get("price"),
            data.get("message", ""),
            data.get("thought", ""),
            data.get("raw"),
            data.get("error"),
        )


def is_price(value: object) -> bool:
    """True for a finite int or float that is not a bool (JSON `true` is not a price).

    An integer too large for a float is not a price either: the rules do float arithmetic.
    """
    if value.__class__ is float:
        return math.isfinite(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


class Turn(NamedTuple):
    """A move as it was applied: in which round, by whom, and the move's fields.

    The move log holds these. A side's observation holds its own turns as they are and the
    opponent's with the private fields (thought, raw reply, error) blanked to None.
    """

    round: int
    role: Role
    action: Action
    price: float | None
    message: str
    thought: str | None
    raw: str | None
    error: str | None

    @property
    def move(self) -> Move:
        """The move itself (private fields as this record holds them)."""
        return Move(self.action, self.price, self.message, self.thought or "", self.raw, self.error)

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return {"round": self.round, "role": self.role.value, **self.move.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping) -> Turn:
        """Inverse of `to_dict`."""
        return cls.of(int(data["round"]), Role(data["role"]), Move.from_dict(data))

    @classmethod
    def of(cls, round_: int, role: Role, move: Move) -> Turn:
        """The record of `move` played by `role` in `round_`."""
        return cls(round_, role, *move)


class Observation(NamedTuple):
    """Everything one side may know, and nothing more (docs/PROTOCOL.md §3).

    `other_price` is the other side's reservation price when the condition tells it, else None;
    `other_prior` is this side's prior on it when it is not told; `prior_on_me` is the other
    side's prior on this side's price when the other side is not told it. Immutable; a named
    tuple rather than a frozen dataclass because a game builds one per side per turn and the
    engine's speed (benchmarks/) rests on it.
    """

    role: Role
    condition: Condition
    mode: Mode
    max_rounds: int
    product_name: str
    product_description: str
    persona: str
    reservation_price: float
    other_price: float | None
    other_prior: tuple[float, float] | None
    prior_on_me: tuple[float, float] | None
    round: int
    history: tuple[Turn, ...]
    to_move: bool
    legal_actions: tuple[Action, ...]
    terminal: bool
    deal_price: float | None

    @property
    def other_bounds(self) -> tuple[float, float]:
        """Where the other side's reservation price lies as far as this side knows: the price itself (as both
        bounds) when it is told, else the prior's range."""
        if self.other_price is not None:
            return self.other_price, self.other_price
        if self.other_prior is None:
            raise GameError("an observation tells either the other side's price or a prior on it")
        return self.other_prior

    def last_offer_from(self, role: Role) -> float | None:
        """The latest valid offer price of `role` in this view, if any."""
        for turn in reversed(self.history):
            if turn.role is role and turn.price is not None:
                return turn.price
        return None


@dataclass(slots=True)
class GameState:
    """The full state of one game. Only `observation(role)` may be shown to a side.

    Build it with `new_initial_state` or `replay`; each side's view of the record is kept
    up to date as moves are applied, so an observation costs no more than a tuple.
    """

    trial: Trial
    sanity_check: bool = False
    turns: list[Turn] = field(default_factory=list, init=False)
    round: int = field(default=1, init=False)
    deal_price: float | None = field(default=None, init=False)
    end_round: int | None = field(default=None, init=False)
    _seen: dict[Role, list[Turn]] = field(init=False, repr=False, compare=False)
    _facts: dict[Role, tuple] = field(init=False, repr=False, compare=False)
    _players: tuple[Role, ...] = field(init=False, repr=False, compare=False)
    _legal: tuple[Action, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._legal = _LEGAL[self.trial.mode]
        self._seen = {Role.BUYER: [], Role.SELLER: []}
        self._facts = {role: self._private_facts(role) for role in ROLES}
        self._players = self._players_now()

    def _private_facts(self, role: Role) -> tuple:
        """The fixed part of `role`'s observation, with the information condition applied."""
        trial, scenario = self.trial, self.trial.scenario
        knows = trial.condition.knows_other_price(role)
        other_knows = trial.condition.knows_other_price(role.other)
        return (
            role,
            trial.condition,
            trial.mode,
            trial.max_rounds,
            scenario.product_name,
            scenario.product_description,
            scenario.persona(role),
            trial.reservation(role),
            trial.reservation(role.other) if knows else None,
            None if knows else scenario.price_range(role.other),
            None if other_knows else scenario.price_range(role),
        )

    # --- queries ---------------------------------------------------------------------------

    def is_terminal(self) -> bool:
        """Whether the game has ended (deal, walk-away, or rounds exhausted)."""
        return self.end_round is not None

    def current_players(self) -> tuple[Role, ...]:
        """Who must move now: both sides (simultaneous), one side (sequential), none (ended)."""
        return self._players

    def _players_now(self) -> tuple[Role, ...]:
        if self.is_terminal():
            return ()
        if self.trial.mode is Mode.SIMULTANEOUS:
            return (Role.BUYER, Role.SELLER)
        first = self.trial.first_actor
        return (first if self.round % 2 == 1 else first.other,)

    def legal_actions(self, role: Role) -> tuple[Action, ...]:
        """The actions the prompt offers `role` now (INVALID is always accepted as a pass)."""
        return self._legal if role in self._players else ()

    def last_offer(self, role: Role) -> float | None:
        """The latest valid offer of `role` in the whole game, if any."""
        return next((t.price for t in reversed(self.turns) if t.role is role and t.action is Action.OFFER), None)

    def observation(self, role: Role) -> Observation:
        """The view of `role`: its own facts, what its condition reveals, the public record."""
        to_move = role in self._players
        return tuple.__new__(
            Observation,
            (
                *self._facts[role],
                self.round,
                tuple(self._seen[role]),
                to_move,
                self._legal if to_move else (),
                self.end_round is not None,
                self.deal_price,
            ),
        )

    def outcome(self) -> Outcome:
        """Utilities and benchmarks of the ended game (docs/PROTOCOL.md §8)."""
        if self.end_round is None:
            raise GameError("the game has not ended yet; outcome() is only defined at the end")
        invalid = {r: sum(1 for t in self.turns if t.role is r and t.action is Action.INVALID) for r in ROLES}
        return settle(self.trial, self.deal_price, self.end_round, invalid[Role.BUYER], invalid[Role.SELLER])

    def returns(self) -> dict[Role, float]:
        """Normalised utility of each side (the RL reward); zero until the game ends."""
        if not self.is_terminal():
            return {Role.BUYER: 0.0, Role.SELLER: 0.0}
        outcome = self.outcome()
        return {Role.BUYER: outcome.buyer_norm_utility, Role.SELLER: outcome.seller_norm_utility}

    # --- moves -----------------------------------------------------------------------------

    def apply_actions(self, moves: Mapping[Role, Move]) -> None:
        """Simultaneous mode: both sides' moves of the current round, then resolve the round."""
        self._check_open()
        if self.trial.mode is not Mode.SIMULTANEOUS:
            raise OutOfTurnError("this game is sequential: apply one move at a time with apply_action")
        if len(moves) != 2 or Role.BUYER not in moves or Role.SELLER not in moves:
            raise OutOfTurnError(f"a simultaneous round needs a move from both sides, got {sorted(moves)}")
        buyer = self._record(Role.BUYER, moves[Role.BUYER])
        seller = self._record(Role.SELLER, moves[Role.SELLER])
        bid, ask = buyer.price, seller.price  # a price is there exactly when the move is an OFFER
        if bid is not None and ask is not None and bid >= ask:
            self._end((bid + ask) / 2, self.round)
        elif Action.NO_DEAL in (buyer.action, seller.action):
            self._end(None, self.trial.max_rounds)
        else:
            self._next_round()

    def apply_action(self, move: Move, role: Role | None = None) -> None:
        """Sequential mode: the current actor's move (pass `role` to have it checked)."""
        self._check_open()
        if self.trial.mode is not Mode.SEQUENTIAL:
            raise OutOfTurnError("this game is simultaneous: apply both moves together with apply_actions")
        (actor,) = self.current_players()
        if role is not None and role is not actor:
            raise OutOfTurnError(f"it is the {actor}'s turn in round {self.round}, not the {role}'s")
        move = self._record(actor, move)
        if move.action is Action.DEAL:
            offer = self.last_offer(actor.other)
            self._end(offer, self.round if offer is not None else self.trial.max_rounds)
        elif move.action is Action.NO_DEAL:
            self._end(None, self.trial.max_rounds)
        else:
            self._next_round()

    def _check_open(self) -> None:
        if self.is_terminal():
            raise GameOverError(f"the game ended in round {self.end_round}; no more moves can be applied")

    def _record(self, role: Role, move: Move) -> Move:
        if move.__class__ is not Move:
            raise GameError(f"expected a Move for the {role}, got {type(move).__name__}")
        if self.sanity_check:
            move = self._sanity_checked(move)
        # tuple.__new__ is NamedTuple._make without its call overhead: this runs on every move.
        turn = tuple.__new__(Turn, (self.round, role, *move))
        self.turns.append(turn)
        self._seen[role].append(turn)  # a side's own turns are shown as they are
        self._seen[role.other].append(tuple.__new__(Turn, (*turn[:5], None, None, None)))  # private fields blanked
        return move

    def _sanity_checked(self, move: Move) -> Move:
        """Training-time check (docs/PROTOCOL.md §7): an implausible offer becomes INVALID."""
        if move.price is None:  # not an OFFER
            return move
        lo, hi = self.trial.seller_price / SANITY_FACTOR, self.trial.buyer_price * SANITY_FACTOR
        if move.price > 0 and lo <= move.price <= hi:
            return move
        return move._replace(
            action=Action.INVALID, price=None, error=f"offer {move.price} outside the sanity range [{lo:g}, {hi:g}]"
        )

    def _next_round(self) -> None:
        if self.round >= self.trial.max_rounds:
            self._end(None, self.trial.max_rounds)
        else:
            self.round += 1
            self._players = self._players_now()

    def _end(self, price: float | None, rounds: int) -> None:
        self.deal_price = price
        self.end_round = rounds
        self._players = ()

    # --- serialisation ---------------------------------------------------------------------

    def to_dict(self) -> dict:
        """The trial, the rules flag and the move log: all that is needed to rebuild the state."""
        return {
            "trial": self.trial.to_dict(),
            "sanity_check": self.sanity_check,
            "turns": [t.to_dict() for t in self.turns],
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> GameState:
        """Rebuild a state by replaying its move log through the rules."""
        return replay(
            Trial.from_dict(data["trial"]),
            [Turn.from_dict(t) for t in data["turns"]],
            sanity_check=bool(data.get("sanity_check", False)),
        )


def new_initial_state(trial: Trial, sanity_check: bool = False) -> GameState:
    """A fresh game for `trial` (round 1, no moves)."""
    return GameState(trial=trial, sanity_check=sanity_check)


def replay(trial: Trial, turns: list[Turn], sanity_check: bool = False) -> GameState:
    """Apply a move log to a fresh state; raises GameError if the log breaks the rules."""
    state = new_initial_state(trial, sanity_check)
    pending: dict[Role, Move] = {}
    for turn in turns:
        if turn.round != state.round:
            raise GameError(f"log has a round-{turn.round} move while the game is in round {state.round}")
        if trial.mode is Mode.SEQUENTIAL:
            state.apply_action(turn.move, turn.role)
            continue
        if turn.role in pending:
            raise GameError(f"log has two {turn.role} moves in round {turn.round}")
        pending[turn.role] = turn.move
        if len(pending) == 2:
            state.apply_actions(pending)
            pending = {}
    if pending:
        raise GameError(f"log ends in the middle of round {state.round}: one side's move is missing")
    return state


def replay_pending(trial: Trial, turns: list[Turn]) -> tuple[GameState, Turn | None]:
    """The game as a stored move log makes it, and the lone move of a simultaneous round whose other move is not in
    yet (played and kept, not applied: the rules apply a simultaneous round's two moves together)."""
    pending = None
    if trial.mode is Mode.SIMULTANEOUS and turns and sum(t.round == turns[-1].round for t in turns) == 1:
        turns, pending = turns[:-1], turns[-1]
    return replay(trial, turns), pending
