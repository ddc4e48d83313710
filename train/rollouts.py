"""Rollouts: the training groups, the games that fill them, rewards and validation (docs/TRAINING.md steps 1-3, 7).

Groups are pre-built once from the training split x conditions x trials per scenario with one
`random.Random(seed)`: each is one trial (scenario, condition, v_B, v_S) with its trained role
(drawn for joint runs), shuffled, then taken `groups_per_step` at a time. A group's episodes are
the same trial played `group_size` times. Everything is played by bargain's own episode loop
and agents: the trained side is an LLM agent on the current adapter, the opponent the base
model (the adapter switched off), the adapter itself (joint runs) or a scripted tactic.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from bargain.engine import scenarios
from bargain.agents.agent import Side, agent_factory
from bargain.agents.arms import BASE, Arm
from bargain.agents.backends import Backends, Sampling
from bargain.episodes import Episode, play_many
from bargain.agents.llm import LLMAgent
from bargain.engine.prompts import PromptVersion
from bargain.engine.trial import Condition, Mode, Role, Trial
from train.advantages import group_advantages
from train.config import TrainConfig


@dataclass(frozen=True)
class Group:
    """One trial and the role trained on it."""

    trial: Trial
    role: Role


def grid(cfg: TrainConfig, split: str, conditions: list[str], trials: int) -> scenarios.GridSpec:
    """The grid of a split under the training rules (simultaneous, `max_rounds`)."""
    tier, start, stop = scenarios.selection(split)
    return scenarios.GridSpec(tier=tier, start=start, stop=stop, conditions=tuple(Condition(c) for c in conditions),
                              trials_per_cell=trials, max_rounds=cfg.max_rounds, mode=Mode.SIMULTANEOUS,
                              name=f"train-{split}")


def build_groups(cfg: TrainConfig, source: scenarios.ScenarioSet) -> list[Group]:
    """Every training group, in the order the steps take them."""
    rng = random.Random(cfg.seed)
    trials = scenarios.make_trials(grid(cfg, cfg.train_split, cfg.conditions, cfg.trials_per_scenario), source, cfg.seed)
    groups = [Group(t, Role(rng.choice(cfg.roles))) for t in trials]
    rng.shuffle(groups)
    return groups


def groups_for_step(groups: list[Group], step: int, per_step: int) -> list[Group]:
    """The groups of step `step` (counting from 1), going round the list as often as needed."""
    start = (step - 1) * per_step
    return [groups[(start + i) % len(groups)] for i in range(per_step)]


def sampling(cfg: TrainConfig, trained: bool) -> Sampling:
    """The trained side's or the opponent's sampling parameters."""
    return Sampling(temperature=cfg.trained_temperature if trained else cfg.opponent_temperature,
                    top_p=cfg.trained_top_p if trained else cfg.opponent_top_p, top_k=cfg.top_k,
                    presence_penalty=cfg.presence_penalty, max_tokens=cfg.max_completion_tokens)


class Players:
    """Builds both agents of a game: who is trained, and what plays against it."""

    def __init__(self, cfg: TrainConfig, backends: Backends, trained: Arm):
        self.cfg, self.backends, self.trained = cfg, backends, trained
        self.backend = backends.for_arm(trained)
        self.opponent_tactic = agent_factory(cfg.opponent_tactic) if cfg.opponent_tactic else None

    def pair(self, role: Role, seed: int):
        """(buyer, seller) for a game whose trained side plays `role`."""
        side = Side(sampling(self.cfg, True), prompt_version=PromptVersion.TRAIN)
        trained = LLMAgent(self.trained, self.backend, side.sampling, side.parsing, side.prompt_version)
        if self.opponent_tactic is not None:
            opponent = self.opponent_tactic(seed)
        else:
            other = sampling(self.cfg, False)
            arm = self.trained if self.cfg.opponent == "self" else BASE
            opponent = LLMAgent(arm, self.backends.for_arm(arm), other, prompt_version=PromptVersion.TRAIN)
        return (trained, opponent) if role is Role.BUYER else (opponent, trained)


def play_groups(cfg: TrainConfig, players: Players, groups: list[Group], step: int) -> list[list[Episode]]:
    """Play every group's episodes concurrently; returns them group by group."""
    trials, owners = [], {}
    for g, group in enumerate(groups):
        for k in range(cfg.group_size):
            trial_id = g * cfg.group_size + k + 1
            trials.append(replace(group.trial, trial_id=trial_id))
            owners[trial_id] = group

    def agents_for(trial: Trial):
        return players.pair(owners[trial.trial_id].role, seed=cfg.seed * 100_003 + step * 10_007 + trial.trial_id)

    episodes = asyncio.run(play_many(trials, agents_for, ("buyer", "seller"), cfg.rollout_concurrency,
                                     cfg.sanity_check, progress=False))
    return [episodes[g * cfg.group_size:(g + 1) * cfg.group_size] for g in range(len(groups))]


def reward(episode: Episode, role: Role) -> float:
    """The trained side's signed normalised utility (0 without a deal, or for a failed game)."""
    return episode.state.outcome().norm_utility(role) if episode.finished else 0.0


def advantages(cfg: TrainConfig, groups: list[Group], played: list[list[Episode]]) -> list[np.ndarray]:
    """Per group, the advantage of each episode."""
    return [group_advantages([reward(e, g.role) for e in eps], cfg.reward_transform) for g, eps in zip(groups, played)]


def validate(cfg: TrainConfig, players: Players, source: scenarios.ScenarioSet) -> pd.DataFrame:
    """The trained role(s) on the validation trials (the same every time): per role and condition,
    deal rate and the trained side's mean normalised utility, with a pooled ALL row per role."""
    trials = scenarios.make_trials(grid(cfg, cfg.val_split, cfg.val_conditions, cfg.val_trials), source, cfg.seed)
    rows = []
    for role in (Role(r) for r in cfg.roles):
        episodes = asyncio.run(play_many(trials, lambda t: players.pair(role, seed=cfg.seed + t.trial_id),
                                         ("buyer", "seller"), cfg.rollout_concurrency, False, progress=False))
        frame = pd.DataFrame([{"condition": e.trial.condition.value, "deal": e.finished and e.state.outcome().deal,
                               "reward": reward(e, role)} for e in episodes])
        for condition, cell in [*frame.groupby("condition", sort=False), ("ALL", frame)]:
            rows.append({"role": role.value, "condition": condition, "games": len(cell),
                         "deal_rate": float(cell["deal"].mean()), "reward": float(cell["reward"].mean())})
    return pd.DataFrame(rows)
