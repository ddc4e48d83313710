"""The package installs like one: a wheel built from the repository, installed into a fresh virtual environment, gives
the `bargain` and `bargain-arena` commands and `python -m train`, and works from outside the repository, so that the
scenarios, the paper's cells, the study example's texts and the training presets are really in the wheel.

The environment sees the packages that the interpreter running the tests sees (a `.pth` file naming its
site-packages folders: those of the virtual environment the tests run from, which `--system-site-packages` would
miss, since a new environment's "system" is the base interpreter's), and pip may fetch nothing (`--no-index`): the
wheel's declared dependencies must be met by the pinned set, and nothing multi-gigabyte is downloaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The `bin` folder of a fresh virtual environment holding the wheel."""
    root = tmp_path_factory.mktemp("packaging")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(root / "dist"),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = (root / "dist").glob("bargain-*.whl")
    venv.create(root / "venv")
    (purelib,) = (root / "venv" / "lib").glob("python*/site-packages")
    seen = [path for path in sys.path if Path(path).name in ("site-packages", "dist-packages")]
    lines = [f"import site; site.addsitedir({path!r})" for path in seen]  # their own .pth files read too
    (purelib / "running-interpreter.pth").write_text("\n".join(lines) + "\n")  # pip among them, installing here
    bin_dir = root / "venv" / "bin"
    done = subprocess.run(
        [
            str(bin_dir / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--disable-pip-version-check",
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return bin_dir


def run(installed: Path, *command: str, cwd: Path) -> str:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"} | {"HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_the_wheel_installs_the_commands_and_they_work_outside_the_repository(installed, tmp_path):
    python = str(installed / "python")
    where = run(installed, python, "-c", "import bargain, train; print(bargain.__file__, train.__file__)", cwd=tmp_path)
    assert all(str(installed.parent) in path for path in where.split())  # the installed copies, not the repository's
    assert "simulate" in run(installed, str(installed / "bargain"), "--help", cwd=tmp_path)
    assert "--study STUDY.yaml" in run(installed, str(installed / "bargain-arena"), "--help", cwd=tmp_path)
    assert "usage: python -m train" in run(installed, python, "-m", "train", "--help", cwd=tmp_path)
    run(
        installed,
        str(installed / "bargain"),
        "simulate",
        "--split",
        "val",
        "--trials",
        "1",
        "--rounds",
        "2",
        "--conditions",
        "both_unaware",
        "--buyer",
        "tactic:random",
        "--seller",
        "tactic:linear",
        "--out",
        "run",
        "--quiet",
        cwd=tmp_path,
    )
    games = (tmp_path / "run" / "games.jsonl").read_text().splitlines()
    assert len(games) == 8  # the bundled scenarios: val is low[1500:1508]
    plan = run(installed, python, "-m", "train", "plan", "--config", "buyer-grpo", cwd=tmp_path)  # a preset by name
    assert json.loads(plan.splitlines()[0])["kind"] == "train"
    example = run(
        installed,
        python,
        "-c",
        "from bargain.study.config import load; s = load('example'); "
        "print(s.name, *(len(t) > 100 for t in (s.texts.consent, s.texts.instructions, s.texts.debrief)))",
        cwd=tmp_path,
    )
    assert example.split()[1:] == ["True", "True", "True"]
