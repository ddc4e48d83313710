"""Command-line flags that the arena app (`bargain-arena`) and the `bargain` commands share: the model backend's,
declared once so that both programs take the same flags with the same environment variables, and the number type
that reads a flag or its variable.

Only what reading flags needs is imported here: `--help` answers at once.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable

from bargain.agents.backends import Backend
from bargain.agents.backends.build import KINDS, build_backend


def number(kind: type, low: float, high: float | None = None) -> Callable[[str], float]:
    """An argparse type: a number of `kind` (int or float) from `low` (to `high`). argparse reads a flag's string
    default through its type too, so a bad environment variable is refused in the same one line as a bad flag."""
    what = "a whole number" if kind is int else "a number"
    bounds = f"from {low:g} to {high:g}" if high is not None else f"of at least {low:g}"

    def read(text: str) -> float:
        try:
            value = kind(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(
                f"{text!r} is not {what} (set by the flag or its environment variable)"
            ) from None
        if not math.isfinite(value) or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {what} {bounds}; got {text!r}")
        return value

    return read


def add_backend_flags(
    parser: argparse.ArgumentParser, *, max_in_flight: int = 256, model_flag: str = "--model"
) -> None:
    """The model backend's flags, each with its environment variable (a Space or a cluster job sets them once).
    `max_in_flight`: the default number of requests in flight to a vLLM server (a batch run's; the arena serves
    people, and sends fewer); `model_flag`: the base model's flag where a command's `--model` means another model
    (a claim reader's)."""
    env = os.environ.get
    group = parser.add_argument_group("model backend (for arm:... agents)")
    group.add_argument(
        "--backend",
        choices=KINDS,
        default=env("BARGAIN_BACKEND", "none"),
        help="vllm: an OpenAI-compatible server; hf: transformers + peft in this process; none: no model, the "
        "scripted tactics only (env BARGAIN_BACKEND)",
    )
    group.add_argument(
        "--base-url",
        default=env("BARGAIN_BASE_URL"),
        help="server URL for --backend vllm, e.g. http://127.0.0.1:8000/v1; several replicas as URL1,URL2,... "
        "(env BARGAIN_BASE_URL)",
    )
    group.add_argument(
        model_flag,
        dest="model",
        default=env("BARGAIN_MODEL"),
        help="base model: Hub id or local path (hf), served name (vllm); default Qwen/Qwen3-8B (env BARGAIN_MODEL)",
    )
    group.add_argument(
        "--adapters-dir",
        default=env("BARGAIN_ADAPTERS_DIR"),
        help="local directory with <arm>/adapter_config.json; default: download from the Hub "
        "(env BARGAIN_ADAPTERS_DIR)",
    )
    group.add_argument(
        "--adapter-revision",
        default=env("BARGAIN_ADAPTER_REVISION"),
        help="revision of the adapter repository to download (env BARGAIN_ADAPTER_REVISION)",
    )
    group.add_argument(
        "--device",
        default=env("BARGAIN_DEVICE"),
        help="hf: cuda, cpu, ... (env BARGAIN_DEVICE; default: cuda if present)",
    )
    group.add_argument(
        "--dtype",
        default=env("BARGAIN_DTYPE"),
        help="hf: bfloat16, float16, float32 (env BARGAIN_DTYPE; default: bf16 on GPU, fp32 on CPU)",
    )
    group.add_argument(
        "--max-in-flight",
        type=number(int, 1),
        default=env("BARGAIN_MAX_IN_FLIGHT", str(max_in_flight)),
        help="vllm: requests in flight at once (env BARGAIN_MAX_IN_FLIGHT; default %(default)s)",
    )


def backend_from(args: argparse.Namespace, adapters: list[str] | None = None, sticky: bool = False) -> Backend | None:
    """The local backend the backend flags describe (None for `--backend none`); `adapters`: those the hf backend
    loads (default: every one found); `sticky`: a game keeps its vLLM replica."""
    return build_backend(
        args.backend,
        base_url=args.base_url,
        model=args.model,
        adapters=adapters,
        adapters_dir=args.adapters_dir,
        adapter_revision=args.adapter_revision,
        device=args.device,
        dtype=args.dtype,
        max_in_flight=args.max_in_flight,
        sticky=sticky,
    )
