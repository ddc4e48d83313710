"""Backend: any OpenAI-compatible chat completions server (vLLM above all; also hosted APIs).

With vLLM the arm selects the model: the base model by its served name, an adapter by its LoRA
module name. vLLM's own fields travel in `extra_body`: `top_k`, and
`chat_template_kwargs: {enable_thinking: false}` so Qwen3 answers without a reasoning block; a
reply that a reasoning parser put only in the reasoning field is recovered from there. Hosted
APIs get only the standard fields. The `openai` client retries transient errors (connection
errors, timeouts, 408/409/429/5xx) with exponential backoff; a bounded number of requests are in
flight and each finished request frees its slot at once, so the server's continuous batching
stays fed and no game waits for the slowest of a batch. Asking which models the server lists is
different: it decides whether an arm can be offered at all, so it makes one quick attempt, and a
failure is remembered for a few seconds so that the arms checked together (or games started in a
row) against a server that is down pay for one attempt, not one each.
"""

from __future__ import annotations

import asyncio
import json
import time

from bargain.agents.backends import BackendError, Completion, ListsModels, Request, ServerUnavailable

DEFAULT_TIMEOUT_S = 300.0
PROBE_TIMEOUT_S = 5.0  # GET /models: a server that is up lists its models at once, even under load
PROBE_FAILURE_TTL_S = 15.0  # how long a failed GET /models is remembered before the server is asked again


