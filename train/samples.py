"""Training samples from played episodes, and their token log-probabilities (docs/TRAINING.md step 4).

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

from bargain.runs.episodes import Episode


@dataclass
class Sample:
    """One trained turn: token ids and the episode's advantage (weight 0: padding for equal shards)."""

    prompt_ids: list[int]
    completion_ids: list[int]
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


def completion_logprobs(model, samples: list[Sample], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities of each sample's completion tokens under `model`: (B, T) and the mask (B, T).

    Sequences are left-padded so that every completion ends at the last position; only the
    logits of the last T + 1 positions are computed (T = the longest completion), which keeps
    memory to what the loss needs.
    """
    device = next(model.parameters()).device
    sequences = [s.prompt_ids + s.completion_ids for s in samples]
    length = max(len(x) for x in sequences)
    width = max(len(s.completion_ids) for s in samples)
    input_ids = torch.full((len(samples), length), pad_id, dtype=torch.long)
    attention = torch.zeros((len(samples), length), dtype=torch.long)
    mask = torch.zeros((len(samples), width), dtype=torch.float32)
    for row, (sequence, sample) in enumerate(zip(sequences, samples)):
        input_ids[row, length - len(sequence) :] = torch.tensor(sequence)
        attention[row, length - len(sequence) :] = 1
        mask[row, width - len(sample.completion_ids) :] = 1.0
    input_ids, attention, mask = input_ids.to(device), attention.to(device), mask.to(device)
    positions = (attention.cumsum(dim=1) - 1).clamp(min=0)  # (B, L): left padding shifts positions
    logits = (
        model(
            input_ids=input_ids,
            attention_mask=attention,
            position_ids=positions,
            logits_to_keep=width + 1,
            use_cache=False,
        )
        .logits[:, :-1]
        .float()
    )  # (B, T, V): position j predicts token j + 1
    targets = input_ids[:, length - width :]  # (B, T)
    logp = torch.log_softmax(logits, dim=-1).gather(-1, targets[..., None]).squeeze(-1)  # (B, T)
    return logp * mask, mask
