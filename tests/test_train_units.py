"""Unit tests of the trainer's parts (docs/TRAINING.md): advantages, losses, samples and their masks,
the direction of one optimiser step, the configs, and sharing samples out.

Everything runs on CPU on the tiny random Qwen3 (`tiny_model`); the numbers the losses must give
are worked out by hand here, never by calling the function under test.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import dataclasses
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from bargain.agents.arms import BASE
from bargain.agents.backends import Sampling
from bargain.agents.backends.canned import CannedBackend
from bargain.agents.factory import make_agent
from bargain.agents.llm import LLMAgent
from bargain.agents.logprobs import completion_logprobs
from bargain.engine import scenarios
from bargain.engine.game import new_initial_state
from bargain.engine.trial import Condition, Trial
from bargain.runs.episodes import Episode, play
from train import config as configuration
from train.advantages import group_advantages, rank_transform
from train.config import TrainConfig, batch_layout
from train.losses import k3_kl, policy_loss, token_mean
from train.samples import Sample, check_prefix, prompt_text, turn_samples
from train.trainer import fill_logprobs, load_model, optimise, pad_right_aligned, pool_of

CONFIGS = Path(__file__).resolve().parents[1] / "train" / "configs"
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
ROUNDS = 3


# ---------------------------------------------------------------------------------------------
# 1. Rank transform and advantages
# ---------------------------------------------------------------------------------------------


def test_rank_transform_gives_average_ranks_worst_first():
    assert list(rank_transform(np.array([0.3, -0.1, 0.3, 0.9]))) == [2.5, 1.0, 2.5, 4.0]


def test_rank_advantages_by_hand_with_ties():
    # ranks [2.5, 1, 2.5, 4]; mean 10/4 = 2.5; deviations [0, -1.5, 0, 1.5]
    # population variance (0 + 2.25 + 0 + 2.25) / 4 = 1.125
    std = math.sqrt(1.125)
    expected = [0.0, -1.5 / (std + 1e-8), 0.0, 1.5 / (std + 1e-8)]
    assert group_advantages([0.3, -0.1, 0.3, 0.9], "rank") == pytest.approx(expected, abs=1e-12)


def test_no_transform_uses_the_raw_rewards():
    # mean (0.3 - 0.1 + 0.3 + 0.9) / 4 = 0.35; deviations [-0.05, -0.45, -0.05, 0.55]
    # population variance (0.0025 + 0.2025 + 0.0025 + 0.3025) / 4 = 0.1275
    std = math.sqrt(0.1275)
    expected = [-0.05 / (std + 1e-8), -0.45 / (std + 1e-8), -0.05 / (std + 1e-8), 0.55 / (std + 1e-8)]
    assert group_advantages([0.3, -0.1, 0.3, 0.9], "none") == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("transform", ["rank", "none"])
@pytest.mark.parametrize("rewards", [[0.1] * 16, [0.0, 0.0, 0.0], [-0.37] * 5])
def test_an_all_tie_group_has_zero_advantage(rewards, transform):
    advantages = group_advantages(rewards, transform)
    assert len(advantages) == len(rewards)
    assert np.all(np.isfinite(advantages))
    assert advantages == pytest.approx([0.0] * len(rewards), abs=1e-6)


def test_an_unknown_transform_is_refused():
    with pytest.raises(ValueError, match="zscore"):
        group_advantages([0.0, 1.0], "zscore")


# ---------------------------------------------------------------------------------------------
# 2. GRPO and CISPO losses on hand-computed tensors (B = 2, T = 3; the first token of row 1 hidden)
# ---------------------------------------------------------------------------------------------

OLD = [[-1.0, -2.0, -0.5], [-3.0, -1.5, -0.7]]
MASK = torch.tensor([[1.0, 1.0, 1.0], [0.0, 1.0, 1.0]])  # row 0: 3 tokens, row 1: 2 tokens


def _logp(deltas):
    """logp = old + delta as a leaf needing gradients, so rho = exp(delta)."""
    return torch.tensor(
        [[o + d for o, d in zip(old_row, row)] for old_row, row in zip(OLD, deltas)],
        dtype=torch.float64,
        requires_grad=True,
    )


def _loss(kind, logp, advantages, ref=None, mask=MASK, kl_coef=0.0, **kwargs):
    old = torch.tensor(OLD, dtype=torch.float64)
    ref = logp.detach().clone() if ref is None else ref
    return policy_loss(
        kind, logp, old, ref, torch.tensor(advantages, dtype=torch.float64), mask.double(), kl_coef=kl_coef, **kwargs
    )


def test_grpo_without_clipping_is_the_ratio_times_the_advantage():
    e = math.exp
    logp = _logp([[0.1, -0.1, 0.05], [9.0, 0.15, -0.2]])  # row 1's first ratio (e^9) is masked out
    loss, parts = _loss("grpo", logp, [1.0, -2.0])
    row0 = -(e(0.1) * 1.0 + e(-0.1) * 1.0 + e(0.05) * 1.0) / 3
    row1 = -(e(0.15) * -2.0 + e(-0.2) * -2.0) / 2
    assert loss.item() == pytest.approx((row0 + row1) / 2, abs=1e-12)
    assert parts["clipped"] == 0.0
    loss.backward()
    # d/dlogp of -rho A / n_i / B is -rho A / n_i / B
    expected = [
        [-e(0.1) * 1.0 / 3 / 2, -e(-0.1) * 1.0 / 3 / 2, -e(0.05) * 1.0 / 3 / 2],
        [0.0, -e(0.15) * -2.0 / 2 / 2, -e(-0.2) * -2.0 / 2 / 2],
    ]
    assert logp.grad.tolist() == [pytest.approx(r, abs=1e-12) for r in expected]


def test_grpo_clipping_takes_the_pessimistic_branch_and_stops_its_gradient():
    ln = math.log
    # row 0, A = +1: ratios 1.5, 1.5 (clipped to 1.2), 1.0 (inside)
    # row 1, A = -1: [hidden], 0.5 (clipped to 0.8: min(-0.5, -0.8) = -0.8), 1.5 (min(-1.5, -1.2) = -1.5, unclipped)
    logp = _logp([[ln(1.5), ln(1.5), 0.0], [ln(3.0), ln(0.5), ln(1.5)]])
    loss, parts = _loss("grpo", logp, [1.0, -1.0], clip=0.2)
    row0 = -(1.2 * 1.0 + 1.2 * 1.0 + 1.0 * 1.0) / 3
    row1 = -(0.8 * -1.0 + 1.5 * -1.0) / 2
    assert loss.item() == pytest.approx((row0 + row1) / 2, abs=1e-12)
    # tokens with |rho - 1| > 0.2: row 0 two of three, row 1 two of two
    assert parts["clipped"] == pytest.approx((2 / 3 + 2 / 2) / 2)
    loss.backward()
    # clipped branch taken: zero gradient; otherwise -rho A / n_i / B
    expected = [[0.0, 0.0, -1.0 * 1.0 / 3 / 2], [0.0, 0.0, -1.5 * -1.0 / 2 / 2]]
    assert logp.grad.tolist() == [pytest.approx(r, abs=1e-12) for r in expected]


def test_cispo_caps_the_weight_and_detaches_it():
    ln = math.log
    # row 0, A = 2: ratios 7 (capped at 5), 1, 0.5; row 1, A = -1: [hidden], 3, 7 (capped at 5)
    logp = _logp([[ln(7.0), 0.0, ln(0.5)], [0.0, ln(3.0), ln(7.0)]])
    lp = logp.detach().tolist()
    loss, parts = _loss("cispo", logp, [2.0, -1.0], cap=5.0)
    row0 = -(5.0 * 2.0 * lp[0][0] + 1.0 * 2.0 * lp[0][1] + 0.5 * 2.0 * lp[0][2]) / 3
    row1 = -(3.0 * -1.0 * lp[1][1] + 5.0 * -1.0 * lp[1][2]) / 2
    assert loss.item() == pytest.approx((row0 + row1) / 2, abs=1e-12)
    loss.backward()
    # the weight is a constant: d/dlogp = -min(rho, cap) A / n_i / B
    expected = [
        [-5.0 * 2.0 / 3 / 2, -1.0 * 2.0 / 3 / 2, -0.5 * 2.0 / 3 / 2],
        [0.0, -3.0 * -1.0 / 2 / 2, -5.0 * -1.0 / 2 / 2],
    ]
    assert logp.grad.tolist() == [pytest.approx(r, abs=1e-12) for r in expected]


def test_k3_kl_by_hand():
    e = math.exp
    logp = torch.tensor([[-1.0, -2.0, -0.5]], dtype=torch.float64)
    ref = torch.tensor([[-0.8, -2.3, -0.5]], dtype=torch.float64)  # ref - logp = 0.2, -0.3, 0
    expected = [e(0.2) - 0.2 - 1, e(-0.3) + 0.3 - 1, 0.0]
    assert k3_kl(logp, ref).tolist() == [pytest.approx(expected, abs=1e-12)]
    assert all(v >= 0 for v in k3_kl(logp, ref)[0].tolist())


@pytest.mark.parametrize("kind", ["grpo", "cispo"])
def test_the_kl_term_adds_kl_coef_times_the_per_sample_mean_k3(kind):
    e = math.exp
    deltas = [[0.1, -0.1, 0.05], [0.0, 0.15, -0.2]]
    ref_minus_logp = [[0.2, -0.3, 0.0], [5.0, 0.1, -0.1]]  # row 1's first token is masked out
    logp = _logp(deltas)
    ref = logp.detach() + torch.tensor(ref_minus_logp, dtype=torch.float64)
    without, _ = _loss(kind, logp, [1.0, -2.0], ref=ref, kl_coef=0.0)
    with_kl, parts = _loss(kind, logp, [1.0, -2.0], ref=ref, kl_coef=0.1)
    k = [[e(d) - d - 1 for d in row] for row in ref_minus_logp]
    kl = ((k[0][0] + k[0][1] + k[0][2]) / 3 + (k[1][1] + k[1][2]) / 2) / 2
    assert parts["kl"] == pytest.approx(kl, abs=1e-12)
    assert (with_kl - without).item() == pytest.approx(0.1 * kl, abs=1e-12)
    # its gradient: kl_coef (1 - exp(ref - logp)) / n_i / B
    (with_kl - without).backward()
    expected = [
        [0.1 * (1 - e(d)) / 3 / 2 for d in ref_minus_logp[0]],
        [0.0] + [0.1 * (1 - e(d)) / 2 / 2 for d in ref_minus_logp[1][1:]],
    ]
    assert logp.grad.tolist() == [pytest.approx(r, abs=1e-12) for r in expected]


def test_token_means_per_sample_then_the_batch_mean():
    # ratio 1 everywhere; sample 0 has 1 token (A = 1), sample 1 has 2 tokens (A = 3)
    mask = torch.tensor([[0.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    logp = _logp([[0.0] * 3, [0.0] * 3])
    grpo, _ = _loss("grpo", logp, [1.0, 3.0], mask=mask)
    # per sample: -1 and -3; their mean is -2 (a mean over all 3 tokens would give -7/3)
    assert grpo.item() == pytest.approx((-1.0 + -3.0) / 2, abs=1e-12)
    logp = torch.full((2, 3), -1.0, dtype=torch.float64, requires_grad=True)
    old = logp.detach().clone()
    cispo, _ = policy_loss(
        "cispo", logp, old, old, torch.tensor([1.0, 3.0], dtype=torch.float64), mask.double(), kl_coef=0.0
    )
    # token loss -1 * A * (-1) = A: per sample 1 and 3, mean 2
    assert cispo.item() == pytest.approx((1.0 + 3.0) / 2, abs=1e-12)


def test_token_mean_of_an_all_zero_mask_row_is_zero_not_nan():
    values = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    assert token_mean(values, mask).tolist() == [1.5, 0.0]
    logp = _logp([[0.1, -0.1, 0.05], [0.3, 0.3, 0.3]])
    loss, parts = _loss("grpo", logp, [1.0, 1.0], mask=mask, kl_coef=0.001)
    e = math.exp
    assert loss.item() == pytest.approx((-(e(0.1) + e(-0.1)) / 2 + 0.0) / 2, abs=1e-12)
    assert all(math.isfinite(v) for v in parts.values())
    loss.backward()
    assert torch.isfinite(logp.grad).all() and logp.grad[1].abs().sum() == 0


def test_an_unknown_loss_is_refused():
    logp = _logp([[0.0] * 3, [0.0] * 3])
    with pytest.raises(ValueError, match="ppo"):
        _loss("ppo", logp, [1.0, -1.0])


# ---------------------------------------------------------------------------------------------
# 3. Samples from a real multi-turn episode, their masks and their log-probs
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer(tiny_model):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_model))


@pytest.fixture(scope="module")
def model(tiny_model):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(tiny_model)).eval()


def _trial() -> Trial:
    scenario = scenarios.bundled().get("low:0")  # v_B in (2.1, 3.0), v_S in (1.2, 2.1)
    return Trial(1, scenario, Condition.SELLER_UNAWARE, 2.5, 1.5, max_rounds=ROUNDS)


def _episode(seller) -> Episode:
    """A simultaneous game played to its last round by a canned LLM buyer (it never bids above 0.5)."""
    buyer = LLMAgent(BASE, CannedBackend(), Sampling())
    state = new_initial_state(_trial())
    asyncio.run(play(state, buyer, seller))
    records = [r for agent in (buyer, seller) for r in getattr(agent, "records", ())]
    return Episode(state.trial, state, "arm:base", "seller", None, records)


@pytest.fixture(scope="module")
def episode() -> Episode:
    """Both sides LLM agents on the canned backend: three buyer and three seller turns."""
    return _episode(LLMAgent(BASE, CannedBackend(), Sampling()))


def _ids(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def test_the_episode_is_multi_turn(episode):
    assert episode.finished and episode.state.outcome().rounds == ROUNDS
    buyer = [r for r in episode.records if r["role"] == "buyer"]
    assert [r["round"] for r in buyer] == [1, 2, 3]
    # the third turn's chat carries the two earlier replies
    assert [m["role"] for m in buyer[2]["messages"]] == ["user", "assistant", "user", "assistant", "user"]


def test_one_sample_per_buyer_turn_with_the_sampling_prompt_and_reply_plus_eos(episode, tokenizer):
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert tokenizer.eos_token_id == eos
    records = [r for r in episode.records if r["role"] == "buyer"]
    samples = turn_samples(episode, "buyer", 0.75, tokenizer, 2048, 1024)
    assert len(samples) == len(records) == ROUNDS
    for sample, record in zip(samples, records):
        text = tokenizer.apply_chat_template(
            record["messages"], tokenize=False, add_generation_prompt=True, enable_thinking=False
        )
        assert text.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")  # thinking off, generation prompt on
        assert sample.prompt_ids == _ids(tokenizer, text)
        assert sample.completion_ids == _ids(tokenizer, record["raw"]) + [eos]
        assert sample.advantage == 0.75 and sample.weight == 1.0
        assert sample.old_logp is None and sample.ref_logp is None
    # later turns have longer prompts (the chat grows)
    assert len(samples[0].prompt_ids) < len(samples[1].prompt_ids) < len(samples[2].prompt_ids)


def test_the_seller_samples_are_the_seller_turns_only(episode, tokenizer):
    records = [r for r in episode.records if r["role"] == "seller"]
    samples = turn_samples(episode, "seller", -1.0, tokenizer, 2048, 1024)
    assert len(samples) == ROUNDS
    assert [s.completion_ids[:-1] for s in samples] == [_ids(tokenizer, r["raw"]) for r in records]
    buyer = turn_samples(episode, "buyer", 1.0, tokenizer, 2048, 1024)
    assert all(s.prompt_ids != b.prompt_ids for s in samples for b in buyer)


def test_no_samples_for_an_untrained_tactic_opponent(tokenizer):
    episode = _episode(make_agent("tactic:hardliner", 0))
    assert all(r["role"] == "buyer" for r in episode.records)
    assert len(turn_samples(episode, "buyer", 1.0, tokenizer, 2048, 1024)) == episode.state.outcome().rounds
    assert turn_samples(episode, "seller", 1.0, tokenizer, 2048, 1024) == []


def _cut(episode: Episode) -> Episode:
    """The same episode with every reply recorded as cut at the token limit."""
    return dataclasses.replace(episode, records=[{**r, "finish_reason": "length"} for r in episode.records])


def test_a_reply_cut_at_the_limit_has_no_eos(episode, tokenizer):
    records = [r for r in episode.records if r["role"] == "buyer"]
    cut = turn_samples(_cut(episode), "buyer", 1.0, tokenizer, 2048, 1024)
    assert [s.completion_ids for s in cut] == [_ids(tokenizer, r["raw"]) for r in records]
    assert all(tokenizer.eos_token_id not in s.completion_ids for s in cut)
    # a reply longer than max_completion keeps its first tokens, without eos
    short = turn_samples(episode, "buyer", 1.0, tokenizer, 2048, 5)
    assert [s.completion_ids for s in short] == [_ids(tokenizer, r["raw"])[:5] for r in records]


def test_long_samples_lose_the_oldest_tokens_of_the_whole_sequence(episode, tokenizer):
    """The reference cuts prompt + completion to its limit from the front: the completion stays whole."""
    full = turn_samples(episode, "buyer", 1.0, tokenizer, 10_000, 1024)
    limit = max(len(f.completion_ids) for f in full) + 8  # above every completion, as the config requires
    kept = turn_samples(episode, "buyer", 1.0, tokenizer, limit, 1024)
    assert all(len(f.prompt_ids) + len(f.completion_ids) > limit for f in full)
    assert all(len(k.prompt_ids) + len(k.completion_ids) == limit for k in kept)
    assert [k.prompt_ids for k in kept] == [
        f.prompt_ids[len(f.prompt_ids) + len(f.completion_ids) - limit :] for f in full
    ]
    assert [k.completion_ids for k in kept] == [f.completion_ids for f in full]


def test_the_loss_mask_covers_exactly_the_completion_right_aligned(episode, tokenizer, model):
    samples = (
        turn_samples(episode, "buyer", 1.0, tokenizer, 2048, 1024)
        + turn_samples(_cut(episode), "seller", 1.0, tokenizer, 2048, 1024)
        + turn_samples(episode, "buyer", 1.0, tokenizer, 2048, 7)
    )
    lengths = [len(s.completion_ids) for s in samples]
    assert len(set(lengths)) >= 3  # rows of different widths
    with torch.no_grad():
        logp, mask = completion_logprobs(model, samples, tokenizer.pad_token_id)
    width = max(lengths)
    assert logp.shape == mask.shape == (len(samples), width)
    for row, n in enumerate(lengths):
        assert mask[row].tolist() == [0.0] * (width - n) + [1.0] * n
        assert torch.all(logp[row, : width - n] == 0) and torch.all(logp[row, width - n :] < 0)


def _reference_logprobs(model, sample: Sample) -> torch.Tensor:
    """log_softmax of one unbatched, unpadded forward pass at the completion positions."""
    ids = sample.prompt_ids + sample.completion_ids
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0].float()  # (L, V)
    start = len(sample.prompt_ids)
    predicting = torch.log_softmax(logits[start - 1 : len(ids) - 1], dim=-1)  # position j predicts token j + 1
    return predicting.gather(-1, torch.tensor(sample.completion_ids)[:, None]).squeeze(-1)


def test_completion_logprobs_match_an_unbatched_forward_pass(episode, tokenizer, model):
    buyer = turn_samples(episode, "buyer", 1.0, tokenizer, 2048, 1024)
    cut = turn_samples(_cut(episode), "seller", 1.0, tokenizer, 2048, 1024)
    tiny = Sample(buyer[0].prompt_ids[-3:], buyer[0].completion_ids[:2], 1.0)  # shorter than the others' completions
    for batch in ([buyer[0]], [buyer[0], buyer[2]], [buyer[2], cut[0]], [cut[2], buyer[0], tiny]):
        with torch.no_grad():
            logp, mask = completion_logprobs(model, batch, tokenizer.pad_token_id)
        assert torch.isfinite(logp).all()
        for row, sample in enumerate(batch):
            n = len(sample.completion_ids)
            expected = _reference_logprobs(model, sample)
            assert torch.allclose(logp[row, logp.shape[1] - n :], expected, atol=1e-4), (row, len(batch))


def test_check_prefix_with_a_qwen3_style_template(episode, tokenizer):
    """The real Qwen3 template renders an empty think block before the last assistant reply:
    prompt (generation prompt, thinking off) + reply + <|im_end|> is then exactly the full chat."""
    qwen3_like = copy.deepcopy(tokenizer)
    qwen3_like.chat_template = (
        "{%- for message in messages %}"
        "{%- if message.role == 'assistant' and loop.last %}"
        "{{- '<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n' + message.content + '<|im_end|>\\n' }}"
        "{%- else %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}{%- endif %}"
        "{%- endfor %}"
        "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
        "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
        "{%- endif %}"
    )
    for record in episode.records:
        assert check_prefix(qwen3_like, record["messages"], record["raw"])
        assert prompt_text(qwen3_like, record["messages"]) == prompt_text(tokenizer, record["messages"])


def test_check_prefix_holds_for_the_tiny_template(episode, tokenizer):
    record = episode.records[0]
    assert check_prefix(tokenizer, record["messages"], record["raw"])


# ---------------------------------------------------------------------------------------------
# 4. One optimiser step moves the policy the right way
# ---------------------------------------------------------------------------------------------


def _peft_model(tiny_model, seed: int = 0):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    base = AutoModelForCausalLM.from_pretrained(str(tiny_model))
    lora = LoraConfig(r=8, lora_alpha=16, target_modules=LORA_TARGETS, lora_dropout=0.0, task_type="CAUSAL_LM")
    return get_peft_model(base, lora)


def _two_replies(tokenizer, episode):
    """One prompt, a favoured reply (A = +1) and a disfavoured one (A = -1)."""
    record = next(r for r in episode.records if r["role"] == "buyer")
    prompt = _ids(tokenizer, prompt_text(tokenizer, record["messages"]))
    good = _ids(tokenizer, 'I accept.\n\n```json\n{"message": "Deal.", "action": "DEAL", "offer_price": 2.0}\n```')
    bad = _ids(tokenizer, record["raw"])
    eos = tokenizer.eos_token_id
    return [Sample(prompt, good + [eos], 1.0), Sample(prompt, bad + [eos], -1.0)]


def _summed(model, samples, pad_id):
    model.eval()
    with torch.no_grad():
        logp, _ = completion_logprobs(model, samples, pad_id)
    return logp.sum(dim=1).tolist()


class _Constant(torch.optim.lr_scheduler.LambdaLR):
    def __init__(self, optimizer):
        super().__init__(optimizer, lambda step: 1.0)


@pytest.mark.parametrize("loss", ["grpo", "cispo"])
def test_one_step_raises_the_favoured_reply_and_lowers_the_other(loss, tiny_model, tokenizer, episode):
    from accelerate import Accelerator

    pad = tokenizer.pad_token_id
    model = _peft_model(tiny_model)
    samples = _two_replies(tokenizer, episode)
    model.eval()
    fill_logprobs(model, samples, pad, batch=2, reference=True)
    fill_logprobs(model, samples, pad, batch=2, reference=False)
    for s in samples:
        assert s.old_logp.shape == s.ref_logp.shape == (len(s.completion_ids),)
        assert torch.allclose(s.old_logp, s.ref_logp, atol=1e-6)  # a fresh LoRA (B = 0) changes nothing
    before = _summed(model, samples, pad)
    assert before == pytest.approx([float(s.old_logp.sum()) for s in samples], abs=1e-4)

    cfg = TrainConfig(loss=loss, epochs=1, mini_batch=2, batch_size=2, kl_coef=0.001, learning_rate=1e-2)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    result = optimise(
        cfg, batch_layout(cfg, 1), model, optimizer, _Constant(optimizer), Accelerator(), samples, pad, seed=0
    )
    assert result["optimiser_steps"] == 1
    assert result["ratio"] == pytest.approx(1.0, abs=1e-4) and result["kl"] == pytest.approx(0.0, abs=1e-6)
    after = _summed(model, samples, pad)
    assert after[0] > before[0], f"favoured reply: {before[0]:.4f} -> {after[0]:.4f}"
    assert after[1] < before[1], f"disfavoured reply: {before[1]:.4f} -> {after[1]:.4f}"
    # the reference (adapter off) has not moved
    with torch.no_grad(), model.disable_adapter():
        ref, _ = completion_logprobs(model, samples, pad)
    for row, s in enumerate(samples):
        assert torch.allclose(ref[row, ref.shape[1] - len(s.completion_ids) :], s.ref_logp, atol=1e-5)


class _RecordingOptimizer:
    """Keeps the gradients it is asked to apply, applies nothing."""

    def __init__(self, params):
        self.params, self.grads = list(params), []

    def step(self):
        self.grads.append([p.grad.clone() for p in self.params])

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None


def test_zero_weight_padding_does_not_change_the_gradient(tiny_model, tokenizer, episode):
    from accelerate import Accelerator

    pad_id = tokenizer.pad_token_id
    model = _peft_model(tiny_model)
    with torch.no_grad():  # a non-zero LoRA, so that every LoRA matrix has a gradient
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0.0, 0.1)
    good, bad = _two_replies(tokenizer, episode)
    real = [good, bad, Sample(good.prompt_ids[-20:], good.completion_ids, 0.5)]
    fill_logprobs(model, real, pad_id, batch=4, reference=True)
    fill_logprobs(model, real, pad_id, batch=4, reference=False)
    padding = Sample(
        good.prompt_ids,
        good.completion_ids,
        0.0,
        weight=0.0,
        old_logp=good.old_logp.clone(),
        ref_logp=good.ref_logp.clone(),
    )
    cfg = TrainConfig(loss="grpo", epochs=1, mini_batch=4, batch_size=4, kl_coef=0.0, max_grad_norm=1e9)
    grads = []
    for batch in (real, real + [padding]):
        recorder = _RecordingOptimizer(p for p in model.parameters() if p.requires_grad)
        optimise(
            cfg,
            batch_layout(cfg, 1),
            model,
            recorder,
            SimpleNamespace(step=lambda: None),
            Accelerator(),
            batch,
            pad_id,
            seed=0,
        )
        assert len(recorder.grads) == 1
        grads.append(recorder.grads[0])
    for without, with_padding in zip(*grads):
        assert torch.allclose(without, with_padding, rtol=1e-3, atol=1e-7)  # float32 sums differ in order when batched


def test_gradient_checkpointing_changes_memory_not_the_gradient(tiny_model, tokenizer, episode):
    from accelerate import Accelerator

    pad_id = tokenizer.pad_token_id
    samples = _two_replies(tokenizer, episode)
    grads = []
    for checkpointing in (False, True):
        cfg = TrainConfig(
            model=str(tiny_model),
            variant="unit-test",
            loss="grpo",
            epochs=1,
            mini_batch=2,
            batch_size=2,
            max_grad_norm=1e9,
            gradient_checkpointing=checkpointing,
        )
        torch.manual_seed(3)
        model, _ = load_model(cfg, Accelerator())
        assert model.base_model.model.is_gradient_checkpointing is checkpointing
        with torch.no_grad():  # a non-zero LoRA, so that every LoRA matrix has a gradient
            for name, p in model.named_parameters():
                if "lora_B" in name:
                    p.normal_(0.0, 0.1)
        batch = [Sample(s.prompt_ids, s.completion_ids, s.advantage) for s in samples]
        fill_logprobs(model, batch, pad_id, batch=2, reference=True)
        fill_logprobs(model, batch, pad_id, batch=2, reference=False)
        recorder = _RecordingOptimizer(p for p in model.parameters() if p.requires_grad)
        model.train()
        optimise(
            cfg,
            batch_layout(cfg, 1),
            model,
            recorder,
            SimpleNamespace(step=lambda: None),
            Accelerator(),
            batch,
            pad_id,
            seed=0,
        )
        grads.append(recorder.grads[0])
    assert len(grads[0]) == len(grads[1]) > 0 and any(float(g.abs().sum()) > 0 for g in grads[0])
    for plain, recomputed in zip(*grads):
        assert torch.allclose(plain, recomputed, rtol=1e-4, atol=1e-7)


def test_pad_right_aligned():
    rows = [torch.tensor([1.0, 2.0]), torch.tensor([3.0]), torch.tensor([4.0, 5.0, 6.0])]
    assert pad_right_aligned(rows, 3, "cpu").tolist() == [[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [4.0, 5.0, 6.0]]


def test_load_model_puts_a_fresh_named_lora_on_every_target(tiny_model):
    from accelerate import Accelerator
    from peft import PeftModel

    cfg = TrainConfig(model=str(tiny_model), variant="unit-test", lora_rank=8, lora_alpha=16)
    model, tokenizer = load_model(cfg, Accelerator())
    assert isinstance(model, PeftModel) and model.active_adapter == "unit-test"
    assert model.peft_config["unit-test"].r == 8 and model.peft_config["unit-test"].lora_alpha == 16
    assert set(model.peft_config["unit-test"].target_modules) == set(LORA_TARGETS)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    layers = model.base_model.model.config.num_hidden_layers
    for target in LORA_TARGETS:  # A and B per target per layer
        assert sum(f".{target}.lora_" in n for n in trainable) == 2 * layers
    assert all(p.dtype == torch.float32 for p in model.parameters())  # bf16 only on GPU
    assert tokenizer.eos_token == "<|im_end|>"


# ---------------------------------------------------------------------------------------------
# 5. Configs
# ---------------------------------------------------------------------------------------------

SINGLE_OPPONENT = ("frozen", 0.1, 0.5)
ALL_FOUR = ["full", "buyer_unaware", "seller_unaware", "both_unaware"]
# docs/TRAINING.md 'The eight variants':
# roles, loss, transform, lr, grad accumulation, LoRA r, alpha, conditions, (opponent, its temperature, top_p)
TABLE = {
    "buyer-grpo": (["buyer"], "grpo", "rank", 1e-6, 1, 16, 32, ["seller_unaware"], SINGLE_OPPONENT),
    "buyer-cispo": (["buyer"], "cispo", "rank", 1e-6, 1, 16, 32, ["seller_unaware"], SINGLE_OPPONENT),
    "buyer-grpo-norank": (["buyer"], "grpo", "none", 1e-6, 1, 16, 32, ["seller_unaware"], SINGLE_OPPONENT),
    "buyer-cispo-norank": (["buyer"], "cispo", "none", 1e-6, 1, 16, 32, ["seller_unaware"], SINGLE_OPPONENT),
    "seller-grpo": (["seller"], "grpo", "rank", 5e-6, 24, 16, 32, ["buyer_unaware"], SINGLE_OPPONENT),
    "seller-cispo": (["seller"], "cispo", "rank", 5e-6, 24, 16, 32, ["buyer_unaware"], SINGLE_OPPONENT),
    "joint-grpo": (["buyer", "seller"], "grpo", "rank", 5e-6, 24, 32, 64, ALL_FOUR, ("self", 0.7, 0.8)),
    "joint-cispo": (["buyer", "seller"], "cispo", "rank", 5e-6, 24, 32, 64, ALL_FOUR, ("self", 0.7, 0.8)),
}
SHARED = dict(
    groups_per_step=64,
    group_size=16,
    epochs=4,
    mini_batch=24,
    clip=0.2,
    cispo_cap=5.0,
    kl_coef=0.001,
    max_sequence_tokens=3072,
    max_completion_tokens=1024,
    gradient_checkpointing=True,
    steps=300,
    seed=42,
    max_rounds=4,
    trained_temperature=0.7,
    trained_top_p=0.8,
    sanity_check=True,
    weight_decay=0.01,
    max_grad_norm=1.0,
    model="Qwen/Qwen3-8B",
    train_split="train",
    val_split="val",
    val_trials=16,
    trials_per_scenario=4,
)


def test_there_is_one_config_per_variant():
    assert sorted(p.stem for p in CONFIGS.glob("*.yaml")) == sorted(TABLE)


@pytest.mark.parametrize("variant", sorted(TABLE))
def test_each_config_matches_the_table(variant):
    cfg = configuration.load(CONFIGS / f"{variant}.yaml")
    roles, loss, transform, lr, accumulation, rank, alpha, conditions, (opponent, temperature, top_p) = TABLE[variant]
    assert cfg.variant == variant
    assert cfg.roles == roles and cfg.loss == loss and cfg.reward_transform == transform
    assert cfg.learning_rate == pytest.approx(lr, rel=1e-12) and cfg.batch_size == 4 * 24 * accumulation  # 4 ranks
    assert (cfg.lora_rank, cfg.lora_alpha) == (rank, alpha)
    assert sorted(cfg.conditions) == sorted(conditions) and len(cfg.conditions) == len(conditions)
    assert cfg.opponent == opponent and cfg.opponent_tactic is None
    assert (cfg.opponent_temperature, cfg.opponent_top_p) == (temperature, top_p)
    assert {k: getattr(cfg, k) for k in SHARED} == SHARED
    assert cfg.lora_targets == LORA_TARGETS
    assert cfg.old_logprobs == "first_visit"  # the reference's is_correction: true


def test_an_unknown_yaml_key_names_the_key(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text((CONFIGS / "buyer-grpo.yaml").read_text() + "learning_rat: 1.0e-5\n")
    with pytest.raises(ValueError, match="learning_rat"):
        configuration.load(path)
    path.write_text("- a list\n- not a mapping\n")
    with pytest.raises(ValueError, match="mapping"):
        configuration.load(path)


@pytest.mark.parametrize(
    "values, says",
    [
        (dict(roles=["buyer", "seller"], opponent="frozen"), "opponent: self"),
        (dict(group_size=1), "group_size"),
        (dict(loss="ppo"), "'ppo'"),
        (dict(rollout_backend="vllm"), "base_url"),
        (dict(conditions=["seller_unaware", "nobody_aware"]), "nobody_aware"),
        (dict(roles=["referee"]), "roles"),
    ],
)
def test_bad_combinations_are_refused_with_a_useful_message(values, says):
    with pytest.raises(ValueError, match=says):
        TrainConfig(**values)
    with pytest.raises(ValueError, match=says):  # also through load(), as the command line does
        configuration.load(CONFIGS / "buyer-grpo.yaml", values)


def test_good_combinations_pass():
    TrainConfig(roles=["buyer", "seller"], opponent="self")
    TrainConfig(rollout_backend="vllm", base_url="http://localhost:8000/v1")
    TrainConfig(group_size=2)


def test_command_line_overrides_are_typed():
    parser = argparse.ArgumentParser()
    configuration.add_arguments(parser)
    args = parser.parse_args(
        [
            "--learning-rate",
            "0.5",
            "--roles",
            "buyer,seller",
            "--sanity-check",
            "false",
            "--epochs",
            "2",
            "--base-url",
            "http://x/v1",
        ]
    )
    overrides = configuration.overrides_from(args)
    assert overrides == {
        "learning_rate": 0.5,
        "roles": ["buyer", "seller"],
        "sanity_check": False,
        "epochs": 2,
        "base_url": "http://x/v1",
    }
    assert type(overrides["learning_rate"]) is float and type(overrides["epochs"]) is int
    assert type(overrides["sanity_check"]) is bool
    assert configuration.overrides_from(parser.parse_args([])) == {}
    cfg = configuration.load(CONFIGS / "joint-grpo.yaml", overrides)
    assert cfg.learning_rate == 0.5 and cfg.roles == ["buyer", "seller"] and cfg.sanity_check is False
    with pytest.raises(SystemExit):
        parser.parse_args(["--sanity-check", "maybe"])


# ---------------------------------------------------------------------------------------------
# 6. Sharing samples out
# ---------------------------------------------------------------------------------------------


def _samples(n: int) -> list[Sample]:
    return [Sample([1, 2, i], [3, i], float(i)) for i in range(n)]


def test_the_pool_is_every_process_s_samples_in_process_order(monkeypatch):
    samples = _samples(8)
    parts = [samples[:4], samples[4:]]  # what each of two processes played: contiguous shares of the step's groups
    monkeypatch.setattr("accelerate.utils.gather_object", lambda mine: parts)
    pools = [pool_of(parts[rank], SimpleNamespace(num_processes=2, process_index=rank)) for rank in range(2)]
    assert all([id(s) for s in pool] == [id(s) for s in samples] for pool in pools)  # as one process would hold it


@pytest.mark.parametrize("n, batch_size, steps", [(5, 4, 2), (8, 4, 2), (3, 2, 2), (23, 24, 1), (25, 24, 2)])
def test_each_epoch_takes_whole_batches_padding_the_last(n, batch_size, steps, tiny_model, tokenizer):
    """The optimiser steps of an epoch: ceil(n / batch_size), whatever the sizes."""
    from accelerate import Accelerator

    model = _peft_model(tiny_model)
    pad = tokenizer.pad_token_id
    samples = _samples(n)
    fill_logprobs(model, samples, pad, batch=8, reference=True)
    fill_logprobs(model, samples, pad, batch=8, reference=False)
    cfg = TrainConfig(loss="grpo", epochs=2, mini_batch=4, batch_size=batch_size)
    recorder = _RecordingOptimizer(p for p in model.parameters() if p.requires_grad)
    result = optimise(
        cfg,
        batch_layout(cfg, 1),
        model,
        recorder,
        SimpleNamespace(step=lambda: None),
        Accelerator(),
        samples,
        pad,
        seed=3,
    )
    assert result["optimiser_steps"] == len(recorder.grads) == 2 * steps
    assert [s.advantage for s in samples] == [float(i) for i in range(n)]  # the caller's list is left alone
