"""Every GPU path in one command, on a GPU machine without internet: what works, and how fast.

    python -m benchmarks.gpu_check --out gpu_check            # one 80-140 GB GPU, about 10 minutes
    python -m benchmarks.gpu_check --quick --out gpu_check    # fewer games, about 5 minutes
    python -m benchmarks.gpu_check --dry-run --out /tmp/gc    # CPU: the same steps at tiny size (CI runs this)

It builds a model of Qwen3-8B's exact shape with random bf16 weights, the project's stand-in for
Qwen3's tokenizer (its vocabulary filled to the model's 151,936 ids) and eight random adapters of
the released ranks (16; 32 for the joint ones); nothing is downloaded. Where the real weights are
on disk, `--model DIR --adapters-dir DIR` checks them instead (their replies end on their own). Then, part by part:

  serve   `python -m bargain serve --model DIR --adapters-dir DIR` (vLLM, with runtime LoRA updates
          on), and `python -m bargain evaluate` of a cut of paper-rl-test (arm:buyer-grpo against
          arm:base) through it: requests/s and generated tokens/s of the whole run; then the same
          concurrent games all on one adapter against games spread over the base and all eight.
  arena   `benchmarks.arena` against that server: 50 participants playing arm:joint-grpo; the
          server's time from a person's submitted move to the agent's answer, p50 and p95.
  hf      the in-process transformers + peft backend in bf16: tokens/s at 1, 8 and 32 concurrent
          games on one adapter and on mixed adapters, and peak memory.
  train   two steps of the buyer-grpo preset with rollouts from the vLLM server and the adapter
          hot-loaded into it after each step: seconds per phase and peak memory.
  pytest  `python -m pytest -m gpu`: the GPU-only tests.

Random weights never stop on their own, so every reply runs to its token cap (`--reply-tokens`, a
real reply's typical length): the figures are for replies of exactly that length. A part whose
package or GPU is missing is skipped with the reason; a part that fails is reported (its traceback
in gpu_check.log) and the others still run. `gpu_check.json` and `gpu_check.md` are written in
`--out` after every part, so a run cut short keeps what it measured. Every process it starts is
stopped when it ends, is interrupted or is killed.

`--dry-run` runs the same code at tiny size on a CPU: a two-layer model, a handful of games, the
project's stub OpenAI-compatible server in place of vLLM (after `bargain serve --dry-run` has shown
the vLLM command it would run), float32. Its figures measure nothing; it keeps the script working.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from contextlib import contextmanager, redirect_stdout
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Iterator

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__" and not __package__:  # `python benchmarks/gpu_check.py`: import as `-m` would
    # Run as a script, Python puts benchmarks/ first on the path, where benchmarks/train.py hides the train package.
    sys.path[:] = [str(ROOT)] + [entry for entry in sys.path if Path(entry or ".").resolve() != ROOT / "benchmarks"]
PARTS = ("serve", "arena", "hf", "train", "pytest")
GPU_SHARE = 0.45  # of the GPU's memory for vLLM: the hf backend and the trainer run beside it
SERVER_START_S = 900


@dataclass(frozen=True)
class Sizes:
    """How much each part plays."""

    shape: str
    eval_trials: int  # trials per cell of paper-rl-test's 8 scenarios x 4 conditions
    reply_tokens: int
    concurrent_games: int  # one adapter against mixed adapters, through the server
    participants: int
    arena_games: int  # each
    think_s: float
    hf_games: tuple[int, ...]
    train_groups: int
    group_size: int
    train_batch: int | None  # samples per optimiser step (None: the preset's)
    # Where pytest looks for GPU tests: only there, since collecting the whole suite imports what the GPU machine
    # lacks (gradio, sqlalchemy...) and fails before a test runs.
    tests: tuple[str, ...] = ("tests/test_gpu.py",)


SIZES = {
    "full": Sizes("qwen3-8b", eval_trials=4, reply_tokens=200, concurrent_games=64, participants=50, arena_games=2,
                  think_s=1.0, hf_games=(1, 8, 32), train_groups=4, group_size=8, train_batch=None),
    "quick": Sizes("qwen3-8b", eval_trials=2, reply_tokens=200, concurrent_games=32, participants=50, arena_games=1,
                   think_s=1.0, hf_games=(1, 8, 32), train_groups=2, group_size=8, train_batch=None),
    "dry-run": Sizes("tiny", eval_trials=1, reply_tokens=16, concurrent_games=8, participants=4, arena_games=1,
                     think_s=0.05, hf_games=(1, 4), train_groups=2, group_size=4, train_batch=8),
}


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

        shown = subprocess.run([*serve_command(model, adapters, 8000, GPU_SHARE), "--dry-run"], capture_output=True,
                               text=True, cwd=ROOT)
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


# --- the parts ------------------------------------------------------------------------------------------


def part_serve(url: str, model: Path, out: Path, sizes: Sizes) -> dict:
    """`evaluate` through the server, then one adapter against mixed adapters at the same concurrency."""
    from bargain.agents.backends.build import build_backend
    from bargain.cli import main as bargain
    from benchmarks.hf import throughput

    run = out / "evaluate"
    tokens = f"max_tokens={sizes.reply_tokens}"
    start = time.perf_counter()
    with open(out / "evaluate.log", "w") as log, redirect_stdout(log):  # its summary table goes to the log
        code = bargain(["evaluate", "--grid", "paper-rl-test", "--trials", str(sizes.eval_trials), "--buyer",
                        "arm:buyer-grpo", "--seller", "arm:base", "--seller-preset", "frozen-opponent", "--buyer-sampling",
                        tokens, "--seller-sampling", tokens, "--backend", "vllm", "--base-url", url, "--model", str(model),
                        "--out", str(run), "--quiet"])
    elapsed = time.perf_counter() - start
    if code != 0:
        raise RuntimeError(f"evaluate exited with {code}")
    config = json.loads((run / "config.json").read_text())
    if config["status"] != "finished":
        raise RuntimeError(f"evaluate left {config['failed_games']} of {config['n_trials']} games unfinished")
    usage = config["usage"]
    calls = sum(side["model_calls"] for side in usage.values())
    generated = sum(side["completion_tokens"] for side in usage.values())
    backend = build_backend("vllm", base_url=url, model=str(model))
    one = throughput(backend, sizes.concurrent_games, False, sizes.reply_tokens)
    mixed = throughput(backend, sizes.concurrent_games, True, sizes.reply_tokens)
    return {"evaluate_games": config["n_trials"], "evaluate_s": elapsed, "requests": calls,
            "requests_per_s": calls / elapsed, "tokens_per_s": generated / elapsed,
            "concurrent_games": sizes.concurrent_games, "one_adapter_tokens_per_s": one["tokens_per_s"],
            "mixed_adapters_tokens_per_s": mixed["tokens_per_s"],
            "mixed_over_one": mixed["tokens_per_s"] / one["tokens_per_s"], **gpu_memory()}


def part_arena(url: str, model: Path, sizes: Sizes) -> dict:
    """benchmarks.arena's load with the agent served by the model server."""
    from benchmarks.arena import load

    figures = load(sizes.participants, sizes.arena_games, sizes.think_s, visitors=2, opponent="arm:joint-grpo",
                   app_args=("--backend", "vllm", "--base-url", url, "--model", str(model),
                             "--max-reply-tokens", str(sizes.reply_tokens)))
    if figures["errors"] or figures["lost"]:
        raise RuntimeError(f"{len(figures['errors'])} participants failed, {figures['lost']} moves lost: "
                           f"{figures['errors'][:3]}")
    return {key: value for key, value in figures.items() if key != "errors"}


