"""Parsing a model's reply into a move, and rendering a move back as a reply (PROTOCOL.md §6).

Strict parsing (the default) is the paper's: the first ```json fence holding `{...}` (shortest
match) and a closing fence; the text before the fence is the private thought; the action must
be exactly OFFER, DEAL or NO_DEAL; an OFFER needs a JSON number. Anything else is INVALID, a
pass whose message (if any was parsed) is still relayed. Unlike the reference, booleans, NaN and
infinities are not prices.

Lenient parsing accepts what a careful reader would: an upper-case or missing fence language,
actions in any case with spaces or hyphens ("no deal"), and prices written as currency strings
("$1,200.50", "2.50 EUR"). Which mode an agent used is recorded with its games.
"""

from __future__ import annotations

import enum
import json
import re
import reprlib

from bargain.game import Action, Move, is_price

STRICT_FENCE = re.compile(r"```json\s*(\{.*?\})\s*```", re.DOTALL)
LENIENT_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL | re.IGNORECASE)
_CURRENCY = re.compile(
    r"""^\s*(?:[A-Z]{3}\s*)?[$\u20ac\u00a3\u00a5]?\s*       # optional code, optional symbol
        (?P<number>-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)   # 1,200.50 or 1200.50
        \s*(?:[A-Z]{3})?\s*$""",
    re.VERBOSE | re.IGNORECASE,
)
VALID_ACTIONS = {a.value for a in (Action.OFFER, Action.DEAL, Action.NO_DEAL)}


class Parsing(enum.StrEnum):
    """How strictly replies are read; recorded with every game."""

    STRICT = "strict"
    LENIENT = "lenient"


def parse_reply(text: str | None, parsing: Parsing | str = Parsing.STRICT) -> Move:
    """Turn a raw reply into a move; a reply that breaks the format is an INVALID move."""
    lenient = parsing == Parsing.LENIENT  # a Parsing or its string value
    if not lenient and parsing != Parsing.STRICT:
        raise ValueError(f"parsing must be strict or lenient, got {parsing!r}")
    raw = text if text is not None else ""
    if not raw:
        return Move(Action.INVALID, raw=raw, error="empty reply")
    fence = (LENIENT_FENCE if lenient else STRICT_FENCE).search(raw)
    if fence is None:
        return Move(Action.INVALID, thought=raw.strip(), raw=raw, error="no ```json block holding a JSON object")
    thought = raw[: fence.start()].strip() if lenient else raw.split("```json")[0].strip()
    try:
        data = json.loads(fence.group(1))
    except (ValueError, RecursionError) as exc:  # bad JSON, too many digits, absurd nesting
        return Move(Action.INVALID, thought=thought, raw=raw, error=f"the JSON block does not parse: {exc}")
    if not isinstance(data, dict):
        return Move(Action.INVALID, thought=thought, raw=raw, error="the JSON block is not an object")
    message = _message(data.get("message"))
    action = _lenient_action(data.get("action")) if lenient else data.get("action")
    if not isinstance(action, str) or action not in VALID_ACTIONS:
        return Move(Action.INVALID, message=message, thought=thought, raw=raw,
                    error=f"action {reprlib.repr(data.get('action'))} is not one of OFFER, DEAL, NO_DEAL")
    if action != Action.OFFER:
        return Move(Action(action), message=message, thought=thought, raw=raw)
    price = data.get("offer_price")
    if lenient:
        price = _lenient_price(price)
    if not is_price(price):
        return Move(Action.INVALID, message=message, thought=thought, raw=raw,
                    error=f"an OFFER needs a finite number as offer_price, got {reprlib.repr(data.get('offer_price'))}")
    return Move(Action.OFFER, price=price, message=message, thought=thought, raw=raw)


def _message(value: object) -> str:
    """The relayed message: the reference relays any truthy value as text, and drops the rest."""
    if not value:
        return ""
    return value if isinstance(value, str) else str(value)


def _lenient_action(value: object) -> object:
    """`offer`, `No Deal`, `no-deal` -> OFFER, NO_DEAL; anything else is returned unchanged."""
    if not isinstance(value, str):
        return value
    return re.sub(r"[\s\-]+", "_", value.strip()).upper()


def _lenient_price(value: object) -> object:
    """A currency string such as `$1,200.50` or `2.50 EUR` as a float; anything else unchanged."""
    if not isinstance(value, str):
        return value
    match = _CURRENCY.match(value)
    return float(match.group("number").replace(",", "")) if match else value


def render_reply(thought: str, message: str, action: Action, price: float | None) -> str:
    """A move written in the reply format, for moves that did not come from a model (tactics, people)."""
    data: dict[str, object] = {"message": message, "action": action.value}
    if action is Action.OFFER:
        data["offer_price"] = price
    # Backticks are escaped so that a message holding ``` cannot close the fence early.
    block = json.dumps(data, indent=2, ensure_ascii=False).replace("`", "\\u0060")
    return f"{thought}\n\n```json\n{block}\n```" if thought else f"```json\n{block}\n```"
