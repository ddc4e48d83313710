"""Building the configured backend from command-line flags or environment variables."""

from __future__ import annotations

import os
from pathlib import Path

from bargain.agents.adapters import adapter_paths
from bargain.agents.arms import ADAPTER_REPO, ADAPTERS, BASE_MODEL
from bargain.agents.backends import Backend, BackendError

KINDS = ("none", "vllm", "hf")


def build_backend(
    kind: str,
    *,
    base_url: str | None = None,
    model: str | None = None,
    adapters: list[str] | None = None,
    adapters_dir: str | None = None,
    adapter_repo: str | None = None,
    adapter_revision: str | None = None,
    device: str | None = None,
    dtype: str | None = None,
    max_in_flight: int = 256,
    api_key: str | None = None,
    sticky: bool = False,
) -> Backend | None:
    """The backend for the base model and adapters: an OpenAI-compatible server (several replicas when `base_url`
    lists several, comma-separated; `sticky` keeps a game on one), hf in process, or none.

    `adapters` names the adapters the hf backend loads (by default every arm found in `adapters_dir`, or all
    eight from the Hub).
    """
    if kind == "none":
        return None
    if kind == "vllm":
        from bargain.agents.backends.openai_server import OpenAIServer

        api_key = api_key or os.environ.get("BARGAIN_API_KEY")  # a server started with vLLM's --api-key

        if not base_url:
            raise BackendError(
                "--backend vllm needs --base-url, e.g. http://127.0.0.1:8000/v1 "
                "(start a server with `python -m bargain serve`)"
            )
        from bargain.agents.backends.replicas import Replicas, split_urls

        urls = split_urls(base_url)
        if not urls:
            raise BackendError(
                f"--base-url {base_url!r} names no server; e.g. http://127.0.0.1:8000/v1, several separated by commas"
            )
        if len(urls) > 1:
            return Replicas(
                urls, base_model=model or BASE_MODEL, api_key=api_key, max_in_flight=max_in_flight, sticky=sticky
            )
        return OpenAIServer(urls[0], base_model=model or BASE_MODEL, api_key=api_key, max_in_flight=max_in_flight)
    if kind == "hf":
        from bargain.agents.backends.hf import HFBackend

        if adapters is not None:
            names = adapters
        elif adapters_dir:  # every arm with a copy there (a training checkpoint holds one)
            names = [n for n in ADAPTERS if (Path(adapters_dir) / n / "adapter_config.json").is_file()]
        else:
            names = list(ADAPTERS)
        paths = adapter_paths(names, adapters_dir, adapter_repo or ADAPTER_REPO, adapter_revision)
        return HFBackend(model or BASE_MODEL, paths, device=device, dtype=dtype)
    raise BackendError(f"unknown backend {kind!r}; choose from {', '.join(KINDS)}")
