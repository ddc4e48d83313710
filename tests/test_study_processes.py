"""Two real app processes serving one study on PostgreSQL: 50 participants arrive at once, quotas stay
exact, nobody is assigned twice, and participants who reconnect to the other process mid-game go on
with nothing lost or duplicated. Runs where BARGAIN_TEST_POSTGRES_URL is set (CI starts PostgreSQL)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from arena_helpers import free_port
from gradio_client import Client
from test_study_flow import answers_for, make_study

URL = os.environ.get("BARGAIN_TEST_POSTGRES_URL")
ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not URL, reason="set BARGAIN_TEST_POSTGRES_URL")]


def serve(study: Path, port: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "app.py", "--db", URL, "--study", str(study), "--port", str(port),
                             "--concurrency", "80"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


def wait_until_up(port: int, process: subprocess.Popen) -> None:
    for _ in range(120):
        if process.poll() is not None:
            raise AssertionError(process.stderr.read())
        try:
            if httpx.get(f"http://127.0.0.1:{port}/", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError("the app did not start")


def test_fifty_participants_through_two_processes_keep_quotas_exact(tmp_path):
    from sqlalchemy import create_engine

    from bargain.store import Base, Store
    from bargain.study import records

    engine = create_engine(URL)
    Base.metadata.drop_all(engine)
    engine.dispose()
    make_study(tmp_path, quota=20)  # 2 cells x 20 games, 2 games each: room for 20 participants
    ports = [free_port(), free_port()]
    apps = [serve(tmp_path / "study.yaml", port) for port in ports]
    try:
        for port, app in zip(ports, apps):
            wait_until_up(port, app)
        clients = [[Client(f"http://127.0.0.1:{port}/", verbose=False) for port in ports] for _ in range(50)]
        outcome: dict[str, str] = {}
        errors: list[str] = []
        start = threading.Barrier(50)

        def participant(n: int) -> None:
            query = {"PROLIFIC_PID": f"P{n:02d}"}
            here, there = clients[n][n % 2], clients[n][(n + 1) % 2]

            def step(client, stage, data):
                return client.predict(query=query, stage=stage, data=data, api_name="/study_step")

            try:
                here.predict(query=query, api_name="/study_page")
                start.wait()
                step(here, "consent", {"agree": True})
                step(there, "instructions", {})
                page = step(here, "comprehension", {"no_deal": "Nothing"})
                moves = 0
                while page["stage"] not in ("completed", "full"):
                    client = here if moves % 2 == 0 else there  # every move reaches the other process than the last
                    if page["stage"] == "game":
                        game = page["view"]
                        page = step(client, "game", {"round": game["round"], "action": "OFFER", "message": "x",
                                                     "price": f"{game['your_price'] * 0.5:.2f}"})
                        moves += 1
                    elif page["stage"] in ("game_survey", "final_survey"):
                        page = step(client, page["stage"], answers_for(page, attention="Rarely"))
                    elif page["stage"] == "debrief":
                        page = step(client, "debrief", {})
                    else:
                        raise AssertionError(page)
                outcome[query["PROLIFIC_PID"]] = page["stage"]
            except Exception as exc:  # reported below
                errors.append(f"P{n:02d}: {type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=participant, args=(n,)) for n in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
        assert errors == []
        assert sorted(outcome.values()).count("completed") == 20 and list(outcome.values()).count("full") == 30
        store = Store(URL)
        counts = records.cell_counts(store, "flow-test", 1)
        assert counts == {"a/both_unaware/buyer": (20, 20), "b/both_unaware/buyer": (20, 20)}
        games = store.games_frame()
        assert len(games) == 40 and games["participant"].value_counts().max() == 2 and (games["status"] == "finished").all()
        moves = store.moves_frame()
        for game_id, rows in moves.groupby("game_id"):
            assert list(rows["seq"]) == list(range(len(rows))), game_id  # contiguous: nothing written twice
            assert len(rows) == 4 and sorted(rows["round"]) == [1, 1, 2, 2]
        assert len(set(games["driver"])) == 2  # both processes drove games
    finally:
        for app in apps:
            app.terminate()
            app.wait(30)
