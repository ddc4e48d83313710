"""The trainer's configuration: one typed dataclass, loaded from YAML, every field overridable.

Values and their meaning follow docs/TRAINING.md; the eight variants are presets in
train/configs/<variant>.yaml, not branches in the code. Unknown keys are errors, and
`__post_init__` refuses combinations that cannot run, saying what to change.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bargain.engine.trial import Condition, Role

LOSSES = ("grpo", "cispo")
TRANSFORMS = ("rank", "none")
OLD_LOGPROBS = ("before_epochs", "first_visit")
PRESETS = Path(__file__).resolve().parent / "configs"  # the eight variants


def _help(text: str, **kwargs) -> Any:
    return field(metadata={"help": text}, **kwargs)


@dataclass
class TrainConfig:
    """Everything one training run needs (docs/TRAINING.md)."""

    variant: str = _help("name of the run's preset, e.g. buyer-grpo", default="custom")
    roles: list[str] = _help(
        "trained role(s): [buyer], [seller], or [buyer, seller] for joint self-play "
        "(one adapter plays both; docs/TRAINING.md 'The eight variants')",
        default_factory=lambda: ["buyer"],
    )
    loss: str = _help(
        "grpo (clipped ratio) or cispo (capped, stop-gradient importance weight); docs/TRAINING.md step 6",
        default="grpo",
    )
    reward_transform: str = _help(
        "rank: average ranks within a group (ties share); none: raw signed normalised utility; docs/TRAINING.md step 3",
        default="rank",
    )
    learning_rate: float = _help("AdamW learning rate (1e-6 buyer runs, 5e-6 seller and joint runs)", default=1e-6)
    weight_decay: float = _help("AdamW weight decay", default=0.01)
    batch_size: int = _help(
        "samples per optimiser step over all processes (the reference's 4 ranks x 24 x its "
        "accumulation: 96 in buyer runs, 2304 in seller and joint runs); the same on any number "
        "of GPUs, which must divide it",
        default=96,
    )
    lora_rank: int = _help("LoRA rank (16 single-role, 32 joint)", default=16)
    lora_alpha: int = _help("LoRA alpha (2 x rank in every released adapter)", default=32)
    lora_targets: list[str] = _help(
        "modules with LoRA, in every layer",
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    )
    conditions: list[str] = _help(
        "information conditions of the training games", default_factory=lambda: ["seller_unaware"]
    )
    opponent: str = _help(
        "frozen: the base model (adapter disabled) at the opponent sampling; self: the current adapter (joint runs)",
        default="frozen",
    )
    trained_temperature: float = _help("sampling temperature of the trained side (docs/PROTOCOL.md §9)", default=0.7)
    trained_top_p: float = _help("top_p of the trained side", default=0.8)
    opponent_temperature: float = _help("temperature of the opponent (0.1 frozen base; 0.7 joint)", default=0.1)
    opponent_top_p: float = _help("top_p of the opponent (0.5 frozen base; 0.8 joint)", default=0.5)
    top_k: int = _help("top_k of both sides", default=20)
    presence_penalty: float = _help("presence penalty of both sides", default=1.5)
    groups_per_step: int = _help("groups of episodes per step (64)", default=64)
    group_size: int = _help("episodes per group: one trial repeated (16)", default=16)
    trials_per_scenario: int = _help("trials drawn per (scenario, condition) when building groups (4)", default=4)
    epochs: int = _help("passes over a step's samples (4)", default=4)
    mini_batch: int = _help(
        "the most samples one process puts through one backward pass (24, as the reference); with "
        "the number of processes it sets the gradient accumulation",
        default=24,
    )
    clip: float = _help("GRPO clip range epsilon (0.2)", default=0.2)
    cispo_cap: float = _help("CISPO upper cap on the importance weight (5.0)", default=5.0)
    kl_coef: float = _help("weight of the k3 KL estimate to the reference (adapter disabled) (0.001)", default=0.001)
    max_rounds: int = _help("rounds per training game (4)", default=4)
    max_sequence_tokens: int = _help(
        "prompt + completion tokens kept per sample; a longer one loses its oldest tokens (3072, the reference's)",
        default=3072,
    )
    max_completion_tokens: int = _help("new tokens per reply (1024)", default=1024)
    sanity_check: bool = _help("the x5 offer sanity check during rollouts (on in training)", default=True)
    steps: int = _help(
        "optimisation steps (300 budget; released checkpoints are validation peaks at steps 11-37)", default=300
    )
    max_grad_norm: float = _help("gradient clipping norm (1.0)", default=1.0)
    old_logprobs: str = _help(
        "before_epochs: old log-probs computed once before the epochs (textbook, default); "
        "first_visit: cached at a sample's first visit in the step (the reference's quirk)",
        default="before_epochs",
    )
    seed: int = _help("seed of the groups, of the validation trials and of sampling (42)", default=42)
    train_split: str = _help(
        "scenarios of the training groups: a split (train = low[0:1500]), a tier, or TIER:START:STOP", default="train"
    )
    val_split: str = _help("scenarios of validation: val = low[1500:1508], or as train_split", default="val")
    val_trials: int = _help("validation trials per (scenario, condition) (16)", default=16)
    val_interval: int = _help("validate every N steps (0: never)", default=1)
    rollout_concurrency: int = _help("games in flight during rollouts", default=256)
    bf16: bool = _help(
        "the base model's weights in bf16 on GPU (the LoRA weights stay float32; ignored on CPU)", default=True
    )
    gradient_checkpointing: bool = _help(
        "recompute each layer's activations during the backward pass: about 45% "
        "more training compute, for activations of 0.28 MiB per token instead of "
        "10.2 (Qwen3-8B; `python -m benchmarks.train --activations`): without it a "
        "piece of four 3,072-token samples needs 122 GiB",
        default=True,
    )
    keep_optimizer_states: int = _help(
        "how many of the newest checkpoints keep the optimiser state that --resume "
        "needs (0.35 GB each at LoRA rank 16, 0.7 GB at rank 32); 0: every one. Every "
        "step's adapter is kept",
        default=1,
    )
    model: str = _help("base model: Hub id or local path", default="Qwen/Qwen3-8B")
    rollout_backend: str = _help(
        "hf: the model being trained generates in process; vllm: a vLLM server with "
        "runtime LoRA updates generates (--base-url)",
        default="hf",
    )
    base_url: str | None = _help(
        "vLLM server URL for --rollout-backend vllm; several replicas as URL1,URL2 (each gets every new adapter)",
        default=None,
    )
    served_model: str | None = _help("the base model's name on the vLLM server (default: --model)", default=None)
    opponent_tactic: str | None = _help(
        "play the opponent with a scripted tactic instead (e.g. tactic:random), for tests and curricula", default=None
    )
    output_dir: str = _help("run directory (checkpoints, metrics, validation)", default="runs/train")
    log_with: list[str] = _help("accelerate trackers, e.g. [tensorboard] or [wandb]", default_factory=list)

    def __post_init__(self) -> None:
        problems = self._typed()
        if problems:  # the value checks below assume the types
            raise ValueError("bad training configuration: " + "; ".join(problems))
        if not self.roles or any(r not in (Role.BUYER, Role.SELLER) for r in self.roles):
            problems.append(f"roles must be buyer and/or seller, got {self.roles}")
        if self.loss not in LOSSES:
            problems.append(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if self.reward_transform not in TRANSFORMS:
            problems.append(f"reward_transform must be one of {TRANSFORMS}, got {self.reward_transform!r}")
        if self.old_logprobs not in OLD_LOGPROBS:
            problems.append(f"old_logprobs must be one of {OLD_LOGPROBS}, got {self.old_logprobs!r}")
        if self.opponent not in ("frozen", "self"):
            problems.append(f"opponent must be frozen or self, got {self.opponent!r}")
        if len(self.roles) == 2 and self.opponent != "self" and self.opponent_tactic is None:
            problems.append("a joint run (two roles) plays the current adapter against itself: set opponent: self")
        unknown = [c for c in self.conditions if c not in {x.value for x in Condition}]
        if unknown:
            problems.append(f"conditions has unknown conditions {unknown}")
        if self.group_size < 2:
            problems.append("group_size must be at least 2: advantages compare episodes within a group")
        if (
            min(
                self.groups_per_step,
                self.epochs,
                self.mini_batch,
                self.batch_size,
                self.steps,
                self.max_rounds,
                self.lora_rank,
            )
            < 1
        ):
            problems.append(
                "groups_per_step, epochs, mini_batch, batch_size, steps, max_rounds and lora_rank must be at least 1"
            )
        if self.keep_optimizer_states < 0:
            problems.append("keep_optimizer_states must be 0 (keep every one) or more")
        if self.max_completion_tokens >= self.max_sequence_tokens:
            problems.append(
                f"max_completion_tokens ({self.max_completion_tokens}) must be below max_sequence_tokens "
                f"({self.max_sequence_tokens}): a sample keeps its whole completion"
            )
        if self.rollout_backend not in ("hf", "vllm"):
            problems.append(f"rollout_backend must be hf or vllm, got {self.rollout_backend!r}")
        if self.rollout_backend == "vllm" and not self.base_url:
            problems.append(
                "rollout_backend vllm needs base_url (the server started with "
                "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True; see docs/train.md)"
            )
        if problems:
            raise ValueError("bad training configuration: " + "; ".join(problems))

    def _typed(self) -> list[str]:
        """Check each field's type, from a file, a flag or code alike; what is wrong, one sentence per field. YAML
        reads `1e-6` (no dot) as a string: a float field takes a string that is a number, as a number."""
        problems = []
        for f in dataclasses.fields(self):
            value, kind = getattr(self, f.name), str(f.type)
            if kind == "float" and isinstance(value, str):
                try:
                    value = float(value)
                    setattr(self, f.name, value)
                except ValueError:
                    pass
            if value is None and kind.endswith("| None"):
                continue
            wanted = {
                "int": "a whole number",
                "float": "a number",
                "bool": "true or false",
                "list[str]": "a list of names",
                "str": "a text",
                "str | None": "a text",
            }[kind]
            fits = {
                "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
                "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
                "bool": lambda v: isinstance(v, bool),
                "list[str]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
            }.get(kind, lambda v: isinstance(v, str))
            if not fits(value):
                problems.append(f"{f.name} must be {wanted}, got {value!r}")
        return problems

    def to_dict(self) -> dict:
        """Plain values, as in the YAML files."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class BatchLayout:
    """How one optimiser step's `batch_size` samples are shared out: `per_device` to each of `world_size`
    processes, put through `accumulation` backward passes of `mini_batch` samples each."""

    world_size: int
    per_device: int
    mini_batch: int
    accumulation: int


