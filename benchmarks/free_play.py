"""People of free play paired by its public queue, through app processes on one database: the run of
`python -m benchmarks.study --pairs --free-play` (benchmarks/study.py runs the study's person arm beside it).

    python -m benchmarks.study --pairs --free-play [--participants 100] [--think 1.0] [--db URL] [--processes 2]
        [--chaos [--kill-every 20] [--duplicate 0.2] [--reload 0.1] [--intruders 3] [--leave 0.1]]

Each person chooses the same settings against `person:queue` through the API (`start_game`, then `get_game`'s long
poll until paired), a buyer or a seller at home on one process, arriving at random within ten think times; each moves
through a process chosen at random and awaits the other's move through the other one. Reported: the wait to be
paired (start_game to an active view) and the time from a round's second move being stored to the partner's long poll
showing it, at p50 and p95; from the database, the finished pairs, lost moves (sent, not stored), duplicated moves (a
round and side stored more than once, or a move nobody sent), people left waiting (who gave up, or whose wait was
cancelled while they kept asking), games left unfinished and people seated twice (goal: 0 of each).

With `--chaos`, the study's faults (benchmarks/crowd.py), as free play's API meets them: a share of starts also sent to
the other process at the same moment, and of moves, with another price (one is played, the other answered "already
played"), a share of moves followed 2 ms later by a look (`get_game`) on the other process, a process killed every
`--kill-every` seconds and started again, every request no process answers made again on the next one (a start with its
start id, so that its person is given the seat the first one took, never a second). A wait is live only while its person
keeps asking for it (LIVE_S, bargain/arena/people.py): a waiting person asks again at once after each long poll of
WAIT_S, through the next process while theirs is down. Intruders try seats that are not theirs (benchmarks/hostile.py).
People who leave (`--leave`, the share of people added as such): each chooses settings of their own (one scenario of the
tier, a queue nobody else is in), looks at their wait twice, and leaves; LIVE_S + 1 s after their last look someone
chooses those settings with the other role, then someone with the leaver's role, and the two must be paired together. (A
person who has just left is live for LIVE_S: the queue cannot know sooner, and may pair someone with them in that time;
a queue of their own keeps the run to the case the rule is for.) Reported: people who left and were paired after LIVE_S
since their last look (goal 0).
"""

from __future__ import annotations

import functools
import random
import secrets
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

from benchmarks.crowd import Caller, Faults
from benchmarks.hostile import fingerprint, intruder, intrusions, paired_after_gone, taken_by_others
from benchmarks.study import (
    ARRIVALS,
    CHAOS_GOAL_MS,
    ROUNDS,
    UNLIMITED,
    WAIT_FOR_S,
    Replica,
    crowd_through,
    free_port,
    offer,
    settle_times,
    settled,
    spread,
)

# What every person chooses (the opponent, condition, mode, rounds, scenario, prompts), their role aside.
PAIRED = ("person:queue", "both_unaware", "simultaneous", ROUNDS, "low", "train")
WAIT_S = 5.0  # each long poll of get_game (the API allows up to 10 s)
LOOKS = 2  # how often a person who leaves looks at their wait first


