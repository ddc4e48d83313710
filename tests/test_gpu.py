"""GPU-only tests (`python -m pytest -m gpu`, run by `python -m benchmarks.gpu_check`): the hf backend in bf16 on
CUDA, and vLLM serving a small random model and its eight adapters through `bargain serve`, runtime adapter
loading included. Skipped without a CUDA GPU, and the server tests without vLLM."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from pathlib import Path

import pytest
import torch

from bargain.agents.arms import ADAPTERS, BASE
from bargain.agents.backends import Request, Sampling
from bargain.agents.serve import vllm_missing

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

GREEDY = Sampling(temperature=0.0, max_tokens=24)
CHAT = ({"role": "user", "content": "You are the BUYER. The seller asks 2.40 for the lamp. Your offer?"},)


def complete_all(backend, models: list[str]) -> list:
    async def every():
        return await asyncio.gather(*(backend.complete(Request(CHAT, m, GREEDY)) for m in models))

    return asyncio.run(every())


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_the_hf_backend_batches_mixed_adapters_on_the_gpu(tiny_model, tiny_adapters, dtype):
    from bargain.agents.backends.hf import BASE_ADAPTER, HFBackend

    backend = HFBackend(str(tiny_model), {n: tiny_adapters / n for n in ADAPTERS}, device="cuda", dtype=dtype)
    assert backend.device.startswith("cuda") and backend.describe()["dtype"] == dtype
    names = [backend.model_name(BASE), *ADAPTERS]
    texts = [c.text for c in complete_all(backend, names)]
    assert all(texts) and sum(text != texts[0] for text in texts[1:]) >= 7  # each adapter changes the output
    if dtype == "float32":  # exact arithmetic: one mixed batch gives what one call per adapter gives
        models = [BASE_ADAPTER, "buyer-grpo", "joint-cispo", "seller-grpo"]
        mixed = backend.generate_batch([Request(CHAT, m, GREEDY) for m in models], GREEDY)
        alone = [backend.generate_batch([Request(CHAT, m, GREEDY)], GREEDY)[0] for m in models]
        assert [c.text for c in mixed] == [c.text for c in alone]


vllm_only = pytest.mark.skipif(vllm_missing() is not None, reason="needs vLLM (pip install -r requirements-gpu.txt)")


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, Path]:
    """A random two-layer model with attention heads vLLM's kernels take, and the eight adapters on it (or, under
    `benchmarks.gpu_check`, the model and adapters its server already serves)."""
    from bargain.agents import tiny

    if os.environ.get("BARGAIN_GPU_SERVER"):
        return Path(os.environ["BARGAIN_GPU_MODEL"]), Path(os.environ["BARGAIN_GPU_ADAPTERS"])
    root = tmp_path_factory.mktemp("small")
    model = tiny.build_model(root / "model", shape="small")
    return model, tiny.build_adapters(model, root / "adapters")


@pytest.fixture(scope="module")
def server(small, tmp_path_factory):
    """`python -m bargain serve` of the small model and its adapters, runtime adapter loading on; its URL. Under
    `benchmarks.gpu_check`, the server it runs (BARGAIN_GPU_SERVER): one vLLM server on the GPU, not two."""
    from bargain.agents.serve import serving

    if os.environ.get("BARGAIN_GPU_SERVER"):
        yield os.environ["BARGAIN_GPU_SERVER"]
        return
    with serving(*small, tmp_path_factory.mktemp("vllm") / "serve.log", 0.25, 600) as url:
        yield url


@vllm_only
def test_bargain_serve_offers_the_base_model_and_every_adapter(server, small):
    with urllib.request.urlopen(f"{server}/models", timeout=10) as response:
        names = {m["id"] for m in json.load(response)["data"]}
    assert {str(small[0]), *ADAPTERS} <= names


@vllm_only
def test_the_served_adapters_change_what_vllm_generates(server, small):
    from bargain.agents.backends.build import build_backend

    backend = build_backend("vllm", base_url=server, model=str(small[0]))
    completions = complete_all(backend, [backend.model_name(BASE), *ADAPTERS])
    texts = [c.text for c in completions]
    assert all(c.completion_tokens >= 1 and c.endpoint == server for c in completions)
    assert sum(text != texts[0] for text in texts[1:]) >= 7


@vllm_only
def test_evaluate_plays_every_game_through_vllm(server, small, tmp_path):
    from bargain.cli import main
    from bargain.runs.gamelog import read_games

    out = tmp_path / "run"
    assert (
        main(
            [
                "evaluate",
                "--grid",
                "paper-rl-test",
                "--trials",
                "1",
                "--buyer",
                "arm:buyer-grpo",
                "--seller",
                "arm:base",
                "--buyer-sampling",
                "max_tokens=32",
                "--seller-sampling",
                "max_tokens=32",
                "--backend",
                "vllm",
                "--base-url",
                server,
                "--model",
                str(small[0]),
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    games = list(read_games(out / "games.jsonl"))
    assert len(games) == 32 and all(g.finished for g in games)
    assert {r["endpoint"] for g in games for r in g.records} == {server}


@vllm_only
def test_an_adapter_hot_loaded_in_place_replaces_the_served_one(server, small):
    """What the trainer does after every step: the name keeps serving, with the new weights."""
    from bargain.agents.backends.build import build_backend
    from train.trainer import replace_adapter

    model, adapters = small
    backend = build_backend("vllm", base_url=server, model=str(model))
    before, seller = (c.text for c in complete_all(backend, ["buyer-grpo", "seller-grpo"]))
    assert before != seller
    replace_adapter(server, "buyer-grpo", adapters / "seller-grpo")  # as the trainer does after every step
    backend = build_backend("vllm", base_url=server, model=str(model))
    (after,) = (c.text for c in complete_all(backend, ["buyer-grpo"]))
    assert after == seller
