"""The arena on a Hugging Face Space: ZeroGPU (simulated: a stand-in `spaces` package whose GPU decorator attaches a
pretend GPU), the memory a dedicated card needs, and `python -m bargain space-check`."""

from __future__ import annotations

import asyncio
import sys
import types

import pytest

from bargain.agents.arms import ADAPTERS
from bargain.agents.backends import BackendError, Request, Sampling, hardware
from bargain.agents.tiny import qwen3_8b_config

GREEDY = Sampling(temperature=0.0, max_tokens=6)
GiB = 2**30


class PretendGPU:
    """What `spaces.GPU` does on ZeroGPU, as far as the arena can tell: a GPU exists only inside the function."""

    def __init__(self):
        self.attached, self.durations, self.calls, self.asked = False, [], 0, []

    def module(self) -> types.ModuleType:
        spaces = types.ModuleType("spaces")

        def GPU(duration):  # seconds, or a function of the call's arguments (ZeroGPU's dynamic duration)
            self.durations.append(duration)

            def decorate(function):
                def run(*args, **kwargs):
                    self.asked.append(duration(*args, **kwargs) if callable(duration) else duration)
                    self.attached, self.calls = True, self.calls + 1
                    try:
                        return function(*args, **kwargs)
                    finally:
                        self.attached = False

                return run

            return decorate

        spaces.GPU = GPU
        return spaces


@pytest.fixture
def zero_gpu(monkeypatch):
    gpu = PretendGPU()
    monkeypatch.setitem(sys.modules, "spaces", gpu.module())
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    return gpu


def test_on_zero_gpu_every_generation_runs_with_the_gpu_attached_and_games_still_batch(
    zero_gpu, tiny_model, tiny_adapters
):
    from bargain.agents.backends.hf import BASE_ADAPTER, HFBackend

    backend = HFBackend(str(tiny_model), {n: tiny_adapters / n for n in ADAPTERS}, device="cpu")
    assert zero_gpu.durations == [hardware.batch_seconds]  # one decorated function, registered at start-up
    generated = []
    original = backend.model.generate

    def generate(**kwargs):
        generated.append((zero_gpu.attached, len(kwargs["input_ids"])))
        return original(**kwargs)

    backend.model.generate = generate
    models = [BASE_ADAPTER, *ADAPTERS] * 2

    async def games():
        chat = ({"role": "user", "content": "You are the BUYER. Your offer?"},)
        return await asyncio.gather(*(backend.complete(Request(chat, m, GREEDY)) for m in models))

    completions = asyncio.run(games())
    assert len(completions) == len(models) and all(c.completion_tokens >= 1 for c in completions)
    assert generated and all(attached for attached, _ in generated)  # never without the GPU
    assert sum(rows for _, rows in generated) == len(models) and len(generated) < len(models)  # shared forward passes
    assert zero_gpu.calls == len(generated)
    # Each batch asked for what its 6-token cap needs, not a fixed two minutes of the visitor's quota.
    assert zero_gpu.asked and all(hardware.PREFILL_S < asked <= 10 for asked in zero_gpu.asked)


def test_a_batch_asks_zero_gpu_for_what_its_reply_cap_needs():
    def asked(games: int, tokens: int) -> int:
        return hardware.batch_seconds([object()] * games, Sampling(max_tokens=tokens))

    assert (asked(1, 256), asked(1, 1024), asked(32, 1024)) == (22, 61, 111)
    assert asked(64, 1024) == hardware.GPU_SECONDS  # never more than the longest a slice is held
    assert asked(1, 256) < asked(8, 256) < asked(32, 256) <= hardware.GPU_SECONDS


def test_off_zero_gpu_the_decorator_changes_nothing(monkeypatch, tiny_model):
    from bargain.agents.backends.hf import HFBackend

    gpu = PretendGPU()
    monkeypatch.setitem(sys.modules, "spaces", gpu.module())
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    backend = HFBackend(str(tiny_model), device="cpu")
    assert gpu.durations == [] and backend._generate == backend.generate_batch


def test_zero_gpu_without_the_spaces_package_says_what_to_add(monkeypatch):
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    monkeypatch.setitem(sys.modules, "spaces", None)  # not installed
    with pytest.raises(BackendError, match="add `spaces` to the Space's requirements"):
        hardware.prepare_zero_gpu()


@pytest.mark.parametrize(
    "card, free_gib, games", [("L4", 22.0, 5), ("A10G", 22.0, 5), ("L40S", 44.5, 41), ("A100 80GB", 79.0, 64)]
)
def test_qwen3_8b_on_a_dedicated_card_gets_the_batch_its_memory_holds(card, free_gib, games):
    memory = hardware.plan(qwen3_8b_config(), weights_bytes=int(16.8 * GiB), dtype_bytes=2)
    assert memory.per_game_bytes == 2 * 36 * 8 * 128 * 2 * hardware.TOKENS_PER_GAME  # 0.56 GiB: K and V, 36 layers
    assert hardware.fit_batch(memory, int(free_gib * GiB), 64, card) == games


def test_a_card_too_small_for_the_model_is_refused_with_the_way_out():
    memory = hardware.plan(qwen3_8b_config(), weights_bytes=int(16.8 * GiB), dtype_bytes=2)
    with pytest.raises(BackendError, match=r"T4.*14\.6 GiB free.*16\.8 GiB.*BARGAIN_BACKEND=vllm"):
        hardware.fit_batch(memory, int(14.6 * GiB), 64, "T4")


# --- space-check --------------------------------------------------------------------------------------


