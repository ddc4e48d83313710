"""The paper's honesty and credulity judge (docs/PROTOCOL.md §10), on any run directory.

The instrument is the paper's own (bargain/data/judge_instrument.json; MIT, Miceli-Barone,
Belle, Cohen 2026, arXiv 2605.31445): a system message, one template per non-`full` condition,
the mode descriptions and the response format. The user message is the filled template, a
newline, the public transcript and the response format. The transcript shows each round's
public moves (`  Buyer: {message} [OFFER: {price}]`, ` [NO_DEAL]`, ` [DEAL]`), leaves out turns
with an empty message, and never shows the strategy text. The judge answers a ```json block
with four scores (integers 0-4 or null); it is asked only for the informed side's honesty and
the uninformed side's credulity (`both_unaware`: all four). A reply that cannot be read, or a
score out of range, is recorded as missing, never guessed.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources

from bargain.engine.game import Action, Turn
from bargain.engine.trial import Condition, Trial

SCORES = ("seller_honesty", "buyer_honesty", "buyer_credulity", "seller_credulity")
ASKED = {
    Condition.BUYER_UNAWARE: ("seller_honesty", "buyer_credulity"),
    Condition.SELLER_UNAWARE: ("buyer_honesty", "seller_credulity"),
    Condition.BOTH_UNAWARE: SCORES,
}
_BLOCK = re.compile(r"```json\s*(\{.*?\})\s*```", re.DOTALL)


@lru_cache(maxsize=1)
def instrument() -> dict:
    """The paper's judge instrument, shipped with the package."""
    return json.loads(
        resources.files("bargain.data")
        .joinpath("judge_instrument.json")
        .read_text(encoding="utf-8")
    )


def transcript(turns: list[Turn]) -> str:
    """The public conversation, round by round, as the paper's judge saw it."""
    lines: list[str] = []
    current = None
    for turn in turns:
        if not turn.message:
            continue
        if turn.round != current:
            current = turn.round
            lines.append(f"Round {turn.round}:")
        tag = {
            Action.OFFER: f" [OFFER: {turn.price}]",
            Action.NO_DEAL: " [NO_DEAL]",
            Action.DEAL: " [DEAL]",
        }.get(turn.action, "")
        lines.append(f"  {turn.role.title}: {turn.message}{tag}")
    return "\n".join(lines)


def judge_messages(trial: Trial, turns: list[Turn]) -> list[dict]:
    """The system and user messages for one game (only games whose condition is not `full`)."""
    if trial.condition is Condition.FULL:
        raise ValueError("the judge rates only games with hidden information (not `full`)")
    spec = instrument()
    (bl, bh), (sl, sh) = trial.scenario.buyer_range, trial.scenario.seller_range
    filled = spec["templates"][trial.condition.value].format(
        item_name=trial.scenario.product_name,
        buyer_res_price=trial.buyer_price,
        seller_res_price=trial.seller_price,
        buyer_res_price_range_low=bl,
        buyer_res_price_range_high=bh,
        seller_res_price_range_low=sl,
        seller_res_price_range_high=sh,
        mode_description=spec["mode_descriptions"][trial.mode.value],
    )
    return [
        {"role": "system", "content": spec["system_message"]},
        {"role": "user", "content": filled + "\n" + transcript(turns) + spec["response_format"]},
    ]


def parse_judgment(text: str | None, condition: Condition) -> dict:
    """The asked-for scores (others None), the reasoning and why anything is missing."""
    result: dict = {score: None for score in SCORES} | {"reasoning": None, "error": None}
    match = _BLOCK.search(text or "")
    if match is None:
        result["error"] = "no ```json block in the judge's reply"
        return result
    try:
        data = json.loads(match.group(1))
    except (ValueError, RecursionError) as exc:
        result["error"] = f"the judge's JSON does not parse: {exc}"
        return result
    if not isinstance(data, dict):
        result["error"] = "the judge's JSON is not an object"
        return result
    reasoning = data.get("reasoning")
    result["reasoning"] = reasoning if isinstance(reasoning, str) else None
    problems = []
    for score in ASKED[condition]:
        value = data.get(score)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or value != int(value)
            or not 0 <= value <= 4
        ):
            if value is not None:
                problems.append(f"{score}={value!r} is not an integer from 0 to 4")
            else:
                problems.append(f"{score} missing")
            continue
        result[score] = int(value)
    result["error"] = "; ".join(problems) or None
    return result
