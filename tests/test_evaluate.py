"""Every model arm plays whole grids through both backends; `evaluate` end to end, with resume."""

import json
import subprocess

import pandas as pd
import pytest
from cli_runner import run_main

from bargain.agents.agent import Side
from bargain.agents.arms import ADAPTERS, BASE_MODEL
from bargain.agents.backends import Backends, Sampling
from bargain.agents.factory import agent_factory
from bargain.agents.stub_server import StubServer
from bargain.cli import main
from bargain.engine import scenarios
from bargain.engine.trial import Condition
from bargain.runs.batch import RunSetup, run

MODEL_ARMS = ["arm:base", *(f"arm:{name}" for name in ADAPTERS)]
SHORT = Side(Sampling(max_tokens=12))


def play_grid(backends, buyer, seller, out, trials_per_cell=1, side=SHORT):
    spec = scenarios.GridSpec(
        tier="low", start=1508, stop=1509, trials_per_cell=trials_per_cell, max_rounds=2, name="tiny-grid"
    )
    trials = scenarios.make_trials(spec, scenarios.bundled())
    setup = RunSetup(
        grid=spec, seed=42, buyer=buyer, seller=seller, scenarios="bundled", buyer_side=side, seller_side=side
    )
    makers = [agent_factory(buyer, backends, side), agent_factory(seller, backends, side)]
    return run(setup, trials, lambda t: (makers[0](t.trial_id), makers[1](t.trial_id)), out, progress=False)


@pytest.mark.parametrize("arm", MODEL_ARMS)
def test_every_arm_plays_on_the_hf_backend(arm, tiny_backend, tmp_path):
    frame = play_grid(Backends(tiny_backend), arm, arm, tmp_path)
    assert len(frame) == 4 and set(frame["transparency"]) == {c.value for c in Condition}
    games = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    records = [r for g in games for r in g["records"]]
    assert records and {r["backend"] for r in records} == {"hf"} and {r["arm"] for r in records} == {arm}
    assert all(r["completion_tokens"] >= 1 and r["raw"] is not None for r in records)


@pytest.mark.parametrize("arm", MODEL_ARMS)
def test_every_arm_plays_on_an_openai_compatible_server(arm, tmp_path):
    from bargain.agents.backends.openai_server import OpenAIServer

    with StubServer([BASE_MODEL, *ADAPTERS]) as server:
        frame = play_grid(Backends(OpenAIServer(server.url)), arm, "tactic:hardliner", tmp_path)
        served = {r["model"] for r in server.requests}
    assert len(frame) == 4 and served == {BASE_MODEL if arm == "arm:base" else arm.removeprefix("arm:")}
    assert (frame["buyer_prompt_tokens"] > 0).all() and (frame["seller_prompt_tokens"] == 0).all()


def cli(*args: str) -> subprocess.CompletedProcess:
    return run_main(main, *args, env={"HF_HUB_OFFLINE": "1"})


@pytest.mark.slow
def test_evaluate_end_to_end_on_the_hf_backend_and_resume(tiny_model, tiny_adapters, tmp_path):
    out = tmp_path / "run"
    command = [
        "evaluate",
        "--tier",
        "low",
        "--scenarios-slice",
        "1508:1509",
        "--trials",
        "2",
        "--rounds",
        "2",
        "--buyer",
        "arm:buyer-grpo",
        "--seller",
        "arm:base",
        "--seller-preset",
        "frozen-opponent",
        "--buyer-sampling",
        "max_tokens=12",
        "--seller-sampling",
        "max_tokens=12",
        "--backend",
        "hf",
        "--model",
        str(tiny_model),
        "--adapters-dir",
        str(tiny_adapters),
        "--out",
        str(out),
        "--quiet",
    ]
    first = cli(*command)
    assert first.returncode == 0, first.stderr
    for name in (
        "trials.csv",
        "trials.parquet",
        "games.jsonl",
        "summary.md",
        "config.json",
        "outcomes_by_condition.png",
        "deal_price_vs_nbs.png",
    ):
        assert (out / name).stat().st_size > 0, name
    frame = pd.read_csv(out / "trials.csv")
    assert len(frame) == 8 and (frame["buyer_completion_tokens"] > 0).all()
    # buyer-grpo was trained as buyer under seller_unaware with 4 rounds: 2 rounds is out of distribution
    assert frame["buyer_out_of_distribution"].all() and not frame["seller_out_of_distribution"].any()
    config = json.loads((out / "config.json").read_text())
    assert config["status"] == "finished" and config["backend"]["backend"] == "hf"
    assert config["key"]["seller_side"]["sampling"]["temperature"] == 0.1
    assert config["usage"]["buyer"]["completion_tokens"] == frame["buyer_completion_tokens"].sum()
    summary = (out / "summary.md").read_text()
    assert "## Agents" in summary and "Beside the paper" not in summary  # not the paper's grid
    games = (out / "games.jsonl").read_text()

    again = cli(*command)
    assert again.returncode == 0 and "8 of 8 trials already finished" in again.stdout
    assert (out / "games.jsonl").read_text() == games

    # An interrupted run: drop the last three games; only they are played again.
    lines = games.splitlines(keepends=True)
    (out / "games.jsonl").write_text("".join(lines[:5]) + lines[5][: len(lines[5]) // 2])  # a torn last line
    resumed = cli(*command)
    assert resumed.returncode == 0 and "5 of 8 trials already finished" in resumed.stdout
    assert [json.loads(line)["trial_id"] for line in (out / "games.jsonl").read_text().splitlines()] == list(
        range(1, 9)
    )
    assert len(pd.read_csv(out / "trials.csv")) == 8
