"""A study's person arm (spec: person): participants of the other role in the same arm and condition are paired
through the study's flow, each paid by their own side of the game; one who waits past `pairing.max_wait_s` plays
the study's program arm instead (recorded as such), or ends there paid the stated bonus."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import textwrap
import time
from datetime import timedelta

import pandas as pd
import pytest
from sqlalchemy import update

from bargain.agents.backends import Backends
from bargain.arena import PERSON
from bargain.arena.controller import Arena, ArenaError
from bargain.arena.inputs import Setup
from bargain.arena.pacing import Pace
from bargain.arena.people import INVITE, QUEUE
from bargain.arena.views import PersonView, money
from bargain.engine.trial import Role
from bargain.records.store import Store, utcnow
from bargain.study import records
from bargain.study.config import Pairing, load
from bargain.study.dashboard import funnel, recent_games, transcript_markdown
from bargain.study.export import export_study
from bargain.study.flow import StudyRunner
from bargain.web.study_page import debrief_markdown

STUDY = """
name: people-test
version: 1
arms:
  peer: {spec: person, label: the other party}
  lin: {spec: "tactic:linear", label: the other party}
cells: {arms: [peer], conditions: [both_unaware], roles: [buyer, seller]}
mode: simultaneous
rounds: 2
scenarios: {tier: low}
games_per_participant: 1
design: {assignment: between, quota_per_cell: 5}
texts: {consent: consent.md, instructions: instructions.md, debrief: debrief.md, consent_version: "1"}
pairing: {max_wait_s: 600, otherwise: lin}
timing: {move_seconds: 60, idle_minutes: 20}
payment:
  currency: GBP
  base: 2.0
  bonus: {per_unit: 1.0, cap: 2.0}
  timeout_rule: bonus_as_played
completion: {code: DONE123, screened_out_code: OUT456, declined_message: "You chose not to take part."}
participant_id: {id_pattern: "[A-Za-z0-9_-]{1,64}"}
"""

# The same study with its program arm only (no person arm, no pairing).
PROGRAM_ONLY = (
    STUDY.replace("  peer: {spec: person, label: the other party}\n", "")
    .replace("[peer]", "[lin]")
    .replace("pairing: {max_wait_s: 600, otherwise: lin}\n", "")
)


def runner(tmp_path, study_text: str = STUDY, **changes) -> StudyRunner:
    for name in ("consent.md", "instructions.md", "debrief.md"):
        (tmp_path / name).write_text("Text.")
    (tmp_path / "study.yaml").write_text(textwrap.dedent(study_text))
    study = dataclasses.replace(load(tmp_path / "study.yaml"), **changes)
    arena = Arena(Store(f"sqlite:///{tmp_path / 'study.db'}"), Backends(), arms=["tactic:linear"])
    return StudyRunner(study, arena)


async def to_game(run: StudyRunner, who: str) -> dict:
    params = {"participant": who}
    await run.submit(params, "consent", {"agree": True})
    return await run.submit(params, "instructions", {})


def steps(run: StudyRunner) -> dict[str, int]:
    """The researcher's funnel: participants per step."""
    table = funnel(run.arena.store, "people-test", 1)
    return dict(zip(table["step"], table["participants"], strict=True))


async def move(run: StudyRunner, who: str, page: dict, price: str) -> dict:
    view = page.view
    return await run.submit({"participant": who}, "game", {"round": view.round, "action": "OFFER", "price": price})


async def to_debrief(run: StudyRunner, pages: dict[str, dict]) -> dict[str, dict]:
    """The game of two paired participants (participant id -> their game page) played with offers that never cross
    (two rounds, no deal), then each on to the pages after it: the page each reaches (this study asks nothing)."""
    low = {"buyer": "0.01", "seller": "15"}
    for _ in range(2):
        moved = await asyncio.gather(*(move(run, who, page, low[page.view.role]) for who, page in pages.items()))
        for who, page in zip(pages, moved):  # a page that saw the round settled by the other's move is read again
            thinking = page.stage == "game" and page.view.thinking
            pages[who] = await run.page({"participant": who}, wait_s=1) if thinking else page
    for who in pages:
        page = await run.page({"participant": who})
        while page.stage in ("game_survey", "final_survey"):
            page = await run.submit({"participant": who}, page.stage, {})
        pages[who] = page
    return pages


