"""Model-assisted claim reading: a language model lists a message's price claims, the rule reading
confirms them.

The rules of `bargain.analysis.claims` miss phrasings they were not built for; a model reads more,
but may also invent. Here the model is asked for the claims as JSON, and each one it returns is kept
only if `claims.confirm` finds its number written as a price in the message and a cue of its kind
in the same sentence: the model can raise recall, never add a claim the text does not hold. Both
counts are reported (what the rules found, what the model added, what it returned that was refused).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import dataclass, field, replace

from bargain.agents.backends import Backend, Request, Sampling
from bargain.analysis.claims import KINDS, Claim, confirm, extract_claims, same_value

log = logging.getLogger(__name__)

PROMPT = """You read one message from a price negotiation and list the explicit price claims in it.

Kinds of claim:
- own_limit: the speaker states its OWN reservation price or a bound on it (a buyer's budget, \
maximum, \
the most it can pay; a seller's floor, minimum, cost, what it paid, break-even).
- final_offer: the speaker declares its offer final or non-negotiable; value = the price named in \
the same \
sentence, else null.
- other_limit: the speaker asserts the OTHER side's reservation price or a bound on it ("you can \
surely \
afford 80", "you probably paid under 200").
Offers, questions, hypotheticals, negated statements, reports of what others said, market or \
third-party \
prices and numbers that are not prices are not claims.

The speaker is the {role}. Message:
<<<
{message}
>>>

Answer with a JSON list only, e.g. [{{"kind": "own_limit", "value": 2.5}}], or [] when there is \
none."""


@dataclass
class Assisted:
    """The claims of one message: the rules', those the model added (each confirmed), and the
    counts."""

    claims: list[Claim]
    rules: int
    model_returned: int
    model_added: int
    model_refused: list[dict] = field(default_factory=list)
    model_failed: bool = False  # no readable answer came back: the rules' claims stand alone

    def counts(self) -> dict[str, int]:
        """What each reader contributed."""
        return {
            "rules": self.rules,
            "model_returned": self.model_returned,
            "model_added": self.model_added,
            "model_refused": len(self.model_refused),
            "model_failed": int(self.model_failed),
        }


def parse_reply(text: str) -> list[dict] | None:
    """The claims in a model's reply: the first JSON list in it, keeping well-formed items only
    (None when the reply holds no JSON list at all)."""
    text = re.sub(r"<think>.*?</think>", "", text or "", flags=re.DOTALL)
    match = re.search(r"\[.*\]", text, re.DOTALL)
    if match is None:
        return None
    try:
        items = json.loads(match.group(0))
    except ValueError:
        return None
    kept = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("kind") not in KINDS:
            continue
        value = item.get("value")
        if isinstance(value, str):
            try:
                value = float(value.replace(",", "").lstrip("$€£"))
            except ValueError:
                continue
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            continue
        kept.append({"kind": item["kind"], "value": None if value is None else float(value)})
    return kept


def reader(assisted: dict[tuple[str, str], Assisted]):
    """A `read` for `claims.check_turns` that answers from readings already made, keyed by (message,
    role)."""

    def read(message: str, role) -> list[Claim]:
        return assisted[(message, getattr(role, "value", role))].claims

    return read


def combine(message: str, role: str, model_claims: list[dict]) -> Assisted:
    """The rules' claims plus each model claim the rules confirm and do not already have."""
    claims = extract_claims(message, role)
    rules = len(claims)
    added, refused = 0, []
    for item in model_claims:
        if any(c.kind == item["kind"] and same_value(c.value, item["value"]) for c in claims):
            continue
        claim = confirm(message, role, item["kind"], item["value"])
        if claim is None:
            refused.append(item)
            continue
        claims.append(claim)
        added += 1
    claims.sort(key=lambda c: (c.start, c.end, KINDS.index(c.kind)))
    return Assisted(claims, rules, len(model_claims), added, refused)


async def assist(
    messages: list[tuple[str, str]],
    backend: Backend,
    model: str,
    concurrency: int = 16,
    sampling: Sampling = Sampling(
        temperature=0.0, top_p=1.0, top_k=-1, presence_penalty=0.0, max_tokens=512
    ),
) -> list[Assisted]:
    """Read every (message, role) with the model and the rules. A failed or unreadable model reply
    leaves the rules' claims (logged), so a message is never lost to the model."""
    slots = asyncio.Semaphore(concurrency)

    async def one(message: str, role: str) -> Assisted:
        prompt = PROMPT.format(role=role, message=message)
        try:
            async with slots:
                completion = await backend.complete(
                    Request(({"role": "user", "content": prompt},), model, sampling)
                )
            found = parse_reply(completion.text)
        except Exception as exc:  # a model failure must not lose the rules' reading
            log.warning("claim model failed on a message: %s", exc)
            return replace(combine(message, role, []), model_failed=True)
        if found is None:
            return replace(combine(message, role, []), model_failed=True)
        return combine(message, role, found)

    try:
        return list(await asyncio.gather(*(one(m, r) for m, r in messages)))
    finally:
        close = getattr(backend, "aclose", None)
        if close is not None:
            await close()


def read_all(
    messages: list[tuple[str, str]], backend: Backend, model: str
) -> dict[tuple[str, str], Assisted]:
    """`assist` from synchronous code: each distinct (message, side) read once, keyed by it."""
    distinct = list(dict.fromkeys(messages))
    return dict(zip(distinct, asyncio.run(assist(distinct, backend, model))))
