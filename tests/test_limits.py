"""Limits a caller cannot choose their way around: game starts keyed on the address, forwarded addresses trusted
only as far as the configured proxies, and an admin password that wrong guesses slow down but never lock out.
"""

from __future__ import annotations

import json
import uuid

import gradio as gr
import httpx
import pytest
from arena_helpers import launch
from starlette.requests import Request

from bargain import app as arena_app
from bargain.arena.controller import ArenaError
from bargain.arena.limits import AdminGate
from bargain.arena.ui import client_address

START = ["buyer", "tactic:linear", "both_unaware", "simultaneous", 4, "low", "train", None, "buyer"]


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


def gate_with(clock: Clock) -> AdminGate:
    """The default gate, on a clock the test moves."""
    gate = AdminGate("right")
    gate.per_address.clock = gate.overall.clock = clock
    return gate


def test_wrong_passwords_from_everywhere_never_lock_out_the_right_one():
    gate = AdminGate("right")
    for n in range(200):
        with pytest.raises(ArenaError, match="Wrong admin password"):
            gate.check("guess", f"10.0.{n}.1")
    gate.check("right", "1.2.3.4")


def test_wrong_passwords_slow_down_the_address_that_sends_them():
    clock = Clock()
    gate = gate_with(clock)
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


def test_many_wrong_passwords_from_everywhere_withdraw_the_free_guesses():
    clock = Clock()
    gate = gate_with(clock)
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
        AdminGate(None).check("anything", "1.2.3.4")
