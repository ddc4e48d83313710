"""`benchmarks/study.py --pairs` at a small size: twelve people paired by the public queue on two app processes of
one database, each move sent to either process and awaited through the other. Everyone is paired and finishes, and
the database holds every move sent exactly once. On one SQLite file, and on PostgreSQL where
BARGAIN_TEST_POSTGRES_URL is set (CI starts it)."""

from __future__ import annotations

import os

import pytest

from benchmarks.study import PairsRun, run_pairs

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
