"""Two people on two app processes of one database: paired by the queue, every move of every round sent by both at
once, each looking at the game through the other process as it goes, one process killed and started again halfway.
Each look through the other process returns on the other's move, not at the end of its wait, and every game
holds each move exactly once. (How soon is a figure, the benchmark's: `python -m benchmarks.study --pairs`.)
On PostgreSQL where BARGAIN_TEST_POSTGRES_URL is set (CI starts it), else on one SQLite file."""

from __future__ import annotations

import statistics
import threading
import time
from pathlib import Path

import pytest
from arena_helpers import free_port, post
from databases import POSTGRES as URL
from databases import emptied

from bargain.records.store import Store
from benchmarks.study import Replica, start_all

pytestmark = pytest.mark.slow
PAIRS, ROUNDS = 4, 4


def play(db: str, tmp_path: Path) -> tuple[list[float], Store]:
    """Run the pairs through two processes; the seconds from a round being stored to the partner seeing it."""
    replicas = [Replica(["--db", db, "--port", str(free_port())], tmp_path / f"t{i}.json") for i in range(2)]
    start_all(replicas)
    urls = [f"http://127.0.0.1:{r.port}/" for r in replicas]
    seen: list[float] = []
    errors: list[str] = []

    def start(which: int, role: str, player: str) -> dict:
        settings = (role, "person:queue", "both_unaware", "simultaneous", ROUNDS, "low", "train", player, "buyer", None)
        return post(urls[which], "start_game", *settings)

    try:
        sellers = [start(1, "seller", f"seller{i}") for i in range(PAIRS)]  # they wait in the queue
        buyers = [start(0, "buyer", f"buyer{i}") for i in range(PAIRS)]  # each takes the oldest free seat
        assert all(v["status"] == "waiting" for v in sellers) and all(v["status"] == "active" for v in buyers)
        for round_ in range(1, ROUNDS + 1):
            if round_ == 3:  # a process dies and comes back: the people go on where they were
                replicas[1].kill()
                replicas[1].start()
            threads = []
            for buyer, seller in zip(buyers, sellers):

                def both(buyer: dict = buyer, seller: dict = seller, round_: int = round_) -> None:
                    try:
                        watch: dict = {}
                        watcher = threading.Thread(target=lambda: watch.update(seen_at(urls, seller, round_)))
                        watcher.start()  # the seller's page, looking through the other process, waits for the round
                        time.sleep(0.3)
                        sent = threading.Thread(
                            target=post,
                            args=(
                                urls[round_ % 2],
                                "play_move",
                                seller["game_id"],
                                round_,
                                "OFFER",
                                "15",
                                f"s{round_}",
                            ),
                        )
                        sent.start()
                        post(
                            urls[(round_ + 1) % 2], "play_move", buyer["game_id"], round_, "OFFER", "0.5", f"b{round_}"
                        )
                        stored = time.monotonic()
                        sent.join()
                        watcher.join()
                        seen.append(max(0.0, watch["at"] - max(stored, watch["sent"])))
                    except Exception as exc:  # reported below
                        errors.append(f"{type(exc).__name__}: {exc}")

                threads.append(threading.Thread(target=both))
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        for replica in replicas:
            replica.stop()
    assert errors == []
    return seen, Store(db)


def seen_at(urls: list[str], seller: dict, round_: int) -> dict:
    """When the seller's view (through the process the seller's move does not go to) shows the round settled."""
    sent = time.monotonic()
    while True:
        view = post(urls[(round_ + 1) % 2], "get_game", seller["game_id"], 5.0)
        if view["round"] > round_ or view["status"] != "active":
            return {"at": time.monotonic(), "sent": sent}


def check(seen: list[float], store: Store) -> None:
    games = store.games_frame()
    people = games[games["arm"] == "person"]
    assert len(people) == PAIRS and set(people["status"]) == {"finished"}  # offers that never cross: no deal
    for game_id in people["id"]:
        moves = store.game(game_id)["moves"]  # each once: nothing lost, nothing applied twice
        assert sorted((m["round"], m["role"], m["message"]) for m in moves) == [
            (r, role, f"{role[0]}{r}") for r in range(1, ROUNDS + 1) for role in ("buyer", "seller")
        ]
    assert len(seen) == PAIRS * ROUNDS
    # p95 well under the look's 5 s wait: the look returned on the move (in about POLL_S, 0.2 s, unloaded); a timed
    # bound tighter than this fails on a loaded machine (1.05 s once, beside the rest of the suite)
    assert statistics.quantiles(seen, n=20)[-1] < 2.5, seen


def test_two_people_on_two_processes_of_one_database_see_each_move_once_as_it_is_stored(tmp_path):
    check(*play(emptied(URL) if URL else f"sqlite:///{tmp_path / 'people.db'}", tmp_path))
