"""A participant's way through a study (bargain.study.flow), driven as the page drives it, without Gradio:
consent to completion code, declining, screening out, a full study, bad answers, double submissions,
timeouts and their payment rule, blinding."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import textwrap
import time

import pandas as pd
import pytest

from bargain.agents.backends import Backends
from bargain.arena.controller import Arena
from bargain.records.store import Store
from bargain.study import records
from bargain.study.config import (
    EXAMPLE,
    Exclusion,
    ExclusionRule,
    ParticipantId,
    StudyError,
    Timing,
    load,
    participant_code,
)
from bargain.study.export import export_study
from bargain.study.flow import StudyRunner, StudyStop

STUDY = """
name: flow-test
version: 1
arms:
  a: {spec: "tactic:hardliner", label: the other party}
  b: {spec: "tactic:linear", label: the other party}
cells: {arms: [a, b], conditions: [both_unaware], roles: [buyer]}
rounds: 2
scenarios: {tier: low}
games_per_participant: 2
design: {assignment: within, quota_per_cell: QUOTA, order: fixed}
texts: {consent: consent.md, instructions: instructions.md, debrief: debrief.md, consent_version: "v7"}
comprehension:
  attempts: 2
  questions:
    - {id: no_deal, text: "No deal pays?", options: [Nothing, Everything], answer: Nothing}
attention_checks:
  - {id: attention, text: "Choose Rarely", options: [Never, Rarely], answer: Rarely, after_game: 2}
surveys:
  per_game:
    - builtin: honesty
    - builtin: person_or_program
    - {id: satisfied, type: likert, text: "Satisfied?", scale: [1, 5], anchors: ["Not at all", "Very"]}
  final:
    - {id: comments, type: text, text: "Anything else?", required: false}
timing: {move_seconds: 60, idle_minutes: 20}
payment:
  currency: GBP
  base: 2.0
  bonus: {per_unit: 1.5, cap: 2.0}
  timeout_rule: no_bonus_for_timed_out_games
completion: {code: DONE123, screened_out_code: OUT456, redirect_url: "https://example.org/done?cc={code}",
             declined_message: "You chose not to take part."}
exclusions:
  - failed_attention_checks_over: 0
participant_id: {id_pattern: "[A-Za-z0-9_-]{1,64}"}  # short ids such as P1 under PROLIFIC_PID too
"""


def make_study(tmp_path, quota: int = 10):
    for name, text in (
        ("consent.md", "We record your moves."),
        ("instructions.md", "Bargain well."),
        ("debrief.md", "The other party was a program."),
    ):
        (tmp_path / name).write_text(text)
    (tmp_path / "study.yaml").write_text(textwrap.dedent(STUDY).replace("QUOTA", str(quota)))
    return load(tmp_path / "study.yaml")


def runner_for(tmp_path, study=None) -> StudyRunner:
    arena = Arena(Store(f"sqlite:///{tmp_path / 'study.db'}"), Backends(), arms=["tactic:hardliner", "tactic:linear"])
    return StudyRunner(study or make_study(tmp_path), arena)


def answers_for(items: list[dict], **chosen) -> dict:
    """Answers to a survey page's items: the first option of each choice, the middle of each scale, unless chosen."""
    out = {}
    for item in items:
        if item["id"] in chosen:
            out[item["id"]] = chosen[item["id"]]
        elif item["type"] == "choice":
            out[item["id"]] = item["options"][0]
        elif item["type"] == "likert":
            out[item["id"]] = (item["scale"][0] + item["scale"][1]) // 2
    return out


async def play_game(runner: StudyRunner, params: dict, page: dict, pages: list) -> dict:
    while page.stage == "game":
        view = page.view
        page = await runner.submit(
            params,
            "game",
            {"round": view.round, "action": "OFFER", "price": f"{view.your_price * 0.5:.2f}", "message": "hi"},
        )
        pages.append(page)
    return page


