"""The training loop, top to bottom: rollout, reward, advantage, epochs, save, hot-load, validate.

docs/TRAINING.md, one step: play `groups_per_step` groups of `group_size` episodes with the current
adapter; turn the trained side's rewards into group advantages; make one sample per trained
turn; compute the reference log-probs (adapter off) and the old log-probs; run `epochs` passes
of mini-batches of GRPO or CISPO loss with AdamW, gradient clipping and a cosine schedule
without warmup; save the adapter (PEFT format, loadable by peft, the arena and vLLM); with a
vLLM server, hot-load it (checking once that it changes the output); validate every
`val_interval` steps on the same trials. Data parallel with accelerate: each process plays its
share of the groups, the samples are shared out in equal shards (zero-weight padding), and
gradients are averaged across processes.
"""

from __future__ import annotations

import json
import logging
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch
import yaml
from tqdm import tqdm

from bargain.agents.arms import Arm
from bargain.agents.backends import BackendError, Backends
from bargain.agents.logprobs import completion_logprobs
from bargain.engine import scenarios
from bargain.engine.trial import Role
from train import rollouts
from train.config import BatchLayout, TrainConfig, batch_layout
from train.losses import policy_loss
from train.samples import Sample, turn_samples

STATE_FILE = "trainer_state.pt"
SERVER_WAIT_S = 1800  # how long a run waits for its vLLM server to answer (it may be downloading the model)
MICRO_BATCH = 4  # samples per forward/backward piece of a mini-batch: memory, not maths
ADAPTER_CHECK_TOKENS = 256  # greedy tokens compared with and without the adapter after the first step
log = logging.getLogger(__name__)


@dataclass
class Run:
    """What a finished (or interrupted) run leaves: its directory and per-step metrics."""

    directory: Path
    metrics: list[dict]


def peak_memory_gb() -> float:
    """Peak GPU memory of this step on a GPU; else the process's peak resident memory so far."""
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**30
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kilobytes on Linux


def adapter_name(cfg: TrainConfig) -> str:
    """The adapter's name: the variant's (so a checkpoint folder holds `<variant>/adapter_config.json`,
    the layout the arena and `serve` read)."""
    return cfg.variant


class ModelError(RuntimeError):
    """The base model cannot be loaded; the message is one line saying how to point --model at one."""


class LayoutError(RuntimeError):
    """The batch cannot be shared out over the processes started; the message says which numbers work."""


def model_unavailable(model: str, exc: Exception) -> str:
    """Why `model` could not be loaded, in one line, and what to pass instead.

    transformers' own message spans lines and speaks of its cache; what a person needs is to know
    that the model was neither here nor downloadable, and that --model takes a local directory.
    """
    if Path(model).expanduser().is_dir():
        return (
            f"there is no model in {model}: --model takes a Hub id or a directory written by save_pretrained "
            "(config.json, the weights and the tokenizer files)"
        )
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        where = "it is not in the Hugging Face cache (HF_HUB_OFFLINE is set: nothing is downloaded)"
    else:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0].rstrip(".:")
        where = f"it could not be downloaded from the Hugging Face Hub ({reason})"
    return (
        f"cannot load the model {model!r}: there is no such directory here, and {where}; pass --model "
        "/path/to/a/local/copy, or build a tiny model for a CPU try-out with `python -m bargain.agents.tiny DIR`"
    )


