"""The policy losses as pure tensor functions (docs/TRAINING.md step 6).

Shapes: `logp`, `old_logp`, `ref_logp`, `mask` are (B, T) over completion positions (mask 1 on
the reply tokens and its end-of-turn token); `advantages` is (B,). Each sample's loss is the
mean over its own tokens; the batch loss is the mean over samples.
    GRPO:  -mean_t min(rho A, clip(rho, 1 - eps, 1 + eps) A),  rho = exp(logp - old_logp)
    CISPO: -mean_t stopgrad(min(rho, cap)) A logp
    plus kl_coef x mean_t k3,  k3 = exp(ref - logp) - (ref - logp) - 1
"""

from __future__ import annotations

import torch


def token_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per-sample mean over the masked tokens: (B, T) -> (B,)."""
    return (values * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimate of KL(policy || reference), per token: (B, T)."""
    delta = ref_logp - logp
    return torch.exp(delta) - delta - 1


def grpo_token_loss(logp, old_logp, advantages, clip: float) -> torch.Tensor:
    """-min(rho A, clip(rho) A) per token: (B, T)."""
    ratio = torch.exp(logp - old_logp)  # (B, T)
    a = advantages[:, None]  # (B, 1)
    return -torch.minimum(ratio * a, ratio.clamp(1 - clip, 1 + clip) * a)


def cispo_token_loss(logp, old_logp, advantages, cap: float) -> torch.Tensor:
    """-stopgrad(min(rho, cap)) A logp per token: (B, T)."""
    weight = torch.exp(logp - old_logp).clamp(max=cap).detach()  # (B, T)
    return -weight * advantages[:, None] * logp


def policy_loss(
    kind: str,
    logp,
    old_logp,
    ref_logp,
    advantages,
    mask,
    *,
    clip: float = 0.2,
    cap: float = 5.0,
    kl_coef: float = 0.001,
) -> tuple[torch.Tensor, dict]:
    """The batch loss (a scalar) and its parts, for `kind` grpo or cispo."""
    if kind == "grpo":
        token = grpo_token_loss(logp, old_logp, advantages, clip)
    elif kind == "cispo":
        token = cispo_token_loss(logp, old_logp, advantages, cap)
    else:
        raise ValueError(f"unknown loss {kind!r}: use grpo or cispo")
    kl = k3_kl(logp, ref_logp)
    per_sample = token_mean(token, mask) + kl_coef * token_mean(kl, mask)  # (B,)
    with torch.no_grad():
        ratio = torch.exp(logp - old_logp)
        parts = {
            "kl": token_mean(kl, mask).mean().item(),
            "ratio": token_mean(ratio, mask).mean().item(),
            "clipped": token_mean(((ratio - 1).abs() > clip).float(), mask).mean().item(),
        }
    return per_sample.mean(), parts
