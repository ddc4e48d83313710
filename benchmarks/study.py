"""Study mode under load and under faults, and people against people (--pairs), through app processes on one database.

    python -m benchmarks.study --db postgresql+psycopg://USER:PASS@HOST/DB [--participants 200] [--think 5.0]
    python -m benchmarks.study --db postgresql+psycopg://USER:PASS@HOST/DB --chaos [--kill-every 20]
        [--duplicate 0.2] [--reload 0.1] [--processes 2]
    python -m benchmarks.study --pairs [--participants 100] [--think 1.0] [--db URL] [--processes 2] [--free-play]
        [--chaos [--intruders 3] [--leave 0.1]]

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

With `--chaos`, the run is made under the faults a study meets: a share of steps (`--duplicate`) is sent to both
processes at the same moment (a move with a different price: a double click, a retry through another replica),
a share of moves (`--reload`) is followed 2 ms later by a reload of the page on the other process, and every
`--kill-every` seconds one process is killed (SIGKILL, mid-request) and started again; a participant whose
process does not answer makes the step again on the other one (a browser's retry behind a load balancer). It
reports completed, stuck (not completed), duplicated moves (two counted moves of one round and side), lost
moves (a move a participant was shown as played but the database lacks), participants who got an error page,
slots counted wrongly, games left active, and the round trip per step at p50 and p95 (goal: 0 stuck, 0
duplicated, 0 lost; p95 per move under 500 ms). With `--processes 1` it runs on SQLite too (one process: the
duplicates go to it twice, and it is killed and restarted).

With `--pairs`, the participants play each other: the study has one person arm (`spec: person`), a buyer cell and
a seller cell with `--participants / 2` slots each, one game of four simultaneous rounds per participant, and a
pairing wait of at most two minutes (then the scripted program arm). The participants arrive at random within ten
think times (a fresh SQLite file unless `--db` names a database) and go through the same pages; one whose game's
other side is awaited, their partner's arrival or their partner's move of the round, asks for the page again of the
other process, as a page following its game would. Some yield and deal, some stay firm. It reports the wait to be
paired (from the step that entered the game to its first page in play), the time from a round's second move being
stored (its step answered) to the partner's page showing the round settled, at p50 and p95, the finished pairs,
those who fell back to the program arm, the quotas, and the same check against the database (between two people a
page load is such an ask, which waits up to a second, so the server times given are the steps' and the moves').
With `--chaos` it runs under the same faults, and two more (benchmarks/hostile.py): intruders (`--intruders`) try
seats that are not theirs, through a process of free play on the same database (a study's processes serve no free
play), and a share of the participants (`--leave`) leave while they wait for a partner and are dropped as the
study's idle sweep would drop them, a newcomer taking each freed place; it reports the seats taken by a second
caller and the idle participants paired after their drop (goal: 0 of each). With `--free-play`, people are paired
by free play's public queue instead, with or without `--chaos` (benchmarks/free_play.py).

Use a scratch database: the benchmark's study stays in it under a fresh name (`bench-` and six hex digits).
The participants' clients run in a process of their own; on a two-core machine the servers, the database and the
clients share the cores. The app processes are forked from a server that has imported Gradio and the app once
(multiprocessing's forkserver): each is a process of its own, killed as one, but a start, and a restart after a
kill, takes the app's build and launch (about 1 s of CPU) without the 4-5 s of CPU of a fresh interpreter's
imports. Its output goes to a file beside its timings (`*.log`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import multiprocessing
import os
import queue
import random
import secrets
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

import httpx

from benchmarks.arena import percentile
from benchmarks.crowd import Caller, Faults
from benchmarks.hostile import IdleSweep, fingerprint, intruder, intrusions, paired_after_drop, taken_by_others

GOAL_MS = 100.0
CHAOS_GOAL_MS = 500.0  # p95 of a move's round trip under faults
GAMES, ROUNDS = 2, 4
STUDY = """
name: {name}
version: 1
{design}
rounds: {rounds}
scenarios: {{split: test}}
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
timing: {{move_seconds: 600, idle_minutes: {idle}}}
payment: {{currency: GBP, base: 2.0, bonus: {{per_unit: 1.0, cap: 2.0}}, timeout_rule: no_bonus_for_timed_out_games}}
completion: {{code: BENCHDONE, screened_out_code: BENCHOUT, declined_message: "Thank you."}}
participant_id: {{id_pattern: "[A-Za-z0-9_-]{{1,64}}"}}  # ids such as bench00001 under PROLIFIC_PID
"""
# Two games against scripted tactics, each game in a cell of its own (four cells).
AGAINST_PROGRAMS = """
arms:
  a: {{spec: "tactic:boulware"}}
  b: {{spec: "tactic:linear"}}
cells: {{arms: [a, b], conditions: [both_unaware], roles: [buyer, seller]}}
games_per_participant: {games}
design: {{assignment: within, quota_per_cell: {quota}, order: random}}
"""
# One game against another participant (a buyer and a seller of the person arm), simultaneous moves; a participant
# unpaired after the longest wait plays a scripted tactic instead.
AGAINST_PEOPLE = """
arms:
  peer: {{spec: person}}
  lin: {{spec: "tactic:linear"}}
