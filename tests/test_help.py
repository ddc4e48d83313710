"""Every command and subcommand answers `--help`: the README sends newcomers to them first, and a help text that
argparse cannot format (a bare % in it) crashes instead of helping."""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

import pytest

from bargain import app, cli

BENCHMARKS = sorted(
    p.stem
    for p in (Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py")
    if 'if __name__ == "__main__"' in p.read_text()
)  # the runnable ones, not their helpers


def subcommands(parser: argparse.ArgumentParser) -> list[list[str]]:
    """A parser's subcommands, and theirs (`db upgrade`), each as the words that name it."""
    return [
        [name, *words]
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name, sub in action.choices.items()
        for words in [[], *subcommands(sub)]
    ]


def helps(run, capsys) -> str:
    """What `run` (given `--help`) prints, once it has exited as argparse's help does."""
    with pytest.raises(SystemExit) as exited:
        run()
    assert exited.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", [[], *subcommands(cli.build_parser())], ids=lambda c: " ".join(["bargain", *c]))
def test_every_bargain_command_answers_help(command, capsys):
    assert "usage: " in helps(lambda: cli.main([*command, "--help"]), capsys)


@pytest.mark.parametrize("command", [[], ["best"], ["plan"]], ids=lambda c: " ".join(["train", *c]))
def test_every_train_command_answers_help(command, capsys):
    from train.__main__ import main

    assert "usage: python -m train" in helps(lambda: main([*command, "--help"]), capsys)


def test_the_app_answers_help(capsys):
    assert "--move-deadline" in helps(lambda: app.parse_args(["--help"]), capsys)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_benchmark_answers_help(name, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [f"benchmarks/{name}.py", "--help"])
    assert "usage: " in helps(lambda: runpy.run_module(f"benchmarks.{name}", run_name="__main__"), capsys)


@pytest.mark.parametrize("tool", ["bundle", "rehearse"])
def test_the_gpu_checks_tools_answer_help(tool, capsys):
    from benchmarks import gpu_check

    assert f"usage: python -m benchmarks.gpu_check {tool}" in helps(lambda: gpu_check.main([tool, "--help"]), capsys)
