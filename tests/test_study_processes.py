"""Real app processes serving one study, under the faults a paid study meets: steps sent twice to two processes at
once (moves with different prices), reloads on the other process while a move is in flight, a process killed
(SIGKILL) mid-run and started again, a model server that takes requests and never answers. Afterwards nobody is
stuck, nothing is written twice or lost, no participant got an error page, every slot is counted once and no
game is left running; participants of a person arm pair up through it all, nobody is paired with a participant
dropped as idle, and no intruder takes a seat. On PostgreSQL with two processes where
BARGAIN_TEST_POSTGRES_URL is set (CI starts it), else on SQLite with one process (tests/databases.py).
`benchmarks/study.py --chaos` is the same run at full size."""

from __future__ import annotations

import os
import threading
import time

import pytest
from arena_helpers import free_port, post
from databases import processes_database
from test_study_flow import make_study

from bargain.agents.stub_server import StubServer
from bargain.records.store import Store
from benchmarks.study import PEOPLE, Faults, Replica, run, start_all

URL = os.environ.get("BARGAIN_TEST_POSTGRES_URL")
pytestmark = pytest.mark.slow
on_postgres = pytest.mark.skipif(not URL, reason="set BARGAIN_TEST_POSTGRES_URL")
FAULTS = Faults(duplicate=0.3, reload=0.2, kill_every=6.0)


def fresh_postgres() -> str:
    """The scratch database, emptied of whatever an earlier run of any version left."""
    from databases import emptied

    return emptied(URL)


def assert_clean(result, participants: int) -> None:
    out = result.outcome
    assert (out.completed, out.stuck, out.error_pages, out.errors) == (participants, 0, 0, [])
    assert (out.duplicated_moves, out.lost_moves, out.slots_off, out.games_left_active, out.problems) == (
        0,
        0,
        0,
        0,
        [],
    )
    assert result.kills >= 1 and result.trips_ms["move"]


def test_a_study_under_faults_loses_nothing_and_doubles_nothing(tmp_path):
    db, processes = processes_database(tmp_path)
    participants = 20 if processes == 2 else 16
    assert_clean(run(db, participants=participants, think=0.3, faults=FAULTS, processes=processes), participants)


def test_participants_paired_by_a_person_arm_under_faults_are_all_paired_once_and_lose_nothing(tmp_path):
    """A study of one person arm: buyers and sellers arrive over a few seconds and wait to be paired, while steps
    are sent twice at once, pages reloaded on the other process, a process killed every 4 s, some participants
    leave while they wait (and are dropped as idle), and intruders try the participants' seats through free play.
    Everyone is paired (nobody falls back to the program arm), every pair's game finishes with each move stored
    once, and each cell holds exactly its quota: a pair counts once in the buyers' cell and once in the sellers'."""
    db, processes = processes_database(tmp_path)
    faults = Faults(0.3, 0.2, 4.0, intruders=2, leave=0.1)
    result = run(db, participants=20, think=0.4, faults=faults, processes=processes, design=PEOPLE)
    assert_clean(result, 20)
    out = result.outcome
    assert (out.pairs, out.fell_back) == (10, 0)
    # Of the ten or more who entered their game alone, every fifth left; each was dropped, nobody was paired with
    # them, a newcomer took their place; the intruders, at free play's door, reached no seat.
    assert out.left >= 2 and (out.paired_after_drop, out.paired_before_drop) == (0, 0)
    assert out.intrusions > 0 and (out.taken_views, out.misheld_seats) == (0, 0)
    assert out.cells == {"peer/both_unaware/buyer": (10, 10), "peer/both_unaware/seller": (10, 10)}
    assert len(result.waits_ms) == 20 and out.settles_ms


