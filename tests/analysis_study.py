"""A small study run through the real StudyRunner and exported, for the analysis's tests: a within design of two
tactic arms (linear, boulware) and a person arm, both roles, two conditions, 3 games per participant (one against
each arm), surveys with the built-in ratings and a scale, an attention check that excludes, and participants who
bargain differently: some meet halfway (deals), some lowball (no deals), some misstate their limit.
"""

from __future__ import annotations

import asyncio
import random
import textwrap
from pathlib import Path

from bargain.agents.backends import Backends
from bargain.arena.controller import Arena
from bargain.records.store import Store
from bargain.study.config import load
from bargain.study.export import export_study
from bargain.study.flow import StudyRunner

STUDY = """
name: analyse-test
version: 1
arms:
  lin: {spec: "tactic:linear", label: the other party}
  hard: {spec: "tactic:boulware", label: the other party}
  peer: {spec: person, label: the other party}
cells: {arms: [lin, hard, peer], conditions: [both_unaware, buyer_unaware], roles: [buyer, seller]}
rounds: 2
scenarios: {split: test}
games_per_participant: 3
design: {assignment: within, quota_per_cell: QUOTA, order: random, distinct_arms: true}
texts: {consent: consent.md, instructions: instructions.md, debrief: debrief.md, consent_version: "1"}
comprehension:
  attempts: 2
  questions:
    - {id: no_deal, text: "No deal pays?", options: [Nothing, Everything], answer: Nothing}
attention_checks:
  - {id: attention, text: "Choose Rarely", options: [Never, Rarely], answer: Rarely, after_game: 2}
surveys:
  per_game:
    - builtin: honesty
    - builtin: credulity
    - {id: satisfied, type: likert, text: "Satisfied?", scale: [1, 7], anchors: ["Not at all", "Very"]}
  final: []
pairing: {max_wait_s: 600, otherwise: lin}
timing: {move_seconds: 60, idle_minutes: 20}
payment:
  currency: GBP
  base: 2.0
  bonus: {per_unit: 1.0, cap: 2.0}
  timeout_rule: bonus_as_played
completion: {code: DONE123, screened_out_code: OUT456, declined_message: "You chose not to take part."}
exclusions:
  - failed_attention_checks_over: 0
participant_id: {id_pattern: "[A-Za-z0-9_-]{1,64}"}
"""
CELLS = 12  # 3 arms x 2 conditions x 2 roles


def write_study(folder: Path, participants: int) -> Path:
    """The study file and its texts in `folder`, each cell's quota one `participants`-th of the games."""
    for name in ("consent.md", "instructions.md", "debrief.md"):
        (folder / name).write_text("Text.")
    quota = participants * 3 // CELLS
    (folder / "study.yaml").write_text(textwrap.dedent(STUDY).replace("QUOTA", str(quota)))
    return folder / "study.yaml"


async def take_part(run: StudyRunner, who: str, style: int) -> None:
    """One participant from consent to completion; `style` and a draw seeded by who they are and which game pick how
    they bargain and rate, so that both vary within and between participants: meet halfway, lowball and misstate
    their limit (more often with style 1), or meet halfway and misstate. Style 3 fails the attention check (and is
    excluded)."""
    params = {"participant": who}
    await run.submit(params, "consent", {"agree": True})
    await run.submit(params, "instructions", {})
    page = await run.submit(params, "comprehension", {"no_deal": "Nothing"})
    store = run.arena.store
    while page.stage in ("game", "game_survey"):
        if page.stage == "game_survey":
            draw = random.Random(f"{who}-{page.game}-survey")
            answers = {item["id"]: draw.choice(item["options"]) for item in page.items[:2]}
            answers["satisfied"] = draw.randint(1, 7)
            answers["attention"] = "Never" if style == 3 else "Rarely"
            page = await run.submit(params, "game_survey", {k: v for k, v in answers.items() if k in _ids(page)})
            continue
        view = page.view
        if view.status == "waiting" or view.thinking:
            page = await run.page(params, wait_s=1)
            continue
        game = store.game(view.game_id)
        role = view.role
        middle = (game["buyer_price"] + game["seller_price"]) / 2
        lowball = game["seller_price"] * 0.5 if role == "buyer" else game["buyer_price"] * 1.5
        how = random.Random(f"{who}-{page.game}").choice([0, 1, 2, 1 if style == 1 else 0])
        price = lowball if how == 1 else middle
        limit = view.your_price * (0.7 if role == "buyer" else 1.3)
        said = "pay more than" if role == "buyer" else "sell for less than"
        message = f"I cannot {said} {limit:.2f}." if how in (1, 2) else "Fair?"
        page = await run.submit(
            params, "game", {"round": view.round, "action": "OFFER", "price": f"{price:.2f}", "message": message}
        )
    while page.stage in ("final_survey", "debrief"):
        page = await run.submit(params, page.stage, {})


def _ids(page: dict) -> set[str]:
    return {item["id"] for item in page.items}


def run_and_export(folder: Path, participants: int = 8) -> Path:
    """Run `participants` (a multiple of 4) through the study at once, so that those of the person arm pair, and
    export it; returns the export's folder."""
    study = load(write_study(folder, participants))
    arena = Arena(Store(f"sqlite:///{folder / 'study.db'}"), Backends(), arms=["tactic:linear", "tactic:boulware"])
    run = StudyRunner(study, arena)

    async def everyone() -> None:
        await asyncio.gather(*(take_part(run, f"P{i:02d}", i % 4) for i in range(participants)))

    asyncio.run(everyone())
    export_study(arena.store, "analyse-test", out_dir=folder / "export")
    return folder / "export"
