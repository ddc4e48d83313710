"""Shared by the arena's end-to-end tests: start the app, play through its API, drive headless Chromium."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from gradio_client import Client

from bargain import app as arena_app
from bargain.agents.backends import Completion
from bargain.agents.backends.canned import CannedBackend, canned_reply
from bargain.arena.views import PersonView
from bargain.records.store import Store
from bargain.web import launch_settings
from bargain.web.common import sentence

# Debian's headless shell where it is installed (Chromium without its windowing layers: a browser test spends about a
# third less CPU in it), else Debian's Chromium; Playwright drives either the same way.
CHROMIUM = next(
    (path for path in ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium") if Path(path).exists()),
    "/usr/bin/chromium",
)
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class Slow(CannedBackend):
    """Canned replies after `delay` seconds, and not before `gate` (when given) is set: a model that thinks, for a
    fixed time (a round in flight long enough to be overtaken) or until a test has seen what it shows meanwhile."""

    name, instant = "slow", False

    def __init__(self, delay: float = 0.0, gate: threading.Event | None = None):
        self.delay, self.gate = delay, gate

    async def complete(self, request):
        await asyncio.sleep(self.delay)
        while self.gate is not None and not self.gate.is_set():
            await asyncio.sleep(0.02)
        return Completion(
            text=canned_reply(request.messages),
            prompt_tokens=1,
            completion_tokens=1,
            latency_s=self.delay,
            model=request.model,
            finish_reason="stop",
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url: str, api: str, *data) -> dict:
    """One call of the app's named endpoint `api` over plain HTTP (one outside the queue), as any program may make
    it: the answer's data."""
    answer = httpx.post(f"{url}gradio_api/run/{api}", json={"data": list(data)}, timeout=60)
    assert answer.status_code == 200, answer.text
    return answer.json()["data"][0]


def serve(demo, arena, db: Path | None = None, port: int | None = None) -> SimpleNamespace:
    """Launch a built app on a free local port (in this process, not blocking)."""
    _, url, _ = demo.launch(
        server_name="127.0.0.1",
        server_port=port or free_port(),
        prevent_thread_lock=True,
        quiet=True,
        **launch_settings(demo),
    )
    return SimpleNamespace(url=url, demo=demo, arena=arena, db=db)


def launch(db: Path, *extra: str, port: int | None = None) -> SimpleNamespace:
    """The app as `python app.py` builds it, with an admin password and a browser secret."""
    args = arena_app.parse_args(
        ["--db", str(db), "--admin-password", "s3cret", "--browser-secret", "test-secret", *extra]
    )
    demo, arena = arena_app.build(args)
    return serve(demo, arena, db, port)


def start(client: Client, **setup) -> dict:
    return client.predict(
        **{
            "role": "buyer",
            "opponent": "tactic:linear",
            "condition": "both_unaware",
            "mode": "simultaneous",
            "rounds": 4,
            "scenario": "low",
            "prompt_version": "train",
            "player": None,
            **setup,
        },
        api_name="/start_game",
    )


def play(client: Client, view: dict, action: str = "OFFER", price: float | None = None, message: str = "") -> dict:
    if price is None:  # concede a little each round from a low opening
        price = round(
            view["your_price"] * (0.6 + 0.1 * view["round"])
            if view["role"] == "buyer"
            else view["your_price"] * (1.6 - 0.1 * view["round"]),
            2,
        )
    return client.predict(
        game_id=view["game_id"],
        round=view["round"],
        action=action,
        price=str(price),
        message=message,
        api_name="/play_move",
    )


def play_out(client: Client, view: dict) -> list[dict]:
    views = [view]
    while views[-1]["status"] == "active":
        views.append(play(client, views[-1], message=f"round {views[-1]['round']}"))
    return views


def stored(db: Path, game_id: str) -> dict:
    return Store(f"sqlite:///{db}").game(game_id)


def keep_screenshot(shot: Path, name: str | None = None) -> None:
    """A test's screenshot copied, under `name` (else its own), where BARGAIN_SCREENSHOTS names a folder: for looking
    at how the pages read."""
    folder = os.environ.get("BARGAIN_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(folder) / (name or shot.name))


def need_browser() -> None:
    if not Path(CHROMIUM).exists() and not os.environ.get("BARGAIN_REQUIRE_BROWSER"):
        pytest.skip("Debian's Chromium is not installed (apt-get install -y chromium-headless-shell)")


@contextmanager
def browser_page(url: str, height: int = 1600) -> Iterator:
    """A headless Chromium page on `url` (Debian's chromium, driven by Playwright)."""
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": height})
            page.goto(url)
            yield page
        finally:
            browser.close()


def admin(page, button: str, password: str = "s3cret") -> None:
    """Press `button` first with a wrong admin password (refused, in the project's own sentence), then with the
    right one, at once: nothing waits under the refusal's toast (it stays ten seconds, at the top right)."""
    page.get_by_label("Admin password").fill("wrong")
    page.get_by_role("button", name=button).click()
    page.wait_for_selector("text=Wrong admin password", timeout=20000)
    page.get_by_label("Admin password").fill(password)
    page.get_by_role("button", name=button).click(timeout=5000)


def refused(url: str, api: str, *data) -> str:
    """The project's sentence with which the app's named endpoint `api` refuses a call (which must be refused)."""
    answer = httpx.post(f"{url}gradio_api/run/{api}", json={"data": list(data)}, timeout=60)
    assert answer.status_code != 200, answer.text
    return answer.json()["error"]


def a_view(**changes) -> PersonView:
    """A person's view of a game in its first round, their turn, changed as given."""
    view = PersonView(
        game_id="g1",
        status="active",
        role="buyer",
        condition="both_unaware",
        mode="simultaneous",
        round=1,
        max_rounds=4,
        item="Rice",
        description="A bag of rice.",
        persona="You cook.",
        your_price=3.0,
        their_price=None,
        their_price_prior=[1.0, 2.0],
        your_price_prior=[2.5, 3.5],
        transcript=[],
        other="agent",
        your_turn=True,
        actions=["OFFER", "NO_DEAL"],
        retry=False,
        thinking=False,
        notice=None,
        error=None,
        outcome=None,
        debrief=None,
        seconds_left=None,
        waiting_s=None,
        invitation=None,
    )
    return dataclasses.replace(view, **changes)


def says(error: str, words: str) -> bool:
    """Whether a refusal people are shown says `words` (as the controller words them, lower-case where they lead a
    sentence), and starts as a sentence does: never with a lower-case letter."""
    return not error[:1].islower() and (words in error or sentence(words) in error)
