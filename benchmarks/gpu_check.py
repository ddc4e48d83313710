"""Every GPU path in one command, on a GPU machine without internet, within a deadline: what works, how fast.

    python -m benchmarks.gpu_check --out gpu_check              # one 80-140 GB GPU: at most 8 minutes
    python -m benchmarks.gpu_check --dry-run --out /tmp/gc      # CPU: the same steps at tiny size (CI runs this)
    python -m benchmarks.gpu_check bundle --out .gpu_bundle     # wheels for a GPU machine that lacks the app's
    python -m benchmarks.gpu_check rehearse                     # that machine's packages here, and the dry run

It builds a model of Qwen3-8B's exact shape with random bf16 weights, the project's stand-in for
Qwen3's tokenizer (its vocabulary filled to the model's 151,936 ids) and eight random adapters of
the released ranks (16; 32 for the joint ones); nothing is downloaded. Where the real weights are
on disk, `--model DIR --adapters-dir DIR` checks them instead. Then the parts, most valuable first
(the path a Space takes, transformers + peft on one GPU, before the vLLM one):

  hf       the in-process transformers + peft backend in bf16 with all eight adapters: tokens/s for one
           game, 8 and 32 games at once on one adapter, 32 spread over the base and all eight; peak memory.
  arena    the arena's controller (`bargain.arena.controller.Arena`, as the app drives it) on that backend,
           with a SQLite store: 20 simulated participants playing model arms at once; the server's time from
           a submitted move to the agent's answer, p50 and p95; moves lost.
  train    one training step of the buyer-grpo preset at this model's size, rollouts from the model being
           trained (the hf backend), sized to prove the path: one epoch, a few groups, short replies;
           seconds per phase and peak memory.
  serve    (only where vLLM is installed) `bargain serve` and `bargain evaluate` through it: requests/s and
           tokens/s; then the same concurrent games all on one adapter against games spread over all eight.
  hotload  (only with vLLM) the same training step with rollouts from that server, the new adapter loaded
           into it after the step, as the trainer does.
  pytest   `python -m pytest -m gpu tests/test_gpu.py`, the GPU tests, on the server already running.

Each figure comes with what the paper's setting would need of it (e.g. GPUs for 100 participants at once).
Random weights never stop on their own, so every reply runs to its token cap (`--reply-tokens`, a real reply's
typical length). A part whose package or GPU is missing is skipped with the reason; one that fails is reported
(its traceback in gpu_check.log) and the others still run. The whole run has one deadline (`--minutes`, 8):
a part running at the deadline is cut, keeping the figures it had measured, and the parts after it are
reported as not run. `gpu_check.json` and `gpu_check.md` are written in `--out` after every part, so a run
killed outright keeps what it measured; `--out` holds only them and the logs (runs and checkpoints go in a
temporary folder). Every process it starts is stopped when it ends, is interrupted or is
killed.

`--dry-run` runs the same code at tiny size on a CPU: a two-layer model, a handful of games, the project's
stub OpenAI-compatible server in place of vLLM (after `bargain serve --dry-run` has shown the vLLM command it
would run), float32. Its figures measure nothing; it keeps the script working. `bundle` and `rehearse` are
benchmarks/gpu_bundle.py's: the wheels a machine without the app's packages needs, and a rehearsal of that
machine here.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.metadata
import json
import math
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import asdict, dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__" and not __package__:  # `python benchmarks/gpu_check.py`: import as `-m` would
    # Run as a script, Python puts benchmarks/ first on the path, where benchmarks/train.py hides the train package.
    sys.path[:] = [str(ROOT)] + [entry for entry in sys.path if Path(entry or ".").resolve() != ROOT / "benchmarks"]
PARTS = ("hf", "arena", "train", "serve", "hotload", "pytest")  # in the order they run: most valuable first
IN_PROCESS = ("hf", "arena", "train")  # need a GPU (or --dry-run)
SERVED = ("serve", "hotload")  # need vLLM too (or --dry-run, with the stub server)
GPU_SHARE = 0.45  # of the GPU's memory for vLLM: the trainer runs beside it
SERVER_START_S = 900
PARTICIPANTS_AT_ONCE = 100  # the load a study plans for, against which each figure is set
PATIENCE_S = 10.0  # the longest a person should wait for the agent's answer


@dataclass(frozen=True)
class Sizes:
    """How much each part plays."""

    shape: str
    reply_tokens: int
    hf_games: tuple[int, ...]  # concurrent games on one adapter
    hf_mixed_games: tuple[int, ...]  # concurrent games over the base model and the eight adapters
    participants: int
    arena_rounds: int
    think_s: float
    train_groups: int
    group_size: int
    train_rounds: int
    train_batch: int
    eval_trials: int  # trials per cell of paper-rl-test's 8 scenarios x 4 conditions
    concurrent_games: int  # one adapter against mixed adapters, through the server
    # Where pytest looks for GPU tests: only there, since collecting the whole suite imports what the GPU machine
    # lacks (gradio...) and fails before a test runs.
    tests: tuple[str, ...] = ("tests/test_gpu.py",)


SIZES = {
    "full": Sizes(
        "qwen3-8b",
        reply_tokens=200,
        hf_games=(1, 8, 32),
        hf_mixed_games=(32,),
        participants=20,
        arena_rounds=2,
        think_s=1.0,
        train_groups=2,
        group_size=4,
        train_rounds=2,
        train_batch=16,
        eval_trials=1,
        concurrent_games=32,
    ),
    "dry-run": Sizes(
        "tiny",
        reply_tokens=16,
        hf_games=(1, 4),
        hf_mixed_games=(4,),
        participants=4,
        arena_rounds=2,
        think_s=0.05,
        train_groups=2,
        group_size=4,
        train_rounds=2,
        train_batch=8,
        eval_trials=1,
        concurrent_games=8,
    ),
}


class OutOfTime(BaseException):
    """The run's deadline passed (raised by its timer wherever the run is; a BaseException, so that no part's own
    `except Exception` takes it for one of its errors)."""


def cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def needs_gpu(dry_run: bool) -> str | None:
    """Why a GPU part cannot run here (None: it can)."""
    return None if dry_run or cuda() else "no CUDA GPU here (--dry-run runs the parts on a CPU at tiny size)"


def needs_vllm(dry_run: bool) -> str | None:
    """Why a part that needs a vLLM server cannot run here."""
    from bargain.agents.serve import vllm_missing

    return needs_gpu(dry_run) or (None if dry_run else vllm_missing())


@contextmanager
def model_server(model: Path, adapters: Path, out: Path, dry_run: bool) -> Iterator[str]:
    """The base model and the eight adapters behind an OpenAI-compatible URL, for as long as the block runs:
    `bargain serve` (vLLM), or with `dry_run` the stub server after `bargain serve --dry-run`."""
    from bargain.agents.serve import serve_command, serving

    if dry_run:
        from bargain.agents.arms import ADAPTERS
        from bargain.agents.stub_server import StubServer

        shown = subprocess.run(
            [*serve_command(model, adapters, 8000, GPU_SHARE), "--dry-run"], capture_output=True, text=True, cwd=ROOT
        )
        (out / "serve.log").write_text(shown.stdout + shown.stderr)
        if shown.returncode != 0 or "--enable-lora" not in shown.stdout:
            raise RuntimeError(f"`bargain serve --dry-run` failed ({shown.returncode}): {shown.stderr.strip()[-300:]}")
        with StubServer([str(model), *ADAPTERS]) as server:
            yield server.url
        return
    with serving(model, adapters, out / "serve.log", GPU_SHARE, SERVER_START_S) as url:
        yield url


def gpu_memory() -> dict:
    """This process's peak GPU memory since the last reset, and the device's memory in use now (every process's)."""
    if not cuda():
        return {}
    import torch

    free, total = torch.cuda.mem_get_info()
    return {"peak_gib": torch.cuda.max_memory_allocated() / 2**30, "device_used_gib": (total - free) / 2**30}


def release() -> None:
    """Give back what a part left in this process's GPU cache, and start its peak memory afresh."""
    gc.collect()
    if cuda():
        import torch

        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


# --- the parts: each fills `figures` as it measures, so that a part cut at the deadline keeps what it had -----


def part_hf(figures: dict, backend, sizes: Sizes) -> None:
    """The in-process backend: tokens/s per concurrency, one adapter and mixed, and peak memory."""
    from benchmarks.hf import throughput

    throughput(backend, 2, True, 4)  # warm-up: the first calls pay for lazy initialisation
    figures.update({"device": backend.device, "dtype": backend.describe()["dtype"], "reply_tokens": sizes.reply_tokens})
    for kind, counts in (("one_adapter", sizes.hf_games), ("mixed_adapters", sizes.hf_mixed_games)):
        for games in counts:
            rate = throughput(backend, games, kind == "mixed_adapters", sizes.reply_tokens)["tokens_per_s"]
            figures[f"{kind}_tokens_per_s_{games}"] = rate
            figures.update(gpu_memory())
    # Two replies are in flight per simultaneous game: each stands for one person waiting on the agent.
    games = max(sizes.hf_mixed_games)
    replies = 2 * games
    seconds = sizes.reply_tokens / (figures[f"mixed_adapters_tokens_per_s_{games}"] / replies)
    figures["reply_s_at_most_in_flight"] = seconds
    figures["need"] = (
        f"a {sizes.reply_tokens}-token reply takes {seconds:.1f} s with {replies} in flight over mixed "
        f"adapters: {PARTICIPANTS_AT_ONCE} participants at once need "
        f"{math.ceil(PARTICIPANTS_AT_ONCE / replies)} such GPU(s) at that wait"
        + ("" if seconds <= PATIENCE_S else f", more for a wait under {PATIENCE_S:.0f} s")
    )


def part_arena(figures: dict, backend, sizes: Sizes) -> None:
    """The arena's controller on the backend: simulated participants playing model arms at once; the server's
    time from a submitted move to the agent's answer, and every move checked in the store."""
    from bargain.agents.backends import PRESETS, Backends
    from bargain.arena.controller import Arena
    from bargain.arena.inputs import Setup
    from bargain.engine.game import Condition
    from bargain.engine.trial import Mode, Role
    from bargain.records.store import Store

    arms = ("arm:joint-grpo", "arm:joint-cispo", "arm:base")  # each plays either role
    times: list[float] = []
    errors: list[str] = []

    async def participant(arena: Arena, i: int) -> None:
        rng = random.Random(i)
        role = Role.BUYER if i % 2 else Role.SELLER
        try:
            view = await arena.start(
                Setup(
                    role=role,
                    arm=arms[i % len(arms)],
                    condition=Condition.BOTH_UNAWARE,
                    mode=Mode.SIMULTANEOUS,
                    rounds=sizes.arena_rounds,
                    scenario="low",
                ),
                player=f"gpu-check-{i}",
            )
            while view.status == "active":
                if not view.your_turn:
                    raise RuntimeError(view.error or "the game stopped with the turn not the person's")
                await asyncio.sleep(sizes.think_s * rng.uniform(0.5, 1.5))
                price = view.your_price * (0.7 if role is Role.BUYER else 1.3)
                began = time.perf_counter()
                view = await arena.move(view.game_id, view.round, "OFFER", f"{price:.2f}", "my offer")
                times.append(time.perf_counter() - began)
        except Exception as exc:  # a participant's failure is the part's failure, reported with the others'
            errors.append(f"{type(exc).__name__}: {exc}")

    with tempfile.TemporaryDirectory() as root:
        store = Store(f"sqlite:///{Path(root) / 'arena.db'}")
        arena = Arena(
            store,
            Backends(backend),
            arms=arms,
            move_deadline=300.0,
            sampling=replace(PRESETS["trained"], max_tokens=sizes.reply_tokens),
        )

        async def crowd() -> None:
            await asyncio.gather(*(participant(arena, i) for i in range(sizes.participants)))

        try:
            asyncio.run(crowd())
        finally:
            moves = store.moves_frame()
            stored = int((moves["actor"] == "human").sum()) if len(moves) else 0
            games = store.games_frame()
            figures.update(
                {
                    "participants": sizes.participants,
                    "arms": list(arms),
                    "moves": len(times),
                    "moves_stored": stored,
                    "lost": len(times) - stored,
                    "games_finished": int((games["status"] == "finished").sum()) if len(games) else 0,
                }
            )
            if times:
                figures.update(
                    {"server_ms_p50": 1000 * statistics.median(times), "server_ms_p95": 1000 * percentile(times, 95)}
                )
            figures.update(gpu_memory())
    if errors or figures["lost"]:
        raise RuntimeError(f"{len(errors)} participants failed, {figures['lost']} moves lost: {errors[:3]}")
    p95 = figures["server_ms_p95"] / 1000
    figures["need"] = (
        f"{sizes.participants} participants per GPU answer within {p95:.1f} s (p95): "
        f"{PARTICIPANTS_AT_ONCE} at once need {math.ceil(PARTICIPANTS_AT_ONCE / sizes.participants)} "
        f"GPUs at that wait" + ("" if p95 <= PATIENCE_S else f", more for under {PATIENCE_S:.0f} s")
    )


def part_train(figures: dict, model: Path, work: Path, sizes: Sizes, url: str | None = None) -> None:
    """One step of the buyer-grpo preset, sized to prove the path: rollouts from the model being trained, or with
    `url` from that server, the new adapter loaded into it after the step. Its run directory goes in `work`."""
    from train import config as configuration
    from train.trainer import run

    release()
    preset = configuration.load(ROOT / "train" / "configs" / "buyer-grpo.yaml")
    overrides = {
        "model": str(model),
        "steps": 1,
        "epochs": 1,
        "groups_per_step": sizes.train_groups,
        "group_size": sizes.group_size,
        "max_rounds": sizes.train_rounds,
        "batch_size": sizes.train_batch,
        "max_completion_tokens": sizes.reply_tokens,
        "val_interval": 0,
        "output_dir": str(work / ("hotload" if url else "train")),
        **({"rollout_backend": "vllm", "base_url": url} if url else {"rollout_backend": "hf"}),
    }
    cfg = configuration.load(ROOT / "train" / "configs" / "buyer-grpo.yaml", overrides)
    (step,) = run(cfg, progress=False).metrics
    figures.update(
        {
            key: step[key]
            for key in ("episodes", "samples", "rollout_s", "train_s", "sync_s", "tokens_per_s", "peak_memory_gb")
        }
    )
    saved = Path(cfg.output_dir) / "checkpoints" / "step_1" / "buyer-grpo" / "adapter_model.safetensors"
    figures["adapter_mib"] = saved.stat().st_size / 2**20  # the step's adapter, as saved (and hot-loaded)
    figures.update(gpu_memory())
    # The preset's step: its groups of episodes, as many samples per episode as here, over its epochs.
    preset_samples = preset.groups_per_step * preset.group_size * step["samples"] / max(1, step["episodes"])
    minutes = step["train_s"] * preset_samples * preset.epochs / max(1, step["samples"]) / 60
    figures["need"] = (
        f"the preset's step ({preset.groups_per_step} groups of {preset.group_size}, {preset.epochs} "
        f"epochs, about {preset_samples:,.0f} samples) would train for about {minutes:.0f} min at "
        f"this rate, its rollouts aside"
    )
    release()


def part_serve(figures: dict, url: str, model: Path, out: Path, work: Path, sizes: Sizes) -> None:
    """`evaluate` through the server (its log in `out`, its run in `work`), then one adapter against mixed adapters
    at the same concurrency."""
    from bargain.agents.backends.build import build_backend
    from bargain.cli import main as bargain
    from bargain.engine.scenarios import GRIDS
    from benchmarks.hf import throughput

    run = work / "evaluate"
    tokens = f"max_tokens={sizes.reply_tokens}"
    start = time.perf_counter()
    with open(out / "evaluate.log", "w") as log, redirect_stdout(log):  # its summary table goes to the log
        code = bargain(
            [
                "evaluate",
                "--grid",
                "paper-rl-test",
                "--trials",
                str(sizes.eval_trials),
                "--buyer",
                "arm:buyer-grpo",
                "--seller",
                "arm:base",
                "--seller-preset",
                "frozen-opponent",
                "--buyer-sampling",
                tokens,
                "--seller-sampling",
                tokens,
                "--backend",
                "vllm",
                "--base-url",
                url,
                "--model",
                str(model),
                "--out",
                str(run),
                "--quiet",
            ]
        )
    elapsed = time.perf_counter() - start
    if code != 0:
        raise RuntimeError(f"evaluate exited with {code}")
    config = json.loads((run / "config.json").read_text())
    if config["status"] != "finished":
        raise RuntimeError(f"evaluate left {config['failed_games']} of {config['n_trials']} games unfinished")
    usage = config["usage"]
    calls = sum(side["model_calls"] for side in usage.values())
    generated = sum(side["completion_tokens"] for side in usage.values())
    figures.update(
        {
            "evaluate_games": config["n_trials"],
            "evaluate_s": elapsed,
            "requests": calls,
            "requests_per_s": calls / elapsed,
            "tokens_per_s": generated / elapsed,
        }
    )
    backend = build_backend("vllm", base_url=url, model=str(model))
    figures["concurrent_games"] = sizes.concurrent_games
    figures["one_adapter_tokens_per_s"] = throughput(backend, sizes.concurrent_games, False, sizes.reply_tokens)[
        "tokens_per_s"
    ]
    figures["mixed_adapters_tokens_per_s"] = throughput(backend, sizes.concurrent_games, True, sizes.reply_tokens)[
        "tokens_per_s"
    ]
    figures["mixed_over_one"] = figures["mixed_adapters_tokens_per_s"] / figures["one_adapter_tokens_per_s"]
    figures.update(gpu_memory())
    grid = GRIDS["paper-rl-test"]  # one pair of arms over the paper's test grid: scenarios x 4 conditions x trials
    games = (grid.stop - grid.start) * 4 * grid.trials_per_cell
    figures["need"] = (
        f"one pair of arms over paper-rl-test ({games:,} games) at this rate: about "
        f"{games * elapsed / config['n_trials'] / 60:.0f} min"
    )


def part_pytest(figures: dict, out: Path, sizes: Sizes, server: tuple[str, Path, Path] | None) -> None:
    """The GPU-only tests (they skip themselves where there is no GPU or no vLLM), on `server` where one runs."""
    env = dict(os.environ)
    if server is not None:  # the tests use it rather than start a second one
        env.update(zip(("BARGAIN_GPU_SERVER", "BARGAIN_GPU_MODEL", "BARGAIN_GPU_ADAPTERS"), map(str, server)))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "gpu", "-p", "no:cacheprovider", "-rs", *sizes.tests],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    (out / "pytest.log").write_text(done.stdout + done.stderr)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    figures["summary"] = lines[-1].strip("= ") if lines else "no output"
    if done.returncode not in (0, 5):  # 5: no test selected
        raise RuntimeError(f"pytest -m gpu: {figures['summary']} (see pytest.log)")


