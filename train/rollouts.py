"""Rollouts: the training groups, the games that fill them, rewards and validation (docs/TRAINING.md steps 1-3, 7).

The training groups and the validation games are drawn exactly as the reference trainer draws them
(Avmb/llm-bargaining-agents, rl/bargaining_rl.py), so that a run here trains and validates on the
reference's trials, in the reference's order. Both draw each trial's prices, buyer first, from a
`random.Random(seed)` of their own while enumerating the cells in the reference's nesting; the
groups also draw their trained role from it and are shuffled by it, then cut into steps that are
reshuffled each time the run goes through all of them. A group's episodes are the same trial played
`group_size` times. Everything is played by bargain's own episode loop and agents: the trained side
is an LLM agent on the current adapter, the opponent the base model (the adapter switched off), the
adapter itself (joint runs) or a scripted tactic.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, replace

import pandas as pd

from bargain.agents.agent import Side
from bargain.agents.arms import BASE, Arm
from bargain.agents.backends import Backends, Sampling
from bargain.agents.factory import agent_factory
from bargain.agents.llm import LLMAgent
from bargain.engine import scenarios
from bargain.engine.prompts import PromptVersion
from bargain.engine.trial import Condition, Mode, Role, Scenario, Trial
from bargain.runs.episodes import Episode, play_many
from train.advantages import group_advantages
from train.config import TrainConfig


@dataclass(frozen=True)
class Group:
    """One trial and the role trained on it: a training group (the trial played `group_size`
    times) or one validation game."""

    trial: Trial
    role: Role


@dataclass(frozen=True)
class Schedule:
    """Every training group in the order the steps take them. The seed stays with them because
    the reference reshuffles its steps with it each time it has gone through all of them."""

    groups: tuple[Group, ...]
    seed: int


def split_scenarios(source: scenarios.ScenarioSet, split: str) -> tuple[Scenario, ...]:
    """The scenarios of a split (`train`), a tier (`low`) or `TIER:START:STOP`, in dataset order."""
    return source.slice(*scenarios.selection(split))


def draw_trial(cfg: TrainConfig, rng: random.Random, trial_id: int, scenario: Scenario, condition: str) -> Trial:
    """A trial under the training rules (simultaneous, the buyer first, `max_rounds`), its prices
    drawn from `rng` as the reference does: v_B then v_S, each uniform over its range, in cents."""
    buyer_price, seller_price = scenarios.draw_prices(rng, scenario)
    return Trial(
        trial_id=trial_id,
        scenario=scenario,
        condition=Condition(condition),
        buyer_price=buyer_price,
        seller_price=seller_price,
        max_rounds=cfg.max_rounds,
        mode=Mode.SIMULTANEOUS,
        first_actor=Role.BUYER,
    )


def build_groups(cfg: TrainConfig, source: scenarios.ScenarioSet) -> Schedule:
    """Every training group, in the order the steps take them.

    The reference nests scenario > condition > rounds > mode > trial; rounds and mode have one
    value here (`max_rounds`, simultaneous), so the loops below are the same enumeration. Per
    group it draws v_B, v_S and then the trained role, from one generator, also when there is
    only one role (the draw moves the generator on), then shuffles the groups with it."""
    rng = random.Random(cfg.seed)
    roles = [Role(r) for r in cfg.roles]
    groups: list[Group] = []
    for scenario in split_scenarios(source, cfg.train_split):
        for condition in cfg.conditions:
            for _ in range(cfg.trials_per_scenario):
                trial = draw_trial(cfg, rng, len(groups) + 1, scenario, condition)
                groups.append(Group(trial, rng.choice(roles)))
    rng.shuffle(groups)
    return Schedule(tuple(groups), cfg.seed)


def groups_for_step(schedule: Schedule, step: int, per_step: int) -> list[Group]:
    """The groups of step `step` (counting from 1), as the reference takes them: the groups cut
    into steps of `per_step` (the last one shorter when they do not divide evenly), one after the
    other; each time they run out, at step s, the list of steps is shuffled again in place with
    `random.Random(seed + s)` and taken from its start."""
    steps = [schedule.groups[i : i + per_step] for i in range(0, len(schedule.groups), per_step)]
    laps, index = divmod(step - 1, len(steps))
    for lap in range(1, laps + 1):
        random.Random(schedule.seed + lap * len(steps) + 1).shuffle(steps)
    return list(steps[index])


def validation_games(cfg: TrainConfig, source: scenarios.ScenarioSet) -> list[Group]:
    """The validation games (the same at every step), as the reference draws them.

    The reference nests scenario > mode > condition > rounds > first actor > role > trial, with
    its own `random.Random(seed)` and v_B then v_S per trial (no role draw), under the training
    conditions; mode, rounds and first actor have one value here (simultaneous, `max_rounds`, the
    buyer). Each trained role gets trials of its own (both roles in joint runs)."""
    rng = random.Random(cfg.seed)
    games: list[Group] = []
    for scenario in split_scenarios(source, cfg.val_split):
        for condition in cfg.conditions:
            for role in cfg.roles:
                for _ in range(cfg.val_trials):
                    games.append(Group(draw_trial(cfg, rng, len(games) + 1, scenario, condition), Role(role)))
    return games


def sampling(cfg: TrainConfig, trained: bool) -> Sampling:
    """The trained side's or the opponent's sampling parameters."""
    return Sampling(
        temperature=cfg.trained_temperature if trained else cfg.opponent_temperature,
        top_p=cfg.trained_top_p if trained else cfg.opponent_top_p,
        top_k=cfg.top_k,
        presence_penalty=cfg.presence_penalty,
        max_tokens=cfg.max_completion_tokens,
    )


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

    episodes = asyncio.run(
        play_many(trials, agents_for, ("buyer", "seller"), cfg.rollout_concurrency, cfg.sanity_check, progress=False)
    )
    return [episodes[g * cfg.group_size : (g + 1) * cfg.group_size] for g in range(len(groups))]


def reward(episode: Episode, role: Role) -> float:
    """The trained side's signed normalised utility (0 without a deal, or for a failed game)."""
    return episode.state.outcome().norm_utility(role) if episode.finished else 0.0


