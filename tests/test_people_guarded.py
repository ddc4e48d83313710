"""Games between people keep their seats, their secrets and their blinding on two real app processes of one database
(PostgreSQL where BARGAIN_TEST_POSTGRES_URL is set, as CI does; else one SQLite file): a taken seat opens to
its token only, whatever player id a second caller sends to either process; anonymous callers are people of their
own; a player's open games are bounded across processes; a study's games are out of free play's reach; a
participant dropped as idle is out of the pairing; a study's pages against a person and against a program have the
same keys and labels, and a move answers at once against both; and a queue's wait whose tab was closed is never
paired (in Chromium), the oldest live wait being paired instead. tests/test_people.py and tests/test_study_people.py
hold the same on one process, on SQLite."""

from __future__ import annotations

import json
import os
import textwrap
import time
from datetime import timedelta
from pathlib import Path

import pytest
from arena_helpers import BROWSER_ARGS, CHROMIUM, free_port, need_browser, post, refused, says
from sqlalchemy import select
from test_study_people import STUDY as PEOPLE_STUDY
from test_study_people import keys

from bargain.arena.people import GONE, LIVE_S, MAX_OPEN
from bargain.records.store import GameRow, SeatRow, Store
from bargain.study import records
from benchmarks.study import Replica, start_all

URL = os.environ.get("BARGAIN_TEST_POSTGRES_URL")
pytestmark = pytest.mark.slow
QUEUE = ("person:queue", "both_unaware", "simultaneous", 4, "low", "train")


@pytest.fixture
def db(tmp_path) -> str:
    """PostgreSQL where it is set (CI), else one SQLite file: each test is long enough to run on one of them."""
    if URL:
        from databases import emptied

        return emptied(URL)
    return f"sqlite:///{tmp_path / 'people.db'}"


class Processes:
    """App processes on one database (each with its own flags), stopped at the end."""

    def __init__(self, db: str, tmp_path: Path):
        self.db, self.tmp_path, self.replicas = db, tmp_path, []

    def start(self, *flags: tuple[str, ...]) -> list[str]:
        """A process for each set of flags, started side by side; their addresses."""
        started = [
            Replica(["--db", self.db, "--port", str(free_port()), *f], self.tmp_path / f"t{len(self.replicas) + i}")
            for i, f in enumerate(flags)
        ]
        self.replicas += started
        start_all(started)
        return [f"http://127.0.0.1:{replica.port}/" for replica in started]

    def stop(self) -> None:
        for replica in self.replicas:
            replica.stop()


@pytest.fixture
def processes(db, tmp_path):
    running = Processes(db, tmp_path)
    yield running
    running.stop()


def backdate(store: Store, rows, column: str, seconds: float) -> None:
    """Move a stored time of `rows` (a select of ORM rows) `seconds` into the past: the time a test would otherwise
    sleep through has passed, for those rows alone."""
    with store.writing("backdate") as session:
        for row in session.scalars(rows):
            setattr(row, column, getattr(row, column) - timedelta(seconds=seconds))


def start(url: str, role: str, opponent: str = "person:invite", player: str | None = None) -> dict:
    return post(url, "start_game", role, opponent, *QUEUE[1:], player, "buyer", None)


def test_a_seat_opens_to_its_token_only_and_a_players_open_games_are_bounded_on_two_processes(processes):
    a, b = processes.start((), ())
    alice = start(a, "buyer")
    link = alice["invitation"]
    bob = post(b, "join_game", link, None, None)  # no player id
    store = Store(processes.db)
    stored = store.seats_frame().set_index("role")["person"]["seller"]
    assert stored.startswith("anon-")
    for url in (a, b):
        for who in (None, "guest", stored, "bob"):
            assert "already taken" in refused(url, "join_game", link, who, None)
    assert post(a, "get_game", bob["game_id"], 0)["your_price"] == bob["your_price"]  # the token, on either process

    # Two anonymous callers of the queue, on two processes: two people, paired.
    first, second = start(a, "seller", "person:queue"), start(b, "buyer", "person:queue")
    assert (first["status"], second["status"]) == ("waiting", "active")
    assert len({p for p in store.seats_frame()["person"] if p.startswith("anon-")}) == 4

    # One player's open games with people, counted across both processes.
    for i in range(MAX_OPEN):
        start((a, b)[i % 2], "seller", player="pat")
    for url in (a, b):
        assert f"already have {MAX_OPEN} games" in refused(
            url, "start_game", "seller", "person:invite", *QUEUE[1:], "pat", "buyer", None
        )