def test_a_participant_goes_from_consent_to_the_completion_code(tmp_path):
    async def scenario():
        runner = runner_for(tmp_path)
        params = {"PROLIFIC_PID": "P1", "STUDY_ID": "S9", "SESSION_ID": "X1"}
        pages = [await runner.page(params)]
        assert pages[0].stage == "consent" and pages[0].text == "We record your moves."
        pages.append(await runner.submit(params, "consent", {"agree": True}))
        assert pages[-1].stage == "instructions"
        pages.append(await runner.submit(params, "instructions", {}))
        assert pages[-1].stage == "comprehension" and "answer" not in json.dumps(pages[-1].questions)
        pages.append(await runner.submit(params, "comprehension", {"no_deal": "Nothing"}))
        assert pages[-1].stage == "game" and pages[-1].game == 1 and pages[-1].opponent == "the other party"
        for game in (1, 2):
            page = await play_game(runner, params, pages[-1], pages)
            assert page.stage == "game_survey" and page.game == game and page.outcome is not None
            ids = [item["id"] for item in page.items]
            assert ids == ["honesty", "person_or_program", "satisfied"] + (["attention"] if game == 2 else [])
            assert len(page.items[0]["options"]) == 5  # the judge's rubric, levels 0-4
            pages.append(await runner.submit(params, "game_survey", answers_for(page.items, attention="Rarely")))
        assert pages[-1].stage == "final_survey"
        pages.append(await runner.submit(params, "final_survey", {"comments": "  fine  "}))
        assert pages[-1].stage == "debrief" and len(pages[-1].debriefs) == 2
        assert all(d["agent_price"] > 0 for d in pages[-1].debriefs)
        pages.append(await runner.submit(params, "debrief", {}))
        done = pages[-1]
        assert done.stage == "completed" and done.code == "DONE123"
        assert done.redirect == "https://example.org/done?cc=DONE123"
        # Blinding: before the debrief no page names an arm, a tactic or a spec, and no game view has a debrief.
        before = json.dumps([p.to_json() for p in pages if p.stage != "debrief"])
        assert not any(word in before for word in ("tactic:", "hardliner", "linear", "arm:", '"a/', "b/both"))
        assert all(p.view.debrief is None for p in pages if p.stage == "game")
        store = runner.arena.store
        row = records.participant(store, "flow-test", "P1")
        assert (
            row["stage"] == "completed"
            and row["consent_version"] == "v7"
            and row["source"] == {"STUDY_ID": "S9", "SESSION_ID": "X1"}
        )
        assert row["cells"] == ["a/both_unaware/buyer", "b/both_unaware/buyer"]  # fixed order
        games = [store.game(g) for g in row["games"]]
        assert [(g["arm"], g["study"], g["participant"]) for g in games] == [
            ("tactic:hardliner", "flow-test", "P1"),
            ("tactic:linear", "flow-test", "P1"),
        ]
        utilities = [g["buyer_norm_utility"] for g in games]
        assert row["bonus"] == round(max(0.0, min(1.5 * sum(utilities), 2.0)), 2)  # the payment rule by hand
        assert row["excluded"] is False and row["attention_failures"] == 0
        stored = records.answers(store, row["id"])
        assert ("final", 0, "comments", "fine") in [(a["survey"], a["game"], a["item"], a["value"]) for a in stored]
        assert [a["correct"] for a in stored if a["survey"] == "attention"] == [True]
        # A finished participant cannot play again: the same link shows the code.
        assert (await runner.page(params)).stage == "completed"

    asyncio.run(scenario())


def test_declining_consent_ends_politely(tmp_path):
    async def scenario():
        runner = runner_for(tmp_path)
        page = await runner.submit({"participant": "P2"}, "consent", {"agree": False})
        assert page.stage == "declined" and page.text == "You chose not to take part."
        row = records.participant(runner.arena.store, "flow-test", "P2")
        assert row["stage"] == "declined" and row["cells"] == [] and row["consent_version"] is None

    asyncio.run(scenario())


