"""Start-up time of the light commands, and of the arena until it serves its page.

    python -m benchmarks.startup [--repeats 5]

Each command runs in a fresh interpreter, as a person or a script runs it, `--repeats` times; the
median wall time, from the start to the process's end, is set against the goal. These commands
(`python -m bargain ...` and `python app.py --help`) need neither Gradio, pandas, SciPy,
SQLAlchemy nor a model, so they must not wait for them: a module imported at the top of
`bargain.cli` or `app.py` (or of what they import) is paid by every command. The first line is the
interpreter alone, for scale. Goal: each under 0.3 s. `python -X importtime -m bargain CMD` shows
where the time goes.

Then the time to serving: `python app.py` on a fresh SQLite database until its page answers (HTTP
200 on /), median of `--repeats`: what a person who starts the arena waits, or a Space's restart.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

GOAL_S = 0.3
ROOT = Path(__file__).resolve().parents[1]
REPLY = 'Hold firm. ```json {"message": "2.40?", "action": "OFFER", "offer_price": 2.4} ```'
COMMANDS = [  # (arguments after `python -m bargain`, standard input)
    (["--help"], None),
    (
        [
            "prompt",
            "--scenario",
            "low:0",
            "--role",
            "seller",
            "--condition",
            "buyer_unaware",
            "--buyer-price",
            "2.68",
            "--seller-price",
            "1.22",
        ],
        None,
    ),
    (["parse"], REPLY),
    (["claims", "--role", "seller", "--reservation", "1.85"], "Honestly it cost me 2.40, so my final offer is 2.50."),
    (["arms", "--help"], None),
]


def wall_time(args: list[str], stdin: str | None = None) -> float:
    """Seconds one run of `python ARGS` takes, start to exit."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=ROOT, input=stdin, capture_output=True, text=True, check=True)
    return time.perf_counter() - start


def time_to_serving(timeout_s: float = 120) -> float:
    """Seconds from `python app.py` to its page's first answer, on a fresh database."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as root:
        start = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "app.py", "--port", str(port), "--db", str(Path(root) / "a.db")],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while time.perf_counter() - start < timeout_s:
                if process.poll() is not None:
                    raise RuntimeError(f"app.py exited with status {process.returncode}")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1) as response:
                        if response.status == 200:
                            return time.perf_counter() - start
                except OSError:
                    time.sleep(0.05)
            raise RuntimeError(f"app.py did not answer within {timeout_s:.0f} s")
        finally:
            process.terminate()
            process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per command; the median is reported (default 5)")
    args = parser.parse_args()
    bare = statistics.median(wall_time(["-c", "pass"]) for _ in range(args.repeats))
    print(f"{'python -c pass (the interpreter alone)':<44} {bare:.3f} s")
    for command, stdin in COMMANDS:
        median = statistics.median(wall_time(["-m", "bargain", *command], stdin) for _ in range(args.repeats))
        shown = "python -m bargain " + " ".join(command[:2] if command[-1] == "--help" else command[:1])
        print(f"{shown:<44} {median:.3f} s  {'ok' if median < GOAL_S else 'over'} (goal {GOAL_S} s)")
    median = statistics.median(wall_time(["app.py", "--help"]) for _ in range(args.repeats))
    print(f"{'python app.py --help':<44} {median:.3f} s  {'ok' if median < GOAL_S else 'over'} (goal {GOAL_S} s)")
    serving = statistics.median(time_to_serving() for _ in range(args.repeats))
    print(f"{'python app.py, until its page answers':<44} {serving:.3f} s")


if __name__ == "__main__":
    main()
