"""Study mode's records (bargain.study.records): one study per name and version, participants once,
assignment exact and balanced under concurrency, slots released after the idle limit, answers once."""

from __future__ import annotations

import os
import random
import threading
from datetime import timedelta

import pytest
from databases import emptied
from sqlalchemy import update

from bargain.records.store import Store, StoreError, utcnow
from bargain.study import records
from bargain.study.records import ParticipantRow, StageError, StudyConflict

CELLS = {f"{arm}/{condition}/buyer": 4 for arm in ("a", "b") for condition in ("full", "both_unaware")}
POSTGRES = os.environ.get("BARGAIN_TEST_POSTGRES_URL")


def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'study.db'}"


def fresh(url: str) -> Store:
    return Store(emptied(url) if url.startswith("postgresql") else url)


def study(store: Store, quotas=CELLS, digest="h1") -> None:
    records.register(store, "pilot", 1, digest, {"name": "pilot"}, quotas)


def test_a_study_is_registered_once_and_a_changed_file_is_refused(tmp_path):
    store = Store(sqlite_url(tmp_path))
    study(store)
    study(store)  # the same file again: nothing changes
    with pytest.raises(StudyConflict, match="new version number"):
        study(store, digest="h2")
    assert records.cell_counts(store, "pilot", 1) == {cell: (0, 4) for cell in CELLS}
    records.register(store, "pilot", 2, "h2", {}, CELLS)  # a new version is another study
    assert records.cell_counts(store, "pilot", 2) == {cell: (0, 4) for cell in CELLS}


