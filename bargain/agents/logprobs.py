"""Token log-probabilities of completions under a causal language model: what the trainer's policy loss and the
tiny model's format lesson (bargain.agents.tiny) both need, computed one way.

Sequences are left-padded so that every completion ends at the last position; only the logits of the last T + 1
positions are computed (T = the longest completion). A prompt's positions need no logits, and over a real
vocabulary theirs would be most of the memory and half of the time of a step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


@dataclass
class Tokens:
    """A prompt's token ids and the completion's after it (the completion carries the loss)."""

    prompt_ids: list[int]
    completion_ids: list[int]


def completion_logprobs(model, samples: Sequence[Tokens], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities of each sample's completion tokens under `model`: (B, T) and the mask (B, T), both zero
    where a completion shorter than T has no token."""
    import torch

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
