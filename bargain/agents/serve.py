"""`python -m bargain serve`: start vLLM's OpenAI-compatible server with the base model and adapters.

The command registers every adapter as a LoRA module under its arm name
(`--enable-lora --max-loras 8 --max-lora-rank 32`, the joint adapters being rank 32), keeps the
context short (a game is a few thousand tokens, so `--max-model-len 8192` leaves the rest of
the memory to the KV cache) and takes 90% of the GPU's memory, which fits Qwen3-8B in bf16 on
one 24-80 GB GPU. vLLM is an optional dependency (requirements-gpu.txt).
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bargain.agents.arms import ADAPTER_REPO, BASE_MODEL
from bargain.agents.backends import BackendError

MAX_LORA_RANK = 32


def vllm_command(
    model: str,
    adapters: Mapping[str, Path | str],
    host: str = "127.0.0.1",
    port: int = 8000,
    max_model_len: int = 8192,
    gpu_memory_utilization: float = 0.90,
    tensor_parallel_size: int = 1,
    data_parallel_size: int = 1,
) -> list[str]:
    """The `vllm serve` command line for the base model and the given adapters."""
    command = [
        "vllm",
        "serve",
        model,
        "--host",
        host,
        "--port",
        str(port),
        "--max-model-len",
        str(max_model_len),
        "--gpu-memory-utilization",
        str(gpu_memory_utilization),
    ]
    if tensor_parallel_size > 1:
        command += ["--tensor-parallel-size", str(tensor_parallel_size)]
    if data_parallel_size > 1:
        command += ["--data-parallel-size", str(data_parallel_size)]
    if adapters:
        command += [
            "--enable-lora",
            "--max-loras",
            str(len(adapters)),
            "--max-lora-rank",
            str(MAX_LORA_RANK),
            "--lora-modules",
            *(f"{name}={path}" for name, path in adapters.items()),
        ]
    return command


def planned_paths(names: list[str], repo: str = ADAPTER_REPO) -> dict[str, str]:
    """Where the adapters will be once downloaded (for --dry-run without a download)."""
    from huggingface_hub import snapshot_download

    try:
        root = Path(snapshot_download(repo, allow_patterns=[f"{n}/*" for n in names], local_files_only=True))
        return {name: str(root / name) for name in names}
    except Exception:  # not in the cache yet: `serve` downloads it first
        return {name: f"<{repo} snapshot>/{name}" for name in names}


def vllm_missing() -> str | None:
    """Why vLLM cannot be started here, or None when it can."""
    if importlib.util.find_spec("vllm") is None or shutil.which("vllm") is None:
        return (
            "vLLM is not installed: on a CUDA machine run `pip install -r requirements-gpu.txt`; "
            "without one, play the models with --backend hf --model ID_OR_PATH"
        )
    return None


def wait_until_ready(url: str, process: subprocess.Popen | None, timeout_s: float) -> None:
    """Poll GET {url}/models until the server answers; fail if it takes too long or if `process` (the server, when
    this program started it) exits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise BackendError(
                f"vllm exited with status {process.returncode} before it was ready; see its output above"
            )
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(2)
    raise BackendError(
        f"no vLLM server answered at {url} within {timeout_s:.0f} s"
        + ("" if process is not None else ": start it first, or check the URL")
    )


def start_in_background(model: str | None, adapters_dir: str | None, port: int = 8000, timeout_s: float = 1800) -> str:
    """Start vLLM with the base model and all eight adapters for this process's lifetime; its URL."""
    import atexit

    from bargain.agents.adapters import adapter_paths
    from bargain.agents.arms import ADAPTERS

    problem = vllm_missing()
    if problem:
        raise BackendError(problem)
    command = vllm_command(model or BASE_MODEL, adapter_paths(ADAPTERS, adapters_dir), port=port)
    print("starting:", shlex.join(command), flush=True)
    process = subprocess.Popen(command)
    atexit.register(process.terminate)
    url = f"http://127.0.0.1:{port}/v1"
    wait_until_ready(url, process, timeout_s)
    return url


@dataclass(frozen=True)
class Launch:
    """One vLLM server to start: its command, the GPUs it sees (None: the environment's) and its URL."""

    command: list[str]
    gpus: str | None
    url: str

    def shown(self) -> str:
        return (f"CUDA_VISIBLE_DEVICES={self.gpus} " if self.gpus is not None else "") + shlex.join(self.command)


