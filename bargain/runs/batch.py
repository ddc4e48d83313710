"""Playing a grid into a run directory, resumably; the same layout for every batch command.

DIR/games.jsonl: one object per trial with every move and the model agents' per-move records
(a game state rebuilds from it with `GameState.from_dict`); it grows as games finish, so an
interrupted run continues where it stopped (its encoding: `bargain.runs.gamelog`). DIR/trials.parquet and
DIR/trials.csv: one row per
finished trial, the paper's columns first; DIR/summary.md: the per-cell table and the agents'
token usage; DIR/config.json: what ran and how to run it again. `evaluate` adds PNG figures and,
when the run reproduces one of the paper's, the paper's numbers beside ours.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from bargain.agents.agent import Side
from bargain.agents.arms import resolve
from bargain.analysis import figures, metrics, reference
from bargain.engine.game import Action
from bargain.engine.outcome import trial_record
from bargain.engine.scenarios import GridSpec
from bargain.engine.trial import ROLES, Role, Trial
from bargain.runs.episodes import AgentsFor, Episode, play_many
from bargain.runs.gamelog import encode, pack_records, read_games


class RunError(ValueError):
    """A run directory that cannot be used for this run (the message says what to do)."""


@dataclass
class RunSetup:
    """Everything that decides which games a run plays and how: two runs with equal keys are one run."""

    grid: GridSpec
    seed: int
    buyer: str
    seller: str
    scenarios: str
    buyer_side: Side = field(default_factory=Side)
    seller_side: Side = field(default_factory=Side)
    sanity_check: bool = False

    def key(self) -> dict:
        """The JSON form compared when resuming."""
        return {
            "grid": self.grid.to_dict(),
            "seed": self.seed,
            "buyer": self.buyer,
            "seller": self.seller,
            "scenarios": self.scenarios,
            "buyer_side": self.buyer_side.to_dict(),
            "seller_side": self.seller_side.to_dict(),
            "sanity_check": self.sanity_check,
        }

    def side(self, role: Role) -> tuple[str, Side]:
        """The agent spec and settings of one side."""
        return (self.buyer, self.buyer_side) if role is Role.BUYER else (self.seller, self.seller_side)

    @classmethod
    def from_key(cls, key: dict) -> RunSetup:
        """Inverse of `key` (a run directory's config.json holds it)."""
        return cls(
            GridSpec.from_dict(key["grid"]),
            key["seed"],
            key["buyer"],
            key["seller"],
            key["scenarios"],
            Side.from_dict(key["buyer_side"]),
            Side.from_dict(key["seller_side"]),
            key["sanity_check"],
        )


def game_record(episode: Episode, setup: RunSetup) -> dict:
    """Everything about one game: set-up, every move, model records (packed), the error if it failed."""
    flags = {}
    for role in ROLES:
        spec, _ = setup.side(role)
        flags[f"{role}_out_of_distribution"] = resolve(spec).out_of_distribution(role, episode.trial)
    return {
        "trial_id": episode.trial.trial_id,
        "scenario": episode.trial.scenario.ref,
        "transparency": episode.trial.condition.value,
        "buyer_agent": episode.buyer,
        "seller_agent": episode.seller,
        "error": episode.error,
        **flags,
        **episode.state.to_dict(),
        "records": pack_records(episode.records),
    }


def load_finished(out: Path, setup: RunSetup, trials: list[Trial]) -> dict[int, Episode]:
    """Finished games already in `out` for this run (resume), checked against the run's key and trials."""
    games = out / "games.jsonl"
    if not games.exists():
        return {}
    config = json.loads((out / "config.json").read_text()) if (out / "config.json").exists() else {}
    if config.get("key") != json.loads(json.dumps(setup.key())):
        raise RunError(
            f"{out} holds games of a different run (another grid, seed, agent or setting); "
            "choose another --out, or delete the directory to start over"
        )
    by_id = {t.trial_id: t for t in trials}
    finished = {}
    for episode in read_games(games):
        if by_id.get(episode.trial.trial_id) != episode.trial:
            raise RunError(
                f"{games} has a trial {episode.trial.trial_id} unlike this run's; delete the directory to start over"
            )
        if episode.finished:
            finished[episode.trial.trial_id] = episode
    return finished


def _side_columns(episode: Episode, role: Role, spec: str) -> dict:
    records = [r for r in episode.records if r["role"] == role.value]
    reasons = resolve(spec).out_of_distribution(role, episode.trial)
    return {
        f"{role}_agent": spec,
        f"{role}_out_of_distribution": bool(reasons),
        f"{role}_prompt_tokens": sum(r["prompt_tokens"] for r in records),
        f"{role}_completion_tokens": sum(r["completion_tokens"] for r in records),
        f"{role}_latency_s": sum(r["latency_s"] for r in records),
    }


def trials_frame(episodes: list[Episode], setup: RunSetup) -> pd.DataFrame:
    """One row per finished trial: the paper's columns, our outcome columns, then per-side columns."""
    rows = []
    for episode in episodes:
        if not episode.finished:
            continue
        row = trial_record(episode.trial, episode.state.outcome())
        for role in ROLES:
            row.update(_side_columns(episode, role, setup.side(role)[0]))
        row.update(
            seed=setup.seed,
            prompt_version=setup.buyer_side.prompt_version.value,
            buyer_parsing=setup.buyer_side.parsing.value,
            seller_parsing=setup.seller_side.parsing.value,
        )
        rows.append(row)
    return pd.DataFrame(rows)


def usage(episodes: list[Episode]) -> dict:
    """Per side: model moves, tokens, latency, re-asks and invalid moves."""
    summary = {}
    for role in ROLES:
        records = [r for e in episodes for r in e.records if r["role"] == role.value]
        moves = [t for e in episodes for t in e.state.turns if t.role is role]
        summary[role.value] = {
            "moves": len(moves),
            "invalid_moves": sum(1 for t in moves if t.action is Action.INVALID),
            "model_calls": sum(r["attempts"] for r in records),
            "prompt_tokens": sum(r["prompt_tokens"] for r in records),
            "completion_tokens": sum(r["completion_tokens"] for r in records),
            "mean_latency_s": (sum(r["latency_s"] for r in records) / len(records)) if records else None,
        }
    return summary


def _usage_markdown(summary: dict) -> str:
    lines = [
        "| side | moves | invalid | model calls | prompt tokens | completion tokens | mean latency (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for side, u in summary.items():
        latency = f"{u['mean_latency_s']:.3f}" if u["mean_latency_s"] is not None else "-"
        lines.append(
            f"| {side} | {u['moves']} | {u['invalid_moves']} | {u['model_calls']} | {u['prompt_tokens']} "
            f"| {u['completion_tokens']} | {latency} |"
        )
    return "\n".join(lines) + "\n"


def _write_atomically(path: Path, content: str | bytes) -> None:
    partial = path.with_suffix(path.suffix + ".partial")
    if isinstance(content, bytes):
        partial.write_bytes(content)
    else:
        partial.write_text(content, encoding="utf-8")
    os.replace(partial, path)


@contextmanager
def few_collections() -> Iterator[None]:
    """Run a batch with the cyclic garbage collector mostly out of the way: a run makes millions of small objects
    (prompts, records, moves) that live until it ends, and Python's default thresholds make the collector rescan
    them again and again (about 40% of a run on an instant backend). What is loaded before the run is frozen (never
    scanned again) and a collection waits for 50,000 new objects instead of 700; memory is unchanged in practice,
    since the run's objects are not garbage."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, threshold[1], threshold[2])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def run(
    setup: RunSetup,
    trials: list[Trial],
    agents_for: AgentsFor,
    out: str | Path,
    *,
    concurrency: int = 256,
    progress: bool = True,
    evaluate: bool = False,
    extra_config: dict | None = None,
    close: Callable[[], Awaitable[None]] | None = None,
) -> pd.DataFrame:
    """Play the trials not yet finished in `out`, then write every output; returns the trials table.

    `close` runs in the games' event loop once they end (e.g. to close a backend's connections).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    done = load_finished(out, setup, trials)
    config = {
        "key": setup.key(),
        **(extra_config or {}),
        "n_trials": len(trials),
        "scenario_names": list(dict.fromkeys(t.scenario.product_name for t in trials)),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "status": "running",
    }
    _write_atomically(out / "config.json", json.dumps(config, indent=2) + "\n")
    todo = [t for t in trials if t.trial_id not in done]
    if done:
        print(f"resuming {out}: {len(done)} of {len(trials)} trials already finished")
    with few_collections():
        new, lines = _play(setup, todo, agents_for, out, concurrency, progress, close)
        latest = {**done, **{e.trial.trial_id: e for e in new}}
        episodes = [latest[t.trial_id] for t in trials if t.trial_id in latest]
        return write_outputs(out, setup, episodes, config, evaluate, lines)


def write_outputs(
    out: Path,
    setup: RunSetup,
    episodes: list[Episode],
    config: dict,
    evaluate: bool,
    lines: dict[int, bytes] | None = None,
) -> pd.DataFrame:
    """Every file of a run directory from its games (in trial order); returns the trials table. `lines` holds games
    already encoded (by trial id), which are written as they are."""
    lines = lines or {}
    _write_atomically(
        out / "games.jsonl", b"".join(lines.get(e.trial.trial_id) or encode(game_record(e, setup)) for e in episodes)
    )
    frame = trials_frame(episodes, setup)
    frame.to_parquet(out / "trials.parquet", index=False)
    frame.to_csv(out / "trials.csv", index=False)
    failed = [e for e in episodes if not e.finished]
    config.update(
        status="finished" if not failed else "incomplete",
        failed_games=len(failed),
        finished=datetime.now(UTC).isoformat(timespec="seconds"),
        usage=usage(episodes),
    )
    _write_atomically(out / "config.json", json.dumps(config, indent=2) + "\n")
    _write_summary(out, setup, frame, episodes, failed, config["usage"], evaluate)
    return frame


def shard_of(trials: list[Trial], index: int, count: int) -> list[Trial]:
    """The `index`-th (1-based) of `count` disjoint parts of a grid: every `count`-th trial, so that each part
    holds a share of every cell."""
    if not 1 <= index <= count:
        raise RunError(f"shard {index}/{count}: use I/N with 1 <= I <= N")
    return trials[index - 1 :: count]


def merge(run_dirs: list[str | Path], out: str | Path) -> pd.DataFrame:
    """Join the shards of one run (`--shard I/N`, I = 1..N, same command otherwise) into `out`, as one
    unsharded run of the same seed would have written it."""
    dirs = [Path(d) for d in run_dirs]
    configs = []
    for directory in dirs:
        path = directory / "config.json"
        if not path.exists():
            raise RunError(f"{directory} is not a run directory (no config.json)")
        configs.append(json.loads(path.read_text()))
    shards = [tuple(c.get("shard") or ()) for c in configs]
    if any(len(s) != 2 for s in shards):
        raise RunError(
            "merge takes the shards of one run, each played with --shard I/N; "
            + ", ".join(str(d) for d, s in zip(dirs, shards) if len(s) != 2)
            + " is not one"
        )
    count = shards[0][1]
    if sorted(shards) != [(i, count) for i in range(1, count + 1)]:
        found = ", ".join(f"{i}/{n}" for i, n in sorted(shards))
        raise RunError(f"the shards must be 1/{count} to {count}/{count}, each once; found {found}")
    if any(c["key"] != configs[0]["key"] for c in configs):
        raise RunError("these shards come from different runs (another grid, seed, agent or setting)")
    setup = RunSetup.from_key(configs[0]["key"])
    episodes = {e.trial.trial_id: e for directory in dirs for e in read_games(directory / "games.jsonl")}
    expected = sum(c["n_trials"] for c in configs)
    if len(episodes) != expected:
        raise RunError(
            f"the shards hold {len(episodes)} of their {expected} games: finish each (run its command "
            "again) before merging"
        )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    config = {key: value for key, value in configs[0].items() if key not in ("shard", "command")}
    ordered = [episodes[i] for i in sorted(episodes)]  # trial ids number a grid in its order
    config.update(
        n_trials=expected,
        merged_from=[str(d) for d in dirs],
        commands=[c.get("command") for c in configs],
        scenario_names=list(dict.fromkeys(e.trial.scenario.product_name for e in ordered)),
        started=min(c["started"] for c in configs),
    )
    return write_outputs(out, setup, ordered, config, evaluate=bool(configs[0].get("evaluate")))


FLUSH_EVERY_S = 0.5  # games.jsonl reaches the disk at least this often: an interruption replays at most this much


def _play(
    setup: RunSetup,
    todo: list[Trial],
    agents_for: AgentsFor,
    out: Path,
    concurrency: int,
    progress: bool,
    close: Callable[[], Awaitable[None]] | None,
) -> tuple[list[Episode], dict[int, bytes]]:
    """Play `todo`, appending each game to games.jsonl as it ends; the episodes, and their lines by trial id."""
    if not todo:
        return [], {}
    start, totals = time.perf_counter(), {"deals": 0, "tokens": 0, "flushed": time.perf_counter()}
    lines: dict[int, bytes] = {}

    with open(out / "games.jsonl", "ab") as log:

        def on_done(episode: Episode) -> dict:
            line = lines[episode.trial.trial_id] = encode(game_record(episode, setup))
            log.write(line)
            now = time.perf_counter()
            if now - totals["flushed"] >= FLUSH_EVERY_S:
                log.flush()
                totals["flushed"] = now
            totals["deals"] += int(episode.finished and episode.state.outcome().deal)
            totals["tokens"] += sum(r["completion_tokens"] for r in episode.records)
            shown: dict[str, object] = {"deals": totals["deals"]}
            if totals["tokens"]:
                shown["tok/s"] = f"{totals['tokens'] / (now - start):.0f}"
            return shown

        async def games() -> list[Episode]:
            try:
                return await play_many(
                    todo,
                    agents_for,
                    (setup.buyer, setup.seller),
                    concurrency,
                    setup.sanity_check,
                    progress=progress,
                    desc=setup.grid.name,
                    on_done=on_done,
                )
            finally:
                if close is not None:
                    await close()

        return asyncio.run(games()), lines


def _write_summary(
    out: Path,
    setup: RunSetup,
    frame: pd.DataFrame,
    episodes: list[Episode],
    failed: list[Episode],
    usage_summary: dict,
    evaluate: bool,
) -> None:
    title = f"{setup.grid.name}: {setup.buyer} (buyer) vs {setup.seller} (seller)"
    if not len(frame):
        _write_atomically(out / "summary.md", f"# {title}\n\nNo trial finished.\n")
        return
    table = metrics.cell_table(metrics.prepare(frame))
    text = metrics.summary_markdown(table, title) + "\n## Agents\n\n" + _usage_markdown(usage_summary)
    if failed:
        text += (
            f"\n{len(failed)} of {len(episodes)} games failed; see `error` in games.jsonl. Run the same command "
            "again to retry them.\n"
        )
    paper = None
    name = reference.variant(
        setup.grid,
        setup.buyer,
        setup.buyer_side.sampling.temperature,
        setup.seller,
        setup.seller_side.sampling.temperature,
    )
    if evaluate and name is not None:
        paper = reference.beside(table, name)
        paper.to_csv(out / "paper_comparison.csv", index=False)
        text += f"\n## Beside the paper ({name})\n\n" + paper.to_markdown(index=False, floatfmt=".3f") + "\n"
    if evaluate:
        figures.outcomes_by_condition(table, out / "outcomes_by_condition.png", title, paper)
        figures.deal_price_vs_nbs(frame, out / "deal_price_vs_nbs.png", title)
    _write_atomically(out / "summary.md", text)
