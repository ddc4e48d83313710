"""LLM-agent overhead: everything around the model, on the paper-rl-test grid (1280 trials).

    python -m benchmarks.agents [--repeats 5]

Both sides are LLM agents (arm:buyer-grpo against arm:base) on an in-process backend that
answers at once with canned valid replies (`bargain.agents.backends.canned`): what is measured is the
prompt building, reply parsing, per-move records and the episode loop, with no model. Every
game runs its four rounds (the canned offers never cross). Goal: at least 6,000 episodes per
second on one core.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time

from bargain.engine import scenarios
from bargain.agents.agent import Side, agent_factory
from bargain.agents.backends import Backends
from bargain.agents.backends.canned import CannedBackend
from bargain.episodes import play_many

GOAL = 6_000


def run_once(trials, backends: Backends) -> float:
    """Episodes per second for one pass over the grid."""
    buyer = agent_factory("arm:buyer-grpo", backends, Side())
    seller = agent_factory("arm:base", backends, Side())
    start = time.perf_counter()
    episodes = asyncio.run(play_many(trials, lambda t: (buyer(t.trial_id), seller(t.trial_id)), ("b", "s"),
                                     concurrency=256, progress=False))
    elapsed = time.perf_counter() - start
    assert all(e.finished and e.state.outcome().rounds == 4 for e in episodes)
    assert sum(len(e.records) for e in episodes) == 8 * len(episodes)
    return len(episodes) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.agents", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    trials = scenarios.make_trials(scenarios.grid("paper-rl-test"), scenarios.bundled(), seed=42)
    backends = Backends(CannedBackend())
    gc.freeze()
    rates = []
    for i in range(args.repeats):
        rates.append(run_once(trials, backends))
        print(f"repeat {i + 1}: {rates[-1]:,.0f} episodes/s")
    print(f"{len(trials)} trials of paper-rl-test, LLM agents on canned replies")
    print(f"median {statistics.median(rates):,.0f} episodes/s, best {max(rates):,.0f} episodes/s (goal {GOAL:,})")


if __name__ == "__main__":
    main()