def load_model(cfg: TrainConfig, accelerator):
    """The base model with a fresh LoRA adapter (bf16 on GPU), and its tokenizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    use_bf16 = cfg.bf16 and accelerator.device.type == "cuda"
    try:
        tokenizer = AutoTokenizer.from_pretrained(cfg.model)
        base = AutoModelForCausalLM.from_pretrained(cfg.model, dtype=torch.bfloat16 if use_bf16 else torch.float32)
    except (OSError, ValueError) as exc:  # ValueError: a directory without a tokenizer
        raise ModelError(model_unavailable(cfg.model, exc)) from exc
    return with_adapter(base, cfg).to(accelerator.device), tokenizer


def with_adapter(base, cfg: TrainConfig):
    """`base` made trainable as `cfg` says: gradient checkpointing if asked, and a fresh LoRA adapter (float32, as
    peft makes it) named for the variant on every target module."""
    from peft import LoraConfig, get_peft_model

    if cfg.gradient_checkpointing:  # non-reentrant: the frozen embeddings need not require gradients
        base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    lora = LoraConfig(
        r=cfg.lora_rank,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=0.0,
        target_modules=cfg.lora_targets,
        task_type="CAUSAL_LM",
    )
    return get_peft_model(base, lora, adapter_name=adapter_name(cfg))


def pad_right_aligned(rows: list[torch.Tensor | None], width: int, device) -> torch.Tensor:
    """Stack per-sample vectors into (B, width), each aligned to the right (as the completions are)."""
    out = torch.zeros((len(rows), width), device=device)
    for i, row in enumerate(rows):
        if row is None:
            raise RuntimeError("a sample reached the optimiser before its log-probs were computed")
        out[i, width - len(row) :] = row.to(device)
    return out


def fill_logprobs(model, samples: list[Sample], pad_id: int, batch: int, reference: bool) -> None:
    """Store each sample's reference (adapter off) or old (current) log-probs, without gradients."""
    with torch.no_grad():
        for start in range(0, len(samples), batch):
            chunk = samples[start : start + batch]
            if reference:
                with model.disable_adapter():
                    logp, _ = completion_logprobs(model, chunk, pad_id)
            else:
                logp, _ = completion_logprobs(model, chunk, pad_id)
            for sample, row in zip(chunk, logp):
                values = row[row.shape[0] - len(sample.completion_ids) :].detach().cpu()
                if reference:
                    sample.ref_logp = values
                else:
                    sample.old_logp = values


def pool_of(samples: list[Sample], accelerator) -> list[Sample]:
    """Every process's samples, in one order, on every process: the optimiser steps then cover the same samples
    whatever the number of processes (see `optimise`)."""
    from accelerate.utils import gather_object

    everything = gather_object([samples]) if accelerator.num_processes > 1 else [samples]
    return [s for part in everything for s in part]


def fill_pool_logprobs(model, pool: list[Sample], accelerator, pad_id: int, batch: int, reference: bool) -> None:
    """`fill_logprobs` over the whole pool, each process computing its share (every `num_processes`-th sample)
    and all of them receiving every result."""
    from accelerate.utils import gather_object

    mine = pool[accelerator.process_index :: accelerator.num_processes]
    fill_logprobs(model, mine, pad_id, batch, reference)
    if accelerator.num_processes == 1:
        return
    field = "ref_logp" if reference else "old_logp"
    indices = range(accelerator.process_index, len(pool), accelerator.num_processes)
    for index, values in gather_object([(i, getattr(s, field)) for i, s in zip(indices, mine)]):
        setattr(pool[index], field, values)


