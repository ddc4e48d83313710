"""Limits on what one client can make the arena do: games started, admin passwords tried.

A public page is attacked: without limits one client started 1,000 games in under a minute, and
a password could be guessed at the speed of the network. Counts are kept in memory per key
(a browser, an address, or everyone) over a sliding window; a server restart forgets them,
which is fine for limits that only need to hold an attacker to a human pace.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Callable

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


def _minutes(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    return f"{minutes} minute{'s' if minutes > 1 else ''}"


@dataclass
class StartLimits:
    """Games a browser and an address may start per hour."""

    per_browser: RateLimit = field(default_factory=lambda: RateLimit(60, 3600))
    per_address: RateLimit = field(default_factory=lambda: RateLimit(600, 3600))

    def check(self, browser: str, address: str) -> None:
        """Count a game start, or refuse it with an ArenaError saying how long to wait."""
        for limit, key in ((self.per_browser, browser), (self.per_address, address)):
            if limit.full(key):
                raise ArenaError(f"Too many games started from here in the last hour: wait "
                                 f"{_minutes(limit.wait_s(key))} before starting another.")
        self.per_browser.add(browser)
        self.per_address.add(address)


@dataclass
class AdminGate:
    """The admin password: compared in constant time (any Unicode), failed attempts throttled per address
    and overall, so that it cannot be guessed by trying."""

    password: str | None
    per_address: RateLimit = field(default_factory=lambda: RateLimit(5, 15 * 60))
    overall: RateLimit = field(default_factory=lambda: RateLimit(50, 15 * 60))

    def check(self, given: object, address: str) -> None:
        """Return if `given` is the password; else an ArenaError (disabled, throttled or wrong)."""
        if not self.password:
            raise ArenaError("Export is disabled: start the app with BARGAIN_ADMIN_PASSWORD set.")
        for limit, key in ((self.per_address, address), (self.overall, "*")):
            if limit.full(key):
                raise ArenaError(f"Too many wrong passwords: try again in {_minutes(limit.wait_s(key))}.")
        if not hmac.compare_digest(_digest(given), _digest(self.password)):
            self.per_address.add(address)
            self.overall.add("*")
            raise ArenaError("Wrong admin password.")


def _digest(value: object) -> bytes:
    """A fixed-length digest of a password, so that comparing takes the same time whatever its length."""
    text = value if isinstance(value, str) else ""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
