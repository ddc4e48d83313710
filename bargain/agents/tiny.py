"""Tiny Qwen3-architecture models and LoRA adapters, built offline from random weights.

For tests and benchmarks on machines that cannot download Qwen3-8B: a byte-level BPE tokenizer
trained on generated bargaining text, Qwen3's special tokens and a Qwen3-style chat template
that honours `enable_thinking`, a two-layer Qwen3 model, and adapters laid out like the
released repository (one subfolder per arm, LoRA on q,k,v,o,gate,up,down_proj). `qwen3_8b_config`
gives the real model's shape for GPU benchmarks with random weights. Nothing is downloaded.
`python -m bargain.agents.tiny DIR` builds one for a CPU try-out (see docs/train.md).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
]
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
# Qwen2/Qwen3's pre-tokenizer split pattern.
SPLIT_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- if message.role == 'assistant' %}"
    "{%- set content = message.content %}"
    "{%- if '</think>' in content %}{%- set content = content.split('</think>')[-1].lstrip('\\n') %}{%- endif %}"
    "{%- if loop.last %}{%- set content = '<think>\\n\\n</think>\\n\\n' + content %}{%- endif %}"
    "{{- '<|im_start|>assistant\\n' + content + '<|im_end|>\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
    "{%- endif %}"
)


def corpus(lines: int = 3000, seed: int = 0) -> list[str]:
    """Generated bargaining replies and prompts: enough text for a small BPE vocabulary."""
    from bargain.engine import scenarios

    rng = random.Random(seed)
    source = scenarios.bundled().slice("low", 0, 200)
    text = []
    for _ in range(lines):
        s = rng.choice(source)
        price = round(rng.uniform(*s.buyer_range), 2)
        action = rng.choice(["OFFER", "DEAL", "NO_DEAL"])
        text.append(
            f"I will hold firm on the {s.product_name}.\n\n```json\n"
            + json.dumps({"message": f"How about {price}?", "action": action, "offer_price": price}, indent=2)
            + "\n```"
        )
        text.append(f"Item: {s.product_name}\nDescription: {s.product_description}\nYour persona: {s.buyer_persona}")
    return text


def build_tokenizer(directory: str | Path, vocab_size: int = 2300, pad_to: int | None = None):
    """Train a byte-level BPE tokenizer like Qwen's and save it (with the chat template) to `directory`.

    `pad_to` fills the vocabulary with filler tokens (" zq<n>", never produced by encoding) up to
    that many ids, so that every id a model of that vocabulary can generate decodes: a random
    model of Qwen3-8B's shape samples from all 151,936 ids, and servers such as vLLM detokenize
    each one.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(SPLIT_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus(), trainer=trainer)
    if pad_to is not None and pad_to > tokenizer.get_vocab_size():
        data = json.loads(tokenizer.to_str())
        vocab = data["model"]["vocab"]
        for i in range(len(vocab), pad_to):
            vocab[f"\u0120zq{i}"] = i  # \u0120 is the byte-level alphabet's space
        tokenizer = Tokenizer.from_str(json.dumps(data))
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
        additional_special_tokens=SPECIAL_TOKENS[1:],
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(str(directory))
    return fast


def tiny_config(vocab_size: int):
    """A two-layer Qwen3 config (about 0.2M parameters besides the embeddings)."""
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=(vocab_size + 63) // 64 * 64,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        tie_word_embeddings=True,
        max_position_embeddings=8192,
    )


def small_config(vocab_size: int):
    """Two layers of attention heads of 64: the smallest shape whose head size vLLM's attention kernels take
    (for GPU tests of the serving path; the tiny model's heads of 16 are CPU-only)."""
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=(vocab_size + 63) // 64 * 64,
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
        tie_word_embeddings=True,
        max_position_embeddings=8192,
    )


