"""What the chaos runs between people (`python -m benchmarks.study --pairs --chaos`, with or without `--free-play`)
add to the faults: intruders who try seats that are not theirs, and people who leave while they wait; and the checks
that no seat went to a second caller and that nobody who had left was paired afterwards.

A seat opens to its token only (bargain/arena/people.py): a player id, `guest` or none never opens one. Each
intruder (`--intruders`) is a caller of free play's API on a thread beside the people, making a call about every
think time until the people are done, each call one of:

- host: start a game against `person:invite` under a fresh id of their own (their own seat; the link is kept);
- take: open a link another intruder hosts, under a fresh id (its first taker: their own seat);
- rejoin: open a link already taken, as its host, as its taker, as one of the people, as `guest`, with no id or as
  themselves (refused, whoever asks);
- link: ask for a link's game, or move in it, with the link's token as if it were a seat's (refused: no such game);
- borrow: start a game under one of the people's player ids, `guest` or none, with settings nobody else chooses (the
  intruders' own queue, where they all wait as buyers: nobody of the run is paired with them), then stop waiting
  (a new seat of their own, never someone else's);
- seat (a study's run): a participant's seat token given to free play's API on a process of free play serving the
  study's database (the door: a study's processes serve no free play): view, move, cancel, join (refused: free play
  reaches no study game).

"Seats taken by a second caller" counts the intruders' calls answered with a view not theirs (any view for a call
that must be refused; for a start, a seat that another caller took, by its token or by its item, role and price)
and, from the database afterwards, the seats whose person is not the one who took them (the log has every seat a
person or intruder was given, with the player id they sent; none gives a fresh `anon-` id). Goal: 0.

People who leave: in a study, a participant who finds no partner there as they enter their game may stop asking
(`--leave`: the share who do). A study drops a participant idle for its `idle_minutes` (bargain.study.records.
release_idle, run by each app process at most once a minute), which is more than a run lasts; `IdleSweep` makes the
time pass for the leaver alone and at once: their record's last activity is set back a day (nobody else's) and the
sweep is run as the app runs it, with an hour's limit. Between a leaver's last page and their drop (tens of
milliseconds), the app does not know they have left and may rightly pair someone with them, whose game the drop then
abandons: runs of 20 met this for 2 of 7 leavers, and for all 4 on one process. So the participants enter their
games one at a time (the gate: a lock in the crowd's process, held from the step that enters a game, their thinking
done, to the decision to stay, or to the drop), and "idle participants paired after their drop" counts those who
hold a seat at a game whose other seat was taken after their drop, or a game going on or played (goal: 0; those
paired before it are counted apart, and should be none). In free play, where a wait is live while its person keeps
asking (LIVE_S), the count is of people who left and were paired after LIVE_S had passed since their last look
(benchmarks/free_play.py). Goal: 0.
"""

from __future__ import annotations

import functools
import itertools
import random
import threading
from datetime import datetime, timedelta

import httpx

from benchmarks.crowd import Caller, Refused

# The intruders' own settings (three rounds of the high tier: no person of the run chooses them).
INVITING = ("person:invite", "both_unaware", "simultaneous", 3, "high", "train")
OWN_QUEUE = ("person:queue", *INVITING[1:])
ATTACKS = ("host", "take", "rejoin", "link", "borrow")


def fingerprint(view: dict) -> tuple:
    """What tells one seat's view from another's without its token: the item, the role and the private price."""
    return view["item"], view["role"], view["your_price"]


