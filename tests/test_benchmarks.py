"""The benchmarks' command lines: each `--help` names the program as it is run (each main is run in this
process with `--help` as its arguments: the same parser, without an interpreter and its imports per call)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from unittest import mock

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted(
    p.stem for p in (ROOT / "benchmarks").glob("*.py") if 'if __name__ == "__main__"' in p.read_text()
)  # the runnable ones, not their helpers


@pytest.mark.parametrize("name", BENCHMARKS)
def test_help_names_the_program(name, capsys):
    module = importlib.import_module(f"benchmarks.{name}")
    with mock.patch.object(sys, "argv", [f"{name}.py", "--help"]), pytest.raises(SystemExit) as done:
        module.main()
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"usage: python -m benchmarks.{name} "), shown


def test_the_agents_benchmark_plays_exactly_what_evaluate_plays(tmp_path):
    """benchmarks.agents goes through `evaluate`'s own code; only the backend differs. Against a server that gives
    the same canned replies over HTTP, `python -m bargain evaluate` plays the same trials, prompts and moves."""
    import json

    import pandas as pd

    from bargain.agents.arms import ADAPTERS, BASE_MODEL
    from bargain.agents.stub_server import StubServer
    from bargain.cli import main
    from bargain.runs.gamelog import read_games
    from benchmarks.agents import WORKLOAD, whole_run

    cut = ("--trials", "1")
    played, _ = whole_run("evaluate", tmp_path / "bench", cut)
    with StubServer([BASE_MODEL, *ADAPTERS]) as server:
        assert (
            main(
                [
                    "evaluate",
                    *WORKLOAD,
                    *cut,
                    "--backend",
                    "vllm",
                    "--base-url",
                    server.url,
                    "--out",
                    str(tmp_path / "real"),
                ]
            )
            == 0
        )
    assert played == 32
    bench, real = (pd.read_csv(tmp_path / run / "trials.csv") for run in ("bench", "real"))
    same = [c for c in real.columns if "tokens" not in c and "latency" not in c]
    pd.testing.assert_frame_equal(bench[same], real[same])
    games = {run: list(read_games(tmp_path / run / "games.jsonl")) for run in ("bench", "real")}
    assert [g.state.to_dict() for g in games["bench"]] == [g.state.to_dict() for g in games["real"]]
    assert [[(r["messages"], r["raw"]) for r in g.records] for g in games["bench"]] == [
        [(r["messages"], r["raw"]) for r in g.records] for g in games["real"]
    ]
    keys = [json.loads((tmp_path / run / "config.json").read_text())["key"] for run in ("bench", "real")]
    assert keys[0] == keys[1]  # prompt wording, sampling, parsing: the same run