def optimise(
    cfg: TrainConfig,
    layout: BatchLayout,
    model,
    optimizer,
    scheduler,
    accelerator,
    pool: list[Sample],
    pad_id: int,
    seed: int,
) -> dict:
    """`epochs` passes over the pool (the same on every process). Each epoch shuffles it with `seed` (alike on
    every process), pads it with zero-weight copies to whole optimiser steps of `batch_size` samples, and takes
    them in order: process p trains on its `per_device` block of each step, in `accumulation` backward passes,
    and gradients are averaged across processes. So an optimiser step covers the same samples, and the run takes
    the same number of steps, on any number of processes. Returns mean loss, KL, ratio, clip fraction and grad
    norm, the number of optimiser steps, and `first_loss`: the loss of the first optimiser step; each a mean over
    all processes' samples."""
    model.train()
    totals, count, steps_taken = {"loss": 0.0, "kl": 0.0, "ratio": 0.0, "clipped": 0.0, "grad_norm": 0.0}, 0, 0
    first = [0.0, 0]  # loss x samples, and samples, of the first optimiser step
    micro = max(1, min(layout.mini_batch, MICRO_BATCH))
    mine = slice(accelerator.process_index * layout.per_device, (accelerator.process_index + 1) * layout.per_device)
    for epoch in range(cfg.epochs):
        order = pool[:]
        random.Random(seed * 1_009 + epoch).shuffle(order)
        order += [
            Sample(s.prompt_ids, s.completion_ids, 0.0, weight=0.0, old_logp=s.old_logp, ref_logp=s.ref_logp)
            for s in (order[i % len(order)] for i in range(-len(order) % cfg.batch_size))
        ]
        for step_start in range(0, len(order), cfg.batch_size):
            block = order[step_start : step_start + cfg.batch_size][mine]
            for start in range(0, len(block), layout.mini_batch):
                batch = block[start : start + layout.mini_batch]
                weight_total = sum(s.weight for s in batch) or 1.0
                for piece in range(0, len(batch), micro):
                    chunk = batch[piece : piece + micro]
                    logp, mask = completion_logprobs(model, chunk, pad_id)
                    width = logp.shape[1]
                    if cfg.old_logprobs == "first_visit":
                        for sample, row in zip(chunk, logp):
                            if sample.old_logp is None:
                                sample.old_logp = row[width - len(sample.completion_ids) :].detach().cpu()
                    old = pad_right_aligned([s.old_logp for s in chunk], width, logp.device)
                    ref = pad_right_aligned([s.ref_logp for s in chunk], width, logp.device)
                    weights = torch.tensor([s.weight for s in chunk], device=logp.device)
                    adv = torch.tensor([s.advantage for s in chunk], device=logp.device, dtype=torch.float32)
                    loss, parts = policy_loss(
                        cfg.loss,
                        logp,
                        old,
                        ref,
                        adv,
                        mask * weights[:, None],
                        clip=cfg.clip,
                        cap=cfg.cispo_cap,
                        kl_coef=cfg.kl_coef,
                    )
                    # policy_loss averages over the chunk's rows (padding rows add zero); make it the chunk's
                    # share of the mean over the mini-batch's real samples, and of the accumulation
                    scale = len(chunk) / weight_total / layout.accumulation
                    accelerator.backward(loss * scale)
                    totals["loss"] += loss.item() * len(chunk)
                    totals["kl"] += parts["kl"] * len(chunk)
                    totals["ratio"] += parts["ratio"] * len(chunk)
                    totals["clipped"] += parts["clipped"] * len(chunk)
                    count += len(chunk)
                    if steps_taken == 0:
                        first = [first[0] + loss.item() * len(chunk), first[1] + len(chunk)]
            norm = accelerator.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            totals["grad_norm"] += float(norm)
            steps_taken += 1
    # means over every process's samples (the grad norm is already the global one's)
    sums = torch.tensor(
        [totals["loss"], totals["kl"], totals["ratio"], totals["clipped"], count, *first],
        dtype=torch.float64,
        device=accelerator.device,
    )
    sums = accelerator.reduce(sums, reduction="sum") if accelerator.num_processes > 1 else sums
    means = {k: float(sums[i] / max(float(sums[4]), 1.0)) for i, k in enumerate(("loss", "kl", "ratio", "clipped"))}
    return means | {
        "grad_norm": totals["grad_norm"] / max(steps_taken, 1),
        "optimiser_steps": steps_taken,
        "first_loss": float(sums[5] / max(float(sums[6]), 1.0)),
    }


def checkpoints(run_dir: Path) -> list[Path]:
    """A run's checkpoint directories, oldest first."""
    return sorted((run_dir / "checkpoints").glob("step_*"), key=lambda p: int(p.name.split("_")[1]))


def save_checkpoint(
    run_dir: Path, step: int, model, optimizer, scheduler, horizon: int | None, accelerator, keep_states: int = 0
) -> Path:
    """The adapter in PEFT format plus what resuming needs (the schedule and its horizon: none before the first
    step), under checkpoints/step_<n>/. With `keep_states` > 0 only that many of the newest checkpoints keep the
    resume state: it is most of a checkpoint's size, and only the newest is ever resumed from. The state is
    written before older ones are removed, so a run killed in between still has one."""
    directory = run_dir / "checkpoints" / f"step_{step}"
    accelerator.unwrap_model(model).save_pretrained(str(directory))  # -> directory/<variant>/adapter_*.*
    torch.save(
        {
            "step": step,
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict() if scheduler is not None else None,
            "horizon": horizon,
            "torch_rng": torch.get_rng_state(),
            "python_rng": random.getstate(),
        },
        directory / STATE_FILE,
    )
    if keep_states:
        for older in [c for c in checkpoints(run_dir) if (c / STATE_FILE).exists()][:-keep_states]:
            (older / STATE_FILE).unlink()
    return directory