def test_two_participants_of_a_person_arm_are_paired_and_each_is_paid_by_their_own_side(tmp_path):
    async def scenario():
        run = runner(tmp_path)
        first = await to_game(run, "P1")
        assert first.stage == "game" and first.view.status == "waiting" and first.view.other == "agent"
        assert steps(run)["waiting for a partner now"] == 1  # the researcher sees who waits
        second = await to_game(run, "P2")
        assert second.view.status == "active"
        first = await run.page({"participant": "P1"})
        assert first.view.status == "active" and {first.view.role, second.view.role} == {
            "buyer",
            "seller",
        }
        for page in (await to_debrief(run, {"P1": first, "P2": second})).values():
            assert page.stage == "debrief", page.stage
        for who in ("P1", "P2"):
            assert (await run.submit({"participant": who}, "debrief", {})).stage == "completed"
        rows = [records.participant(run.arena.store, "people-test", who) for who in ("P1", "P2")]
        games = {run.arena.store.game(row["games"][0])["id"] for row in rows}
        assert len(games) == 1  # one game, both sides
        game = run.arena.store.game(rows[0]["games"][0])
        assert game["arm"] == "person" and game["status"] == "finished"
        assert [row["bonus"] for row in rows] == [0.0, 0.0]  # no deal: each side's utility, 0
        assert (steps(run)["waiting for a partner now"], steps(run)["paired with another participant"]) == (0, 2)
        shown = transcript_markdown(run.arena.store, game["id"])  # the researcher's transcript: both by name
        assert "| participant P1 (" in shown and "| participant P2 (" in shown and "agent (" not in shown
        assert "| 1 | P1 | OFFER" in shown and "| 1 | P2 | OFFER" in shown
        listed = recent_games(run.arena.store, "people-test")  # the researcher's list names both, and the index
        assert list(listed["participant"]) == ["P1 & P2"] and list(listed["game_index"]) == [1]
        assert list(listed["human_role"]) == ["both"]
        export_study(run.arena.store, "people-test", out_dir=tmp_path / "export")
        games_csv = pd.read_csv(tmp_path / "export" / "games.csv")
        assert len(games_csv) == 2 and set(games_csv["opponent_was"]) == {"person"}  # a row for each side
        assert set(games_csv["human_role"]) == {"buyer", "seller"}
        assert sorted(games_csv["partner"]) == sorted(games_csv["participant"])  # each the other's partner
        moves_csv = pd.read_csv(tmp_path / "export" / "moves.csv")
        assert len(moves_csv) == 4  # each move once, with the participant who made it
        assert (moves_csv["person"] == moves_csv["participant"]).all() and not moves_csv["person"].isin(
            ["P1", "P2"]
        ).any()
        assert sorted((m["round"], m["role"], m["person"]) for m in game["moves"]) == sorted(
            (r, run.study.cell_by_key(row["cells"][0]).role.value, row["participant"]) for r in (1, 2) for row in rows
        )

    asyncio.run(scenario())


def test_the_debrief_names_the_other_participant_as_a_person_with_their_price_and_no_strategy(tmp_path):
    """Each side's debrief of a game between two participants: the other was a person, their reservation price, and
    no private strategy (a person writes none); the page says so in words."""

    async def scenario():
        run = runner(tmp_path)
        pages = {who: await to_game(run, who) for who in ("P1", "P2")}
        pages["P1"] = await run.page({"participant": "P1"})  # paired meanwhile
        for who, page in (await to_debrief(run, pages)).items():
            row = records.participant(run.arena.store, "people-test", who)
            game = run.arena.store.game(row["games"][0])
            other = "seller" if run.study.cell_by_key(row["cells"][0]).role.value == "buyer" else "buyer"
            (debrief,) = page.debriefs
            assert (debrief["other"], debrief["agent_role"], debrief["strategy"]) == ("person", other, [])
            assert debrief["agent_price"] == game[f"{other}_price"]
            shown = debrief_markdown(page).split("### Game 1")[1]
            price = money(game[f"{other}_price"])
            assert f"The other participant ({other}) had a reservation price of **{price}**." in shown
            assert "strategy" not in shown.lower() and "program" not in shown

    asyncio.run(scenario())