cells: {{arms: [peer], conditions: [both_unaware], roles: [buyer, seller]}}
mode: simultaneous
games_per_participant: {games}
design: {{assignment: between, quota_per_cell: {quota}}}
pairing: {{max_wait_s: {wait:g}, otherwise: lin}}
"""


# An app process of these runs lets one address start any number of games an hour (every caller is 127.0.0.1).
UNLIMITED = ["--games-per-hour", "1000000", "--games-per-hour-per-address", "1000000"]
ARRIVALS = 10.0  # people who pair up arrive at random within this many think times: some wait, some find a partner
WAIT_FOR_S = 120.0  # the longest a person waits for a partner (a study's pairing.max_wait_s; free play: cancel_game)


@dataclass(frozen=True)
class Design:
    """What the benchmark's study has its participants play."""

    arms: str  # AGAINST_PROGRAMS or AGAINST_PEOPLE
    games: int  # per participant
    cells: int
    arrivals: float  # the participants arrive at random within this many think times (0: all at once)

    def text(self, participants: int) -> str:
        """The study file's arms, cells and design for `participants`, every cell's quota exact."""
        quota = participants * self.games // self.cells
        return self.arms.format(games=self.games, quota=quota, wait=WAIT_FOR_S)


PROGRAMS = Design(AGAINST_PROGRAMS, games=GAMES, cells=4, arrivals=0.0)
PEOPLE = Design(AGAINST_PEOPLE, games=1, cells=2, arrivals=ARRIVALS)


# --- the app processes ------------------------------------------------------------------------------------------


# Forked app processes start from these modules imported: Gradio's import alone is about 3.5 s of CPU, and the
# pages' modules (and what they import: matplotlib, the claims' patterns) halve what is left of a start.
FORKS = multiprocessing.get_context("forkserver")
FORKS.set_forkserver_preload(
    [
        "gradio",
        "matplotlib.pyplot",
        "bargain.app",
        "bargain.web.arena_page",
        "bargain.web.study_page",
        "bargain.analysis.claims",
        "bargain.records.migrations.legacy",
    ]
)
STARTUP_S = 120.0  # an app process not serving by then did not start


def serve(argv: list[str], timings: Path, told: Connection) -> None:
    """An app process (`app.py` with these flags) that times the study's flow; it says "ready" on `told` once it
    serves, and when told to stop (or its parent is gone), writes the timings to `timings` as JSON ({"times":
    [[kind, seconds], ...], "cpu_s": CPU seconds since it was ready}) and exits."""
    from bargain import app as arena_app
    from bargain.study.flow import StudyRunner
    from bargain.web import launch_settings

    times: list[tuple[str, float]] = []
    page, submit = StudyRunner.page, StudyRunner.submit

    async def timed_page(self, params, **options):
        start = time.perf_counter()
        try:
            return await page(self, params, **options)
        finally:
            times.append(("page", time.perf_counter() - start))

    async def timed_submit(self, params, stage, data):
        start = time.perf_counter()
        try:
            return await submit(self, params, stage, data)
        finally:
            times.append(("move" if stage == "game" else "step", time.perf_counter() - start))

    StudyRunner.page, StudyRunner.submit = timed_page, timed_submit
    args = arena_app.parse_args(argv)
    demo, _ = arena_app.build(args)
    demo.launch(
        server_name="127.0.0.1", server_port=args.port, prevent_thread_lock=True, quiet=True, **launch_settings(demo)
    )
    told.send("ready")
    ready = time.process_time()
    with contextlib.suppress(EOFError):
        told.recv()
    timings.write_text(json.dumps({"times": times, "cpu_s": time.process_time() - ready}))
    demo.close()


