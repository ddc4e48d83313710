"""A study whose participants play both roles: each reads the instructions and answers the comprehension questions of
their own role, known from the cells they are assigned when they agree to the consent; a participant who leaves
before playing (screened out, declining, idle) gives their slots back, as a dropped one does."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta

import pytest
import yaml
from sqlalchemy import update
from test_study_flow import make_study, runner_for

from bargain.records.store import utcnow
from bargain.study import records
from bargain.study.config import Assignment, Design, load
from bargain.study.flow import StudyRunner

TEXTS = {
    "buyer.md": "You are the **buyer**: the lower the price, the more you earn.",
    "seller.md": "You are the **seller**: the higher the price, the more you earn.",
}
QUESTIONS = [
    {"id": "no_deal", "text": "No deal pays?", "options": ["Nothing", "Everything"], "answer": "Nothing"},
    {"id": "buyer_best", "text": "As the buyer, the best price is?", "options": ["Low", "High"], "answer": "Low"},
    {"id": "seller_best", "text": "As the seller, the best price is?", "options": ["Low", "High"], "answer": "High"},
]
RIGHT = {"no_deal": "Nothing", "buyer_best": "Low", "seller_best": "High"}
WRONG = {"no_deal": "Everything", "buyer_best": "High", "seller_best": "Low"}


def two_roles(tmp_path, quota: int = 10):
    """The flow tests' study with buyers and sellers (a between design), each role with its own instructions and
    question."""
    make_study(tmp_path, quota)
    for name, words in TEXTS.items():
        (tmp_path / name).write_text(words)
    document = yaml.safe_load((tmp_path / "study.yaml").read_text())
    document["cells"]["roles"] = ["buyer", "seller"]
    document["texts"]["instructions"] = {"buyer": "buyer.md", "seller": "seller.md"}
    document["comprehension"]["questions"] = [
        QUESTIONS[0],
        {**QUESTIONS[1], "role": "buyer"},
        {**QUESTIONS[2], "role": "seller"},
    ]
    document["design"] = {"assignment": "between", "quota_per_cell": quota}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    return load(tmp_path / "study.yaml")


def role_of(runner: StudyRunner, who: str) -> str:
    row = records.participant(runner.arena.store, "flow-test", who)
    return runner.study.cell_by_key(row["cells"][0]).role.value


def taken(runner: StudyRunner) -> int:
    return sum(filled for filled, _ in records.cell_counts(runner.arena.store, "flow-test", 1).values())


def test_each_role_reads_its_own_instructions_and_answers_its_own_questions(tmp_path):
    async def scenario():
        runner = runner_for(tmp_path, two_roles(tmp_path))
        seen = {}
        for who in ("R1", "R2", "R3", "R4"):  # the four cells, two of each role
            page = await runner.submit({"participant": who}, "consent", {"agree": True})
            role = role_of(runner, who)
            assert page.stage == "instructions" and page.text == TEXTS[f"{role}.md"]
            page = await runner.submit({"participant": who}, "instructions", {})
            asked = [q["id"] for q in page.questions]
            assert asked == ["no_deal", f"{role}_best"]
            wrong = await runner.submit({"participant": who}, "comprehension", {"no_deal": "Nothing"})
            assert set(wrong.errors) == {f"{role}_best"}  # only their own question is required
            page = await runner.submit({"participant": who}, "comprehension", {q: RIGHT[q] for q in asked})
            assert page.stage == "game" and page.view.role == role
            seen[who] = role
        assert sorted(seen.values()) == ["buyer", "buyer", "seller", "seller"]

    asyncio.run(scenario())


def test_a_participant_who_plays_both_roles_reads_both_texts_and_answers_both_questions(tmp_path):
    async def scenario():
        within = Design(Assignment.WITHIN, 10)  # four games, one in each cell: both roles
        study = dataclasses.replace(two_roles(tmp_path), design=within, games_per_participant=4)
        runner = runner_for(tmp_path, study)
        page = await runner.submit({"participant": "W1"}, "consent", {"agree": True})
        roles = [
            study.cell_by_key(cell).role.value
            for cell in records.participant(runner.arena.store, "flow-test", "W1")["cells"]
        ]
        first, second = dict.fromkeys(roles)
        assert page.text == f"{TEXTS[f'{first}.md']}\n\n---\n\n{TEXTS[f'{second}.md']}"  # the first game's first
        page = await runner.submit({"participant": "W1"}, "instructions", {})
        assert [q["id"] for q in page.questions] == ["no_deal", "buyer_best", "seller_best"]

    asyncio.run(scenario())


def test_slots_are_taken_at_the_consent_and_a_full_study_says_so_before_the_instructions(tmp_path):
    async def scenario():
        runner = runner_for(tmp_path, two_roles(tmp_path, quota=1))
        agreed = [await runner.submit({"participant": f"F{n}"}, "consent", {"agree": True}) for n in range(5)]
        assert [page.stage for page in agreed] == ["instructions"] * 4 + ["full"] and taken(runner) == 4
        full = records.participant(runner.arena.store, "flow-test", "F4")
        assert full["consent_version"] == "v7" and full["cells"] == []  # they agreed; nothing was free

    asyncio.run(scenario())


@pytest.mark.parametrize("leaving", ["screened out", "declining after a lost answer", "idle"])
def test_a_participant_who_leaves_before_playing_frees_their_slot_once(tmp_path, leaving):
    """Screened out at the comprehension check, declining (on a consent page shown again after their agreement was
    lost with a process that had taken their slot), or dropped idle at the instructions: their slot goes back, once
    however often the step is sent, and the study's quotas stay exact."""

    async def scenario():
        first, second = (runner_for(tmp_path, two_roles(tmp_path)) for _ in range(2))
        params = {"participant": "L1"}
        if leaving == "declining after a lost answer":
            row = records.arrive(first.arena.store, "flow-test", 1, first.study.hash, "L1", {})
            records.assign(first.arena.store, "flow-test", 1, row["id"], 2, within=False)  # then the process died
            assert taken(first) == 1
            pages = await asyncio.gather(*(r.submit(params, "consent", {"agree": False}) for r in (first, second)))
        else:
            await first.submit(params, "consent", {"agree": True})
            assert taken(first) == 1
        if leaving == "screened out":
            await first.submit(params, "instructions", {})
            for _ in range(2):
                pages = await asyncio.gather(*(r.submit(params, "comprehension", WRONG) for r in (first, second)))
        if leaving == "idle":
            with first.arena.store.writing("age") as session:
                session.execute(update(records.ParticipantRow).values(updated_at=utcnow() - timedelta(minutes=30)))
            for runner in (first, second):
                runner._released = float("-inf")
            pages = await asyncio.gather(*(r.release_idle() for r in (first, second)))
        row = records.participant(first.arena.store, "flow-test", "L1")
        assert row["stage"] == {"screened out": "screened_out", "idle": "dropped"}.get(leaving, "declined")
        assert taken(first) == 0, pages

    asyncio.run(scenario())
