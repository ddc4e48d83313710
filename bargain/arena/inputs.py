"""What a person or a program may send the arena, checked before anything is stored or played.

Every request parameter is hostile until it has passed through here: its type, its range and
its length, each refused with one plain sentence that says what to send instead. Nothing a
caller sends picks an endpoint, a seed or a file: opponents are checked against what the server
was configured with (bargain.arena.controller), and the seed is always drawn by the server.
Prices are read by bargain.engine.prices, the one price reader of the project.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass
from typing import TypeVar

from bargain.engine.game import Action, GameState, Move
from bargain.engine.prices import PriceError, read_price
from bargain.engine.prompts import PromptVersion
from bargain.engine.trial import Condition, Mode, Role

MAX_MESSAGE = 500  # characters in one public message
MAX_PRICE_TEXT = 40  # characters of a typed price
MAX_ROUNDS = 20
PRICE_LIMIT = 1e9  # no price anywhere is larger; a scenario's own bound is tighter (ABSURD_FACTOR)
ABSURD_FACTOR = 100  # an offer above this many times the largest price of the scenario's ranges is a typo
DEFAULT_SOURCE = "low"  # random scenarios from the low tier, the adapters' training tier
SOURCES = ("low", "medium", "high", "very_high", "train", "val", "test")
_SCENARIO_REF = re.compile(r"(?:low|medium|high|very_high):[0-9]{1,7}", re.ASCII)
_GAME_ID = re.compile(r"[0-9a-f]{32}", re.ASCII)
_PLAYER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,63}", re.ASCII)  # no = + - @ first: inert in spreadsheets
_START_ID = re.compile(r"[A-Za-z0-9_-]{16,64}", re.ASCII)
# Text a person may send: no control characters but line breaks and tabs (PostgreSQL refuses NUL;
# the others only hide text), and no lone surrogates (they cannot be stored or sent as UTF-8).
_UNSAFE_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
# Removed from a message before it is checked, stored or shown: bidi controls reorder what is shown (text read
# one way, stored another) and zero-width characters hide in it; neither carries anything a person means to say.
_INVISIBLE = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u200b-\u200d\u2060\ufeff]")

E = TypeVar("E", bound=enum.Enum)


class ArenaError(ValueError):
    """Something the person (or an API caller) asked for that cannot be done; the text says why."""


@dataclass(frozen=True)
class Setup:
    """What a person chooses before a game (the seed is the server's: only the controller's own callers,
    such as tests and command-line tools, may replay one)."""

    role: Role = Role.BUYER
    arm: str = "tactic:linear"
    condition: Condition = Condition.BOTH_UNAWARE
    mode: Mode = Mode.SIMULTANEOUS
    rounds: int = 4
    scenario: str = DEFAULT_SOURCE  # a tier or split to draw from, or a reference TIER:INDEX
    prompt_version: PromptVersion = PromptVersion.TRAIN
    seed: int | None = None
    first_actor: Role = Role.BUYER  # who opens in sequential mode


def shown(value: object) -> str:
    """A caller's value, short and safe to quote in a message."""
    text = _UNSAFE_TEXT.sub("?", value if isinstance(value, str) else repr(value))
    text = text[:40] + ("..." if len(text) > 40 else "")
    return repr(text) if isinstance(value, str) else text


def choice(name: str, value: object, options: type[E]) -> E:
    """One of an enum's values, given as its exact string."""
    allowed = [o.value for o in options]
    if not isinstance(value, str) or value not in allowed:
        raise ArenaError(f"{name} must be one of {', '.join(map(str, allowed))}; got {shown(value)}")
    return options(value)


def whole_number(name: str, value: object, low: int, high: int) -> int:
    """An integer in [low, high]: an int, an integral float (JSON clients send 4.0) or ASCII digits."""
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and re.fullmatch(r"[0-9]{1,6}", value.strip(), re.ASCII):
        number = int(value.strip())
    if number is None:
        raise ArenaError(f"{name} must be a whole number; got {shown(value)}")
    if not low <= number <= high:
        raise ArenaError(f"{name} must be between {low} and {high}; got {number}")
    return number


def number(name: str, value: object, low: float, high: float) -> float:
    """A finite number in [low, high]: an int or a float (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ArenaError(f"{name} must be a number; got {shown(value)}")
    if not low <= value <= high:
        raise ArenaError(f"{name} must be between {low:g} and {high:g}; got {value:g}")
    return float(value)


def game_id(value: object) -> str:
    """A game id as the server makes them (32 hex digits)."""
    if not isinstance(value, str) or not _GAME_ID.fullmatch(value):
        raise ArenaError("no such game: start a new one")
    return value


def player_id(value: object) -> str | None:
    """An optional player id: 1-64 ASCII letters, digits or . _ : @ + -, starting with a letter or digit."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _PLAYER_ID.fullmatch(value):
        raise ArenaError(
            f"the player id must be 1 to 64 letters, digits or . _ : @ + - , starting with a letter or "
            f"digit; got {shown(value)}"
        )
    return value


