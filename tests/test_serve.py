"""`bargain serve` runs the server it starts for as long as it runs itself, and no longer."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.slow
def test_a_killed_serve_stops_its_server(tmp_path):
    """`kill` (SIGTERM), as a script stopping a background `serve` sends it, also stops the server it started:
    otherwise the next `serve` finds the port, and the GPU, taken."""
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "models").write_text('{"data": []}')  # GET /v1/models answers 200, as vLLM's does
    port = free_port()
    server = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)]
    code = (
        f"import sys; from bargain.agents.serve import Launch, serve; "
        f"sys.exit(serve([Launch({server!r}, None, 'http://127.0.0.1:{port}/v1')], ['base'], timeout_s=60))"
    )
    running = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        for line in running.stdout:
            if line.startswith("vLLM is serving"):
                break
        assert answers(port)
        running.send_signal(signal.SIGTERM)
        assert running.wait(timeout=30) == 0
        deadline = time.monotonic() + 10
        while answers(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not answers(port)
    finally:
        running.kill()


def test_replicas_each_get_their_gpus_and_port_and_the_urls_are_printed(tmp_path):
    from cli_runner import run_main

    from bargain.cli import main

    root = tmp_path / "adapters"
    (root / "buyer-grpo").mkdir(parents=True)
    (root / "buyer-grpo" / "adapter_config.json").write_text("{}")
    common = ["serve", "--dry-run", "--adapters-dir", str(root), "--adapters", "buyer-grpo"]
    done = run_main(
        main,
        *common,
        "--replicas",
        "2",
        "--tensor-parallel-size",
        "2",
        "--port",
        "9000",
        env={"CUDA_VISIBLE_DEVICES": "2,3,5,6"},
    )
    assert done.returncode == 0, done.stderr
    first, second, urls = done.stdout.strip().splitlines()
    assert first.startswith("CUDA_VISIBLE_DEVICES=2,3 vllm serve") and "--port 9000" in first
    assert second.startswith("CUDA_VISIBLE_DEVICES=5,6 vllm serve") and "--port 9001" in second
    assert "--tensor-parallel-size 2" in first and "--tensor-parallel-size 2" in second
    assert urls == "--base-url http://127.0.0.1:9000/v1,http://127.0.0.1:9001/v1"

    done = run_main(main, *common, "--data-parallel-size", "4", env={"CUDA_VISIBLE_DEVICES": None})
    assert done.returncode == 0 and done.stdout.strip().splitlines()[0].startswith("vllm serve")
    assert "--data-parallel-size 4" in done.stdout and "CUDA_VISIBLE_DEVICES" not in done.stdout

    done = run_main(main, *common, "--replicas", "3", env={"CUDA_VISIBLE_DEVICES": "0,1"})
    assert done.returncode != 0 and "need 3 GPUs" in done.stderr and "Traceback" not in done.stderr