def launches(
    command: list[str], host: str, port: int, replicas: int, gpus_each: int, visible: str | None
) -> list[Launch]:
    """`replicas` servers of `command`, each on its own `gpus_each` GPUs (taken in order from `visible`, the
    CUDA_VISIBLE_DEVICES list, or 0, 1, ... when it is unset) and its own port (`port`, `port` + 1, ...)."""
    address = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    if replicas == 1:
        return [Launch(command, None, f"http://{address}:{port}/v1")]
    devices = (
        [d.strip() for d in visible.split(",") if d.strip()]
        if visible
        else [str(i) for i in range(replicas * gpus_each)]
    )
    if len(devices) < replicas * gpus_each:
        raise BackendError(
            f"{replicas} replicas of {gpus_each} GPU(s) need {replicas * gpus_each} GPUs; "
            f"CUDA_VISIBLE_DEVICES lists {len(devices)} ({visible}): start fewer replicas"
        )
    port_at = command.index("--port") + 1
    return [
        Launch(
            [*command[:port_at], str(port + i), *command[port_at + 1 :]],
            ",".join(devices[i * gpus_each : (i + 1) * gpus_each]),
            f"http://{address}:{port + i}/v1",
        )
        for i in range(replicas)
    ]


def serve(servers: list[Launch], arms: list[str], timeout_s: float = 1800) -> int:
    """Run the vLLM servers, report when they all answer, and keep them running until interrupted (Ctrl-C, or
    `kill`: the servers stop with this program rather than holding their GPUs and ports) or until one exits."""
    processes: list[subprocess.Popen] = []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # unwinds through `finally`, which stops the servers
    try:
        for server in servers:
            print("starting:", server.shown(), flush=True)
            env = None if server.gpus is None else {**os.environ, "CUDA_VISIBLE_DEVICES": server.gpus}
            processes.append(subprocess.Popen(server.command, env=env))
        for server, process in zip(servers, processes):
            wait_until_ready(server.url, process, timeout_s)
        urls = ",".join(server.url for server in servers)
        print(
            f"\nvLLM is serving at {urls}\narms: {', '.join(arms)}\nplay them with --backend vllm --base-url {urls}",
            flush=True,
        )
        while all(process.poll() is None for process in processes):
            time.sleep(1)
        return next(process.returncode for process in processes if process.poll() is not None)
    except KeyboardInterrupt:
        return 0
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def main_serve(
    model: str | None,
    adapter_names: list[str],
    adapters_dir: str | None,
    adapter_revision: str | None,
    host: str,
    port: int,
    max_model_len: int,
    gpu_memory_utilization: float,
    tensor_parallel_size: int,
    dry_run: bool,
    timeout_s: float,
    data_parallel_size: int = 1,
    replicas: int = 1,
) -> int:
    """The `serve` subcommand."""
    from bargain.agents.adapters import adapter_paths

    model = model or BASE_MODEL
    if dry_run:
        paths = adapter_paths(adapter_names, adapters_dir) if adapters_dir else planned_paths(adapter_names)
    else:
        problem = vllm_missing()
        if problem:
            raise BackendError(problem)
        paths = adapter_paths(adapter_names, adapters_dir, revision=adapter_revision)
    if min(replicas, tensor_parallel_size, data_parallel_size) < 1:
        raise BackendError("--replicas, --tensor-parallel-size and --data-parallel-size must be at least 1")
    command = vllm_command(
        model, paths, host, port, max_model_len, gpu_memory_utilization, tensor_parallel_size, data_parallel_size
    )
    servers = launches(
        command, host, port, replicas, tensor_parallel_size * data_parallel_size, os.environ.get("CUDA_VISIBLE_DEVICES")
    )
    if dry_run:
        print("\n".join(server.shown() for server in servers))
        if replicas > 1:
            print("--base-url " + ",".join(server.url for server in servers))
        return 0
    return serve(servers, ["base", *adapter_names], timeout_s)


def serve_command(model: str | Path, adapters_dir: str | Path, port: int, gpu_memory_utilization: float) -> list[str]:
    """`python -m bargain serve` of a local model and its adapters (one folder per arm), as a command line."""
    return [
        sys.executable,
        "-m",
        "bargain",
        "serve",
        "--model",
        str(model),
        "--adapters-dir",
        str(adapters_dir),
        "--port",
        str(port),
        "--gpu-memory-utilization",
        str(gpu_memory_utilization),
    ]


def stop_session(process: subprocess.Popen) -> None:
    """Stop a process started in a session of its own, and everything it started (vLLM's workers)."""
    if process.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 60), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
            process.wait(timeout=wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def serving(
    model: str | Path, adapters_dir: str | Path, log: Path, gpu_memory_utilization: float, timeout_s: float
) -> Iterator[str]:
    """`python -m bargain serve` of a local model and its adapters on a free port, with runtime adapter loading on
    (the trainer's hot reload), for as long as the block runs; its URL. Its output goes to `log`; the server and
    its workers are stopped when the block ends, however it ends (GPU checks and GPU tests)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(log, "w") as output:
        process = subprocess.Popen(
            serve_command(model, adapters_dir, port, gpu_memory_utilization),
            cwd=Path(__file__).resolve().parents[2],
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True"},
        )
        try:
            url = f"http://127.0.0.1:{port}/v1"
            wait_until_ready(url, process, timeout_s)
            yield url
        finally:
            stop_session(process)
