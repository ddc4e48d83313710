"""Parsing a model's reply into a move, and rendering a move back as a reply (docs/PROTOCOL.md §6).

Strict parsing (the default) is the paper's: the first ```json fence holding `{...}` (shortest
match) and a closing fence; the text before the fence is the private thought; the action must
be exactly OFFER, DEAL or NO_DEAL; an OFFER needs a JSON number. Anything else is INVALID, a
pass whose message (if any was parsed) is still relayed. Unlike the reference, booleans, NaN and
infinities are not prices.

Lenient parsing accepts what a careful reader would: an upper-case or missing fence language,
actions in any case with spaces or hyphens ("no deal"), and prices written as text the way
`bargain.engine.prices.read_price` reads a typed price ("$1,200.50", "2,50", "2.50 EUR"). Which mode an
agent used is recorded with its games.

The fence is found by `find_fence`, which gives exactly the match of the reference's regex
(the shortest `{...}` between ```json and ```, whitespace allowed on both sides) in linear time:
searched directly, that regex takes quadratic time on replies such as "```json {" repeated,
seconds for a few tens of kilobytes. Every text field of a parsed move is valid Unicode
(`valid_text`), so that a move can always be written as UTF-8: to JSON, to the database.
"""

from __future__ import annotations

import enum
import json
import re
import reprlib
from typing import NamedTuple

from bargain.engine.game import Action, Move, is_price
from bargain.engine.prices import PriceError, read_price

# Where the JSON object of a fence opens: right after the fence, its language and any whitespace.
# The lenient look-ahead changes no match (only j and J match a case-insensitive j); it makes each
# "```" of a long run of backticks fail at once. Possessive quantifiers: giving back cannot help.
_STRICT_OPENING = re.compile(r"```json\s*+\{")
_LENIENT_OPENING = re.compile(r"```(?=[\s{jJ])(?:[jJ](?i:son))?+\s*+\{")
# Where it closes: a "}", any whitespace, a fence.
_CLOSING = re.compile(r"\}\s*+```")
_SURROGATE = re.compile("[\ud800-\udfff]")
VALID_ACTIONS = {a.value for a in (Action.OFFER, Action.DEAL, Action.NO_DEAL)}


class Parsing(enum.StrEnum):
    """How strictly replies are read; recorded with every game."""

    STRICT = "strict"
    LENIENT = "lenient"


class Fence(NamedTuple):
    """A fenced JSON object in a reply: the span of the whole fence and the object's text."""

    start: int
    end: int
    body: str


def find_fence(text: str, lenient: bool = False) -> Fence | None:
    """The first fenced `{...}`, exactly where the reference's regex finds it, in linear time.

    The regex tries each start in turn: an opening pins where its object begins, and the object
    ends at the first "}" after that which whitespace and a closing fence follow. When the
    leftmost opening has no such "}", no later opening has one either (its object begins further
    on), so every later try fails: those tries, each running to the end of the text, are what
    makes the regex quadratic.
    """
    opening = (_LENIENT_OPENING if lenient else _STRICT_OPENING).search(text)
    if opening is None:
        return None
    closing = _CLOSING.search(text, opening.end())
    if closing is None:
        return None
    return Fence(opening.start(), closing.end(), text[opening.end() - 1 : closing.start() + 1])


def valid_text(text: str) -> str:
    """`text` with every surrogate code point, which UTF-8 cannot encode, replaced by U+FFFD."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def parse_reply(text: str | None, parsing: Parsing | str = Parsing.STRICT) -> Move:
    """Turn a raw reply into a move; a reply that breaks the format is an INVALID move."""
    lenient = parsing == Parsing.LENIENT  # a Parsing or its string value
    if not lenient and parsing != Parsing.STRICT:
        raise ValueError(f"parsing must be strict or lenient, got {parsing!r}")
    raw = valid_text(text) if text is not None else ""
    if not raw:
        return Move(Action.INVALID, raw=raw, error="empty reply")
    fence = find_fence(raw, lenient)
    if fence is None:
        return Move(Action.INVALID, thought=raw.strip(), raw=raw, error="no ```json block holding a JSON object")
    thought = raw[: fence.start].strip() if lenient else raw.partition("```json")[0].strip()
    try:
        data = json.loads(fence.body)
    except (ValueError, RecursionError) as exc:  # bad JSON, too many digits, absurd nesting
        return Move(Action.INVALID, thought=thought, raw=raw, error=f"the JSON block does not parse: {exc}")
    if not isinstance(data, dict):
        return Move(Action.INVALID, thought=thought, raw=raw, error="the JSON block is not an object")
    message = _message(data.get("message"))
    action = _lenient_action(data.get("action")) if lenient else data.get("action")
    if not isinstance(action, str) or action not in VALID_ACTIONS:
        return Move(
            Action.INVALID,
            message=message,
            thought=thought,
            raw=raw,
            error=f"action {reprlib.repr(data.get('action'))} is not one of OFFER, DEAL, NO_DEAL",
        )
    if action != Action.OFFER:
        return Move(Action(action), message=message, thought=thought, raw=raw)
    price = data.get("offer_price")
    if lenient:
        price = _lenient_price(price)
    if not is_price(price):
        return Move(
            Action.INVALID,
            message=message,
            thought=thought,
            raw=raw,
            error=f"an OFFER needs a finite number as offer_price, got {reprlib.repr(data.get('offer_price'))}",
        )
    return Move(Action.OFFER, price=price, message=message, thought=thought, raw=raw)


def _message(value: object) -> str:
    """The relayed message: the reference relays any truthy value as text, and drops the rest."""
    if not value:
        return ""
    return valid_text(value if isinstance(value, str) else str(value))


def _lenient_action(value: object) -> object:
    """`offer`, `No Deal`, `no-deal` -> OFFER, NO_DEAL; anything else is returned unchanged."""
    if not isinstance(value, str):
        return value
    return re.sub(r"[\s\-]+", "_", value.strip()).upper()


def _lenient_price(value: object) -> object:
    """A price written as text (`$1,200.50`, `2,50`, `2.50 EUR`) as a float; anything else unchanged."""
    if not isinstance(value, str):
        return value
    try:
        return read_price(value)
    except PriceError:
        return value


def render_reply(thought: str, message: str, action: Action, price: float | None) -> str:
    """A move written in the reply format, for moves that did not come from a model (tactics, people)."""
    data: dict[str, object] = {"message": message, "action": action.value}
    if action is Action.OFFER:
        data["offer_price"] = price
    # Backticks are escaped so that a message holding ``` cannot close the fence early.
    block = json.dumps(data, indent=2, ensure_ascii=False).replace("`", "\\u0060")
    return f"{thought}\n\n```json\n{block}\n```" if thought else f"```json\n{block}\n```"