def test_a_participant_is_recorded_once_whoever_arrives_first(tmp_path):
    store = Store(sqlite_url(tmp_path))
    study(store)
    rows = []
    threads = [
        threading.Thread(
            target=lambda: rows.append(
                records.arrive(Store(sqlite_url(tmp_path)), "pilot", 1, "h1", "P1", {"STUDY_ID": "s"})
            )
        )
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (
        len({r["id"] for r in rows}) == 1 and rows[0]["stage"] == "consent" and rows[0]["source"] == {"STUDY_ID": "s"}
    )


@pytest.mark.parametrize("within", [False, True])
def test_assignment_stays_balanced_and_within_quota(tmp_path, within):
    store = Store(sqlite_url(tmp_path))
    study(store)
    games = 2
    rng = random.Random(3)
    capacity = sum(CELLS.values()) // (games if within else 1)
    for n in range(capacity + 3):
        row = records.arrive(store, "pilot", 1, "h1", f"P{n}", {})
        cells = records.assign(store, "pilot", 1, row["id"], games, within, rng=rng)
        counts = [filled for filled, _ in records.cell_counts(store, "pilot", 1).values()]
        if n < capacity:
            assert len(cells) == games and (len(set(cells)) == games if within else len(set(cells)) == 1)
            assert max(counts) - min(counts) <= 1  # balanced at every moment
        else:
            assert cells == []  # the quotas are full
        assert all(filled <= quota for filled, quota in records.cell_counts(store, "pilot", 1).values())
        assert records.assign(store, "pilot", 1, row["id"], games, within, rng=rng) == cells  # the same, once


def concurrent_assignment(url: str, participants: int, within: bool, distinct_arms: bool = False) -> Store:
    store = fresh(url)
    quotas = {cell: 5 for cell in CELLS}
    study(store, quotas)
    barrier = threading.Barrier(participants)
    got: dict[str, list[str]] = {}

    def one(n: int) -> None:
        own = Store(url)  # each its own engine, as another process would have
        row = records.arrive(own, "pilot", 1, "h1", f"P{n}", {})
        barrier.wait()
        got[f"P{n}"] = records.assign(own, "pilot", 1, row["id"], 2, within, distinct_arms=distinct_arms)
        own.engine.dispose()

    threads = [threading.Thread(target=one, args=(n,)) for n in range(participants)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts = records.cell_counts(store, "pilot", 1)
    taken = [cell for cells in got.values() for cell in (cells if within else cells[:1])]
    assert all(filled <= quota for filled, quota in counts.values())
    assert {cell: taken.count(cell) for cell in counts} == {cell: filled for cell, (filled, _) in counts.items()}
    assert sum(f for f, _ in counts.values()) == min(sum(quotas.values()), participants * (2 if within else 1))
    return store


@pytest.mark.parametrize("within", [False, True])
def test_concurrent_arrivals_never_overfill_a_cell(tmp_path, within):
    concurrent_assignment(sqlite_url(tmp_path), 30, within)


@pytest.mark.skipif(not POSTGRES, reason="set BARGAIN_TEST_POSTGRES_URL to run against PostgreSQL")
def test_concurrent_arrivals_never_overfill_a_cell_in_postgres():
    concurrent_assignment(POSTGRES, 30, within=True)


def test_idle_participants_are_dropped_and_their_slots_freed(tmp_path):
    store = Store(sqlite_url(tmp_path))
    study(store)
    rows = [records.arrive(store, "pilot", 1, "h1", f"P{n}", {}) for n in range(3)]
    assigned = [records.assign(store, "pilot", 1, r["id"], 2, True) for r in rows]
    records.move_to(store, rows[1]["id"], "game", games_done=1)
    records.move_to(store, rows[2]["id"], "completed", games_done=2)
    with store.writing("age") as session:
        session.execute(update(ParticipantRow).values(updated_at=utcnow() - timedelta(hours=1)))
    assert sorted(records.release_idle(store, "pilot", 1, timedelta(minutes=20), within=True)) == ["P0", "P1"]
    counts = records.cell_counts(store, "pilot", 1)
    kept = [assigned[1][0], *assigned[2]]  # P1's finished game and P2's two stay counted
    assert sum(f for f, _ in counts.values()) == len(kept)
    assert records.participant(store, "pilot", "P0")["stage"] == "dropped"
    assert records.participant(store, "pilot", "P2")["stage"] == "completed"
    assert records.release_idle(store, "pilot", 1, timedelta(minutes=20), within=True) == []


def test_a_stage_moves_once_and_answers_are_stored_once(tmp_path):
    store = Store(sqlite_url(tmp_path))
    study(store)
    row = records.arrive(store, "pilot", 1, "h1", "P1", {})
    moved = records.move_to(store, row["id"], "instructions", expected="consent", consent_version="v1")
    assert (
        moved["stage"] == "instructions" and moved["consent_version"] == "v1" and "instructions" in moved["stage_times"]
    )
    with pytest.raises(StageError, match="not 'consent'"):  # a second tab submitting consent again
        records.move_to(store, row["id"], "instructions", expected="consent")
    page = records.Answers("final", 0, {"q1": ("4", None), "q2": ("yes", None)})
    records.move_to(store, row["id"], "debrief", "instructions", [page])
    with pytest.raises(StageError):  # the same page sent again (another tab, another process): nothing changes
        records.move_to(store, row["id"], "debrief", "instructions", [records.Answers("final", 0, {"q1": ("5", None)})])
    assert [(a["item"], a["value"]) for a in records.answers(store, row["id"])] == [("q1", "4"), ("q2", "yes")]
    assert records.saved_answers(store, row["id"], "final", 0) == {"q1": "4", "q2": "yes"}


def test_a_page_whose_stage_change_fails_saves_none_of_its_answers(tmp_path):
    """A page's answers and the stage it leads to are one transaction: when moving on fails (here a field that
    cannot be stored), no answer stays behind to block the retry, and the retry saves them and moves on."""
    store = Store(sqlite_url(tmp_path))
    study(store)
    row = records.arrive(store, "pilot", 1, "h1", "P1", {})
    page = records.Answers("comprehension", 0, {"q1": ("Nothing", True)}, attempt=1)
    with pytest.raises(StoreError):
        records.move_to(store, row["id"], "game", "consent", [page], cells=object())  # no JSON for it
    assert records.answers(store, row["id"]) == [] and records.participant(store, "pilot", "P1")["stage"] == "consent"
    moved = records.move_to(store, row["id"], "game", "consent", [page], comprehension_attempts=1)
    assert moved["stage"] == "game" and [a["value"] for a in records.answers(store, row["id"])] == ["Nothing"]


def test_retention_replaces_old_ids_by_their_pseudonyms_everywhere(tmp_path):
    store = Store(sqlite_url(tmp_path))
    study(store)
    old = records.arrive(store, "pilot", 1, "h1", "OLD1", {"STUDY_ID": "s"})
    records.arrive(store, "pilot", 1, "h1", "NEW1", {})
    store.create_game(
        id="g" * 32,
        player="OLD1",
        participant="OLD1",
        study="pilot",
        human_role="buyer",
        arm="tactic:linear",
        scenario="low:0",
        seed=1,
        condition="full",
        mode="simultaneous",
        max_rounds=4,
        first_actor="buyer",
        buyer_price=5.0,
        seller_price=3.0,
        trial={},
        prompt_version="train",
        parsing="strict",
    )
    with store.writing("age") as session:
        session.execute(
            update(ParticipantRow)
            .where(ParticipantRow.id == old["id"])
            .values(created_at=utcnow() - timedelta(days=40))
        )
    assert records.forget_identifiers(store, "pilot", 1, days=30) == 1
    alias = records.pseudonym(records.study_salt(store, "pilot", 1), "OLD1")
    assert records.participant(store, "pilot", "OLD1") is None
    assert records.participant(store, "pilot", alias)["source"] == {}
    game = store.game("g" * 32)
    assert (game["participant"], game["player"]) == (alias, None)
    assert records.participant(store, "pilot", "NEW1") is not None
    assert records.forget_identifiers(store, "pilot", 1, days=30) == 0  # once


THREE_ARMS = {
    f"{arm}/{condition}/{role}": 3
    for arm in ("a", "b", "c")
    for condition in ("full", "both_unaware")
    for role in ("buyer", "seller")
}


@pytest.mark.parametrize("seed", range(6))
def test_distinct_arms_meets_each_arm_once_and_stays_balanced_and_exact(tmp_path, seed):
    """Three arms of four cells each, two games a participant: without the option, the two least-filled cells may be
    one arm's (a participant meets it twice); with it, every participant meets two different arms, the cells' counts
    stay within one of each other at every step, and the study fills to the last slot it can give."""
    store = Store(sqlite_url(tmp_path))
    study(store, THREE_ARMS)
    rng = random.Random(seed)
    capacity = sum(THREE_ARMS.values()) // 2
    for n in range(capacity + 2):
        row = records.arrive(store, "pilot", 1, "h1", f"P{n}", {})
        cells = records.assign(store, "pilot", 1, row["id"], 2, True, rng=rng, distinct_arms=True)
        counts = [filled for filled, _ in records.cell_counts(store, "pilot", 1).values()]
        if n < capacity:
            assert len({cell.split("/")[0] for cell in cells}) == 2, cells
            assert max(counts) - min(counts) <= 1, counts
        else:
            assert cells == []
        assert records.assign(store, "pilot", 1, row["id"], 2, True, rng=rng, distinct_arms=True) == cells
    assert all(filled == quota for filled, quota in records.cell_counts(store, "pilot", 1).values())


def test_without_distinct_arms_a_participant_can_meet_one_arm_twice(tmp_path):
    """What the option is for: the least-filled cells are drawn whatever their arm."""
    store = Store(sqlite_url(tmp_path))
    study(store, THREE_ARMS)
    rng, twice = random.Random(0), 0
    for n in range(12):
        row = records.arrive(store, "pilot", 1, "h1", f"P{n}", {})
        cells = records.assign(store, "pilot", 1, row["id"], 2, True, rng=rng)
        twice += len({cell.split("/")[0] for cell in cells}) == 1
    assert twice


def test_concurrent_arrivals_with_distinct_arms_never_overfill_or_repeat_an_arm(tmp_path):
    store = concurrent_assignment(sqlite_url(tmp_path), 30, within=True, distinct_arms=True)
    for row in records.participants(store, "pilot", [1]):
        assert len({cell.split("/")[0] for cell in row["cells"]}) == len(row["cells"])
