"""Backend: several OpenAI-compatible servers serving the same models, as one.

`--base-url URL1,URL2,...` (or `BARGAIN_BASE_URL`) names several replicas: `bargain serve --replicas N`
on one machine, or servers on several. Each request goes to the healthy replica with the fewest
requests in flight. A replica that fails a request (connection refused or lost, time-out, a 5xx
or 429 answer) is taken out and the request is sent to another; a replica that is out is asked
for its model list again after REVIVE_AFTER_S and comes back when it answers. An error that
another replica would repeat (a 4xx: an unknown model, a bad request) is not retried.

With `sticky`, requests whose chats begin with the same message (one side of one game: the
arena's participant and agent) go to one replica for as long as it is healthy, so that its
prefix cache holds the game; the others are shared by load.
"""

from __future__ import annotations

import asyncio
import logging
import time
import zlib
from dataclasses import dataclass

from bargain.agents.backends import BackendError, Completion, ListsModels, Request, ServerUnavailable
from bargain.agents.backends.openai_server import OpenAIServer

log = logging.getLogger(__name__)

REVIVE_AFTER_S = 10.0  # how long a failed replica rests before it is asked again
RETRIES_PER_REPLICA = 1  # the client's own retries before a replica counts as failed


def split_urls(text: str) -> list[str]:
    """`URL1,URL2,...` as a list without blanks or repeats (order kept)."""
    return list(dict.fromkeys(u.strip().rstrip("/") for u in text.split(",") if u.strip()))


@dataclass
class Replica:
    server: OpenAIServer
    in_flight: int = 0
    down_since: float | None = None  # time.monotonic() of the failure that took it out
    why: str = ""


class Replicas(ListsModels):
    """Requests spread over several OpenAI-compatible servers; see the module docstring."""

    name = "openai-compatible"

    def __init__(
        self,
        urls: list[str],
        base_model: str = "Qwen/Qwen3-8B",
        api_key: str | None = None,
        max_in_flight: int = 256,
        sticky: bool = False,
    ):
        self.base_model, self.sticky = base_model, sticky
        self.replicas = [
            Replica(
                OpenAIServer(
                    url,
                    base_model=base_model,
                    api_key=api_key,
                    max_in_flight=max_in_flight,
                    max_retries=RETRIES_PER_REPLICA,
                )
            )
            for url in urls
        ]

    @property
    def base_url(self) -> str:
        return ",".join(r.server.base_url for r in self.replicas)

    def model_name(self, arm) -> str:
        return self.replicas[0].server.model_name(arm)

    def describe(self) -> dict:
        return {
            "backend": "vllm",
            "base_url": self.base_url,
            "base_model": self.base_model,
            "replicas": len(self.replicas),
        }

    async def aclose(self) -> None:
        for replica in self.replicas:
            await replica.server.aclose()

    # -- health -----------------------------------------------------------------------------------

    def _take_out(self, replica: Replica, why: str) -> None:
        if replica.down_since is None:
            log.warning("replica %s is out (%s); its requests go to the others", replica.server.base_url, why)
        replica.down_since, replica.why = time.monotonic(), why

    async def _revive(self) -> None:
        """Ask every replica that has rested long enough whether it is back."""
        now = time.monotonic()
        resting = [r for r in self.replicas if r.down_since is not None and now - r.down_since >= REVIVE_AFTER_S]
        if not resting:
            return
        for replica in resting:  # this call probes them; the requests arriving meanwhile do not probe again
            replica.down_since = now
        answers = await asyncio.gather(*(r.server.ping() for r in resting), return_exceptions=True)
        for replica, answer in zip(resting, answers):
            if not isinstance(answer, BaseException):
                log.warning("replica %s is back", replica.server.base_url)
                replica.down_since = None

    def _choose(self, request: Request, tried: set[int]) -> int | None:
        healthy = [i for i, r in enumerate(self.replicas) if r.down_since is None and i not in tried]
        if not healthy:
            return None
        if self.sticky and request.messages:
            home = zlib.crc32(str(request.messages[0].get("content", "")).encode()) % len(self.replicas)
            if home in healthy:
                return home
        return min(healthy, key=lambda i: self.replicas[i].in_flight)

    # -- the backend interface ---------------------------------------------------------------------

    async def complete(self, request: Request) -> Completion:
        """One completion from a healthy replica, sent on to another if that one fails."""
        await self._revive()
        tried: set[int] = set()
        failures: list[str] = []
        while (index := self._choose(request, tried)) is not None:
            tried.add(index)
            replica = self.replicas[index]
            replica.in_flight += 1
            try:
                return await replica.server.complete(request)
            except ServerUnavailable as exc:
                self._take_out(replica, str(exc))
                failures.append(str(exc))
            finally:
                replica.in_flight -= 1
        reasons = failures or [f"{r.server.base_url}: {r.why}" for r in self.replicas]
        raise ServerUnavailable(f"no replica could answer ({len(self.replicas)} configured): " + "; ".join(reasons))

    async def served_models(self) -> set[str]:
        """The models the answering replicas list (they are meant to serve the same ones)."""
        answers = await asyncio.gather(*(r.server.served_models() for r in self.replicas), return_exceptions=True)
        listed = [a for a in answers if not isinstance(a, BaseException)]
        if not listed:
            raise BackendError("; ".join(str(a) for a in answers))
        for replica, answer in zip(self.replicas, answers):
            if isinstance(answer, BaseException):
                self._take_out(replica, str(answer))
        return set().union(*listed)
