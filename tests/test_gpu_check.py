"""`benchmarks/gpu_check.py` keeps working without a GPU: its dry run plays every part at tiny size (the stub
server in vLLM's place), a failing part is reported without hiding the others, and what it starts is stopped."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from bargain.agents.serve import stop_session, vllm_missing
from benchmarks import gpu_bundle, gpu_check

ROOT = Path(gpu_check.__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_dry_run_serves_and_hot_loads_through_the_stub_server_and_reports_it(tmp_path, tiny_model, tiny_adapters):
    """The served parts, in process, on the session's tiny model and adapters (`--model`, `--adapters-dir`: a model
    on disk, not a built one); the other parts run as the GPU machine runs them, as a script (below)."""
    assert (
        gpu_check.main(
            ["--dry-run", "--parts", "serve,hotload", "--out", str(tmp_path)]
            + ["--model", str(tiny_model), "--adapters-dir", str(tiny_adapters)]
        )
        == 0
    )
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    parts = report["parts"]
    assert report["mode"] == "dry-run" and report["deadline_min"] == 8 and list(parts) == ["serve", "hotload"]
    assert all(p["status"] == "passed" for p in parts.values()), parts
    hotload = parts["hotload"]  # one training step, its rollouts from the server, which hot-loads its adapter
    assert hotload["episodes"] == 8 and hotload["samples"] > 0 and hotload["train_s"] > 0 and hotload["adapter_mib"] > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "evaluate.log",
        "gpu_check.json",
        "gpu_check.md",
        "serve.log",
    ]  # reports and logs only
    serve = parts["serve"]
    assert serve["evaluate_games"] == 32 and serve["requests"] == 32 * 4 * 2  # 4 rounds, both sides, no re-asks
    assert (
        serve["requests_per_s"] > 0
        and serve["one_adapter_tokens_per_s"] > 0
        and serve["mixed_adapters_tokens_per_s"] > 0
    )
    assert "--enable-lora" in (tmp_path / "serve.log").read_text()  # the vLLM command `bargain serve` would run
    summary = (tmp_path / "gpu_check.md").read_text()
    assert serve["need"] and serve["need"] in summary  # the figure beside what the paper's setting needs
    assert "| serve | passed |" in summary and "| hotload | passed |" in summary


def test_a_failing_part_is_reported_and_the_others_still_run(tmp_path, monkeypatch):
    @contextmanager
    def no_server(*args):
        raise RuntimeError("vllm exited with status 1 before it was ready")
        yield

    monkeypatch.setattr(gpu_check, "model_server", no_server)
    monkeypatch.setattr(gpu_check, "build", lambda root, shape: (root / "model", root / "adapters"))
    monkeypatch.setattr(gpu_check, "part_train", lambda figures, *args: figures.update(samples=3))
    assert gpu_check.main(["--dry-run", "--out", str(tmp_path), "--parts", "serve,train,hotload"]) == 1
    parts = json.loads((tmp_path / "gpu_check.json").read_text())["parts"]
    assert {name: p["status"] for name, p in parts.items()} == {
        "train": "passed",
        "serve": "failed",
        "hotload": "failed",
    }
    assert "vllm exited with status 1" in parts["serve"]["error"]
    assert "RuntimeError" in (tmp_path / "gpu_check.log").read_text()  # the traceback, for whoever runs it
    assert "| serve | failed |" in (tmp_path / "gpu_check.md").read_text()


def test_at_the_deadline_the_running_part_is_cut_with_its_figures_and_the_rest_are_not_run(tmp_path, monkeypatch):
    """`--minutes`: one deadline for the whole run, wherever it is; the reports are complete all the same."""

    def slow_hf(figures, backend, sizes):
        figures["one_adapter_tokens_per_s_1"] = 42.0  # measured before the deadline: kept
        time.sleep(30)

    monkeypatch.setattr(gpu_check, "build", lambda root, shape: (root / "model", root / "adapters"))
    monkeypatch.setattr(gpu_check, "hf_backend", contextmanager(lambda *args: iter([None])))
    monkeypatch.setattr(gpu_check, "part_hf", slow_hf)
    monkeypatch.setattr(gpu_check, "part_train", lambda *args: pytest.fail("a part after the deadline ran"))
    began = time.monotonic()
    assert gpu_check.main(["--dry-run", "--out", str(tmp_path), "--parts", "hf,train,pytest", "--minutes", "0.02"]) == 0
    assert time.monotonic() - began < 10
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    parts = report["parts"]
    assert list(parts) == ["hf", "train", "pytest"]
    assert parts["hf"]["status"] == "cut" and parts["hf"]["one_adapter_tokens_per_s_1"] == 42.0
    assert parts["train"]["status"] == parts["pytest"]["status"] == "not run"
    assert "deadline" in parts["train"]["reason"]
    summary = (tmp_path / "gpu_check.md").read_text()
    assert "| hf | cut |" in summary and "| pytest | not run |" in summary


@pytest.mark.skipif(gpu_check.cuda(), reason="on a GPU machine the parts run")
def test_without_a_gpu_each_part_says_why_it_is_skipped_and_no_model_is_built(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_check, "build", lambda *args: pytest.fail("a 16 GB model built for nothing"))
    assert gpu_check.main(["--out", str(tmp_path), "--parts", "serve,arena,hf"]) == 0
    parts = json.loads((tmp_path / "gpu_check.json").read_text())["parts"]
    assert {p["status"] for p in parts.values()} == {"skipped"} and list(parts) == ["hf", "arena", "serve"]
    assert all("no CUDA GPU" in p["reason"] for p in parts.values())


def test_unknown_parts_and_a_model_without_adapters_are_refused(capsys):
    with pytest.raises(SystemExit):
        gpu_check.main(["--dry-run", "--parts", "serve,benchmark"])
    assert "unknown parts ['benchmark']" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        gpu_check.main(["--dry-run", "--model", "somewhere"])
    assert "--model and --adapters-dir go together" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        gpu_check.main(["--dry-run", "--minutes", "0"])
    assert "--minutes must be above 0" in capsys.readouterr().err


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


# Found first on the path (PYTHONPATH) by the script and the pytest it starts: every import statement of the
# project's own code (bargain/, train/, benchmarks/, tests/) is noted, cached or not, and at exit the top-level
# names, one file per process.
IMPORT_LOG = """
import atexit, builtins, os, sys