# The person-arm study of tests/test_study_people.py: two slots per role, a wait of 10 s (the least a study allows)
# before the program arm, whose replies come at a paced 1.5 s.
STUDY = (
    PEOPLE_STUDY.replace("name: people-test", "name: guarded")
    .replace("quota_per_cell: 5", "quota_per_cell: 2")
    .replace("max_wait_s: 600", "max_wait_s: 10")
    .replace("idle_minutes: 20}", "idle_minutes: 20, reply_delay: {median_s: 1.5, spread: 0.0, max_s: 2.0}}")
)
APART = {"buyer": "0.01", "seller": "15"}  # offers that never cross


def test_a_studys_games_are_out_of_free_plays_reach_the_idle_leave_the_pairing_and_pages_are_blinded(
    processes, tmp_path
):
    """Two study processes and a free-play process on one database. P1 waits for a partner: free play's API
    refuses their seat; P1 is dropped as idle and nobody is paired with them. P2 and P3 are paired across the two
    study processes; P4 waits alone and plays the program arm instead. Every page of the games against a person
    has the keys and labels of the pages against the program, and a move answers at once against both."""
    for name in ("consent.md", "instructions.md", "debrief.md"):
        (tmp_path / name).write_text("Text.")
    (tmp_path / "study.yaml").write_text(textwrap.dedent(STUDY))
    study = ("--study", str(tmp_path / "study.yaml"))
    first, second, free = processes.start(study, study, ())
    store = Store(processes.db)

    def page(url: str, who: str) -> dict:
        return post(url, "study_page", {"participant": who})

    def step(url: str, who: str, stage: str, data: dict) -> dict:
        return post(url, "study_step", {"participant": who}, stage, data)

    def arrive(url: str, who: str) -> dict:
        step(url, who, "consent", {"agree": True})
        return step(url, who, "instructions", {})

    seat = arrive(first, "P1")["view"]["game_id"]
    for api, data in (
        ("get_game", [seat, 0]),
        ("get_game", [seat, 2.0]),
        ("play_move", [seat, 1, "OFFER", "1.00", ""]),
        ("cancel_game", [seat]),
        ("join_game", [seat, "intruder", None]),
    ):
        error = refused(free, api, *data)
        assert says(error, "no such game") or says(error, "not valid"), error
    assert store.game(seat)["status"] == "waiting"
    assert records.release_idle(store, "guarded", 1, timedelta(0), within=False) == ["P1"]  # a third process's sweep
    assert store.game(seat)["status"] == "cancelled"

    pages: dict[str, list[dict]] = {}
    arrive(first, "P2")
    arrive(second, "P3")  # both slots of the cells: P1's was freed
    for who, url in (("P2", first), ("P3", second)):
        pages[who] = [page(url, who)]
        assert pages[who][0]["view"]["status"] == "active", pages[who][0]
    assert (
        store.game(store.seats_frame().query("person == 'P2'")["game_id"].iloc[0])["id"]
        == store.game(store.seats_frame().query("person == 'P3'")["game_id"].iloc[0])["id"]
    )
    arrive(second, "P4")
    waits = select(GameRow).where(GameRow.id.in_(select(SeatRow.game_id).where(SeatRow.person == "P4")))
    backdate(store, waits, "created_at", 10.2)  # P4 has waited 10.2 s
    pages["P4"] = [page(first, "P4")]  # past the longest wait: the program arm
    assert pages["P4"][0]["view"]["status"] == "active"

    for who, url in (("P2", second), ("P4", second), ("P3", first)):  # each move sent to the other process
        began = time.monotonic()
        moved = step(url, who, "game", {"round": 1, "action": "OFFER", "price": APART[pages[who][0]["view"]["role"]]})
        assert time.monotonic() - began < 1.0  # at once, against the paced program too
        pages[who].append(moved)
    for who in ("P2", "P4"):
        settled = page(first, who)
        while settled["view"]["round"] == 1:
            settled = page(first, who)
        pages[who].append(settled)
    assert pages["P2"][1]["view"]["thinking"] and pages["P4"][1]["view"]["thinking"]
    for person, program in zip(pages["P2"], pages["P4"], strict=True):
        assert json.dumps(keys(person), sort_keys=True) == json.dumps(keys(program), sort_keys=True)
        for shown in (person, program):
            view = shown["view"]
            assert (view["other"], shown["opponent"], view["waiting_s"], view["invitation"]) == (
                "agent",
                "the other party",
                None,
                None,
            )
            assert {t["speaker"] for t in view["transcript"]} <= {"you", "agent"}
        assert '"person"' not in json.dumps(person)
    games = store.games_frame()
    assert sorted(zip(games["arm"], games["status"])) == [
        ("person", "active"),
        ("person", "cancelled"),
        ("person", "cancelled"),
        ("tactic:linear", "active"),
    ]