def attend(
    urls: list[str],
    player: str,
    role: str,
    settings: tuple,
    home: int,
    think: float,
    faults: Faults,
    log: dict,
    delay: float,
) -> None:
    """A person who comes after `delay` seconds, joins the queue for `settings` as `role` on process `home`, asks for
    their wait there until paired (a long poll after another), then plays the game to its end: each move to a process
    chosen at random, and a move that did not settle the round followed by asks for the other's through the other
    process, as a page reloaded behind a load balancer would."""
    rng = random.Random(player)
    # Idle connections are closed here before the server's keep-alive (5 s) would close them under a request.
    with httpx.Client(timeout=120, limits=httpx.Limits(keepalive_expiry=2)) as http:
        caller = Caller(http, urls, player, log, faults, rng)
        try:
            time.sleep(delay)
            asked = time.monotonic()
            start = [role, *settings, player, "buyer", secrets.token_urlsafe(16)]  # sent again: the same start
            view = caller.send(home, "start_game", start, "start_game", twin=start)
            token = view["game_id"]
            log["takes"].append((player, player, token, fingerprint(view)))
            while view["status"] == "waiting":
                if time.monotonic() - asked > WAIT_FOR_S:
                    log["gave_up"].append(player)
                    caller.call(home, "cancel_game", [token], "cancel_game")
                    return
                view = caller.call(home, "get_game", [token, WAIT_S], "get_game")
            if view["status"] == "cancelled":  # the wait was lost while its person kept asking for it
                log["ended"].append((player, view["status"]))
                return
            log["waits"].append(time.monotonic() - asked)
            firm = rng.random() < 0.3
            while view["status"] == "active":
                round_ = view["round"]
                time.sleep(think * rng.uniform(0.5, 1.5))
                which = rng.randrange(len(urls))
                price = offer(view, firm)
                move, other = [token, round_, "OFFER"], price - 0.05 * (1 if role == "buyer" else -1)
                view = caller.send(
                    which,
                    "play_move",
                    [*move, f"{price:.2f}", f"{role[0]}{round_}"],
                    "play_move",
                    twin=[*move, f"{other:.2f}", f"{role[0]}{round_} again"],
                    look=("get_game", [token, 0]),
                )
                log["moves"].append((token, round_, role))
                if settled(view, round_):  # the round's second move: the other person is waiting for it
                    log["stored"].append((token, round_, time.monotonic()))
                    continue
                ends = time.monotonic() + 2 * WAIT_FOR_S
                while not settled(view, round_):
                    if time.monotonic() > ends:
                        raise RuntimeError(
                            f"the other side did not move for {2 * WAIT_FOR_S:.0f} s: game {token}, shown "
                            f"{view['status']} in round {view['round']} with {len(view['transcript'])} turns; "
                            f"this person's move of round {round_} was sent"
                        )
                    polled = time.monotonic()
                    view = caller.call((which + 1) % len(urls), "get_game", [token, WAIT_S], "get_game")
                log["seen"].append((token, round_, time.monotonic(), polled))
            log["ended"].append((player, view["status"]))
        except Exception as exc:  # reported: a person who could not play is a failed benchmark
            log["errors"].append(f"{player}: {type(exc).__name__}: {exc}")


def person(
    run_id: str,
    people: int,
    urls: list[str],
    n: int,
    think: float,
    faults: Faults,
    ready: threading.Barrier,
    log: dict,
) -> None:
    """Person `n` of the run: one of the `people`, a buyer (even `n`) or a seller, at home on one process (two buyers
    and two sellers in turn: every process holds both roles), who arrives at a random time; beyond them, one who
    leaves (and the two who come after)."""
    ready.wait()
    if n >= people:
        return leaver(run_id, urls, n - people, think, faults, log)
    role, home = ("buyer", "seller")[n % 2], n // 2 % len(urls)
    arrival = random.Random(n).uniform(0, ARRIVALS * think)
    attend(urls, f"{run_id}-{n:04d}", role, PAIRED, home, think, faults, log, arrival)


def leaver(run_id: str, urls: list[str], i: int, think: float, faults: Faults, log: dict) -> None:
    """The `i`-th person who leaves: waits in a queue of their own, looks at their wait LOOKS times and leaves (`left`,
    with the time of the last look); LIVE_S + 1 s later someone comes with the other role, and a think time after them
    someone with the leaver's role."""
    from bargain.arena.people import LIVE_S

    role, other = ("buyer", "seller")[i % 2], ("seller", "buyer")[i % 2]
    settings = (*PAIRED[:4], f"{PAIRED[4]}:{i}", PAIRED[5])
    player = f"{run_id}-left{i}"
    rng = random.Random(player)
    with httpx.Client(timeout=120) as http:
        caller = Caller(http, urls, player, log, faults, rng)
        try:
            time.sleep(rng.uniform(0, ARRIVALS * think))
            start = [role, *settings, player, "buyer", secrets.token_urlsafe(16)]
            view = caller.send(0, "start_game", start, "start_game", twin=start)
            log["takes"].append((player, player, view["game_id"], fingerprint(view)))
            for _ in range(LOOKS):
                time.sleep(think)
                view = caller.call(0, "get_game", [view["game_id"], 0], "get_game")
            log["left"].append((player, view["game_id"], datetime.now(UTC).replace(tzinfo=None)))
        except Exception as exc:
            log["errors"].append(f"{player}: {type(exc).__name__}: {exc}")
            return
    time.sleep(LIVE_S + 1)
    second = threading.Thread(
        target=attend, args=(urls, f"{player}-b", role, settings, 1 % len(urls), think, faults, log, think)
    )
    second.start()
    attend(urls, f"{player}-a", other, settings, 0, think, faults, log, 0.0)
    second.join()


