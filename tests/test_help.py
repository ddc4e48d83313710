"""Every command and subcommand answers `--help`: the README sends newcomers to them first, and a help text that
argparse cannot format (a bare % in it) crashes instead of helping."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import runpy
import subprocess
import sys
import textwrap
import tomllib
import warnings
from pathlib import Path

import pytest

from bargain import app, cli

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted(
    p.stem for p in (ROOT / "benchmarks").glob("*.py") if 'if __name__ == "__main__"' in p.read_text()
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
    """As `python -m benchmarks.NAME --help` runs it, with no RuntimeWarning: a fresh process has not imported the
    module (another test may have), so neither has this run."""
    monkeypatch.delitem(sys.modules, f"benchmarks.{name}", raising=False)
    monkeypatch.setattr(sys, "argv", [f"benchmarks/{name}.py", "--help"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert "usage: " in helps(lambda: runpy.run_module(f"benchmarks.{name}", run_name="__main__"), capsys)


@pytest.mark.parametrize("tool", ["bundle", "rehearse"])
def test_the_gpu_checks_tools_answer_help(tool, capsys):
    from benchmarks import gpu_check

    assert f"usage: python -m benchmarks.gpu_check {tool}" in helps(lambda: gpu_check.main([tool, "--help"]), capsys)


@pytest.mark.parametrize(
    "script", tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"].items(), ids=lambda s: s[0]
)
def test_each_console_command_says_its_own_name_in_its_usage(script, capsys):
    name, target = script
    module, _, function = target.partition(":")
    main = getattr(importlib.import_module(module), function)
    assert helps(lambda: main(["--help"]), capsys).startswith(f"usage: {name} ")


def test_no_command_warns_as_it_starts_as_a_program():
    """`python -m bargain ...`, `python -m bargain.app` and `python app.py` run as __main__ with no RuntimeWarning
    (runpy warns when the module it runs was imported already, by its package say), in one fresh process."""
    commands = [[], *subcommands(cli.build_parser())]
    script = textwrap.dedent(
        """
        import json, runpy, sys

        commands = json.loads(sys.argv[1])

        def run(start, *argv):
            sys.argv = [*argv, "--help"]
            try:
                start()
            except SystemExit as exited:
                assert exited.code == 0, (argv, exited.code)

        run(lambda: runpy.run_module("bargain.app", run_name="__main__", alter_sys=True), "bargain-arena")
        run(lambda: runpy.run_path("app.py", run_name="__main__"), "app.py")
        for words in commands:
            run(lambda: runpy.run_module("bargain", run_name="__main__", alter_sys=True), "bargain", *words)
        """
    )
    ran = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", script, json.dumps(commands)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0 and ran.stderr == "", ran.stderr


def test_the_app_starting_on_a_new_database_logs_one_line_per_revision_and_none_of_alembics(tmp_path):
    from bargain.records.migrations import SCRIPTS

    script = textwrap.dedent(
        """
        import sys
        from bargain.app import configure_logging
        configure_logging()
        from bargain.records.store import Store
        Store(sys.argv[1])
        """
    )
    ran = subprocess.run(
        [sys.executable, "-c", script, f"sqlite:///{tmp_path / 'arena.db'}"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = ran.stderr.splitlines()
    revisions = sorted(p.name.partition("_")[0] for p in (SCRIPTS / "versions").glob("[0-9]*.py"))
    assert ran.returncode == 0 and not [line for line in lines if "alembic" in line], ran.stderr
    assert [line.split("revision ")[1].split()[0] for line in lines] == revisions, ran.stderr
    assert all(" INFO bargain.records.migrations: database schema upgraded to revision " in line for line in lines)
