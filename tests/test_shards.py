"""`evaluate --shard I/N` on several machines, `merge` back: the same run directory as one unsharded run."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from cli_runner import run_main

from bargain.cli import main

GRID = [
    "--grid",
    "paper-rl-test",
    "--trials",
    "2",
    "--buyer",
    "tactic:linear",
    "--seller",
    "tactic:hardliner",
    "--quiet",
]


def cli(*args: str):
    return run_main(main, *args, env={"HF_HUB_OFFLINE": "1"})


@pytest.mark.slow  # shards of an evaluation, each run, then merged (seconds)
def test_four_shards_merged_are_one_run(tmp_path):
    whole = tmp_path / "whole"
    assert cli("evaluate", *GRID, "--out", str(whole)).returncode == 0
    shards = [tmp_path / f"shard{i}" for i in range(1, 5)]
    for i, shard in enumerate(shards, 1):
        done = cli("evaluate", *GRID, "--shard", f"{i}/4", "--out", str(shard))
        assert done.returncode == 0, done.stderr
    sizes = [len(pd.read_csv(s / "trials.csv")) for s in shards]
    assert sizes == [16, 16, 16, 16]  # disjoint parts of the 64 trials
    merged = tmp_path / "merged"
    done = cli("merge", *map(str, reversed(shards)), "--out", str(merged))
    assert done.returncode == 0 and "64 trials from 4 shards" in done.stdout, done.stderr
    for name in ("games.jsonl", "trials.csv", "summary.md"):
        assert (merged / name).read_text() == (whole / name).read_text(), name
    pd.testing.assert_frame_equal(pd.read_parquet(merged / "trials.parquet"), pd.read_parquet(whole / "trials.parquet"))
    for name in ("outcomes_by_condition.png", "deal_price_vs_nbs.png"):
        assert (merged / name).read_bytes() == (whole / name).read_bytes(), name
    config, original = (json.loads((d / "config.json").read_text()) for d in (merged, whole))
    for key in ("key", "n_trials", "scenario_names", "status", "evaluate", "grid", "seed"):
        assert config[key] == original[key], key
    assert "shard" not in config and len(config["merged_from"]) == 4


def test_merge_refuses_what_is_not_one_whole_run(tmp_path):
    for i in (1, 2):
        assert cli("simulate", *GRID, "--shard", f"{i}/3", "--out", str(tmp_path / f"s{i}")).returncode == 0
    missing = cli("merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "m"))
    assert missing.returncode == 2 and "1/3 to 3/3" in missing.stderr and "found 1/3, 2/3" in missing.stderr
    assert (
        cli(
            "simulate",
            *GRID[:-5],
            "--buyer",
            "tactic:random",
            "--seller",
            "tactic:hardliner",
            "--shard",
            "3/3",
            "--out",
            str(tmp_path / "s3"),
            "--quiet",
        ).returncode
        == 0
    )
    other = cli("merge", *(str(tmp_path / f"s{i}") for i in (1, 2, 3)), "--out", str(tmp_path / "m"))
    assert other.returncode == 2 and "different runs" in other.stderr
    whole = cli("merge", str(tmp_path / "nowhere"), "--out", str(tmp_path / "m"))
    assert whole.returncode == 2 and "not a run directory" in whole.stderr
    bad = cli("simulate", *GRID, "--shard", "5/4", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "1 <= I <= N" in bad.stderr


@pytest.mark.slow  # shards of an evaluation, each run, then merged (seconds)
def test_shards_of_model_arms_merge_to_the_same_paper_comparison(tmp_path):
    """With model arms (a canned OpenAI-compatible server: the same reply to the same chat), the merged run has
    the unsharded run's outcomes and its comparison with the paper; only latencies and such differ."""
    from bargain.agents.arms import ADAPTERS, BASE_MODEL
    from bargain.agents.stub_server import StubServer

    arms = [
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
        "--quiet",
    ]
    with StubServer([BASE_MODEL, *ADAPTERS]) as server:
        runs = {name: tmp_path / name for name in ("whole", "part1", "part2")}
        assert cli("evaluate", *arms, "--base-url", server.url, "--out", str(runs["whole"])).returncode == 0
        for i in (1, 2):
            done = cli("evaluate", *arms, "--base-url", server.url, "--shard", f"{i}/2", "--out", str(runs[f"part{i}"]))
            assert done.returncode == 0, done.stderr
    assert cli("merge", str(runs["part1"]), str(runs["part2"]), "--out", str(tmp_path / "merged")).returncode == 0
    merged, whole = tmp_path / "merged", runs["whole"]
    assert (merged / "paper_comparison.csv").read_text() == (whole / "paper_comparison.csv").read_text()
    outcome = ["trial_id", "transparency", "deal", "deal_price", "rounds", "buyer_utility", "seller_utility"]
    pd.testing.assert_frame_equal(
        pd.read_csv(merged / "trials.csv")[outcome], pd.read_csv(whole / "trials.csv")[outcome]
    )