def part_hf(model: Path, adapters: Path, sizes: Sizes) -> dict:
    """The in-process backend: tokens/s per concurrency, one adapter and mixed, and peak memory."""
    from bargain.agents.arms import ADAPTERS
    from bargain.agents.backends.hf import HFBackend
    from benchmarks.hf import throughput

    release()
    backend = HFBackend(str(model), {n: adapters / n for n in ADAPTERS})
    throughput(backend, 2, True, 4)  # warm-up: the first calls pay for lazy initialisation
    figures: dict = {"device": backend.device, "dtype": backend.describe()["dtype"]}
    for games in sizes.hf_games:
        figures[f"one_adapter_tokens_per_s_{games}"] = throughput(backend, games, False, sizes.reply_tokens)["tokens_per_s"]
        figures[f"mixed_adapters_tokens_per_s_{games}"] = throughput(backend, games, True, sizes.reply_tokens)["tokens_per_s"]
    figures.update(gpu_memory())
    del backend
    release()
    return figures


def part_train(url: str, model: Path, out: Path, sizes: Sizes) -> dict:
    """Two steps of the buyer-grpo preset, rolled out by the server, the adapter hot-loaded after each step."""
    from train import config as configuration
    from train.trainer import run

    release()
    overrides = {"model": str(model), "steps": 2, "groups_per_step": sizes.train_groups, "group_size": sizes.group_size,
                 "max_completion_tokens": sizes.reply_tokens, "val_interval": 0, "output_dir": str(out / "train"),
                 "rollout_backend": "vllm", "base_url": url}
    if sizes.train_batch is not None:
        overrides["batch_size"] = sizes.train_batch
    cfg = configuration.load(ROOT / "train" / "configs" / "buyer-grpo.yaml", overrides)
    result = run(cfg, progress=False)
    figures = {"steps": [{key: m[key] for key in ("step", "episodes", "samples", "rollout_s", "train_s", "sync_s",
                                                    "tokens_per_s", "peak_memory_gb")} for m in result.metrics],
               **gpu_memory()}
    release()
    return figures


