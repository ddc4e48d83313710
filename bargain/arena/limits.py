"""Limits on what one client can make the arena do: games started, admin passwords tried.

A public page is attacked: without limits one client started 1,000 games in under a minute, and
a password could be guessed at the speed of the network. Counts are kept in memory per key
(a browser, an address, or everyone) over a sliding window, or as a wait that grows with each
failure; a server restart forgets them, which is fine for limits that only need to hold an
attacker to a human pace. Keys are what a caller cannot choose: a signed browser id or the
network address, never a session id the caller sends.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from bargain.arena.inputs import ArenaError

MAX_KEYS = 100_000  # keys remembered per limit; the least recently seen are forgotten first


class RateLimit:
    """At most `count` events per `window_s` seconds for each key (a sliding window)."""

    def __init__(self, count: int, window_s: float, clock: Callable[[], float] = time.monotonic):
        if count < 1 or window_s <= 0:
            raise ValueError("a rate limit needs a count of at least 1 and a positive window")
        self.count, self.window_s, self.clock = count, window_s, clock
        self._events: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, key: str) -> deque[float]:
        events = self._events.setdefault(key, deque())
        self._events.move_to_end(key)
        while len(self._events) > MAX_KEYS:
            self._events.popitem(last=False)
        cutoff = self.clock() - self.window_s
        while events and events[0] <= cutoff:
            events.popleft()
        return events

    def full(self, key: str) -> bool:
        """Whether another event for `key` would pass the limit now."""
        return len(self._recent(key)) >= self.count

    def add(self, key: str) -> None:
        """Count one event for `key`."""
        self._recent(key).append(self.clock())

    def wait_s(self, key: str) -> float:
        """Seconds until `key` may have another event (0 when it may now)."""
        events = self._recent(key)
        return 0.0 if len(events) < self.count else max(0.0, events[0] + self.window_s - self.clock())


class Backoff:
    """For each key, a wait after each failure past the first `free`: `step_s`, doubling with each failure up to
    `cap_s`. A key that has not failed for `forget_s` starts afresh.

    Doubling lets a person who mistypes a few times in again within seconds, while a guesser soon waits the cap
    for every guess; forgetting only after more than the cap keeps a guesser that waits it out at the cap."""

    def __init__(
        self,
        free: int = 3,
        step_s: float = 10,
        cap_s: float = 15 * 60,
        forget_s: float = 3600,
        clock: Callable[[], float] = time.monotonic,
    ):
        if free < 0 or not 0 < step_s <= cap_s < forget_s:
            raise ValueError("a backoff needs free >= 0 and 0 < step_s <= cap_s < forget_s")
        self.free, self.step_s, self.cap_s, self.forget_s, self.clock = free, step_s, cap_s, forget_s, clock
        self._failures: OrderedDict[str, tuple[int, float]] = OrderedDict()  # key -> (failures, time of the last)

    def _failed(self, key: str) -> tuple[int, float]:
        failures, last = self._failures.get(key, (0, 0.0))
        if failures and self.clock() - last >= self.forget_s:
            del self._failures[key]
            return 0, 0.0
        return failures, last

    def wait_s(self, key: str, strict: bool = False) -> float:
        """Seconds until `key` may try again (0 when it may now); `strict`: no failure is free."""
        failures, last = self._failed(key)
        over = failures - (0 if strict else self.free)
        if over <= 0:
            return 0.0
        delay = min(self.cap_s, self.step_s * 2 ** min(over - 1, 32))
        return max(0.0, last + delay - self.clock())

    def fail(self, key: str) -> None:
        """Count one failure for `key`, now."""
        failures, _ = self._failed(key)
        self._failures[key] = (failures + 1, self.clock())
        self._failures.move_to_end(key)
        while len(self._failures) > MAX_KEYS:
            self._failures.popitem(last=False)


def _minutes(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    return f"{minutes} minute{'s' if minutes > 1 else ''}"


def _duration(seconds: float) -> str:
    """A wait as a person reads it: seconds under a minute, else minutes."""
    if seconds >= 60:
        return _minutes(seconds)
    whole = max(1, math.ceil(seconds))
    return f"{whole} second{'s' if whole > 1 else ''}"


@dataclass
class StartLimits:
    """Games a browser and an address may start per hour (an API caller has no browser: its address is both)."""

    per_browser: RateLimit = field(default_factory=lambda: RateLimit(60, 3600))
    per_address: RateLimit = field(default_factory=lambda: RateLimit(600, 3600))

    def check(self, browser: str, address: str) -> None:
        """Count a game start, or refuse it with an ArenaError saying how long to wait."""
        for limit, key in ((self.per_browser, browser), (self.per_address, address)):
            if limit.full(key):
                raise ArenaError(
                    f"Too many games started from here in the last hour: wait "
                    f"{_minutes(limit.wait_s(key))} before starting another."
                )
        self.per_browser.add(browser)
        self.per_address.add(address)


@dataclass
class AdminGate:
    """The admin password: compared in constant time (any Unicode); wrong guesses slow down the address that sends
    them, and nobody else.

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

    password: str | None
    per_address: Backoff = field(default_factory=Backoff)
    overall: RateLimit = field(default_factory=lambda: RateLimit(50, 15 * 60))  # wrong passwords before no free ones

    def check(self, given: object, address: str) -> None:
        """Return if `given` is the password; else an ArenaError (disabled, waiting or wrong)."""
        if not self.password:
            raise ArenaError("Export is disabled: start the app with BARGAIN_ADMIN_PASSWORD set.")
        wait = self.per_address.wait_s(address, strict=self.overall.full("*"))
        if wait > 0:
            raise ArenaError(f"Too many wrong passwords from here: try again in {_duration(wait)}.")
        if not hmac.compare_digest(_digest(given), _digest(self.password)):
            self.per_address.fail(address)
            self.overall.add("*")
            raise ArenaError("Wrong admin password.")


def _digest(value: object) -> bytes:
    """A fixed-length digest of a password, so that comparing takes the same time whatever its length."""
    text = value if isinstance(value, str) else ""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
