"""`benchmarks/study.py --pairs` at a small size: twelve participants of a study's person arm, and twelve people of
free play's public queue (`--free-play`), paired on two app processes of one database, each awaiting the other's
move through the other process. Everyone is paired and finishes, the database holds every move exactly once, and
the study's cells are filled exactly. On one SQLite file, and on PostgreSQL where BARGAIN_TEST_POSTGRES_URL is set
(CI starts it)."""

from __future__ import annotations

import os

import pytest

from benchmarks.study import PEOPLE as PAIRED
from benchmarks.study import Faults, PairsRun, run, run_pairs

URL = os.environ.get("BARGAIN_TEST_POSTGRES_URL")
pytestmark = pytest.mark.slow
PEOPLE = 12


def check(result: PairsRun) -> None:
    assert result.errors == [] and result.problems == []
    assert result.pairs == PEOPLE // 2 and len(result.waits_ms) == PEOPLE  # all paired, all finished
    assert result.waiting == 0 and result.unfinished == 0
    assert result.lost_moves == 0 and result.duplicated_moves == 0
    assert result.moves_sent == result.moves_stored > 0
    # every round was settled by a second move, and the first mover's long poll through the other process saw it
    assert len(result.settles_ms) + result.settled_at_once == result.moves_sent // 2
    assert result.clean


def test_people_paired_on_two_processes_of_one_sqlite_file_lose_and_repeat_no_move(tmp_path):
    check(run_pairs(f"sqlite:///{tmp_path / 'pairs.db'}", PEOPLE, think=0.3))


@pytest.mark.skipif(not URL, reason="set BARGAIN_TEST_POSTGRES_URL")
def test_people_paired_on_two_processes_of_postgresql_lose_and_repeat_no_move():
    from databases import emptied

    check(run_pairs(emptied(URL), PEOPLE, think=0.3))


def test_study_participants_paired_on_two_processes_of_one_sqlite_file_fill_the_cells_exactly(tmp_path):
    result = run(f"sqlite:///{tmp_path / 'study.db'}", PEOPLE, think=0.3, faults=Faults(), design=PAIRED)
    out = result.outcome
    assert out.errors == [] and out.problems == [] and out.clean  # each round's two sides matched, nothing lost
    assert (out.completed, out.pairs, out.fell_back) == (PEOPLE, PEOPLE // 2, 0)
    assert out.cells == {"peer/both_unaware/buyer": (6, 6), "peer/both_unaware/seller": (6, 6)}
    assert len(result.waits_ms) == PEOPLE and len(result.server_ms["move"]) == len(result.trips_ms["move"])
    # every round between the two was settled by its second move, and the first mover's page saw it
    assert len(out.settles_ms) + out.settled_at_once == len(result.trips_ms["move"]) // 2