def test_failing_the_comprehension_check_screens_out_with_the_code(tmp_path):
    async def scenario():
        runner = runner_for(tmp_path)
        params = {"participant": "P3"}
        await runner.submit(params, "consent", {"agree": True})
        await runner.submit(params, "instructions", {})
        page = await runner.submit(params, "comprehension", {"no_deal": "Everything"})
        assert page.stage == "comprehension" and "1 attempt left." in page.note
        page = await runner.submit(params, "comprehension", {"no_deal": "Everything"})
        assert page.stage == "screened_out" and page.code == "OUT456"
        assert records.cell_counts(runner.arena.store, "flow-test", 1) == {
            "a/both_unaware/buyer": (0, 10),
            "b/both_unaware/buyer": (0, 10),
        }

    asyncio.run(scenario())


def test_bad_ids_answers_and_double_submissions_change_nothing(tmp_path):
    async def scenario():
        runner = runner_for(tmp_path)
        with pytest.raises(StudyStop, match="no participant id"):
            await runner.page({})
        with pytest.raises(StudyStop, match="not valid"):
            await runner.page({"PROLIFIC_PID": "x" * 65})
        with pytest.raises(StudyStop, match="not valid"):
            await runner.page({"PROLIFIC_PID": "a b"})
        params = {"participant": "P4"}
        await runner.submit(params, "consent", {"agree": True})
        again = await runner.submit(params, "consent", {"agree": False})  # a second tab's stale consent page
        assert again.stage == "instructions" and "already taken" in again.note
        await runner.submit(params, "instructions", {})
        page = await runner.submit(params, "comprehension", {"no_deal": "Maybe"})
        assert page.stage == "comprehension" and page.errors == {"no_deal": "Choose one of the options."}
        page = await runner.submit(params, "comprehension", {"no_deal": "Nothing"})
        page = await play_game(runner, params, page, [])
        bad = await runner.submit(params, "game_survey", {"honesty": "5", "person_or_program": "robot", "satisfied": 9})
        assert bad.stage == "game_survey" and set(bad.errors) == {"honesty", "person_or_program", "satisfied"}
        row = records.participant(runner.arena.store, "flow-test", "P4")
        assert records.answers(runner.arena.store, row["id"])[-1]["survey"] == "comprehension"  # nothing half-stored

    asyncio.run(scenario())


def test_a_full_study_turns_newcomers_away(tmp_path):
    async def scenario():
        runner = runner_for(tmp_path, make_study(tmp_path, quota=2))
        stages = []
        for n in range(3):
            params = {"participant": f"Q{n}"}
            await runner.submit(params, "consent", {"agree": True})
            await runner.submit(params, "instructions", {})
            stages.append((await runner.submit(params, "comprehension", {"no_deal": "Nothing"})).stage)
        assert stages == ["game", "game", "full"]
        assert records.cell_counts(runner.arena.store, "flow-test", 1) == {
            "a/both_unaware/buyer": (2, 2),
            "b/both_unaware/buyer": (2, 2),
        }

    asyncio.run(scenario())


def test_moves_not_made_in_time_are_passes_and_earn_no_bonus(tmp_path):
    async def scenario():
        study = dataclasses.replace(make_study(tmp_path), timing=Timing(move_seconds=0.2, idle_minutes=20))
        runner = runner_for(tmp_path, study)
        params = {"participant": "P5"}
        await runner.submit(params, "consent", {"agree": True})
        await runner.submit(params, "instructions", {})
        page = await runner.submit(params, "comprehension", {"no_deal": "Nothing"})
        assert page.stage == "game"
        await asyncio.sleep(0.7)  # both rounds of game 1 pass without a move
        page = await runner.page(params)
        assert page.stage == "game_survey"
        row = records.participant(runner.arena.store, "flow-test", "P5")
        assert row["timeouts"] == 2

    asyncio.run(scenario())


