"""Reports from real run directories: tables, paired differences with bootstrap intervals, the scatter."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_runner import run_main

from bargain.agents.stub_server import StubServer
from bargain.analysis import metrics
from bargain.cli import main
from bargain.runs.report import RunData, bootstrap_interval, paired

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> subprocess.CompletedProcess:
    return run_main(main, *args, env={"HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": "test-key"})


def judge_reply(body: dict) -> str:
    return (
        '```json\n{"reasoning": "fine", "seller_honesty": 2, "buyer_honesty": 3, "buyer_credulity": 1, '
        '"seller_credulity": 2}\n```'
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs of the same trials (boulware and conceder buyers against a linear seller), the first judged."""
    root = tmp_path_factory.mktemp("runs")
    for name, buyer in (("boulware", "tactic:boulware"), ("conceder", "tactic:conceder")):
        done = cli(
            "evaluate",
            "--grid",
            "paper-rl-test",
            "--trials",
            "2",
            "--buyer",
            buyer,
            "--seller",
            "tactic:linear",
            "--out",
            str(root / name),
            "--quiet",
        )
        assert done.returncode == 0, done.stderr
    with StubServer(["judge"], reply=judge_reply) as server:
        assert cli("judge", str(root / "boulware"), "--judge", f"openai:judge@{server.url}", "--quiet").returncode == 0
    return root


def test_three_commands_give_a_report(runs, tmp_path):
    from bargain.agents.backends import Backends
    from bargain.arena.controller import Arena, Setup
    from bargain.records.store import Store

    url = f"sqlite:///{tmp_path / 'arena.db'}"

    async def person():
        arena = Arena(Store(url), Backends())
        view = await arena.start(Setup(arm="tactic:hardliner", seed=2))
        await arena.move(view.game_id, 1, "NO_DEAL", message="My budget is only 0.50, bye.")

    asyncio.run(person())
    out = tmp_path / "report"
    result = cli("report", str(runs / "boulware"), str(runs / "conceder"), "--db", url, "--out", str(out))
    assert result.returncode == 0, result.stderr
    page = (out / "report.html").read_text()
    for heading in (
        "Run 1: boulware",
        "Run 2: conceder",
        "Claim checker",
        "Run 1 minus run 2, trial by trial",
        "Honesty against utility",
        "Games people played in the arena",
    ):
        assert heading in page
    assert "data:image/png;base64," in page and "src='http" not in page  # self-contained
    for name in ("run1_cells.csv", "run1_claims.csv", "run2_cells.csv", "paired.csv", "scatter.csv", "arena.csv"):
        assert (out / name).exists(), name
    cells = pd.read_csv(out / "run1_cells.csv")
    assert cells.iloc[-1]["transparency"] == "ALL" and cells.iloc[-1]["avg_honesty"] == pytest.approx(2.5)
    scatter = pd.read_csv(out / "scatter.csv")
    paper = scatter[scatter["source"] == "paper"]
    assert {"buyer_grpo", "seller_cispo", "joint_grpo_selfplay", "gpt52"} <= set(paper["name"])
    ours = scatter[scatter["source"] == "this project"]
    assert len(ours) == 2 and ours.iloc[0]["avg_honesty"] == pytest.approx(2.5)
    arena = pd.read_csv(out / "arena.csv")
    assert arena.loc[0, "opponent"] == "tactic:hardliner" and arena.loc[0, "games"] == 1


def test_paired_differences_match_the_trials(runs, tmp_path):
    out = tmp_path / "report"
    assert cli("report", str(runs / "boulware"), str(runs / "conceder"), "--out", str(out)).returncode == 0
    comparison = pd.read_csv(out / "paired.csv")
    a = pd.read_csv(runs / "boulware" / "trials.csv").set_index("trial_id")
    b = pd.read_csv(runs / "conceder" / "trials.csv").set_index("trial_id")
    for condition in ("full", "both_unaware", "ALL"):
        ids = a.index if condition == "ALL" else a.index[a["transparency"] == condition]
        expected = (a.loc[ids, "buyer_norm_utility"] - b.loc[ids, "buyer_norm_utility"]).mean()
        row = comparison[
            (comparison["transparency"] == condition) & (comparison["quantity"] == "buyer_norm_utility")
        ].iloc[0]
        assert row["mean_difference"] == pytest.approx(expected) and row["n"] == len(ids)
        assert row["ci_low"] <= row["mean_difference"] <= row["ci_high"]