_root = os.environ["BARGAIN_IMPORT_ROOT"]
_ours = tuple(os.path.join(_root, d) + os.sep for d in ("bargain", "train", "benchmarks", "tests"))
_seen = set()
_import = builtins.__import__

def _noted(name, globals=None, locals=None, fromlist=(), level=0):
    caller = sys._getframe().f_back  # None when the interpreter itself imports
    if level == 0 and caller is not None and caller.f_code.co_filename.startswith(_ours):
        _seen.add(name.partition(".")[0])
    return _import(name, globals, locals, fromlist, level)

def _log():
    with open(os.path.join(os.environ["BARGAIN_IMPORT_LOG"], f"{os.getpid()}.txt"), "w") as log:
        log.write("\\n".join(sorted(_seen)))

builtins.__import__ = _noted
atexit.register(_log)
"""


@pytest.mark.slow
def test_run_as_a_script_the_rehearsals_parts_pass_importing_only_the_gpu_machines_packages(
    tmp_path, tiny_model, tiny_adapters
):
    """`python benchmarks/gpu_check.py` (as the README names it), with the parts the rehearsal runs. As a script,
    benchmarks/ comes first on the path, where benchmarks/train.py would hide the train package from the train
    part. Every package the project's code imports there is one of that machine's, or carried there
    (gpu_bundle.NEEDED and what they need): the rehearsal's question, asked of this environment in seconds. The
    rehearsal itself (its test in test_gpu_bundle.py, 5 GB and minutes) also tries that machine's versions."""
    out, imports, path = (tmp_path / name for name in ("out", "imports", "path"))
    for folder in (out, imports, path):
        folder.mkdir()
    (path / "sitecustomize.py").write_text(IMPORT_LOG)
    done = subprocess.run(
        [sys.executable, "benchmarks/gpu_check.py", "--dry-run", "--parts", "hf,arena,train,pytest"]
        + ["--out", str(out), "--model", str(tiny_model), "--adapters-dir", str(tiny_adapters)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "PYTHONPATH": str(path),
            "BARGAIN_IMPORT_LOG": str(imports),
            "BARGAIN_IMPORT_ROOT": str(ROOT),
        },
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    parts = json.loads((out / "gpu_check.json").read_text())["parts"]
    assert list(parts) == ["hf", "arena", "train", "pytest"]  # in the check's order: the most valuable first
    assert all(p["status"] == "passed" for p in parts.values()), parts
    assert {f"one_adapter_tokens_per_s_{n}" for n in (1, 4)} | {"mixed_adapters_tokens_per_s_4"} <= set(parts["hf"])
    arena = parts["arena"]  # the controller, as the app drives it, on the hf backend
    assert arena["participants"] == 4 and arena["moves"] == 4 * 2 == arena["moves_stored"] and arena["lost"] == 0
    assert arena["games_finished"] == 4 and 0 < arena["server_ms_p50"] <= arena["server_ms_p95"]
    train = parts["train"]  # one step, its rollouts in process
    assert train["episodes"] == 8 and train["samples"] > 0 and train["train_s"] > 0 and train["adapter_mib"] > 0
    assert "skipped" in parts["pytest"]["summary"]
    summary = (out / "gpu_check.md").read_text()
    for name in ("hf", "arena", "train"):  # each figure beside what the paper's setting needs
        assert parts[name]["need"] and parts[name]["need"] in summary and f"| {name} | passed |" in summary
    logs = list(imports.glob("*.txt"))
    assert len(logs) >= 2  # the script and its pytest part at least
    imported = {name for log in logs for name in log.read_text().split()}
    providers = importlib.metadata.packages_distributions()
    distributions = {gpu_bundle.canonical(d) for name in imported for d in providers.get(name, ())}
    assert {"torch", "transformers", "peft", "sqlalchemy", "alembic"} <= distributions  # the log read them
    foreign = distributions - gpu_machines_packages() - {"bargain"}
    assert not foreign, f"imported, and the GPU machine lacks them: {sorted(foreign)}"


def gpu_machines_packages() -> set[str]:
    """The GPU machine's packages (gpu_bundle.MACHINE_HAS) and the carried ones (NEEDED), with every package they
    depend on as installed here, transitively (their extras left out)."""
    from packaging.requirements import Requirement

    found, queue = set(), [*gpu_bundle.MACHINE_HAS, *gpu_bundle.NEEDED]
    while queue:
        name = gpu_bundle.canonical(queue.pop())
        if name in found:
            continue
        found.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for line in requires:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                queue.append(requirement.name)
    return found


def test_the_pytest_part_collects_every_gpu_test_and_nothing_else():
    """The GPU machine lacks the app's packages: the check's pytest part collects only the files holding GPU tests,
    and every GPU test is in one of them."""
    import re

    root = Path(gpu_check.__file__).resolve().parents[1]
    marked = {
        p.relative_to(root).as_posix()
        for p in (root / "tests").glob("test_*.py")
        if re.search(r"pytest\.mark\.gpu\b", p.read_text())
    }
    for sizes in gpu_check.SIZES.values():
        assert set(sizes.tests) == marked == {"tests/test_gpu.py"}
