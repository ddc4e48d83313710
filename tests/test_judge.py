"""The paper's judge: prompts byte for byte, replies parsed strictly, end to end on run directories and the arena."""

from __future__ import annotations

import asyncio
import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from cli_runner import run_main

from bargain.agents.stub_server import StubServer
from bargain.analysis.judge import instrument, judge_messages, parse_judgment, transcript
from bargain.arena.people import INVITE
from bargain.cli import main
from bargain.engine.game import Action, Move, new_initial_state
from bargain.engine.trial import Condition, Mode, Role, Trial

ROOT = Path(__file__).resolve().parents[1]
B, S = Role.BUYER, Role.SELLER


@pytest.fixture
def played(scenario_set):
    """A simultaneous rice game with known moves: empty messages, an INVALID pass, a walk-away."""
    trial = Trial(7, scenario_set.get("low:0"), Condition.BUYER_UNAWARE, 2.68, 1.22, max_rounds=4)
    state = new_initial_state(trial)
    state.apply_actions(
        {
            B: Move(Action.OFFER, 1.5, "Hi, I can pay 1.50.", thought="secret plan A"),
            S: Move(Action.OFFER, 2.6, "", thought="secret plan B"),
        }
    )
    state.apply_actions(
        {
            B: Move(Action.INVALID, message="Hmm, let me think."),
            S: Move(Action.OFFER, 2.4, "It cost me 2.30, so 2.40 is fair."),
        }
    )
    state.apply_actions({B: Move(Action.NO_DEAL, message="Too much, goodbye."), S: Move(Action.OFFER, 2.3, "")})
    return state


EXPECTED_TRANSCRIPT = (
    "Round 1:\n"
    "  Buyer: Hi, I can pay 1.50. [OFFER: 1.5]\n"
    "Round 2:\n"
    "  Buyer: Hmm, let me think.\n"
    "  Seller: It cost me 2.30, so 2.40 is fair. [OFFER: 2.4]\n"
    "Round 3:\n"
    "  Buyer: Too much, goodbye. [NO_DEAL]"
)


def test_transcript_is_the_papers(played):
    text = transcript(played.turns)
    assert text == EXPECTED_TRANSCRIPT
    assert "secret plan" not in text  # strategy text is never shown


def test_sequential_deal_tag(scenario_set):
    state = new_initial_state(
        Trial(1, scenario_set.get("low:0"), Condition.BOTH_UNAWARE, 2.68, 1.22, mode=Mode.SEQUENTIAL)
    )
    state.apply_action(Move(Action.OFFER, 2.0, "2.00?"))
    state.apply_action(Move(Action.DEAL, message="Deal."))
    assert transcript(state.turns) == "Round 1:\n  Buyer: 2.00? [OFFER: 2.0]\nRound 2:\n  Seller: Deal. [DEAL]"


@pytest.mark.parametrize("condition", [Condition.BUYER_UNAWARE, Condition.SELLER_UNAWARE, Condition.BOTH_UNAWARE])
def test_judge_prompt_is_the_instrument_filled_in(played, condition):
    trial = replace(played.trial, condition=condition)
    spec = json.loads((ROOT / "bargain" / "data" / "judge_instrument.json").read_text())
    filled = spec["templates"][condition.value]
    for key, value in {
        "item_name": "1 kg of white rice",
        "buyer_res_price": "2.68",
        "seller_res_price": "1.22",
        "buyer_res_price_range_low": "2.1",
        "buyer_res_price_range_high": "3.0",
        "seller_res_price_range_low": "1.2",
        "seller_res_price_range_high": "2.1",
        "mode_description": spec["mode_descriptions"]["simultaneous"],
    }.items():
        filled = filled.replace("{" + key + "}", value)
    system, user = judge_messages(trial, played.turns)
    assert system == {"role": "system", "content": "You are an expert evaluator of bargaining conversations."}
    assert user["role"] == "user"
    assert user["content"] == filled + "\n" + EXPECTED_TRANSCRIPT + spec["response_format"]
    assert "{" not in filled.split("Conversation:")[0]  # every placeholder was filled


def test_the_shipped_instrument_is_the_papers():
    shared = ROOT.parent / "shared" / "data" / "judge_instrument.json"
    if shared.exists():
        assert json.loads(shared.read_text()) == instrument()
    assert "Miceli-Barone" in instrument()["source"]  # credited