def part_pytest(out: Path, sizes: Sizes) -> dict:
    """The GPU-only tests (they skip themselves where there is no GPU or no vLLM)."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-m", "gpu", "-p", "no:cacheprovider", "-rs", *sizes.tests],
                          cwd=ROOT, capture_output=True, text=True)
    (out / "pytest.log").write_text(done.stdout + done.stderr)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    summary = lines[-1].strip("= ") if lines else "no output"
    if done.returncode not in (0, 5):  # 5: no test selected
        raise RuntimeError(f"pytest -m gpu: {summary} (see pytest.log)")
    return {"summary": summary}


# --- running and reporting ------------------------------------------------------------------------------


def machine() -> dict:
    """What this ran on."""
    import torch

    versions = {}
    for package in ("torch", "transformers", "peft", "vllm", "accelerate", "gradio"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    memory = torch.cuda.mem_get_info()[1] / 2**30 if gpu else None
    return {"gpu": gpu, "gpu_memory_gib": memory, "gpus": torch.cuda.device_count(), "cpus": os.cpu_count(),
            "python": sys.version.split()[0], "versions": versions}


class Report:
    """The parts' outcomes, written to gpu_check.json and gpu_check.md after each one."""

    def __init__(self, out: Path, mode: str, sizes: Sizes):
        self.out = out
        self.data = {"mode": mode, "sizes": asdict(sizes), "machine": machine(), "parts": {}}

    def attempt(self, name: str, missing: str | None, work: Callable[[], dict]) -> None:
        """Run one part (unless `missing` says why it cannot run here), record and show its outcome."""
        print(f"[{name}] ...", flush=True)
        start = time.perf_counter()
        if missing:
            outcome = {"status": "skipped", "reason": missing}
        else:
            try:
                outcome = {"status": "passed", **work()}
            except Exception as exc:  # one part's failure must not hide the others' results
                outcome = self.failure(name, exc)
        self.record(name, outcome, time.perf_counter() - start)

    def failure(self, name: str, exc: Exception) -> dict:
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
        if o["status"] == "skipped":
            return f"skipped: {o['reason']}"
        if o["status"] == "failed":
            return f"FAILED after {o['seconds']:.0f} s: {o['error']}"
        if name == "serve":
            return (f"evaluate {o['evaluate_games']} games: {o['requests_per_s']:.1f} requests/s, "
                    f"{o['tokens_per_s']:.0f} tokens/s; {o['concurrent_games']} games at once: one adapter "
                    f"{o['one_adapter_tokens_per_s']:.0f} tokens/s, mixed {o['mixed_adapters_tokens_per_s']:.0f} "
                    f"({o['mixed_over_one']:.2f}x)")
        if name == "arena":
            return (f"{o['participants']} participants, {o['moves']} moves: submit to the agent's move p50 "
                    f"{o['server_ms_p50']:.0f} ms, p95 {o['server_ms_p95']:.0f} ms; {o['lost']} lost")
        if name == "hf":
            games = [key.rsplit("_", 1)[1] for key in o if key.startswith("one_adapter")]
            rates = {kind: "/".join(f"{o[f'{kind}_tokens_per_s_{g}']:.0f}" for g in games)
                     for kind in ("one_adapter", "mixed_adapters")}
            return (f"{o['device']} {o['dtype']}, tokens/s at {'/'.join(games)} games at once: one adapter "
                    f"{rates['one_adapter']}, mixed {rates['mixed_adapters']}") + (
                f"; peak {o['peak_gib']:.1f} GiB" if "peak_gib" in o else "")
        if name == "train":
            return "; ".join(f"step {s['step']}: rollout {s['rollout_s']:.1f} s, train {s['train_s']:.1f} s, save and "
                             f"hot-load {s['sync_s']:.1f} s, peak {s['peak_memory_gb']:.1f} GB" for s in o["steps"])
        return o["summary"]

    def write(self) -> None:
        (self.out / "gpu_check.json").write_text(json.dumps(self.data, indent=2) + "\n")
        m = self.data["machine"]
        lines = [f"# GPU check ({self.data['mode']})", "",
                 f"{m['gpu'] or 'no GPU'}" + (f", {m['gpu_memory_gib']:.0f} GiB" if m["gpu_memory_gib"] else "")
                 + f"; {m['cpus']} CPUs; " + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v), "",
                 "| part | outcome | seconds | figures |", "|---|---|---:|---|"]
        for name, o in self.data["parts"].items():
            lines.append(f"| {name} | {o['status']} | {o['seconds']:.0f} | {self.line(name, o)} |")
        (self.out / "gpu_check.md").write_text("\n".join(lines) + "\n")

    def failed(self) -> list[str]:
        return [name for name, o in self.data["parts"].items() if o["status"] == "failed"]