async def complete(runner: StudyRunner, params: dict, action: str = "OFFER") -> dict:
    """A participant through the whole study, making `action` at each move (OFFER: half their price); the last page."""
    await runner.submit(params, "consent", {"agree": True})
    await runner.submit(params, "instructions", {})
    page = await runner.submit(params, "comprehension", {"no_deal": "Nothing"})
    while page.stage in ("game", "game_survey"):
        if page.stage == "game_survey":
            page = await runner.submit(params, "game_survey", answers_for(page.items, attention="Rarely"))
        elif action == "OFFER":
            page = await play_game(runner, params, page, [])
        else:
            page = await runner.submit(params, "game", {"round": page.view.round, "action": action})
    await runner.submit(params, "final_survey", {})
    return await runner.submit(params, "debrief", {})


def test_a_prolific_id_must_have_prolifics_form_by_default(tmp_path):
    async def scenario():
        runner = runner_for(tmp_path, dataclasses.replace(make_study(tmp_path), participant_id=ParticipantId()))
        for wrong in ("P1", "bench00001", "60ffe5c8371090c7041d43f"):
            with pytest.raises(StudyStop, match="not valid"):
                await runner.page({"PROLIFIC_PID": wrong})
        assert (await runner.page({"PROLIFIC_PID": "60ffe5c8371090c7041d43f8"})).stage == "consent"
        assert (await runner.page({"participant": "P1"})).stage == "consent"  # the generic parameter stays loose
        assert records.participant(runner.arena.store, "flow-test", "P1") is not None

    asyncio.run(scenario())


def test_games_not_actually_played_flag_the_participant_who_still_completes_and_is_paid(tmp_path):
    rules = (
        Exclusion(ExclusionRule.MOVES_PER_GAME_UNDER, 2),
        Exclusion(ExclusionRule.SECONDS_PER_GAME_UNDER, 3600),
        Exclusion(ExclusionRule.FIRST_ROUND_WALKAWAYS_OVER, 0),
    )

    async def scenario():
        runner = runner_for(tmp_path, dataclasses.replace(make_study(tmp_path), exclusions=rules))
        walked = await complete(runner, {"participant": "WALK"}, action="NO_DEAL")
        played = await complete(runner, {"participant": "PLAY"})
        assert walked.stage == played.stage == "completed" and walked.code == "DONE123"
        return runner.arena.store

    store = asyncio.run(scenario())
    walker, player = (records.participant(store, "flow-test", pid) for pid in ("WALK", "PLAY"))
    games = [store.game(game_id) for game_id in walker["games"]]
    assert all(
        [(m["round"], m["action"]) for m in g["moves"] if m["actor"] == "human"] == [(1, "NO_DEAL")] for g in games
    )
    assert walker["excluded"] and walker["exclusion_reasons"] == [
        "moves_per_game_under 2",
        "seconds_per_game_under 3600",
        "first_round_walkaways_over 0",
    ]
    assert player["excluded"] and "seconds_per_game_under 3600" in player["exclusion_reasons"]
    assert "first_round_walkaways_over 0" not in player["exclusion_reasons"]
    assert walker["bonus"] == 0.0  # no deal: no bonus, but the base is paid (they completed)
    export_study(store, "flow-test", out_dir=tmp_path / "out", hashed=False)
    people = pd.read_csv(tmp_path / "out" / "participants.csv").set_index("participant")
    assert people.loc["WALK", "exclusion_reasons"] == (
        "moves_per_game_under 2;seconds_per_game_under 3600;first_round_walkaways_over 0"
    )
    paid = pd.read_csv(tmp_path / "out" / "payment" / "payments.csv")
    assert set(paid["participant_id"]) == {"WALK", "PLAY"} and set(paid["base"]) == {2.0}


