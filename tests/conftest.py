"""Shared test set-up: no network, the bundled scenarios, a scratch directory per test."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import pytest

from bargain.engine import scenarios


@pytest.fixture(scope="session")
def scenario_set():
    """The bundled dataset (loaded once per session)."""
    return scenarios.bundled()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A random two-layer Qwen3 with a tokenizer trained here (bargain.agents.tiny); nothing is downloaded."""
    from bargain.agents import tiny

    return tiny.build_model(tmp_path_factory.mktemp("tiny-qwen3"))


@pytest.fixture(scope="session")
def tiny_adapters(tiny_model, tmp_path_factory):
    """All eight arms as random LoRA adapters on the tiny model, laid out like the released repository."""
    from bargain.agents import tiny

    return tiny.build_adapters(tiny_model, tmp_path_factory.mktemp("tiny-adapters"))


@pytest.fixture(scope="session")
def tiny_backend(tiny_model, tiny_adapters):
    """The hf backend with the tiny base model and all eight adapters, loaded once."""
    from bargain.agents.adapters import adapter_paths
    from bargain.agents.arms import ADAPTERS
    from bargain.agents.backends.hf import HFBackend

    return HFBackend(str(tiny_model), adapter_paths(ADAPTERS, tiny_adapters), device="cpu")
