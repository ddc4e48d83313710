"""Simulated studies: a study file's own design played by participants whose outcomes are drawn from stated
parameters, as the rows the analysis fits (cluster, arm, condition, human_role, game_index, outcomes).

Why: a power calculation (`bargain plan`) and a check that the analysis's intervals cover a known truth
(benchmarks/analysis.py) both need studies whose truth is known and whose design is the study's own: its cells,
its games per participant, its assignment (`records.draw_cells`, the rule the app seats participants by: between
or within, least-filled first, distinct arms, the play order, the quotas), so that imbalance and the mix of roles
and games are as the real study will have them.

The outcome model: for participant i in game j against arm a in condition c,
- a continuous outcome (`Continuous`): y = mean + effect(a, c) + u_i + e_ij, u_i ~ N(0, participant_sd^2),
  e_ij ~ N(0, residual_sd^2); a rating is rounded to whole levels and kept within its bounds (`levels`);
- a binary outcome (`Binary`): logit P(y = 1 | u_i) = eta(a, c) + u_i, u_i ~ N(0, participant_sd^2) on the log
  odds. `rate` is the reference arm's share of games with y = 1 over participants (what a study observes, and
  M2 estimates); effects are on the probability scale (marginal risk differences) or on the log odds (conditional
  odds ratios), and `bargain.analysis.latent` converts between the two exactly.
What it simplifies: outcomes are drawn independently of one another (a game without a deal keeps its drawn
utility), neither role nor game index shifts an outcome, and a person arm (two participants in one game) is not
simulated. Seeded: the same seed gives the same rows, and nothing reads global random state.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special

from bargain.analysis.latent import conditional_logit, marginal_probability
from bargain.arena import PERSON
from bargain.study.config import Assignment, Cell, Order, Study
from bargain.study.records import Slot, draw_cells

FACTOR_COLUMNS = ("cluster", "arm", "condition", "human_role", "game_index")


class SimulationError(ValueError):
    """Parameters or a study that cannot be simulated; the message says what to change."""


class Scale(enum.StrEnum):
    """The scale of a binary outcome's effects: risk differences, or log odds ratios given the participant."""

    PROBABILITY = "probability"
    LOGIT = "logit"


@dataclass(frozen=True)
class Effects:
    """An outcome's differences from the reference arm: per arm in every condition (`by_arm`), or in one
    condition (`by_cell`, keyed (arm, condition), which wins over `by_arm`); an arm named in neither: 0."""

    by_arm: Mapping[str, float] = field(default_factory=dict)
    by_cell: Mapping[tuple[str, str], float] = field(default_factory=dict)

    def of(self, arm: str, condition: str) -> float:
        """The effect of `arm` in `condition`."""
        return self.by_cell.get((arm, condition), self.by_arm.get(arm, 0.0))


@dataclass(frozen=True)
class Continuous:
    """A continuous outcome: the reference arm's mean, the arms' effects, the SD of participants' own levels and
    of a game around its participant's level; `levels` (low, high) makes it a rating of whole levels."""

    mean: float
    effects: Effects = field(default_factory=Effects)
    participant_sd: float = 0.0
    residual_sd: float = 1.0
    levels: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if self.participant_sd < 0 or self.residual_sd < 0:
            raise SimulationError(f"standard deviations are 0 or more; got {self.participant_sd}, {self.residual_sd}")

    def cell_mean(self, arm: str, condition: str) -> float:
        """The mean of the outcome in a cell, over participants (before any rounding to levels)."""
        return self.mean + self.effects.of(arm, condition)


