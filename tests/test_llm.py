"""The language-model agent on the instant canned backend: what it does with replies no model could give."""

from __future__ import annotations

import asyncio
import time

from bargain.agents.arms import BASE
from bargain.agents.backends import Completion, Request, Sampling
from bargain.agents.backends.canned import BUYER_PRICE, REPLIES, CannedBackend
from bargain.engine.game import Action, Move, new_initial_state
from bargain.agents.llm import MAX_CHARS_PER_TOKEN, LLMAgent
from bargain.engine.trial import Condition, Role, Trial

LONGEST = 100 * MAX_CHARS_PER_TOKEN  # the longest reply 100 tokens can be
# A valid reply, then ten megabytes that a parser searching every fence start would choke on.
HUGE = REPLIES[True] + "```json {" * 1_111_112


class Scripted(CannedBackend):
    """The canned backend answering `texts` in turn, as a server ignoring the token limit might; keeps the requests."""

    def __init__(self, *texts: str):
        self.texts, self.requests = texts, []

    async def complete(self, request: Request) -> Completion:
        """The next of `texts`."""
        self.requests.append(request)
        completion = await super().complete(request)
        completion.text = self.texts[len(self.requests) - 1]
        return completion


def buyer_turn(scenario_set, backend, reask: int = 0) -> tuple[LLMAgent, Move, float]:
    """A buyer agent's first move on `backend` with at most 100 tokens a reply, and the seconds it took."""
    trial = Trial(1, scenario_set.get("low:0"), Condition.SELLER_UNAWARE, 2.5, 1.5, max_rounds=4)
    agent = LLMAgent(BASE, backend, Sampling(max_tokens=100), reask=reask)
    start = time.perf_counter()
    move = asyncio.run(agent.act(new_initial_state(trial).observation(Role.BUYER)))
    return agent, move, time.perf_counter() - start


def test_an_overlong_reply_is_cut_before_parsing_and_recorded_as_cut(scenario_set):
    assert len(HUGE) > 10_000_000
    agent, move, seconds = buyer_turn(scenario_set, Scripted(HUGE))
    assert (move.action, move.price) == (Action.OFFER, BUYER_PRICE)
    assert move.raw == HUGE[:LONGEST]
    (record,) = agent.records
    assert record["truncated"] is True
    assert record["raw"] == HUGE[:LONGEST]
    assert seconds < 0.5


def test_an_overlong_reply_is_cut_before_it_is_sent_back(scenario_set):
    backend = Scripted("x" * 10_000_000, REPLIES[True])
    agent, move, _ = buyer_turn(scenario_set, backend, reask=1)
    assert move.action is Action.OFFER
    assert backend.requests[1].messages[-2] == {"role": "assistant", "content": "x" * LONGEST}
    (record,) = agent.records
    assert record["earlier_replies"] == ["x" * LONGEST] and record["raw"] == REPLIES[True]
    assert record["truncated"] is True


def test_a_reply_within_the_limit_is_kept_whole(scenario_set):
    agent, move, _ = buyer_turn(scenario_set, Scripted(REPLIES[True]))
    (record,) = agent.records
    assert move.raw == record["raw"] == REPLIES[True]
    assert record["truncated"] is False