# --- running and reporting ------------------------------------------------------------------------------


def machine() -> dict:
    """What this ran on."""
    import torch

    versions = {}
    for package in ("torch", "transformers", "peft", "vllm", "accelerate", "sqlalchemy"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    memory = torch.cuda.mem_get_info()[1] / 2**30 if gpu else None
    return {
        "gpu": gpu,
        "gpu_memory_gib": memory,
        "gpus": torch.cuda.device_count(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "versions": versions,
    }


class Report:
    """The parts' outcomes, written to gpu_check.json and gpu_check.md after each one, and the run's deadline."""

    def __init__(self, out: Path, mode: str, sizes: Sizes, minutes: float):
        self.out, self.minutes = out, minutes
        self.ends = time.monotonic() + 60 * minutes
        self.data = {"mode": mode, "sizes": asdict(sizes), "deadline_min": minutes, "machine": machine(), "parts": {}}

    @contextmanager
    def deadline(self) -> Iterator[None]:
        """Raise OutOfTime wherever the run is when its deadline passes (the timer is stopped at the end)."""

        def expire(*_) -> None:
            raise OutOfTime

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, max(0.001, self.ends - time.monotonic()))
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    @property
    def late(self) -> bool:
        return time.monotonic() >= self.ends

    def attempt(self, name: str, missing: str | None, work: Callable[[dict], None]) -> None:
        """Run one part (unless `missing` says why it cannot run here, or the deadline has passed), record and
        show its outcome with whatever figures it measured."""
        print(f"[{name}] ...", flush=True)
        start, figures = time.perf_counter(), {}
        if missing:
            outcome = {"status": "skipped", "reason": missing}
        elif self.late:
            outcome = self.not_run()
        else:
            try:
                work(figures)
                outcome = {"status": "passed", **figures}
            except OutOfTime:
                outcome = {"status": "cut", "reason": f"the {self.minutes:g}-minute deadline passed", **figures}
            except Exception as exc:  # one part's failure must not hide the others' results
                outcome = {**self.failure(name, exc), **figures}
        self.record(name, outcome, time.perf_counter() - start)

    def not_run(self) -> dict:
        return {"status": "not run", "reason": f"the {self.minutes:g}-minute deadline had passed"}

    def failure(self, name: str, exc: BaseException) -> dict:
        """A failed part's outcome; its traceback goes to gpu_check.log."""
        with open(self.out / "gpu_check.log", "a") as log:
            log.write(f"--- {name}\n{''.join(traceback.format_exception(exc))}\n")
        return {"status": "failed", "error": f"{type(exc).__name__}: {exc}"[:500]}

    def record(self, name: str, outcome: dict, seconds: float) -> None:
        outcome["seconds"] = seconds
        self.data["parts"][name] = outcome
        print(f"[{name}] {self.line(name, outcome)}", flush=True)
        self.write()

    @staticmethod
    def line(name: str, o: dict) -> str:
        """One part's outcome and figures in a line (as far as it got)."""
        said = {
            "skipped": f"skipped: {o.get('reason')}",
            "not run": f"not run: {o.get('reason')}",
            "cut": f"cut after {o['seconds']:.0f} s: {o.get('reason')}",
            "failed": f"FAILED after {o['seconds']:.0f} s: {o.get('error')}",
        }.get(o["status"])
        figures = Report.figures(name, o)
        return "; ".join(text for text in (said, figures, o.get("need") and f"needs: {o['need']}") if text)

    @staticmethod
    def figures(name: str, o: dict) -> str:
        if name == "hf" and "device" in o:
            rates = [
                f"{key.rsplit('_', 1)[1]} {'mixed' if key.startswith('mixed') else 'one adapter'} {o[key]:.0f}"
                for key in o
                if "_tokens_per_s_" in key
            ]
            return f"{o['device']} {o['dtype']}, tokens/s by games at once: {', '.join(rates)}" + (
                f"; peak {o['peak_gib']:.1f} GiB" if "peak_gib" in o else ""
            )
        if name == "arena" and "server_ms_p95" in o:
            return (
                f"{o['participants']} participants, {o['moves']} moves: submit to the agent's answer p50 "
                f"{o['server_ms_p50']:.0f} ms, p95 {o['server_ms_p95']:.0f} ms; {o['lost']} lost"
            )
        if name in ("train", "hotload") and "train_s" in o:
            return (
                f"{o['episodes']} episodes, {o['samples']} samples: rollout {o['rollout_s']:.1f} s, train "
                f"{o['train_s']:.1f} s, save{' and hot-load' if name == 'hotload' else ''} {o['sync_s']:.1f} s, "
                f"peak {o['peak_memory_gb']:.1f} GB"
            )
        if name == "serve" and "requests_per_s" in o:
            text = (
                f"evaluate {o['evaluate_games']} games: {o['requests_per_s']:.1f} requests/s, "
                f"{o['tokens_per_s']:.0f} tokens/s"
            )
            if "mixed_over_one" in o:
                text += (
                    f"; {o['concurrent_games']} games at once: one adapter {o['one_adapter_tokens_per_s']:.0f} "
                    f"tokens/s, mixed {o['mixed_adapters_tokens_per_s']:.0f} ({o['mixed_over_one']:.2f}x)"
                )
            return text
        return o.get("summary", "")

    def write(self) -> None:
        (self.out / "gpu_check.json").write_text(json.dumps(self.data, indent=2) + "\n")
        m = self.data["machine"]
        lines = [
            f"# GPU check ({self.data['mode']})",
            "",
            f"{m['gpu'] or 'no GPU'}"
            + (f", {m['gpu_memory_gib']:.0f} GiB" if m["gpu_memory_gib"] else "")
            + f"; {m['cpus']} CPUs; Python {m['python']}; "
            + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v),
            "",
            "| part | outcome | seconds | figures |",
            "|---|---|---:|---|",
        ]
        for name, o in self.data["parts"].items():
            lines.append(f"| {name} | {o['status']} | {o['seconds']:.0f} | {self.line(name, o)} |")
        (self.out / "gpu_check.md").write_text("\n".join(lines) + "\n")

    def failed(self) -> list[str]:
        return [name for name, o in self.data["parts"].items() if o["status"] == "failed"]

    def unfinished(self) -> list[str]:
        return [name for name, o in self.data["parts"].items() if o["status"] in ("cut", "not run")]


