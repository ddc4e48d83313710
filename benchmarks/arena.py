"""Arena load: 100 scripted participants at once, each playing whole games against a tactic, while
two visitors keep refreshing the Results tab; then the cost of one Results refresh at 10,000 games.

    python -m benchmarks.arena [--participants 100] [--games 3] [--think 1.0] [--visitors 2] [--results-games 10000]

The app is started in this process on a fresh SQLite database; every participant is its own
`gradio_client` session (all of them in a second process) playing through the named API
(`start_game`, `play_move`), and takes `--think` seconds on average (0.5x to 1.5x, seeded)
before each move, as a fast person would; `--think 0` is a stress test of back-to-back moves,
where the figures measure queueing more than work. Reported:
the server time per move (inside the app, from the move's arrival to its answer: validation,
the tactic's move, the stored round) at p50 and p95, the round trip a participant sees, and a
check that every move made is in the database. The server and the participants each get one
core of their own where there are two. The visitors run in the server's process, on threads of
their own as Gradio runs the Refresh handler, calling what it calls (the per-opponent table and
the visitor's own games) once a second: their CPU competes with the moves as it would. Goal:
p95 server time per move under 100 ms with the visitors refreshing. The round trip is mostly
the clients sharing one core (gradio_client costs tens of ms of CPU per call).

Then a database of `--results-games` finished games (written in bulk) is refreshed 30 times.
Goal: a refresh under 50 ms at 10,000 games (one aggregate query; the claim findings were stored
when each game ended).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

from gradio_client import Client

from bargain import app as arena_app
from bargain.arena.controller import Arena
from bargain.arena.results import my_games, per_arm
from bargain.records.store import Store
from bargain.web import launch_settings
from benchmarks.results import write_finished_games

GOAL_MS = 100.0
RESULTS_GOAL_MS = 50.0


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def participant(
    url: str,
    games: int,
    seed: int,
    think: float,
    opponent: str,
    ready: threading.Barrier,
    round_trips: list[float],
    made: list[int],
    errors: list[str],
) -> None:
    """Connect, wait for everyone, then play `games` whole games, recording each move's round trip."""
    rng = random.Random(seed)
    client = Client(url, verbose=False)
    ready.wait()  # connecting (the page config) is not a move: everyone starts together, connected
    for g in range(games):
        try:
            view = client.predict(
                role="buyer" if (seed + g) % 2 else "seller",
                opponent=opponent,
                condition="both_unaware",
                mode="simultaneous",
                rounds=4,
                scenario="low",
                prompt_version="train",
                player=f"bench-{seed}",
                api_name="/start_game",
            )
            while view["status"] == "active":
                price = view["your_price"] * (0.7 if view["role"] == "buyer" else 1.3)
                time.sleep(think * rng.uniform(0.5, 1.5))
                start = time.perf_counter()
                view = client.predict(
                    game_id=view["game_id"],
                    round=view["round"],
                    action="OFFER",
                    price=f"{price:.2f}",
                    message="bench",
                    api_name="/play_move",
                )
                round_trips.append(time.perf_counter() - start)
                made.append(1)
        except Exception as exc:  # reported below: a lost game is a failed benchmark
            errors.append(f"{type(exc).__name__}: {exc}")


def pin(core: int) -> None:
    """Keep this process on one core (where the machine has more than one), so that the server and
    the participants' clients do not take CPU time from each other."""
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {core % os.cpu_count()})


