"""The trainer end to end on tiny models: every preset runs, the policy learns, checkpoints play, runs resume."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import torch
from cpu_launch import accelerate_on_cpu

from bargain.agents.arms import Arm
from bargain.agents.backends import Sampling
from bargain.agents.backends.hf import HFBackend
from bargain.agents.factory import agent_factory
from bargain.agents.llm import LLMAgent
from bargain.agents.stub_server import StubServer
from bargain.agents.tiny import templated_reply
from bargain.engine import scenarios
from bargain.engine.trial import Condition
from bargain.runs.episodes import play_many
from train import config as configuration
from train.best import best
from train.trainer import STATE_FILE, run

ROOT = Path(__file__).resolve().parents[1]
TINY_RUN = dict(
    steps=1,
    groups_per_step=1,
    group_size=2,
    max_rounds=1,
    max_completion_tokens=8,
    epochs=1,
    mini_batch=2,
    batch_size=2,
    val_interval=0,
    rollout_concurrency=8,
)


@pytest.fixture(scope="session")
def format_model(tiny_model, tmp_path_factory):
    """The tiny model taught to bid valid prices at random (1 to 5) in rice games (low:0). 60 steps at 0.008 teach
    it as 150 at 0.003 did, in 40% of the time: taught from seeds 0, 1 and 2, all its moves were valid offers and the
    GRPO test's four steps gained 0.30-0.32 (0.21 after 150 steps); 40 steps left most moves invalid."""
    from bargain.agents.tiny import teach_format

    return teach_format(tiny_model, tmp_path_factory.mktemp("format-model"), steps=60, learning_rate=0.008)


@pytest.mark.parametrize("preset", sorted(p.stem for p in (ROOT / "train" / "configs").glob("*.yaml")))
def test_every_preset_runs_a_step_on_the_tiny_model(preset, tiny_model, tmp_path):
    cfg = configuration.load(
        ROOT / "train" / "configs" / f"{preset}.yaml",
        {**TINY_RUN, "model": str(tiny_model), "output_dir": str(tmp_path)},
    )
    result = run(cfg, progress=False)
    assert len(result.metrics) == 1 and result.metrics[0]["episodes"] == 2
    assert (tmp_path / "checkpoints" / "step_1" / preset / "adapter_config.json").exists()
    saved = json.loads((tmp_path / "checkpoints" / "step_1" / preset / "adapter_config.json").read_text())
    assert saved["r"] == cfg.lora_rank and saved["lora_alpha"] == cfg.lora_alpha
    assert set(saved["target_modules"]) == set(cfg.lora_targets)


def mean_reward(model_dir: Path, checkpoint: Path | None, games: int = 64) -> tuple[float, float]:
    """The buyer's mean normalised utility against the random seller on fixed rice trials, and the
    share of its moves that are valid offers."""
    adapters = {"learn": checkpoint / "learn"} if checkpoint else None
    backend = HFBackend(str(model_dir), adapters, device="cpu")
    arm = Arm(name="learn", kind="adapter") if checkpoint else Arm(name="base", kind="base")
    spec = scenarios.GridSpec(
        tier="low", start=0, stop=1, conditions=(Condition.BOTH_UNAWARE,), trials_per_cell=games, max_rounds=1
    )
    trials = scenarios.make_trials(spec, scenarios.bundled(), seed=7)
    seller = agent_factory("tactic:random")
    torch.manual_seed(0)
    episodes = asyncio.run(
        play_many(
            trials,
            lambda t: (LLMAgent(arm, backend, Sampling(max_tokens=40)), seller(t.trial_id)),
            ("buyer", "seller"),
            progress=False,
        )
    )
    offers = [t.action.value == "OFFER" for e in episodes for t in e.state.turns if t.role.value == "buyer"]
    return sum(e.state.outcome().buyer_norm_utility for e in episodes) / len(episodes), sum(offers) / len(offers)


@pytest.mark.slow
def test_grpo_measurably_improves_the_policy(format_model, tmp_path):
    """A buyer that bids 1-5 at random against a random seller in rice games (v_B in [2.1, 3.0]):
    bids of 4 and 5 lose money. Four GRPO steps must raise its mean reward clearly (by about 0.2: it learns to bid
    low within them; eight steps gain no more)."""
    before, valid_before = mean_reward(format_model, None)
    cfg = configuration.TrainConfig(
        variant="learn",
        model=str(format_model),
        roles=["buyer"],
        loss="grpo",
        opponent_tactic="tactic:random",
        train_split="low:0:1",
        conditions=["both_unaware"],
        max_rounds=1,
        group_size=8,
        groups_per_step=8,
        epochs=2,
        mini_batch=16,
        batch_size=16,
        learning_rate=0.005,
        lora_rank=8,
        lora_alpha=16,
        steps=4,
        max_completion_tokens=40,
        val_interval=0,
        output_dir=str(tmp_path),
    )
    result = run(cfg, progress=False)
    after, valid_after = mean_reward(format_model, tmp_path / "checkpoints" / "step_4")
    print(f"mean reward before {before:.3f}, after {after:.3f}; valid offers {valid_before:.2f} -> {valid_after:.2f}")
    assert after > before + 0.1, (before, after, [round(m["reward"], 3) for m in result.metrics])
    assert valid_after >= 0.9  # it bargains better, not by breaking the format to avoid deals


