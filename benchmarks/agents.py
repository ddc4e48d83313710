"""Whole runs without a model: everything `python -m bargain simulate` and `evaluate` do around the model.

    python -m benchmarks.agents [--repeats 5]

The workload: the paper-rl-test grid (1,280 four-round trials, seed 42), arm:buyer-grpo against
arm:base, played by the very function behind `python -m bargain simulate` and `evaluate`
(`bargain.cli.cmd_play`): the grid's prompt wording, both sides' requests in flight at once as
with any model server, every game written to games.jsonl with every model move's record (the
chat sent, the reply, tokens, latency) as it ends, then the trials table (Parquet and CSV) and
the summary; `evaluate` adds its figures and the paper comparison. One thing differs from a
user's run: the backend answers every request at once, in process, with a canned valid reply
(each game runs its four rounds), as an infinitely fast model server would; what is measured is
all the rest. Each run is timed from the command's start to its end, in this process (imports
done), on a fresh directory.

Goal: at least 1,500 episodes per second for the whole `simulate` run on this 2-core machine,
three times the paper's own simulator (its zero-shot notebook's loop with the model replaced by
an instant fake makes about 500 here).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import tempfile
import time
from pathlib import Path

from bargain import cli
from bargain.agents.backends.canned import CannedBackend

GOAL = 1_500
WORKLOAD = ["--grid", "paper-rl-test", "--buyer", "arm:buyer-grpo", "--seller", "arm:base", "--seed", "42", "--quiet"]


def whole_run(command: str, out: Path, extra: tuple[str, ...] = ()) -> tuple[int, float]:
    """Run `python -m bargain COMMAND` on the workload into `out` with the instant backend: (trials, seconds)."""
    argv = [command, *WORKLOAD, "--out", str(out), *extra]
    args = cli.build_parser().parse_args(argv)
    args.argv = argv
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # the command prints its summary table
        code = cli.cmd_play(args, local=CannedBackend())
    elapsed = time.perf_counter() - start
    if code != 0:
        raise RuntimeError(f"{command} failed with status {code}")
    trials = sum(1 for _ in (out / "games.jsonl").open("rb"))
    return trials, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.agents", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import bargain.runs.batch  # noqa: F401  (imports are not part of a run: load them before the first)

    print(
        "paper-rl-test (1,280 four-round trials), LLM agents on both sides, instant canned backend, "
        "every record written"
    )
    for command in ("simulate", "evaluate"):
        rates = []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as out:
                trials, elapsed = whole_run(command, Path(out))
            rates.append(trials / elapsed)
        goal = f" (goal {GOAL:,})" if command == "simulate" else " (adds the figures and the paper comparison)"
        print(
            f"{command:9s} whole run: median {statistics.median(rates):,.0f} episodes/s, "
            f"range {min(rates):,.0f}-{max(rates):,.0f}{goal}"
        )


if __name__ == "__main__":
    main()