def crowd_main(url: str, participants: int, games: int, think: float, opponent: str, results) -> None:
    """All participants, each on its own thread; sends back (round trips, moves made, errors)."""
    pin(1)
    round_trips: list[float] = []
    made: list[int] = []
    errors: list[str] = []
    ready = threading.Barrier(participants)
    threads = [
        threading.Thread(target=participant, args=(url, games, i, think, opponent, ready, round_trips, made, errors))
        for i in range(participants)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results.put((round_trips, made, errors))


def visitor(arena: Arena, every_s: float, stop: threading.Event, times: list[float]) -> None:
    """Refresh the Results tab every `every_s` seconds until stopped (what its handler does)."""
    while not stop.wait(every_s):
        start = time.perf_counter()
        per_arm(arena)
        my_games(arena, "bench-0")
        times.append(time.perf_counter() - start)


def results_at_scale(games: int, repeats: int = 30) -> list[float]:
    """Seconds per Results refresh over a database of `games` finished games (written in bulk)."""
    with tempfile.TemporaryDirectory() as root:
        store = Store(f"sqlite:///{Path(root) / 'results.db'}")
        write_finished_games(store, games, players=500)
        arena = Arena(store, None)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            per_arm(arena)
            my_games(arena, "p7")
            times.append(time.perf_counter() - start)
        store.engine.dispose()
    return times


def load(
    participants: int,
    games: int,
    think: float,
    visitors: int,
    opponent: str = "tactic:boulware",
    app_args: tuple[str, ...] = (),
) -> dict:
    """Run the arena with `app_args` (e.g. a model backend) on a fresh SQLite database while `participants`
    scripted people play `games` games each against `opponent` and `visitors` refresh the Results tab; the
    figures, in milliseconds where timed (the server's time per move includes the opponent's answer)."""
    with tempfile.TemporaryDirectory() as root:
        db = Path(root) / "bench.db"
        every = str(participants * games + 1)  # every participant calls the API from this one address
        demo, arena = arena_app.build(
            arena_app.parse_args(
                [
                    "--db",
                    str(db),
                    "--concurrency",
                    str(participants + 14),
                    "--games-per-hour",
                    every,
                    "--games-per-hour-per-address",
                    every,
                    *app_args,
                ]
            )
        )
        server_times: list[float] = []
        original = Arena.move

        async def timed(self, *a, **k):  # the server's own time for each move
            start = time.perf_counter()
            try:
                return await original(self, *a, **k)
            finally:
                server_times.append(time.perf_counter() - start)

        Arena.move = timed
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        _, url, _ = demo.launch(
            server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_settings(demo)
        )
        stop, refreshes = threading.Event(), []
        refreshers = [
            threading.Thread(target=visitor, args=(arena, 1.0, stop, refreshes), daemon=True) for _ in range(visitors)
        ]
        # The participants run in a process of their own, so that their clients' work does not
        # compete with the server for this process's interpreter.
        context = multiprocessing.get_context("spawn")
        results = context.Queue()
        crowd = context.Process(target=crowd_main, args=(url, participants, games, think, opponent, results))
        began = time.perf_counter()
        crowd.start()
        for v in refreshers:
            v.start()
        round_trips, made, errors = results.get()
        crowd.join()
        stop.set()
        elapsed = time.perf_counter() - began
        demo.close()
        Arena.move = original
        moves = arena.store.moves_frame()
        human_moves = int((moves["actor"] == "human").sum()) if len(moves) else 0
        table = arena.store.games_frame()
        finished = int((table["status"] == "finished").sum()) if len(table) else 0
    ms = [t * 1000 for t in server_times] or [float("nan")]
    trips = [t * 1000 for t in round_trips] or [float("nan")]
    refresh = [t * 1000 for t in refreshes]
    return {
        "participants": participants,
        "games_each": games,
        "think_s": think,
        "visitors": visitors,
        "opponent": opponent,
        "moves": len(made),
        "elapsed_s": elapsed,
        "server_ms_p50": statistics.median(ms),
        "server_ms_p95": percentile(ms, 95),
        "round_trip_ms_p50": statistics.median(trips),
        "round_trip_ms_p95": percentile(trips, 95),
        "refreshes": len(refresh),
        "refresh_ms_p50": statistics.median(refresh) if refresh else None,
        "games_finished": finished,
        "moves_stored": human_moves,
        "lost": len(made) - human_moves,
        "errors": errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.arena", description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=100)
    parser.add_argument("--games", type=int, default=3, help="games per participant")
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds a participant takes before a move")
    parser.add_argument("--visitors", type=int, default=2, help="visitors refreshing the Results tab once a second")
    parser.add_argument("--results-games", type=int, default=10_000, help="finished games for the Results figure")
    args = parser.parse_args()
    pin(0)
    f = load(args.participants, args.games, args.think, args.visitors)
    print(
        f"{f['participants']} participants x {f['games_each']} games, {f['think_s']:.1f} s to think, {f['visitors']} "
        f"visitors refreshing Results: {f['moves']} moves in {f['elapsed_s']:.1f} s"
    )
    print(
        f"server time per move: p50 {f['server_ms_p50']:.1f} ms, p95 {f['server_ms_p95']:.1f} ms "
        f"(goal p95 < {GOAL_MS:.0f} ms)"
    )
    print(f"round trip seen by a participant: p50 {f['round_trip_ms_p50']:.1f} ms, p95 {f['round_trip_ms_p95']:.1f} ms")
    if f["refreshes"]:
        print(f"Results refreshes during the run: {f['refreshes']}, p50 {f['refresh_ms_p50']:.1f} ms")
    print(
        f"games finished {f['games_finished']} of {f['participants'] * f['games_each']}; moves made {f['moves']}, "
        f"stored {f['moves_stored']}; lost {f['lost']}; errors {len(f['errors'])}"
    )
    for error in f["errors"][:5]:
        print("  ", error)
    refresh = [t * 1000 for t in results_at_scale(args.results_games)]
    print(
        f"Results refresh at {args.results_games:,} finished games: p50 {statistics.median(refresh):.1f} ms, "
        f"p95 {percentile(refresh, 95):.1f} ms (goal < {RESULTS_GOAL_MS:.0f} ms)"
    )


if __name__ == "__main__":
    main()