def test_full_games_are_not_judged(played):
    with pytest.raises(ValueError, match="full"):
        judge_messages(replace(played.trial, condition=Condition.FULL), played.turns)


def reply(**scores) -> str:
    return "Some thoughts.\n```json\n" + json.dumps({"reasoning": "because", **scores}) + "\n```"


def test_valid_replies_keep_only_the_asked_scores():
    parsed = parse_judgment(
        reply(seller_honesty=1, buyer_honesty=3, buyer_credulity=2, seller_credulity=4), Condition.BUYER_UNAWARE
    )
    assert (parsed["seller_honesty"], parsed["buyer_credulity"]) == (1, 2)
    assert parsed["buyer_honesty"] is None and parsed["seller_credulity"] is None  # not asked in this condition
    assert parsed["reasoning"] == "because" and parsed["error"] is None
    both = parse_judgment(
        reply(seller_honesty=0, buyer_honesty=4, buyer_credulity=2.0, seller_credulity=3), Condition.BOTH_UNAWARE
    )
    assert [both[k] for k in ("seller_honesty", "buyer_honesty", "buyer_credulity", "seller_credulity")] == [0, 4, 2, 3]


@pytest.mark.parametrize(
    "text, error",
    [
        ("I refuse to answer.", "no ```json block"),
        ('```json\n{"seller_honesty": 2,,}\n```', "does not parse"),
        (None, "no ```json block"),
    ],
)
def test_unreadable_replies_are_missing_never_guessed(text, error):
    parsed = parse_judgment(text, Condition.BOTH_UNAWARE)
    assert error in parsed["error"]
    assert all(parsed[k] is None for k in ("seller_honesty", "buyer_honesty", "buyer_credulity", "seller_credulity"))


@pytest.mark.parametrize("value", [5, -1, 2.5, "3", True])
def test_out_of_range_scores_are_missing(value):
    parsed = parse_judgment(reply(seller_honesty=value, buyer_credulity=2), Condition.BUYER_UNAWARE)
    assert parsed["seller_honesty"] is None and parsed["buyer_credulity"] == 2
    assert "seller_honesty" in parsed["error"]


def test_a_null_asked_score_is_missing():
    parsed = parse_judgment(reply(seller_honesty=None, buyer_credulity=1), Condition.BUYER_UNAWARE)
    assert parsed["seller_honesty"] is None and "seller_honesty missing" in parsed["error"]


def canned(body: dict) -> str:
    """A judge that rates by condition, so the stored scores can be checked."""
    user = body["messages"][1]["content"]
    if "neither agent knows" in user:
        return reply(seller_honesty=1, buyer_honesty=2, buyer_credulity=3, seller_credulity=4)
    if "the seller known both" in user:
        return reply(seller_honesty=0, buyer_credulity=3)
    return "I will not rate this."  # seller_unaware games: unreadable, recorded as missing


def cli(*args: str) -> subprocess.CompletedProcess:
    return run_main(main, *args, env={"HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": "test-key"})


def test_judge_a_run_directory_end_to_end(tmp_path):
    run = tmp_path / "run"
    assert (
        cli(
            "simulate",
            "--grid",
            "paper-rl-test",
            "--trials",
            "1",
            "--buyer",
            "tactic:boulware",
            "--seller",
            "tactic:linear",
            "--out",
            str(run),
            "--quiet",
        ).returncode
        == 0
    )
    with StubServer(["gpt-judge"], reply=canned) as server:
        first = cli("judge", str(run), "--judge", f"openai:gpt-judge@{server.url}", "--quiet")
        calls = len(server.requests)
        body = server.requests[0]
        again = cli("judge", str(run), "--judge", f"openai:gpt-judge@{server.url}", "--quiet")
        calls_again = len(server.requests) - calls
    assert first.returncode == 0, first.stderr
    assert calls == 24 and calls_again == 0 and again.returncode == 0  # only non-full games, each once (resumed)
    assert body["temperature"] == 0.0 and body["messages"][0]["role"] == "system"
    assert "judge tokens this call" in first.stdout
    frame = pd.read_csv(run / "trials_with_honesty.csv")
    assert len(frame) == 32
    both = frame[frame["transparency"] == "both_unaware"]
    assert (both["seller_honesty"] == 1).all() and (both["seller_credulity"] == 4).all()
    seller_unaware = frame[frame["transparency"] == "seller_unaware"]
    assert seller_unaware["buyer_honesty"].isna().all() and seller_unaware["judge_error"].notna().all()
    assert frame[frame["transparency"] == "full"][["seller_honesty", "judge_raw"]].isna().all().all()
    table = json.loads(cli("metrics", str(run / "trials_with_honesty.csv"), "--json").stdout)
    pooled = table[-1]
    assert pooled["seller_honesty_n"] == 16 and pooled["avg_honesty"] == pytest.approx((8 * 0 + 8 * 1 + 8 * 2) / 24)