def build(root: Path, shape: str) -> tuple[Path, Path]:
    """The random model and its eight adapters."""
    from bargain.agents import tiny

    model = tiny.build_model(root / "model", shape=shape)
    release()
    return model, tiny.build_adapters(model, root / "adapters")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["bundle"], ["rehearse"]):
        return tools(argv)
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.gpu_check",
        description=__doc__.splitlines()[0],
        epilog="Subcommands: `bundle --out DIR` (the wheels a GPU machine without the "
        "app's packages needs) and `rehearse` (that machine's packages here, and "
        "the dry run); see their --help.",
    )
    parser.add_argument("--out", default="gpu_check", help="directory for gpu_check.json, gpu_check.md and the logs")
    parser.add_argument("--dry-run", action="store_true", help="tiny size on a CPU, the stub server in place of vLLM")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated parts to run ({', '.join(PARTS)})")
    parser.add_argument(
        "--minutes",
        type=float,
        default=8.0,
        help="the deadline of the whole run (default 8): parts after it are reported as not run",
    )
    parser.add_argument("--reply-tokens", type=int, help="tokens per model reply (default 200; 16 with --dry-run)")
    parser.add_argument(
        "--model",
        help="a model directory to check instead of a random one (e.g. Qwen3-8B's own "
        "weights, already on disk); needs --adapters-dir",
    )
    parser.add_argument("--adapters-dir", help="its eight adapters, one folder per arm (DIR/<arm>/)")
    args = parser.parse_args(argv)
    mode = "dry-run" if args.dry_run else "full"
    sizes = SIZES[mode] if args.reply_tokens is None else replace(SIZES[mode], reply_tokens=args.reply_tokens)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}: choose from {', '.join(PARTS)}")
    if (args.model is None) != (args.adapters_dir is None):
        parser.error("--model and --adapters-dir go together")
    if not args.minutes > 0:
        parser.error("--minutes must be above 0")
    given = (Path(args.model), Path(args.adapters_dir)) if args.model else None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    previous = signal.signal(
        signal.SIGTERM, lambda *_: sys.exit(143)
    )  # unwinds through the `finally` that stops the server
    try:
        return check(out, mode, sizes, [p for p in PARTS if p in parts], args.dry_run, given, args.minutes)
    finally:
        signal.signal(signal.SIGTERM, previous)