def test_a_model_server_that_never_answers_costs_a_participant_one_deadline(tmp_path):
    make_study(tmp_path)
    yaml = tmp_path / "study.yaml"
    yaml.write_text(
        yaml.read_text().replace('"tactic:hardliner"', '"arm:base"').replace('"tactic:linear"', '"arm:base"')
    )
    db, processes = processes_database(tmp_path)
    deadline = 2.0
    with StubServer(["Qwen/Qwen3-8B"]) as model:
        replicas = [
            Replica(
                [
                    "--db",
                    db,
                    "--study",
                    str(yaml),
                    "--port",
                    str(free_port()),
                    "--backend",
                    "vllm",
                    "--base-url",
                    model.url,
                    "--move-deadline",
                    str(deadline),
                ],
                tmp_path / f"t{i}.json",
            )
            for i in range(processes)
        ]
        try:
            start_all(replicas)
            here, there = [f"http://127.0.0.1:{r.port}/" for r in (replicas[0], replicas[-1])]
            query = {"PROLIFIC_PID": "HANG1"}
            post(here, "study_step", query, "consent", {"agree": True})
            post(here, "study_step", query, "instructions", {})
            model.delay_s = 3600.0  # the model server now takes requests and never answers
            post(here, "study_step", query, "comprehension", {"no_deal": "Nothing"})  # the game starts
            began = time.monotonic()
            page = post(
                here, "study_step", query, "game", {"round": 1, "action": "OFFER", "price": "1.00", "message": "hello"}
            )
            assert time.monotonic() - began < 1.5  # at once, as against a person: the reply is followed
            assert page["stage"] == "game" and page["view"]["thinking"] and not page["view"]["your_turn"]
            time.sleep(deadline + 0.5)  # the round runs out its one deadline: the person's move kept, no more
            stored = Store(db).moves_frame()
            assert list(stored.loc[stored["message"].str.startswith("hello"), "actor"]) == ["human"]
            began = time.monotonic()
            reload = post(there, "study_page", query)  # another tab, perhaps another process: at once
            assert time.monotonic() - began < 3.0 and reload["stage"] == "game" and reload["view"]["round"] == 1
            time.sleep(deadline)  # the round the reload tried again runs out its deadline too
            model.delay_s = 0.0  # back
            page = post(there, "study_page", query)  # a reload (Try again) asks the model again, the move kept
            while page["view"]["round"] == 1:
                page = post(there, "study_page", query)
            assert page["view"]["round"] == 2 and page["view"]["error"] is None
            assert [t["message"] for t in page["view"]["transcript"] if t["speaker"] == "you"] == ["hello"]
        finally:
            for replica in replicas:
                replica.stop()


@on_postgres
def test_free_play_moves_sent_to_two_processes_at_once_are_played_once(tmp_path):
    from bargain.records.store import Store

    db = fresh_postgres()
    replicas = [Replica(["--db", db, "--port", str(free_port())], tmp_path / f"t{i}.json") for i in range(2)]
    try:
        start_all(replicas)
        urls = [f"http://127.0.0.1:{r.port}/" for r in replicas]
        games = []
        for n in range(10):
            view = post(
                urls[n % 2],
                "start_game",
                "buyer",
                "tactic:hardliner",
                "both_unaware",
                "simultaneous",
                3,
                "low",
                "train",
                f"browser{n}",
                "buyer",
                None,
            )
            while view["status"] == "active":
                answers: list[dict] = [{}, {}]

                def send(which: int, price: str, answers: list[dict] = answers, view: dict = view) -> None:
                    answers[which] = post(
                        urls[which], "play_move", view["game_id"], view["round"], "OFFER", price, f"sent to {which}"
                    )

                threads = [threading.Thread(target=send, args=(i, f"{1 + i / 10:.2f}")) for i in range(2)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                assert answers[0]["transcript"] == answers[1]["transcript"]  # both: the game as stored
                assert sum(a["notice"] is not None for a in answers) == 1
                view = answers[0]
            games.append(view["game_id"])
        moves = Store(db).moves_frame()
        for game_id in games:
            rows = moves[moves["game_id"] == game_id]
            assert not rows.duplicated(["round", "role"]).any() and len(rows) == 6
    finally:
        for replica in replicas:
            replica.stop()
