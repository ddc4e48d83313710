"""The GPU check's bundle and its rehearsal (benchmarks/gpu_bundle.py): the wheels a Python 3.12 GPU machine without
the app's packages needs, gathered from the package index, and the check's dry run in an environment of exactly
that machine's packages plus the bundle. Both need the package index; the rehearsal a Python 3.12 here."""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import pytest

from benchmarks import gpu_bundle, gpu_check


def test_a_folder_git_does_not_ignore_is_refused_before_anything_is_fetched(capsys):
    assert gpu_check.main(["bundle", "--out", "benchmarks/wheels"]) == 2
    error = capsys.readouterr().err
    assert "must be a folder of the repository that git ignores" in error and "--out .gpu_bundle" in error
    assert not (gpu_bundle.ROOT / "benchmarks" / "wheels").exists()


def test_a_wheels_own_dependencies_are_read_for_linux_under_python_312(tmp_path):
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(
            "demo-1.0.dist-info/METADATA",
            "\n".join(
                [
                    "Name: demo",
                    "Requires-Dist: attrs>=17",
                    'Requires-Dist: greenlet>=1; extra == "asyncio"',
                    'Requires-Dist: colorama; sys_platform == "win32"',
                    'Requires-Dist: tomli; python_version < "3.11"',
                    'Requires-Dist: typing-extensions>=4.6; python_version >= "3.12"',
                ]
            ),
        )
    assert gpu_bundle.requirements_of(wheel) == ["attrs>=17", "typing-extensions>=4.6"]


@pytest.mark.slow
def test_the_bundle_carries_each_missing_package_once_within_the_budget(capsys):
    folder = gpu_bundle.ROOT / ".gpu_bundle"
    try:
        assert gpu_check.main(["bundle", "--out", str(folder)]) == 0
        shown = capsys.readouterr().out
        names = sorted(gpu_bundle.canonical(w.name.split("-")[0]) for w in folder.glob("*.whl"))
        assert names == ["alembic", "mako", "price-parser", "sqlalchemy", "text2num"]  # attrs, typing-extensions,
        # markupsafe: the machine's own
        assert all("cp312" in w.name or "py3-none-any" in w.name for w in folder.glob("*.whl"))
        assert (
            "of 40 MiB" in shown and "--no-index --no-deps" in shown and "--target /tmp/site .gpu_bundle/*.whl" in shown
        )
        assert "benchmarks/gpu_check.py" in shown.splitlines()[-1]
        assert (
            gpu_check.main(["bundle", "--out", str(folder), "--budget-mib", "5"]) == 2
        )  # the repository alone is more: refused before any download
        assert "the repository alone" in (err := capsys.readouterr().err) and "over the 5 MiB budget" in err
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("BARGAIN_REHEARSE"),
    reason="5 GB and three minutes: BARGAIN_REHEARSE=1 runs it, before a GPU session (test_gpu_check.py asks its "
    "package question of every run in seconds)",
)
@pytest.mark.skipif(
    not (shutil.which("python3.12") or list(Path.home().glob(".pyenv/versions/3.12*/bin/python"))),
    reason="no Python 3.12 here to rehearse with",
)
def test_the_rehearsal_runs_the_dry_run_on_the_gpu_machines_packages_and_the_bundle(capsys):
    """About 5 GB (torch's CUDA build, from pip's cache) and three minutes: a package the check needs and the GPU
    machine lacks, or a version of one that breaks it, is found here, not there. Not in the default run: whether
    the project's code imports only that machine's packages is asked of every run, in seconds, by
    test_gpu_check.py::test_run_as_a_script_the_rehearsals_parts_pass_importing_only_the_gpu_machines_packages."""
    assert gpu_check.main(["rehearse"]) == 0
    shown = capsys.readouterr().out
    assert "--dry-run --parts hf,arena,train,pytest" in shown and "the dry run passed" in shown
