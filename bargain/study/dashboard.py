"""What the researcher running a study sees: the funnel, the cells against their quotas, how long each
page takes, recent games with both sides' private information side by side, and who is excluded.

Plain tables computed from the records (bargain.study.records) and the arena's games; the study's
page shows them behind the admin password (bargain.web.study_page). Nothing here is shown to participants.
"""

from __future__ import annotations

import statistics
from datetime import datetime

import pandas as pd
from sqlalchemy import select

from bargain.arena import PERSON
from bargain.arena.views import plain
from bargain.records.store import GameRow, SeatRow, Store
from bargain.study.records import cell_counts, participants, shared_browsers

# The funnel's steps: how many participants reached each (a stage reached implies the ones before it).
FUNNEL = (
    ("arrived", None),
    ("consented", "instructions"),
    ("passed the check", "game"),
    ("finished their games", "final_survey"),
    ("completed", "completed"),
)
ENDINGS = ("screened_out", "declined", "dropped", "full")


def funnel(store: Store, study: str, version: int) -> pd.DataFrame:
    """Participants who reached each step, and how many ended each other way."""
    people = participants(store, study, [version])
    rows = [
        {"step": name, "participants": sum(1 for p in people if stage is None or stage in p["stage_times"])}
        for name, stage in FUNNEL
    ]
    rows += [
        {"step": ending.replace("_", " "), "participants": sum(p["stage"] == ending for p in people)}
        for ending in ENDINGS
    ]
    rows.append({"step": "now in a game", "participants": sum(p["stage"] == "game" for p in people)})
    return pd.DataFrame(rows + _pairing(store, study, {p["participant"] for p in people}))


def _pairing(store: Store, study: str, people: set[str]) -> list[dict]:
    """For a study with a person arm (its participants have seats): how many wait for a partner now, how many were
    paired, and how many waited out `pairing.max_wait_s`, of whom how many played the program arm instead."""
    with store.reading() as session:
        seats = session.execute(
            select(SeatRow.person, GameRow.status)
            .join(GameRow, GameRow.id == SeatRow.game_id)
            .where(SeatRow.study == study, SeatRow.person.is_not(None))
        ).all()
        if not seats:
            return []
        programs = session.execute(
            select(GameRow.participant, GameRow.extra).where(GameRow.study == study, GameRow.arm != PERSON)
        ).all()
    seated = [(person, status) for person, status in seats if person in people]

    def count(statuses: tuple[str, ...]) -> int:
        return len({person for person, status in seated if status in statuses})

    instead = {who for who, extra in programs if who in people and (extra or {}).get("instead_of") == PERSON}
    return [
        {"step": "waiting for a partner now", "participants": count(("waiting",))},
        {"step": "paired with another participant", "participants": count(("active", "finished"))},
        {"step": "unpaired after the longest wait", "participants": count(("cancelled",))},
        {"step": "unpaired: played the program arm instead", "participants": len(instead)},
    ]


def cells(store: Store, study: str, version: int) -> pd.DataFrame:
    """Each cell's slots taken against its quota."""
    counts = cell_counts(store, study, version)
    return pd.DataFrame(
        [
            {"cell": cell, "taken": taken, "quota": quota, "left": quota - taken}
            for cell, (taken, quota) in sorted(counts.items())
        ],
        columns=["cell", "taken", "quota", "left"],
    )


def page_times(store: Store, study: str, version: int) -> pd.DataFrame:
    """Median seconds participants spent on each page (from entering it to entering the next)."""
    spent: dict[str, list[float]] = {}
    for person in participants(store, study, [version]):
        entered = sorted((datetime.fromisoformat(at), stage) for stage, at in person["stage_times"].items())
        for (start, stage), (end, _) in zip(entered, entered[1:]):
            spent.setdefault(stage, []).append((end - start).total_seconds())
    return pd.DataFrame(
        [
            {"page": stage, "participants": len(values), "median_seconds": round(statistics.median(values), 1)}
            for stage, values in spent.items()
        ],
        columns=["page", "participants", "median_seconds"],
    )


def excluded(store: Store, study: str, version: int) -> pd.DataFrame:
    """Participants flagged by the study's exclusion rules, and why (their data is kept)."""
    people = [p for p in participants(store, study, [version]) if p["excluded"]]
    return pd.DataFrame(
        [
            {
                "participant": p["participant"],
                "reasons": "; ".join(p["exclusion_reasons"]),
                "attention_failures": p["attention_failures"],
                "timeouts": p["timeouts"],
            }
            for p in people
        ],
        columns=["participant", "reasons", "attention_failures", "timeouts"],
    )


