"""The benchmarks' command lines: each `--help` names the program as it is run (each main is run in this
process with `--help` as its arguments: the same parser, without an interpreter and its imports per call)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from unittest import mock

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("name", BENCHMARKS)
def test_help_names_the_program(name, capsys):
    module = importlib.import_module(f"benchmarks.{name}")
    with mock.patch.object(sys, "argv", [f"{name}.py", "--help"]), pytest.raises(SystemExit) as done:
        module.main()
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"usage: python -m benchmarks.{name} "), shown