def qwen3_8b_config():
    """Qwen3-8B's shape (36 layers, hidden 4096, GQA 32/8), for benchmarks with random weights."""
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=151936,
        hidden_size=4096,
        intermediate_size=12288,
        num_hidden_layers=36,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        tie_word_embeddings=False,
        max_position_embeddings=40960,
        rope_theta=1000000.0,
        rms_norm_eps=1e-6,
    )


def build_model(directory: str | Path, seed: int = 0, shape: str = "tiny") -> Path:
    """Save a tokenizer and a random Qwen3 model to `directory` (a model id for `--model`).

    `shape` "tiny" is the two-layer model of the tests; "small" the same with vLLM-sized attention heads;
    "qwen3-8b" has Qwen3-8B's shape, in bf16, built on the GPU when there is one (for benchmarks; about 16 GB).
    """
    import torch
    from transformers import GenerationConfig, Qwen3ForCausalLM

    directory = Path(directory)
    tokenizer = build_tokenizer(directory, pad_to=qwen3_8b_config().vocab_size if shape == "qwen3-8b" else None)
    torch.manual_seed(seed)
    if shape in ("tiny", "small"):
        model = Qwen3ForCausalLM((tiny_config if shape == "tiny" else small_config)(len(tokenizer)))
    elif shape == "qwen3-8b":
        with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
            previous = torch.get_default_dtype()
            torch.set_default_dtype(torch.bfloat16)
            try:
                model = Qwen3ForCausalLM(qwen3_8b_config())
            finally:
                torch.set_default_dtype(previous)
    else:
        raise ValueError(f"unknown shape {shape!r}: tiny, small or qwen3-8b")
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"), pad_token_id=tokenizer.pad_token_id
    )
    model.save_pretrained(str(directory))
    return directory


def build_adapters(
    model_dir: str | Path, directory: str | Path, names: dict[str, int] | None = None, seed: int = 0
) -> Path:
    """Save one random LoRA adapter per name (value: rank, alpha = 2 x rank; by default the eight released arms at
    their ranks) as `directory/<name>/`.

    LoRA's B matrices start at zero, which would make every adapter a no-op: here they are drawn
    at random so that each adapter really changes the model's output (A as PEFT draws it). The
    base model is laid out on the meta device, never loaded: the adapters of a model of Qwen3-8B's
    shape take seconds to build, not eight loads of 16 GB.
    """
    import math

    import torch
    from accelerate import init_empty_weights
    from accelerate.utils import set_module_tensor_to_device
    from peft import LoraConfig, get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM

    from bargain.agents.arms import RANKS

    directory = Path(directory)
    config = AutoConfig.from_pretrained(str(model_dir))
    for i, (name, rank) in enumerate((RANKS if names is None else names).items()):
        generator = torch.Generator().manual_seed(seed + i + 1)
        with init_empty_weights():
            base = AutoModelForCausalLM.from_config(config)
        lora = LoraConfig(
            r=rank,
            lora_alpha=2 * rank,
            lora_dropout=0.0,
            target_modules=LORA_TARGETS,
            task_type="CAUSAL_LM",
            base_model_name_or_path=str(model_dir),
        )
        model = get_peft_model(base, lora)
        for param_name, param in list(model.named_parameters()):
            if "lora_A" in param_name:  # PEFT's kaiming-uniform draw: bound 1 / sqrt(fan_in)
                bound = 1 / math.sqrt(param.shape[1])
                value = torch.rand(param.shape, generator=generator) * 2 * bound - bound
            elif "lora_B" in param_name:
                value = torch.randn(param.shape, generator=generator) * 0.5
            else:
                continue
            set_module_tensor_to_device(model, param_name, "cpu", value=value)
        model.save_pretrained(str(directory / name))
    return directory


def templated_reply(price: float, action: str = "OFFER") -> str:
    """A short valid reply in the paper's format (what `teach_format` teaches)."""
    data = {"message": "", "action": action, "offer_price": price}
    return f"Offer.\n\n```json\n{json.dumps(data)}\n```"


