"""`python -m train plan --config CONFIG [--steps N] [--field value ...]`: what a run would play, without a model.

Prints one JSON object per line: each training group of the first N steps (default 1), then every
validation game. Why: the groups and validation games must be the reference trainer's draws, and
this makes them visible and comparable (tests/test_train_plan.py) without a GPU, a model or torch:
the listing comes from the same functions the trainer calls (train/rollouts.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator

from bargain.engine import scenarios
from train import config as configuration
from train import rollouts
from train.config import TrainConfig


def describe(game: rollouts.Group) -> dict:
    """The fields that make a group or validation game: scenario, condition, prices, trained role."""
    trial = game.trial
    return {
        "product": trial.scenario.product_name,
        "scenario": trial.scenario.ref,
        "condition": trial.condition.value,
        "buyer_price": trial.buyer_price,
        "seller_price": trial.seller_price,
        "role": game.role.value,
    }


def plan(cfg: TrainConfig, steps: int, source: scenarios.ScenarioSet) -> Iterator[dict]:
    """The groups of steps 1..`steps` (`group` counts from 1 within its step), then the validation
    games (`index` counts from 1, in the order they are drawn)."""
    schedule = rollouts.build_groups(cfg, source)
    for step in range(1, steps + 1):
        for number, group in enumerate(rollouts.groups_for_step(schedule, step, cfg.groups_per_step), start=1):
            yield {"kind": "train", "step": step, "group": number, **describe(group), "episodes": cfg.group_size}
    for index, game in enumerate(rollouts.validation_games(cfg, source), start=1):
        yield {"kind": "validation", "index": index, **describe(game)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m train plan",
        conflict_handler="resolve",
        description="Print, one JSON object per line, the training groups of the first "
        "steps and every validation game of a config, without loading a model.",
    )
    parser.add_argument(
        "--config", help="a YAML file, or a preset by name (buyer-grpo, ..., joint-cispo: train/configs/NAME.yaml)"
    )
    configuration.add_arguments(parser)
    # replaces the config's --steps (the run's length, which changes nothing listed here)
    parser.add_argument(
        "--steps", dest="plan_steps", type=int, default=1, metavar="N", help="list the groups of steps 1..N (default 1)"
    )
    args = parser.parse_args(argv)
    if args.plan_steps < 1:
        parser.error("--steps must be at least 1")
    try:
        cfg = configuration.load(args.config, configuration.overrides_from(args))
        lines = [json.dumps(entry) for entry in plan(cfg, args.plan_steps, scenarios.bundled())]
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        print("\n".join(lines))
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped early (`| head`): that is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
