"""The JSON a program is sent for a person's view of a game, recorded once in tests/data/views/*.json and compared
with what the views serialise to now (tests/test_views.py): free play, a game between people (waiting, then begun),
a finished game, and a study's game page after a move. Each scenario is replayed with fixed seeds; what differs
from one run to the next (ids, tokens, clocks) is written as a placeholder of its type.

Record anew (only when the JSON is meant to change): `python tests/view_payloads.py`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # run as a script: the tests' helpers and the package

from bargain.agents.backends import Backends  # noqa: E402
from bargain.arena.controller import Arena  # noqa: E402
from bargain.arena.inputs import Setup  # noqa: E402
from bargain.arena.people import INVITE  # noqa: E402
from bargain.arena.views import PersonView  # noqa: E402
from bargain.engine.trial import Role  # noqa: E402
from bargain.records.store import Store  # noqa: E402
from bargain.study.flow import ParticipantPage, StudyRunner  # noqa: E402

RECORDED = HERE / "data" / "views"
VOLATILE = {"game_id": "<game_id>", "invitation": "<invitation>", "waiting_s": 1.0, "seconds_left": 60.0}


def steady(value: object) -> object:
    """`value` with what changes between runs (VOLATILE keys that are set) replaced by placeholders."""
    if isinstance(value, dict):
        return {k: VOLATILE[k] if k in VOLATILE and v is not None else steady(v) for k, v in value.items()}
    if isinstance(value, list):
        return [steady(v) for v in value]
    return value


def as_json(view: PersonView | ParticipantPage) -> str:
    """A view as the API sends it (`to_json`), placeholders in, written with sorted keys."""
    return json.dumps(steady(view.to_json()), sort_keys=True, indent=1) + "\n"


async def free_play(folder: Path) -> dict[str, PersonView | ParticipantPage]:
    arena = Arena(Store(f"sqlite:///{folder / 'free.db'}"), Backends())
    first = await arena.start(Setup(role=Role.BUYER, arm="tactic:linear", seed=11, rounds=3), player="p1")
    moved = await arena.move(first.game_id, 1, "OFFER", "1.00", "my final offer is 1.00")
    view = moved
    while view.status == "active":
        view = await arena.move(view.game_id, view.round, "OFFER", f"{view.your_price:.2f}", "take it")
    return {"free_play": moved, "finished": view}


async def people(folder: Path) -> dict[str, PersonView | ParticipantPage]:
    arena = Arena(Store(f"sqlite:///{folder / 'people.db'}"), Backends(), arms=["tactic:linear", INVITE])
    waiting = await arena.start(Setup(arm=INVITE, role=Role.BUYER, rounds=2, seed=5), player="alice")
    joined = await arena.join(waiting.invitation, "bob")
    return {"people_waiting": waiting, "people_active": joined}


async def study_move(folder: Path) -> dict[str, PersonView | ParticipantPage]:
    from test_study_flow import make_study

    runner = StudyRunner(
        make_study(folder), Arena(Store(f"sqlite:///{folder / 'study.db'}"), Backends(), arms=["tactic:hardliner"])
    )
    params = {"PROLIFIC_PID": "P1"}
    await runner.page(params)
    for stage, data in (("consent", {"agree": True}), ("instructions", {}), ("comprehension", {"no_deal": "Nothing"})):
        page = await runner.submit(params, stage, data)
    assert page.view is not None
    move = {"round": page.view.round, "action": "OFFER", "price": "1.00", "message": "hello"}
    return {"study_move": await runner.submit(params, "game", move)}


def payloads() -> dict[str, str]:
    """Every recorded scenario, by name, as JSON text (seeds fixed, the scenario drawn from them; a study's scenario,
    drawn among the items its participant has not met, the first of them)."""

    async def all_of(folder: Path) -> dict[str, PersonView | ParticipantPage]:
        return {**await free_play(folder), **await people(folder), **await study_move(folder)}

    with (
        tempfile.TemporaryDirectory() as folder,
        mock.patch("secrets.randbits", return_value=7),
        mock.patch("secrets.choice", lambda options: options[0]),
    ):
        views = asyncio.run(all_of(Path(folder)))
    return {name: as_json(view) for name, view in views.items()}


if __name__ == "__main__":
    RECORDED.mkdir(parents=True, exist_ok=True)
    for name, text in payloads().items():
        (RECORDED / f"{name}.json").write_text(text, encoding="utf-8")
        print("wrote", RECORDED / f"{name}.json")