def test_per_participant_completion_codes_are_shown_sent_back_and_exported_for_payment(tmp_path):
    async def scenario():
        study = make_study(tmp_path)
        own_codes = dataclasses.replace(study.completion, per_participant_codes=True)
        study = dataclasses.replace(study, completion=own_codes)
        runner = runner_for(tmp_path, study)
        return runner, [await complete(runner, {"participant": pid}) for pid in ("C1", "C2")]

    runner, pages = asyncio.run(scenario())
    store = runner.arena.store
    salt = records.study_salt(store, "flow-test", 1)
    codes = [participant_code(salt, pid) for pid in ("C1", "C2")]
    assert [page.code for page in pages] == codes and codes[0] != codes[1] and "DONE123" not in codes
    assert [page.redirect for page in pages] == [f"https://example.org/done?cc={code}" for code in codes]
    assert asyncio.run(runner.page({"participant": "C1"})).code == codes[0]  # the same code when they come back
    export_study(store, "flow-test", out_dir=tmp_path / "out")
    paid = pd.read_csv(tmp_path / "out" / "payment" / "payments.csv")
    assert dict(zip(paid["participant_id"], paid["completion_code"])) == dict(zip(("C1", "C2"), codes))


def test_one_browser_under_two_ids_is_flagged_for_the_researcher(tmp_path):
    """A screened-out participant who comes back under a made-up id from the same browser: both ids are flagged in
    the dashboard and the export (kept, not refused: people share computers); an id from another browser is not."""
    from bargain.study import dashboard
    from bargain.study.export import export_study

    async def scenario():
        runner = runner_for(tmp_path)
        await runner.page({"participant": "FIRST"}, browser="a" * 32)
        await runner.submit({"participant": "FIRST"}, "consent", {"agree": True})
        await runner.page({"participant": "FIRSTb"}, browser="a" * 32)
        await runner.page({"participant": "OTHER"}, browser="b" * 32)
        await runner.page({"participant": "FIRST"}, browser="c" * 32)  # the first browser seen is the one kept
        return runner.arena.store

    store = asyncio.run(scenario())
    flagged = dashboard.same_browser(store, "flow-test", 1)
    assert dict(zip(flagged["participant"], flagged["other_ids_from_this_browser"])) == {"FIRST": 1, "FIRSTb": 1}
    export_study(store, "flow-test", out_dir=tmp_path / "out", hashed=False)
    table = pd.read_csv(tmp_path / "out" / "participants.csv")
    assert dict(zip(table["participant"], table["browser_shared_with"])) == {"FIRST": 1, "FIRSTb": 1, "OTHER": 0}


def test_the_admins_game_list_names_every_game_apart(tmp_path):
    from bargain.study import dashboard

    async def scenario():
        runner = runner_for(tmp_path)
        page = await runner.submit({"participant": "L1"}, "consent", {"agree": True})
        await runner.submit({"participant": "L1"}, "instructions", {})
        page = await runner.submit({"participant": "L1"}, "comprehension", {"no_deal": "Nothing"})
        page = await play_game(runner, {"participant": "L1"}, page, [])
        await runner.submit({"participant": "L1"}, "game_survey", answers_for(page.items))  # game 2 starts, same minute
        return runner.arena.store

    games = dashboard.recent_games(asyncio.run(scenario()), "flow-test")
    labels = [dashboard.game_label(g) for g in games.itertuples()]
    assert (
        len(labels) == 2
        and len(set(labels)) == 2
        and {"L1 game 1", "L1 game 2"} <= {" ".join(label.split()[2:5]) for label in labels}
    )


def test_a_study_file_with_a_problem_leaves_no_database_behind(tmp_path):
    from bargain import app as arena_app
    from bargain.study.config import StudyError

    (tmp_path / "study.yaml").write_text("name: x\nversion: 1\n")
    with pytest.raises(StudyError):
        arena_app.build(
            arena_app.parse_args(["--db", str(tmp_path / "data" / "arena.db"), "--study", str(tmp_path / "study.yaml")])
        )
    assert not (tmp_path / "data").exists()


