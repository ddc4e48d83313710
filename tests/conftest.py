"""Shared test set-up: no network, the bundled scenarios, a scratch directory per test, and under pytest-xdist a
PostgreSQL database per worker."""

import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def worker_database() -> None:
    """Under pytest-xdist (`-n`), BARGAIN_TEST_POSTGRES_URL names a database of this worker's own, the scratch
    database's name with the worker's id after it, made here when missing: the PostgreSQL tests empty their database
    first, and two workers on one would drop each other's tables mid-test. Set before the test modules read it."""
    url, worker = os.environ.get("BARGAIN_TEST_POSTGRES_URL"), os.environ.get("PYTEST_XDIST_WORKER")
    if not url or not worker:
        return
    from sqlalchemy import create_engine, make_url, text

    scratch = make_url(url)
    if scratch.database.endswith(f"_{worker}"):  # a pytest started by a test (the GPU check's) inherits it made
        return
    own = scratch.set(database=f"{scratch.database}_{worker}")
    engine = create_engine(scratch, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        if not connection.scalar(text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": own.database}):
            connection.execute(text(f'CREATE DATABASE "{own.database}"'))  # the role needs CREATEDB (.ci/run)
    engine.dispose()
    os.environ["BARGAIN_TEST_POSTGRES_URL"] = own.render_as_string(hide_password=False)


worker_database()
if os.environ.get("PYTEST_XDIST_WORKER"):
    # Torch's threads, one per worker (and per process a test starts): workers of two threads each on two cores
    # spin against each other, and a training test took ten times as long.
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402

from bargain.engine import scenarios  # noqa: E402


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup` (.ci/run), the tests that use a module's own module- or session-scoped fixture
    (an export, a run, a taught model: seconds each) run on one worker, which builds it once; spread over both
    workers, each would build it (tests/test_suite.py)."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        for name in info.names_closure if info else ():
            definitions = info.name2fixturedefs.get(name)
            if (
                definitions
                and definitions[-1].scope in ("module", "session")
                and definitions[-1].baseid.endswith(".py")
            ):
                item.add_marker(pytest.mark.xdist_group(Path(definitions[-1].baseid).stem))
                break


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """A pytest-xdist worker ends here, its results already sent to the run, without the interpreter's teardown: at
    the end of the whole suite, freeing what a worker loaded and left (torch, Gradio, a thousand tests' objects)
    took 6-8 s, while the run waited for it."""
    if hasattr(config, "workerinput"):
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(0)


@pytest.fixture(scope="session")
def scenario_set():
    """The bundled dataset (loaded once per session)."""
    return scenarios.bundled()


def built_once(
    config: pytest.Config, tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]
) -> Path:
    """The folder `name`, filled by `build(folder)` once in the whole run: under pytest-xdist the workers share it,
    the first to need it building it while a file lock holds the others (pytest-xdist's recipe for a session
    fixture each worker would otherwise make: the tiny model and its adapters took 7.5 s a worker)."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if hasattr(config, "workerinput"):  # an xdist worker (not a pytest that a test started, which inherits its env)
        root = root.parent  # the run's folder, which holds each worker's
    folder = root / name
    with FileLock(f"{folder}.lock"):
        if not (folder / ".built").exists():
            build(folder)
            (folder / ".built").touch()
    return folder


@pytest.fixture(scope="session")
def tiny_model(pytestconfig, tmp_path_factory):
    """A random two-layer Qwen3 with a tokenizer trained here (bargain.agents.tiny); nothing is downloaded."""
    from bargain.agents import tiny

    return built_once(pytestconfig, tmp_path_factory, "tiny-qwen3", tiny.build_model)


@pytest.fixture(scope="session")
def tiny_adapters(tiny_model, pytestconfig, tmp_path_factory):
    """All eight arms as random LoRA adapters on the tiny model, laid out like the released repository."""
    from bargain.agents import tiny

    return built_once(pytestconfig, tmp_path_factory, "tiny-adapters", partial(tiny.build_adapters, tiny_model))


@pytest.fixture(scope="session")
def tiny_backend(tiny_model, tiny_adapters):
    """The hf backend with the tiny base model and all eight adapters, loaded once."""
    from bargain.agents.adapters import adapter_paths
    from bargain.agents.arms import ADAPTERS
    from bargain.agents.backends.hf import HFBackend

    return HFBackend(str(tiny_model), adapter_paths(ADAPTERS, tiny_adapters), device="cpu")
