"""Where the hf backend's model runs: ZeroGPU on a Hugging Face Space, a dedicated GPU, or the CPU.

ZeroGPU attaches a GPU to a Space only while a function decorated with `spaces.GPU` runs: the
model is placed on `cuda` at start-up (the `spaces` package defers the move), and each batched
generation step runs inside such a function, so that concurrent games still share one forward
pass. Each call asks for what its batch needs (`batch_seconds`, at most `GPU_SECONDS`): ZeroGPU
refuses a call that asks for more than the visitor's quota has left (about 2 minutes a day for an
anonymous visitor, 3.5 for a free account), though it charges only the seconds used, so asking for a
fixed two minutes would give such a visitor one batch a day. Off ZeroGPU the function runs as it is.

On a dedicated GPU the model, its adapters and the KV cache of the games generated together must
fit the card: `games_that_fit` works it out from the model's shape before a request can fail
half-way, and the backend caps its batch to it (or says plainly that the card is too small).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from bargain.agents.backends import BackendError

log = logging.getLogger(__name__)

GPU_SECONDS = 120  # the longest one batched generation holds a ZeroGPU slice (replies of up to 1,024 tokens)
# What a batch asks for: the prompt's prefill, then one decode step per token of the reply cap, each slower as the
# batch grows (an 8B model in bf16 through peft's LoRA layers, with room to spare).
PREFILL_S, SECONDS_PER_TOKEN, BATCH_KNEE = 8.0, 0.05, 32
TOKENS_PER_GAME = 4096  # a four-round game's longest prompt (about 3,000 tokens) and a 1,024-token reply
HEADROOM = 0.9  # of the free memory: the rest for activations, logits and the allocator's fragments

F = TypeVar("F", bound=Callable)


def on_zero_gpu(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether this process (or a Space with these variables) runs on ZeroGPU hardware: the Space sets
    SPACES_ZERO_GPU."""
    return environ.get("SPACES_ZERO_GPU", "").lower() in ("1", "true")


def prepare_zero_gpu() -> None:
    """On ZeroGPU, import `spaces` before torch touches CUDA, as it requires; elsewhere nothing."""
    if on_zero_gpu():
        try:
            import spaces  # noqa: F401
        except ImportError:
            raise BackendError(
                "this Space runs on ZeroGPU but the `spaces` package is missing: add `spaces` to the "
                "Space's requirements (see docs/deployment.md)"
            ) from None


def batch_seconds(requests: list, sampling) -> int:
    """The seconds a batched generation of `requests` asks ZeroGPU for: enough for its reply cap, at most
    GPU_SECONDS (a 256-token cap asks 22 s for one game, a 1,024-token cap 61 s)."""
    need = PREFILL_S + sampling.max_tokens * SECONDS_PER_TOKEN * (1 + len(requests) / BATCH_KNEE)
    return min(GPU_SECONDS, math.ceil(need))


def gpu_function(function: F, duration: Callable[..., int] | int = GPU_SECONDS) -> F:
    """`function`, run with a GPU attached: through `spaces.GPU` on ZeroGPU, unchanged elsewhere. `duration`: the
    seconds to ask for, or a function of the call's arguments that says how many (ZeroGPU calls it per call)."""
    if not on_zero_gpu():
        return function
    prepare_zero_gpu()
    import spaces

    return spaces.GPU(duration=duration)(function)


@dataclass(frozen=True)
class MemoryPlan:
    """What a model needs on one GPU: its weights, and the KV cache of one game."""

    weights_bytes: int
    per_game_bytes: int

    def games(self, free_bytes: int) -> int:
        """How many games can be generated together in `free_bytes` (0: not even the weights and one game)."""
        room = free_bytes * HEADROOM - self.weights_bytes
        return max(0, int(room // self.per_game_bytes))


def plan(config, weights_bytes: int, dtype_bytes: int, tokens_per_game: int = TOKENS_PER_GAME) -> MemoryPlan:
    """The memory plan of a transformers model config (keys and values of every layer for a game's tokens)."""
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    per_token = 2 * config.num_hidden_layers * kv_heads * head_dim * dtype_bytes
    return MemoryPlan(weights_bytes, per_token * tokens_per_game)


def fit_batch(memory: MemoryPlan, free_bytes: int, max_batch: int, card: str) -> int:
    """The batch the card allows (at most `max_batch`); BackendError when the model and one game do not fit."""
    fits = memory.games(free_bytes)
    gib = 2**30
    if fits < 1:
        raise BackendError(
            f"the GPU ({card}) has {free_bytes / gib:.1f} GiB free; the model needs "
            f"{memory.weights_bytes / gib:.1f} GiB "
            f"for its weights and adapters and {memory.per_game_bytes / gib:.2f} GiB per game: choose a card with "
            f"more memory (Qwen3-8B in bf16: 24 GB or more), or serve the model elsewhere with `python -m bargain "
            "serve` and set BARGAIN_BACKEND=vllm and BARGAIN_BASE_URL"
        )
    if fits < max_batch:
        log.warning(
            "the GPU (%s) has room for %d games generated together (%.1f GiB free, %.1f GiB of weights, "
            "%.2f GiB per game): more wait for the next batch",
            card,
            fits,
            free_bytes / gib,
            memory.weights_bytes / gib,
            memory.per_game_bytes / gib,
        )
    return min(max_batch, fits)