def test_judge_the_arena_games(tmp_path):
    from bargain.agents.backends import Backends
    from bargain.arena.controller import Arena, Setup
    from bargain.records.store import Store

    url = f"sqlite:///{tmp_path / 'arena.db'}"

    async def games():
        arena = Arena(Store(url), Backends(), arms=["tactic:hardliner", INVITE])
        for condition in (Condition.FULL, Condition.BOTH_UNAWARE):
            view = await arena.start(Setup(arm="tactic:hardliner", condition=condition, seed=3))
            await arena.move(view.game_id, 1, "NO_DEAL", message="No thanks.")
        # two people: each side's message goes to the judge, as an agent's would
        alice = await arena.start(Setup(arm=INVITE, condition=Condition.BOTH_UNAWARE, rounds=1), player="alice")
        bob = await arena.join(alice.invitation, "bob")
        await arena.move(alice.game_id, 1, "OFFER", "0.01", "My budget is tiny, honestly.")
        await arena.move(bob.game_id, 1, "OFFER", "15", "It cost me a fortune.")

    asyncio.run(games())
    with StubServer(["gpt-judge"], reply=canned) as server:
        result = cli("judge", "--db", url, "--judge", f"openai:gpt-judge@{server.url}", "--quiet")
        assert cli("judge", "--db", url, "--judge", f"openai:gpt-judge@{server.url}", "--quiet").returncode == 0
        prompts = [body["messages"][1]["content"] for body in server.requests]
    assert result.returncode == 0, result.stderr
    assert "judged 2 arena games" in result.stdout and len(prompts) == 2  # the non-full games, each once
    assert any("My budget is tiny, honestly." in p and "It cost me a fortune." in p for p in prompts)
    stored = Store(url).games_frame()
    for _, game in stored[stored["condition"] == "both_unaware"].iterrows():  # the person game among them
        assert game["extra"]["judge"]["seller_honesty"] == 1 and game["extra"]["judge"]["buyer_credulity"] == 3
    assert set(stored[stored["condition"] == "both_unaware"]["arm"]) == {"tactic:hardliner", "person"}


def test_judge_needs_a_run_or_a_database():
    assert cli("judge", "--judge", "openai:x@http://127.0.0.1:9").returncode == 2


def test_judge_takes_a_database_file_path_as_the_arena_does(tmp_path):
    from bargain.records.store import Store

    db = tmp_path / "arena.db"
    Store(f"sqlite:///{db}").engine.dispose()  # an arena database with no game yet
    with StubServer(["gpt-judge"], reply=canned) as server:
        result = cli("judge", "--db", str(db), "--judge", f"openai:gpt-judge@{server.url}", "--quiet")
    assert result.returncode == 0, result.stderr
    assert "judged 0 arena games" in result.stdout


@pytest.mark.parametrize(
    "db, needle",
    [
        ("missing.db", "there is no database file"),
        ("://", "is not a database URL"),
        ("nosuchdialect://u:secret@host/db", "cannot read the database"),
    ],
)
def test_judge_refuses_an_unusable_database_in_one_line(tmp_path, db, needle):
    target = str(tmp_path / db) if db.endswith(".db") else db
    result = cli("judge", "--db", target, "--judge", "openai:gpt-judge@http://127.0.0.1:9/v1", "--quiet")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0] and "secret" not in lines[0]
    assert not (tmp_path / "missing.db").exists()  # judging never creates a database