def tools(argv: list[str]) -> int:
    """`bundle` and `rehearse` (benchmarks/gpu_bundle.py)."""
    from benchmarks import gpu_bundle

    parser = argparse.ArgumentParser(
        prog=f"python -m benchmarks.gpu_check {argv[0]}",
        description={
            "bundle": "Gather the wheels the GPU check needs on a Python 3.12 GPU machine that "
            "lacks the app's packages "
            "(and has no network) into an ignored folder of the repository; print their size and the one "
            "command line that installs them there offline and runs the check.",
            "rehearse": "Build a Python 3.12 environment of the GPU machine's packages here, "
            "install the bundle into it "
            "as that machine would, and run the check's dry run of the parts that run there (about 5 GB "
            "and a few minutes; the environment is deleted afterwards).",
        }[argv[0]],
    )
    if argv[0] == "bundle":
        parser.add_argument(
            "--out",
            default=".gpu_bundle",
            help="an ignored folder of the repository (default .gpu_bundle), emptied first",
        )
        parser.add_argument(
            "--budget-mib",
            type=float,
            default=gpu_bundle.BUDGET_MIB,
            help="the most the bundle and the repository may weigh together",
        )
    else:
        parser.add_argument("--venv", help="build the environment here and keep it (default: a temporary one)")
    args = parser.parse_args(argv[1:])
    try:
        if argv[0] == "bundle":
            print(gpu_bundle.describe(gpu_bundle.bundle(Path(args.out), args.budget_mib)))
            return 0
        return gpu_bundle.rehearse(
            ",".join(p for p in PARTS if p not in SERVED), Path(args.venv) if args.venv else None
        )
    except gpu_bundle.BundleError as exc:
        print(f"{argv[0]}: {exc}", file=sys.stderr)
        return 2