def cli(*args: str) -> subprocess.CompletedProcess:
    """`python -m train` run in this process (tests/cli_runner.py)."""
    from cli_runner import run_main

    from train.__main__ import main

    return run_main(main, *args, env={"HF_HUB_OFFLINE": "1"})


@pytest.mark.slow
def test_the_command_trains_resumes_and_its_checkpoint_plays_in_the_arena(format_model, tmp_path, capsys):
    """The command trains, resumes and picks its best step through its entry point, in this process: a fresh
    interpreter would add only its imports (the command as a process of its own is the two-process test's, under
    accelerate launch; the CISPO loss and every preset are run by the tests above)."""
    from train.__main__ import main

    out = tmp_path / "run"
    common = [
        "--config",
        str(ROOT / "train/configs/buyer-grpo.yaml"),
        "--model",
        str(format_model),
        "--groups-per-step",
        "2",
        "--group-size",
        "2",
        "--max-rounds",
        "2",
        "--max-completion-tokens",
        "40",
        "--epochs",
        "1",
        "--mini-batch",
        "4",
        "--val-trials",
        "1",
        "--output-dir",
        str(out),
        "--quiet",
    ]
    first = cli(*common, "--steps", "2")
    assert first.returncode == 0, first.stderr
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["step_1", "step_2"]
    states = lambda: [c.name for c in sorted((out / "checkpoints").iterdir()) if (c / STATE_FILE).exists()]  # noqa: E731
    assert states() == ["step_2"]  # keep_optimizer_states 1: only the newest keeps what resuming needs
    metrics = pd.read_csv(out / "metrics.csv")
    assert list(metrics["step"]) == [1, 2] and (metrics["samples"] > 0).all()
    assert main([*common, "--steps", "3", "--resume", str(out)]) == 0
    assert [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()] == [1, 2, 3]
    assert states() == ["step_3"] and all(
        (c / "buyer-grpo" / "adapter_model.safetensors").exists() for c in (out / "checkpoints").iterdir()
    )
    step, path, _, _ = best(out)
    assert path == out / "checkpoints" / f"step_{step}"
    capsys.readouterr()
    assert main(["best", str(out)]) == 0 and f"best step {step}" in capsys.readouterr().out

    # The checkpoint plays in the arena, on the hf backend, as the arm it was trained as.
    from bargain.agents.backends import Backends
    from bargain.agents.backends.build import build_backend
    from bargain.arena.controller import Arena, Setup
    from bargain.engine.trial import Role
    from bargain.records.store import Store

    backend = build_backend("hf", model=str(format_model), adapters_dir=str(out / "checkpoints" / "step_3"))
    assert backend.adapters == {"buyer-grpo"}

    async def game():
        arena = Arena(Store(f"sqlite:///{tmp_path / 'arena.db'}"), Backends(backend))
        view = await arena.start(
            Setup(role=Role.SELLER, arm="arm:buyer-grpo", condition=Condition.SELLER_UNAWARE, seed=1)
        )
        while view.status == "active":
            view = await arena.move(view.game_id, view.round, "OFFER", view.your_price * 1.5)
        return view

    final = asyncio.run(game())
    assert final.status == "finished"
    assert any(t["speaker"] == "agent" and t["action"] == "OFFER" for t in final.transcript)  # it bids validly


