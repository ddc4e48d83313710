"""Trainer throughput, per step: rollout time, optimiser samples and tokens per second, peak memory.

    python -m benchmarks.train                       # the tiny random Qwen3 here (CPU)
    python -m benchmarks.train --shape qwen3-8b      # Qwen3-8B's shape, random bf16 weights (GPU)

One preset (buyer-grpo: rank-16 LoRA, GRPO, the frozen base as opponent) with the hf rollout
backend, scaled down to a few groups so that a step finishes quickly; nothing is downloaded.
Prints the figures of every step.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bargain.agents import tiny
from train import config as configuration
from train.trainer import run

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.train", description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=("tiny", "qwen3-8b"), default="tiny")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--groups", type=int, default=4, help="groups per step")
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=128, help="new tokens per reply")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        model = tiny.build_model(Path(root) / "model", shape=args.shape)
        cfg = configuration.load(ROOT / "train" / "configs" / "buyer-grpo.yaml", {
            "model": str(model), "steps": args.steps, "groups_per_step": args.groups, "group_size": args.group_size,
            "max_completion_tokens": args.max_tokens, "val_interval": 0, "output_dir": str(Path(root) / "run")})
        result = run(cfg, progress=False)
    print(f"{args.shape} model, buyer-grpo preset, {args.groups} groups x {args.group_size} episodes per step, "
          f"{args.max_tokens} tokens per reply")
    print("step  rollout_s  samples  train_s  samples/s  tokens/s  peak_GiB (GPU, or the process's RSS on CPU)")
    for m in result.metrics:
        peak = f"{m['peak_memory_gb']:.1f}"
        print(f"{m['step']:4d}  {m['rollout_s']:9.2f}  {m['samples']:7d}  {m['train_s']:7.2f}  "
              f"{m['samples_per_s']:9.1f}  {m['tokens_per_s']:8.0f}  {peak:>8}")


if __name__ == "__main__":
    main()