def findings(tmp_path, environ: dict, data_dir: bool = False, hardware: str | None = None) -> dict[str, list[tuple]]:
    from pathlib import Path

    from bargain.space import check

    readme = Path(__file__).resolve().parents[1] / "README.md"
    found: dict[str, list[tuple]] = {}
    for line in check(readme, environ, data_dir, hardware):
        found.setdefault(line.topic, []).append((line.status, line.text))
    return found


def test_space_check_of_a_zero_gpu_space_with_storage_and_secrets(tmp_path):
    found = findings(
        tmp_path,
        {"BARGAIN_BACKEND": "hf", "SPACES_ZERO_GPU": "true", "BARGAIN_ADMIN_PASSWORD": "s"},
        data_dir=True,
        hardware="zero-a10g",
    )
    assert found["hardware"][0][0] == "ok" and "ZeroGPU" in found["hardware"][0][1]
    assert "AnvaMiba/qwen3-8b-bargaining-lora" in found["adapters"][0][1]
    assert found["storage"] == [("ok", "games in /data/bargain.db, on the Space's persistent storage")]
    assert all(status == "ok" for status, _ in found["secrets"])
    assert not any(status == "missing" for lines in found.values() for status, _ in lines)


def test_space_check_of_a_dedicated_gpu_without_storage(tmp_path):
    found = findings(tmp_path, {"BARGAIN_BACKEND": "hf"}, hardware="l4x1")
    assert found["hardware"] == [
        (
            "ok",
            "dedicated GPU l4x1 (24 GB): Qwen3-8B in bf16, about 5 games generated together "
            "(more wait for the next batch)",
        )
    ]
    assert found["storage"][0][0] == "warning" and "lost when it restarts" in found["storage"][0][1]
    assert {status for status, _ in found["secrets"]} == {"warning"}  # no admin password, no lasting browser key
    small = findings(tmp_path, {"BARGAIN_BACKEND": "hf"}, hardware="t4-small")
    assert small["hardware"][0][0] == "missing"


def test_space_check_of_a_remote_vllm_server(tmp_path):
    environ = {
        "BARGAIN_BACKEND": "vllm",
        "BARGAIN_BASE_URL": "https://gpu.example.org/v1",
        "BARGAIN_DB_URL": "postgresql+psycopg://study:hunter2@db.example.org/bargain",
        "BARGAIN_ADMIN_PASSWORD": "s",
        "BARGAIN_SYNC_TO_HUB": "lab/arena-data",
    }
    found = findings(tmp_path, environ, hardware="cpu-basic")
    assert found["hardware"][0][0] == "ok" and "remote vLLM at https://gpu.example.org/v1" in found["hardware"][0][1]
    assert ("note", "no BARGAIN_API_KEY: the server must accept requests without a key") in found["secrets"]
    assert "hunter2" not in str(found["storage"]) and found["storage"][0][0] == "ok"
    assert ("missing", "BARGAIN_SYNC_TO_HUB needs HF_TOKEN (a token that can write to lab/arena-data)") in found[
        "secrets"
    ]
    assert findings(tmp_path, {"BARGAIN_BACKEND": "vllm"})["hardware"][0][0] == "missing"
    model = found["model"][0][1]  # the server has the weights: the Space downloads nothing
    assert "remote server" in model and "downloaded" not in model.replace("nothing is downloaded", "")
    assert "downloaded from the Hub" in findings(tmp_path, {"BARGAIN_BACKEND": "hf"})["model"][0][1]


def test_space_check_command_exits_1_when_something_is_missing(monkeypatch, capsys):
    from bargain.cli import main

    monkeypatch.setenv("BARGAIN_BACKEND", "vllm")
    monkeypatch.delenv("BARGAIN_BASE_URL", raising=False)
    assert main(["space-check", "--hardware", "cpu-basic"]) == 1
    shown = capsys.readouterr().out
    assert "missing  hardware  BARGAIN_BACKEND=vllm needs BARGAIN_BASE_URL" in shown and shown.rstrip().endswith(
        "1 missing"
    )


def test_the_admin_is_warned_on_a_space_whose_games_would_be_lost(tmp_path, monkeypatch):
    from bargain import app as arena_app
    from bargain.space import NO_STORAGE, storage_warning

    assert storage_warning("sqlite:////data/bargain.db", {"SPACE_ID": "lab/arena"}) == ""
    assert storage_warning("sqlite:///data/bargain.db", {}) == ""  # not a Space
    monkeypatch.setenv("SPACE_ID", "lab/arena")
    demo, _ = arena_app.build(arena_app.parse_args(["--db", str(tmp_path / "a.db")]))
    shown = [c.get("props", {}).get("value") for c in demo.config["components"]]
    assert "**" + NO_STORAGE.replace("_", "\\_") + "**" in shown
    demo.close()


def test_a_remote_vllm_server_gets_the_api_key_secret(monkeypatch):
    from bargain.agents.arms import BASE_MODEL
    from bargain.agents.backends.build import build_backend
    from bargain.agents.stub_server import StubServer

    monkeypatch.setenv("BARGAIN_API_KEY", "s3cret-key")
    with StubServer([BASE_MODEL, *ADAPTERS]) as server:
        backend = build_backend("vllm", base_url=server.url)

        async def ask():
            try:
                return await backend.complete(
                    Request(({"role": "user", "content": "You are the BUYER."},), "buyer-grpo", GREEDY)
                )
            finally:
                await backend.aclose()

        asyncio.run(ask())
    assert server.authorizations == ["Bearer s3cret-key"]