@dataclass(frozen=True)
class Binary:
    """A 0/1 outcome: the reference arm's rate over participants, the arms' effects on `scale`, and the SD of
    participants' own log odds."""

    rate: float
    effects: Effects = field(default_factory=Effects)
    scale: Scale = Scale.PROBABILITY
    participant_sd: float = 0.0

    def __post_init__(self) -> None:
        if not 0 < self.rate < 1:
            raise SimulationError(f"a rate is strictly between 0 and 1; got {self.rate}")
        if self.participant_sd < 0:
            raise SimulationError(f"a standard deviation is 0 or more; got {self.participant_sd}")

    def cell_logit(self, arm: str, condition: str) -> float:
        """The log odds in a cell of a participant whose own effect is 0."""
        if self.scale is Scale.LOGIT:
            return conditional_logit(self.rate, self.participant_sd) + self.effects.of(arm, condition)
        return conditional_logit(self.cell_mean(arm, condition), self.participant_sd)

    def cell_mean(self, arm: str, condition: str) -> float:
        """The share of games with y = 1 in a cell, over participants (what M2 estimates)."""
        if self.scale is Scale.LOGIT:
            return marginal_probability(self.cell_logit(arm, condition), self.participant_sd)
        effect = self.effects.of(arm, condition)
        if not 0 < self.rate + effect < 1:
            raise SimulationError(
                f"{arm} in {condition}: a rate of {self.rate:g} and an effect of {effect:+g} leave no probability "
                "between 0 and 1; choose a smaller effect"
            )
        return self.rate + effect


Outcome = Continuous | Binary


def seat(study: Study, participants: int, rng: random.Random) -> list[list[Cell]]:
    """Each participant's cells in play order, drawn one arrival after another as the app draws them; a
    SimulationError when the study's quotas seat fewer."""
    if any(study.arms[cell.arm].spec == PERSON for cell in study.cells):
        raise SimulationError("a person arm pairs participants in one game, which the simulation does not model")
    within = study.design.assignment is Assignment.WITHIN
    keys = {study.cell_key(cell): cell for cell in study.cells}
    fixed = list(keys) if within and study.design.order is Order.FIXED else None
    filled = dict.fromkeys(sorted(keys), 0)
    quota = study.design.quota_per_cell
    seats = []
    for arrived in range(participants):
        slots = [Slot(key, count, quota) for key, count in filled.items()]
        chosen = draw_cells(slots, study.games_per_participant, within, rng, fixed, study.design.distinct_arms)
        if not chosen:
            raise SimulationError(
                f"the study's quotas ({quota} {'games' if within else 'participants'} in each of its {len(keys)} "
                f"cells) seat {arrived} participants, not {participants}; raise design.quota_per_cell or simulate "
                "fewer participants"
            )
        for key in set(chosen):
            filled[key] += 1
        seats.append([keys[key] for key in chosen])
    return seats


def simulate(
    study: Study, outcomes: Mapping[str, Outcome], participants: int, seed: int | np.random.Generator
) -> pd.DataFrame:
    """The game rows of `participants` simulated participants of `study` (participant ids p0001, ...), one column
    per outcome; `seed` an integer or a numpy Generator to draw from."""
    rng = np.random.default_rng(seed)
    seats = seat(study, participants, random.Random(int(rng.integers(2**63))))
    games = study.games_per_participant
    rows = pd.DataFrame(
        [
            (f"p{i + 1:04d}", cell.arm, cell.condition.value, cell.role.value, j + 1)
            for i, cells in enumerate(seats)
            for j, cell in enumerate(cells)
        ],
        columns=list(FACTOR_COLUMNS),
    )
    participant = np.repeat(np.arange(participants), games)  # each row's participant, (n_games,)
    cells = list(zip(rows["arm"], rows["condition"]))
    for name, outcome in outcomes.items():
        own = rng.normal(0.0, outcome.participant_sd, participants)[participant]
        if isinstance(outcome, Continuous):
            means = _per_cell(cells, outcome.cell_mean)
            y = means + own + rng.normal(0.0, outcome.residual_sd, len(rows))
            rows[name] = y if outcome.levels is None else np.clip(np.rint(y), *outcome.levels)
        else:
            logits = _per_cell(cells, outcome.cell_logit)
            rows[name] = (rng.random(len(rows)) < special.expit(logits + own)).astype(float)
    return rows


def _per_cell(cells: list[tuple[str, str]], value_of: Callable[[str, str], float]) -> np.ndarray:
    """`value_of(arm, condition)` for each row's cell, computed once per cell."""
    values = {cell: value_of(*cell) for cell in dict.fromkeys(cells)}
    return np.array([values[cell] for cell in cells])