def intruder(urls: list[str], seats: bool, n: int, think: float, stop: threading.Event, log: dict) -> None:
    """Intruder `n`, calling the processes at `urls` (a study's run: the door) about every `think` seconds until
    `stop`; `seats`: also with the seat tokens the participants were given. Every answered call is logged
    (`intruded`: who, what, whether it must be refused, and the token and fingerprint of the view it got, if any),
    and every seat they were given is logged as any person's (`takes`)."""
    rng = random.Random(-1 - n)
    me = f"intruder{n}"
    fresh = (f"{me}-{k}" for k in itertools.count())  # an id per game of their own (a player has at most 3 open)

    with httpx.Client(timeout=60) as http:
        caller = Caller(http, urls, me, log)

        def attempt(attack: str, api: str, data: list, refuse: bool) -> dict | None:
            try:
                view = caller.post(rng.randrange(len(urls)), api, data)
            except Refused:
                log["intruded"].append((me, attack, refuse, None))
                return None
            if view is not None:
                log["intruded"].append((me, attack, refuse, (view["game_id"], fingerprint(view))))
            return view

        def took(player: str | None, view: dict | None) -> dict | None:
            if view is not None:
                log["takes"].append((me, player, view["game_id"], fingerprint(view)))
            return view

        while not stop.wait(think * rng.uniform(0.5, 1.5)):
            try:
                people = [player for who, player, _, _ in log["takes"] if not who.startswith("intruder")]
                victim = rng.choice(people) if people else "guest"
                taken = dict(log["linked"])  # link -> the id that took it
                open_links = [link for link, _ in log["links"] if link not in taken]
                attack = rng.choice(ATTACKS + (("seat",) if seats else ()))
                if attack == "take" and open_links:
                    link, player = rng.choice(open_links), next(fresh)
                    if took(player, attempt(attack, "join_game", [link, player, None], refuse=False)) is not None:
                        log["linked"].append((link, player))
                elif attack == "rejoin" and taken:
                    link, host = rng.choice([(link, host) for link, host in log["links"] if link in taken])
                    player = rng.choice([host, taken[link], victim, "guest", None, next(fresh)])
                    attempt(attack, "join_game", [link, player, None], refuse=True)
                elif attack == "link" and log["links"]:
                    link = rng.choice(log["links"])[0]
                    call = rng.choice([("get_game", [link, 0]), ("play_move", [link, 1, "OFFER", "1.00", "mine"])])
                    attempt(attack, *call, refuse=True)
                elif attack == "borrow":
                    player = rng.choice([victim, "guest", None])
                    view = took(
                        player, attempt(attack, "start_game", ["buyer", *OWN_QUEUE, player, "buyer", None], False)
                    )
                    if view is not None:
                        caller.post(rng.randrange(len(urls)), "cancel_game", [view["game_id"]])
                elif attack == "seat" and people:
                    token = rng.choice([token for who, _, token, _ in log["takes"] if not who.startswith("intruder")])
                    call = rng.choice(
                        [
                            ("get_game", [token, 0]),
                            ("play_move", [token, 1, "OFFER", "1.00", "mine"]),
                            ("cancel_game", [token]),
                            ("join_game", [token, victim, None]),
                        ]
                    )
                    attempt(attack, *call, refuse=True)
                else:  # host (or nothing yet to attack otherwise)
                    player = next(fresh)
                    view = took(
                        player, attempt("host", "start_game", ["buyer", *INVITING, player, "buyer", None], False)
                    )
                    if view is not None:
                        log["links"].append((view["invitation"], player))
            except Exception as exc:  # an intruder's own failure (a cancel refused, a process gone): reported
                log["errors"].append(f"{me}: {type(exc).__name__}: {exc}")


def taken_by_others(store, log: dict) -> tuple[int, int]:
    """Seats taken by a second caller: the intruders' calls answered with a view that is not theirs, and the seats
    the log knows were given to someone whose stored person is not the id that someone sent."""
    from sqlalchemy import select

    from bargain.records.store import SeatRow

    takers: dict[object, set[str]] = {}
    for who, _, token, print_ in log["takes"]:
        takers.setdefault(token, set()).add(who)
        takers.setdefault(print_, set()).add(who)
    views = sum(
        shown is not None and (refuse or any(takers.get(key, {who}) != {who} for key in shown))
        for who, _, refuse, shown in log["intruded"]
    )
    tokens = [token for _, _, token, _ in log["takes"]]
    with store.reading() as session:
        held = dict(session.execute(select(SeatRow.token, SeatRow.person).where(SeatRow.token.in_(tokens))).all())
    misheld = sum(
        token in held and held[token] != player and not (player is None and (held[token] or "").startswith("anon-"))
        for _, player, token, _ in log["takes"]
    )
    return views, misheld