def check(
    out: Path,
    mode: str,
    sizes: Sizes,
    parts: list[str],
    dry_run: bool,
    given: tuple[Path, Path] | None = None,
    minutes: float = 8.0,
) -> int:
    """Build the model (unless `given`: a model directory and its adapters), run the parts in order within the
    deadline, report; 1 if a part failed."""
    report = Report(out, mode, sizes, minutes)
    print(
        f"GPU check ({mode}, at most {minutes:g} min): {report.data['machine']['gpu'] or 'no GPU'}; writing "
        f"{out}/gpu_check.json",
        flush=True,
    )
    missing = {name: needs_gpu(dry_run) for name in IN_PROCESS} | {name: needs_vllm(dry_run) for name in SERVED}
    for name in parts:
        if missing.get(name):
            report.attempt(name, missing[name], lambda figures: None)
    runnable = [name for name in parts if name in missing and missing[name] is None]
    try:
        with report.deadline(), tempfile.TemporaryDirectory() as scratch:
            model = adapters = None
            if runnable and given:
                model, adapters = given
            elif runnable:  # a model of Qwen3-8B's shape is only built where a part can use it
                began = time.perf_counter()
                try:
                    model, adapters = build(Path(scratch), sizes.shape)
                    print(
                        f"[build] {sizes.shape} model and eight adapters in {time.perf_counter() - began:.0f} s",
                        flush=True,
                    )
                except Exception as exc:
                    for name in runnable:
                        report.record(name, report.failure(name, exc), time.perf_counter() - began)
                    runnable = []
            local = [name for name in ("hf", "arena") if name in runnable]
            if local:
                with hf_backend(model, adapters, report, local) as backend:
                    if "hf" in local:
                        report.attempt("hf", None, lambda figures: part_hf(figures, backend, sizes))
                    if "arena" in local:
                        report.attempt("arena", None, lambda figures: part_arena(figures, backend, sizes))
            if "train" in runnable:
                report.attempt("train", None, lambda figures: part_train(figures, model, Path(scratch), sizes))
            served = [name for name in SERVED if name in runnable]
            if served:
                serve_parts(report, served, parts, model, adapters, out, Path(scratch), sizes, dry_run)
            elif "pytest" in parts:
                report.attempt("pytest", None, lambda figures: part_pytest(figures, out, sizes, None))
    except OutOfTime:  # between parts (the model's build, a server's start): what was left is not run
        pass
    for name in parts:
        if name not in report.data["parts"]:
            report.record(name, report.not_run(), 0.0)
    failed, unfinished = report.failed(), report.unfinished()
    print(f"\n{out / 'gpu_check.md'}:\n" + (out / "gpu_check.md").read_text(), flush=True)
    if unfinished:
        print(f"not finished within {minutes:g} minutes: {', '.join(unfinished)}", file=sys.stderr)
    if failed:
        print(f"failed: {', '.join(failed)} (tracebacks in {out / 'gpu_check.log'})", file=sys.stderr)
    return 1 if failed else 0


