"""Run a command-line entry point in this process, as the tests would run it in a subprocess.

Why: `python -m bargain ...` in a fresh interpreter pays the interpreter start and every import
(pandas, SciPy, SQLAlchemy; torch and transformers for the hf backend, up to 8 s) on each call.
In process, `run_main` takes the same code path, `main(argv)`, with what a process has of its own
(standard input, output and error, the environment, the working directory) set for the call and put
back after it, and hands back the `subprocess.CompletedProcess` a subprocess would: the tests'
assertions on return codes and output read the same.

What only a real process shows (start-up imports, the interpreter's exit status, whatever is read at
import time) stays a subprocess: see the tests that call `subprocess.run` in tests/test_cli.py.
Not thread-safe: standard streams, the environment and the working directory are process-wide.
Two things stay the test process's: warnings (pytest records them and lists them in its summary),
and logging handlers made before the call, which write to the stream they were made with.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]

EntryPoint = Callable[[list[str]], int | None]


@contextlib.contextmanager
def environment(overlay: Mapping[str, str | None]) -> Iterator[None]:
    """os.environ with `overlay` applied (None removes a variable); afterwards all of it as it was,
    also what the call itself set."""
    saved = os.environ.copy()
    for name, value in overlay.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def last_resort_logging(stream: io.StringIO) -> Iterator[None]:
    """Records of WARNING and above on `stream`, as a fresh interpreter's `logging.lastResort` prints
    them on standard error (pytest's own handlers on the root logger would keep them from it)."""
    handler = logging.StreamHandler(stream)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


def exit_status(code: object) -> int:
    """The exit status of `sys.exit(code)`; a message is printed on (the redirected) standard error."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run_main(
    main: EntryPoint,
    *args: str,
    stdin: str | None = None,
    env: Mapping[str, str | None] | None = None,
    cwd: Path = ROOT,
) -> subprocess.CompletedProcess[str]:
    """`main(list(args))` as `python -m ...` would run it: `stdin` as standard input (empty if None),
    `env` over the environment, `cwd` (the repository root) as working directory. Output and error are
    captured, a progress bar or log record written to standard error included. SystemExit (argparse,
    --help) gives its status; an uncaught exception gives status 1 and its traceback on standard error,
    as the interpreter prints it."""
    argv = list(args)
    out, err = io.StringIO(), io.StringIO()
    with (
        environment(env or {}),
        contextlib.chdir(cwd),
        mock.patch.object(sys, "stdin", io.StringIO(stdin or "")),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        last_resort_logging(err),
    ):
        try:
            returncode = exit_status(main(argv))
        except SystemExit as exc:
            returncode = exit_status(exc.code)
        except Exception:
            traceback.print_exc()
            returncode = 1
    return subprocess.CompletedProcess(argv, returncode, out.getvalue(), err.getvalue())
