"""The Results tab's work at 1,000 finished games: per-arm table, figure and tables, as its handler builds them.

    python -m benchmarks.results [--games 1000] [--players 120] [--repeats 5]

A temporary SQLite store is filled with `--games` finished games (written in bulk, as the store keeps them) of
`--players` players against five arms and another person, in every condition; then the handler's work
(`bargain.arena.results.shown`: both tables in HTML and the figure) is timed `--repeats` times. Goal: the
median under 1 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from bargain.arena import PERSON
from bargain.arena.controller import Arena
from bargain.arena.results import shown
from bargain.engine.trial import Condition
from bargain.records.store import GameRow, Store

ARMS = ["tactic:linear", "tactic:boulware", "arm:base", "arm:buyer-grpo", "arm:seller-grpo", PERSON]
GOAL_S = 1.0


def finished_row(number: int, **fields) -> dict:
    """A finished game's row as the store keeps it (its moves left out: the results do not read them), numbered
    `number`; `fields` set its columns (player, arm, condition, deal, utilities...)."""
    return {
        "id": f"{number:032x}",
        "status": "finished",
        "human_role": "buyer",
        "scenario": "low:0",
        "seed": number,
        "condition": Condition.FULL.value,
        "mode": "simultaneous",
        "max_rounds": 4,
        "first_actor": "buyer",
        "buyer_price": 5.0,
        "seller_price": 3.0,
        "trial": {},
        "prompt_version": "train",
        "parsing": "strict",
        "rounds": 4,
        "claims": [],
        **fields,
    }


def write_rows(store: Store, rows: list[dict]) -> None:
    """Game rows written in one insert."""
    with store.engine.begin() as connection:
        connection.execute(GameRow.__table__.insert(), rows)


def write_finished_games(store: Store, games: int, players: int, seed: int = 0) -> None:
    """`games` finished games of `players` players (p0, p1, ...), arms, roles and conditions drawn at random."""
    rng = random.Random(seed)
    rows = []
    for i in range(games):
        deal = rng.random() < 0.7
        rows.append(
            finished_row(
                i,
                player=f"p{i % players}",
                human_role=rng.choice(["buyer", "seller"]),
                arm=rng.choice(ARMS),
                condition=rng.choice(list(Condition)).value,
                deal=deal,
                deal_price=4.0 if deal else None,
                buyer_norm_utility=rng.random() if deal else 0.0,
                seller_norm_utility=rng.random() if deal else 0.0,
                agent_misstated=rng.random() < 0.1,
            )
        )
    write_rows(store, rows)


def time_results(games: int, players: int, repeats: int) -> list[float]:
    """Seconds per Results refresh over a fresh store of `games` finished games, `repeats` times."""
    with tempfile.TemporaryDirectory() as root:
        store = Store(f"sqlite:///{Path(root) / 'results.db'}")
        write_finished_games(store, games, players)
        arena = Arena(store, None)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            shown(arena, "p7", public=True)
            times.append(time.perf_counter() - start)
        store.engine.dispose()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.results", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--players", type=int, default=120)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    times = time_results(args.games, args.players, args.repeats)
    median = statistics.median(times)
    print(f"Results refresh at {args.games} finished games, {args.players} players ({args.repeats} runs):")
    print(f"  median {median:.3f} s, min {min(times):.3f} s, max {max(times):.3f} s (goal < {GOAL_S:.1f} s)")
    print("  PASS" if median < GOAL_S else "  FAIL")


if __name__ == "__main__":
    main()