def start_id(value: object) -> str | None:
    """An optional start id: 16-64 ASCII letters, digits, _ or -, drawn at random by the caller for one start, and
    sent again with that start when its answer was lost (so that it is not made twice)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _START_ID.fullmatch(value):
        raise ArenaError(
            f"the start id must be 16 to 64 letters, digits, _ or -, drawn at random for each start; got {shown(value)}"
        )
    return value


def scenario(value: object) -> str:
    """A tier or split to draw from, or one scenario as TIER:INDEX."""
    if not isinstance(value, str) or not (value in SOURCES or _SCENARIO_REF.fullmatch(value)):
        raise ArenaError(
            f"the scenario must be one of {', '.join(SOURCES)} or TIER:INDEX (e.g. low:12); got {shown(value)}"
        )
    return value


def message(value: object) -> str:
    """A public message: text of at most MAX_MESSAGE characters once trimmed, nothing that cannot be shown.

    Bidi controls and zero-width characters are removed rather than refused: they are invisible, so a
    person could not see what to retype, and losing them changes at most how some text is drawn (a joined
    emoji, a Persian word's shaping), never what it says. The limit counts what is left. (A model agent
    gets the message quoted besides: bargain.engine.prompts.quoted.)
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ArenaError("the message must be text")
    text = _INVISIBLE.sub("", value).strip()
    if len(text) > MAX_MESSAGE:
        raise ArenaError(f"the message is {len(text)} characters long; the limit is {MAX_MESSAGE}")
    if _UNSAFE_TEXT.search(text):
        raise ArenaError("the message holds control characters or broken Unicode: retype it as plain text")
    return text


def parse_price(value: object) -> float:
    """A price typed by a person: a positive finite number of sensible size in cents, or a clear ArenaError."""
    if isinstance(value, bool):
        raise ArenaError("the price must be a number")
    if isinstance(value, (int, float)):
        number = float(value)
    elif value is None or (isinstance(value, str) and not value.strip()):
        raise ArenaError("enter a price to make an offer")
    elif not isinstance(value, str):
        raise ArenaError("the price must be a number")
    elif len(value) > MAX_PRICE_TEXT:
        raise ArenaError(f"the price is {len(value)} characters long: type a number such as 2.50")
    else:
        try:
            number = read_price(value)
        except PriceError as exc:
            raise ArenaError(str(exc)) from None
    if not math.isfinite(number):
        raise ArenaError("the price must be a finite number")
    if number > PRICE_LIMIT:
        raise ArenaError("that price is absurdly large")
    number = round(number, 2)  # prices are in cents
    if number <= 0:
        raise ArenaError("the price must be at least 0.01")
    return number


def human_move(action: object, price: object, text: object) -> Move:
    """Validate what a person submitted and make it a move (nothing is stored on an error)."""
    said = message(text)
    if not isinstance(action, str) or action.upper() not in {a.value for a in Action}:
        raise ArenaError(f"unknown action {shown(action)}: use OFFER, DEAL or NO_DEAL")
    kind = Action(action.upper())
    if kind is Action.INVALID:
        raise ArenaError("choose OFFER, DEAL or NO_DEAL")
    if kind is Action.OFFER:
        return Move(Action.OFFER, price=parse_price(price), message=said)
    return Move(kind, message=said)


def allowed(state: GameState, role: Role, move: Move) -> None:
    """Refuse (an ArenaError saying why) a move the rules do not allow `role` now, or an offer far beyond anything
    the game's item is worth: the same sentences whoever the other side is, a program or a person."""
    legal = state.legal_actions(role)
    if move.action not in legal:
        raise ArenaError(f"{move.action.value} is not possible now (possible: {', '.join(a.value for a in legal)})")
    ranges = (state.trial.scenario.price_range(Role.BUYER), state.trial.scenario.price_range(Role.SELLER))
    if move.price is not None and move.price > ABSURD_FACTOR * max(high for _, high in ranges):
        raise ArenaError(f"{move.price:,.2f} is far more than anything in this game is worth: check the number")


def setup(
    role: object,
    opponent: object,
    condition: object,
    mode: object,
    rounds: object,
    source: object,
    prompt_version: object,
    first_actor: object,
) -> Setup:
    """A game's setup from request parameters (no seed: the server draws it)."""
    if not isinstance(opponent, str) or len(opponent) > 200:
        raise ArenaError("choose an opponent offered on the page")
    return Setup(
        role=choice("role", role, Role),
        arm=opponent,
        condition=choice("condition", condition, Condition),
        mode=choice("mode", mode, Mode),
        rounds=whole_number("rounds", rounds, 1, MAX_ROUNDS),
        scenario=scenario(source),
        prompt_version=choice("prompt_version", prompt_version, PromptVersion),
        first_actor=choice("first_actor", first_actor, Role),
    )
