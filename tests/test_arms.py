"""Arms (docs/PROTOCOL.md §9), the paper's reference variants, adapter directories, and the model-facing CLI
(`arms`, `serve`, `simulate`/`evaluate` through an OpenAI-compatible server).

The server is `bargain.agents.stub_server.StubServer`, a real HTTP server in this test process, and
the CLI runs as a user would run it, in this process too (tests/cli_runner.py). With canned replies a
buyer always offers 0.5 and a seller 5000, so no deal is ever struck and every game makes 4 rounds x 2
requests.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import shlex
import socket
import subprocess
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from cli_runner import run_main

from bargain.agents.adapters import adapter_paths
from bargain.agents.agent import Side
from bargain.agents.arms import (
    ADAPTER_REPO,
    ADAPTERS,
    BASE,
    BASE_MODEL,
    ArmError,
    catalogue,
    public_names,
    resolve,
)
from bargain.agents.backends import PRESETS, Backends
from bargain.agents.backends.canned import CannedBackend
from bargain.agents.factory import agent_factory
from bargain.agents.serve import MAX_LORA_RANK, vllm_command
from bargain.agents.stub_server import StubServer
from bargain.agents.tactics import TACTICS
from bargain.analysis import reference
from bargain.cli import main
from bargain.engine import scenarios
from bargain.engine.game import new_initial_state
from bargain.engine.prompts import PromptVersion, system_prompt
from bargain.engine.trial import Condition, Mode, Role, Trial
from bargain.runs.batch import RunSetup, run

CONDITIONS = [c.value for c in Condition]
SERVED = [BASE_MODEL, *ADAPTERS]
REQUESTS_PER_GAME = 8  # canned offers never cross: 4 rounds x 2 sides

# docs/PROTOCOL.md §9, transcribed: trained role(s), loss, transform, r, alpha, conditions, checkpoint.
TABLE = {
    "buyer-grpo": ("buyer", "GRPO", "rank", 16, 32, "seller_unaware", 24),
    "buyer-cispo": ("buyer", "CISPO", "rank", 16, 32, "seller_unaware", 14),
    "buyer-grpo-norank": ("buyer", "GRPO", "none", 16, 32, "seller_unaware", 21),
    "buyer-cispo-norank": ("buyer", "CISPO", "none", 16, 32, "seller_unaware", 15),
    "seller-grpo": ("seller", "GRPO", "rank", 16, 32, "buyer_unaware", 30),
    "seller-cispo": ("seller", "CISPO", "rank", 16, 32, "buyer_unaware", 37),
    "joint-grpo": ("both", "GRPO", "rank", 32, 64, "all", 11),
    "joint-cispo": ("both", "CISPO", "rank", 32, 64, "all", 11),
}
ROLES_OF = {"buyer": {Role.BUYER}, "seller": {Role.SELLER}, "both": {Role.BUYER, Role.SELLER}}
CONDITIONS_OF = {
    "seller_unaware": {Condition.SELLER_UNAWARE},
    "buyer_unaware": {Condition.BUYER_UNAWARE},
    "all": set(Condition),
}


def cli(*args: str) -> subprocess.CompletedProcess:
    """The CLI without any BARGAIN_* setting of the environment this runs in."""
    unset = {name: None for name in os.environ if name.startswith("BARGAIN_")}
    return run_main(main, *args, env={**unset, "HF_HUB_OFFLINE": "1"})


def assert_one_line_error(result: subprocess.CompletedProcess, *needles: str) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


@pytest.fixture
def trial(scenario_set):
    def make(condition=Condition.SELLER_UNAWARE, mode=Mode.SIMULTANEOUS, rounds=4) -> Trial:
        return Trial(
            trial_id=1,
            scenario=scenario_set.get("low:1508"),
            condition=condition,
            buyer_price=2.5,
            seller_price=1.5,
            max_rounds=rounds,
            mode=mode,
        )

    return make


def fake_adapters(root: Path, names=tuple(ADAPTERS)) -> Path:
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "adapter_config.json").write_text(json.dumps({"r": ADAPTERS[name].lora_rank}))
    return root


# --- The catalogue ------------------------------------------------------------------------------


def test_catalogue():
    arms = catalogue()
    assert [a.spec for a in arms] == ["arm:base", *(f"arm:{n}" for n in TABLE), *(f"tactic:{n}" for n in TACTICS)]
    assert len(TACTICS) == 6
    assert sum(a.kind == "adapter" for a in arms) == 8
    assert sum(a.kind == "tactic" for a in arms) == 6
    base = arms[0]
    assert base is BASE and base.kind == "base" and base.is_model
    assert set(base.roles) == {Role.BUYER, Role.SELLER} and set(base.conditions) == set(Condition)
    assert BASE_MODEL == "Qwen/Qwen3-8B"
    assert ADAPTER_REPO == "AnvaMiba/qwen3-8b-bargaining-lora"
    for arm in arms[9:]:
        assert arm.kind == "tactic" and not arm.is_model and arm.name in TACTICS


@pytest.mark.parametrize("name", list(TABLE))
def test_adapter_matches_the_protocol_table(name):
    roles, loss, transform, rank, alpha, conditions, checkpoint = TABLE[name]
    arm = ADAPTERS[name]
    assert arm.name == name and arm.kind == "adapter" and arm.is_model
    assert arm.spec == f"arm:{name}"
    assert set(arm.roles) == ROLES_OF[roles]
    assert arm.loss == loss
    assert arm.transform == transform
    assert (arm.lora_rank, arm.lora_alpha) == (rank, alpha)
    assert set(arm.conditions) == CONDITIONS_OF[conditions]
    assert arm.checkpoint == checkpoint
    assert arm.lora_rank <= MAX_LORA_RANK


def test_resolve():
    assert resolve("arm:base") is BASE
    assert resolve("arm:buyer-grpo") is ADAPTERS["buyer-grpo"]
    for name in ADAPTERS:
        assert resolve(f"arm:{name}").spec == f"arm:{name}"
    tactic = resolve("tactic:boulware")
    assert (tactic.kind, tactic.name, tactic.spec, tactic.is_model) == ("tactic", "boulware", "tactic:boulware", False)
    hosted = resolve("openai:gpt-5.2@https://api.openai.com/v1")
    assert (hosted.kind, hosted.model, hosted.base_url) == ("openai", "gpt-5.2", "https://api.openai.com/v1")
    assert hosted.spec == "openai:gpt-5.2@https://api.openai.com/v1" and hosted.is_model
    local = resolve("openai:Qwen/Qwen3-8B@http://127.0.0.1:8000/v1")
    assert (local.model, local.base_url) == ("Qwen/Qwen3-8B", "http://127.0.0.1:8000/v1")


@pytest.mark.parametrize(
    "spec, needle",
    [
        ("arm:buyer-ppo", "unknown arm"),
        ("arm:Base", "unknown arm"),
        ("tactic:stubborn", "unknown tactic"),
        ("openai:gpt-5.2", "openai:MODEL@URL"),
        ("openai:@https://api.openai.com/v1", "openai:MODEL@URL"),
        ("openai:gpt-5.2@api.openai.com/v1", "openai:MODEL@URL"),
        ("model:buyer-grpo", "unknown agent kind"),
        ("buyer-grpo", "expected arm:NAME"),
        ("arm:", "expected arm:NAME"),
    ],
)
def test_resolve_errors(spec, needle):
    with pytest.raises(ArmError, match=needle):
        resolve(spec)
    assert issubclass(ArmError, ValueError)


def test_unknown_arm_error_lists_the_arms():
    with pytest.raises(ArmError) as info:
        resolve("arm:nope")
    assert all(name in str(info.value) for name in ["base", *ADAPTERS])


def test_people_know_a_remote_model_by_its_name_never_its_url():
    one, two, other = "openai:m@http://10.0.0.1:8000/v1", "openai:m@https://m.example/v1", "openai:g@http://h/v1"
    offered = ["tactic:linear", one, other, two, "arm:base", "person:queue", two]
    assert public_names(offered) == {
        "tactic:linear": "tactic:linear",
        one: "openai:m#1",  # two servers of one model: numbered in the order they were configured
        other: "openai:g",
        two: "openai:m#2",
        "arm:base": "arm:base",
        "person:queue": "person:queue",
    }
    # Arms a stored game names that are not offered now get names of their own, none an offered arm's.
    gone = ["openai:m@http://old/v1", "openai:g@http://old/v1", "openai:z@http://old/v1", "person", one]
    names = public_names([one, two, other], gone)
    assert [names[spec] for spec in gone] == ["openai:m#3", "openai:g#2", "openai:z", "person", "openai:m#1"]
    assert public_names([], gone[:3]) == dict(zip(gone[:3], ["openai:m", "openai:g", "openai:z"]))


# --- Out of distribution ------------------------------------------------------------------------


def test_in_distribution(trial):
    assert ADAPTERS["buyer-grpo"].out_of_distribution(Role.BUYER, trial()) == []
    assert ADAPTERS["seller-cispo"].out_of_distribution(Role.SELLER, trial(Condition.BUYER_UNAWARE)) == []


@pytest.mark.parametrize(
    "role, changes, needle",
    [
        (Role.SELLER, {}, "seller"),
        (Role.BUYER, {"condition": Condition.FULL}, "full"),
        (Role.BUYER, {"condition": Condition.BOTH_UNAWARE}, "both_unaware"),
        (Role.BUYER, {"mode": Mode.SEQUENTIAL}, "sequential"),
        (Role.BUYER, {"rounds": 6}, "6"),
    ],
)
def test_one_reason_per_difference(trial, role, changes, needle):
    reasons = ADAPTERS["buyer-grpo"].out_of_distribution(role, trial(**changes))
    assert len(reasons) == 1
    assert needle in reasons[0]


def test_every_difference_is_a_reason(trial):
    reasons = ADAPTERS["buyer-grpo"].out_of_distribution(Role.SELLER, trial(Condition.FULL, Mode.SEQUENTIAL, 6))
    assert len(reasons) == 4


@pytest.mark.parametrize("name", ["joint-grpo", "joint-cispo"])
def test_joint_arms_cover_both_roles_and_all_conditions(trial, name):
    for role, condition in itertools.product(Role, Condition):
        assert ADAPTERS[name].out_of_distribution(role, trial(condition)) == []
    assert len(ADAPTERS[name].out_of_distribution(Role.BUYER, trial(rounds=6))) == 1
    assert len(ADAPTERS[name].out_of_distribution(Role.SELLER, trial(mode=Mode.SEQUENTIAL))) == 1


def test_base_and_tactics_are_never_flagged(trial):
    arms = [BASE, *(a for a in catalogue() if a.kind == "tactic"), resolve("openai:m@http://127.0.0.1:1/v1")]
    for arm, role, condition, mode, rounds in itertools.product(arms, Role, Condition, Mode, (1, 4, 6)):
        assert arm.out_of_distribution(role, trial(condition, mode, rounds)) == []


# --- The paper's variants -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "buyer, bt, seller, st, expected",
    [
        ("arm:buyer-grpo", 0.7, "arm:base", 0.1, "buyer_grpo"),
        ("arm:buyer-cispo-norank", 0.7, "arm:base", 0.1, "buyer_cispo_norank"),
        ("arm:base", 0.1, "arm:seller-cispo", 0.7, "seller_cispo"),
        ("arm:base", 0.1, "arm:seller-grpo", 0.7, "seller_grpo"),
        ("arm:joint-grpo", 0.7, "arm:base", 0.7, "joint_grpo_as_buyer"),
        ("arm:base", 0.7, "arm:joint-cispo", 0.7, "joint_cispo_as_seller"),
        ("arm:joint-grpo", 0.7, "arm:joint-grpo", 0.7, "joint_grpo_selfplay"),
        ("arm:joint-cispo", 0.7, "arm:joint-cispo", 0.7, "joint_cispo_selfplay"),
        ("arm:base", 0.7, "arm:base", 0.7, "joint_base"),
        # Wrong temperatures, roles or pairings: not one of the paper's runs.
        ("arm:buyer-grpo", 0.7, "arm:base", 0.7, None),
        ("arm:buyer-grpo", 0.1, "arm:base", 0.1, None),
        ("arm:base", 0.7, "arm:seller-cispo", 0.7, None),
        ("arm:joint-grpo", 0.7, "arm:base", 0.1, None),
        ("arm:joint-grpo", 0.7, "arm:joint-cispo", 0.7, None),
        ("arm:base", 0.1, "arm:base", 0.1, None),
        ("arm:seller-grpo", 0.7, "arm:base", 0.1, None),
        ("tactic:boulware", 0.7, "arm:base", 0.1, None),
    ],
)
def test_variant(buyer, bt, seller, st, expected):
    assert reference.variant(scenarios.grid("paper-rl-test"), buyer, bt, seller, st) == expected


@pytest.mark.parametrize(
    "grid",
    [
        scenarios.grid("paper-zeroshot"),
        scenarios.grid("paper-rl-val"),
        replace(scenarios.grid("paper-rl-test"), max_rounds=6),
        replace(scenarios.grid("paper-rl-test"), mode=Mode.SEQUENTIAL),
        replace(scenarios.grid("paper-rl-test"), start=1500),
    ],
)
def test_variant_needs_the_rl_test_games(grid):
    assert reference.variant(grid, "arm:buyer-grpo", 0.7, "arm:base", 0.1) is None


def test_fewer_trials_or_conditions_still_match_the_paper():
    fewer = replace(
        scenarios.grid("paper-rl-test"), trials_per_cell=2, conditions=(Condition.SELLER_UNAWARE,), name="custom"
    )
    assert reference.variant(fewer, "arm:buyer-grpo", 0.7, "arm:base", 0.1) == "buyer_grpo"


def test_every_variant_is_in_the_reference_table():
    names = set(reference.cells()["variant"])
    specs = ["arm:base", *(f"arm:{n}" for n in ADAPTERS)]
    found = set()
    for buyer, bt, seller, st in itertools.product(specs, (0.1, 0.7), specs, (0.1, 0.7)):
        name = reference.variant(scenarios.grid("paper-rl-test"), buyer, bt, seller, st)
        if name is not None:
            found.add(name)
    assert set(reference.VARIANTS.values()) == found
    assert found <= names
    assert len(found) == 13  # 4 buyer + 2 seller + 2 x 3 joint + joint_base
    cells = reference.cells()
    for name in found:  # every condition has a row to set beside ours
        assert set(cells[cells["variant"] == name]["transparency"]) >= set(CONDITIONS)


# --- Adapter directories ------------------------------------------------------------------------


def test_adapter_paths_from_a_local_directory(tmp_path):
    fake_adapters(tmp_path)
    paths = adapter_paths(list(ADAPTERS), tmp_path)
    assert paths == {name: tmp_path / name for name in ADAPTERS}
    assert adapter_paths(["joint-grpo", "buyer-grpo", "joint-grpo"], str(tmp_path)) == {
        "joint-grpo": tmp_path / "joint-grpo",
        "buyer-grpo": tmp_path / "buyer-grpo",
    }
    assert adapter_paths([], tmp_path) == {}


def test_missing_adapter_is_named(tmp_path):
    fake_adapters(tmp_path, ["buyer-grpo"])
    (tmp_path / "seller-grpo").mkdir()  # a folder without adapter_config.json is not an adapter
    with pytest.raises(ArmError) as info:
        adapter_paths(["buyer-grpo", "seller-grpo", "joint-cispo"], tmp_path)
    message = str(info.value)
    assert "seller-grpo" in message and "joint-cispo" in message
    assert "buyer-grpo" not in message.split(" in ")[0]
    assert "adapter_config.json" in message


def test_offline_without_a_directory_suggests_adapters_dir(tmp_path, monkeypatch):
    from huggingface_hub import constants

    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(ArmError) as info:
        adapter_paths(["buyer-grpo"])
    assert "--adapters-dir" in str(info.value)
    assert "buyer-grpo" in str(info.value)


# --- CLI: arms ----------------------------------------------------------------------------------


def _marks(stdout: str) -> dict[str, str]:
    rows = {}
    for line in stdout.splitlines():
        if line.startswith(("arm:", "tactic:")):
            rows[line.split()[0]] = line.rsplit("  ", 1)[-1].strip()
    return rows


def test_cli_arms_without_backend():
    result = cli("arms")
    assert result.returncode == 0, result.stderr
    marks = _marks(result.stdout)
    assert set(marks) == {"arm:base", *(f"arm:{n}" for n in ADAPTERS), *(f"tactic:{n}" for n in TACTICS)}
    assert all(marks[f"arm:{n}"] == "needs --backend" for n in ["base", *ADAPTERS])
    assert all(marks[f"tactic:{n}"] == "yes" for n in TACTICS)
    assert "Model arms need a backend" in result.stdout
    line = next(text for text in result.stdout.splitlines() if text.startswith("arm:joint-cispo "))
    assert "CISPO" in line and "r=32" in line and "step 11" in line


def test_cli_arms_against_a_server():
    served = [BASE_MODEL, "buyer-grpo", "seller-cispo"]
    with StubServer(served) as server:
        result = cli("arms", "--backend", "vllm", "--base-url", server.url)
    assert result.returncode == 0, result.stderr
    marks = _marks(result.stdout)
    assert marks["arm:base"] == "yes"
    assert marks["arm:buyer-grpo"] == "yes" and marks["arm:seller-cispo"] == "yes"
    assert all(marks[f"arm:{n}"] == "no" for n in ADAPTERS if n not in served)
    assert all(marks[f"tactic:{n}"] == "yes" for n in TACTICS)
    assert "Model arms need a backend" not in result.stdout
    assert server.requests == []  # listing needs no completion


def free_url() -> str:
    """A URL on which nothing listens (a port bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_cli_arms_says_why_when_the_server_cannot_be_reached():
    url = free_url()
    result = cli("arms", "--backend", "vllm", "--base-url", url)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach" in lines[0] and url in lines[0], result.stderr
    marks = _marks(result.stdout)
    assert all(marks[f"arm:{n}"] == "no" for n in ["base", *ADAPTERS])
    assert all(marks[f"tactic:{n}"] == "yes" for n in TACTICS)


# --- CLI: serve ---------------------------------------------------------------------------------


def _option(command: list[str], flag: str) -> str:
    assert command.count(flag) == 1, command
    return command[command.index(flag) + 1]


def _modules(command: list[str]) -> list[str]:
    rest = command[command.index("--lora-modules") + 1 :]
    return list(itertools.takewhile(lambda part: not part.startswith("--"), rest))


def test_cli_serve_dry_run(tmp_path):
    root = fake_adapters(tmp_path / "adapters")
    result = cli("serve", "--dry-run", "--adapters-dir", str(root))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    command = shlex.split(lines[0])
    assert command[:3] == ["vllm", "serve", "Qwen/Qwen3-8B"]
    assert "--enable-lora" in command
    assert _option(command, "--max-loras") == "8"
    assert _option(command, "--max-lora-rank") == "32"
    assert _option(command, "--max-model-len") == "8192"
    assert _option(command, "--gpu-memory-utilization") == "0.9"
    assert _option(command, "--port") == "8000"
    assert sorted(_modules(command)) == sorted(f"{n}={root}/{n}" for n in ADAPTERS)
    assert len(_modules(command)) == 8


def test_cli_serve_dry_run_some_adapters(tmp_path):
    root = fake_adapters(tmp_path / "adapters", ["buyer-grpo", "seller-grpo"])
    result = cli(
        "serve",
        "--dry-run",
        "--adapters-dir",
        str(root),
        "--adapters",
        "buyer-grpo,seller-grpo",
        "--model",
        "/some/path",
        "--port",
        "9000",
    )
    assert result.returncode == 0, result.stderr
    command = shlex.split(result.stdout.strip())
    assert command[:3] == ["vllm", "serve", "/some/path"]
    assert _option(command, "--port") == "9000"
    assert _option(command, "--max-loras") == "2"
    assert _option(command, "--max-lora-rank") == "32"
    assert _modules(command) == [f"buyer-grpo={root}/buyer-grpo", f"seller-grpo={root}/seller-grpo"]


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_cli_serve_without_vllm():
    result = cli("serve")
    assert_one_line_error(result, "requirements-gpu.txt")


def test_serve_errors_in_process(tmp_path, capsys):
    root = fake_adapters(tmp_path / "adapters", ["buyer-grpo"])
    assert main(["serve", "--dry-run", "--adapters", "buyer-grpo,buyer-ppo", "--adapters-dir", str(root)]) == 2
    assert "buyer-ppo" in capsys.readouterr().err
    assert main(["serve", "--dry-run", "--adapters", "buyer-grpo,joint-grpo", "--adapters-dir", str(root)]) == 2
    assert "joint-grpo" in capsys.readouterr().err


def test_vllm_command():
    adapters = {"buyer-grpo": "/a/buyer-grpo", "joint-grpo": Path("/a/joint-grpo")}
    assert vllm_command("Qwen/Qwen3-8B", adapters) == [
        "vllm",
        "serve",
        "Qwen/Qwen3-8B",
        "--host",
        "127.0.0.1",
        "--port",
        "8000",
        "--max-model-len",
        "8192",
        "--gpu-memory-utilization",
        "0.9",
        "--enable-lora",
        "--max-loras",
        "2",
        "--max-lora-rank",
        "32",
        "--lora-modules",
        "buyer-grpo=/a/buyer-grpo",
        "joint-grpo=/a/joint-grpo",
    ]
    bare = vllm_command(
        "m", {}, host="0.0.0.0", port=9001, max_model_len=4096, gpu_memory_utilization=0.5, tensor_parallel_size=2
    )
    assert bare == [
        "vllm",
        "serve",
        "m",
        "--host",
        "0.0.0.0",
        "--port",
        "9001",
        "--max-model-len",
        "4096",
        "--gpu-memory-utilization",
        "0.5",
        "--tensor-parallel-size",
        "2",
    ]
    assert "--enable-lora" not in bare


# --- CLI: simulate / evaluate through a server --------------------------------------------------


def evaluate_args(url: str, out: Path, seed: int = 42) -> list[str]:
    return [
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
        url,
        "--out",
        str(out),
        "--quiet",
        "--seed",
        str(seed),
    ]


def grid_trials(scenario_set) -> list[Trial]:
    spec = replace(scenarios.grid("paper-rl-test"), trials_per_cell=1)
    return scenarios.make_trials(spec, scenario_set, 42)


def test_simulate_model_arm_needs_a_backend(tmp_path):
    out = tmp_path / "run"
    result = cli(
        "simulate",
        "--grid",
        "paper-rl-test",
        "--trials",
        "1",
        "--buyer",
        "arm:buyer-grpo",
        "--seller",
        "tactic:boulware",
        "--out",
        str(out),
        "--quiet",
    )
    assert_one_line_error(result, "--backend")
    assert not (out / "games.jsonl").exists()


def test_simulate_unserved_arm(tmp_path):
    with StubServer([BASE_MODEL]) as server:
        result = cli(
            "simulate",
            "--grid",
            "paper-rl-test",
            "--trials",
            "1",
            "--buyer",
            "arm:buyer-grpo",
            "--seller",
            "arm:base",
            "--backend",
            "vllm",
            "--base-url",
            server.url,
            "--out",
            str(tmp_path / "run"),
            "--quiet",
        )
    assert_one_line_error(result, "arm:buyer-grpo")
    assert server.requests == []


@pytest.mark.parametrize(
    "agents",
    [
        ["--buyer", "arm:buyer-grpo", "--seller", "arm:base", "--backend", "vllm", "--base-url", "{url}"],
        ["--buyer", "openai:gpt-test@{url}", "--seller", "tactic:linear"],
    ],
    ids=["vllm", "remote"],
)
def test_simulate_stops_at_once_when_a_model_server_cannot_be_reached(agents, tmp_path):
    url = free_url()
    out = tmp_path / "run"
    result = cli(
        "simulate",
        "--grid",
        "paper-rl-test",
        "--trials",
        "1",
        *(a.format(url=url) for a in agents),
        "--out",
        str(out),
        "--quiet",
    )
    assert_one_line_error(result, "cannot reach", url)
    assert not (out / "games.jsonl").exists()


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """One evaluate run of arm:buyer-grpo (T 0.7) vs arm:base (frozen opponent) through the stub server."""
    out = tmp_path_factory.mktemp("evaluate") / "run"
    with StubServer(SERVED) as server:
        result = cli(*evaluate_args(server.url, out))
    return SimpleNamespace(out=out, result=result, requests=list(server.requests))


def test_evaluate_through_a_server(evaluated, scenario_set):
    out, result = evaluated.out, evaluated.result
    assert result.returncode == 0, result.stderr
    assert "32 of 32 trials finished" in result.stdout
    for name in (
        "trials.csv",
        "trials.parquet",
        "games.jsonl",
        "summary.md",
        "config.json",
        "outcomes_by_condition.png",
        "deal_price_vs_nbs.png",
    ):
        assert (out / name).is_file(), name
    for name in ("outcomes_by_condition.png", "deal_price_vs_nbs.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    frame = pd.read_csv(out / "trials.csv")
    assert len(frame) == 32
    assert sorted(frame["trial_id"]) == list(range(1, 33))
    assert (frame["deal"] == "no_deal").all() and (frame["rounds"] == 4).all()
    assert (frame["buyer_prompt_tokens"] > 0).all() and (frame["seller_prompt_tokens"] > 0).all()
    assert (frame["buyer_completion_tokens"] > 0).all()
    assert (frame["buyer_agent"] == "arm:buyer-grpo").all() and (frame["seller_agent"] == "arm:base").all()
    expected_ood = frame["transparency"] != "seller_unaware"
    assert frame["buyer_out_of_distribution"].astype(bool).tolist() == expected_ood.tolist()
    assert expected_ood.sum() == 24
    assert not frame["seller_out_of_distribution"].astype(bool).any()

    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 32
    for game in games:
        assert game["error"] is None
        roles = [r["role"] for r in game["records"]]
        assert roles.count("buyer") == 4 and roles.count("seller") == 4
        for record in game["records"]:
            assert record["raw"] and record["prompt_tokens"] > 0 and record["latency_s"] > 0
            assert record["backend"] == "openai-compatible"
            assert record["prompt_version"] == "paper-eval"
            assert record["model"] == ("buyer-grpo" if record["role"] == "buyer" else BASE_MODEL)
        assert bool(game["buyer_out_of_distribution"]) == (game["transparency"] != "seller_unaware")
        assert game["seller_out_of_distribution"] == []

    config = json.loads((out / "config.json").read_text())
    assert config["status"] == "finished" and config["failed_games"] == 0
    assert config["backend"]["backend"] == "vllm"
    assert config["prompt_version"] == "paper-eval"
    assert config["usage"]["buyer"]["model_calls"] == 128


def test_evaluate_requests(evaluated, scenario_set):
    requests = evaluated.requests
    assert len(requests) == 32 * REQUESTS_PER_GAME
    buyer = [b for b in requests if b["messages"][0]["content"].startswith("You are the BUYER")]
    seller = [b for b in requests if b["messages"][0]["content"].startswith("You are the SELLER")]
    assert len(buyer) == len(seller) == 128
    for body in buyer:
        assert body["model"] == "buyer-grpo"
        assert (body["temperature"], body["top_p"], body["top_k"]) == (0.7, 0.8, 20)
        assert body["presence_penalty"] == 1.5 and body["max_tokens"] == 1024
        assert body["chat_template_kwargs"] == {"enable_thinking": False}
    for body in seller:
        assert body["model"] == BASE_MODEL
        assert (body["temperature"], body["top_p"], body["top_k"]) == (0.1, 0.5, 20)
        assert body["chat_template_kwargs"] == {"enable_thinking": False}
    # The first user message of each side of each trial: the paper-eval system prompt, then round 1.
    first = {b["messages"][0]["content"] for b in requests if len(b["messages"]) == 1}
    expected = {
        system_prompt(new_initial_state(t).observation(role), PromptVersion.PAPER_EVAL) + "\n\nRound 1, rounds left 3"
        for t in grid_trials(scenario_set)
        for role in Role
    }
    assert first == expected and len(first) == 64


def test_evaluate_sets_the_paper_beside_ours(evaluated):
    summary = (evaluated.out / "summary.md").read_text()
    assert "## Beside the paper (buyer_grpo)" in summary
    comparison = pd.read_csv(evaluated.out / "paper_comparison.csv")
    assert list(comparison["transparency"][:4]) == CONDITIONS


def test_evaluate_leaves_no_traceback(evaluated):
    assert evaluated.result.returncode == 0
    assert "Traceback" not in evaluated.result.stderr
    assert "Event loop is closed" not in evaluated.result.stderr


def test_paper_comparison_when_the_grid_keeps_its_name(tmp_path, scenario_set):
    """In process: a run set up as `paper-rl-test` (a subset of its trials) writes the paper's numbers beside ours."""
    setup = RunSetup(
        grid=scenarios.grid("paper-rl-test"),
        seed=42,
        buyer="arm:buyer-grpo",
        seller="arm:base",
        scenarios="bundled",
        buyer_side=Side(PRESETS["trained"], prompt_version=PromptVersion.PAPER_EVAL),
        seller_side=Side(PRESETS["frozen-opponent"], prompt_version=PromptVersion.PAPER_EVAL),
    )
    backends = Backends(CannedBackend())
    makers = {
        role: agent_factory(spec, backends, side)
        for role, spec, side in (
            (Role.BUYER, setup.buyer, setup.buyer_side),
            (Role.SELLER, setup.seller, setup.seller_side),
        )
    }
    frame = run(
        setup,
        grid_trials(scenario_set),
        lambda t: (makers[Role.BUYER](0), makers[Role.SELLER](0)),
        tmp_path,
        progress=False,
        evaluate=True,
    )
    assert len(frame) == 32
    summary = (tmp_path / "summary.md").read_text()
    assert "## Beside the paper (buyer_grpo)" in summary
    comparison = pd.read_csv(tmp_path / "paper_comparison.csv")
    assert set(CONDITIONS) <= set(comparison["transparency"])
    paper = reference.cells().query("variant == 'buyer_grpo'").set_index("transparency")
    row = comparison.set_index("transparency").loc["seller_unaware"]
    assert row["paper_deal_rate"] == pytest.approx(paper.loc["seller_unaware", "deal_rate"])
    assert row["ours_deal_rate"] == 0


@pytest.mark.slow  # an evaluation run twice through the command (seconds)
def test_resume_after_failed_games(tmp_path, scenario_set):
    out = tmp_path / "run"
    # 400 is not retried: the first requests fail and take their games down with them.
    with StubServer(SERVED, fail_first=10, fail_status=400) as failing:
        first = cli(*evaluate_args(failing.url, out))
    assert first.returncode == 1, first.stderr
    config = json.loads((out / "config.json").read_text())
    assert config["status"] == "incomplete"
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    failed = {g["trial_id"] for g in games if g["error"] is not None}
    assert 5 <= len(failed) <= 10
    assert config["failed_games"] == len(failed)
    assert all("400" in g["error"] for g in games if g["error"] is not None)
    assert len(pd.read_csv(out / "trials.csv")) == 32 - len(failed)
    assert f"{len(failed)} of 32 games failed" in (out / "summary.md").read_text()

    with StubServer(SERVED) as healthy:
        second = cli(*evaluate_args(healthy.url, out))
    assert second.returncode == 0, second.stderr
    assert f"resuming {out}: {32 - len(failed)} of 32 trials already finished" in second.stdout
    frame = pd.read_csv(out / "trials.csv")
    assert len(frame) == 32 and sorted(frame["trial_id"]) == list(range(1, 33))
    assert json.loads((out / "config.json").read_text())["status"] == "finished"
    # Only the failed games were played again, each from the start.
    assert len(healthy.requests) == REQUESTS_PER_GAME * len(failed)
    replayed = {b["messages"][0]["content"] for b in healthy.requests if len(b["messages"]) == 1}
    trials = {t.trial_id: t for t in grid_trials(scenario_set)}
    assert replayed == {
        system_prompt(new_initial_state(trials[i]).observation(role), PromptVersion.PAPER_EVAL)
        + "\n\nRound 1, rounds left 3"
        for i in failed
        for role in Role
    }
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 32 and all(g["error"] is None for g in games)

    with StubServer(SERVED) as other:
        third = cli(*evaluate_args(other.url, out, seed=43))
    assert_one_line_error(third, "different run")
    assert other.requests == []
    assert len(pd.read_csv(out / "trials.csv")) == 32