def advantages(cfg: TrainConfig, groups: list[Group], played: list[list[Episode]]) -> list[list[float | None]]:
    """Per group, the advantage of each episode, over the episodes that finished: one that failed (the backend
    gave up on it) is dropped from its group, as in the reference, rather than scored 0 (None here)."""
    out = []
    for group, episodes in zip(groups, played):
        kept = [e for e in episodes if e.finished]
        values = iter(group_advantages([reward(e, group.role) for e in kept], cfg.reward_transform) if kept else [])
        out.append([float(next(values)) if e.finished else None for e in episodes])
    return out


def validate(cfg: TrainConfig, players: Players, source: scenarios.ScenarioSet) -> pd.DataFrame:
    """The trained role(s) on the validation games: per role and condition, deal rate, the trained side's mean
    normalised utility (`reward`) and both sides' (`buyer_reward`, `seller_reward`), with a pooled ALL row per
    role."""
    games = validation_games(cfg, source)
    roles = {g.trial.trial_id: g.role for g in games}
    episodes = asyncio.run(
        play_many(
            [g.trial for g in games],
            lambda t: players.pair(roles[t.trial_id], seed=cfg.seed + t.trial_id),
            ("buyer", "seller"),
            cfg.rollout_concurrency,
            False,
            progress=False,
        )
    )
    frame = pd.DataFrame(
        [
            {
                "role": g.role.value,
                "condition": e.trial.condition.value,
                "deal": e.finished and e.state.outcome().deal,
                "reward": reward(e, g.role),
                "buyer_reward": reward(e, Role.BUYER),
                "seller_reward": reward(e, Role.SELLER),
            }
            for g, e in zip(games, episodes)
        ]
    )
    rows = []
    for role in cfg.roles:
        played = frame[frame["role"] == role]
        for condition, cell in [*played.groupby("condition", sort=False), ("ALL", played)]:
            rows.append(
                {
                    "role": role,
                    "condition": condition,
                    "games": len(cell),
                    "deal_rate": float(cell["deal"].mean()),
                    "reward": float(cell["reward"].mean()),
                    "buyer_reward": float(cell["buyer_reward"].mean()),
                    "seller_reward": float(cell["seller_reward"].mean()),
                }
            )
    return pd.DataFrame(rows)
