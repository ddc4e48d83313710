"""`benchmarks/gpu_check.py` keeps working without a GPU: its dry run plays every part at tiny size (the stub
server in vLLM's place), a failing part is reported without hiding the others, and what it starts is stopped."""

from __future__ import annotations

import json
import os
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from bargain.agents.serve import stop_session, vllm_missing
from benchmarks import gpu_check

PARTS = ["serve", "arena", "train", "hf", "pytest"]


@pytest.mark.slow
def test_the_dry_run_plays_every_part_and_reports_it(tmp_path, tiny_model, tiny_adapters):
    """On the session's tiny model and adapters (`--model`, `--adapters-dir`: a model on disk instead of a built one)."""
    assert gpu_check.main(["--dry-run", "--out", str(tmp_path), "--model", str(tiny_model),
                           "--adapters-dir", str(tiny_adapters)]) == 0
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    parts = report["parts"]
    assert report["mode"] == "dry-run" and list(parts) == PARTS
    assert all(p["status"] == "passed" for p in parts.values()), parts
    serve = parts["serve"]
    assert serve["evaluate_games"] == 32 and serve["requests"] == 32 * 4 * 2  # 4 rounds, both sides, no re-asks
    assert serve["requests_per_s"] > 0 and serve["one_adapter_tokens_per_s"] > 0 and serve["mixed_adapters_tokens_per_s"] > 0
    assert "--enable-lora" in (tmp_path / "serve.log").read_text()  # the vLLM command `bargain serve` would run
    arena = parts["arena"]
    assert arena["moves"] > 0 and arena["moves_stored"] == arena["moves"] and arena["lost"] == 0
    assert 0 < arena["server_ms_p50"] <= arena["server_ms_p95"]
    assert [s["step"] for s in parts["train"]["steps"]] == [1, 2]
    assert all(s["episodes"] > 0 and s["samples"] > 0 and s["sync_s"] > 0 for s in parts["train"]["steps"])
    assert (tmp_path / "train" / "checkpoints" / "step_2" / "buyer-grpo" / "adapter_config.json").exists()
    assert {f"{kind}_tokens_per_s_{n}" for kind in ("one_adapter", "mixed_adapters") for n in (1, 4)} <= set(parts["hf"])
    assert "deselected" in parts["pytest"]["summary"] or "skipped" in parts["pytest"]["summary"]
    summary = (tmp_path / "gpu_check.md").read_text()
    assert all(f"| {name} | passed |" in summary for name in PARTS)


def test_a_failing_part_is_reported_and_the_others_still_run(tmp_path, monkeypatch):
    @contextmanager
    def no_server(*args):
        raise RuntimeError("vllm exited with status 1 before it was ready")
        yield

    monkeypatch.setattr(gpu_check, "model_server", no_server)
    monkeypatch.setattr(gpu_check, "part_hf", lambda *args: {"device": "cpu", "dtype": "float32"})
    assert gpu_check.main(["--dry-run", "--out", str(tmp_path), "--parts", "serve,train,hf"]) == 1
    parts = json.loads((tmp_path / "gpu_check.json").read_text())["parts"]
    assert {name: p["status"] for name, p in parts.items()} == {"serve": "failed", "train": "failed", "hf": "passed"}
    assert "vllm exited with status 1" in parts["serve"]["error"]
    assert "RuntimeError" in (tmp_path / "gpu_check.log").read_text()  # the traceback, for whoever runs it
    assert "| serve | failed |" in (tmp_path / "gpu_check.md").read_text()


@pytest.mark.skipif(gpu_check.cuda(), reason="on a GPU machine the parts run")
def test_without_a_gpu_each_part_says_why_it_is_skipped_and_no_model_is_built(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_check, "build", lambda *args: pytest.fail("a 16 GB model built for nothing"))
    assert gpu_check.main(["--out", str(tmp_path), "--parts", "serve,arena,hf"]) == 0
    parts = json.loads((tmp_path / "gpu_check.json").read_text())["parts"]
    assert {p["status"] for p in parts.values()} == {"skipped"} and list(parts) == ["serve", "arena", "hf"]
    assert all("no CUDA GPU" in p["reason"] for p in parts.values())


def test_unknown_parts_and_a_model_without_adapters_are_refused(capsys):
    with pytest.raises(SystemExit):
        gpu_check.main(["--dry-run", "--parts", "serve,benchmark"])
    assert "unknown parts ['benchmark']" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        gpu_check.main(["--dry-run", "--model", "somewhere"])
    assert "--model and --adapters-dir go together" in capsys.readouterr().err


def test_a_started_server_and_everything_it_started_are_stopped():
    """The server runs in a session of its own; stopping it ends the whole group (vLLM starts worker processes)."""
    process = subprocess.Popen(["sh", "-c", "sleep 300 & sleep 300"], start_new_session=True)
    time.sleep(0.3)
    assert len(running_in_group(process.pid)) >= 2  # the shell and its background child at least
    stop_session(process)
    assert process.poll() is not None
    time.sleep(0.2)
    assert running_in_group(process.pid) == []


def running_in_group(group: int) -> list[int]:
    """Processes of a process group that still run (killed ones nobody has reaped yet are not running)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            fields = (Path("/proc") / entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            found.append(int(entry))
    return found


@pytest.mark.skipif(vllm_missing() is None, reason="vLLM is installed here: the server would start")
def test_serving_without_vllm_fails_at_once_with_the_reason(tmp_path):
    """The real server's path (`bargain.agents.serve.serving`) on a machine without vLLM: one clear error, the
    reason in the log, no process left behind."""
    from bargain.agents.backends import BackendError
    from bargain.agents.serve import serving

    with pytest.raises(BackendError, match="vllm exited with status"):
        with serving(tmp_path / "model", tmp_path / "adapters", tmp_path / "serve.log", 0.45, 60):
            pytest.fail("no server can answer here")
    assert "vLLM is not installed" in (tmp_path / "serve.log").read_text()


@pytest.mark.slow
def test_run_as_a_script_it_finds_the_train_package(tmp_path, tiny_model, tiny_adapters):
    """`python benchmarks/gpu_check.py` (as the README names it): run as a script, benchmarks/ comes first on the
    path, where benchmarks/train.py would hide the train package from the train part."""
    root = Path(gpu_check.__file__).resolve().parents[1]
    done = subprocess.run(["python", "benchmarks/gpu_check.py", "--dry-run", "--parts", "train", "--out", str(tmp_path),
                           "--model", str(tiny_model), "--adapters-dir", str(tiny_adapters)], cwd=root,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert json.loads((tmp_path / "gpu_check.json").read_text())["parts"]["train"]["status"] == "passed"


def test_the_pytest_part_collects_every_gpu_test_and_nothing_else():
    """The GPU machine lacks the app's packages: the check's pytest part collects only the files holding GPU tests,
    and every GPU test is in one of them."""
    import re

    root = Path(gpu_check.__file__).resolve().parents[1]
    marked = {p.relative_to(root).as_posix() for p in (root / "tests").glob("test_*.py")
              if re.search(r"pytest\.mark\.gpu\b", p.read_text())}
    for sizes in gpu_check.SIZES.values():
        assert set(sizes.tests) == marked == {"tests/test_gpu.py"}
