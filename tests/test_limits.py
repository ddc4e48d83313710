"""Limits a caller cannot choose their way around: game starts keyed on the address, forwarded addresses trusted
only as far as the configured proxies, and an admin password that wrong guesses slow down but never lock out. The
counts are kept in the database, so they hold across the app processes that share it: two stores on one database
stand for two processes (one SQLite file, and PostgreSQL where BARGAIN_TEST_POSTGRES_URL names a scratch database),
and a slow test starts games through real app processes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import gradio as gr
import httpx
import pytest
from arena_helpers import free_port, launch
from databases import POSTGRES, emptied, processes_database
from sqlalchemy import select, text
from starlette.requests import Request

from bargain import app as arena_app
from bargain.arena.controller import ArenaError
from bargain.arena.limits import AdminGate, StartLimits
from bargain.records.store import LimitEventRow, LimitFailureRow, Store
from bargain.web.common import client_address
from benchmarks.study import Replica, start_all

on_postgres = pytest.mark.skipif(not POSTGRES, reason="set BARGAIN_TEST_POSTGRES_URL to run against PostgreSQL")
BOTH = ["sqlite", pytest.param("postgresql", marks=on_postgres)]

START = ["buyer", "tactic:linear", "both_unaware", "simultaneous", 4, "low", "train", None, "buyer", None]


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def request(*forwarded: str, host: str = "10.0.0.9") -> gr.Request:
    """A request from `host` carrying these X-Forwarded-For header lines, in order."""
    scope = {
        "type": "http",
        "headers": [(b"x-forwarded-for", line.encode()) for line in forwarded],
        "client": (host, 5000),
    }
    return gr.Request(request=Request(scope))


def start_game(url: str, forwarded: list[str] = (), session: str | None = None) -> tuple[int, dict]:
    """Start a game as any program can, with X-Forwarded-For lines and a session hash of its own choosing."""
    body = {"data": START, **({"session_hash": session} if session else {})}
    headers = [("content-type", "application/json"), *(("x-forwarded-for", line) for line in forwarded)]
    response = httpx.post(f"{url}gradio_api/run/start_game", content=json.dumps(body), headers=headers, timeout=60)
    return response.status_code, response.json()


def refused(answer: tuple[int, dict]) -> bool:
    return "Too many games started" in json.dumps(answer[1])


def database(kind: str, tmp_path: Path) -> str:
    """An empty database of `kind`: a SQLite file, or the scratch PostgreSQL database emptied."""
    return emptied(POSTGRES) if kind == "postgresql" else f"sqlite:///{tmp_path / 'arena.db'}"


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    """A store on a new SQLite file, where the limits count."""
    opened = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    yield opened
    opened.engine.dispose()


@pytest.fixture
def stores(request, tmp_path) -> Iterator[tuple[Store, Store]]:
    """Two stores on one database, as two app processes hold (of the kind the test is parametrised with)."""
    url = database(getattr(request, "param", "sqlite"), tmp_path)
    pair = Store(url), Store(url)
    yield pair
    for opened in pair:
        opened.engine.dispose()


# --- forwarded addresses ------------------------------------------------------------------------------


def test_the_address_is_what_the_trusted_proxies_saw():
    assert client_address(request("1.2.3.4"), 0) == "10.0.0.9"  # no proxy trusted: the header is the caller's say-so
    assert client_address(request("6.6.6.6, 1.2.3.4"), 1) == "1.2.3.4"
    assert client_address(request("6.6.6.6, 1.2.3.4, 172.16.0.2"), 2) == "1.2.3.4"
    assert client_address(request("6.6.6.6", "1.2.3.4, 172.16.0.2"), 2) == "1.2.3.4"
    assert client_address(request(), 1) == "10.0.0.9"
    assert client_address(None, 1) == "unknown"


def test_a_spoofed_forwarded_header_does_not_change_the_address():
    # The caller's own X-Forwarded-For line comes first; the proxy adds its own line after it.
    assert client_address(request("6.6.6.6", "1.2.3.4"), 1) == "1.2.3.4"
    assert client_address(request("6.6.6.6, 7.7.7.7", " 1.2.3.4 "), 1) == "1.2.3.4"


def test_a_request_that_did_not_pass_every_trusted_proxy_counts_as_the_connection():
    assert client_address(request("1.2.3.4"), 2) == "10.0.0.9"
    assert client_address(request("", "1.2.3.4"), 2) == "10.0.0.9"


def test_the_number_of_trusted_proxies_is_a_flag(monkeypatch):
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("BARGAIN_TRUSTED_PROXIES", raising=False)
    assert arena_app.parse_args([]).trusted_proxies == 0
    assert arena_app.parse_args(["--trusted-proxies", "2"]).trusted_proxies == 2
    assert arena_app.parse_args(["--behind-proxy"]).trusted_proxies == 1
    monkeypatch.setenv("BARGAIN_TRUSTED_PROXIES", "3")
    assert arena_app.parse_args([]).trusted_proxies == 3
    monkeypatch.delenv("BARGAIN_TRUSTED_PROXIES")
    monkeypatch.setenv("SPACE_ID", "lab/arena")  # behind Hugging Face's proxy
    assert arena_app.parse_args([]).trusted_proxies == 1
    assert arena_app.parse_args(["--no-behind-proxy"]).trusted_proxies == 0
    with pytest.raises(SystemExit):
        arena_app.parse_args(["--trusted-proxies", "-1"])


# --- game starts through the API -------------------------------------------------------------------------


def test_a_new_session_hash_does_not_start_more_games(tmp_path):
    running = launch(tmp_path / "arena.db", "--games-per-hour", "3", "--games-per-hour-per-address", "100")
    try:
        for _ in range(3):
            assert not refused(start_game(running.url, session=uuid.uuid4().hex))
        assert refused(start_game(running.url, session=uuid.uuid4().hex))
        assert refused(start_game(running.url))
    finally:
        running.demo.close()


def test_api_callers_are_counted_by_the_address_the_proxy_saw(tmp_path):
    running = launch(
        tmp_path / "arena.db", "--games-per-hour", "3", "--games-per-hour-per-address", "100", "--behind-proxy"
    )
    try:
        for n in range(3):  # a spoofed line of the caller's own, then the one the proxy added; a new session each
            assert not refused(start_game(running.url, [f"6.6.6.{n}", "1.2.3.4"], uuid.uuid4().hex))
        assert refused(start_game(running.url, ["6.6.6.9", "1.2.3.4"], uuid.uuid4().hex))
        assert refused(start_game(running.url, ["6.6.6.8, 1.2.3.4"], uuid.uuid4().hex))
        for _ in range(3):  # callers without a session hash are not one caller
            assert not refused(start_game(running.url, ["5.6.7.8"]))
        assert not refused(start_game(running.url, ["9.9.9.9"]))
        assert refused(start_game(running.url, ["5.6.7.8"]))
    finally:
        running.demo.close()


# --- the admin password ---------------------------------------------------------------------------------


def test_wrong_passwords_from_everywhere_never_lock_out_the_right_one(store):
    gate = AdminGate("right", store)
    for n in range(200):
        with pytest.raises(ArenaError, match="Wrong admin password"):
            gate.check("guess", f"10.0.{n}.1")
    gate.check("right", "1.2.3.4")


def test_wrong_passwords_slow_down_the_address_that_sends_them(store):
    clock = Clock()
    gate = AdminGate("right", store, clock)
    for _ in range(4):  # three are free; the fourth costs a wait of 10 seconds
        with pytest.raises(ArenaError, match="Wrong admin password"):
            gate.check("guess", "6.6.6.6")
    with pytest.raises(ArenaError, match="Too many wrong passwords from here: try again in 10 seconds"):
        gate.check("right", "6.6.6.6")  # while it waits, not even compared: the same refusal for the right one
    gate.check("right", "1.2.3.4")  # nobody else waits
    clock.now += 10
    with pytest.raises(ArenaError, match="Wrong admin password"):
        gate.check("guess", "6.6.6.6")
    clock.now += 19  # each wrong one doubles the wait
    with pytest.raises(ArenaError, match="Too many wrong passwords"):
        gate.check("guess", "6.6.6.6")
    clock.now += 1
    gate.check("right", "6.6.6.6")
    for _ in range(20):  # a guesser that keeps going waits at most 15 minutes a guess
        clock.now += 900
        with pytest.raises(ArenaError, match="Wrong admin password"):
            gate.check("guess", "6.6.6.6")
    with pytest.raises(ArenaError, match="try again in 15 minutes"):
        gate.check("right", "6.6.6.6")
    clock.now += 3600  # an hour without a wrong guess: forgotten
    for _ in range(3):
        with pytest.raises(ArenaError, match="Wrong admin password"):
            gate.check("guess", "6.6.6.6")


def test_many_wrong_passwords_from_everywhere_withdraw_the_free_guesses(store):
    clock = Clock()
    gate = AdminGate("right", store, clock)
    for n in range(50):
        with pytest.raises(ArenaError, match="Wrong admin password"):
            gate.check("guess", f"10.0.{n}.1")
    with pytest.raises(ArenaError, match="Wrong admin password"):
        gate.check("typo", "1.2.3.4")
    with pytest.raises(ArenaError, match="try again in 10 seconds"):
        gate.check("right", "1.2.3.4")  # a wait after the first wrong guess, not the fourth
    gate.check("right", "5.6.7.8")  # an address that guessed nothing is let in at once
    clock.now += 10
    gate.check("right", "1.2.3.4")
    with pytest.raises(ArenaError, match="disabled"):
        AdminGate(None, store).check("anything", "1.2.3.4")


# --- counted in the database, across processes -------------------------------------------------------------


@pytest.mark.parametrize("stores", BOTH, indirect=True)
def test_a_browser_starts_its_games_per_hour_in_all_across_two_processes(stores):
    clock = Clock()
    first, second = (StartLimits(s, per_browser=4, clock=clock) for s in stores)
    for n in range(4):  # each process has counted two: in memory, each would let two more through
        (first, second)[n % 2].check("browser", f"10.0.0.{n}")
    for limits in (first, second):
        with pytest.raises(ArenaError, match="Too many games started from here in the last hour: wait 60 minutes"):
            limits.check("browser", "10.0.0.9")
    second.check("another browser", "10.0.0.9")  # the refusals counted nothing
    clock.now += 3600
    first.check("browser", "10.0.0.9")


@pytest.mark.parametrize("stores", BOTH, indirect=True)
def test_wrong_passwords_sent_to_two_processes_wait_after_three_in_all(stores):
    clock = Clock()
    gates = [AdminGate("right", s, clock) for s in stores]
    for n in range(4):  # three free in all, then a wait of 10 seconds: in memory, each process would allow three
        with pytest.raises(ArenaError, match="Wrong admin password"):
            gates[n % 2].check("guess", "6.6.6.6")
    for gate in gates:
        with pytest.raises(ArenaError, match="Too many wrong passwords from here: try again in 10 seconds"):
            gate.check("right", "6.6.6.6")
    clock.now += 10
    gates[1].check("right", "6.6.6.6")


@pytest.mark.parametrize("stores", BOTH, indirect=True)
def test_starts_at_the_same_time_on_two_processes_are_counted_each_once(stores):
    limits = [StartLimits(s, per_browser=10) for s in stores]
    started: list[int] = []

    def starts(limit: StartLimits) -> None:
        for _ in range(5):
            try:
                limit.check("browser", "10.0.0.1")
                started.append(1)
            except ArenaError:
                pass

    threads = [threading.Thread(target=starts, args=(limits[n % 2],)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(started) == 10  # 40 tries: each check and its count took their turn


def test_events_past_their_window_are_deleted_and_addresses_are_stored_hashed(store):
    clock = Clock()
    limits, gate = StartLimits(store, clock=clock), AdminGate("right", store, clock)
    limits.check("browser", "10.1.2.3")
    limits.check("browser", "10.1.2.3")
    with pytest.raises(ArenaError, match="Wrong admin password"):
        gate.check("guess", "10.1.2.3")
    clock.now += 3600
    limits.check("browser", "10.1.2.3")  # the two earlier starts of this browser and address fall out of the window
    with pytest.raises(ArenaError, match="Wrong admin password"):
        gate.check("guess", "10.1.2.3")  # an hour without a wrong one: the address starts afresh
    with store.reading() as session:
        events = session.execute(select(LimitEventRow.name, LimitEventRow.key, LimitEventRow.at)).all()
        failures = session.execute(select(LimitFailureRow.key, LimitFailureRow.failures)).all()
    address = hashlib.sha256(b"10.1.2.3").hexdigest()
    assert sorted(events) == [
        ("games per address", address, 4600.0),
        ("games per browser", hashlib.sha256(b"browser").hexdigest(), 4600.0),
        ("wrong admin passwords", hashlib.sha256(b"*").hexdigest(), 4600.0),
    ]
    assert failures == [(address, 1)]


def test_a_database_that_fails_refuses_in_a_sentence_and_logs_why(store, caplog):
    with store.engine.begin() as connection:
        connection.execute(text("DROP TABLE limit_events"))
        connection.execute(text("DROP TABLE limit_failures"))
    with caplog.at_level(logging.ERROR, logger="bargain.arena.limits"):
        with pytest.raises(ArenaError, match=r"^The server cannot count the games started from here right now, so"):
            StartLimits(store).check("browser", "10.0.0.1")
        with pytest.raises(ArenaError, match=r"^The server cannot check the admin password right now: try again"):
            AdminGate("right", store).check("right", "10.0.0.1")
    assert [r.getMessage().count("no such table") for r in caplog.records] == [1, 1]


@pytest.mark.slow
def test_an_address_starts_its_games_per_hour_in_all_across_app_processes(tmp_path):
    """Through real app processes: two on PostgreSQL where the tests have one, else one on SQLite
    (databases.processes_database); the count across two processes on each kind is the two-store tests' above."""
    db, count = processes_database(tmp_path)
    flags = ["--db", db, "--games-per-hour-per-address", "3"]
    replicas = [Replica([*flags, "--port", str(free_port())], tmp_path / f"t{i}.json") for i in range(count)]
    start_all(replicas)
    try:
        urls = [f"http://127.0.0.1:{r.port}/" for r in replicas]
        for n in range(3):
            assert not refused(start_game(urls[n % len(urls)]))
        assert all(refused(start_game(url)) for url in urls)
    finally:
        for replica in replicas:
            replica.stop()
