"""The store and a whole arena game on PostgreSQL, when a server is given (BARGAIN_TEST_POSTGRES_URL).

e.g. BARGAIN_TEST_POSTGRES_URL=postgresql+psycopg://bargain:bargain@127.0.0.1/bargain_test
"""

import asyncio
import os
from datetime import timedelta

import pytest

URL = os.environ.get("BARGAIN_TEST_POSTGRES_URL")
pytestmark = pytest.mark.skipif(not URL, reason="set BARGAIN_TEST_POSTGRES_URL to run against PostgreSQL")


@pytest.fixture
def store():
    """A fresh schema in the scratch database: whatever an earlier run of any version left is dropped."""
    from databases import emptied

    from bargain.records.store import Store

    return Store(emptied(URL))


def test_a_whole_game_is_stored_in_postgres(store, tmp_path):
    from bargain.agents.backends import Backends
    from bargain.arena.controller import Arena, Setup
    from bargain.records import migrations

    assert store.revision() == migrations.head()

    async def game():
        arena = Arena(store, Backends(), idle_timeout=timedelta(hours=1))
        view = await arena.start(Setup(arm="tactic:boulware", seed=3), player="p1")
        while view.status == "active":
            view = await arena.move(view.game_id, view.round, "OFFER", view.your_price * 0.8, "hello")
        return view

    final = asyncio.run(game())
    row = store.game(final.game_id)
    assert row["status"] == "finished" and row["trial"]["scenario"]["tier"] == "low"
    assert [m["seq"] for m in row["moves"]] == list(range(len(final.transcript)))
    assert len(store.games_frame("p1")) == 1
    written = store.export(tmp_path)
    assert final.game_id in (tmp_path / "games.csv").read_text() and len(written) == 6


def test_a_version_1_database_is_adopted_in_postgres_and_rescored(store):
    from databases import back_to_hand_version
    from sqlalchemy import text

    from bargain.records import migrations
    from bargain.records.store import Store

    game = {
        "id": "g1",
        "player": "p",
        "human_role": "buyer",
        "arm": "tactic:linear",
        "scenario": "low:3",
        "seed": 7,
        "condition": "full",
        "mode": "simultaneous",
        "max_rounds": 4,
        "first_actor": "buyer",
        "buyer_price": 7.25,
        "seller_price": 5.5,
        "trial": {},
        "prompt_version": "train",
        "parsing": "strict",
    }
    store.create_game(**game)
    store.add_moves(
        "g1",
        [
            {
                "round": 1,
                "role": "buyer",
                "actor": "human",
                "action": "NO_DEAL",
                "price": None,
                "message": "my budget is 3",
            }
        ],
    )
    store.engine.dispose()
    back_to_hand_version(URL, 1)
    with store.engine.begin() as connection:  # finished with the paper's rounds
        connection.execute(text("UPDATE games SET status = 'finished', rounds = 4, deal = false"))
    store.engine.dispose()
    upgraded = Store(URL)
    row = upgraded.game("g1")
    assert upgraded.upgraded == (None, migrations.head())
    assert (row["rounds"], row["paper_rounds"]) == (1, 4) and row["claims"] is None  # findings: only by rescore
    assert upgraded.rescore() == 1
    row = upgraded.game("g1")
    assert row["agent_misstated"] is False
    assert [(c["role"], c["kind"], c["said"]) for c in row["claims"]] == [("buyer", "own_limit", 3.0)]


def test_processes_starting_together_on_an_empty_database_all_open_it_and_register_the_study_once(store):
    """Eight openings at once on an empty database (as app processes started together): each gets the tables,
    none fails on another's CREATE, and the study is recorded once."""
    import threading

    from databases import emptied
    from sqlalchemy import create_engine, func, select

    from bargain.records.store import Store
    from bargain.study import records

    engine = create_engine(emptied(URL))
    errors: list[str] = []
    start = threading.Barrier(8)

    def open_and_register() -> None:
        start.wait()
        try:
            opened = Store(URL)
            records.register(opened, "together", 1, "d" * 64, {}, {"a/full/buyer": 3})
            opened.engine.dispose()
        except Exception as exc:  # reported below
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=open_and_register) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(records.CellRow.__table__)).scalar() == 1
    engine.dispose()
