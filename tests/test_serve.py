"""`bargain serve` runs the server it starts for as long as it runs itself, and no longer."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_a_killed_serve_stops_its_server(tmp_path):
    """`kill` (SIGTERM), as a script stopping a background `serve` sends it, also stops the server it started:
    otherwise the next `serve` finds the port, and the GPU, taken."""
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "models").write_text('{"data": []}')  # GET /v1/models answers 200, as vLLM's does
    port = free_port()
    server = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)]
    code = (f"import sys; from bargain.agents.serve import serve; "
            f"sys.exit(serve({server!r}, 'http://127.0.0.1:{port}/v1', ['base'], timeout_s=60))")
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
