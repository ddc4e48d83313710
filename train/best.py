"""Picking a run's checkpoint as the reference picked the released adapters (docs/TRAINING.md, "Which
checkpoint was released"): the step with the best validation reward of the trained side, on the training
conditions pooled; for joint runs the seller's. Light: pandas and YAML only, no model library.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from bargain.engine.trial import Role


def judged_role(roles: list[str]) -> str:
    """The role whose validation reward picks a run's checkpoint, as the reference picked the released ones: the
    trained role of a single-role run, and the seller's for a joint run."""
    return roles[0] if len(roles) == 1 else Role.SELLER.value


def best(run_dir: str | Path, metric: str = "reward") -> tuple[int, Path, float, pd.DataFrame]:
    """The step whose pooled (ALL conditions) validation row of the judged role is highest in `metric` (the
    earliest among ties), its checkpoint, that value, and the five best steps with deal rate and both rewards."""
    run_dir = Path(run_dir)
    path = run_dir / "validation.csv"
    if not path.exists():
        raise FileNotFoundError(f"no validation table in {run_dir}: train with val_interval > 0")
    table = pd.read_csv(path)
    if metric not in table.columns or metric in ("step", "role", "condition"):
        numeric = [c for c in table.columns if c not in ("step", "role", "condition")]
        raise ValueError(f"validation.csv has no metric {metric!r}; its metrics: {', '.join(numeric)}")
    saved = run_dir / "config.yaml"
    roles = yaml.safe_load(saved.read_text())["roles"] if saved.exists() else sorted(table["role"].unique())
    pooled = table[(table["condition"] == "ALL") & (table["role"] == judged_role(roles))].set_index("step")
    ranked = pooled.sort_values([metric, "step"], ascending=[False, True], kind="stable")
    step = int(ranked.index[0])
    shown = [c for c in ("deal_rate", "buyer_reward", "seller_reward", metric) if c in ranked.columns]
    return (
        step,
        run_dir / "checkpoints" / f"step_{step}",
        float(ranked.iloc[0][metric]),
        ranked[list(dict.fromkeys(shown))].head(5),
    )