def test_one_who_waits_past_the_longest_wait_plays_the_program_arm_instead(tmp_path):
    async def scenario():
        run = runner(tmp_path, pairing=Pairing(0, "lin", 0.0))
        page = await to_game(run, "P3")  # nobody else: at once past a wait of 0 s
        page = await run.page({"participant": "P3"})
        assert page.stage == "game" and page.view.status == "active"
        row = records.participant(run.arena.store, "people-test", "P3")
        game = run.arena.store.game(row["games"][0])
        assert game["arm"] == "tactic:linear" and game["extra"]["instead_of"] == "person"
        waited = [g for g in run.arena.store.games_frame().itertuples() if g.arm == "person"]
        assert [g.status for g in waited] == ["cancelled"]  # the wait, kept for the record
        counted = steps(run)
        assert counted["unpaired after the longest wait"] == counted["unpaired: played the program arm instead"] == 1
        while page.stage == "game":  # the program game played out: its debrief tells it as a program's
            page = await move(run, "P3", page, "0.01" if page.view.role == "buyer" else "15")
        while page.stage != "debrief":
            page = await run.submit({"participant": "P3"}, page.stage, {})
        assert page.debriefs[0]["other"] == "agent"
        shown = debrief_markdown(page)
        assert "The other party (" in shown and "Its private strategy, move by move" in shown and "person" not in shown

    asyncio.run(scenario())


def test_reloads_on_two_processes_past_the_longest_wait_start_one_program_game(tmp_path, monkeypatch):
    """The wait runs out while the participant's page is asked for by two tabs on two processes at once: the wait
    is cancelled once, one program game is started and recorded in its place, and every tab shows that game. The
    first request is held between cancelling the wait and recording the program game in its place, every time (the
    race that made this test fail now and then): a request that reads the cancelled wait meanwhile takes the same
    way, and never counts the cancelled wait as a game played."""
    import threading

    replace, held, release = records.replace_game, threading.Event(), threading.Event()

    def gated(*args, **kwargs):
        if not held.is_set():  # the first request to get here waits for the others to have run
            held.set()
            release.wait(10)
        return replace(*args, **kwargs)

    monkeypatch.setattr(records, "replace_game", gated)

    async def scenario():
        first = runner(tmp_path, pairing=Pairing(10, "lin", 0.0))
        second = StudyRunner(
            first.study, Arena(Store(f"sqlite:///{tmp_path / 'study.db'}"), Backends(), arms=["tactic:linear"])
        )
        assert (await to_game(first, "P6")).view.status == "waiting"
        waited = dataclasses.replace(first.study, pairing=Pairing(0, "lin", 0.0))  # the longest wait has run out
        first.study = second.study = waited
        params = {"participant": "P6"}
        held_one = asyncio.ensure_future(first.page(params))
        while not held.is_set():
            await asyncio.sleep(0.01)
        others = [asyncio.ensure_future(second.page(params)) for _ in range(2)]  # the other process's two tabs
        queued = asyncio.ensure_future(first.page(params))  # this process's other tab, behind the held request
        await asyncio.gather(*others)
        release.set()
        pages = [await held_one, await queued, *[await other for other in others]]
        shown = {page.view.game_id for page in pages}
        assert len(shown) == 1 and all(page.view.status == "active" for page in pages)
        games = first.arena.store.games_frame()
        assert sorted(zip(games["arm"], games["status"], strict=True)) == [
            ("person", "cancelled"),
            ("tactic:linear", "active"),
        ]
        row = records.participant(first.arena.store, "people-test", "P6")
        assert row["games"] == list(shown) and row["stage"] == "game" and row["games_done"] == 0

    asyncio.run(scenario())


def test_one_who_waits_past_the_longest_wait_ends_paid_the_stated_bonus(tmp_path):
    async def scenario():
        run = runner(tmp_path, pairing=Pairing(0, "end", 0.75))
        await to_game(run, "P4")
        page = await run.page({"participant": "P4"})
        while page.stage in ("game_survey", "final_survey"):
            page = await run.submit({"participant": "P4"}, page.stage, {})
        assert page.stage == "debrief" and page.debriefs == [None]
        assert "Nobody came to play this game with you in time" in debrief_markdown(page)  # no game to tell
        page = await run.submit({"participant": "P4"}, "debrief", {})
        assert page.stage == "completed"
        row = records.participant(run.arena.store, "people-test", "P4")
        assert row["bonus"] == 0.75
        counted = steps(run)
        assert counted["unpaired after the longest wait"] == 1
        assert counted["unpaired: played the program arm instead"] == 0

    asyncio.run(scenario())


@pytest.mark.slow
# --- who may reach a study's game between people, and what it tells -------------------------------------------------


