"""hf backend throughput: generated tokens per second for 1, 8 and 32 concurrent games.

    python -m benchmarks.hf                      # tiny random Qwen3 on this machine (CPU)
    python -m benchmarks.hf --shape qwen3-8b     # Qwen3-8B's shape, random bf16 weights (GPU)

Games are played by LLM agents through the in-process transformers + peft backend, whose queue
batches the requests of concurrent games into shared `generate` calls. Two settings per
concurrency: every game on one adapter (arm:buyer-grpo against itself), and games spread over
the base model and all eight adapters (mixed-adapter batches). No weights are downloaded: the
models and the eight adapters (ranks 16 and 32, as released) are built with random weights.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from bargain.agents import tiny
from bargain.agents.agent import Side
from bargain.agents.arms import ADAPTERS
from bargain.agents.backends import Backend, Backends, Sampling
from bargain.agents.backends.hf import HFBackend
from bargain.agents.factory import agent_factory
from bargain.engine import scenarios
from bargain.runs.episodes import play_many


def build(shape: str, root: Path) -> tuple[Path, Path]:
    """A random model of the given shape and eight random adapters, saved under `root`."""
    model_dir = tiny.build_model(root / "model", shape=shape)
    adapters = tiny.build_adapters(model_dir, root / "adapters")
    return model_dir, adapters


def throughput(backend: Backend, games: int, mixed: bool, max_tokens: int) -> dict[str, float]:
    """Completion tokens and requests per second over `games` concurrent two-round games played through `backend`
    (in process or a server): every game on one adapter, or `mixed` over the base model and the eight adapters."""
    side = Side(Sampling(max_tokens=max_tokens))
    arms = [f"arm:{n}" for n in ADAPTERS] + ["arm:base"] if mixed else ["arm:buyer-grpo"]
    makers = [agent_factory(arm, Backends(backend), side) for arm in arms]
    spec = scenarios.GridSpec(tier="low", start=1508, stop=1516, trials_per_cell=8, max_rounds=2)
    trials = scenarios.make_trials(spec, scenarios.bundled())[:games]
    start = time.perf_counter()
    episodes = asyncio.run(
        play_many(
            trials,
            lambda t: (makers[t.trial_id % len(makers)](0), makers[(t.trial_id + 1) % len(makers)](0)),
            ("a", "b"),
            concurrency=games,
            progress=False,
        )
    )
    elapsed = time.perf_counter() - start
    records = [r for e in episodes for r in e.records]
    return {
        "tokens_per_s": sum(r["completion_tokens"] for r in records) / elapsed,
        "requests_per_s": sum(r["attempts"] for r in records) / elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hf", description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=("tiny", "qwen3-8b"), default="tiny")
    parser.add_argument("--games", default="1,8,32", help="comma-separated numbers of concurrent games")
    parser.add_argument(
        "--max-tokens", type=int, default=64, help="new tokens per reply (random weights rarely stop early)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        model_dir, adapters = build(args.shape, Path(root))
        backend = HFBackend(str(model_dir), {n: adapters / n for n in ADAPTERS})
        print(
            f"{args.shape} model on {backend.device} ({backend.describe()['dtype']}), "
            f"{args.max_tokens} tokens per reply"
        )
        throughput(backend, 2, True, 4)  # warm-up: first calls pay for lazy initialisation
        for games in (int(g) for g in args.games.split(",")):
            one = throughput(backend, games, False, args.max_tokens)["tokens_per_s"]
            mixed = throughput(backend, games, True, args.max_tokens)["tokens_per_s"]
            print(f"{games:3d} concurrent games: one adapter {one:8.1f} tokens/s, mixed adapters {mixed:8.1f} tokens/s")
        if backend.device.startswith("cuda"):
            import torch

            print(f"peak GPU memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")


if __name__ == "__main__":
    main()
