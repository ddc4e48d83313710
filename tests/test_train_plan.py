"""`python -m train plan`: the training groups and validation games are the reference trainer's draws.

The expected lists are computed here, independently of train/rollouts.py: a small re-implementation of
how the reference (Avmb/llm-bargaining-agents, rl/bargaining_rl.py, `_build_scenario_batches`, its
step loop and `build_trial_specs`) draws them, with its configs' values, straight from the bundled
dataset's raw JSON.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from functools import lru_cache
from importlib import resources
from pathlib import Path

import pytest
from cli_runner import run_main

from train.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
ENV = {"HF_HUB_OFFLINE": "1"}
SEED, TRIALS, PER_STEP, GROUP_SIZE, VAL_TRIALS = 42, 4, 64, 16, 16
# The reference configs' transparencies (in their order) and trained roles, per preset here.
REFERENCE = {
    "buyer-grpo": (["seller_unaware"], ["buyer"]),
    "seller-grpo": (["buyer_unaware"], ["seller"]),
    "joint-grpo": (["full", "buyer_unaware", "seller_unaware", "both_unaware"], ["buyer", "seller"]),
}


@lru_cache(maxsize=1)
def low() -> list[dict]:
    """The `low` tier of the bundled dataset, as the reference loads it."""
    text = resources.files("bargain.data").joinpath("scenarios_by_reservation_ranges.jsonl").read_text(encoding="utf-8")
    return json.loads(text)["low"]


def fields(index: int, condition: str, buyer: float, seller: float, role: str) -> dict:
    return {
        "product": low()[index]["product_name"],
        "scenario": f"low:{index}",
        "condition": condition,
        "buyer_price": buyer,
        "seller_price": seller,
        "role": role,
    }


def prices(rng: random.Random, scenario: dict) -> tuple[float, float]:
    return (
        round(rng.uniform(*scenario["buyer_res_price_range"]), 2),
        round(rng.uniform(*scenario["seller_res_price_range"]), 2),
    )


def reference_steps(
    conditions: list[str],
    roles: list[str],
    steps: int,
    start: int = 0,
    stop: int = 1500,
    trials: int = TRIALS,
    per_step: int = PER_STEP,
) -> list[dict]:
    """The groups of steps 1..`steps`: scenario > transparency > rounds > mode > trial, prices then the role
    from one generator, the groups shuffled by it and cut into batches, the batches reshuffled in place with
    Random(seed + step) whenever the steps have gone through all of them."""
    rng = random.Random(SEED)
    groups = []
    for index in range(start, stop):
        for condition in conditions:
            for _rounds in [4]:
                for _mode in ["simultaneous"]:
                    for _ in range(trials):
                        buyer, seller = prices(rng, low()[index])
                        groups.append(fields(index, condition, buyer, seller, rng.choice(roles)))
    rng.shuffle(groups)
    batches = [groups[i : i + per_step] for i in range(0, len(groups), per_step)]
    listed = []
    for step in range(1, steps + 1):
        at = (step - 1) % len(batches)
        if at == 0 and step > 1:
            random.Random(SEED + step).shuffle(batches)
        listed += [
            {"kind": "train", "step": step, "group": g, **group, "episodes": GROUP_SIZE}
            for g, group in enumerate(batches[at], start=1)
        ]
    return listed


def reference_validation(conditions: list[str], roles: list[str]) -> list[dict]:
    """scenario > mode > transparency > rounds > first actor > role > trial, prices from their own generator."""
    rng = random.Random(SEED)
    games = []
    for index in range(1500, 1508):
        for mode in ["simultaneous"]:
            for condition in conditions:
                for _rounds in [4]:
                    for first_actor in ["buyer"]:
                        if mode == "simultaneous" and first_actor != "buyer":
                            continue
                        for role in roles:
                            for _ in range(VAL_TRIALS):
                                buyer, seller = prices(rng, low()[index])
                                games.append(fields(index, condition, buyer, seller, role))
    return [{"kind": "validation", "index": i, **game} for i, game in enumerate(games, start=1)]


def plan(*args: str) -> list[dict]:
    result = run_main(main, "plan", *args, env=ENV)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.parametrize("preset", sorted(REFERENCE))
def test_the_plan_is_the_references_groups_and_validation_games(preset):
    conditions, roles = REFERENCE[preset]
    listed = plan("--config", f"train/configs/{preset}.yaml", "--steps", "3")
    assert [e for e in listed if e["kind"] == "train"] == reference_steps(conditions, roles, 3)
    validation = [e for e in listed if e["kind"] == "validation"]
    assert validation == reference_validation(conditions, roles)
    assert len(validation) == 8 * len(conditions) * len(roles) * VAL_TRIALS
    assert listed[-len(validation) :] == validation


def test_the_first_step_is_the_default_and_overrides_apply():
    listed = plan("--config", "train/configs/buyer-grpo.yaml", "--seed", "42", "--val-trials", "2")
    assert [e for e in listed if e["kind"] == "train"] == reference_steps(["seller_unaware"], ["buyer"], 1)
    assert sum(e["kind"] == "validation" for e in listed) == 8 * 2


def test_steps_go_round_as_the_reference_reshuffles_them():
    """10 groups in steps of 3: four steps (the last of one group), then the steps reshuffled, three times."""
    listed = plan(
        "--config",
        "train/configs/joint-grpo.yaml",
        "--train-split",
        "low:0:10",
        "--conditions",
        "full",
        "--trials-per-scenario",
        "1",
        "--groups-per-step",
        "3",
        "--steps",
        "12",
    )
    expected = reference_steps(["full"], ["buyer", "seller"], 12, stop=10, trials=1, per_step=3)
    assert [e for e in listed if e["kind"] == "train"] == expected
    assert [sum(e["step"] == s for e in expected) for s in (1, 2, 3, 4)] == [3, 3, 3, 1]


def test_bad_arguments_are_refused():
    assert run_main(main, "plan", "--config", "train/configs/buyer-grpo.yaml", "--steps", "0", env=ENV).returncode == 2
    unknown = run_main(main, "plan", "--config", "train/configs/buyer-grpo.yaml", "--train-split", "nowhere", env=ENV)
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: ")


def test_the_plan_loads_no_model_library():
    """A fresh interpreter: neither torch nor transformers (nor peft, accelerate) is imported."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "train", "plan", "--config", "train/configs/joint-grpo.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
    )
    assert result.returncode == 0, result.stderr
    imported = {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "train" in imported and not imported & {"torch", "transformers", "peft", "accelerate"}
    assert len(result.stdout.splitlines()) == PER_STEP + 1024