def teach_format(
    model_dir: str | Path,
    directory: str | Path,
    prices=(1.0, 2.0, 3.0, 4.0, 5.0),
    scenario: str = "low:0",
    steps: int = 300,
    batch: int = 8,
    learning_rate: float = 3e-3,
    seed: int = 0,
) -> Path:
    """Fine-tune a tiny model on templated valid replies (a price drawn from `prices`) to the game's
    real prompts for both roles, so that it plays valid moves; saves it to `directory`.

    A random model's replies are all INVALID, which gives a policy-gradient learner nothing to
    learn from; after this it bids valid prices at random, and learning can show.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from bargain.agents.logprobs import Tokens, completion_logprobs
    from bargain.engine import scenarios
    from bargain.engine.game import new_initial_state
    from bargain.engine.prompts import chat_messages
    from bargain.engine.trial import Condition, Role, Trial

    rng = random.Random(seed)
    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForCausalLM.from_pretrained(str(model_dir))
    source = scenarios.bundled()
    examples = []
    for _ in range(256):
        picked = source.get(scenario)
        buyer, seller = scenarios.draw_prices(rng, picked)
        trial = Trial(1, picked, rng.choice(list(Condition)), buyer, seller, max_rounds=rng.randint(1, 4))
        obs = new_initial_state(trial).observation(rng.choice([Role.BUYER, Role.SELLER]))
        prompt = tokenizer.apply_chat_template(
            chat_messages(obs), tokenize=False, add_generation_prompt=True, enable_thinking=False
        )
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        reply_ids = tokenizer(templated_reply(rng.choice(prices)), add_special_tokens=False)["input_ids"]
        examples.append(Tokens(prompt_ids, reply_ids + [tokenizer.eos_token_id]))
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model.train()
    for _ in range(steps):
        logp, mask = completion_logprobs(model, rng.sample(examples, batch), tokenizer.pad_token_id)
        loss = -logp.sum() / mask.sum()  # the replies' mean token cross-entropy
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    directory = Path(directory)
    model.save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    return directory


def main(argv: list[str] | None = None) -> int:
    """`python -m bargain.agents.tiny DIR`: a tiny model (and optionally the eight arms as adapters) for
    trying the trainer, the hf backend and the arena on a CPU, with nothing to download."""
    import argparse
    import tempfile

    from transformers.utils import logging

    parser = argparse.ArgumentParser(
        prog="python -m bargain.agents.tiny",
        description="Build a tiny Qwen3 model with random weights (two layers, a tokenizer trained here, Qwen3's chat "
        "template) for CPU try-outs: pass DIR as --model to `python -m train`, to `python -m bargain "
        "simulate ... --backend hf` or to `python app.py --backend hf`. Nothing is downloaded.",
    )
    parser.add_argument("dir", help="directory to write the model to (created if missing)")
    parser.add_argument(
        "--teach-format",
        action="store_true",
        help="then fine-tune it to answer in the game's reply format with random prices (about 20 "
        "seconds on a CPU): a random model's replies are all invalid, so training it has no "
        "reward to learn from",
    )
    parser.add_argument(
        "--adapters-dir",
        help="also write the eight arms as random LoRA adapters here (DIR/<arm>/), "
        "for --adapters-dir of the hf backend",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")
    args = parser.parse_args(argv)
    logging.disable_progress_bar()  # one loading bar per adapter says nothing here
    if args.teach_format:
        with tempfile.TemporaryDirectory() as scratch:
            model = teach_format(build_model(scratch, seed=args.seed), args.dir, seed=args.seed)
    else:
        model = build_model(args.dir, seed=args.seed)
    print(f"tiny model written to {model}")
    if args.adapters_dir:
        adapters = build_adapters(model, args.adapters_dir, seed=args.seed)
        print(f"eight adapters written to {adapters}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
