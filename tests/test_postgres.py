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
    from sqlalchemy import text

    from bargain.store import Store

    store = Store(URL)
    with store.engine.begin() as connection:
        connection.execute(text("DELETE FROM moves"))
        connection.execute(text("DELETE FROM games"))
    return store


def test_a_whole_game_is_stored_in_postgres(store, tmp_path):
    from bargain.arena.controller import Arena, Setup
    from bargain.agents.backends import Backends
    from bargain.store import SCHEMA_VERSION

    assert store.schema_version() == SCHEMA_VERSION

    async def game():
        arena = Arena(store, Backends(), idle_timeout=timedelta(hours=1))
        view = await arena.start(Setup(arm="tactic:boulware", seed=3), player="p1")
        while view["status"] == "active":
            view = await arena.move(view["game_id"], view["round"], "OFFER", view["your_price"] * 0.8, "hello")
        return view

    final = asyncio.run(game())
    row = store.game(final["game_id"])
    assert row["status"] == "finished" and row["trial"]["scenario"]["tier"] == "low"
    assert [m["seq"] for m in row["moves"]] == list(range(len(final["transcript"])))
    assert len(store.games_frame("p1")) == 1
    written = store.export(tmp_path)
    assert final["game_id"] in (tmp_path / "games.csv").read_text() and len(written) == 4