def forked(argv: list[str], timings: Path, told: Connection, env: dict[str, str]) -> None:
    """`serve`, in a process forked from FORKS' server: with the environment of the process that started it, and
    its output in a file beside its timings."""
    os.environ.clear()
    os.environ.update(env)
    log = os.open(timings.with_suffix(".log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    for stream in (1, 2):
        os.dup2(log, stream)
    os.close(log)
    serve(argv, timings, told)


@dataclass
class Replica:
    """One app process on a port of its own, which can be killed and started again on the same port."""

    argv: list[str]
    timings: Path
    process: BaseProcess | None = None
    told: Connection | None = None

    @property
    def port(self) -> int:
        return int(self.argv[self.argv.index("--port") + 1])

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.is_alive()

    def start(self) -> None:
        start_all([self])

    def launch(self) -> None:
        """Start the process, not waiting for it to serve (`ready` does)."""
        self.told, theirs = FORKS.Pipe()
        self.process = FORKS.Process(target=forked, args=(self.argv, self.timings, theirs, dict(os.environ)))
        self.process.start()
        theirs.close()  # the process's end is its own: its exit is the pipe's end

    def ready(self) -> None:
        """Wait until the launched process serves, or say that it did not start, and why."""
        try:
            ready = self.told.poll(STARTUP_S) and self.told.recv() == "ready"
        except EOFError:
            ready = False
        if not ready:
            self.kill()
            log = self.timings.with_suffix(".log")
            said = log.read_text()[-3000:] if log.exists() else ""
            raise SystemExit(f"an app process did not start (exit status {self.process.exitcode}):\n{said}")

    def kill(self) -> None:
        """Die as a crashed process does: no clean-up, requests in flight get no answer."""
        self.process.kill()
        self.process.join()

    def stop(self) -> None:
        self.told.send("stop")
        self.process.join(60)


def start_all(replicas: Sequence[Replica]) -> None:
    """Start app processes side by side (each spends seconds importing before it serves), returning when every one
    serves."""
    for replica in replicas:
        replica.launch()
    for replica in replicas:
        replica.ready()


# --- the participants -------------------------------------------------------------------------------------------


def settled(view: dict, round_: int) -> bool:
    """Whether a person's view shows `round_` played by both sides (the next round, or the game's end)."""
    return view["round"] > round_ or view["status"] != "active"


def offer(view: dict, firm: bool) -> float:
    """A person's offer for the view's round: a yielding one concedes from 30% off their value (buyer) or cost
    (seller) in round 1 to it in round 4, a firm one stays 50% off, so two yielding people usually deal and a firm
    one rarely does."""
    share = 0.5 if firm else 0.4 - 0.1 * view["round"]
    return view["your_price"] * (1 - share if view["role"] == "buyer" else 1 + share)


def over(page: dict, round_: int) -> bool:
    """Whether a study page shows `round_` of its game played by both sides, or has moved on from the game."""
    return page["stage"] != "game" or settled(page["view"], round_)


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


def participant(
    urls: list[str],
    n: int,
    think: float,
    faults: Faults,
    ready: threading.Barrier,
    log: dict,
    arrivals: float = 0.0,
    sweep: IdleSweep | None = None,
) -> None:
    """One participant through the study on one process, moving to the other after the first game, through the
    page's named endpoints (`/study_page`, `/study_step`) in one page session per process (crowd.Caller: a step that
    no process answers is made again on the next one; under `faults`, some steps also go to the other process at the
    same moment, and some moves are followed by a reload there). `arrivals`: the participant comes at a random time
    within that many think times (0: all at once).

    A game whose other side is awaited (a person arm: the partner's arrival, or their move of the round) is
    followed as the page follows it, by asking for the page again, of the other process: how long the participant
    waited to be paired is logged (`waits`, from the step that entered the game), and so is each round settled by
    their own move (`stored`) or seen settled by their partner's (`seen`, with when the last ask began). Each game's
    seat is logged as the participant's (`takes`). Under `faults.leave`, a share of those who find no partner there
    as they enter their game leave then (`left`): `sweep` drops them at once (participants enter their games one at
    a time, through `sweep.gate`, so that nobody is paired with a leaver before the drop), and a newcomer takes the
    freed place on the same thread, as a recruiting platform sends someone new for a place a participant gave up."""
    rng = random.Random(n)
    firm = rng.random() < 0.3  # some hold out, most concede
    every = round(1 / (2 * faults.leave)) if faults.leave else 0  # about half the participants enter their game alone
    asked = 0.0  # when the last request was sent

    def through(caller: Caller, pid: str) -> bool:
        """One participant's way through the study: False if they left while waiting for a partner."""
        moved = False  # once the first game is over: the other process

        def call(api: str, *data, kind: str = "page", twin: list | None = None, thought: bool = False) -> dict:
            nonlocal asked
            if kind != "poll" and not thought:  # a page asking again for what it waits for does so at once
                time.sleep(think * rng.uniform(0.5, 1.5))
            which = (n + moved + (kind == "poll")) % len(urls)
            asked = time.monotonic()
            again = None if kind == "poll" else list(twin if twin is not None else data)
            return caller.send(which, api, list(data), kind, again, ("study_page", []) if kind == "move" else None)

        def until(page: dict, done: Callable[[dict], bool]) -> dict:
            """The page asked for again (of the other process) until it is `done` waiting for the other side: their
            arrival, or their move of the round (`asked`: when the last ask began)."""
            ends = time.monotonic() + 2 * WAIT_FOR_S
            while not done(page):
                if time.monotonic() > ends:
                    raise RuntimeError(f"the other side did not come or move for {2 * WAIT_FOR_S:.0f} s")
                page = call("study_page", kind="poll")
            return page

        def step(stage: str, data: dict, twin: dict | None = None, thought: bool = False) -> dict:
            return call(
                "study_step",
                stage,
                data,
                kind="move" if stage == "game" else "page",
                twin=None if twin is None else [stage, twin],
                thought=thought,
            )

        held: set[str] = set()  # the seats (or games) the participant was given

        def enter(page: dict) -> bool:
            """Note the seat of a game not seen before (`takes`); whether the participant leaves there: alone in it,
            under `faults.leave` (then dropped)."""
            if page["stage"] != "game" or page["view"]["game_id"] in held:
                return False
            view = page["view"]
            held.add(view["game_id"])
            log["takes"].append((pid, pid, view["game_id"], fingerprint(view)))
            if not every or view["status"] != "waiting":
                return False
            log["alone"].append(pid)
            if log["alone"].index(pid) % every != every - 1:
                return False
            log["left"].append((pid, view["game_id"]))
            sweep.drop(pid)
            return True

        call("study_page")
        step("consent", {"agree": True})
        step("instructions", {})
        time.sleep(think * rng.uniform(0.5, 1.5))  # the comprehension question read, then the game entered
        with sweep.gate if every else contextlib.nullcontext():  # nobody enters a game while a leaver is dropped
            page = step("comprehension", {"no_deal": "Nothing"}, thought=True)
            if enter(page):
                return False
        entered, paired = asked, set()  # when the step that entered the game was sent; games begun
        while page["stage"] not in ("completed", "full", "dropped"):
            if enter(page):
                return False
            if page["stage"] == "game" and page["view"]["status"] == "waiting":  # for a partner
                page = until(page, lambda page: page["stage"] != "game" or page["view"]["status"] != "waiting")
            elif page["stage"] == "game":
                view = page["view"]
                if page["game"] not in paired:  # the game has begun: the wait for it is over
                    paired.add(page["game"])
                    log["waits"].append(time.monotonic() - entered)
                toward = 1 if view["role"] == "buyer" else -1
                price = offer(view, firm)
                move = {"round": view["round"], "action": "OFFER", "message": "How about this?"}
                game, token, round_ = page["game"], view["game_id"], view["round"]
                page = step(
                    "game",
                    {**move, "price": f"{price:.2f}"},
                    twin={**move, "price": f"{price - 0.05 * toward:.2f}"},
                )
                log["moves"].append(pid)
                if page["stage"] == "game":  # what the participant was shown as played, to find in the database
                    log["shown"].extend(
                        (pid, game, t["round"], t["price"]) for t in page["view"]["transcript"] if t["speaker"] == "you"
                    )
                if over(page, round_):
                    log["stored"].append((token, round_, time.monotonic()))
                else:  # the other side's move of the round is awaited
                    page = until(page, functools.partial(over, round_=round_))
                    log["seen"].append((token, round_, time.monotonic(), asked))
            elif page["stage"] in ("game_survey", "final_survey"):
                moved = True
                page = step(page["stage"], answers(page))
                entered = asked
            elif page["stage"] == "debrief":
                page = step("debrief", {})
            else:
                raise RuntimeError(f"unexpected page {page['stage']}")
        log["ended"].append((pid, page["stage"]))
        return True

    # Idle connections are closed here before the server's keep-alive (5 s) would close them under a request.
    with httpx.Client(timeout=120, limits=httpx.Limits(keepalive_expiry=2)) as http:
        pid = f"bench{n:05d}"
        try:
            ready.wait()
            time.sleep(rng.uniform(0, arrivals * think))
            for newcomer in itertools.count():
                pid = f"bench{n:05d}" + (f"-{newcomer}" if newcomer else "")
                query = {"PROLIFIC_PID": pid, "STUDY_ID": "bench", "SESSION_ID": f"s{n}-{newcomer}"}
                sessions = [secrets.token_hex(8) for _ in urls]  # one page session per process, as a tab keeps one
                if through(Caller(http, urls, pid, log, faults, rng, [query], sessions), pid):
                    break
        except Exception as exc:  # reported: a lost participant is a failed benchmark
            log["errors"].append(f"{pid}: {type(exc).__name__}: {exc}")


LOGGED = (
    "trips",
    "moves",
    "shown",
    "seen",
    "ended",
    "errors",
    "retried",
    "waits",
    "stored",
    "left",
    "gave_up",
    "alone",
    "takes",
    "twins",
    "notices",
    "intruded",
    "links",
    "linked",
)


def crowd_main(
    urls: list[str],
    participants: int,
    think: float,
    faults: Faults,
    results,
    who: Callable = participant,
    hostile: Callable | None = None,
) -> None:
    """Every participant (`who`: a study's participant, or a person of `--pairs --free-play`) on a thread of its own,
    with `faults.intruders` intruders beside them (`hostile`) until they are done; sends back what they saw."""
    log: dict = {key: [] for key in LOGGED}
    ready, done = threading.Barrier(participants), threading.Event()
    threads = [threading.Thread(target=who, args=(urls, n, think, faults, ready, log)) for n in range(participants)]
    intruders = [
        threading.Thread(target=hostile, args=(n, think, done, log)) for n in range(faults.intruders if hostile else 0)
    ]
    for thread in threads + intruders:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    for thread in intruders:
        thread.join()
    results.put(log)


# --- the check --------------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What a run left in the database, against what the participants did and saw."""

    participants: int
    completed: int = 0
    stuck: int = 0  # participants who did not complete
    error_pages: int = 0  # requests answered with an error (a participant's or a duplicate's)
    duplicated_moves: int = 0  # counted moves beyond one per (game, round, role), and moves flagged duplicate
    lost_moves: int = 0  # moves a participant was shown as played that the database lacks
    slots_off: int = 0  # cell slots counted beyond (or short of) what the participants hold
    games_left_active: int = 0  # games left active, or waiting for a partner
    cells: dict[str, tuple[int, int]] = field(default_factory=dict)  # cell -> (slots taken, quota)
    pairs: int = 0  # games between two participants that finished
    fell_back: int = 0  # participants unpaired after the longest wait, who played the program arm instead
    settles_ms: list[float] = field(default_factory=list)  # settle_times: a round stored to the partner seeing it
    settled_at_once: int = 0  # rounds between people whose two moves both came back settled: nobody was waiting
    left: int = 0  # participants who left while waiting for a partner (benchmarks/hostile.py), each then dropped
    paired_after_drop: int = 0  # participants dropped as idle who hold a seat paired after their drop
    paired_before_drop: int = 0  # ... paired in the moment between their last page and their drop
    intrusions: int = 0  # intruders' calls answered
    taken_views: int = 0  # intruders' calls answered with a view not theirs
    misheld_seats: int = 0  # seats whose stored person is not the participant (or intruder) who took them
    problems: list[str] = field(default_factory=list)  # each finding in a sentence, the first ten kept
    errors: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (
            self.stuck
            or self.error_pages
            or self.duplicated_moves
            or self.lost_moves
            or self.slots_off
            or self.games_left_active
            or self.paired_after_drop
            or self.taken_views
            or self.misheld_seats
            or self.problems
        )


def check(db: str, name: str, participants: int, games_each: int, log: dict, exact_moves: bool) -> Outcome:
    """What the database holds against what the participants did; `exact_moves`: every move request made is one
    stored move (no step was sent twice or made again). A participant's game is a game of their own, or their seat
    at a game with another participant (a person arm): either way, their side of it."""
    from sqlalchemy import func, select

    from bargain.arena import PERSON
    from bargain.records.store import MoveRow, SeatRow, Store
    from bargain.study import records

    store = Store(db)
    out = Outcome(participants, errors=log["errors"][:10], error_pages=len(log["errors"]))
    people = {row["participant"]: row for row in records.participants(store, name, [1])}
    out.completed = sum(row["stage"] == "completed" for row in people.values())
    out.stuck = participants - out.completed
    held: dict[str, int] = {}
    for row in people.values():
        left = row["stage"] in ("dropped", "declined", "screened_out")  # their unfinished games' slots freed
        for cell in row["cells"][: row["games_done"]] if left else row["cells"]:
            held[cell] = held.get(cell, 0) + 1
    out.cells = records.cell_counts(store, name, 1)
    out.slots_off = sum(abs(taken - held.get(cell, 0)) for cell, (taken, _) in out.cells.items())
    if any(taken > quota for taken, quota in out.cells.values()):
        out.problems.append(f"a cell over its quota: {out.cells}")
    games = store.games_frame()
    games = games[games["study"] == name]
    with store.reading() as session:
        rows = session.execute(
            select(SeatRow.token, SeatRow.game_id, SeatRow.role, SeatRow.person, SeatRow.joined_at).where(
                SeatRow.study == name
            )
        ).all()
    seats = {token: (game_id, role) for token, game_id, role, _, _ in rows}
    out.settles_ms, out.settled_at_once, odd = settle_times(log, {token: game for token, (game, _) in seats.items()})
    if exact_moves:  # (a step sent twice, or made again, can settle a round through a request nobody timed)
        out.problems.extend(odd)
    human_role = dict(zip(games["id"], games["human_role"], strict=True))
    side: dict[tuple[str, str], tuple[str, int]] = {}  # (game, role) -> (participant, their game's index)
    for pid, row in people.items():
        for index, ref in enumerate(row["games"], 1):
            game_id, role = seats.get(ref) or (ref, human_role.get(ref))
            if (game_id, role) in side:
                out.problems.append(f"{pid} and {side[game_id, role][0]} hold the same side of game {game_id}")
            side[game_id, role] = (pid, index)
        if row["stage"] == "completed" and len(row["games"]) != games_each:
            out.problems.append(f"{pid} completed with {len(row['games'])} games of {games_each}")
    out.games_left_active = int(games["status"].isin(["active", "waiting"]).sum())
    out.left = len(log["left"])
    dropped = sorted(pid for pid, row in people.items() if row["stage"] == "dropped")
    if dropped != sorted(pid for pid, _ in log["left"]):
        out.problems.append(f"participants dropped {dropped}, who left {sorted(pid for pid, _ in log['left'])}")
    out.paired_after_drop, out.paired_before_drop = paired_after_drop(
        people, [(game_id, person, at) for _, game_id, _, person, at in rows], dict(zip(games["id"], games["status"]))
    )
    out.intrusions = len(log["intruded"])
    out.taken_views, out.misheld_seats = taken_by_others(store, log)
    out.misheld_seats += sum(person is not None and person not in people for *_, person, _ in rows)
    out.pairs = int(((games["arm"] == PERSON) & (games["status"] == "finished")).sum())
    out.fell_back = sum(extra.get("instead_of") == PERSON for extra in games["extra"] if isinstance(extra, dict))
    moves = store.moves_frame()
    moves = moves[moves["game_id"].isin(set(games["id"]))]
    with store.reading() as session:
        twice = session.execute(
            select(func.count()).select_from(
                select(MoveRow.game_id)
                .where(MoveRow.duplicate.is_(False), MoveRow.game_id.in_(list(games["id"])))
                .group_by(MoveRow.game_id, MoveRow.round, MoveRow.role)
                .having(func.count() > 1)
                .subquery()
            )
        ).scalar()
    out.duplicated_moves = int(twice) + int(moves["duplicate"].sum())
    for game_id, rows in moves.groupby("game_id"):
        if list(rows["seq"]) != list(range(len(rows))):
            out.problems.append(f"game {game_id}: moves numbered {list(rows['seq'])}")
    played = set(side.values())
    stored = {
        (*side[m.game_id, m.role], m.round, round(m.price, 2))
        for m in moves.itertuples()
        if (m.game_id, m.role) in side and m.actor == "human" and m.price == m.price and not m.duplicate
    }
    shown = {(pid, game, round_, round(price, 2)) for pid, game, round_, price in log["shown"] if price is not None}
    out.lost_moves = sum((pid, game) in played and (pid, game, r, p) not in stored for pid, game, r, p in shown) + sum(
        (pid, game) not in played for pid, game, _, _ in shown
    )
    if exact_moves and int((moves["actor"] == "human").sum()) != len(log["moves"]):
        out.problems.append(f"moves made {len(log['moves'])}, stored {int((moves['actor'] == 'human').sum())}")
    for pid, row in people.items():
        given = [(a["survey"], a["game"], a["item"], a["attempt"]) for a in records.answers(store, row["id"])]
        if row["stage"] == "completed" and (len(given) != len(set(given)) or len(given) != 1 + games_each * 4 + 1):
            out.problems.append(f"{pid}: {len(given)} answers ({len(set(given))} distinct)")
    out.problems = out.problems[:10]
    store.engine.dispose()
    return out


def settle_times(log: dict, game_of: dict[str, str]) -> tuple[list[float], int, list[str]]:
    """For each round of a game between two people (its two sides' handles matched through their seats' game in
    `game_of`; other games' rounds are left out): the milliseconds from its second move being stored (that move's
    answer) to the partner's ask showing it settled, counted from when that ask began if later. Also the rounds
    settled with nobody waiting (both moves came back settled), and each round that fits neither, in a sentence."""
    when: dict[tuple, dict] = {}
    for token, round_, at in log["stored"]:
        if token in game_of:
            when.setdefault((game_of[token], round_), {}).setdefault("stored", []).append(at)
    for token, round_, at, polled in log["seen"]:
        if token in game_of:
            when.setdefault((game_of[token], round_), {})["seen"] = (at, polled)
    settles, at_once, odd = [], 0, []
    for (game_id, round_), times in when.items():
        if "seen" in times and len(times.get("stored", [])) == 1:
            (stored_at,), (seen_at, polled) = times["stored"], times["seen"]
            settles.append(max(0.0, seen_at - max(stored_at, polled)) * 1000)
        elif "seen" not in times and len(times.get("stored", [])) == 2:
            at_once += 1
        else:
            odd.append(f"game {game_id} round {round_}: settled as {times}")
    return settles, at_once, odd


# --- the run ----------------------------------------------------------------------------------------------------


@dataclass
class Run:
    """A finished run: what the database holds, and the times."""

    name: str
    design: Design
    outcome: Outcome
    elapsed_s: float
    requests: int
    retries: int
    kills: int
    trips_ms: dict[str, list[float]]  # page / move / poll -> round trips seen by participants
    server_ms: dict[str, list[float]]  # page / move -> server times (processes that ended cleanly)
    server_cpu_s: float
    server_requests: int
    waits_ms: list[float]  # per game, from the step that entered it to its first active page (a partner's wait)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def collect(crowd: BaseProcess, results: multiprocessing.Queue) -> dict:
    """The log the participants' process sends back when they are done; an error if it died without sending it."""
    while True:
        try:
            return results.get(timeout=1.0)
        except queue.Empty:
            if not crowd.is_alive():
                raise SystemExit(f"the participants' process died (exit status {crowd.exitcode}): see above") from None


def start_crowd(
    replicas: list[Replica],
    participants: int,
    think: float,
    faults: Faults,
    who: Callable = participant,
    hostile: Callable | None = None,
) -> tuple[BaseProcess, multiprocessing.Queue]:
    """The participants (and intruders), started in a process of their own (so that their threads do not share the
    servers' interpreter), and the queue their log will come back by."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    urls = [f"http://127.0.0.1:{r.port}/" for r in replicas]
    crowd = context.Process(target=crowd_main, args=(urls, participants, think, faults, results, who, hostile))
    crowd.start()
    return crowd, results


def crowd_through(
    replicas: list[Replica],
    participants: int,
    think: float,
    faults: Faults,
    who: Callable,
    hostile: Callable | None = None,
    door: Replica | None = None,
) -> tuple[dict, float, int, list[dict]]:
    """Start the app processes (and the `door`, a process of free play the intruders call, never killed), put the
    participants (`who`, and beside them the intruders: `hostile`) through them while, under `faults.kill_every`,
    one process in turn is killed and started again, then stop them all: the participants' log, the seconds they
    took, the kills, and the timings of the processes (the door's aside) that ended cleanly."""
    kills = 0
    stop = threading.Event()

    def killer() -> None:
        nonlocal kills
        victim = 0
        while not stop.wait(faults.kill_every):
            replicas[victim].kill()
            kills += 1
            replicas[victim].start()
            victim = (victim + 1) % len(replicas)

    everyone = replicas + ([door] if door is not None else [])
    try:
        start_all(everyone)
        began = time.perf_counter()
        crowd, results = start_crowd(replicas, participants, think, faults, who, hostile)
        chaos = threading.Thread(target=killer) if faults.kill_every else None
        if chaos is not None:
            chaos.start()
        log = collect(crowd, results)
        stop.set()
        if chaos is not None:
            chaos.join()
        crowd.join()
        elapsed = time.perf_counter() - began
    finally:
        stop.set()
        for replica in everyone:
            if replica.running:
                replica.stop()
    return log, elapsed, kills, [json.loads(r.timings.read_text()) for r in replicas if r.timings.exists()]


def run(
    db: str, participants: int, think: float, faults: Faults = Faults(), processes: int = 2, design: Design = PROGRAMS
) -> Run:
    """Serve a fresh study of `design` from `processes` app processes on `db` and put `participants` through it
    (between people, under `faults.intruders`, with a door of free play on `db` for the intruders)."""
    name = f"bench-{secrets.token_hex(3)}"
    with tempfile.TemporaryDirectory() as root:
        folder = Path(root)
        for text in ("consent", "instructions", "debrief"):
            (folder / f"{text}.md").write_text(f"The benchmark's {text}.")
        (folder / "study.yaml").write_text(
            STUDY.format(name=name, design=design.text(participants), rounds=ROUNDS, idle=1 if faults.any else 60)
        )
        replicas = [
            Replica(
                [
                    "--db",
                    db,
                    "--study",
                    str(folder / "study.yaml"),
                    "--port",
                    str(free_port()),
                    "--concurrency",
                    str(participants + 20),
                ],
                folder / f"times{i}.json",
            )
            for i in range(processes)
        ]
        door = Replica(["--db", db, "--port", str(free_port()), *UNLIMITED], folder / "door.json")
        hostile = functools.partial(intruder, [f"http://127.0.0.1:{door.port}/"], True) if faults.intruders else None
        who = functools.partial(participant, arrivals=design.arrivals, sweep=IdleSweep(db, name))
        log, elapsed, kills, served = crowd_through(
            replicas, participants, think, faults, who, hostile, door if faults.intruders else None
        )
    times = [
        ("page" if kind == "step" and design is PROGRAMS else kind, seconds)  # one figure: every page that is no move
        for record in served
        for kind, seconds in record["times"]
    ]
    outcome = check(db, name, participants, design.games, log, exact_moves=not faults.any)
    kinds = ("page", "step", "move", "poll")
    return Run(
        name,
        design,
        outcome,
        elapsed,
        len(log["trips"]),
        len(log["retried"]),
        kills,
        {k: [s * 1000 for kind, s in log["trips"] if kind == k] for k in kinds},
        {k: [s * 1000 for kind, s in times if kind == k] for k in kinds},
        sum(record["cpu_s"] for record in served),
        len(times),
        [s * 1000 for s in log["waits"]],
    )


def spread(values: list[float]) -> str:
    """Times in milliseconds, as p50 and p95."""
    return (
        f"p50 {statistics.median(values):.1f} ms, p95 {percentile(values, 95):.1f} ms over {len(values)}"
        if values
        else "none"
    )


def report(result: Run, participants: int, think: float, faults: Faults, processes: int) -> None:
    """The run's figures, printed."""
    out, people = result.outcome, result.design is PEOPLE
    what = (
        f"arriving within {ARRIVALS * think:.0f} s, one game of {ROUNDS} simultaneous rounds each against another "
        "participant (a person arm)"
        if people
        else f"all at once, {GAMES} games of {ROUNDS} rounds each"
    )
    print(
        f"{participants} participants through {processes} app process(es), {what}, {think:.1f} s to think: "
        f"{result.requests} requests in {result.elapsed_s:.1f} s (study {result.name})"
    )
    if faults.any:
        where = "to both processes" if processes > 1 else "to the one process"
        print(
            f"faults: {faults.duplicate:.0%} of steps sent twice at once ({where}), {faults.reload:.0%} of moves "
            f"followed by a reload, {result.kills} kill(s) -9 of a process (every "
            f"{faults.kill_every or 0:g} s), {result.retries} step(s) made again after no answer"
        )
        for label in ("move", "page"):
            goal = f" (goal p95 < {CHAOS_GOAL_MS:.0f} ms)" if label == "move" else ""
            print(f"round trip per {label}: {spread(result.trips_ms[label])}{goal}")
        print(
            f"completed {out.completed} of {participants}; stuck {out.stuck}; duplicated moves "
            f"{out.duplicated_moves}; lost moves {out.lost_moves}; error pages {out.error_pages}; slots off "
            f"{out.slots_off}; games left active {out.games_left_active}"
        )
    else:
        # Between people a page load is the page asking again for what it waits for (it waits up to a second):
        # the steps, not the loads, are what serving costs.
        for label in ("step", "move") if people else ("page", "move"):
            print(f"server time per {label}: {spread(result.server_ms[label])} (goal p95 < {GOAL_MS:.0f} ms)")
        print(
            f"server CPU per request: {result.server_cpu_s / max(result.server_requests, 1) * 1000:.1f} ms (both "
            "processes, Gradio's request handling and its idle polling included)"
        )
        trips = result.trips_ms["page"] + result.trips_ms["move"]
        print(f"round trip seen by a participant: {spread(trips)}")
        print(f"completed {out.completed} of {participants}; errors {out.error_pages}")
    if people:
        print(
            f"wait to be paired (the step entering the game to its first page in play): {spread(result.waits_ms)}; "
            f"{out.fell_back} played the program arm instead after {WAIT_FOR_S:.0f} s"
        )
        print(
            f"a round stored to the partner's page showing it (asked of the other process): {spread(out.settles_ms)}"
            f"; {out.settled_at_once} round(s) settled with nobody waiting"
        )
        print(f"completed pairs {out.pairs} of {participants // 2}")
    if people and faults.leave:
        print(
            f"left while waiting for a partner {out.left}, each dropped at once by the idle sweep: idle participants "
            f"paired after their drop {out.paired_after_drop} (goal 0); {out.paired_before_drop} paired in the moment "
            "before it"
        )
    if people and faults.intruders:
        print(intrusions(faults.intruders, out.intrusions, out.taken_views, out.misheld_seats))
    print("quotas (slots taken / quota): " + "; ".join(f"{c} {t}/{q}" for c, (t, q) in sorted(out.cells.items())))
    print(f"nothing lost or duplicated: {'yes' if out.clean else 'NO'}")
    for line in (out.errors + out.problems)[:10]:
        print("  ", line)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.study", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db",
        help="a scratch PostgreSQL database URL (env BARGAIN_BENCH_DB or BARGAIN_TEST_POSTGRES_URL); SQLite with "
        "--processes 1; with --pairs, a fresh SQLite file unless given",
    )
    parser.add_argument(
        "--pairs",
        action="store_true",
        help="participants play each other: a study of one person arm, half buyers and half sellers who arrive over "
        "ten think times and are paired as they come, one game of four simultaneous rounds each (pairing wait, a "
        "move reaching the partner, pairs, quotas, lost and duplicated moves); on a fresh SQLite file unless --db",
    )
    parser.add_argument(
        "--free-play",
        action="store_true",
        help="with --pairs: people paired by free play's public queue (the API: start_game, get_game) instead",
    )
    parser.add_argument(
        "--participants",
        type=int,
        help="a multiple of 2, the cells filled exactly (default 200; with --pairs, 100: one buyer for each seller)",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=5.0,
        help="mean seconds a participant takes before each step (--pairs --free-play: before each move)",
    )
    parser.add_argument("--processes", type=int, default=2, help="app processes serving the study (default 2)")
    parser.add_argument(
        "--chaos",
        action="store_true",
        help="run under faults: steps sent twice, reloads elsewhere, a process killed and restarted",
    )
    parser.add_argument(
        "--duplicate",
        type=float,
        default=0.2,
        help="with --chaos: share of steps sent to two processes at once (default 0.2)",
    )
    parser.add_argument(
        "--reload",
        type=float,
        default=0.1,
        help="with --chaos: share of moves followed by a reload on the other process (default 0.1)",
    )
    parser.add_argument(
        "--kill-every",
        type=float,
        default=20.0,
        help="with --chaos: seconds between two kills of a process (default 20; 0: none)",
    )
    parser.add_argument(
        "--intruders",
        type=int,
        default=3,
        help="with --pairs --chaos: callers who try seats that are not theirs (default 3; benchmarks/hostile.py)",
    )
    parser.add_argument(
        "--leave",
        type=float,
        default=0.1,
        help="with --pairs --chaos: share of people who leave while they wait for a partner (default 0.1)",
    )
    args = parser.parse_args()
    participants = args.participants or (100 if args.pairs else 200)
    if participants % 2 or participants < 2:
        raise SystemExit("--participants must be even: each cell fills exactly (--pairs: one buyer for each seller)")
    if args.free_play and not args.pairs:
        raise SystemExit("--free-play goes with --pairs: people paired by free play's queue")
    hostile = (args.intruders, args.leave) if args.pairs else ()  # between people only
    faults = Faults(args.duplicate, args.reload, args.kill_every or None, *hostile) if args.chaos else Faults()
    with tempfile.TemporaryDirectory() as folder:
        if args.pairs:  # a file of its own: people pair on any database the app serves from two processes
            db = args.db or f"sqlite:///{Path(folder) / 'pairs.db'}"
            if args.free_play:
                from benchmarks.free_play import report_pairs, run_pairs

                result = run_pairs(db, participants, args.think, faults, args.processes)
                return report_pairs(result, db, args.think, faults)
        else:
            db = args.db or os.environ.get("BARGAIN_BENCH_DB") or os.environ.get("BARGAIN_TEST_POSTGRES_URL") or ""
            if not (db.startswith("postgresql") or db.startswith("sqlite") and args.processes == 1):
                raise SystemExit(
                    "give a scratch PostgreSQL database: --db postgresql+psycopg://USER:PASS@HOST/DB "
                    "(app processes share it, as a study served by several processes would); SQLite serves "
                    "one process: --db sqlite:///FILE --processes 1"
                )
        result = run(db, participants, args.think, faults, args.processes, PEOPLE if args.pairs else PROGRAMS)
    report(result, participants, args.think, faults, args.processes)


if __name__ == "__main__":
    main()