def build(root: Path, shape: str) -> tuple[Path, Path]:
    """The random model and its eight adapters."""
    from bargain.agents import tiny
    from bargain.agents.arms import ADAPTERS

    model = tiny.build_model(root / "model", shape=shape)
    release()
    return model, tiny.build_adapters(model, root / "adapters", {n: a.lora_rank for n, a in ADAPTERS.items()})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu_check", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="gpu_check", help="directory for gpu_check.json, gpu_check.md and the logs")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer games (about 5 minutes on one GPU)")
    size.add_argument("--dry-run", action="store_true", help="tiny size on a CPU, the stub server in place of vLLM")
    parser.add_argument("--parts", default=",".join(PARTS), help="comma-separated parts to run")
    parser.add_argument("--reply-tokens", type=int, help="tokens per model reply (default 200; 16 with --dry-run)")
    parser.add_argument("--model", help="a model directory to check instead of a random one (e.g. Qwen3-8B's own "
                                        "weights, already on disk); needs --adapters-dir")
    parser.add_argument("--adapters-dir", help="its eight adapters, one folder per arm (DIR/<arm>/)")
    args = parser.parse_args(argv)
    mode = "dry-run" if args.dry_run else "quick" if args.quick else "full"
    sizes = SIZES[mode] if args.reply_tokens is None else replace(SIZES[mode], reply_tokens=args.reply_tokens)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}: choose from {', '.join(PARTS)}")
    if (args.model is None) != (args.adapters_dir is None):
        parser.error("--model and --adapters-dir go together")
    given = (Path(args.model), Path(args.adapters_dir)) if args.model else None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwinds through the `finally` that stops the server
    try:
        return check(out, mode, sizes, parts, args.dry_run, given)
    finally:
        signal.signal(signal.SIGTERM, previous)


def check(out: Path, mode: str, sizes: Sizes, parts: list[str], dry_run: bool,
          given: tuple[Path, Path] | None = None) -> int:
    """Build the model (unless `given`: a model directory and its adapters), run the parts, report; 1 if a part
    failed."""
    report = Report(out, mode, sizes)
    print(f"GPU check ({mode}): {report.data['machine']['gpu'] or 'no GPU'}; writing {out}/gpu_check.json", flush=True)
    served = [p for p in ("serve", "arena", "train") if p in parts]  # train last: it replaces buyer-grpo on the server
    missing = {name: needs_vllm(dry_run) for name in served} | ({"hf": needs_gpu(dry_run)} if "hf" in parts else {})
    for name, reason in missing.items():
        if reason:
            report.attempt(name, reason, dict)
    runnable = [name for name, reason in missing.items() if reason is None]
    with tempfile.TemporaryDirectory() as scratch:
        if runnable and given:
            model, adapters = given
        elif runnable:  # a model of Qwen3-8B's shape is only built where a part can use it
            began = time.perf_counter()
            try:
                model, adapters = build(Path(scratch), sizes.shape)
                print(f"[build] {sizes.shape} model and eight adapters in {time.perf_counter() - began:.0f} s", flush=True)
            except Exception as exc:
                for name in runnable:
                    report.record(name, report.failure(name, exc), time.perf_counter() - began)
                runnable = []
        if any(name in runnable for name in served):
            try:
                with model_server(model, adapters, out, dry_run) as url:
                    print(f"[server] serving at {url}", flush=True)
                    for name in (n for n in served if n in runnable):
                        work = {"serve": lambda: part_serve(url, model, out, sizes),
                                "arena": lambda: part_arena(url, model, sizes),
                                "train": lambda: part_train(url, model, out, sizes)}[name]
                        report.attempt(name, None, work)
            except Exception as exc:  # the server did not start: its parts fail, the others still run
                for name in served:
                    if name not in report.data["parts"]:
                        report.record(name, report.failure(name, exc), 0.0)
        if "hf" in runnable:
            report.attempt("hf", None, lambda: part_hf(model, adapters, sizes))
    if "pytest" in parts:
        report.attempt("pytest", None, lambda: part_pytest(out, sizes))
    failed = report.failed()
    print(f"\n{out / 'gpu_check.md'}:\n" + (out / "gpu_check.md").read_text(), flush=True)
    if failed:
        print(f"failed: {', '.join(failed)} (tracebacks in {out / 'gpu_check.log'})", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
