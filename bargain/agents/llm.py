"""The language-model agent: the paper's chat, a backend's reply, the paper's parsing (docs/PROTOCOL.md §5-6, §9).

Each turn the agent rebuilds its whole chat from its observation (system prompt folded into the
first user message, its own raw replies as assistant turns), asks its backend, and parses the
reply strictly (the default) or leniently. An INVALID reply is a pass, as in the paper; an
optional bounded re-ask (off by default, recorded) shows the model why its reply could not be
used and asks again within the same turn. Later turns carry only the reply finally used.
Every move leaves a record: the messages sent, the raw reply, tokens, latency, sampling,
backend and model revision. In the arena the opponent is a person, whose messages the agent's
prompt quotes (`opponent_is_person`, docs/PROTOCOL.md §5); against a model they are verbatim.

A reply longer than the token limit could produce (a backend that ignores `max_tokens`, a
misbehaving server) is cut to that length before it is parsed, kept or sent back to the model,
and its record says so (`truncated`), so no reply can make parsing or storage arbitrarily slow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bargain.agents.arms import Arm
from bargain.agents.backends import Backend, Completion, Request, Sampling
from bargain.engine.game import Action, Move, Observation
from bargain.engine.prompts import PromptVersion, chat_messages, user_message
from bargain.engine.replies import Parsing, parse_reply, render_reply

# No token of the served tokenizers (Qwen3's byte-level BPE) decodes to more than 64 characters,
# so `max_tokens * MAX_CHARS_PER_TOKEN` characters bound any reply generated within the limit.
MAX_CHARS_PER_TOKEN = 64
# Parsing is linear (about 10 us per KB); a reply longer than this is parsed in a worker thread, so that
# no reply holds up the event loop every other game (and the arena's every participant) shares.
INLINE_PARSE_CHARS = 16_384
REASK = (
    "Your last reply could not be used: {error}. Reply again: 1-3 sentences describing your "
    "bargaining strategy, then the JSON dict inside a ```json code block."
)


@dataclass
class LLMAgent:
    """A model arm playing one side through a backend."""

    arm: Arm
    backend: Backend
    sampling: Sampling
    parsing: Parsing = Parsing.STRICT
    prompt_version: PromptVersion = PromptVersion.TRAIN
    reask: int = 0
    opponent_is_person: bool = False  # quote the opponent's messages (prompts.quoted): the arena's agents only
    records: list[dict] = field(default_factory=list)
    _chat: list[dict] = field(default_factory=list, repr=False)
    _turns: int = field(default=0, repr=False)
    _settings: dict | None = field(default=None, repr=False)

    def messages(self, obs: Observation) -> list[dict]:
        """The chat for this turn: docs/PROTOCOL.md §5, exactly as `prompts.chat_messages` builds it.

        When the agent's previous turn in this game is the last of its moves in `obs`, the chat
        grows by that reply and one user message instead of being rebuilt from the start: every
        earlier message depends only on moves that have not changed since. Both ways render the
        opponent's messages alike (quoted or not, by `opponent_is_person`).
        """
        own = sum(1 for t in obs.history if t.role is obs.role)
        if self._chat and own == self._turns + 1:
            last = next(t for t in reversed(obs.history) if t.role is obs.role)
            chat = [
                *self._chat,
                {
                    "role": "assistant",
                    "content": last.raw
                    if last.raw is not None
                    else render_reply(last.thought or "", last.message, last.action, last.price),
                },
                {
                    "role": "user",
                    "content": user_message(
                        obs,
                        obs.history,
                        obs.round,
                        False,
                        self.prompt_version,
                        opponent_is_person=self.opponent_is_person,
                    ),
                },
            ]
        else:
            chat = chat_messages(obs, self.prompt_version, opponent_is_person=self.opponent_is_person)
        self._chat, self._turns = chat, own
        return chat

    async def act(self, obs: Observation) -> Move:
        """Ask the model for this turn's move; record what was sent and what came back."""
        messages = self.messages(obs)
        chat = list(messages)
        longest = self.sampling.max_tokens * MAX_CHARS_PER_TOKEN
        spent: list[Completion] = []
        replies: list[str] = []  # as parsed: cut to `longest`, valid Unicode
        while True:
            completion = await self.backend.complete(
                Request(tuple(chat), self.backend.model_name(self.arm), self.sampling)
            )
            spent.append(completion)
            text = completion.text[:longest]
            if len(text) <= INLINE_PARSE_CHARS:
                move = parse_reply(text, self.parsing)
            else:
                import asyncio  # loaded by the running event loop already; at the top it slows every CLI start

                move = await asyncio.to_thread(parse_reply, text, self.parsing)
            replies.append(move.raw if move.raw is not None else text)
            if move.action is not Action.INVALID or len(spent) > self.reask:
                break
            chat += [
                {"role": "assistant", "content": move.raw},
                {"role": "user", "content": REASK.format(error=move.error)},
            ]
        truncated = any(len(c.text) > longest for c in spent)
        self.records.append(self._record(obs, messages, spent, replies, truncated, move))
        return move

    def _record(
        self,
        obs: Observation,
        messages: list[dict],
        spent: list[Completion],
        replies: list[str],
        truncated: bool,
        move: Move,
    ) -> dict:
        if self._settings is None:  # the same for every move of this agent
            self._settings = {
                "arm": self.arm.spec,
                "backend": self.backend.name,
                "sampling": self.sampling.to_dict(),
                "parsing": self.parsing.value,
                "prompt_version": self.prompt_version.value,
            }
        last = spent[-1]
        return {
            "round": obs.round,
            "role": obs.role.value,
            **self._settings,
            "model": last.model,
            "revision": last.revision,
            "messages": messages,
            "raw": replies[-1],
            "truncated": truncated,  # some reply of this move was cut to the longest the token limit allows
            "error": move.error,
            "attempts": len(spent),
            "earlier_replies": replies[:-1],
            "prompt_tokens": sum(c.prompt_tokens for c in spent),
            "completion_tokens": sum(c.completion_tokens for c in spent),
            "latency_s": sum(c.latency_s for c in spent),
            "finish_reason": last.finish_reason,
            "from_reasoning": last.from_reasoning,
            "endpoint": last.endpoint,
        }
