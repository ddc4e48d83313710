"""`benchmarks/study.py --pairs` at a small size: twelve participants of a study's person arm paired on two app
processes of one SQLite file, each awaiting the other's move through the other process: everyone is paired and
finishes, the database holds every move exactly once, and the study's cells are filled exactly. Free play's public
queue (`--pairs --free-play`) under the chaos harness (`--chaos`: starts and moves sent twice at once, looks on the
other process, a process killed every 4 s, intruders), on two processes of PostgreSQL
where BARGAIN_TEST_POSTGRES_URL is set (CI starts it), else on one SQLite process: the same checks as a run without
faults, and more. Free play's pairs on two processes without faults are tests/test_people_processes.py's; the
study's person arm under the chaos harness is in tests/test_study_processes.py."""

from __future__ import annotations

import pytest
from databases import processes_database

from benchmarks.crowd import Faults
from benchmarks.free_play import PairsRun, run_pairs
from benchmarks.study import PEOPLE as PAIRED
from benchmarks.study import run

pytestmark = pytest.mark.slow
PEOPLE = 12


def check(result: PairsRun) -> None:
    assert result.errors == [] and result.problems == []
    assert result.pairs == result.people // 2 and len(result.waits_ms) == result.people  # all paired, all finished
    assert result.waiting == 0 and result.waits_lost == 0 and result.unfinished == 0
    assert result.lost_moves == 0 and result.duplicated_moves == 0
    assert result.moves_sent == result.moves_stored > 0
    assert result.seated_twice == 0  # a start sent again (twice at once, or after a kill) seated its person once
    # every round was settled by a second move, and the first mover's long poll through the other process saw it
    assert len(result.settles_ms) + result.settled_at_once == result.moves_sent // 2
    assert result.clean


def test_people_paired_by_free_play_under_faults_and_intruders_lose_nothing_and_give_no_seat_away(tmp_path):
    """Starts sent twice at once, or again after a kill, seat their person once; moves sent twice at once are played
    once (the second answered "already played"), a process killed every 4 s costs nobody their wait (they keep
    asking, through the other process), and two intruders get no seat that is not theirs. (The harness's people who
    leave, `--leave`, are left to the benchmark: each costs LIVE_S, 15 s, of waiting, which doubled this test; a
    wait whose person left is never paired on two processes in tests/test_people_guarded.py.)"""
    db, processes = processes_database(tmp_path)
    result = run_pairs(db, PEOPLE, think=0.3, faults=Faults(0.3, 0.2, 4.0, intruders=2), processes=processes)
    assert result.people == PEOPLE and result.left == 0
    check(result)
    assert result.kills >= 1 and result.twins and result.notices  # the faults were met
    assert result.intrusions > 0 and (result.taken_views, result.misheld_seats) == (0, 0)


def test_study_participants_paired_on_two_processes_of_one_sqlite_file_fill_the_cells_exactly(tmp_path):
    result = run(f"sqlite:///{tmp_path / 'study.db'}", PEOPLE, think=0.3, faults=Faults(), design=PAIRED)
    out = result.outcome
    assert out.errors == [] and out.problems == [] and out.clean  # each round's two sides matched, nothing lost
    assert (out.completed, out.pairs, out.fell_back) == (PEOPLE, PEOPLE // 2, 0)
    assert out.cells == {"peer/both_unaware/buyer": (6, 6), "peer/both_unaware/seller": (6, 6)}
    assert len(result.waits_ms) == PEOPLE and len(result.server_ms["move"]) == len(result.trips_ms["move"])
    # every round between the two was settled by its second move, and the first mover's page saw it
    assert len(out.settles_ms) + out.settled_at_once == len(result.trips_ms["move"]) // 2
