"""Writing a finished grid to a run directory, the same layout for every batch command.

DIR/trials.parquet and DIR/trials.csv: one row per trial, the paper's columns first;
DIR/games.jsonl: one object per trial with every move (a game state rebuilds from it with
`GameState.from_dict`); DIR/summary.md: the per-cell table; DIR/config.json: what ran and
how to run it again.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from bargain import metrics
from bargain.episodes import Episode
from bargain.outcome import trial_record


def trials_frame(episodes: list[Episode], extra: dict) -> pd.DataFrame:
    """One row per finished trial plus the run-wide columns in `extra` (agents, seed, ...)."""
    rows = []
    for episode in episodes:
        if episode.error is not None:
            continue
        rows.append({**trial_record(episode.trial, episode.state.outcome()),
                     "buyer_agent": episode.buyer, "seller_agent": episode.seller, **extra})
    return pd.DataFrame(rows)


def game_record(episode: Episode) -> dict:
    """Everything about one game: its set-up, every move, the error if it failed."""
    return {
        "trial_id": episode.trial.trial_id,
        "scenario": episode.trial.scenario.ref,
        "transparency": episode.trial.condition.value,
        "buyer_agent": episode.buyer,
        "seller_agent": episode.seller,
        "error": episode.error,
        **episode.state.to_dict(),
    }


def _json_default(value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def write_run(out: str | Path, episodes: list[Episode], config: dict, extra: dict) -> pd.DataFrame:
    """Write every output of a run to `out` (created if needed) and return the trials table."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    frame = trials_frame(episodes, extra)
    frame.to_parquet(out / "trials.parquet", index=False)
    frame.to_csv(out / "trials.csv", index=False)
    with open(out / "games.jsonl", "w", encoding="utf-8") as handle:
        for episode in episodes:
            handle.write(json.dumps(game_record(episode), ensure_ascii=False, default=_json_default) + "\n")
    failed = [e for e in episodes if e.error is not None]
    title = f"{config['grid']['name']}: {config['buyer']} (buyer) vs {config['seller']} (seller)"
    summary = metrics.summary_markdown(metrics.cell_table(metrics.prepare(frame)), title) if len(frame) else f"# {title}\n\nNo trial finished.\n"
    if failed:
        summary += f"\n{len(failed)} of {len(episodes)} games failed; see `error` in games.jsonl.\n"
    (out / "summary.md").write_text(summary, encoding="utf-8")
    (out / "config.json").write_text(json.dumps({**config, "failed_games": len(failed)}, indent=2) + "\n", encoding="utf-8")
    return frame