def small_run(values: list[float], name: str) -> RunData:
    frame = pd.DataFrame(
        {
            "trial_id": [1, 2, 3],
            "transparency": ["full"] * 3,
            "buyer_res_price": [2.0] * 3,
            "seller_res_price": [1.0] * 3,
            "deal": ["deal"] * 3,
            "deal_price": [1.5] * 3,
            "rounds": [1] * 3,
            "buyer_utility": [0.5] * 3,
            "seller_utility": [0.5] * 3,
            "buyer_norm_utility": values,
            "seller_norm_utility": [1 - v for v in values],
        }
    )
    return RunData(name, Path(name), {}, metrics.prepare(frame), [])


def test_paired_difference_and_interval_by_hand():
    """Differences 0.1, 0.2, 0.6: mean 0.3. Of the 27 equally likely resamples, one has mean 0.1 and one
    mean 0.6 (each 1/27 > 2.5%), so the 95% percentile interval is exactly [0.1, 0.6]."""
    first, second = small_run([0.6, 0.7, 1.0], "a"), small_run([0.5, 0.5, 0.4], "b")
    comparison = paired(first, second)
    row = comparison[(comparison["transparency"] == "full") & (comparison["quantity"] == "buyer_norm_utility")].iloc[0]
    assert row["mean_difference"] == pytest.approx(0.3) and row["n"] == 3
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.1, 0.6))
    seller = comparison[
        (comparison["transparency"] == "full") & (comparison["quantity"] == "seller_norm_utility")
    ].iloc[0]
    assert seller["mean_difference"] == pytest.approx(-0.3)


def test_bootstrap_interval_edges():
    assert np.isnan(bootstrap_interval(np.array([0.4]))[0])
    assert bootstrap_interval(np.array([0.2, 0.2, 0.2])) == (0.2, 0.2)
    low, high = bootstrap_interval(np.random.default_rng(1).normal(1.0, 0.1, 400))
    assert 0.97 < low < 1.0 < high < 1.03


def test_runs_over_other_trials_are_not_paired(runs):
    first = small_run([0.6, 0.7, 1.0], "a")
    other = small_run([0.5, 0.5, 0.4], "b")
    other.trials["buyer_res_price"] = 3.0  # other prices: not the same trials
    assert paired(first, other).empty


def test_report_needs_something_to_report(tmp_path):
    assert cli("report", "--out", str(tmp_path)).returncode == 2


def arena_db(path: Path, games: int) -> Path:
    """A bargain database at `path` holding `games` games that are still being played (one move each)."""
    from bargain.records.store import Store

    store = Store(f"sqlite:///{path}")
    for n in range(games):
        store.create_game(
            id=f"g{n}",
            player=f"p{n}",
            human_role="buyer",
            arm="tactic:linear",
            scenario="low:3",
            seed=7,
            condition="full",
            mode="simultaneous",
            max_rounds=4,
            first_actor="buyer",
            buyer_price=7.25,
            seller_price=5.5,
            trial={"trial_id": n},
            prompt_version="train",
            parsing="strict",
        )
        store.add_moves(
            f"g{n}",
            [
                {
                    "round": 1,
                    "role": "buyer",
                    "actor": "human",
                    "action": "OFFER",
                    "price": 6.0,
                    "message": "6 is my offer.",
                }
            ],
        )
    store.engine.dispose()
    return path


def assert_no_finished_game_reported(result: subprocess.CompletedProcess, out: Path) -> None:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "No arena game has finished yet." in (out / "report.html").read_text()
    arena = pd.read_csv(out / "arena.csv")
    assert arena.empty and list(arena.columns[:3]) == ["opponent", "condition", "games"]


@pytest.mark.parametrize("games", [0, 2])
def test_an_arena_without_finished_games_is_reported_as_such(tmp_path, games):
    db = arena_db(tmp_path / "arena.db", games)
    out = tmp_path / "report"
    assert_no_finished_game_reported(cli("report", "--db", f"sqlite:///{db}", "--out", str(out)), out)