def same_browser(store: Store, study: str, version: int) -> pd.DataFrame:
    """Participants who took part from a browser that another id of the study also came from (a person coming back
    under a new id, or people sharing a computer): flagged for a look, their data kept."""
    people = participants(store, study, [version])
    others = shared_browsers(people)
    rows = [
        {"participant": p["participant"], "other_ids_from_this_browser": others[p["id"]], "stage": p["stage"]}
        for p in people
        if others[p["id"]]
    ]
    return pd.DataFrame(rows, columns=["participant", "other_ids_from_this_browser", "stage"])


def recent_games(store: Store, study: str, limit: int = 50) -> pd.DataFrame:
    """The study's latest games (newest first) with what a transcript viewer needs to pick one."""
    with store.reading() as session:
        rows = (
            session.execute(
                select(
                    GameRow.id,
                    GameRow.created_at,
                    GameRow.participant,
                    GameRow.game_index,
                    GameRow.arm,
                    GameRow.condition,
                    GameRow.human_role,
                    GameRow.status,
                    GameRow.deal,
                    GameRow.deal_price,
                )
                .where(GameRow.study == study)
                .order_by(GameRow.created_at.desc())
                .limit(limit)
            )
            .mappings()
            .all()
        )
    table = pd.DataFrame(
        rows,
        columns=[
            "id",
            "created_at",
            "participant",
            "game_index",
            "arm",
            "condition",
            "human_role",
            "status",
            "deal",
            "deal_price",
        ],
    )
    between = table["arm"] == PERSON  # a game between two participants: both, as its seats name them
    if between.any():
        with store.reading() as session:
            seats = session.execute(
                select(SeatRow.game_id, SeatRow.person, SeatRow.game_index).where(
                    SeatRow.game_id.in_(table.loc[between, "id"].tolist())
                )
            ).all()
        people = {g: " & ".join(sorted(p for gg, p, _ in seats if gg == g and p)) or "nobody yet" for g, _, _ in seats}
        index = {g: i for g, p, i in seats if i is not None}
        table.loc[between, "participant"] = table.loc[between, "id"].map(people)
        table.loc[between, "game_index"] = table.loc[between, "id"].map(index)
        table.loc[between, "human_role"] = "both"  # not the role of whoever came first
    return table


def game_label(game) -> str:
    """A game as the admin's list names it, one of a kind: when, whose, which of their games, against what."""
    which = f"game {int(game.game_index)}" if game.game_index == game.game_index and game.game_index else "game ?"
    return f"{game.created_at:%Y-%m-%d %H:%M:%S} {game.participant} {which} vs {game.arm} ({game.status}) {game.id[:6]}"


def transcript_markdown(store: Store, game_id: str) -> str:
    """A game with both sides' private information side by side, then every move with the agent's thoughts."""
    game = store.game(game_id)
    if game is None:
        return "No such game."
    scenario = game["trial"].get("scenario", {})
    person, agent = game["human_role"], "seller" if game["human_role"] == "buyer" else "buyer"
    side = {person: f"participant ({person})", agent: f"agent ({agent}: {game['arm']})"}
    if game["arm"] == PERSON:  # both sides are participants: each named by their seat
        with store.reading() as session:
            seats = session.execute(select(SeatRow.role, SeatRow.person).where(SeatRow.game_id == game["id"]))
            seated = {role: who for role, who in seats}
        side = {role: f"participant {seated.get(role) or '(nobody yet)'} ({role})" for role in (person, agent)}
    head = (
        f"### {scenario.get('product_name', game['scenario'])}\n\n"
        f"Condition **{game['condition']}**, {game['mode']}, {game['max_rounds']} rounds; status **{game['status']}**"
        + (f", deal at {game['deal_price']:.2f}" if game["deal"] else "")
        + "\n\n"
        f"| | {side[person]} | {side[agent]} |\n|---|---|---|\n"
        f"| reservation price | {game[f'{person}_price']:.2f} | {game[f'{agent}_price']:.2f} |\n"
        f"| normalised utility | {_number(game[f'{person}_norm_utility'])} | {_number(game[f'{agent}_norm_utility'])} |"
    )
    lines = ["| round | who | move | message | agent's private strategy | flags |", "|---|---|---|---|---|---|"]
    for move in game["moves"]:
        who = move.get("person") or ("participant" if move["actor"] == "human" else "agent")
        did = (
            move["action"]
            + (f" {move['price']:.2f}" if move["price"] is not None else "")
            + (f" ({move['error']})" if move["error"] == "timeout" else "")
        )
        lines.append(
            f"| {move['round']} | {who} | {did} | {_cell(move['message'])} | {_cell(move['thought'])} | "
            f"{', '.join(move.get('flags') or [])} |"
        )
    return head + "\n\n" + "\n".join(lines)


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _cell(text: str | None) -> str:
    """Text in a Markdown table cell, shown as typed."""
    return plain(" ".join((text or "").split()))
