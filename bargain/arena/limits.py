"""Limits on what one client can make the arena do: games started, admin passwords tried.

A public page is attacked: without limits one client started 1,000 games in under a minute, and
a password could be guessed at the speed of the network. Counts are kept per key (a browser, an
address, or everyone) over a sliding window, or as a wait that grows with each failure. They are
kept in the database (tables limit_events and limit_failures), which every app process serving it
shares: two processes count the same events rather than each its own, so they do not double a
limit, and a restart forgets nothing. Keys are what a caller cannot choose: a signed browser id or
the network address, never a session id the caller sends; they are stored as SHA-256 hashes, since
an address is personal data.

Each check and its count are one transaction: on PostgreSQL it first takes an advisory lock on the
key, so that the checks of one key take turns across processes (SQLite's writers take turns
already), and it deletes the key's events that fell out of their window, so that the table keeps
only what a limit still counts. Times are seconds since the epoch by the host's clock: processes on
several hosts need their clocks set alike (NTP), to well within a window.

A limit that cannot use the database refuses the request (one line logged with the reason): letting
requests through uncounted while the database fails is what someone who can make it fail would
want, and a game could not be stored then anyway. Calls block on the database: async callers run
them in a worker thread.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from bargain.arena.inputs import ArenaError
from bargain.records.store import LimitEventRow, LimitFailureRow, Store, StoreError, advisory_lock

HOUR_S = 3600
EVERYONE = "*"  # the key of a limit over all callers
log = logging.getLogger(__name__)


def hashed(key: str) -> str:
    """A key as the limit tables store it: SHA-256, in hex."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class RateLimit:
    """At most `count` events per `window_s` seconds for each key (a sliding window), counted under `name` in a
    transaction's session."""

    name: str
    count: int
    window_s: float

    def __post_init__(self) -> None:
        if self.count < 1 or self.window_s <= 0:
            raise ValueError("a rate limit needs a count of at least 1 and a positive window")

    def wait_s(self, session: Session, key: str, now: float) -> float:
        """Seconds until `key` may have another event (0 when it may now); deletes its events past the window."""
        mine = (LimitEventRow.name == self.name, LimitEventRow.key == hashed(key))
        session.execute(delete(LimitEventRow).where(*mine, LimitEventRow.at <= now - self.window_s))
        events, oldest = session.execute(select(func.count(), func.min(LimitEventRow.at)).where(*mine)).one()
        return 0.0 if events < self.count else max(0.0, oldest + self.window_s - now)

    def add(self, session: Session, key: str, now: float) -> None:
        """Count one event for `key`, at `now`."""
        session.add(LimitEventRow(name=self.name, key=hashed(key), at=now))


@dataclass(frozen=True)
class Backoff:
    """For each key, a wait after each failure past the first `free`: `step_s`, doubling with each failure up to
    `cap_s`. A key that has not failed for `forget_s` starts afresh. Counted under `name` in a transaction's session.

    Doubling lets a person who mistypes a few times in again within seconds, while a guesser soon waits the cap
    for every guess; forgetting only after more than the cap keeps a guesser that waits it out at the cap."""

    name: str
    free: int = 3
    step_s: float = 10
    cap_s: float = 15 * 60
    forget_s: float = HOUR_S

    def __post_init__(self) -> None:
        if self.free < 0 or not 0 < self.step_s <= self.cap_s < self.forget_s:
            raise ValueError("a backoff needs free >= 0 and 0 < step_s <= cap_s < forget_s")

    def _failed(self, session: Session, key: str, now: float) -> LimitFailureRow | None:
        """The key's failures (None for none), forgotten once the last one is `forget_s` old."""
        mine = (LimitFailureRow.name == self.name, LimitFailureRow.key == hashed(key))
        session.execute(delete(LimitFailureRow).where(*mine, LimitFailureRow.last_at <= now - self.forget_s))
        return session.scalars(select(LimitFailureRow).where(*mine)).first()

    def wait_s(self, session: Session, key: str, now: float, strict: bool = False) -> float:
        """Seconds until `key` may try again (0 when it may now); `strict`: no failure is free."""
        failed = self._failed(session, key, now)
        if failed is None:
            return 0.0
        over = failed.failures - (0 if strict else self.free)
        if over <= 0:
            return 0.0
        delay = min(self.cap_s, self.step_s * 2 ** min(over - 1, 32))
        return max(0.0, failed.last_at + delay - now)

    def fail(self, session: Session, key: str, now: float) -> None:
        """Count one failure for `key`, at `now`."""
        failed = self._failed(session, key, now)
        if failed is None:
            session.add(LimitFailureRow(name=self.name, key=hashed(key), failures=1, last_at=now))
        else:
            failed.failures, failed.last_at = failed.failures + 1, now


