"""The simulated people's side of the benchmarks between app processes (benchmarks/study.py, free_play.py): their
requests, and the faults a run puts them through.

A person's requests go over plain HTTP to the app's named endpoints, as `gradio_client` makes them for endpoints
outside the queue, without the client library's own CPU cost per call, which on a small machine would take the
servers'. A request that no process answers (one was killed) is made again on the next one, as a browser's retry
behind a load balancer would; under `Faults`, some are also sent to the other process at the same moment, and some
followed by a look there.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field

import httpx

RETRY_FOR_S = 60.0  # how long a person keeps making a request again while no process answers


@dataclass(frozen=True)
class Faults:
    """What goes wrong during a run (none by default: the load benchmark)."""

    duplicate: float = 0.0  # share of steps also sent, at the same moment, to the other process (a move: another price)
    reload: float = 0.0  # share of moves followed 2 ms later by a reload of the page on the other process
    kill_every: float | None = None  # seconds between two kills (SIGKILL) of an app process, each started again
    intruders: int = 0  # between people: callers trying seats that are not theirs (benchmarks/hostile.py)
    leave: float = 0.0  # between people: share of people who leave while they wait for a partner

    @property
    def any(self) -> bool:
        return bool(self.duplicate or self.reload or self.kill_every or self.intruders or self.leave)


class Refused(RuntimeError):
    """A request the app answered with an error (its own sentence, under an HTTP error status)."""


@dataclass
class Caller:
    """One simulated person's requests to the app processes at `urls`: a study page's (`head`, the link's query, sent
    before each request's own data, in one page session per process, `sessions`) or a program's (neither)."""

    http: httpx.Client
    urls: list[str]
    who: str  # named in the log's lines
    log: dict
    faults: Faults = Faults()
    rng: random.Random = field(default_factory=random.Random)
    head: list = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)

    def post(self, which: int, api: str, data: list) -> dict | None:
        """One request to process `which`: its answer's data; None when the process does not answer (refused the
        connection, or cut off by a kill); Refused when the app refuses it. Answers that say the request was already
        made (a move sent twice) are logged (`notices`)."""
        payload: dict = {"data": [*self.head, *data]}
        if self.sessions:
            payload["session_hash"] = self.sessions[which]
        try:
            answer = self.http.post(f"{self.urls[which]}gradio_api/run/{api}", json=payload)
        except httpx.TransportError:
            return None
        if answer.status_code != 200:
            raise Refused(f"{api}: HTTP {answer.status_code} {answer.text[:200]}")
        data = answer.json()["data"][0]
        if isinstance(data, dict) and data.get("notice"):
            self.log["notices"].append(self.who)
        return data

    def beside(self, which: int, api: str, data: list, delay: float = 0.0) -> threading.Thread:
        """The same person's other request, at the same moment (after `delay`), to process `which`, on a thread of its
        own; an error answer is an error page, logged."""

        def send() -> None:
            time.sleep(delay)
            try:
                self.post(which, api, data)
            except Exception as exc:
                self.log["errors"].append(f"{self.who} (sent again): {type(exc).__name__}: {exc}")

        thread = threading.Thread(target=send)
        thread.start()
        return thread

    def call(self, which: int, api: str, data: list, kind: str) -> dict:
        """A request to process `which`, made again on the next process every 0.2 s while none answers (RETRY_FOR_S
        at most); its round trip, retries included, is logged under `kind`."""
        start, given_up = time.perf_counter(), time.monotonic() + RETRY_FOR_S
        attempt = 0
        while (answer := self.post((which + attempt) % len(self.urls), api, data)) is None:
            if time.monotonic() > given_up:
                raise RuntimeError(f"{api}: no process answered for {RETRY_FOR_S:.0f} s")
            self.log["retried"].append(self.who)
            attempt += 1
            time.sleep(0.2)
        self.log["trips"].append((kind, time.perf_counter() - start))
        return answer

    def send(
        self, which: int, api: str, data: list, kind: str, twin: list | None = None, look: tuple | None = None
    ) -> dict:
        """`call`, under the run's faults: with `twin` (the same request made otherwise, such as a move with another
        price), a share of such requests is also sent to the other process at the same moment; with `look` (an
        endpoint and its data, reading what the request changed), a share is followed 2 ms later by that look on the
        other process."""
        other = (which + 1) % len(self.urls)
        extra = []
        if twin is not None and self.faults.duplicate and self.rng.random() < self.faults.duplicate:
            self.log["twins"].append(self.who)
            extra.append(self.beside(other, api, twin))
        if look is not None and self.faults.reload and self.rng.random() < self.faults.reload:
            extra.append(self.beside(other, look[0], list(look[1]), delay=0.002))
        try:
            return self.call(which, api, data, kind)
        finally:
            for thread in extra:
                thread.join()
