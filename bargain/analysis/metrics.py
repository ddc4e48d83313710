"""Per-cell tables of a trials file, and the paper's derived quantities (docs/PROTOCOL.md §8).

Reads our trials tables and the paper's released ones alike: `deal` as "deal"/"no_deal" (or a
boolean, or the raw `result` column), ranges as "(lo, hi)" strings or lists, judge columns
present, empty or absent. Quantities the paper's layout lacks (normalised utilities, welfare,
NBS deviations) are derived from the columns it has. A cell is a group of trials (by
condition unless told otherwise); a pooled `ALL` row follows the cells.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from bargain.engine.trial import Condition

JUDGE_COLUMNS = ("seller_honesty", "buyer_honesty", "buyer_credulity", "seller_credulity")
MEAN_COLUMNS = (
    "buyer_utility",
    "seller_utility",
    "buyer_norm_utility",
    "seller_norm_utility",
    "welfare",
    "seller_advantage",
)
DEAL_MEAN_COLUMNS = ("nbs_deviation", "nbs_deviation_share")  # over deals only
T_COLUMNS = ("seller_advantage", "nbs_deviation", "nbs_deviation_share")
POOLED = "ALL"


class MetricsError(ValueError):
    """A trials table that lacks what a metric needs (the message names the columns)."""


def read_trials(path: str | Path) -> pd.DataFrame:
    """Read a trials table from CSV, Parquet or a pandas pickle (the paper's `.pkl` releases)."""
    path = Path(path)
    if not path.exists():
        raise MetricsError(f"no such file: {path}")
    readers = {
        ".csv": pd.read_csv,
        ".parquet": pd.read_parquet,
        ".pq": pd.read_parquet,
        ".pkl": pd.read_pickle,
        ".pickle": pd.read_pickle,
    }  # only open pickles you trust
    reader = readers.get(path.suffix.lower())
    if reader is None:
        raise MetricsError(f"{path}: expected a .csv, .parquet or .pkl trials file")
    try:
        frame = reader(path)
    except Exception as exc:  # each format fails in its own way; all mean "not a trials table"
        raise MetricsError(
            f"cannot read {path} as a trials table: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(frame, pd.DataFrame):
        raise MetricsError(f"{path} holds a {type(frame).__name__}, not a table of trials")
    return prepare(frame)


def _deal_flags(frame: pd.DataFrame) -> pd.Series:
    if "deal" in frame:
        column = frame["deal"]
    elif "result" in frame:
        column = frame["result"]
    else:
        raise MetricsError("a trials table needs a `deal` (or `result`) column")
    if column.dtype == bool:
        return column
    text = column.astype(str).str.strip().str.lower()
    unknown = sorted(set(text) - {"deal", "no_deal", "true", "false", "1", "0"})
    if unknown:
        raise MetricsError(f"unrecognised values in the deal column: {unknown[:5]}")
    return text.isin(("deal", "true", "1"))


def prepare(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of a trials table with every column the metrics use, derived where missing."""
    required = (
        "transparency",
        "buyer_res_price",
        "seller_res_price",
        "buyer_utility",
        "seller_utility",
        "rounds",
    )
    missing = [c for c in required if c not in frame]
    if missing:
        raise MetricsError(f"the trials table lacks {', '.join(missing)}")
    out = frame.copy()
    out["deal"] = _deal_flags(frame)
    surplus = out["buyer_res_price"] - out["seller_res_price"]
    out["surplus"] = surplus
    normalise = out["deal"] & (surplus > 0)
    for side in ("buyer", "seller"):
        utility = out[f"{side}_utility"].where(out["deal"], 0.0).astype(float)
        out[f"{side}_utility"] = utility
        if f"{side}_norm_utility" not in frame:
            out[f"{side}_norm_utility"] = (utility / surplus).where(normalise, 0.0)
    out["welfare"] = out["buyer_utility"] + out["seller_utility"]
    out["seller_advantage"] = out["seller_utility"] - out["buyer_utility"]
    nbs = (
        out["true_nbs_price"]
        if "true_nbs_price" in out
        else (out["buyer_res_price"] + out["seller_res_price"]) / 2
    )
    deal_price = pd.to_numeric(
        out.get("deal_price", pd.Series(np.nan, index=out.index)), errors="coerce"
    )
    out["nbs_deviation"] = (deal_price - nbs).where(out["deal"])
    out["nbs_deviation_share"] = (out["nbs_deviation"] / surplus).where(normalise)
    for column in JUDGE_COLUMNS:
        if column in out:
            out[column] = pd.to_numeric(out[column], errors="coerce")
    return out


def _t_stat(values: pd.Series) -> float:
    """One-sample t statistic against 0; NaN when it is undefined (under two values, no spread)."""
    values = values.dropna()
    if len(values) < 2 or values.std(ddof=1) == 0:
        return math.nan
    return float(stats.ttest_1samp(values, 0.0).statistic)


def cell(frame: pd.DataFrame) -> dict:
    """The metrics of one group of trials."""
    deals = frame[frame["deal"]]
    row: dict = {
        "n": len(frame),
        "deal_rate": float(frame["deal"].mean()) if len(frame) else math.nan,
    }
    for column in MEAN_COLUMNS:
        row[column] = float(frame[column].mean())
    for column in DEAL_MEAN_COLUMNS:
        row[column] = float(deals[column].mean()) if len(deals) else math.nan
    row["rounds"] = float(frame["rounds"].mean())
    for column in T_COLUMNS:
        row[f"{column}_t"] = _t_stat(frame[column])
    for side in ("buyer", "seller"):
        if f"{side}_invalid" in frame:
            row[f"{side}_invalid"] = float(frame[f"{side}_invalid"].mean())
    for column in JUDGE_COLUMNS:
        if column in frame:
            scores = frame[column].dropna()
            row[column] = float(scores.mean()) if len(scores) else math.nan
            row[f"{column}_n"] = int(len(scores))
    return row


def scatter_quantities(frame: pd.DataFrame) -> dict:
    """The paper's scatter axes: mean of all 2N normalised utilities, mean of all honesty scores."""
    utilities = pd.concat([frame["buyer_norm_utility"], frame["seller_norm_utility"]])
    honesty = [frame[c].dropna() for c in ("seller_honesty", "buyer_honesty") if c in frame]
    scores = pd.concat(honesty) if honesty else pd.Series(dtype=float)
    return {
        "avg_norm_utility_per_agent": float(utilities.mean()) if len(utilities) else math.nan,
        "avg_honesty": float(scores.mean()) if len(scores) else None,
    }


def cell_order(key: object) -> tuple:
    """Conditions in the paper's order (full, buyer_unaware, seller_unaware, both_unaware), then
    numbers in numeric order (4 before 10), then anything else as text."""
    order = [c.value for c in Condition]
    if key in order:
        return (order.index(key), 0.0, "")
    if isinstance(key, (int, float, np.number)) and not isinstance(key, bool):
        return (len(order), float(key), "")
    return (len(order) + 1, 0.0, str(key))


def cell_table(frame: pd.DataFrame, by: Sequence[str] = ("transparency",)) -> pd.DataFrame:
    """One row per cell (grouped by `by`) plus a pooled `ALL` row carrying the scatter
    quantities."""
    by = list(by)
    if not by:
        raise MetricsError("name at least one column to group by (e.g. transparency)")
    missing = [c for c in by if c not in frame]
    if missing:
        raise MetricsError(
            f"cannot group by {', '.join(missing)}: no such column (have "
            f"{', '.join(frame.columns)})"
        )
    groups = [
        ((key if isinstance(key, tuple) else (key,)), group)
        for key, group in frame.groupby(by, sort=False, dropna=False)
    ]
    groups.sort(key=lambda item: tuple(cell_order(k) for k in item[0]))
    rows = [{**dict(zip(by, keys)), **cell(group)} for keys, group in groups]
    rows.append({**{c: POOLED for c in by}, **cell(frame), **scatter_quantities(frame)})
    return pd.DataFrame(rows)


def summary_markdown(table: pd.DataFrame, title: str) -> str:
    """A per-cell table as Markdown, numbers to three decimals."""
    shown = table.drop(
        columns=[c for c in ("avg_norm_utility_per_agent", "avg_honesty") if c in table]
    )
    return f"# {title}\n\n" + shown.to_markdown(index=False, floatfmt=".3f") + "\n"


def records(table: pd.DataFrame) -> list[dict]:
    """A per-cell table as JSON-ready objects (NaN as null)."""
    clean = table.astype(object).where(table.notna(), None)
    return [
        {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
        for row in clean.to_dict("records")
    ]
