"""`python -m bargain ...` end to end, on real files.

The commands run in this process (tests/cli_runner.py); what only a real process shows runs in one:
`python -m bargain` itself (`--help`, a simulate, an error's exit status) and what each light
command imports at start-up."""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from cli_runner import run_main

from bargain.cli import main
from bargain.engine.game import GameState
from bargain.engine.outcome import PAPER_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
SCENARIO_FILE = ROOT / "bargain" / "data" / "scenarios_by_reservation_ranges.jsonl"
CONDITIONS = ["full", "buyer_unaware", "seller_unaware", "both_unaware"]
ZEROSHOT = [
    "simulate",
    "--grid",
    "paper-zeroshot",
    "--seed",
    "42",
    "--buyer",
    "tactic:boulware",
    "--seller",
    "tactic:conceder",
    "--quiet",
]


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_main(main, *args, stdin=stdin, env={"HF_HUB_OFFLINE": "1"})


def program(*args: str) -> subprocess.CompletedProcess:
    """`python -m bargain` in a fresh interpreter: its start, its imports, the exit status it gives."""
    return subprocess.run(
        [sys.executable, "-m", "bargain", *args],
        cwd=ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def ok(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    run = cli(*args, stdin=stdin)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    return run


def assert_one_line_error(run: subprocess.CompletedProcess, *needles: str) -> None:
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    for needle in needles:
        assert needle in lines[0]


def draws(tier: str, start: int, stop: int, conditions: list[str], per_cell: int, seed: int = 42):
    """The paper's reservation prices, drawn independently of the package."""
    data = json.loads(SCENARIO_FILE.read_text(encoding="utf-8"))
    rng = random.Random(seed)
    rows = []
    for scenario in data[tier][start:stop]:
        (bl, bh), (sl, sh) = scenario["buyer_res_price_range"], scenario["seller_res_price_range"]
        for condition in conditions:
            for _ in range(per_cell):
                v_b = round(rng.uniform(bl, bh), 2)
                v_s = round(rng.uniform(sl, sh), 2)
                rows.append((scenario["product_name"], condition, v_b, v_s))
    return rows


@pytest.fixture(scope="module")
def zeroshot(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("zeroshot")
    run = ok(*ZEROSHOT, "--out", str(out))
    assert run.stdout.startswith(f"320 of 320 trials finished in {out}")
    return out


@pytest.fixture(scope="module")
def zeroshot_csv(zeroshot) -> pd.DataFrame:
    return pd.read_csv(zeroshot / "trials.csv")


# --- simulate -----------------------------------------------------------------------------


def test_simulate_writes_every_output(zeroshot):
    for name in ("trials.parquet", "trials.csv", "games.jsonl", "summary.md", "config.json"):
        assert (zeroshot / name).is_file(), name
    summary = (zeroshot / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# paper-zeroshot: tactic:boulware (buyer) vs tactic:conceder (seller)")
    for condition in CONDITIONS + ["ALL"]:
        assert f"| {condition}" in summary


def test_simulate_trials_table_has_the_papers_layout(zeroshot, zeroshot_csv):
    frame = zeroshot_csv
    assert len(frame) == 320
    assert tuple(frame.columns[:17]) == PAPER_COLUMNS
    assert list(frame["trial_id"]) == list(range(1, 321))
    assert list(frame["transparency"]) == [c for _ in range(10) for c in CONDITIONS for _ in range(8)]
    assert set(frame["mode"]) == {"simultaneous"}
    assert set(frame["max_rounds"]) == {6}
    assert set(frame["first_actor"]) == {"buyer"}
    assert set(frame["deal"]) <= {"deal", "no_deal"}
    assert frame.loc[frame["deal"] == "no_deal", "deal_price"].isna().all()
    assert frame.loc[0, "buyer_res_price_range"] == "(2.1, 3.0)"
    assert frame.loc[0, "seller_res_price_range"] == "(1.2, 2.1)"
    parquet = pd.read_parquet(zeroshot / "trials.parquet")
    pd.testing.assert_frame_equal(parquet[list(PAPER_COLUMNS)], frame[list(PAPER_COLUMNS)], check_dtype=False)


def test_simulate_reproduces_the_papers_reservation_prices(zeroshot_csv):
    frame = zeroshot_csv
    pairs = list(zip(frame["buyer_res_price"], frame["seller_res_price"]))
    assert pairs[:2] == [(2.68, 1.22), (2.35, 1.4)]
    expected = draws("low", 0, 10, CONDITIONS, 8)
    assert len(expected) == 320
    assert pairs == [(v_b, v_s) for _, _, v_b, v_s in expected]
    assert list(frame["item_name"]) == [name for name, _, _, _ in expected]
    assert list(frame["transparency"]) == [c for _, c, _, _ in expected]


def test_simulate_games_rebuild_to_the_trials_rows(zeroshot, zeroshot_csv):
    lines = (zeroshot / "games.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 320
    rows = zeroshot_csv.set_index("trial_id")
    for line in lines:
        record = json.loads(line)
        assert record["error"] is None
        state = GameState.from_dict(record)
        assert state.is_terminal()
        outcome = state.outcome()
        row = rows.loc[state.trial.trial_id]
        assert record["trial_id"] == state.trial.trial_id
        assert (state.trial.buyer_price, state.trial.seller_price) == (row["buyer_res_price"], row["seller_res_price"])
        assert state.trial.condition.value == row["transparency"]
        assert outcome.deal == (row["deal"] == "deal")
        assert outcome.rounds == row["rounds"]
        if outcome.deal:
            assert outcome.deal_price == pytest.approx(row["deal_price"], rel=1e-12)
        else:
            assert math.isnan(row["deal_price"])
        assert outcome.buyer_utility == pytest.approx(row["buyer_utility"], rel=1e-12, abs=1e-12)
        assert outcome.seller_utility == pytest.approx(row["seller_utility"], rel=1e-12, abs=1e-12)
        assert record["turns"], "a game has at least one move"
        for move in record["turns"]:
            assert {"round", "role", "thought", "message", "action", "price"} <= set(move)
            assert move["role"] in ("buyer", "seller")
            assert (move["price"] is not None) == (move["action"] == "OFFER")


def test_simulate_config_records_the_run(zeroshot):
    config = json.loads((zeroshot / "config.json").read_text(encoding="utf-8"))
    assert config["seed"] == 42
    assert config["buyer"] == "tactic:boulware"
    assert config["seller"] == "tactic:conceder"
    assert config["grid"]["name"] == "paper-zeroshot"
    assert config["grid"]["start"] == 0 and config["grid"]["stop"] == 10
    assert config["grid"]["trials_per_cell"] == 8 and config["grid"]["max_rounds"] == 6
    assert config["grid"]["conditions"] == CONDITIONS
    assert config["command"][:4] == ["python", "-m", "bargain", "simulate"]
    assert "--grid" in config["command"] and "paper-zeroshot" in config["command"]


def test_simulate_is_deterministic(zeroshot, tmp_path):
    ok(*ZEROSHOT, "--out", str(tmp_path))
    assert (tmp_path / "trials.csv").read_bytes() == (zeroshot / "trials.csv").read_bytes()
    assert (tmp_path / "games.jsonl").read_bytes() == (zeroshot / "games.jsonl").read_bytes()


def test_simulate_custom_flags_with_random_agents(tmp_path):
    """As a program, `python -m bargain simulate` in a fresh interpreter: the end-to-end smoke test."""
    run = program(
        "simulate",
        "--tier",
        "low",
        "--scenarios-slice",
        "1508:1510",
        "--conditions",
        "full,both_unaware",
        "--trials",
        "3",
        "--rounds",
        "4",
        "--mode",
        "sequential",
        "--first-actor",
        "seller",
        "--buyer",
        "tactic:random",
        "--seller",
        "tactic:random",
        "--out",
        str(tmp_path),
        "--quiet",
    )
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert run.stdout.startswith(f"12 of 12 trials finished in {tmp_path}")
    frame = pd.read_csv(tmp_path / "trials.csv")
    assert len(frame) == 12
    assert set(frame["mode"]) == {"sequential"}
    assert set(frame["max_rounds"]) == {4}
    assert set(frame["first_actor"]) == {"seller"}
    assert frame["rounds"].between(1, 4).all()
    expected = draws("low", 1508, 1510, ["full", "both_unaware"], 3)
    assert list(frame["transparency"]) == [c for _, c, _, _ in expected]
    assert list(zip(frame["buyer_res_price"], frame["seller_res_price"])) == [(b, s) for _, _, b, s in expected]
    assert list(frame["scenario"]) == ["low:1508"] * 6 + ["low:1509"] * 6
    config = json.loads((tmp_path / "config.json").read_text(encoding="utf-8"))
    assert config["grid"]["mode"] == "sequential" and config["grid"]["first_actor"] == "seller"
    assert config["buyer"] == config["seller"] == "tactic:random"
    games = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(games) == 12
    for game in games:
        first = game["turns"][0]
        assert (first["round"], first["role"]) == (1, "seller")
        assert GameState.from_dict(game).is_terminal()


def test_simulate_rl_test_grid_one_trial_per_cell(tmp_path):
    ok(
        "simulate",
        "--grid",
        "paper-rl-test",
        "--trials",
        "1",
        "--buyer",
        "tactic:hardliner",
        "--seller",
        "tactic:tit-for-tat",
        "--out",
        str(tmp_path),
        "--quiet",
    )
    frame = pd.read_csv(tmp_path / "trials.csv")
    assert len(frame) == 32
    assert set(frame["max_rounds"]) == {4}
    assert list(frame["scenario"]) == [f"low:{i}" for i in range(1508, 1516) for _ in range(4)]
    expected = draws("low", 1508, 1516, CONDITIONS, 1)
    assert list(zip(frame["buyer_res_price"], frame["seller_res_price"])) == [(b, s) for _, _, b, s in expected]


def test_a_modified_paper_grid_keeps_the_paper_wording(tmp_path):
    ok(
        "simulate",
        "--grid",
        "paper-rl-test",
        "--trials",
        "1",
        "--buyer",
        "tactic:linear",
        "--seller",
        "tactic:linear",
        "--out",
        str(tmp_path),
        "--quiet",
    )
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["grid"]["name"] == "custom" and config["prompt_version"] == "paper-eval"
    assert set(pd.read_csv(tmp_path / "trials.csv")["prompt_version"]) == {"paper-eval"}


# --- bad input ----------------------------------------------------------------------------


def test_simulate_unknown_agent(tmp_path):
    out = tmp_path / "never"
    run = cli("simulate", "--buyer", "tactic:nope", "--seller", "tactic:random", "--out", str(out), "--quiet")
    assert_one_line_error(run, "nope")
    assert not out.exists()


def test_simulate_bad_slice(tmp_path):
    run = cli(
        "simulate",
        "--scenarios-slice",
        "abc",
        "--buyer",
        "tactic:random",
        "--seller",
        "tactic:random",
        "--out",
        str(tmp_path / "x"),
        "--quiet",
    )
    assert_one_line_error(run, "abc")


def test_simulate_missing_scenarios_file(tmp_path):
    run = cli(
        "simulate",
        "--scenarios",
        "/nonexistent.json",
        "--buyer",
        "tactic:random",
        "--seller",
        "tactic:random",
        "--out",
        str(tmp_path / "x"),
        "--quiet",
    )
    assert_one_line_error(run, "/nonexistent.json")


def test_simulate_unknown_condition_is_an_argparse_error(tmp_path):
    run = cli(
        "simulate",
        "--conditions",
        "full,bogus",
        "--buyer",
        "tactic:random",
        "--seller",
        "tactic:random",
        "--out",
        str(tmp_path / "x"),
        "--quiet",
    )
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert "error:" in run.stderr and "--conditions" in run.stderr


def test_metrics_missing_file(tmp_path):
    assert_one_line_error(cli("metrics", str(tmp_path / "absent.csv")), "absent.csv")


def test_metrics_unreadable_files_and_empty_grouping(tmp_path, zeroshot):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert_one_line_error(cli("metrics", str(empty)), "empty.csv")
    garbage = tmp_path / "garbage.parquet"
    garbage.write_text("not parquet at all")
    assert_one_line_error(cli("metrics", str(garbage)), "garbage.parquet")
    assert_one_line_error(cli("metrics", str(zeroshot / "trials.csv"), "--by", ""), "group by")


def another_programs_database(db: Path) -> None:
    connection = sqlite3.connect(db)
    connection.execute("CREATE TABLE notes (text)")
    connection.commit()
    connection.close()


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda db: None, "there is no database file at"),
        (lambda db: db.write_text("hello, not a database\n" * 100), "file is not a database"),
        (another_programs_database, "is not a bargain arena database"),
    ],
    ids=["missing", "not-sqlite", "another-programs"],
)
def test_report_on_an_unusable_database(tmp_path, make, needle):
    db = tmp_path / "arena.db"
    make(db)
    before = db.read_bytes() if db.exists() else None
    run = cli("report", "--db", f"sqlite:///{db}", "--out", str(tmp_path / "report"))
    assert_one_line_error(run, needle, str(db), "--db")
    assert (db.read_bytes() if db.exists() else None) == before  # nothing created or added: a report only reads


# --- metrics ------------------------------------------------------------------------------

KEYS = {
    "transparency",
    "n",
    "deal_rate",
    "buyer_utility",
    "seller_utility",
    "buyer_norm_utility",
    "seller_norm_utility",
    "welfare",
    "seller_advantage",
    "nbs_deviation",
    "rounds",
}


def test_metrics_json(zeroshot, zeroshot_csv):
    cells = json.loads(ok("metrics", str(zeroshot / "trials.csv"), "--json").stdout)
    assert isinstance(cells, list) and len(cells) == 5
    assert [c["transparency"] for c in cells] == CONDITIONS + ["ALL"]
    for cell in cells:
        assert KEYS <= set(cell)
    frame = zeroshot_csv
    for cell in cells:
        group = frame if cell["transparency"] == "ALL" else frame[frame["transparency"] == cell["transparency"]]
        deal = group["deal"] == "deal"
        assert cell["n"] == len(group)
        assert cell["deal_rate"] == pytest.approx(deal.mean())
        assert cell["buyer_utility"] == pytest.approx(group["buyer_utility"].where(deal, 0).mean())
        assert cell["rounds"] == pytest.approx(group["rounds"].mean())
    pooled = cells[-1]
    assert isinstance(pooled["avg_norm_utility_per_agent"], float)
    nu = pd.concat([frame["buyer_norm_utility"], frame["seller_norm_utility"]])
    assert pooled["avg_norm_utility_per_agent"] == pytest.approx(nu.mean())
    assert "avg_honesty" in pooled and pooled["avg_honesty"] is None


def test_metrics_markdown(zeroshot):
    text = ok("metrics", str(zeroshot / "trials.csv")).stdout
    lines = text.splitlines()
    assert lines[0] == "# trials.csv"
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 2 + 5  # header, rule, 4 conditions, ALL
    assert "transparency" in table[0] and "deal_rate" in table[0]
    assert set(table[1]) <= set("|:-")
    assert [row.split("|")[1].strip() for row in table[2:]] == CONDITIONS + ["ALL"]


def test_metrics_parquet_equals_csv(zeroshot):
    from_csv = json.loads(ok("metrics", str(zeroshot / "trials.csv"), "--json").stdout)
    from_parquet = json.loads(ok("metrics", str(zeroshot / "trials.parquet"), "--json").stdout)
    assert len(from_parquet) == len(from_csv) == 5
    for a, b in zip(from_parquet, from_csv):
        assert set(a) == set(b)
        for key, value in b.items():
            if isinstance(value, float):
                assert a[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
            else:
                assert a[key] == value, key


def test_metrics_by_two_columns(zeroshot):
    cells = json.loads(ok("metrics", str(zeroshot / "trials.csv"), "--by", "transparency,max_rounds", "--json").stdout)
    assert [(c["transparency"], c["max_rounds"]) for c in cells] == [(c, 6) for c in CONDITIONS] + [("ALL", "ALL")]
    assert [c["n"] for c in cells] == [80, 80, 80, 80, 320]


# --- prompt -------------------------------------------------------------------------------

SELLER_PROMPT = (
    "You are the SELLER in a bargaining negotiation.\n"
    "\n"
    "Item: 1 kg of white rice\n"
    "Description: A kilogram of standard white rice, packaged for retail sale. White rice is a staple food "
    "commodity traded globally and found in supermarkets, grocery stores, and markets.\n"
    "\n"
    "Your persona: You are a market vendor selling rice sourced wholesale from a distributor. You aim to "
    "maintain competitive pricing with supermarkets while making a modest profit.\n"
    "Your reservation price: 1.22. You can always sell to the market at this price if the bargaining fails.\n"
    "You know the buyer's reservation price is 2.68.\n"
    "The buyer does not know your exact reservation price, their prior on your reservation price is ~ Uniform[1.2, 2.1].\n"
    "\n"
    "Output format:\n"
    "\n"
    "- Write 1-3 sentences describing your bargaining strategy. This will not be exposed to the other agent.\n"
    "- Then output a JSON dict inside a code block using triple backticks:\n"
    "\n"
    "```json\n"
    "{\n"
    '  "message": "your message to the other agent",\n'
    '  "action": "OFFER / NO_DEAL",\n'
    '  "offer_price": 123.45\n'
    "}\n"
    "```"
)
PROMPT_ARGS = (
    "prompt",
    "--scenario",
    "low:0",
    "--role",
    "seller",
    "--condition",
    "buyer_unaware",
    "--buyer-price",
    "2.68",
    "--seller-price",
    "1.22",
)


def test_prompt_is_the_protocol_example():
    assert ok(*PROMPT_ARGS).stdout == SELLER_PROMPT + "\n"


def test_prompt_paper_eval_version():
    expected = SELLER_PROMPT.replace(
        "- Write 1-3 sentences describing your bargaining strategy. This will not be exposed to the other agent.",
        "- Write 1\u20133 sentences of describing your barganing strategy. This will not be exposed to the other agent",
    ).replace('  "offer_price": 123.45\n', '  "offer_price": 123.45   # only required if action is OFFER\n')
    assert expected != SELLER_PROMPT
    assert ok(*PROMPT_ARGS, "--version", "paper-eval").stdout == expected + "\n"


def test_prompt_sequential_mode():
    expected = SELLER_PROMPT.replace('"action": "OFFER / NO_DEAL",', '"action": "OFFER / DEAL / NO_DEAL",')
    assert ok(*PROMPT_ARGS, "--mode", "sequential").stdout == expected + "\n"


def test_prompt_bad_scenario():
    """As a program: the one-line error and the exit status 2 the interpreter gives."""
    run = program("prompt", "--scenario", "low:99999", "--role", "seller", "--condition", "full")
    assert_one_line_error(run, "low:99999")


# --- parse --------------------------------------------------------------------------------


def reply(price: object) -> str:
    block = json.dumps({"message": "I can do it.", "action": "OFFER", "offer_price": price})
    return f"Start high and concede slowly.\n\n```json\n{block}\n```"


def test_parse_valid_reply():
    data = json.loads(ok("parse", stdin=reply(2.5)).stdout)
    assert set(data) == {"thought", "message", "action", "offer_price"}
    assert data == {
        "thought": "Start high and concede slowly.",
        "message": "I can do it.",
        "action": "OFFER",
        "offer_price": 2.5,
    }


def test_parse_invalid_reply():
    run = ok("parse", stdin="I refuse to use the format. OFFER 2.5")
    data = json.loads(run.stdout)
    assert data["action"] == "INVALID" and data["offer_price"] is None
    assert "INVALID" in run.stderr


def test_parse_currency_string_strict_vs_lenient():
    strict = json.loads(ok("parse", stdin=reply("$1,200.50")).stdout)
    assert strict["action"] == "INVALID" and strict["message"] == "I can do it."
    lenient = json.loads(ok("parse", "--lenient", stdin=reply("$1,200.50")).stdout)
    assert lenient["action"] == "OFFER" and lenient["offer_price"] == 1200.5


# --- start-up and help ----------------------------------------------------------------------


def test_help_as_a_program():
    run = program("--help")
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert run.stdout.startswith("usage: bargain ")
    commands = ("simulate", "evaluate", "arms", "serve", "metrics", "prompt", "judge", "report", "claims", "parse")
    assert all(command in run.stdout for command in commands)


LIGHT_COMMANDS = [
    (["--help"], None),
    (list(PROMPT_ARGS), None),
    (["parse"], reply(2.5)),
    (["claims", "--role", "seller", "--reservation", "1.85"], "It cost me 2.40."),
    (["arms", "--help"], None),
]
HEAVY = ("pandas", "numpy", "scipy", "sqlalchemy", "asyncio", "torch", "transformers")


@pytest.mark.parametrize("argv, stdin", LIGHT_COMMANDS, ids=[" ".join(argv[:2]) for argv, _ in LIGHT_COMMANDS])
def test_light_commands_load_no_heavy_library(argv, stdin):
    """What every command imports is paid by every start: pandas, SciPy, SQLAlchemy (and asyncio) load
    only in the commands that use them (benchmarks/startup.py times these)."""
    code = (
        "import sys\nfrom bargain.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=60
    )
    assert run.stderr.strip().splitlines()[-1] == "LOADED []", run.stderr


def test_the_arenas_help_and_flag_errors_load_neither_gradio_nor_the_database():
    """`python app.py --help` reads the flags before anything heavy loads (it took 4.5 s; benchmarks/startup.py)."""
    code = (
        "import sys, runpy\nsys.argv = ['app.py', *sys.argv[1:]]\ntry:\n    runpy.run_path('app.py', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        f"print('LOADED', sorted(m for m in {HEAVY + ('gradio', 'sqlalchemy')!r} if m in sys.modules), file=sys.stderr)"
    )
    for argv in (["--help"], ["--max-reply-tokens", "0"]):
        run = subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert run.stderr.strip().splitlines()[-1] == "LOADED []", run.stderr
    assert (
        "--max-reply-tokens"
        in subprocess.run(
            [sys.executable, "app.py", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
        ).stdout
    )


def test_in_process_runs_capture_the_progress_bar(tmp_path, capfd):
    run = ok(
        "simulate",
        "--grid",
        "paper-rl-test",
        "--trials",
        "1",
        "--buyer",
        "tactic:linear",
        "--seller",
        "tactic:linear",
        "--out",
        str(tmp_path),
    )
    assert "32/32" in run.stderr
    assert capfd.readouterr() == ("", "")  # nothing written past the runner onto the test's own streams


def test_in_process_runs_give_a_crash_as_the_interpreter_does():
    def crash(argv: list[str]) -> int:
        raise RuntimeError(f"crashed on {argv}")

    run = run_main(crash, "x")
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith("Traceback (most recent call last):")
    assert run.stderr.rstrip().endswith("RuntimeError: crashed on ['x']")


def test_every_flag_of_every_command_is_documented():
    from bargain.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    undocumented = [
        (name, action.dest)
        for name, sub in commands.items()
        for action in sub._actions
        if not action.help and not isinstance(action, argparse._HelpAction)
    ]
    assert undocumented == []