def latest_checkpoint(path: Path) -> Path:
    """A checkpoint directory, or the newest checkpoint of a run directory that can be resumed from."""
    if (path / STATE_FILE).exists():
        return path
    found = [c for c in checkpoints(path) if (c / STATE_FILE).exists()]
    if not found:
        raise FileNotFoundError(
            f"no checkpoint to resume from in {path}: expected {path}/checkpoints/step_N/{STATE_FILE}"
        )
    return found[-1]


def hot_load(cfg: TrainConfig, checkpoint: Path) -> None:
    """Serve the saved adapter on every vLLM server of the run (runtime LoRA updating)."""
    if cfg.base_url is None:
        raise ModelError("hot loading needs the vLLM server's URL (base_url)")
    replace_adapter(cfg.base_url, adapter_name(cfg), (checkpoint / adapter_name(cfg)).resolve())


def replace_adapter(base_url: str, name: str, path: Path) -> None:
    """Serve the adapter at `path` under `name` on every vLLM server of `base_url` (replicas comma-separated):
    unload what each serves under that name (nothing, the first time), then load the new weights. A single load with
    `load_inplace` would replace it too, but vLLM 0.31 keeps that flag on the adapter and reads it from disk again at
    every engine step that uses it (vLLM issue 33791): a disk read per step of every rollout."""
    import httpx

    from bargain.agents.backends.replicas import split_urls

    for url in split_urls(base_url):
        root = url.removesuffix("/v1")
        try:
            unloaded = httpx.post(f"{root}/v1/unload_lora_adapter", json={"lora_name": name}, timeout=600)
            loaded = (
                httpx.post(
                    f"{root}/v1/load_lora_adapter", json={"lora_name": name, "lora_path": str(path)}, timeout=600
                )
                if unloaded.status_code < 500
                else unloaded
            )  # 4xx: none served yet
        except httpx.HTTPError as exc:
            raise BackendError(f"vLLM at {url} could not be reached to load the adapter ({exc})") from exc
        if loaded.status_code != 200:
            raise BackendError(
                f"vLLM at {url} refused the adapter ({loaded.status_code}: {loaded.text[:300]}); "
                "start it with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True and --enable-lora "
                "--max-lora-rank 32"
            )


def check_adapter_changes_output(players: rollouts.Players, trained: Arm) -> bool:
    """Whether greedy replies with and without the hot-loaded adapter differ (docs/TRAINING.md): up to
    ADAPTER_CHECK_TOKENS tokens each. A step at a learning rate of 1e-6 can leave them the same, so an unchanged
    reply is a warning, as in the reference, and training goes on; an adapter the server failed to load has
    already stopped the run in `hot_load`."""
    import asyncio

    from bargain.agents.arms import BASE
    from bargain.agents.backends import Request, Sampling

    greedy = Sampling(temperature=0.0, max_tokens=ADAPTER_CHECK_TOKENS, presence_penalty=0.0)
    chat = ({"role": "user", "content": "You are the BUYER in a bargaining negotiation. Round 1, rounds left 3"},)

    async def both():
        backend = players.backend
        return await asyncio.gather(
            backend.complete(Request(chat, backend.model_name(trained), greedy)),
            backend.complete(Request(chat, backend.model_name(BASE), greedy)),
        )

    with_adapter, without = asyncio.run(both())
    if with_adapter.text == without.text:
        log.warning(
            "after the first step, the hot-loaded adapter leaves %d greedy tokens unchanged (with: %r; "
            "without: %r): normal at a small learning rate; if it lasts, check that vLLM runs with "
            "--enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True",
            ADAPTER_CHECK_TOKENS,
            with_adapter.text[:80],
            without.text[:80],
        )
        return False
    return True


def build_backends(cfg: TrainConfig, model, tokenizer, trained: Arm) -> Backends:
    """The rollout backend: the model being trained (hf), or vLLM servers with runtime LoRA updates (one, or
    several replicas: `base_url` URL1,URL2)."""
    if cfg.rollout_backend == "hf":
        from bargain.agents.backends.hf import HFBackend

        return Backends(HFBackend.of(model, tokenizer, [trained.name], cfg.model))
    from bargain.agents.backends.build import build_backend

    return Backends(
        build_backend(
            "vllm", base_url=cfg.base_url, model=cfg.served_model or cfg.model, max_in_flight=cfg.rollout_concurrency
        )
    )


