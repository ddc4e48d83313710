"""Trainer throughput, per step: rollout time, optimiser samples and tokens per second, peak memory.

    python -m benchmarks.train                       # the tiny random Qwen3 here (CPU)
    python -m benchmarks.train --shape qwen3-8b      # Qwen3-8B's shape, random bf16 weights (GPU)
    python -m benchmarks.train --activations         # activation memory of Qwen3-8B's layers (CPU, about a minute)

One preset (buyer-grpo: rank-16 LoRA, GRPO, the frozen base as opponent) with the hf rollout
backend, scaled down to a few groups so that a step finishes quickly; nothing is downloaded.
Prints the figures of every step.

`--activations` measures what the training memory of a run depends on and no CPU step can show:
the bytes the autograd graph keeps for the backward pass per token, in one layer of Qwen3-8B's
exact shape (bf16 weights, the preset's float32 LoRA), with and without gradient checkpointing,
from the difference between a one- and a two-layer model, and what that makes for a whole model
and for the trainer's pieces of MICRO_BATCH samples.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bargain.agents import tiny
from train import config as configuration
from train.trainer import MICRO_BATCH, run, with_adapter

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.train", description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=("tiny", "qwen3-8b"), default="tiny")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--groups", type=int, default=4, help="groups per step")
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=128, help="new tokens per reply")
    parser.add_argument("--activations", action="store_true", help="measure activation memory per token instead")
    args = parser.parse_args()
    if args.activations:
        activations()
        return
    with tempfile.TemporaryDirectory() as root:
        model = tiny.build_model(Path(root) / "model", shape=args.shape)
        cfg = configuration.load(
            ROOT / "train" / "configs" / "buyer-grpo.yaml",
            {
                "model": str(model),
                "steps": args.steps,
                "groups_per_step": args.groups,
                "group_size": args.group_size,
                "max_completion_tokens": args.max_tokens,
                "val_interval": 0,
                "output_dir": str(Path(root) / "run"),
            },
        )
        result = run(cfg, progress=False)
    print(
        f"{args.shape} model, buyer-grpo preset, {args.groups} groups x {args.group_size} episodes per step, "
        f"{args.max_tokens} tokens per reply"
    )
    print("step  rollout_s  samples  train_s  samples/s  tokens/s  peak_GiB (GPU, or the process's RSS on CPU)")
    for m in result.metrics:
        peak = f"{m['peak_memory_gb']:.1f}"
        print(
            f"{m['step']:4d}  {m['rollout_s']:9.2f}  {m['samples']:7d}  {m['train_s']:7.2f}  "
            f"{m['samples_per_s']:9.1f}  {m['tokens_per_s']:8.0f}  {peak:>8}"
        )


def saved_bytes(layers: int, checkpointing: bool, tokens: int) -> int:
    """Bytes kept for the backward pass (parameters excluded) by one training-mode forward pass of `tokens` tokens
    through a bf16 model of Qwen3-8B's shape cut to `layers` layers, made trainable as the buyer preset makes it."""
    import torch
    from transformers import Qwen3ForCausalLM

    shape = tiny.qwen3_8b_config()
    shape.num_hidden_layers = layers
    shape.vocab_size = 1024  # the embeddings hold no activations worth counting; a small vocabulary builds fast
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        base = Qwen3ForCausalLM(shape)
    finally:
        torch.set_default_dtype(previous)
    cfg = configuration.load(ROOT / "train" / "configs" / "buyer-grpo.yaml", {"gradient_checkpointing": checkpointing})
    model = with_adapter(base, cfg).train()
    parameters = {p.data_ptr() for p in model.parameters()}
    kept: dict[tuple[int, int], int] = {}

    def pack(tensor):
        if tensor.data_ptr() not in parameters:
            kept[(tensor.data_ptr(), tensor.numel())] = tensor.numel() * tensor.element_size()
        return tensor

    ids = torch.randint(0, shape.vocab_size, (1, tokens), generator=torch.Generator().manual_seed(0))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        model(input_ids=ids, logits_to_keep=1, use_cache=False)
    return sum(kept.values())


def activations(tokens: int = 512) -> None:
    """Per-token activation memory of Qwen3-8B's layers, and what it makes for the trainer's pieces."""
    layers = tiny.qwen3_8b_config().num_hidden_layers
    vocab = tiny.qwen3_8b_config().vocab_size
    print(f"Qwen3-8B's layer shape, bf16 weights, rank-16 float32 LoRA on every projection, {tokens} tokens, CPU")
    print(
        "gradient checkpointing  per layer per token  whole model per token  "
        f"{MICRO_BATCH} x 700 tokens  {MICRO_BATCH} x 3072 tokens"
    )
    per_layer = {on: (saved_bytes(2, on, tokens) - saved_bytes(1, on, tokens)) / tokens for on in (False, True)}
    for checkpointing in (False, True):
        # with checkpointing one layer's full activations exist again while it is recomputed for its backward pass
        recomputed = per_layer[False] if checkpointing else 0
        whole = per_layer[checkpointing] * layers
        pieces = [n * MICRO_BATCH * (whole + recomputed) / 2**30 for n in (700, 3072)]
        print(
            f"{'on' if checkpointing else 'off':>22}  {per_layer[checkpointing] / 1024:15.0f} "
            f"KiB  {whole / 2**20:17.2f} MiB  "
            f"{pieces[0]:10.1f} GiB  {pieces[1]:11.1f} GiB"
        )
    print(
        f"plus the kept logits: {vocab} x (2 + 4 + 4) bytes = {vocab * 10 / 2**20:.2f} MiB per completion token "
        "(bf16 logits, their float32 copy, the log-softmax), and Qwen3-8B's 16.4 GB of bf16 weights"
    )


if __name__ == "__main__":
    main()
