"""Study mode under load: simulated participants at once through two app processes on one PostgreSQL.

    python -m benchmarks.study --db postgresql+psycopg://USER:PASS@HOST/DB [--participants 200] [--think 5.0]

Two app processes serve one study (two games per participant against scripted tactics, four rounds each, a
survey after each game and a final one) from the same database. Each simulated participant goes through the
study as a person would: the link, consent, instructions, the comprehension question, two games, the surveys,
the debrief and the completion code, on the process its link first reached (half the participants on each),
except that every participant comes back to the other process after their first game (a reload that reaches
another replica) and finishes there: each game's loop is handed over between processes once
(tests/test_study_processes.py switches process at every move, for correctness, not speed). Before each step
a participant takes `--think` seconds on average (0.5x to 1.5x, seeded): a person reading a page, choosing a
price or answering a survey takes far longer, so the default is a heavy load. Everyone starts together, so the
participants move in waves.

Reported: the server time (inside the app, from a request's arrival at the study's flow to its answer) per
page (every step that is not a move) and per move, at p50 and p95, for both processes together (goal: p95
under 100 ms); the servers' CPU time per request (what sizes a machine: Gradio's request handling and its idle
polling included); the round trip a participant sees; and a check against the database that nothing was lost
or duplicated: every participant completed exactly once, every cell filled to its quota and no further, every
game finished with its moves numbered without a gap, every move a participant made stored once, every survey
answer stored once.

Use a scratch database: the benchmark's study stays in it under a fresh name (`bench-` and six hex digits).
The participants' clients run in a process of their own; on a two-core machine the servers, PostgreSQL and the
clients share the cores.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx


from benchmarks.arena import percentile

GOAL_MS = 100.0
ROOT = Path(__file__).resolve().parents[1]
GAMES, ROUNDS = 2, 4
CELLS = ("a/both_unaware/buyer", "a/both_unaware/seller", "b/both_unaware/buyer", "b/both_unaware/seller")
STUDY = """
name: {name}
version: 1
arms:
  a: {{spec: "tactic:boulware"}}
  b: {{spec: "tactic:linear"}}
cells: {{arms: [a, b], conditions: [both_unaware], roles: [buyer, seller]}}
rounds: {rounds}
scenarios: {{split: test}}
games_per_participant: {games}
design: {{assignment: within, quota_per_cell: {quota}, order: random}}
texts: {{consent: consent.md, instructions: instructions.md, debrief: debrief.md, consent_version: bench}}
comprehension:
  attempts: 2
  questions:
    - {{id: no_deal, text: "What does no deal pay?", options: [Nothing, Everything], answer: Nothing}}
surveys:
  per_game:
    - builtin: honesty
    - builtin: credulity
    - builtin: person_or_program
    - {{id: satisfaction, type: likert, text: "Satisfied?", scale: [1, 7], anchors: [Not at all, Very]}}
  final:
    - {{id: comments, type: text, text: "Anything else?", required: false}}