def seen(store: Store, game_id: str) -> object:
    """When the person waiting in a game last asked for it."""
    with store.reading() as session:
        return session.scalars(
            select(SeatRow.seen_at).where(SeatRow.game_id == game_id, SeatRow.person.is_not(None))
        ).one()


def test_a_wait_whose_tab_was_closed_is_never_paired_and_the_oldest_live_wait_is(processes):
    """Free play's queue on two processes, in Chromium: a seller waits and closes the tab; a second seller waits on
    the other process and keeps the tab open. Past the live window (moved into the past for the closed tab's wait,
    while the open tab is seen asking again) a buyer is seated with the second, at once, whose page goes on into
    the game; the closed tab's wait was cancelled, never paired."""
    need_browser()
    from playwright.sync_api import sync_playwright

    a, b = processes.start((), ())
    store = Store(processes.db)

    def queue(page, role: str) -> None:
        page.get_by_role("button", name="Start game").wait_for(timeout=20000)
        page.get_by_role("radio", name=role).first.check()  # "You play" (the first radio group)
        page.get_by_label("Opponent").click()
        page.get_by_role("option", name="a person: whoever comes next").click()
        page.get_by_role("button", name="Start game").click()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            closed = browser.new_context().new_page()
            closed.goto(a)
            queue(closed, "seller")
            closed.wait_for_selector("text=Waiting for the other person to join", timeout=20000)
            closed.context.close()  # the person leaves: nothing asks for their wait any more
            live = browser.new_context().new_page()
            live.goto(b)
            queue(live, "seller")
            live.wait_for_selector("text=Waiting for the other person to join", timeout=20000)
            # The live window passes for the closed tab's wait alone; the open tab goes on asking for its own.
            gone, kept = store.seats_frame().query("person.notna()").sort_values("created_at")["game_id"]
            backdate(
                store,
                select(SeatRow).where(SeatRow.game_id == gone, SeatRow.person.is_not(None)),
                "seen_at",
                LIVE_S + 2,
            )
            asked, ends = seen(store, kept), time.monotonic() + 20
            while seen(store, kept) == asked and time.monotonic() < ends:
                time.sleep(0.2)
            assert seen(store, kept) != asked, "the open tab stopped asking for its wait"
            buyer = browser.new_context().new_page()
            buyer.goto(a)
            queue(buyer, "buyer")
            buyer.wait_for_selector("text=Round 1 of 4", timeout=20000)
            live.wait_for_selector("text=Round 1 of 4", timeout=20000)  # the page that kept asking was paired
        finally:
            browser.close()
    games = store.games_frame().sort_values("created_at")
    assert list(zip(games["status"], games["abandoned_by"].fillna(""))) == [("cancelled", GONE), ("active", "")]
