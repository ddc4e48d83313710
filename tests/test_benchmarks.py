"""The benchmarks' command lines: each `--help` names the program as it is run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("name", BENCHMARKS)
def test_help_names_the_program(name):
    shown = subprocess.run([sys.executable, "-m", f"benchmarks.{name}", "--help"], cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"usage: python -m benchmarks.{name} "), shown.stdout