timing: {{move_seconds: 600, idle_minutes: 60}}
payment: {{currency: GBP, base: 2.0, bonus: {{per_unit: 1.0, cap: 2.0}}, timeout_rule: no_bonus_for_timed_out_games}}
completion: {{code: BENCHDONE, screened_out_code: BENCHOUT, declined_message: "Thank you."}}
"""


# --- the app processes ------------------------------------------------------------------------------------------


def serve(argv: list[str], timings: Path) -> None:
    """An app process (`app.py` with these flags) that times the study's flow; when its standard input closes, it
    writes the timings to `timings` as JSON ({"times": [[kind, seconds], ...], "cpu_s": CPU seconds since it was
    ready}) and exits."""
    import app as arena_app
    from bargain.arena import LAUNCH_DEFAULTS
    from bargain.study.flow import StudyRunner

    times: list[tuple[str, float]] = []
    page, submit = StudyRunner.page, StudyRunner.submit

    async def timed_page(self, params):
        start = time.perf_counter()
        try:
            return await page(self, params)
        finally:
            times.append(("page", time.perf_counter() - start))

    async def timed_submit(self, params, stage, data):
        start = time.perf_counter()
        try:
            return await submit(self, params, stage, data)
        finally:
            times.append(("move" if stage == "game" else "page", time.perf_counter() - start))

    StudyRunner.page, StudyRunner.submit = timed_page, timed_submit
    args = arena_app.parse_args(argv)
    demo, _ = arena_app.build(args)
    demo.launch(server_name="127.0.0.1", server_port=args.port, prevent_thread_lock=True, quiet=True,
                **LAUNCH_DEFAULTS)
    print("ready", flush=True)
    ready = time.process_time()
    sys.stdin.read()
    timings.write_text(json.dumps({"times": times, "cpu_s": time.process_time() - ready}))
    demo.close()


def start_app(db: str, study: Path, port: int, timings: Path, concurrency: int) -> subprocess.Popen:
    argv = ["--db", db, "--study", str(study), "--port", str(port), "--concurrency", str(concurrency)]
    return subprocess.Popen([sys.executable, "-m", "benchmarks.study", "--serve", json.dumps(argv), str(timings)],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def wait_until_up(app: subprocess.Popen) -> None:
    line = app.stdout.readline()
    if line.strip() != "ready":
        raise SystemExit(f"an app process did not start (exit status {app.wait()}); see its error above")


# --- the participants -------------------------------------------------------------------------------------------


def answers(page: dict) -> dict:
    """A survey page answered: the first option of each choice, the middle of each scale, a short text."""
    out = {}
    for item in page["items"]:
        if item["type"] == "choice":
            out[item["id"]] = item["options"][0]
        elif item["type"] == "likert":
            out[item["id"]] = (item["scale"][0] + item["scale"][1]) // 2
        else:
            out[item["id"]] = "fine"
    return out


def participant(urls: list[str], n: int, think: float, ready: threading.Barrier, log: dict) -> None:
    """One participant through the study on one process, moving to the other after the first game. It calls the page's
    named endpoints (`/study_page`, `/study_step`) over HTTP as `gradio_client` does for endpoints outside the
    queue, in one page session per process, without the client library's own CPU cost per call, which on a small
    machine would take the servers'."""
    rng = random.Random(n)
    query = {"PROLIFIC_PID": f"bench{n:05d}", "STUDY_ID": "bench", "SESSION_ID": f"s{n}"}
    sessions = [secrets.token_hex(8) for _ in urls]  # one page session per process, as a browser tab keeps one
    moved = False  # once the first game is over: the other process

    def call(api: str, *data) -> dict:
        time.sleep(think * rng.uniform(0.5, 1.5))
        which = (n + moved) % len(urls)
        start = time.perf_counter()
        answer = http.post(f"{urls[which]}gradio_api/run/{api}",
                           json={"data": [query, *data], "session_hash": sessions[which]})
        log["trips"].append(time.perf_counter() - start)
        if answer.status_code != 200:
            raise RuntimeError(f"{api}: HTTP {answer.status_code} {answer.text[:200]}")
        return answer.json()["data"][0]

    def step(stage: str, data: dict) -> dict:
        return call("study_step", stage, data)

    # Idle connections are closed here before the server's keep-alive (5 s) would close them under a request.
    with httpx.Client(timeout=120, limits=httpx.Limits(keepalive_expiry=2)) as http:
        try:
            ready.wait()
            page = call("study_page")
            step("consent", {"agree": True})
            step("instructions", {})
            page = step("comprehension", {"no_deal": "Nothing"})
            while page["stage"] not in ("completed", "full", "dropped"):
                if page["stage"] == "game":
                    view = page["view"]
                    toward = 1 if view["role"] == "buyer" else -1
                    price = view["your_price"] * (1 - 0.2 * toward) + 0.1 * view["round"] * toward
                    page = step("game", {"round": view["round"], "action": "OFFER", "price": f"{price:.2f}",
                                         "message": "How about this?"})
                    log["moves"].append(query["PROLIFIC_PID"])
                elif page["stage"] in ("game_survey", "final_survey"):
                    moved = True
                    page = step(page["stage"], answers(page))
                elif page["stage"] == "debrief":
                    page = step("debrief", {})
                else:
                    raise RuntimeError(f"unexpected page {page['stage']}")
            log["ended"].append((query["PROLIFIC_PID"], page["stage"]))
        except Exception as exc:  # reported: a lost participant is a failed benchmark
            log["errors"].append(f"{query['PROLIFIC_PID']}: {type(exc).__name__}: {exc}")


