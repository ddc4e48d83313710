"""The paper's published outcomes per cell, to set a run beside
(bargain/data/paper_reference_cells.csv).

A run matches one of the paper's RL evaluations when it plays the games of the `paper-rl-test`
grid (its scenarios and rules; fewer trials per cell give noisier means of the same cells) with
the same arms and temperatures: a buyer or seller adapter at T 0.7 against the base model at T 0.1
(the frozen-opponent preset), or a joint adapter (or the base model) against the base model or
itself, both at T 0.7. The paper's zero-shot rows are hosted models in self-play on
`paper-zeroshot`.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import pandas as pd

from bargain.agents.arms import ADAPTERS
from bargain.engine.scenarios import GRIDS, GridSpec
from bargain.engine.trial import Role

COMPARED = (
    "n",
    "deal_rate",
    "buyer_norm_utility",
    "seller_norm_utility",
    "buyer_utility",
    "seller_utility",
    "nbs_deviation_share",
    "rounds",
)


@lru_cache(maxsize=1)
def cells() -> pd.DataFrame:
    """The bundled reference table."""
    with resources.files("bargain.data").joinpath("paper_reference_cells.csv").open() as handle:
        return pd.read_csv(handle)


def _variants() -> dict[tuple[str, float, str, float], str]:
    """(buyer spec, buyer temperature, seller spec, seller temperature) -> the paper's variant
    name."""
    trained, frozen, base = 0.7, 0.1, "arm:base"
    table = {(base, trained, base, trained): "joint_base"}
    for arm in ADAPTERS.values():
        snake = arm.name.replace("-", "_")
        if arm.roles == (Role.BUYER,):
            table[(arm.spec, trained, base, frozen)] = snake
        elif arm.roles == (Role.SELLER,):
            table[(base, frozen, arm.spec, trained)] = snake
        else:
            table[(arm.spec, trained, base, trained)] = f"{snake}_as_buyer"
            table[(base, trained, arm.spec, trained)] = f"{snake}_as_seller"
            table[(arm.spec, trained, arm.spec, trained)] = f"{snake}_selfplay"
    return table


VARIANTS = _variants()


def variant(
    grid: GridSpec, buyer: str, buyer_temperature: float, seller: str, seller_temperature: float
) -> str | None:
    """The paper's variant a run reproduces, if any: the test scenarios of `paper-rl-test` under its
    rules (any number of trials per cell, any of its conditions) with the same arms and
    temperatures."""
    paper = GRIDS["paper-rl-test"]
    same_games = (grid.tier, grid.start, grid.stop, grid.max_rounds, grid.mode) == (
        paper.tier,
        paper.start,
        paper.stop,
        paper.max_rounds,
        paper.mode,
    )
    if not same_games or not set(grid.conditions) <= set(paper.conditions):
        return None
    return VARIANTS.get((buyer, buyer_temperature, seller, seller_temperature))


def beside(ours: pd.DataFrame, name: str) -> pd.DataFrame:
    """Our per-condition table next to the paper's for `name`: `ours_*`, `paper_*` per quantity."""
    paper = cells()[cells()["variant"] == name].set_index("transparency")
    rows = []
    for _, row in ours.iterrows():
        condition = row["transparency"]
        entry = {"transparency": condition}
        for column in COMPARED:
            entry[f"ours_{column}"] = row.get(column)
            entry[f"paper_{column}"] = (
                paper[column].get(condition) if condition in paper.index else None
            )
        rows.append(entry)
    return pd.DataFrame(rows)