def paired_after_drop(people: dict[str, dict], seats: list[tuple], status: dict[str, str]) -> tuple[int, int]:
    """Of the participants dropped as idle (`people`: id -> record), how many hold a seat (`seats`: game, person,
    joined) at a game paired after their drop (its other seat taken later, or the game going on or played), and
    how many one paired before it (the drop abandons such a game)."""
    dropped = {
        pid: datetime.fromisoformat(row["stage_times"]["dropped"])
        for pid, row in people.items()
        if row["stage"] == "dropped"
    }
    joined: dict[str, list[tuple]] = {}
    for game_id, person, at in seats:
        joined.setdefault(game_id, []).append((person, at))
    after = before = 0
    for game_id, person, _ in seats:
        if person in dropped:
            partner = next((at for other, at in joined[game_id] if other != person), None)
            if partner is not None and partner > dropped[person] or status.get(game_id) in ("active", "finished"):
                after += 1
            elif partner is not None:
                before += 1
    return after, before


def paired_after_gone(store, log: dict, live_s: float) -> tuple[int, list[str]]:
    """Of the people who left their wait in free play (`left`: who, their seat, the time of their last look), how many
    were paired after `live_s` had passed since that look; and a sentence for each paired sooner (the run gives nobody
    the chance) or whose wait was not cancelled."""
    from sqlalchemy import select

    from bargain.records.store import GameRow, SeatRow

    after, odd = 0, []
    with store.reading() as session:
        for who, token, last in log["left"]:
            game_id = session.get(SeatRow, token).game_id
            partner = session.scalars(
                select(SeatRow.joined_at).where(SeatRow.game_id == game_id, SeatRow.token != token)
            ).first()
            if partner is not None and partner - last > timedelta(seconds=live_s):
                after += 1
            elif partner is not None:
                odd.append(f"{who} left and was paired {(partner - last).total_seconds():.1f} s after their last look")
            elif (status := session.get(GameRow, game_id).status) != "cancelled":
                odd.append(f"{who} left and their wait is {status}, not cancelled")
    return after, odd


class IdleSweep:
    """The study's idle sweep, for one participant who left, at once (see the module's docstring), and the `gate`
    through which the participants enter their games one at a time (a leaver's entry and drop included), in the
    crowd's process."""

    def __init__(self, db: str, study: str):
        self.db, self.study = db, study
        self.gate = threading.Lock()

    def __getstate__(self) -> dict:  # sent to the crowd's process: the gate is made there
        return {"db": self.db, "study": self.study}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    @functools.cached_property
    def store(self):
        from bargain.records.store import Store

        return Store(self.db)

    def drop(self, participant: str) -> None:
        """`participant`'s last activity set back a day, then the sweep with an hour's limit, as an app process runs
        it (the person arm's study is between subjects): they are dropped, their slot freed and their wait for a
        partner cancelled, in one transaction."""
        from sqlalchemy import update

        from bargain.records.store import utcnow
        from bargain.study import records

        with self.store.writing("set back a participant's activity in") as session:
            session.execute(
                update(records.ParticipantRow)
                .where(records.ParticipantRow.study == self.study, records.ParticipantRow.participant == participant)
                .values(updated_at=utcnow() - timedelta(days=1))
            )
        records.release_idle(self.store, self.study, 1, timedelta(hours=1), within=False)


def intrusions(intruders: int, calls: int, views: int, misheld: int) -> str:
    """The intruders' figure, as a run prints it."""
    return (
        f"intruders {intruders}, {calls} calls answered: seats taken by a second caller {views + misheld} (goal 0: "
        f"{views} calls answered with a view not the caller's, {misheld} seats held by another than their taker)"
    )
