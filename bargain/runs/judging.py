"""Judging a run directory with the paper's judge: resumable, concurrent, with token usage.

`python -m bargain judge RUN_DIR --judge SPEC`: every finished game whose condition is not `full`
goes to the judge once (temperature 0 by default); each judgment is appended to
RUN_DIR/judgments.jsonl as it arrives (a rerun skips those already there), and
RUN_DIR/trials_with_honesty.csv / .parquet hold the trials table with the four scores, the
judge's reasoning, raw reply, model and any error beside each trial. `--db URL` judges the
arena's finished games instead, storing each judgment with its game.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from bargain.agents.arms import resolve
from bargain.agents.backends import Backend, Request, Sampling
from bargain.analysis.judge import SCORES, judge_messages, parse_judgment
from bargain.engine.game import GameState
from bargain.engine.trial import Condition
from bargain.runs.gamelog import read_games

JUDGMENTS = "judgments.jsonl"


def games_to_judge(run_dir: Path) -> list[GameState]:
    """The finished games of a run whose condition hides something."""
    return [
        e.state
        for e in read_games(run_dir / "games.jsonl")
        if e.finished and e.state.trial.condition is not Condition.FULL
    ]


def judged(run_dir: Path) -> dict[int, dict]:
    """Judgments already made (by trial id)."""
    path = run_dir / JUDGMENTS
    if not path.exists():
        return {}
    done = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:  # a line cut short by an interruption: judged again
            continue
        done[record["trial_id"]] = record
    return done


async def _judge_all(
    states: list[GameState], backend: Backend, model: str, sampling: Sampling, concurrency: int, keep, progress: bool
) -> dict:
    """Judge every game, handing each judgment record to `keep` as it arrives; returns token usage."""
    slots = asyncio.Semaphore(concurrency)
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}
    bar = tqdm(total=len(states), desc="judging", unit="game", disable=not progress)

    async def one(state: GameState) -> None:
        async with slots:
            completion = await backend.complete(
                Request(tuple(judge_messages(state.trial, state.turns)), model, sampling)
            )
        record = {
            "trial_id": state.trial.trial_id,
            "transparency": state.trial.condition.value,
            **parse_judgment(completion.text, state.trial.condition),
            "raw": completion.text,
            "judge_model": completion.model,
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
        }
        keep(state, record)
        usage["prompt_tokens"] += completion.prompt_tokens
        usage["completion_tokens"] += completion.completion_tokens
        usage["calls"] += 1
        bar.update(1)

    try:
        await asyncio.gather(*(one(s) for s in states))
    finally:
        bar.close()
        close = getattr(backend, "aclose", None)
        if close is not None:
            await close()
    return usage


def judge_sampling(temperature: float = 0.0, max_tokens: int = 2048) -> Sampling:
    """The judge's sampling: greedy by default, nothing else changed."""
    return Sampling(temperature=temperature, top_p=1.0, top_k=-1, presence_penalty=0.0, max_tokens=max_tokens)


def judge_run(
    run_dir: str | Path,
    spec: str,
    backend: Backend,
    sampling: Sampling = judge_sampling(),
    concurrency: int = 32,
    progress: bool = True,
) -> tuple[pd.DataFrame, dict]:
    """Judge what is not judged yet, then write trials_with_honesty; returns it and this call's token usage."""
    run_dir = Path(run_dir)
    arm = resolve(spec)
    states = [s for s in games_to_judge(run_dir) if s.trial.trial_id not in judged(run_dir)]
    with open(run_dir / JUDGMENTS, "a", encoding="utf-8") as log:

        def keep(state: GameState, record: dict) -> None:
            log.write(json.dumps(record) + "\n")
            log.flush()

        usage = asyncio.run(_judge_all(states, backend, backend.model_name(arm), sampling, concurrency, keep, progress))
    frame = with_judgments(pd.read_csv(run_dir / "trials.csv"), judged(run_dir))
    frame.to_csv(run_dir / "trials_with_honesty.csv", index=False)
    frame.to_parquet(run_dir / "trials_with_honesty.parquet", index=False)
    return frame, usage


def with_judgments(trials: pd.DataFrame, judgments: dict[int, dict]) -> pd.DataFrame:
    """The trials table with the judge's columns (empty for `full` games and unjudged ones)."""
    columns = [*SCORES, "judge_reasoning", "judge_raw", "judge_model", "judge_error"]
    rows = []
    for trial_id in trials["trial_id"]:
        j = judgments.get(int(trial_id))
        rows.append(
            {
                **{s: (j or {}).get(s) for s in SCORES},
                "judge_reasoning": (j or {}).get("reasoning"),
                "judge_raw": (j or {}).get("raw"),
                "judge_model": (j or {}).get("judge_model"),
                "judge_error": (j or {}).get("error"),
            }
        )
    extra = pd.DataFrame(rows, columns=columns, index=trials.index)
    for score in SCORES:
        extra[score] = pd.to_numeric(extra[score], errors="coerce").astype("Float64")
    return pd.concat([trials.drop(columns=[c for c in columns if c in trials]), extra], axis=1)


def judge_db(
    url: str,
    spec: str,
    backend: Backend,
    sampling: Sampling = judge_sampling(),
    concurrency: int = 32,
    progress: bool = True,
) -> tuple[int, dict]:
    """Judge the arena's finished games not judged yet; each judgment goes into the game's `extra`
    record under "judge". Returns how many were judged and the token usage."""
    from bargain.records.database import existing_store
    from bargain.records.store import game_state

    store = existing_store(url)  # a mistyped URL is an error, not a new empty database with nothing to judge
    games = store.games_frame()
    todo = (
        games if games.empty else games[(games["status"] == "finished") & (games["condition"] != Condition.FULL.value)]
    )
    states, ids = [], {}
    for _, row in todo.iterrows():
        game = store.game(row["id"])
        if "judge" in (row["extra"] or {}) or game is None:
            continue
        state = game_state(game)
        states.append(state)
        ids[id(state)] = row["id"]
    usage = asyncio.run(
        _judge_all(
            states,
            backend,
            backend.model_name(resolve(spec)),
            sampling,
            concurrency,
            lambda state, record: store.set_extra(ids[id(state)], "judge", record),
            progress,
        )
    )
    return len(states), usage
