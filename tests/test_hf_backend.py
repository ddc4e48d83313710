"""The transformers + peft backend on a tiny random Qwen3 with eight random adapters (CPU, offline)."""

import asyncio

import pytest
import torch

from bargain.agents.arms import ADAPTERS, BASE
from bargain.agents.backends import BackendError, Request, Sampling
from bargain.agents.backends.hf import BASE_ADAPTER, presence_penalty_processor

GREEDY = Sampling(temperature=0.0, max_tokens=12, presence_penalty=0.0)
CHAT = ({"role": "user", "content": "You are the BUYER in a bargaining negotiation.\nRound 1, rounds left 3"},)


def request(model, sampling=GREEDY, content=None):
    messages = CHAT if content is None else ({"role": "user", "content": content},)
    return Request(messages, model, sampling)


def test_prompt_uses_the_chat_template_with_thinking_off(tiny_backend):
    text = tiny_backend.prompt_text(request(BASE_ADAPTER))
    assert text == (
        "<|im_start|>user\n" + CHAT[0]["content"] + "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    )


def test_every_arm_generates_and_adapters_change_the_output(tiny_backend):
    arms = [BASE, *ADAPTERS.values()]
    outputs = {}
    for arm in arms:
        completion = asyncio.run(tiny_backend.complete(request(tiny_backend.model_name(arm))))
        assert completion.prompt_tokens > 10 and 1 <= completion.completion_tokens <= GREEDY.max_tokens
        assert completion.latency_s > 0 and completion.model == tiny_backend.model_name(arm)
        outputs[arm.name] = completion.text
    base = outputs.pop("base")
    assert sum(text != base for text in outputs.values()) >= 7  # random LoRA weights really change the model


def test_a_mixed_adapter_batch_equals_one_call_per_adapter(tiny_backend):
    models = [BASE_ADAPTER, "buyer-grpo", "joint-cispo", BASE_ADAPTER, "seller-grpo"]
    contents = ["Offer 2.5?", "Hello buyer, what do you say to 2.10", "Round 2", "Your turn", "Final offer 3"]
    mixed = tiny_backend.generate_batch([request(m, content=c) for m, c in zip(models, contents)], GREEDY)
    alone = [tiny_backend.generate_batch([request(m, content=c)], GREEDY)[0] for m, c in zip(models, contents)]
    assert [c.text for c in mixed] == [c.text for c in alone]
    assert [c.completion_tokens for c in mixed] == [c.completion_tokens for c in alone]


def test_adapters_are_loaded_once_onto_one_base_model(tiny_backend, tiny_model):
    from transformers import AutoModelForCausalLM

    model = tiny_backend.model
    assert set(model.peft_config) == set(ADAPTERS)
    base_parameters = sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(str(tiny_model)).parameters())
    shared = sum(p.numel() for n, p in model.named_parameters() if "lora_" not in n)
    assert shared == base_parameters  # the base weights exist once, not once per arm
    lora = sum(p.numel() for n, p in model.named_parameters() if "lora_" in n)
    per_rank = lora / sum(a.lora_rank for a in ADAPTERS.values())
    assert per_rank == int(per_rank)  # LoRA weights scale with the ranks: one copy per adapter


def test_concurrent_requests_share_generate_calls(tiny_backend, monkeypatch):
    calls = []
    original = tiny_backend._generate  # each batch's call (on ZeroGPU, with the GPU attached)

    def counting(requests, sampling):
        calls.append(len(requests))
        return original(requests, sampling)

    monkeypatch.setattr(tiny_backend, "_generate", counting)
    models = [BASE_ADAPTER, *ADAPTERS] * 2

    async def many():
        return await asyncio.gather(*(tiny_backend.complete(request(m)) for m in models))

    completions = asyncio.run(many())
    assert len(completions) == len(models) and sum(calls) == len(models)
    assert len(calls) < len(models) and max(calls) > 1


def test_requests_with_different_sampling_are_batched_apart(tiny_backend, monkeypatch):
    seen = []
    original = tiny_backend._generate
    monkeypatch.setattr(tiny_backend, "_generate", lambda r, s: seen.append(s) or original(r, s))
    other = Sampling(temperature=0.1, top_p=0.5, max_tokens=8)

    async def two():
        return await asyncio.gather(
            tiny_backend.complete(request("buyer-grpo")), tiny_backend.complete(request(BASE_ADAPTER, other))
        )

    asyncio.run(two())
    assert set(seen) == {GREEDY, other}


def test_greedy_is_deterministic_and_max_tokens_is_a_cap(tiny_backend):
    short = Sampling(temperature=0.0, max_tokens=3, presence_penalty=0.0)
    first = tiny_backend.generate_batch([request("joint-grpo", short)], short)[0]
    again = tiny_backend.generate_batch([request("joint-grpo", short)], short)[0]
    assert first.text == again.text and first.completion_tokens <= 3
    assert first.finish_reason in ("length", "stop")


def test_sampling_runs_with_the_trained_preset(tiny_backend):
    trained = Sampling(max_tokens=8)  # T 0.7, top_p 0.8, top_k 20, presence penalty 1.5
    torch.manual_seed(0)
    completions = tiny_backend.generate_batch([request("buyer-grpo", trained), request(BASE_ADAPTER, trained)], trained)
    assert all(1 <= c.completion_tokens <= 8 for c in completions)


def test_presence_penalty_hits_generated_tokens_only():
    processor = presence_penalty_processor(1.5, prompt_length=3)
    scores = torch.zeros(2, 10)
    ids = torch.tensor([[1, 2, 3, 4, 4], [5, 6, 7, 8, 9]])  # prompts of length 3, then 2 generated tokens
    out = processor(ids, scores)
    assert out[0].tolist() == [0, 0, 0, 0, -1.5, 0, 0, 0, 0, 0]  # 4 once, however often it appeared
    assert out[1].tolist() == [0, 0, 0, 0, 0, 0, 0, 0, -1.5, -1.5]
    assert processor(ids[:, :3], scores).equal(scores)  # nothing generated yet


def test_unknown_adapter_is_a_clear_error(tiny_backend):
    with pytest.raises(BackendError, match="not loaded"):
        asyncio.run(tiny_backend.complete(request("nobody")))


def test_describe_and_availability(tiny_backend):
    info = tiny_backend.describe()
    assert info["backend"] == "hf" and info["device"] == "cpu" and info["dtype"] == "float32"
    assert info["adapters"] == sorted(ADAPTERS)
    assert asyncio.run(tiny_backend.available(BASE)) and asyncio.run(tiny_backend.available(ADAPTERS["joint-grpo"]))


def test_a_missing_model_is_a_clear_error(tmp_path):
    from bargain.agents.backends.hf import HFBackend

    with pytest.raises(BackendError, match="--model"):
        HFBackend(str(tmp_path / "nothing-here"))
