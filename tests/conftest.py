"""Shared test set-up: no network, the bundled scenarios, a scratch directory per test."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import pytest

from bargain import scenarios


@pytest.fixture(scope="session")
def scenario_set():
    """The bundled dataset (loaded once per session)."""
    return scenarios.bundled()