@dataclass
class PairsRun:
    """A finished `--pairs --free-play` run: what the database holds against what the people did, and the times."""

    people: int  # who played (those who left aside)
    processes: int
    elapsed_s: float
    requests: int
    server_cpu_s: float
    waits_ms: list[float]  # from a person's start_game to their view being active
    settles_ms: list[float]  # from a round's second move being stored to the partner's long poll showing it
    moves_ms: list[float]  # play_move's round trip
    kills: int = 0
    retries: int = 0  # requests made again after no answer
    twins: int = 0  # starts and moves also sent to the other process at the same moment
    notices: int = 0  # answers saying that round was already played
    settled_at_once: int = 0  # rounds whose two moves both came back settled: nobody was waiting
    pairs: int = 0  # games of the run's people that finished
    deals: int = 0
    moves_sent: int = 0
    moves_stored: int = 0
    lost_moves: int = 0  # moves sent (play_move answered) that the database lacks
    duplicated_moves: int = 0  # stored moves beyond one per (game, round, role), and moves not sent
    waiting: int = 0  # people who gave up waiting, and games still waiting in the database
    waits_lost: int = 0  # people whose wait was cancelled while they kept asking for it
    unfinished: int = 0  # people who did not end their game, and games left active
    left: int = 0  # people who left their wait on purpose
    paired_after_gone: int = 0  # ... and were paired after LIVE_S had passed since their last look
    intrusions: int = 0  # intruders' calls answered
    taken_views: int = 0  # intruders' calls answered with a view not theirs
    misheld_seats: int = 0  # seats whose stored person is not the one who took them
    seated_twice: int = 0  # people holding more than the one seat they asked for (a start made twice)
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (
            self.lost_moves
            or self.duplicated_moves
            or self.waiting
            or self.waits_lost
            or self.unfinished
            or self.paired_after_gone
            or self.taken_views
            or self.misheld_seats
            or self.seated_twice
            or self.errors
            or self.problems
        )


def check_pairs(db: str, result: PairsRun, log: dict, exact: bool) -> None:
    """Fill in `result` from the database: the games of the people who played (the seats they were given), each of
    whose (round, role) must be stored exactly once and as many times as it was sent; the time from a round being
    stored to the partner seeing it, each round's two sides matched through their seats' game; the people who left,
    and the seats taken by a second caller. `exact`: no request was sent twice or made again, so that every round
    was settled by a move someone timed."""
    from sqlalchemy import select

    from bargain.arena.people import LIVE_S
    from bargain.records.store import GameRow, MoveRow, SeatRow, Store

    store = Store(db)
    left = {who for who, _, _ in log["left"]}
    tokens = [token for who, _, token, _ in log["takes"] if not who.startswith("intruder") and who not in left]
    with store.reading() as session:
        ids = select(SeatRow.game_id).where(SeatRow.token.in_(tokens))
        game_of: dict[str, str] = dict(
            session.execute(select(SeatRow.token, SeatRow.game_id).where(SeatRow.game_id.in_(ids))).all()
        )
        ids = sorted(set(game_of.values()))
        games = session.execute(select(GameRow.id, GameRow.status, GameRow.deal).where(GameRow.id.in_(ids))).all()
        stored = session.execute(
            select(MoveRow.game_id, MoveRow.round, MoveRow.role).where(MoveRow.game_id.in_(ids))
        ).all()
    sent = [(game_of.get(token), round_, role) for token, round_, role in log["moves"]]
    counts: dict[tuple, int] = {}
    for move in stored:
        counts[tuple(move)] = counts.get(tuple(move), 0) + 1
    result.moves_sent, result.moves_stored = len(sent), len(stored)
    result.lost_moves = sum(move not in counts for move in sent)
    result.duplicated_moves = sum(c - 1 for c in counts.values()) + len(set(counts) - set(sent))
    if len(sent) != len(set(sent)):
        result.problems.append(f"{len(sent) - len(set(sent))} move(s) sent twice for one round")
    status = {game_id: state for game_id, state, _ in games}
    result.pairs = sum(state == "finished" for state in status.values())
    result.deals = sum(bool(deal) for _, state, deal in games if state == "finished")
    result.waiting = len(log["gave_up"]) + sum(state == "waiting" for state in status.values())
    result.waits_lost = sum(state == "cancelled" for _, state in log["ended"])
    result.unfinished = (result.people - len(log["ended"]) - len(log["gave_up"])) + sum(
        state == "active" for state in status.values()
    )
    if result.pairs * 2 != result.people:
        result.problems.append(f"{result.pairs} finished games for {result.people} people ({status})"[:300])
    result.settles_ms, result.settled_at_once, odd = settle_times(log, game_of)
    if exact:
        result.problems.extend(odd)
    result.left = len(log["left"])
    result.paired_after_gone, odd = paired_after_gone(store, log, LIVE_S)
    result.problems.extend(odd)
    result.intrusions = len(log["intruded"])
    result.taken_views, result.misheld_seats = taken_by_others(store, log)
    result.seated_twice = seated_twice(store, log)
    result.problems = result.problems[:10]
    store.engine.dispose()


