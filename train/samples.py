"""Training samples from played episodes (docs/TRAINING.md step 4; bargain.agents.logprobs reads their
token log-probabilities).

Every turn of the trained role is one sample: the prompt is that agent's chat up to the turn,
rendered with the chat template exactly as at sampling time (`enable_thinking=False`,
generation prompt on); the completion is the reply and its end-of-turn token (when the reply
ended by itself; a reply cut at the token limit has none). Only completion tokens carry loss.
A prompt over the limit loses its oldest tokens. Completions are tokenised from the reply text
(as the reference does); `check_prefix` confirms the chat template renders prompt + reply with
the prompt as an exact prefix, so the loss lands on the reply and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bargain.agents.logprobs import Tokens
from bargain.runs.episodes import Episode


@dataclass
class Sample(Tokens):
    """One trained turn: token ids (bargain.agents.logprobs reads their log-probabilities) and the episode's
    advantage (weight 0: padding for equal shards)."""

    advantage: float
    weight: float = 1.0
    old_logp: torch.Tensor | None = None  # (T_c,), filled before the epochs or on first visit
    ref_logp: torch.Tensor | None = None  # (T_c,), the model with its adapter disabled


def prompt_text(tokenizer, messages: list[dict]) -> str:
    """The chat as the model saw it when sampling."""
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, enable_thinking=False)


def check_prefix(tokenizer, messages: list[dict], reply: str) -> bool:
    """Whether the template renders the chat plus this reply with the sampling prompt as its prefix
    and the reply (plus end-of-turn) right after it."""
    full = tokenizer.apply_chat_template(
        [*messages, {"role": "assistant", "content": reply}], tokenize=False, enable_thinking=False
    )
    prompt = prompt_text(tokenizer, messages)
    return full.startswith(prompt) and full[len(prompt) :].startswith(reply + tokenizer.eos_token)


def turn_samples(
    episode: Episode, role: str, advantage: float, tokenizer, max_sequence: int, max_completion: int
) -> list[Sample]:
    """The samples of one episode's turns played by `role` (from its agent's records). A sample longer than
    `max_sequence` tokens loses the oldest tokens of the whole sequence, as in the reference: the prompt's, since
    a completion is at most `max_completion` tokens, fewer than `max_sequence`."""
    samples = []
    for record in episode.records:
        if record["role"] != role:
            continue
        prompt = tokenizer(prompt_text(tokenizer, record["messages"]), add_special_tokens=False)["input_ids"]
        completion = tokenizer(record["raw"], add_special_tokens=False)["input_ids"][:max_completion]
        if record.get("finish_reason") != "length" and len(completion) < max_completion:
            completion = completion + [tokenizer.eos_token_id]
        if completion:
            samples.append(
                Sample(prompt[max(0, len(prompt) + len(completion) - max_sequence) :], completion, advantage)
            )
    return samples