def run(cfg: TrainConfig, resume: str | Path | None = None, progress: bool = True) -> Run:
    """Train as `cfg` says (continuing from a checkpoint with `resume`); returns the run's metrics."""
    from accelerate import Accelerator
    from accelerate.utils import gather_object
    from transformers import get_cosine_schedule_with_warmup

    run_dir = Path(cfg.output_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    accelerator = Accelerator(log_with=cfg.log_with or None, project_dir=str(run_dir))
    try:  # before the model loads: a run that cannot share its batch stops at once
        layout = batch_layout(cfg, accelerator.num_processes)
    except ValueError as exc:
        raise LayoutError(str(exc)) from None
    torch.manual_seed(cfg.seed + accelerator.process_index)
    model, tokenizer = load_model(cfg, accelerator)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    model, optimizer = accelerator.prepare(model, optimizer)
    start, scheduler, horizon = 1, None, None
    if resume is not None:
        checkpoint = latest_checkpoint(Path(resume))
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        weights = load_file(str(checkpoint / adapter_name(cfg) / "adapter_model.safetensors"))
        set_peft_model_state_dict(accelerator.unwrap_model(model), weights, adapter_name=adapter_name(cfg))
        state = torch.load(checkpoint / STATE_FILE, weights_only=False)
        optimizer.load_state_dict(state["optimizer"])
        if state["scheduler"] is not None:
            horizon = state["horizon"]
            scheduler = get_cosine_schedule_with_warmup(optimizer, 0, horizon)
            scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        random.setstate(state["python_rng"])
        start = state["step"] + 1
    recorded = cfg.to_dict() | {
        "world_size": layout.world_size,
        "per_device_batch": layout.per_device,
        "device_mini_batch": layout.mini_batch,
        "grad_accumulation": layout.accumulation,
    }
    if accelerator.is_main_process:
        (run_dir / "config.yaml").write_text(yaml.safe_dump(recorded, sort_keys=False))
    accelerator.init_trackers("bargain-train", config=recorded)

    source = scenarios.bundled()
    groups = rollouts.build_groups(cfg, source)
    trained = Arm(name=adapter_name(cfg), kind="adapter", roles=tuple(Role(r) for r in cfg.roles))
    unwrapped = accelerator.unwrap_model(model)
    backends = build_backends(cfg, unwrapped, tokenizer, trained)
    players = rollouts.Players(cfg, backends, trained)
    if cfg.rollout_backend == "vllm" and cfg.base_url and accelerator.is_main_process:
        from bargain.agents.backends.replicas import split_urls
        from bargain.agents.serve import wait_until_ready

        print(
            f"waiting for the vLLM server at {cfg.base_url} (it may still be starting; up to "
            f"{SERVER_WAIT_S // 60} minutes)",
            file=sys.stderr,
            flush=True,
        )
        for url in split_urls(cfg.base_url):
            wait_until_ready(url, None, SERVER_WAIT_S)
        hot_load(
            cfg,
            save_checkpoint(
                run_dir, start - 1, model, optimizer, scheduler, horizon, accelerator, cfg.keep_optimizer_states
            ),
        )
    accelerator.wait_for_everyone()  # no process plays before the server has the adapter it is to play
    metrics: list[dict] = []
    bar = tqdm(
        range(start, cfg.steps + 1),
        desc=f"train {cfg.variant}",
        disable=not progress or not accelerator.is_main_process,
    )
    for step in bar:
        # 1-3. rollouts (this process's share of the groups), rewards, advantages
        began = time.perf_counter()
        unwrapped.eval()
        with accelerator.split_between_processes(rollouts.groups_for_step(groups, step, cfg.groups_per_step)) as mine:
            played = rollouts.play_groups(cfg, players, list(mine), step)
            advantage = rollouts.advantages(cfg, list(mine), played)
            # the step's figures cover every process's games, in one exchange: (reward, deal) of a finished game,
            # None of a failed one
            results = gather_object(
                [
                    (rollouts.reward(e, g.role), e.state.outcome().deal) if e.finished else None
                    for g, eps in zip(mine, played)
                    for e in eps
                ]
            )
        finished = [r for r in results if r is not None]
        rewards, deals, failed = [r for r, _ in finished], [d for _, d in finished], len(results) - len(finished)
        rollout_s = time.perf_counter() - began
        # 4. samples: one per trained turn, carrying its episode's advantage
        samples = [
            s
            for g, eps, adv in zip(mine, played, advantage)
            for e, a in zip(eps, adv)
            if a is not None
            for s in turn_samples(e, g.role.value, a, tokenizer, cfg.max_sequence_tokens, cfg.max_completion_tokens)
        ]
        samples = pool_of(samples, accelerator)
        if scheduler is None:  # the cosine horizon: the optimiser steps the first step really makes, every step
            horizon = max(1, cfg.steps * cfg.epochs * math.ceil(len(samples) / cfg.batch_size))
            scheduler = get_cosine_schedule_with_warmup(optimizer, 0, horizon)
        # 5. reference (adapter off) and old log-probs
        began = time.perf_counter()
        model.eval()
        fill_pool_logprobs(unwrapped, samples, accelerator, tokenizer.pad_token_id, layout.mini_batch, reference=True)
        if cfg.old_logprobs == "before_epochs":
            fill_pool_logprobs(
                unwrapped, samples, accelerator, tokenizer.pad_token_id, layout.mini_batch, reference=False
            )
        # 6. epochs of mini-batches
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        result = optimise(
            cfg,
            layout,
            model,
            optimizer,
            scheduler,
            accelerator,
            samples,
            tokenizer.pad_token_id,
            seed=cfg.seed * 1_000_003 + step,
        )
        train_s = time.perf_counter() - began
        tokens = sum(len(s.prompt_ids) + len(s.completion_ids) for s in samples) * cfg.epochs
        # 7. save, hot-load, validate
        began = time.perf_counter()
        if accelerator.is_main_process:
            checkpoint = save_checkpoint(
                run_dir, step, model, optimizer, scheduler, horizon, accelerator, cfg.keep_optimizer_states
            )
            if cfg.rollout_backend == "vllm":
                hot_load(cfg, checkpoint)
                if step == start:
                    check_adapter_changes_output(players, trained)
        accelerator.wait_for_everyone()  # the next step's rollouts are played by the adapter just trained
        sync_s = time.perf_counter() - began
        row = {
            "step": step,
            "episodes": len(rewards),
            "failed_episodes": failed,
            "samples": len(samples),
            "world_size": layout.world_size,
            "per_device_batch": layout.per_device,
            "grad_accumulation": layout.accumulation,
            "reward": sum(rewards) / max(1, len(rewards)),
            "deal_rate": sum(deals) / max(1, len(deals)),
            **result,
            "lr": scheduler.get_last_lr()[0],
            "rollout_s": rollout_s,
            "train_s": train_s,
            "sync_s": sync_s,
            "samples_per_s": len(samples) * cfg.epochs / max(train_s, 1e-9),
            "tokens_per_s": tokens / max(train_s, 1e-9),
            "peak_memory_gb": peak_memory_gb(),
        }
        if accelerator.is_main_process and cfg.val_interval and step % cfg.val_interval == 0:
            table = rollouts.validate(cfg, players, source)
            table.insert(0, "step", step)
            path = run_dir / "validation.csv"
            table.to_csv(path, mode="a", header=not path.exists(), index=False)
            row["val_reward"] = float(table[table["condition"] == "ALL"]["reward"].mean())
        metrics.append(row)
        accelerator.log({k: v for k, v in row.items() if isinstance(v, (int, float))}, step=step)
        if accelerator.is_main_process:  # the CSV is rewritten every step: a run stopped with Ctrl-C has it
            with open(run_dir / "metrics.jsonl", "a") as handle:
                handle.write(json.dumps(row) + "\n")
            pd.DataFrame([json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]).to_csv(
                run_dir / "metrics.csv", index=False
            )
            bar.set_postfix(reward=f"{row['reward']:.3f}", loss=f"{row['loss']:.4f}")
    accelerator.end_training()
    return Run(run_dir, metrics)
