"""Engine throughput: the paper's RL test grid (1280 four-round trials), scripted against scripted.

    python -m benchmarks.engine [--repeats 7] [--buyer tactic:boulware] [--seller tactic:linear]

Plays the whole grid through the same loop every caller uses (`bargain.runs.episodes.play_many`,
asyncio, the progress bar off) with two scripted tactics, so no model time is involved: the
figure is what the engine itself costs (trial set-up, observations, rules, the agents'
arithmetic, the loop). Runs on one core (asyncio is single-threaded). Prints episodes per
second for each repeat, then the median and the best. Goal: at least 20,000 per second.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time

from bargain.agents.factory import agent_factory
from bargain.engine import scenarios
from bargain.runs.episodes import play_many

GOAL = 20_000


def run_once(trials, buyer: str, seller: str) -> float:
    """Episodes per second for one pass over the grid."""
    make_buyer, make_seller = agent_factory(buyer), agent_factory(seller)
    start = time.perf_counter()
    episodes = asyncio.run(
        play_many(
            trials,
            lambda t: (make_buyer(t.trial_id), make_seller(t.trial_id)),
            (buyer, seller),
            concurrency=256,
            progress=False,
        )
    )
    elapsed = time.perf_counter() - start
    assert all(e.state.is_terminal() for e in episodes)
    return len(episodes) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.engine", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--buyer", default="tactic:boulware")
    parser.add_argument("--seller", default="tactic:linear")
    args = parser.parse_args()
    trials = scenarios.make_trials(scenarios.grid("paper-rl-test"), scenarios.bundled(), seed=42)
    gc.freeze()  # the scenario set is loaded once and lives for the whole run: keep it out of GC scans
    rates = []
    for i in range(args.repeats):
        rates.append(run_once(trials, args.buyer, args.seller))
        print(f"repeat {i + 1}: {rates[-1]:,.0f} episodes/s")
    median, best = statistics.median(rates), max(rates)
    print(f"{len(trials)} trials of paper-rl-test, {args.buyer} vs {args.seller}")
    print(f"median {median:,.0f} episodes/s, best {best:,.0f} episodes/s (goal {GOAL:,})")


if __name__ == "__main__":
    main()