@contextmanager
def hf_backend(model: Path, adapters: Path, report: Report, parts: list[str]) -> Iterator[object]:
    """The in-process backend with the eight adapters, shared by the parts that use it and released after them;
    a backend that cannot load fails those parts."""
    from bargain.agents.arms import ADAPTERS
    from bargain.agents.backends.hf import HFBackend

    release()
    began = time.perf_counter()
    try:
        backend = HFBackend(str(model), {n: adapters / n for n in ADAPTERS})
    except Exception as exc:
        for name in parts:
            report.record(name, report.failure(name, exc), time.perf_counter() - began)
        parts.clear()
        yield None
        return
    print(f"[load] the hf backend on {backend.device} in {time.perf_counter() - began:.0f} s", flush=True)
    try:
        yield backend
    finally:
        del backend
        release()


def serve_parts(
    report: Report,
    served: list[str],
    parts: list[str],
    model: Path,
    adapters: Path,
    out: Path,
    work: Path,
    sizes: Sizes,
    dry_run: bool,
) -> None:
    """The parts that need the model server, and the GPU tests on the same server (runs in `work`, logs in `out`)."""
    began = time.perf_counter()
    try:
        with model_server(model, adapters, out, dry_run) as url:
            print(f"[server] serving at {url}", flush=True)
            if "serve" in served:
                report.attempt("serve", None, lambda figures: part_serve(figures, url, model, out, work, sizes))
            if "hotload" in served:  # after serve: it replaces buyer-grpo on the server
                report.attempt("hotload", None, lambda figures: part_train(figures, model, work, sizes, url))
            if "pytest" in parts:
                report.attempt("pytest", None, lambda figures: part_pytest(figures, out, sizes, (url, model, adapters)))
    except Exception as exc:  # the server did not start: its parts fail, the tests still run
        for name in served:
            if name not in report.data["parts"]:
                report.record(name, report.failure(name, exc), time.perf_counter() - began)
        if "pytest" in parts and "pytest" not in report.data["parts"]:
            report.attempt("pytest", None, lambda figures: part_pytest(figures, out, sizes, None))


if __name__ == "__main__":
    sys.exit(main())