def test_a_participant_dropped_as_idle_leaves_the_pairing_at_once_and_frees_their_slot(tmp_path):
    """P1 waits for a partner and goes idle: the drop cancels their wait in the same transaction and frees their slot
    (one per cell here). The next two participants take both slots and are paired with each other, never with P1."""

    async def scenario():
        run = runner(tmp_path, study_text=STUDY.replace("quota_per_cell: 5", "quota_per_cell: 1"))
        assert (await to_game(run, "P1")).view.status == "waiting"
        dropped = records.release_idle(run.arena.store, "people-test", 1, timedelta(0), within=False)
        assert dropped == ["P1"]
        seat = records.participant(run.arena.store, "people-test", "P1")["games"][0]
        assert run.arena.store.game(seat)["status"] == "cancelled"
        second, third = await to_game(run, "P2"), await to_game(run, "P3")  # both slots: P1's was freed
        assert second.stage == third.stage == "game"
        second = await run.page({"participant": "P2"})
        assert second.view.status == third.view.status == "active"
        rows = [records.participant(run.arena.store, "people-test", p) for p in ("P2", "P3")]
        assert run.arena.store.game(rows[0]["games"][0])["id"] == run.arena.store.game(rows[1]["games"][0])["id"]
        assert (await to_game(run, "P4")).stage == "full"  # each slot counted once

    asyncio.run(scenario())


def test_the_free_play_api_reaches_no_study_game_on_a_shared_database(tmp_path):
    """A free-play process on the study's database: `get_game`, `play_move`, `cancel_game`, `join_game` (and Play
    again's setup) refuse a study's seats and program games alike, as no such game, and take nothing over."""

    async def scenario():
        run = runner(tmp_path, pairing=Pairing(0, "lin", 0.0))
        await to_game(run, "P2")
        program = (await run.page({"participant": "P2"})).view.game_id  # the fallback: a program game
        waiting = runner(tmp_path)  # the same study with a long wait: P1's seat waits
        seat = (await to_game(waiting, "P1")).view.game_id
        free = Arena(Store(f"sqlite:///{tmp_path / 'study.db'}"), Backends(), arms=["tactic:linear", INVITE, QUEUE])
        before = free.store.version(program)
        for game in (seat, program):
            for call in (
                free.view(game),
                free.view(game, wait_s=1),
                free.move(game, 1, "OFFER", "1.00", ""),
                free.cancel(game),
                free.setup_of(game),
            ):
                with pytest.raises(ArenaError, match="no such game|only a game waiting"):
                    await call
            with pytest.raises(ArenaError, match="not valid"):
                await free.join(game, "intruder")
        assert free.store.version(program) == before and free.live == {}  # nothing taken over
        assert free.store.game(seat)["status"] == "waiting"  # the study's fallback still runs its course
        assert (await waiting.page({"participant": "P1"})).view.status == "waiting"

    asyncio.run(scenario())