def test_a_database_file_path_is_taken_as_the_arena_takes_it(tmp_path):
    """`report --db` reads what `app.py --db` wrote: a plain file path, absolute or relative, as well as a URL."""
    db = arena_db(tmp_path / "arena.db", 1)
    for given in (str(db), os.path.relpath(db, ROOT)):
        out = tmp_path / f"report-{len(given)}"
        assert_no_finished_game_reported(cli("report", "--db", given, "--out", str(out)), out)


def test_database_url():
    from bargain.records.database import database_url
    from bargain.records.store import default_url

    assert database_url("postgresql+psycopg://u:p@host/bargain") == "postgresql+psycopg://u:p@host/bargain"
    assert database_url("sqlite:///data/x.db") == "sqlite:///data/x.db"
    assert database_url("data/x.db") == f"sqlite:///{os.path.abspath('data/x.db')}"
    assert database_url(None) == database_url("") == default_url()


def test_reports_are_not_committed():
    """`report --out reports/NAME` is the README's layout: its output is ignored like runs/."""
    assert "/reports/" in (ROOT / ".gitignore").read_text().splitlines()


def test_a_read_only_database_is_reported(tmp_path):
    """The report only reads: a database opened read-only (as a file without write permission is) will do."""
    db = arena_db(tmp_path / "arena.db", 1)
    before = db.read_bytes()
    out = tmp_path / "report"
    result = cli("report", "--db", f"sqlite:///file:{db}?mode=ro&uri=true", "--out", str(out))
    assert_no_finished_game_reported(result, out)
    assert db.read_bytes() == before


def test_a_run_of_the_papers_is_reported_beside_its_numbers(tmp_path):
    """An evaluate run of paper-rl-test with buyer-grpo (T 0.7) against the base model (T 0.1), on the
    stub server: the report carries the paper's published cells for buyer_grpo."""
    from bargain.agents.arms import ADAPTERS, BASE_MODEL

    run = tmp_path / "run"
    with StubServer([BASE_MODEL, *ADAPTERS]) as server:
        done = cli(
            "evaluate",
            "--grid",
            "paper-rl-test",
            "--trials",
            "1",
            "--buyer",
            "arm:buyer-grpo",
            "--seller",
            "arm:base",
            "--seller-preset",
            "frozen-opponent",
            "--backend",
            "vllm",
            "--base-url",
            server.url,
            "--out",
            str(run),
            "--quiet",
        )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "report"
    assert cli("report", str(run), "--out", str(out)).returncode == 0
    page = (out / "report.html").read_text()
    assert "Beside the paper's published numbers (buyer_grpo)" in page
    beside = pd.read_csv(out / "run1_paper.csv")
    assert list(beside["transparency"]) == ["full", "buyer_unaware", "seller_unaware", "both_unaware", "ALL"]
    assert beside.loc[4, "paper_n"] == 1280 and beside.loc[4, "ours_n"] == 32


def test_the_claim_tables_with_a_model_give_both_counts(runs, tmp_path):
    """Every message is read once by the model; its claims are kept only where the rules confirm them."""

    def reply(body: dict) -> str:
        return '[{"kind": "own_limit", "value": 123456}]'  # a number no message holds: always refused

    with StubServer(["reader"], reply=reply) as server:
        result = cli(
            "report",
            str(runs / "boulware"),
            "--out",
            str(tmp_path / "r"),
            "--claims-model",
            f"openai:reader@{server.url}",
        )
        calls = len(server.requests)
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(tmp_path / "r" / "run1_claims.csv")
    assert {"rule_claims_per_game", "model_added_per_game", "model_refused_per_game"} <= set(table.columns)
    assert (table["model_added_per_game"] == 0).all() and (table["model_refused_per_game"] > 0).all()
    assert (table["claims_per_game"] == table["rule_claims_per_game"]).all()
    assert (table["model_failures"] == 0).all()
    from bargain.runs.report import load_run, messages_of

    assert calls == len(messages_of(load_run(runs / "boulware").games)) > 0
