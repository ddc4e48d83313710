"""The outcome of one game: utilities, normalised utilities and the NBS benchmarks (docs/PROTOCOL.md §8).

u_B = v_B - p and u_S = p - v_S on a deal (not clipped), 0 without one; the normalised utility
nu = u / S with S = v_B - v_S (0 without a deal or when S <= 0) is also the RL reward. The
paper's per-trial columns come first in a trial record, in the paper's order and names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bargain.engine.trial import Condition, Role, Trial

# The paper's per-trial columns, in the order of its released tables.
PAPER_COLUMNS = (
    "trial_id",
    "mode",
    "transparency",
    "max_rounds",
    "first_actor",
    "item_name",
    "buyer_res_price",
    "seller_res_price",
    "buyer_res_price_range",
    "seller_res_price_range",
    "deal",
    "deal_price",
    "rounds",
    "buyer_utility",
    "seller_utility",
    "true_nbs_price",
    "expected_nbs_price",
)


@dataclass(frozen=True)
class Outcome:
    """How a game ended and what each side got."""

    deal: bool
    deal_price: float | None
    rounds: int
    surplus: float
    buyer_utility: float
    seller_utility: float
    buyer_norm_utility: float
    seller_norm_utility: float
    true_nbs_price: float
    expected_nbs_price: float
    buyer_invalid: int = 0
    seller_invalid: int = 0

    @property
    def welfare(self) -> float:
        """u_B + u_S: the surplus on a deal, 0 without one."""
        return self.buyer_utility + self.seller_utility

    @property
    def seller_advantage(self) -> float:
        """u_S - u_B."""
        return self.seller_utility - self.buyer_utility

    @property
    def nbs_deviation(self) -> float:
        """p - (v_B + v_S) / 2 on a deal; NaN without one."""
        return self.deal_price - self.true_nbs_price if self.deal_price is not None else math.nan

    @property
    def nbs_deviation_share(self) -> float:
        """The NBS deviation as a share of the surplus; NaN without a deal or a surplus."""
        return self.nbs_deviation / self.surplus if self.deal and self.surplus > 0 else math.nan

    def utility(self, role: Role) -> float:
        """A side's raw utility."""
        return self.buyer_utility if role is Role.BUYER else self.seller_utility

    def norm_utility(self, role: Role) -> float:
        """A side's normalised utility (its RL reward)."""
        return self.buyer_norm_utility if role is Role.BUYER else self.seller_norm_utility


def settle(
    trial: Trial, deal_price: float | None, rounds: int, buyer_invalid: int = 0, seller_invalid: int = 0
) -> Outcome:
    """The outcome of `trial` ended at `deal_price` (None: no deal) after `rounds` rounds."""
    v_b, v_s = trial.buyer_price, trial.seller_price
    surplus = v_b - v_s
    deal = deal_price is not None
    u_b = v_b - deal_price if deal_price is not None else 0.0
    u_s = deal_price - v_s if deal_price is not None else 0.0
    normalise = deal and surplus > 0
    true_nbs = (v_b + v_s) / 2
    if trial.condition is Condition.FULL:
        expected_nbs = true_nbs
    else:
        (bl, bh), (sl, sh) = trial.scenario.buyer_range, trial.scenario.seller_range
        expected_nbs = (bl + bh + sl + sh) / 4.0
    return Outcome(
        deal=deal,
        deal_price=deal_price,
        rounds=rounds,
        surplus=surplus,
        buyer_utility=u_b,
        seller_utility=u_s,
        buyer_norm_utility=u_b / surplus if normalise else 0.0,
        seller_norm_utility=u_s / surplus if normalise else 0.0,
        true_nbs_price=true_nbs,
        expected_nbs_price=expected_nbs,
        buyer_invalid=buyer_invalid,
        seller_invalid=seller_invalid,
    )


def trial_record(trial: Trial, outcome: Outcome) -> dict:
    """One row of a trials table: the paper's columns first, then ours."""
    scenario = trial.scenario
    return {
        "trial_id": trial.trial_id,
        "mode": trial.mode.value,
        "transparency": trial.condition.value,
        "max_rounds": trial.max_rounds,
        "first_actor": trial.first_actor.value,
        "item_name": scenario.product_name,
        "buyer_res_price": trial.buyer_price,
        "seller_res_price": trial.seller_price,
        "buyer_res_price_range": str(tuple(scenario.buyer_range)),
        "seller_res_price_range": str(tuple(scenario.seller_range)),
        "deal": "deal" if outcome.deal else "no_deal",
        "deal_price": outcome.deal_price if outcome.deal else math.nan,
        "rounds": outcome.rounds,
        "buyer_utility": outcome.buyer_utility,
        "seller_utility": outcome.seller_utility,
        "true_nbs_price": outcome.true_nbs_price,
        "expected_nbs_price": outcome.expected_nbs_price,
        "scenario": scenario.ref,
        "price_tier": scenario.tier,
        "scenario_index": scenario.index,
        "surplus": outcome.surplus,
        "buyer_norm_utility": outcome.buyer_norm_utility,
        "seller_norm_utility": outcome.seller_norm_utility,
        "welfare": outcome.welfare,
        "seller_advantage": outcome.seller_advantage,
        "nbs_deviation": outcome.nbs_deviation,
        "nbs_deviation_share": outcome.nbs_deviation_share,
        "buyer_invalid": outcome.buyer_invalid,
        "seller_invalid": outcome.seller_invalid,
    }
