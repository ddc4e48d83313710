"""How the suite itself runs (.ci/run): the tests of one `xdist_group` share a worker under `--dist loadgroup`, so
that a costly fixture of theirs (the taught model, a module's export) is built once, not on both workers."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


@pytest.mark.slow  # a pytest of its own, with two workers: three interpreters started (seconds)
def test_loadgroup_runs_a_groups_tests_on_one_worker(tmp_path):
    """pytest-xdist marks a group by its tests' node ids, which pytest 9.2 ignores: nothing fails, the groups are
    simply spread over the workers and the suite takes minutes longer. requirements.txt pins a pytest that keeps
    them; this fails when a new pin loses them."""
    (tmp_path / "test_grouped.py").write_text(
        textwrap.dedent(
            r"""
            import os, time, pytest

            @pytest.mark.parametrize("i", range(6))
            @pytest.mark.xdist_group("together")
            def test_grouped(i):
                time.sleep(0.05)
                with open("workers.txt", "a") as ran:
                    ran.write(os.environ["PYTEST_XDIST_WORKER"] + "\n")

            @pytest.mark.parametrize("i", range(6))
            def test_free(i):
                time.sleep(0.05)
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ran = (tmp_path / "workers.txt").read_text().split()
    assert len(ran) == 6 and len(set(ran)) == 1, ran