def _take_turns(session: Session, *limits: tuple[RateLimit | Backoff, str]) -> None:
    """Hold the lock of each (limit, key) until the transaction ends, so that the checks and counts of one key take
    turns across processes."""
    advisory_lock(session, *(f"{limit.name}\n{hashed(key)}" for limit, key in limits))


def _minutes(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    return f"{minutes} minute{'s' if minutes > 1 else ''}"


def _duration(seconds: float) -> str:
    """A wait as a person reads it: seconds under a minute, else minutes."""
    if seconds >= 60:
        return _minutes(seconds)
    whole = max(1, math.ceil(seconds))
    return f"{whole} second{'s' if whole > 1 else ''}"


class StartLimits:
    """Games a browser and an address may start per hour (an API caller has no browser: its address is both),
    counted in `store`."""

    def __init__(
        self, store: Store, per_browser: int = 60, per_address: int = 600, clock: Callable[[], float] = time.time
    ):
        self.store, self.clock = store, clock
        self.per_browser = RateLimit("games per browser", per_browser, HOUR_S)
        self.per_address = RateLimit("games per address", per_address, HOUR_S)

    def check(self, browser: str, address: str) -> None:
        """Count a game start, or refuse it with an ArenaError saying how long to wait (or that it cannot count)."""
        try:
            wait = self._count(browser, address)
        except StoreError as exc:
            log.error("game starts could not be counted: %s", exc)
            raise ArenaError(
                "The server cannot count the games started from here right now, so none was started: "
                "try again in a minute."
            ) from None
        if wait > 0:
            raise ArenaError(
                f"Too many games started from here in the last hour: wait {_minutes(wait)} before starting another."
            )

    def _count(self, browser: str, address: str) -> float:
        """Count a game start and return 0, or return how long to wait without counting it; one transaction."""
        limits = ((self.per_browser, browser), (self.per_address, address))
        with self.store.writing("count game starts in") as session:
            _take_turns(session, *limits)
            now = self.clock()
            for limit, key in limits:
                wait = limit.wait_s(session, key, now)
                if wait > 0:
                    return wait
            for limit, key in limits:
                limit.add(session, key, now)
            return 0.0


class AdminGate:
    """The admin password: compared in constant time (any Unicode); wrong guesses slow down the address that sends
    them, and nobody else. Counted in `store`, so a guesser gains nothing by spreading its guesses over processes.

    - An address that has sent wrong passwords waits before its next try (`Backoff`: a few free, then 10 s doubling
      to 15 minutes a guess). While it waits, the password is not even compared and the right one gets the same
      refusal as a wrong one: a guesser learns nothing faster than the wait allows.
    - The wait is per address, so guessing from elsewhere never keeps the admin out. An overall limit that refused
      everyone did exactly that: 50 wrong guesses from anywhere locked the admin out for 15 minutes.
    - The overall count of wrong passwords cannot refuse the right one without becoming that lockout again, and
      refusing only wrong ones would tell a guesser nothing it does not learn from a pass. So while many wrong
      passwords arrive from everywhere, it withdraws the free guesses instead: each address waits from its first
      wrong one. An address that sent no wrong password is always let in with the right one.

    Guessing from many addresses is slowed per address, not stopped: the password must be long and random."""

    def __init__(self, password: str | None, store: Store, clock: Callable[[], float] = time.time):
        self.password, self.store, self.clock = password, store, clock
        self.per_address = Backoff("admin password backoff")
        self.overall = RateLimit("wrong admin passwords", 50, 15 * 60)  # wrong passwords before no free ones

    def check(self, given: object, address: str) -> None:
        """Return if `given` is the password; else an ArenaError (disabled, waiting, wrong, or cannot check)."""
        if not self.password:
            raise ArenaError("Export is disabled: start the app with BARGAIN_ADMIN_PASSWORD set.")
        try:
            refused = self._try(self.password, given, address)
        except StoreError as exc:
            log.error("an admin password could not be checked: %s", exc)
            raise ArenaError("The server cannot check the admin password right now: try again in a minute.") from None
        if refused:
            raise ArenaError(refused)

    def _try(self, password: str, given: object, address: str) -> str | None:
        """Compare `given` with the password, unless the address must wait, and count it if wrong: the refusal, or
        None for the right password; one transaction."""
        with self.store.writing("check the admin password in") as session:
            _take_turns(session, (self.per_address, address), (self.overall, EVERYONE))
            now = self.clock()
            strict = self.overall.wait_s(session, EVERYONE, now) > 0
            wait = self.per_address.wait_s(session, address, now, strict=strict)
            if wait > 0:
                return f"Too many wrong passwords from here: try again in {_duration(wait)}."
            if hmac.compare_digest(_digest(given), _digest(password)):
                return None
            self.per_address.fail(session, address, now)
            self.overall.add(session, EVERYONE, now)
            return "Wrong admin password."


def _digest(value: object) -> bytes:
    """A fixed-length digest of a password, so that comparing takes the same time whatever its length."""
    text = value if isinstance(value, str) else ""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