def batch_layout(cfg: TrainConfig, world_size: int) -> BatchLayout:
    """The split of `cfg.batch_size` over `world_size` processes: the largest backward pass of at most
    `cfg.mini_batch` samples that divides each process's share. A world size that does not divide the batch is
    refused, since the optimiser steps would no longer cover the reference's samples."""
    if cfg.batch_size % world_size:
        fitting = [n for n in range(1, 17) if cfg.batch_size % n == 0]
        raise ValueError(
            f"batch_size {cfg.batch_size} cannot be shared out over {world_size} processes: run on "
            f"{', '.join(map(str, fitting))} processes, or set --batch-size to a multiple of {world_size}"
        )
    per_device = cfg.batch_size // world_size
    size = max(d for d in range(1, min(cfg.mini_batch, per_device) + 1) if per_device % d == 0)
    return BatchLayout(world_size, per_device, size, per_device // size)


def load(path: str | Path | None = None, overrides: dict | None = None) -> TrainConfig:
    """A config from a YAML file, or a preset by its name (e.g. buyer-grpo: train/configs/buyer-grpo.yaml, installed
    with the package), with overrides applied. Unknown keys are errors."""
    values: dict = {}
    if path is not None and not Path(path).exists():
        if not (PRESETS / f"{path}.yaml").exists():
            names = ", ".join(sorted(p.stem for p in PRESETS.glob("*.yaml")))
            raise ValueError(f"{path}: no such file, and no preset of that name (the presets: {names})")
        path = PRESETS / f"{path}.yaml"
    if path is not None:
        values = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(values, dict):
            raise ValueError(f"{path}: expected a mapping of config keys")
    values.update(overrides or {})
    known = {f.name for f in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown config keys {unknown}; known keys: {', '.join(sorted(known))}")
    try:
        return TrainConfig(**values)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}" if path is not None else str(exc)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One `--field` flag per config field (lists as comma-separated values), all optional. A field's help is
    prose ("about 45% of the memory"): argparse reads % as formatting, so it is escaped."""
    for f in dataclasses.fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        kind, shown = str(f.type), f.metadata["help"].replace("%", "%%")
        if kind == "bool":
            parser.add_argument(flag, type=_boolean, metavar="true|false", help=shown)
        elif kind.startswith("list"):
            parser.add_argument(
                flag, type=lambda text: [x.strip() for x in text.split(",") if x.strip()], metavar="A,B", help=shown
            )
        else:
            cast = {"int": int, "float": float}.get(kind, str)
            parser.add_argument(flag, type=cast, help=shown)


def _boolean(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def overrides_from(args: argparse.Namespace) -> dict:
    """The config fields given on the command line."""
    return {
        f.name: getattr(args, f.name)
        for f in dataclasses.fields(TrainConfig)
        if getattr(args, f.name, None) is not None
    }