class OpenAIServer(ListsModels):
    """Chat completions from an OpenAI-compatible endpoint such as `vllm serve`."""

    name = "openai-compatible"

    def __init__(
        self,
        base_url: str,
        base_model: str = "Qwen/Qwen3-8B",
        api_key: str | None = None,
        max_in_flight: int = 256,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = 4,
        vllm: bool = True,
    ):
        self.base_url = base_url.rstrip("/")
        self.base_model = base_model
        self.vllm = vllm
        self.api_key = api_key or "EMPTY"
        self.max_in_flight, self.timeout_s, self.max_retries = max_in_flight, timeout_s, max_retries
        self._loop: asyncio.AbstractEventLoop | None = None
        self._served: set[str] | None = None
        self._probe_failure: tuple[float, str] | None = None  # (time.monotonic() when it failed, why)

    def _connection(self):
        """The client and the in-flight bound of the running event loop (both are bound to one loop)."""
        import openai  # light, but only needed when a server is used

        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop = loop
            # A plain HTTP client: the default one, once dropped, schedules its own closing on
            # whatever loop is running then, which fails when its connections belong to a closed one.
            http = openai.DefaultAsyncHttpxClient(timeout=self.timeout_s)
            self._client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key,
                timeout=self.timeout_s,
                max_retries=self.max_retries,
                http_client=http,
            )
            self._slots = asyncio.Semaphore(self.max_in_flight)
            self._probing = asyncio.Lock()  # concurrent availability checks share one GET /models
        return self._client, self._slots

    async def aclose(self) -> None:
        """Close the connections opened in the running event loop (call before the loop ends)."""
        if self._loop is asyncio.get_running_loop():
            await self._client.close()
            self._loop = None

    def model_name(self, arm) -> str:
        """The base model's served name, an adapter's LoRA module name, or a hosted model's name."""
        if arm.kind == "openai":
            return arm.model
        return self.base_model if arm.kind == "base" else arm.name

    async def served_models(self) -> set[str]:
        """The model names the server lists (GET /v1/models).

        One attempt with a short timeout, without the completions' retries: a server that is down
        must not hold up start-up or a game start for minutes. Success is cached for good; a failure
        for PROBE_FAILURE_TTL_S, so the checks that follow fail at once with the same reason.
        """
        if self._served is not None:
            return self._served
        client, _ = self._connection()
        async with self._probing:
            if self._served is not None:  # another check finished while this one waited
                return self._served
            if self._probe_failure is not None:
                failed_at, reason = self._probe_failure
                if time.monotonic() - failed_at < PROBE_FAILURE_TTL_S:
                    raise BackendError(reason)
            try:
                self._served = await self._list_models(client.with_options(max_retries=0, timeout=PROBE_TIMEOUT_S))
            except BackendError as exc:
                self._probe_failure = (time.monotonic(), str(exc))
                raise
            self._probe_failure = None
            return self._served

    async def ping(self) -> None:
        """Whether the server answers now: one GET /models, nothing cached; BackendError if not."""
        client, _ = self._connection()
        await self._list_models(client.with_options(max_retries=0, timeout=PROBE_TIMEOUT_S))

    def describe(self) -> dict:
        """For the records."""
        return {"backend": "vllm" if self.vllm else "openai", "base_url": self.base_url, "base_model": self.base_model}

    def _unreachable(self, exc: Exception) -> str:
        fix = (
            "start one with `python -m bargain serve` or pass the right --base-url"
            if self.vllm
            else "check the URL of the openai:MODEL@URL model"
        )  # a hosted API is named by its spec, not a flag
        return f"cannot reach the OpenAI-compatible server at {self.base_url} ({exc}); {fix}"

    async def _list_models(self, client) -> set[str]:
        """GET /models once, as the listed names; BackendError saying what went wrong."""
        import openai

        try:
            # The generic `get`, as in `complete`: a body that is no model list (a web page at the wrong
            # URL) then fails here, plainly, and not inside the client's typed pagination.
            text = await client.get("/models", cast_to=str)
        except openai.APIConnectionError as exc:  # includes the timeout
            raise BackendError(self._unreachable(exc)) from exc
        except openai.APIStatusError as exc:
            raise BackendError(
                f"the OpenAI-compatible server at {self.base_url} answered GET /models with HTTP "
                f"{exc.status_code} ({exc.message}); check the --base-url and the API key"
            ) from exc
        try:
            return {model["id"] for model in json.loads(text)["data"]}
        except (ValueError, KeyError, TypeError) as exc:
            raise BackendError(
                f"the server at {self.base_url} sent no model list for GET /models ({text[:200]!r}); check "
                "that --base-url points at an OpenAI-compatible API (it usually ends in /v1)"
            ) from exc

    async def complete(self, request: Request) -> Completion:
        """One chat completion, retried on transient errors, within the in-flight bound."""
        import openai

        s = request.sampling
        body = {
            "model": request.model,
            "messages": list(request.messages),
            "temperature": s.temperature,
            "top_p": s.top_p,
            "presence_penalty": s.presence_penalty,
        }
        if self.vllm:
            body.update(max_tokens=s.max_tokens, top_k=s.top_k, chat_template_kwargs={"enable_thinking": False})
        else:  # hosted APIs: the current name of the limit (newer OpenAI models refuse max_tokens)
            body["max_completion_tokens"] = s.max_tokens
        client, slots = self._connection()
        async with slots:
            start = time.perf_counter()
            try:
                # The generic `post` keeps the client's retries and errors but skips its typed request
                # and response models, which cost milliseconds of CPU per call at high concurrency.
                text = await client.post("/chat/completions", cast_to=str, body=body)
            except openai.APIConnectionError as exc:  # includes timeouts, after the retries
                raise ServerUnavailable(self._unreachable(exc)) from exc
            except openai.APIStatusError as exc:
                error = ServerUnavailable if exc.status_code >= 500 or exc.status_code in (408, 429) else BackendError
                raise error(
                    f"{self.base_url} refused the request for model {request.model!r}: "
                    f"HTTP {exc.status_code}: {exc.message}"
                ) from exc
            latency = time.perf_counter() - start
        try:
            response = json.loads(text)
            choice = response["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise BackendError(
                f"{self.base_url} sent no usable chat completion for {request.model!r}: {text[:200]!r}"
            ) from exc
        content = message.get("content") or ""
        recovered = False
        if not content.strip():
            reasoning = message.get("reasoning_content") or message.get("reasoning")
            if reasoning:
                content, recovered = reasoning, True
        usage = response.get("usage") or {}
        return Completion(
            text=content,
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
            latency_s=latency,
            model=response.get("model") or request.model,
            finish_reason=choice.get("finish_reason"),
            revision=response.get("system_fingerprint"),
            from_reasoning=recovered,
            endpoint=self.base_url,
        )
