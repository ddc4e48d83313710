"""Text generation behind one small interface: a request in, a completion out (asynchronously).

Backends are interchangeable: an OpenAI-compatible server (vLLM, or any hosted API) in
`openai_server`, transformers + peft in this process in `hf`. Each accepts many concurrent
requests and batches them its own way (vLLM: continuous batching on the server; hf: one
`generate` call over the requests waiting, with mixed adapters). Heavy libraries load only
inside the backend that needs them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Protocol


class BackendError(RuntimeError):
    """A backend could not produce a completion; the message says why and what to try."""


class ServerUnavailable(BackendError):
    """The server could not be reached or failed on its side (connection, time-out, 5xx, 429): another replica of
    it may answer the same request."""


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters of one side (docs/PROTOCOL.md §9). Temperature 0 means greedy."""

    temperature: float = 0.7
    top_p: float = 0.8
    top_k: int = 20
    presence_penalty: float = 1.5
    max_tokens: int = 1024

    def __post_init__(self) -> None:
        if self.temperature < 0 or not 0 < self.top_p <= 1 or self.max_tokens < 1:
            raise ValueError(f"bad sampling parameters {self}: need temperature >= 0, 0 < top_p <= 1, max_tokens >= 1")

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "presence_penalty": self.presence_penalty,
            "max_tokens": self.max_tokens,
        }

    def with_overrides(self, text: str) -> Sampling:
        """Apply `key=value,key=value` overrides, e.g. `temperature=0.5,max_tokens=512`."""
        types = {f.name: f.type for f in fields(self)}
        changes = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            key, sep, value = item.partition("=")
            key = key.strip().replace("-", "_")
            if not sep or key not in types:
                raise ValueError(f"bad sampling override {item!r}: use KEY=VALUE with KEY one of {', '.join(types)}")
            changes[key] = int(value) if types[key] in ("int", int) else float(value)
        return replace(self, **changes)  # type: ignore[arg-type]  # each value was cast to its field's type


PRESETS = {
    "trained": Sampling(),  # the trained side, and both sides of joint runs
    "frozen-opponent": Sampling(temperature=0.1, top_p=0.5),  # the frozen base opponent of single-role runs
}


@dataclass(slots=True)
class Request:
    """One chat completion: the whole chat, which served model (base or adapter), how to sample."""

    messages: tuple[dict, ...]
    model: str
    sampling: Sampling


@dataclass(slots=True)
class Completion:
    """What came back, with what it cost."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    model: str
    finish_reason: str | None = None
    revision: str | None = None
    from_reasoning: bool = False  # the reply was found only in a reasoning field and recovered
    endpoint: str | None = None  # the server that answered (one of several replicas), None in process


class Backend(Protocol):
    """What every backend offers."""

    name: str

    def model_name(self, arm) -> str:
        """The name under which this backend serves `arm` (base model or adapter)."""
        ...

    async def available(self, arm) -> bool:
        """Whether this backend can play `arm` now."""
        ...

    def describe(self) -> dict:
        """Backend, base model and revision, for the records."""
        ...

    async def complete(self, request: Request) -> Completion:
        """One completion."""
        ...


class ListsModels(ABC):
    """`check` and `available` for a backend whose `served_models()` asks a server which models it serves and
    whose `model_name(arm)` says under which name it serves an arm."""

    @abstractmethod
    def model_name(self, arm) -> str: ...

    @abstractmethod
    async def served_models(self) -> set[str]: ...

    async def check(self) -> str | None:
        """None when the server lists its models, else why not (one sentence, for a start-up warning).

        It is the probe of `served_models`, cached as that caches it, so the per-arm `available` calls that
        follow a failed check cost nothing while the failure is remembered.
        """
        try:
            await self.served_models()
        except BackendError as exc:
            return str(exc)
        return None

    async def available(self, arm) -> bool:
        """Whether the server lists this arm's model (False when the server cannot be asked)."""
        try:
            return self.model_name(arm) in await self.served_models()
        except BackendError:
            return False


async def generate(backend: Backend, requests: Sequence[Request]) -> list[Completion]:
    """Many completions at once; the backend batches them as it can."""
    import asyncio  # loaded by the running event loop already; at the top it slows every CLI start

    return list(await asyncio.gather(*(backend.complete(r) for r in requests)))


class Backends:
    """The backend for each model arm: the configured local one (vLLM server or hf) for the base model and
    the adapters, and one client per remote endpoint for `openai:MODEL@URL` arms.

    Remote endpoints are configuration, never a request: only the URLs in `remote` (given by whoever runs
    the program: its command line, its settings) are ever called, and only they receive the API key
    (OPENAI_API_KEY unless `api_key` is given). An arm naming any other URL is refused before anything is sent.
    """

    def __init__(self, local: Backend | None = None, remote: Iterable[str | None] = (), api_key: str | None = None):
        import os

        self.local = local
        self.remote = frozenset(url.rstrip("/") for url in remote if url)  # None: an arm without a URL
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._remote: dict[str, Backend] = {}

    def for_arm(self, arm) -> Backend:
        """The backend that plays `arm`, or a BackendError saying how to configure one."""
        if arm.kind == "openai":
            url = arm.base_url.rstrip("/")
            if url not in self.remote:
                raise BackendError(
                    f"{arm.spec} names an endpoint this program was not configured with; "
                    "remote models are set where the program is started, never by a request"
                )
            if url not in self._remote:
                from bargain.agents.backends.openai_server import OpenAIServer

                self._remote[url] = OpenAIServer(url, api_key=self.api_key, vllm=False)
            return self._remote[url]
        if self.local is None:
            raise BackendError(
                f"{arm.spec} needs a model backend: pass --backend vllm --base-url URL "
                "(see `python -m bargain serve`) or --backend hf --model ID_OR_PATH"
            )
        return self.local

    async def aclose(self) -> None:
        """Close the connections every backend opened in the running event loop."""
        for backend in (self.local, *self._remote.values()):
            close = getattr(backend, "aclose", None)
            if close is not None:
                await close()