def test_bad_configs_are_refused_by_the_command(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("loss: grpo\nlearning_rte: 0.1\n")
    run_bad = cli("--config", str(bad))
    assert run_bad.returncode == 2 and "learning_rte" in run_bad.stderr
    joint = cli("--config", "train/configs/joint-grpo.yaml", "--opponent", "frozen")
    assert joint.returncode == 2 and "opponent: self" in joint.stderr
    assert cli("best", str(tmp_path)).returncode == 2


def test_a_model_that_cannot_be_found_is_one_line_naming_the_way_out(tmp_path):
    """Offline, a Hub id that is not in the cache: no transformers traceback, but what to pass as --model."""
    result = cli(
        "--config",
        "train/configs/buyer-grpo.yaml",
        "--model",
        "nobody-here/no-such-model",
        "--output-dir",
        str(tmp_path / "run"),
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "nobody-here/no-such-model" in lines[0], result.stderr
    assert "--model" in lines[0] and "HF_HUB_OFFLINE" in lines[0] and "python -m bargain.agents.tiny" in lines[0]


def test_the_tiny_model_command_builds_a_model_and_adapters(tmp_path):
    from bargain.agents.arms import ADAPTERS
    from bargain.agents.tiny import main

    assert main([str(tmp_path / "model"), "--adapters-dir", str(tmp_path / "adapters")]) == 0
    assert (tmp_path / "model" / "config.json").is_file() and (tmp_path / "model" / "tokenizer.json").is_file()
    assert sorted(p.name for p in (tmp_path / "adapters").iterdir()) == sorted(ADAPTERS)
    shown = subprocess.run(
        [sys.executable, "-m", "bargain.agents.tiny", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert shown.returncode == 0 and shown.stdout.startswith("usage: python -m bargain.agents.tiny")


def test_vllm_rollouts_hot_load_each_checkpoint(tiny_model, tmp_path):
    """With a vLLM server the adapter is saved and loaded in place after every step, and the first
    step checks that the loaded adapter changes the output."""

    def reply(body):  # the adapter answers differently from the base model, as a trained one would
        price = 2.0 if body["model"] == "buyer-grpo" else 3.0
        return templated_reply(price)

    with StubServer(["tiny-base"], reply=reply) as server:
        cfg = configuration.load(
            ROOT / "train" / "configs" / "buyer-grpo.yaml",
            {
                **TINY_RUN,
                "steps": 2,
                "model": str(tiny_model),
                "output_dir": str(tmp_path),
                "rollout_backend": "vllm",
                "base_url": server.url,
                "served_model": "tiny-base",
            },
        )
        run(cfg, progress=False)
        loads, unloads = list(server.adapter_loads), list(server.adapter_unloads)
        used = {r["model"] for r in server.requests}
    assert [Path(x["lora_path"]) for x in loads] == [
        (tmp_path / "checkpoints" / f"step_{n}" / "buyer-grpo").resolve() for n in (0, 1, 2)
    ]
    # Each checkpoint replaces the last: unloaded, then loaded (never `load_inplace`, which vLLM 0.31 would read from
    # disk again at every step that uses it).
    assert unloads == ["buyer-grpo"] * 3 and all(
        x == {"lora_name": "buyer-grpo", "lora_path": x["lora_path"]} for x in loads
    )
    assert used == {"buyer-grpo", "tiny-base"}  # the trained side and the frozen base opponent


@pytest.mark.slow
def test_every_process_waits_for_the_server_and_plays_only_the_newest_adapter(tiny_model, tmp_path):
    """Two trainer processes, a vLLM-like server that takes a second to load an adapter and answers 404 for an
    adapter it does not have: no process plays before the first adapter is loaded, and none plays a step before the
    main process has loaded the adapter it just trained. The trainer starts before the server does, as it may."""

    def reply(body):
        return templated_reply(2.0 if body["model"] == "buyer-grpo" else 3.0)

    server = StubServer(["tiny-base"], reply=reply, load_delay_s=1.0)
    flags = [
        f"--{key.replace('_', '-')}={value}"
        for key, value in {**TINY_RUN, "groups_per_step": 4, "steps": 2, "batch_size": 4}.items()
    ]
    command, env = accelerate_on_cpu(
        2,
        "-m",
        "train",
        "--config",
        str(ROOT / "train/configs/buyer-grpo.yaml"),
        *flags,
        "--model",
        str(tiny_model),
        "--rollout-backend",
        "vllm",
        "--base-url",
        server.url,
        "--served-model",
        "tiny-base",
        "--output-dir",
        str(tmp_path / "run"),
        "--quiet",
    )
    trainer = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2.0)  # the server comes up after the trainer has started
        with server:
            out, err = trainer.communicate(timeout=600)
    finally:
        trainer.kill()
    assert trainer.returncode == 0, err[-3000:]
    metrics = pd.read_csv(tmp_path / "run" / "metrics.csv")
    assert list(metrics["world_size"]) == [2, 2] and (metrics["failed_episodes"] == 0).all()
    assert (metrics["episodes"] == 8).all()  # 4 groups x 2 episodes, over both processes
    assert [Path(x["lora_path"]).parent.name for x in server.adapter_loads] == ["step_0", "step_1", "step_2"]
    # every game of step S is played once the adapter of step S - 1 is loaded and before the next load begins; the
    # main process's check after the first step asks two more greedy replies
    assert not any(loading for _, loading in server.arrivals)
    assert Counter(done for done, _ in server.arrivals) == {1: 16, 2: 16 + 2}  # 8 games x 2 sides, one round each
    assert {r["model"] for r in server.requests} == {"buyer-grpo", "tiny-base"}


def test_an_adapter_that_changes_nothing_is_a_warning_and_the_run_goes_on(tiny_model, tmp_path, caplog):
    """After one step at a small learning rate the greedy reply may not change yet: the reference warns and trains
    on, and so does this trainer."""
    with StubServer(["tiny-base"]) as server:  # the same canned reply for every model
        cfg = configuration.load(
            ROOT / "train" / "configs" / "buyer-grpo.yaml",
            {
                **TINY_RUN,
                "steps": 2,
                "model": str(tiny_model),
                "output_dir": str(tmp_path),
                "rollout_backend": "vllm",
                "base_url": server.url,
                "served_model": "tiny-base",
            },
        )
        with caplog.at_level("WARNING", logger="train.trainer"):
            result = run(cfg, progress=False)
    assert len(result.metrics) == 2
    warned = [r.getMessage() for r in caplog.records if "unchanged" in r.getMessage()]
    assert len(warned) == 1 and "256 greedy tokens" in warned[0]