def keys(value: object) -> object:
    """The shape of a payload: its keys, nested (lists by their first item), without the values."""
    if isinstance(value, dict):
        return {k: keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [keys(value[0])] if value else []
    return None


def test_a_study_payload_has_the_same_keys_labels_and_timing_against_a_person_and_against_a_program(tmp_path):
    """Blinding: a participant's game pages against another participant and against a paced program have the same
    keys, the same labels for the other side and its moves, and a move answers at once in both (the other side's
    reply arrives as the page follows the game); nothing in a page against a person names a person."""
    (tmp_path / "people").mkdir()
    (tmp_path / "program").mkdir()

    async def play_round(run: StudyRunner, who: str, partner: str | None) -> list[dict]:
        """The pages of one participant's first round: before, right after their move, once it has settled."""
        params, apart = {"participant": who}, {"buyer": "0.01", "seller": "15"}  # offers that never cross
        before = await run.page(params)
        began = time.monotonic()
        moved = await move(run, who, before, apart[before.view.role])
        answered = time.monotonic() - began
        if partner is not None:
            partner_page = await run.page({"participant": partner})
            await move(run, partner, partner_page, apart[partner_page.view.role])
        settled = await run.page(params, wait_s=3)
        while settled.stage == "game" and settled.view.round == 1:
            settled = await run.page(params, wait_s=3)
        assert answered < 0.4, answered  # at once: not after the program's paced reply, nor the partner's move
        assert moved.view.thinking and [t["speaker"] for t in moved.view.transcript] == ["you"]
        return [before, moved, settled]

    async def scenario():
        with_people = runner(tmp_path / "people")
        await to_game(with_people, "P1")
        await to_game(with_people, "P2")
        paced = dataclasses.replace(with_people.study.timing, reply_delay=Pace(0.8, 0.0, 1.0))
        with_program = runner(tmp_path / "program", pairing=Pairing(0, "lin", 0.0), timing=paced)
        await to_game(with_program, "P3")
        against_person = await play_round(with_people, "P1", partner="P2")
        against_program = await play_round(with_program, "P3", partner=None)
        for person, program in zip(against_person, against_program, strict=True):
            assert keys(person.to_json()) == keys(program.to_json())
            for page in (person, program):
                view = page.view
                assert (view.other, view.status, page.opponent) == ("agent", "active", "the other party")
                assert {t["speaker"] for t in view.transcript} <= {"you", "agent"}
                assert view.waiting_s is None and view.invitation is None
            assert json.dumps(person.to_json()).count('"person"') == 0

    asyncio.run(scenario())


@pytest.mark.slow
def test_in_two_browsers_a_buyer_and_a_seller_read_their_own_instructions_and_a_debrief_naming_a_person(tmp_path):
    """A study of one person arm with instructions per role: the two participants, each in a page of their own, read
    their own role's instructions; the first waits for "the other party" and their page follows by itself into the
    game when the second arrives; they play it to its end and reach the debrief, which names the other as a person,
    with their reservation price and no strategy (screenshots of both debriefs in tmp_path)."""
    from arena_helpers import BROWSER_ARGS, CHROMIUM, launch, need_browser

    told = {"buyer": "You are the buyer: the lower the price", "seller": "You are the seller: the higher the price"}
    for name, words in {
        "consent.md": "The consent text.",
        "buyer.md": f"{told['buyer']}, the more you earn.",
        "seller.md": f"{told['seller']}, the more you earn.",
        "debrief.md": "The other party was another participant of this study.",
    }.items():
        (tmp_path / name).write_text(words)
    per_role = "instructions: {buyer: buyer.md, seller: seller.md}"
    (tmp_path / "study.yaml").write_text(textwrap.dedent(STUDY).replace("instructions: instructions.md", per_role))
    running = launch(tmp_path / "arena.db", "--study", str(tmp_path / "study.yaml"))
    need_browser()
    from playwright.sync_api import sync_playwright

    store = running.arena.store
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
            pages, roles = {}, {}
            for who in ("W1", "W2"):
                page = browser.new_context(viewport={"width": 1000, "height": 1200}).new_page()
                page.goto(f"{running.url}?PROLIFIC_PID={who}")
                page.get_by_role("button", name="I agree to take part").click(timeout=20000)
                page.wait_for_selector("text=I have read the instructions", timeout=20000)
                row = records.participant(store, "people-test", who)
                roles[who] = role = row["cells"][0].split("/")[-1]
                page.wait_for_selector(f"text={told[role]}", timeout=20000)
                assert told["seller" if role == "buyer" else "buyer"] not in page.locator("body").inner_text()
                page.get_by_role("button", name="I have read the instructions").click()
                pages[who] = page
                if who == "W1":  # the first waits, told of "the other party" (never a person)
                    page.wait_for_selector("text=Waiting for the other party to join", timeout=20000)
                    assert "other person" not in page.locator("body").inner_text()
            assert sorted(roles.values()) == ["buyer", "seller"]
            for round_ in (1, 2):  # offers that never cross: two rounds, no deal
                for who, page in pages.items():
                    page.wait_for_selector(f"text=Round {round_} of 2", timeout=20000)
                    page.get_by_role("textbox", name="Price").fill("0.01" if roles[who] == "buyer" else "15")
                    page.get_by_role("button", name="Offer", exact=True).click()
            game = store.game(records.participant(store, "people-test", "W1")["games"][0])
            for who, page in pages.items():
                page.wait_for_selector("text=Game 1 is over", timeout=20000)
                page.get_by_role("button", name="Submit").first.click()  # this study asks nothing
                page.wait_for_selector("text=The other participant (", timeout=20000)
                page.screenshot(path=str(tmp_path / f"debrief-{roles[who]}.png"), full_page=True)
                other = "seller" if roles[who] == "buyer" else "buyer"
                shown = page.locator("body").inner_text()
                price = money(game[f"{other}_price"])
                assert f"The other participant ({other}) had a reservation price of {price}." in shown
                assert "strategy" not in shown.lower() and "program" not in shown
            browser.close()
    finally:
        running.demo.close()


@pytest.mark.slow  # a drawn wait for the other party waited out (seconds)
def test_a_program_game_with_a_matching_wait_waits_for_the_other_party_as_a_person_arm_does(tmp_path):
    """Blinding of the wait: with `timing.matching`, a program game first waits for "the other party" for a drawn
    time, its page the same as a wait for a partner (keys, labels, a move refused alike), then begins."""
    (tmp_path / "people").mkdir()
    (tmp_path / "program").mkdir()

    async def scenario():
        with_people = runner(tmp_path / "people")
        matching = dataclasses.replace(with_people.study.timing, matching=Pace(2.5, 0.0, 2.5))
        with_program = runner(tmp_path / "program", study_text=PROGRAM_ONLY, timing=matching)
        waits = [await to_game(with_people, "P1"), await to_game(with_program, "P2")]
        tried = [
            await move(run, who, page, "1.00")
            for run, who, page in zip((with_people, with_program), ("P1", "P2"), waits)
        ]
        for page in (*waits, *tried):
            view = page.view
            assert (view.status, view.thinking, view.your_turn, view.other) == (
                "waiting",
                True,
                False,
                "agent",
            )
            assert view.transcript == [] and view.waiting_s is None
        assert keys(waits[0]) == keys(waits[1]) and keys(tried[0]) == keys(tried[1])
        assert with_program.arena.store.moves_frame().empty  # nothing played before the other party came
        await asyncio.sleep(2.6)
        begun = await with_program.page({"participant": "P2"})
        assert begun.view.status == "active" and begun.view.your_turn
        game = with_program.arena.store.game(begun.view.game_id)
        assert "starts_at" in game["extra"]

    asyncio.run(scenario())


def test_one_whose_partner_is_dropped_as_idle_mid_game_completes_the_study(tmp_path):
    """P1 and P2 are paired; P1 leaves and is dropped as idle: their game is abandoned, and P2 goes on through the
    surveys to the completion code (the abandoned game has no end time: its length is to its last change)."""

    async def scenario():
        run = runner(tmp_path)
        await to_game(run, "P1")
        assert (await to_game(run, "P2")).view.status == "active"
        with run.arena.store.writing("age P1") as session:
            session.execute(
                update(records.ParticipantRow)
                .where(records.ParticipantRow.participant == "P1")
                .values(updated_at=utcnow() - timedelta(hours=1))
            )
        assert records.release_idle(run.arena.store, "people-test", 1, timedelta(minutes=20), within=False) == ["P1"]
        page = await run.page({"participant": "P2"})
        while page.stage in ("game_survey", "final_survey"):
            page = await run.submit({"participant": "P2"}, page.stage, {})
        assert page.stage == "debrief"
        assert (await run.submit({"participant": "P2"}, "debrief", {})).stage == "completed"

    asyncio.run(scenario())


def test_a_participant_is_paired_over_an_item_they_have_not_met_first(tmp_path):
    """Of the waits open, one over an item the newcomer has not met is taken first, older ones over an item they
    have met after it; and when only those remain, the newcomer is paired rather than kept waiting."""

    async def scenario():
        arena = runner(tmp_path).arena
        key, novel = "study:people-test:1:peer:both_unaware", ("low:35", "low:134")  # one item, two scenarios

        async def pair(who: str, role: Role, scenario: str, avoid: frozenset[str] = frozenset()) -> PersonView:
            setup = Setup(role=role, arm=PERSON, scenario=scenario)
            return await arena.pair(setup, key, study="people-test", participant=who, game_index=2, avoid=avoid)

        old = await pair("P1", Role.BUYER, novel[0])
        new = await pair("P4", Role.BUYER, "low:0")
        met = await pair("P2", Role.SELLER, "low:1", avoid=frozenset(novel))
        assert (old.status, new.status, met.status) == ("waiting", "waiting", "active") and met.game_id != old.game_id
        assert arena.store.game(met.game_id)["scenario"] == "low:0"
        only = await pair("P3", Role.SELLER, "low:1", avoid=frozenset(novel))
        assert only.status == "active" and arena.store.game(only.game_id)["scenario"] == novel[0]

    asyncio.run(scenario())
