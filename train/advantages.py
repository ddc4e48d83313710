"""Rewards to advantages within a group (docs/TRAINING.md step 3).

The reward of the trained side is its signed normalised utility (bargain.engine.outcome; 0 without a
deal). With the rank transform, rewards are replaced by their average ranks within the group
(worst 1 ... best N; ties share the mean of their ranks). The advantage is the group-normalised
value (x - mean) / (population std + 1e-8), so an all-tie group gives zero advantage.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

EPSILON = 1e-8


def rank_transform(rewards: np.ndarray) -> np.ndarray:
    """Average ranks, 1 for the worst reward; ties share the mean of their ranks (pandas' rank, as scipy's
    rankdata gives them: a trainer process need not import scipy.stats, a second of its start, for this)."""
    return pd.Series(rewards, dtype=np.float64).rank(method="average").to_numpy()


def group_advantages(rewards: list[float], transform: str = "rank") -> np.ndarray:
    """The advantage of each episode of one group."""
    values = np.asarray(rewards, dtype=np.float64)
    if transform == "rank":
        values = rank_transform(values)
    elif transform != "none":
        raise ValueError(f"unknown reward transform {transform!r}: use rank or none")
    return (values - values.mean()) / (values.std() + EPSILON)  # numpy's std is the population std
