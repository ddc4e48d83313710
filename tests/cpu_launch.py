"""A program on several CPU processes under `accelerate launch`, as the two-process training tests run it (the
trainer's own multi-process path, with gloo in place of NCCL)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def accelerate_on_cpu(processes: int, *program: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment that run `program` (a script and its arguments, or `-m module ...`) on
    `processes` CPU processes: accelerate's --multi_gpu on a machine without GPUs runs them on the CPU and joins them
    with gloo (ACCELERATE_USE_CPU: without it each would run alone), one torch thread each, offline."""
    command = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--multi_gpu",
        "--num_processes",
        str(processes),
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        *program,
    ]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "ACCELERATE_USE_CPU": "true",
    }
    return command, env