def test_a_study_with_model_arms_and_no_model_backend_is_refused_in_one_line_before_any_file_is_made(
    tmp_path, monkeypatch, capsys
):
    from bargain import app as arena_app

    for name in ("BARGAIN_BACKEND", "BARGAIN_DB_URL", "BARGAIN_DATA_DIR", "BARGAIN_REMOTE_MODELS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as refused:
        arena_app.main(["--study", "example"])
    message = str(refused.value.code)
    assert message.startswith("error: the study's arms arm:base, arm:seller-grpo need a model backend")
    assert "--backend vllm --base-url URL" in message and "\n" not in message
    assert list(tmp_path.iterdir()) == []  # no database, no data folder


def test_a_study_with_a_remote_model_not_offered_is_refused_before_any_file_is_made(tmp_path):
    from bargain import app as arena_app
    from bargain.agents.arms import ArmError

    remote = "openai:gpt-x@https://models.example/v1"
    study = tmp_path / "study" / "example.yaml"  # beside the texts it names
    shutil.copytree(EXAMPLE.parent / "example", study.parent / "example")
    study.write_text(EXAMPLE.read_text(encoding="utf-8").replace("spec: arm:base ", f"spec: {remote} "))
    args = ["--db", str(tmp_path / "data" / "arena.db"), "--study", str(study), "--backend", "hf"]
    with pytest.raises(ArmError, match=f"the study's arms {remote} are remote models this app does not offer"):
        arena_app.build(arena_app.parse_args(args))
    assert [p.name for p in tmp_path.iterdir()] == ["study"]


def test_a_study_that_paces_replies_holds_each_program_move_to_a_human_like_delay_and_records_it(tmp_path):
    from bargain.arena.pacing import Pace

    async def scenario():
        study = dataclasses.replace(
            make_study(tmp_path), timing=Timing(move_seconds=60, idle_minutes=20, reply_delay=Pace(0.3, 0.0, 1.0))
        )
        runner = runner_for(tmp_path, study)
        params = {"participant": "P8"}
        await runner.submit(params, "consent", {"agree": True})
        await runner.submit(params, "instructions", {})
        page = await runner.submit(params, "comprehension", {"no_deal": "Nothing"})
        began = time.monotonic()
        await play_game(runner, params, page, [])
        assert time.monotonic() - began >= 2 * 0.3  # two rounds, each answered no sooner than the pace
        row = records.participant(runner.arena.store, "flow-test", "P8")
        game = runner.arena.store.game(row["games"][0])
        assert game["extra"]["pace"] == {"median_s": 0.3, "spread": 0.0, "max_s": 1.0}
        assert {m["paced_s"] for m in game["moves"] if m["actor"] == "agent"} == {0.3}

    asyncio.run(scenario())


def test_a_participant_never_bargains_over_the_same_item_twice(tmp_path):
    """Two of the three scenarios sell one item (a used paperback novel): each participant's two games are over
    the two items, never the novel twice (drawn at random, eight participants would meet it twice by chance with
    probability 1 - (4/9)^8). A study with more games than items is refused."""
    pool = "scenarios: {list: [low:35, low:134, low:0]}"
    make_study(tmp_path)
    (tmp_path / "study.yaml").write_text((tmp_path / "study.yaml").read_text().replace("scenarios: {tier: low}", pool))

    async def scenario():
        run = runner_for(tmp_path, load(tmp_path / "study.yaml"))
        for who in (f"P{i}" for i in range(8)):
            params = {"PROLIFIC_PID": who}
            await run.submit(params, "consent", {"agree": True})
            await run.submit(params, "instructions", {})
            page = await run.submit(params, "comprehension", {"no_deal": "Nothing"})
            for _ in (1, 2):
                page = await play_game(run, params, page, [])
                page = await run.submit(params, "game_survey", answers_for(page.items, attention="Rarely"))
            games = [run.arena.store.game(g) for g in records.participant(run.arena.store, "flow-test", who)["games"]]
            items = [run.arena.source.get(g["scenario"]).product_name for g in games]
            assert len(set(items)) == 2, items

    asyncio.run(scenario())
    three = (tmp_path / "study.yaml").read_text().replace("games_per_participant: 2", "games_per_participant: 3")
    (tmp_path / "study.yaml").write_text(
        three.replace("conditions: [both_unaware]", "conditions: [both_unaware, both_aware]")
    )
    with pytest.raises(StudyError, match="3 games exceed the 2 distinct items"):
        load(tmp_path / "study.yaml")