def seated_twice(store, log: dict) -> int:
    """How many of the run's people hold more than one seat over the run's items: each started one game, once,
    however often the start was sent (intruders who borrow their ids start games over another tier's)."""
    from sqlalchemy import func, select

    from bargain.records.store import GameRow, SeatRow

    people = {who for who, _, _, _ in log["takes"] if not who.startswith("intruder")}
    with store.reading() as session:
        return len(
            session.execute(
                select(SeatRow.person)
                .join(GameRow, GameRow.id == SeatRow.game_id)
                .where(SeatRow.person.in_(people), GameRow.scenario.startswith(f"{PAIRED[4]}:"))
                .group_by(SeatRow.person)
                .having(func.count() > 1)
            ).all()
        )


def run_pairs(db: str, people: int, think: float, faults: Faults = Faults(), processes: int = 2) -> PairsRun:
    """`processes` app processes on `db`, and `people` people (half buyers, half sellers) paired by the queue through
    them, under `faults` (with `faults.leave`, that share of people again leave, each followed by two who play)."""
    run_id = f"pairs-{secrets.token_hex(3)}"
    leavers = max(1, round(people * faults.leave)) if faults.leave else 0
    with tempfile.TemporaryDirectory() as root:
        replicas = [
            Replica(["--db", db, "--port", str(free_port()), *UNLIMITED], Path(root) / f"times{i}.json")
            for i in range(processes)
        ]
        urls = [f"http://127.0.0.1:{r.port}/" for r in replicas]
        log, elapsed, kills, served = crowd_through(
            replicas,
            people + leavers,
            think,
            faults,
            functools.partial(person, run_id, people),
            functools.partial(intruder, urls, False) if faults.intruders else None,
        )
    result = PairsRun(
        people + 2 * leavers,
        processes,
        elapsed,
        len(log["trips"]),
        sum(record["cpu_s"] for record in served),
        [s * 1000 for s in log["waits"]],
        [],
        [s * 1000 for api, s in log["trips"] if api == "play_move"],
        kills,
        len(log["retried"]),
        len(log["twins"]),
        len(log["notices"]),
        errors=log["errors"][:10],
    )
    check_pairs(db, result, log, exact=not faults.any)
    return result


def report_pairs(result: PairsRun, db: str, think: float, faults: Faults) -> None:
    """The run's figures, printed."""
    where = db.split("://")[0].split("+")[0]
    print(
        f"{result.people} people ({result.people // 2} buyers, {result.people // 2} sellers) through "
        f"{result.processes} app process(es) on {where}, arriving within {ARRIVALS * think:.0f} s, paired by the "
        f"public queue, {ROUNDS} simultaneous rounds, {think:.1f} s to think: {result.requests} requests in "
        f"{result.elapsed_s:.1f} s"
    )
    if faults.any:
        print(
            f"faults: {faults.duplicate:.0%} of starts and moves sent twice at once ({result.twins}; "
            f"{result.notices} answers 'already played'), {faults.reload:.0%} of moves followed by a look on the "
            f"other process, {result.kills} kill(s) -9 of a process (every {faults.kill_every or 0:g} s), "
            f"{result.retries} request(s) made again after no answer"
        )
    print(f"wait to be paired (start_game to an active view): {spread(result.waits_ms)}")
    print(
        f"a round stored to the partner's long poll showing it (through the other process): {spread(result.settles_ms)}"
        f"; {result.settled_at_once} round(s) settled with nobody waiting"
    )
    goal = f" (goal p95 < {CHAOS_GOAL_MS:.0f} ms)" if faults.any else ""
    print(f"round trip per move: {spread(result.moves_ms)}{goal}")
    if not faults.any:  # (a process killed keeps no account of its CPU)
        print(
            f"server CPU per request: {result.server_cpu_s / max(result.requests, 1) * 1000:.1f} ms (every process, "
            "long polls included)"
        )
    print(
        f"completed pairs {result.pairs} of {result.people // 2} ({result.deals} deals); moves sent "
        f"{result.moves_sent}, stored {result.moves_stored}; lost {result.lost_moves}; duplicated "
        f"{result.duplicated_moves}; left waiting {result.waiting}; waits lost {result.waits_lost}; unfinished "
        f"{result.unfinished}; seated twice {result.seated_twice}; errors {len(result.errors)}"
    )
    if faults.leave:
        print(
            f"left their wait {result.left}, each in a queue of their own: paired after LIVE_S since their last look "
            f"{result.paired_after_gone} (goal 0)"
        )
    if faults.intruders:
        print(intrusions(faults.intruders, result.intrusions, result.taken_views, result.misheld_seats))
    print(f"nothing lost or duplicated: {'yes' if result.clean else 'NO'}")
    for line in (result.errors + result.problems)[:10]:
        print("  ", line)
