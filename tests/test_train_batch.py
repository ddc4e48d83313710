"""The batch is the reference's on any number of processes: an optimiser step covers `batch_size` samples
however many processes share it, and a world size that cannot share it is refused."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cpu_launch import accelerate_on_cpu

from train import config as configuration

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "preset, world, per_device, mini_batch, accumulation",
    [
        ("buyer-grpo", 1, 96, 24, 4),
        ("buyer-grpo", 4, 24, 24, 1),
        ("buyer-grpo", 8, 12, 12, 1),
        ("seller-grpo", 1, 2304, 24, 96),
        ("seller-grpo", 4, 576, 24, 24),
        ("joint-cispo", 8, 288, 24, 12),
    ],
)
def test_the_reference_batch_is_shared_out_over_any_world_size(preset, world, per_device, mini_batch, accumulation):
    cfg = configuration.load(ROOT / "train" / "configs" / f"{preset}.yaml")
    layout = configuration.batch_layout(cfg, world)
    assert (layout.per_device, layout.mini_batch, layout.accumulation) == (per_device, mini_batch, accumulation)
    assert layout.per_device * world == cfg.batch_size == layout.mini_batch * layout.accumulation * world


def test_a_world_size_that_cannot_share_the_batch_is_refused_with_the_sizes_that_can():
    cfg = configuration.load(ROOT / "train" / "configs" / "buyer-grpo.yaml")
    with pytest.raises(
        ValueError,
        match=r"batch_size 96 cannot be shared out over 5 processes: run on 1, 2, 3, 4, 6, "
        r"8, 12, 16 processes",
    ):
        configuration.batch_layout(cfg, 5)


def phase(tiny_model: Path, out: Path, processes: int) -> dict:
    """One optimisation phase (tests/optimise_phase.py) on `processes` CPU processes (tests/cpu_launch.py); one
    process is this one, whose interpreter has torch and the model's code loaded already."""
    if processes == 1:
        from optimise_phase import main

        main(str(tiny_model), str(out))
        return json.loads(out.read_text())
    command, env = accelerate_on_cpu(processes, str(ROOT / "tests" / "optimise_phase.py"), str(tiny_model), str(out))
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.slow
def test_two_processes_take_the_same_optimiser_steps_over_the_same_samples_as_one(tiny_model, tmp_path):
    one = phase(tiny_model, tmp_path / "one.json", 1)
    two = phase(tiny_model, tmp_path / "two.json", 2)
    assert (one["world_size"], one["per_device"], one["accumulation"]) == (1, 8, 2)
    assert (two["world_size"], two["per_device"], two["accumulation"]) == (2, 4, 1)
    assert one["optimiser_steps"] == two["optimiser_steps"] == 6  # 2 epochs x ceil(20 / 8)
    assert one["first_loss"] != 0 and two["first_loss"] == pytest.approx(one["first_loss"], rel=1e-5, abs=1e-7)
    for metric in ("loss", "kl", "ratio", "grad_norm", "checksum"):  # then the same updates, step after step
        assert two[metric] == pytest.approx(one[metric], rel=1e-4, abs=1e-6), metric


def planted(tmp_path: Path, roles: list[str]) -> Path:
    """A run directory with a validation table in which every role and metric peaks at a different step."""
    import pandas as pd
    import yaml

    rows = []
    for step in range(1, 7):
        for role in roles:
            for condition in ("seller_unaware", "ALL"):
                peak = {"buyer": 2, "seller": 5}[role]
                rows.append(
                    {
                        "step": step,
                        "role": role,
                        "condition": condition,
                        "games": 16,
                        "deal_rate": 0.1 * step,
                        "reward": 1.0 - abs(step - peak) * 0.1 + (condition != "ALL"),
                        "buyer_reward": 0.01 * step,
                        "seller_reward": -0.01 * step,
                    }
                )
    pd.DataFrame(rows).to_csv(tmp_path / "validation.csv", index=False)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"roles": roles}))
    return tmp_path


@pytest.mark.parametrize("roles, step", [(["buyer"], 2), (["seller"], 5), (["buyer", "seller"], 5)])
def test_best_picks_the_step_the_reference_would(roles, step, tmp_path):
    """The trained side's pooled reward; for a joint run the seller's (the released joint adapters' choice)."""
    from cli_runner import run_main

    from train.__main__ import main

    done = run_main(main, "best", str(planted(tmp_path, roles)))
    assert done.returncode == 0, done.stderr
    assert f"best step {step}: reward 1.0000" in done.stdout
    table = done.stdout.splitlines()
    assert "deal_rate" in table[0] and "buyer_reward" in table[0] and "seller_reward" in table[0]
    assert len([line for line in table if line[:1].strip().isdigit()]) == 5  # the top five steps
    other = run_main(main, "best", str(tmp_path), "--metric", "deal_rate")
    assert "best step 6: deal_rate 0.6000" in other.stdout
    wrong = run_main(main, "best", str(tmp_path), "--metric", "nope")
    assert wrong.returncode == 2 and "no metric 'nope'" in wrong.stderr and "deal_rate" in wrong.stderr


def test_a_failed_episode_is_dropped_from_its_group_not_scored_zero():
    from types import SimpleNamespace

    from bargain.engine.trial import Role
    from train.advantages import group_advantages
    from train.rollouts import Group, advantages

    def episode(utility: float | None):
        outcome = SimpleNamespace(norm_utility=lambda role: utility)
        return SimpleNamespace(finished=utility is not None, state=SimpleNamespace(outcome=lambda: outcome))

    played = [episode(0.1), episode(None), episode(0.5), episode(0.3)]
    for transform in ("rank", "none"):
        cfg = configuration.TrainConfig(reward_transform=transform)
        (got,) = advantages(cfg, [Group(None, Role.BUYER)], [played])
        assert got[1] is None
        assert [got[0], got[2], got[3]] == pytest.approx(list(group_advantages([0.1, 0.5, 0.3], transform)))
    assert advantages(configuration.TrainConfig(), [Group(None, Role.BUYER)], [[episode(None)]]) == [[None]]
