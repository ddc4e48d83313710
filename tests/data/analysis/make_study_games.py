"""Writes study_games.csv: a synthetic study with known effects, the data that reference.R fits with lme4,
geepack and survival and that tests/test_analysis_models.py fits with bargain.analysis.models.

60 participants (each its own cluster) play 4 games: every arm once, in a shuffled order, and one arm again;
half the participants are in each condition, roles alternate between participants. A participant's random
intercept is N(0, 0.08^2) for the person's utility and N(0, 0.7^2) on the logit scale for a deal; the agent's
utility has no cluster effect at all (drawn from its own stream), so that REML puts the cluster variance on its
bound at 0, the case where optimisers fail. Deterministic: run
`python tests/data/analysis/make_study_games.py` to rewrite the same file.
"""

import math
from pathlib import Path

import numpy as np
import pandas as pd

ARMS = ("base", "model-a", "model-b")
ARM_UTILITY = {"base": 0.0, "model-a": 0.06, "model-b": -0.04}
ARM_LOGIT = {"base": 0.0, "model-a": 0.5, "model-b": -0.4}
UNAWARE_UTILITY = {"base": -0.03, "model-a": 0.02, "model-b": -0.03}  # condition effect plus interaction
UNAWARE_LOGIT = {"base": -0.2, "model-a": 0.1, "model-b": -0.2}
AGENT_SEED = 1  # one whose REML estimate of the cluster variance is 0


def games(seed: int = 20240611, clusters: int = 60, per_cluster: int = 4) -> pd.DataFrame:
    rng, agent_rng = np.random.default_rng(seed), np.random.default_rng(AGENT_SEED)
    rows = []
    for c in range(clusters):
        condition = "both_aware" if c % 2 == 0 else "both_unaware"
        role = "buyer" if (c // 2) % 2 == 0 else "seller"
        arms = list(rng.permutation(ARMS)) + [ARMS[int(rng.integers(len(ARMS)))]]
        u, v = rng.normal(0.0, 0.08), rng.normal(0.0, 0.7)
        for g, arm in enumerate(arms[:per_cluster], start=1):
            aware = condition == "both_aware"
            utility = (
                0.45
                + ARM_UTILITY[arm]
                + (0.0 if aware else UNAWARE_UTILITY[arm])
                + (0.02 if role == "seller" else 0.0)
                + 0.01 * (g - 1)
                + u
                + rng.normal(0.0, 0.12)
            )
            logit = 0.6 + ARM_LOGIT[arm] + (0.0 if aware else UNAWARE_LOGIT[arm]) + 0.1 * (g - 1) + v
            deal = int(rng.random() < 1.0 / (1.0 + math.exp(-logit)))
            agent_utility = 0.5 - ARM_UTILITY[arm] + agent_rng.normal(0.0, 0.1)
            rows.append((f"p{c + 1:02d}", arm, condition, role, g, round(utility, 6), round(agent_utility, 6), deal))
    columns = ["cluster", "arm", "condition", "human_role", "game_index", "person_norm_utility", "agent_norm_utility"]
    columns.append("deal")
    return pd.DataFrame(rows, columns=columns)


if __name__ == "__main__":
    games().to_csv(Path(__file__).with_name("study_games.csv"), index=False)