def crowd_main(urls: list[str], participants: int, think: float, results) -> None:
    """Every participant on a thread of its own; sends back what they saw."""
    log: dict[str, list] = {"trips": [], "moves": [], "ended": [], "errors": []}
    ready = threading.Barrier(participants)
    threads = [threading.Thread(target=participant, args=(urls, n, think, ready, log)) for n in range(participants)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(log)


# --- the check --------------------------------------------------------------------------------------------------


def check(db: str, name: str, participants: int, log: dict) -> list[str]:
    """What the database holds against what the participants did; an empty list when nothing was lost or doubled."""
    from bargain.store import Store
    from bargain.study import records

    store = Store(db)
    problems = []
    counts = records.cell_counts(store, name, 1)
    quota = participants * GAMES // len(CELLS)
    if counts != {cell: (quota, quota) for cell in CELLS}:
        problems.append(f"cells {counts}, expected {quota} of {quota} each")
    games = store.games_frame()
    games = games[games["study"] == name]
    if len(games) != participants * GAMES or not (games["status"] == "finished").all():
        problems.append(f"{len(games)} games, {int((games['status'] == 'finished').sum())} finished; "
                        f"expected {participants * GAMES}")
    if len(games) and games["participant"].value_counts().max() != GAMES:
        problems.append("a participant has more games than the study gives")
    moves = store.moves_frame()
    moves = moves[moves["game_id"].isin(set(games["id"]))]
    for game_id, rows in moves.groupby("game_id"):
        if list(rows["seq"]) != list(range(len(rows))):
            problems.append(f"game {game_id}: moves numbered {list(rows['seq'])}")
    stored = int((moves["actor"] == "human").sum())
    if stored != len(log["moves"]):
        problems.append(f"moves made {len(log['moves'])}, stored {stored}")
    completed = [pid for pid, stage in log["ended"] if stage == "completed"]
    if len(completed) != participants or len(set(completed)) != participants:
        problems.append(f"{len(completed)} participants completed of {participants}")
    for pid in completed[:participants]:
        row = records.participant(store, name, pid)
        given = [(a["survey"], a["game"], a["item"], a["attempt"]) for a in records.answers(store, row["id"])]
        if row["stage"] != "completed" or len(given) != len(set(given)) or len(given) != 1 + GAMES * 4 + 1:
            problems.append(f"{pid}: stage {row['stage']}, {len(given)} answers ({len(set(given))} distinct)")
            break
    store.engine.dispose()
    return problems


# --- the run ----------------------------------------------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.study", description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=os.environ.get("BARGAIN_BENCH_DB") or os.environ.get("BARGAIN_TEST_POSTGRES_URL"),
                        help="a scratch PostgreSQL database URL (env BARGAIN_BENCH_DB or BARGAIN_TEST_POSTGRES_URL)")
    parser.add_argument("--participants", type=int, default=200, help="a multiple of 2 (the cells fill exactly)")
    parser.add_argument("--think", type=float, default=5.0, help="mean seconds a participant takes before each step")
    parser.add_argument("--serve", nargs=2, metavar=("ARGV", "TIMINGS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(json.loads(args.serve[0]), Path(args.serve[1]))
    if not args.db or not args.db.startswith("postgresql"):
        raise SystemExit("give a scratch PostgreSQL database: --db postgresql+psycopg://USER:PASS@HOST/DB "
                         "(two app processes share it, as a study served by several processes would)")
    if args.participants % 2:
        raise SystemExit("--participants must be even: two games each fill four cells exactly")
    name = f"bench-{secrets.token_hex(3)}"
    with tempfile.TemporaryDirectory() as root:
        folder = Path(root)
        for text in ("consent", "instructions", "debrief"):
            (folder / f"{text}.md").write_text(f"The benchmark's {text}.")
        (folder / "study.yaml").write_text(STUDY.format(name=name, rounds=ROUNDS, games=GAMES,
                                                        quota=args.participants * GAMES // len(CELLS)))
        ports = [free_port(), free_port()]
        timings = [folder / f"times{i}.json" for i in range(2)]
        apps = [start_app(args.db, folder / "study.yaml", port, path, args.participants + 20)
                for port, path in zip(ports, timings)]
        try:
            for app in apps:
                wait_until_up(app)
            context = multiprocessing.get_context("spawn")
            results = context.Queue()
            crowd = context.Process(target=crowd_main, args=([f"http://127.0.0.1:{p}/" for p in ports],
                                                             args.participants, args.think, results))
            began = time.perf_counter()
            crowd.start()
            log = results.get()
            crowd.join()
            elapsed = time.perf_counter() - began
        finally:
            for app in apps:
                app.stdin.close()
                app.wait(60)
        served = [json.loads(path.read_text()) for path in timings if path.exists()]
        times = [entry for record in served for entry in record["times"]]
        server_cpu = sum(record["cpu_s"] for record in served)
    problems = check(args.db, name, args.participants, log)
    pages = [s * 1000 for kind, s in times if kind == "page"]
    moves = [s * 1000 for kind, s in times if kind == "move"]
    trips = [s * 1000 for s in log["trips"]]
    print(f"{args.participants} participants at once through 2 app processes on PostgreSQL, {GAMES} games of "
          f"{ROUNDS} rounds each, {args.think:.1f} s to think: {len(trips)} requests in {elapsed:.1f} s (study {name})")
    for label, values in (("page", pages), ("move", moves)):
        print(f"server time per {label}: p50 {statistics.median(values):.1f} ms, p95 {percentile(values, 95):.1f} ms "
              f"over {len(values)} (goal p95 < {GOAL_MS:.0f} ms)")
    print(f"server CPU per request: {server_cpu / max(len(times), 1) * 1000:.1f} ms (both processes, Gradio's "
          "request handling and its idle polling included)")
    print(f"round trip seen by a participant: p50 {statistics.median(trips):.1f} ms, p95 {percentile(trips, 95):.1f} ms")
    print(f"completed {sum(stage == 'completed' for _, stage in log['ended'])} of {args.participants}; errors "
          f"{len(log['errors'])}; nothing lost or duplicated: {'yes' if not problems and not log['errors'] else 'NO'}")
    for line in (log["errors"] + problems)[:10]:
        print("  ", line)


if __name__ == "__main__":
    main()
