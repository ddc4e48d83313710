"""Canned replies with no model behind them: an instant in-process backend and the reply text.

For measuring everything around the model (prompt building, parsing, records, the loop) and
for the stub server in `bargain.agents.stub_server`. A buyer always offers far below any seller and a
seller far above any buyer, so every game runs its full number of rounds.
"""

from __future__ import annotations

import json

from bargain.agents.backends import Completion, Request

BUYER_PRICE, SELLER_PRICE = 0.5, 5000.0


def reply_text(price: float) -> str:
    """A valid OFFER of `price` in the paper's format."""
    block = json.dumps({"message": f"My offer is {price}.", "action": "OFFER", "offer_price": price}, indent=2)
    return f"I will hold my position this round.\n\n```json\n{block}\n```"


REPLIES = {True: reply_text(BUYER_PRICE), False: reply_text(SELLER_PRICE)}


def canned_reply(messages: list[dict] | tuple[dict, ...]) -> str:
    """A valid reply in the paper's format: the side is read from the first user message."""
    return REPLIES[messages[0]["content"].startswith("You are the BUYER")]


class CannedBackend:
    """Answers every request at once with `canned_reply` (no tokens, no latency)."""

    name = "canned"

    def model_name(self, arm) -> str:
        """Any arm: its name."""
        return arm.name

    async def available(self, arm) -> bool:
        """Every arm."""
        return True

    def describe(self) -> dict:
        """For the records."""
        return {"backend": self.name}

    async def complete(self, request: Request) -> Completion:
        """The canned reply for this side."""
        return Completion(
            text=canned_reply(request.messages),
            prompt_tokens=0,
            completion_tokens=0,
            latency_s=0.0,
            model=request.model,
            finish_reason="stop",
        )
