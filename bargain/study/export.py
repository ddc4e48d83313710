"""A study's data, exported once for analysis, payment and publication.

`export_study` writes, for one study (one version, or all of them told apart by a `version` column):

- `participants`, `games`, `moves`, `surveys_long` and `surveys_wide`, each as CSV and Parquet, written as
  `Store.export` writes the arena's tables (`bargain.records.store.write_table`): Parquet holds every value exactly; CSV
  shows numbers to 10 significant digits and quotes any text cell a spreadsheet would run as a formula; JSON
  columns (a game's trial, a move's flags) are JSON text in both;
- `study.json`: the study's settings as its records hold them for each version exported (`Study.to_dict()`:
  arms, cells, design, rules, texts, surveys), which is what an analysis of the tables needs to know of the study,
  with what would let anyone claim a completion withheld (the completion codes; `WITHHELD`) and the file's path
  on the researcher's machine left out, so that it is published with the tables;
- `codebook.md` and `codebook.csv`: every column of every file written (and every key of study.json), with its type
  (read from the data) and a one-line description drawn from `DESCRIPTIONS`, the one table of them, so that a
  column added to a file without its description shows as undescribed (and the tests fail). A question's column
  says what its stored values mean: each level of the built-in `honesty` and `credulity` in the rubric's words (for
  each role the participants played, since honesty names a floor or a ceiling), a scale's anchors, a choice's
  options; and the participants' `cells` column says how the study drew them (between or within, least-filled
  first, whether a participant's arms were distinct, the order);
- `payment/bonuses.csv` and `payment/payments.csv`: what paying the participants needs. bonuses.csv is the bulk
  bonus file of Prolific: one `participant_id,amount` line per participant, no header, the amount in the
  study's currency with two decimals (`60ffe5c8371090c7041d43f8,4.25` pays GBP 4.25 in a GBP study), as
  Prolific's "Bulk bonus payment" box and the `csv_bonuses` field of its bonus API (POST
  /api/v1/submissions/bonus-payments/) take it; one line per completed participant whose bonus is above zero
  (an excluded participant completed the study and is paid: exclusion only flags their data). payments.csv,
  with a header, adds the base payment, the currency and the completion code the participant was given (the
  study's one code, or their own under `completion.per_participant_codes`, to match against the codes the
  platform shows per submission), one row per completed participant.

Participant ids. In a hashed export (the default when the study's `hash_participant_ids_in_exports` is on, as it is
unless the file turns it off) every file but the payment files carries the pseudonym `records.pseudonym(salt, id)`,
with the salt of the participant's study version, instead of the recruiting platform's id, and leaves out the
recruiting parameters (STUDY_ID, SESSION_ID) and the browser's player id. The payment files always carry the real
ids, since payment needs them: they sit apart in `payment/`, and they are never uploaded to the Hub (`PUBLISHED`
names what is: the tables, study.json and the codebook). A participant whose id was already replaced by its
pseudonym under the study's retention rule cannot be paid through a file any more and is in neither payment file.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path

import pandas as pd
from sqlalchemy import JSON, select

from bargain.arena import PERSON
from bargain.engine.trial import Role
from bargain.records.store import GameRow, MoveRow, SeatRow, Store, _inert, write_table
from bargain.study import records
from bargain.study.config import SETTINGS_FILE, Completion
from bargain.study.records import AnswerRow, ParticipantRow, StudyRow
from bargain.study.survey import Builtin, builtin_item

TABLES = ("participants", "games", "moves", "surveys_long", "surveys_wide")  # each written as .csv and .parquet
CODEBOOK = ("codebook.md", "codebook.csv")
WITHHELD = ("code", "screened_out_code")  # of a study's `completion`: a code published is a completion anyone claims
WITHHELD_TEXT = "(withheld from the export)"
PAYMENT_DIR = "payment"  # the files with the platform's real ids, never published
TIMEOUT = "timeout"  # a move's error when the person's time ran out (bargain.arena.controller.TIMEOUT, a layer up)
SOURCE_COLUMNS = {"STUDY_ID": "source_study_id", "SESSION_ID": "source_session_id"}  # bargain.study.flow's parameters
NUMERIC_BUILTINS = ("honesty", "credulity")  # built-in items stored as the rubric's level, 0-4
UNDESCRIBED = "(no description: add one to DESCRIPTIONS in bargain/study/export.py)"
KINDS = {str: "text", int: "integer", float: "number", bool: "boolean", datetime: "datetime (UTC)"}
LONG_COLUMNS = ("participant", "survey", "game", "item", "attempt", "value", "correct", "answered_at")

_ID = "the participant: the recruiting platform's id, or in a hashed export its pseudonym (p_ and a salted hash)"

# Every column of every file, described once. A name with `{...}` stands for a family of columns, expanded over the
# study's stages, games, comprehension attempts and survey items; `{text}` is the question the item asked.
DESCRIPTIONS: dict[str, dict[str, str]] = {
    "participants": {
        "participant": _ID,
        "version": "the version of the study file the participant took part in",
        "stage": "where the participant is: a stage (consent ... debrief), completed, or how they left "
        "(declined, screened_out, full, dropped)",
        "forgotten": "whether the platform's id was replaced by its pseudonym under the study's retention rule "
        "(such a participant cannot be paid through the payment files any more)",
        "consent_version": "the version of the consent form agreed to (empty: did not consent)",
        "comprehension_attempts": "tries at the comprehension questions",
        "cells": "the cell of each game in play order (arm/condition/role), separated by ;. How they were drawn: "
        "{design}",
        "games_done": "games played to their end",
        "attention_failures": "attention checks answered wrongly",
        "timeouts": "moves not made in time (each counted as a pass), over all games",
        "excluded": "whether an exclusion rule flags the participant's data (the data is kept)",
        "browser_shared_with": "how many other participants of the study came from the same browser (a person back "
        "under a new id, or a shared computer; 0: none seen)",
        "exclusion_reasons": "the exclusion rules that apply, each as `rule threshold` (as the study file writes it, "
        "e.g. `first_round_walkaways_over 0`: walked away in round 1 of more games than 0), "
        "separated by ;",
        "bonus": "the performance bonus, set at completion by the study's payment rule (empty: not completed)",
        "base_payment": "the study's base payment if the participant completed the study, else 0",
        "total_payment": "base payment plus bonus",
        "created_at": "arrival (UTC)",
        "completed_at": "completion (UTC; empty: not completed)",
        "seconds": "seconds from arrival to entering the current stage (for a completed participant, the whole study)",
        "seconds_to_{stage}": "seconds from arrival to entering stage {stage} (its last entry, for a stage entered "
        "once per game; empty: never entered)",
        "source_study_id": "the recruiting platform's STUDY_ID parameter, as given (not in a hashed export)",
        "source_session_id": "the recruiting platform's SESSION_ID parameter, as given (not in a hashed export)",
    },
    "games": {
        "id": "the game's id",
        "created_at": "when the game started (UTC)",
        "updated_at": "when the game last changed (UTC)",
        "finished_at": "when the game ended (UTC; empty: not finished)",
        "status": "active, finished or abandoned; waiting or cancelled for a game against another participant "
        "(cancelled: nobody came within pairing.max_wait_s)",
        "abandoned_by": "who abandoned the game: person (started another) or idle",
        "driver": "the app process that ran the game's loop last (a random token)",
        "generation": "how many times an app process took the game's loop over",
        "player": "the browser's player id (not in a hashed export)",
        "participant": _ID,
        "study": "the study's name",
        "human_role": "the participant's role: buyer or seller",
        "arm": "the agent played against (its spec)",
        "scenario": "the scenario, as TIER:INDEX",
        "seed": "the seed the game's prices were drawn with",
        "condition": "the information condition (who knows the other side's reservation price)",
        "mode": "simultaneous or sequential",
        "max_rounds": "the most rounds the game could last",
        "first_actor": "who moves first in sequential mode",
        "buyer_price": "the buyer's reservation price v_B",
        "seller_price": "the seller's reservation price v_S",
        "trial": "the whole trial as JSON (scenario text, ranges, prices, rules)",
        "prompt_version": "the wording of the agent's prompts",
        "parsing": "how the agent's replies were read: strict or lenient",
        "sampling": "the agent's sampling settings as JSON (empty for a scripted tactic)",
        "backend": "the serving backend of the agent as JSON (empty for a scripted tactic)",
        "out_of_distribution": "whether the game lies outside what the agent was trained for",
        "ood_reasons": "why the game is out of distribution, as a JSON list",
        "deal": "whether the game ended in a deal (empty: not finished)",
        "deal_price": "the agreed price (empty: no deal)",
        "rounds": "the round in which the game ended",
        "paper_rounds": "the paper's rounds metric: a game without a deal counts every round",
        "buyer_utility": "the buyer's utility, v_B minus the price (0 without a deal)",
        "seller_utility": "the seller's utility, the price minus v_S (0 without a deal)",
        "buyer_norm_utility": "the buyer's utility as a share of the surplus v_B - v_S",
        "seller_norm_utility": "the seller's utility as a share of the surplus v_B - v_S",
        "claims": "the claim checker's findings on the public messages, as JSON",
        "agent_misstated": "whether the agent misstated a price limit in its favour (claim checker)",
        "claims_checker": "the claim checker's version that made claims and agent_misstated (empty: not recorded, "
        "python -m bargain rescore remakes them)",
        "extra": "further records as JSON (the time allowed per move, the judge's scores)",
        "version": "the version of the study file the participant took part in",
        "game_index": "the game's place among the participant's games, from 1 (empty: a game started twice from two "
        "tabs, abandoned)",
        "cell": "the game's cell, arm/condition/role",
        "person_norm_utility": "the participant's normalised utility",
        "agent_norm_utility": "the agent's normalised utility",
        "timed_out": "whether a move of the participant's in this game was not made in time (a pass)",
        "opponent_was": "what the other side really was: person (another participant of the study) or program; a "
        "game between two participants has a row for each, on their own side (human_role)",
        "partner": "in a game between two participants, the other one (as participant is shown); empty otherwise",
    },
    "moves": {
        "id": "the move's id",
        "game_id": "the game (games.id)",
        "seq": "the move's place in its game, from 0",
        "round": "the round of the move",
        "role": "the side that moved: buyer or seller",
        "actor": "who moved: human or agent",
        "action": "OFFER, DEAL, NO_DEAL, or INVALID (a pass, or a reply that could not be read)",
        "price": "the price offered (empty: no offer)",
        "message": "the public message",
        "thought": "the agent's private strategy text (empty for the participant)",
        "raw": "the agent's raw reply",
        "error": "why the move is invalid; `timeout` when the participant's time ran out",
        "prompt_messages": "the messages the agent's model was sent, as JSON",
        "latency_s": "seconds the agent took to reply",
        "prompt_tokens": "the agent's prompt tokens",
        "completion_tokens": "the agent's completion tokens",
        "endpoint": "the server that answered the agent's move (one of several replicas; empty in process)",
        "person": "in a game between two people, which of them made the move (empty in a game against an agent)",
        "paced_s": "where the study paces replies (timing.reply_delay), the human-like delay drawn for the agent's "
        "move: its reply was shown no sooner (empty otherwise)",
        "flags": "flags on the move as a JSON list, e.g. mentions_ai: an agent message naming AI or a model",
        "duplicate": "whether the move is a second one for its round and side, stored before the database refused "
        "such moves (schema version 4): kept for the record, not part of the game as played",
        "created_at": "when the move was stored (UTC)",
        "participant": _ID,
        "game_index": "the game's place among the participant's games, from 1",
    },
    "surveys_long": {
        "participant": _ID,
        "survey": "comprehension, attention, per_game (after a game) or final",
        "game": "the game the survey followed (0: not after a game)",
        "item": "the question's id in the study file",
        "attempt": "the try, for comprehension questions (else 1)",
        "value": "the answer as stored: the option chosen, the scale point, the rubric level 0-4 or the text",
        "correct": "whether a comprehension or attention answer was right (empty for survey items)",
        "answered_at": "when the answer was stored (UTC)",
    },
    "surveys_wide": {
        "participant": _ID,
        "version": "the version of the study file the participant took part in",
        "comprehension{attempt}_{question}": "comprehension question {question}, attempt {attempt}: {text}",
        "g{game}_{item}": "{item}, asked after game {game}: {text}",
        "final_{final}": "{final}, in the final survey: {text}",
    },
    "study": {
        "name": "the study's name",
        "versions": "one entry per version of the study exported, oldest first",
        "versions[].version": "the version of the study file",
        "versions[].hash": "the hash of the study file and its texts, as stored with each participant and game",
        "versions[].settings": "the study file as loaded (bargain.study.config.Study.to_dict()), the completion codes "
        f"written as {WITHHELD_TEXT} and the file's path left out",
        "versions[].settings.{setting}": "the study file's `{setting}`, as loaded (bargain/studies/example.yaml "
        "describes every field)",
    },
    "bonuses": {
        "participant_id": "first field (no header): the recruiting platform's participant id",
        "amount": "second field: the bonus in the study's currency, two decimals",
    },
    "payments": {
        "participant_id": "the recruiting platform's participant id",
        "currency": "the study's currency (ISO 4217)",
        "base": "the base payment, two decimals",
        "bonus": "the performance bonus, two decimals",
        "total": "base plus bonus, two decimals",
        "completion_code": "the completion code the participant was shown: the study's one code, or with "
        "completion.per_participant_codes their own; match it against the code the platform "
        "shows for the submission",
    },
}


class ExportError(RuntimeError):
    """A study that cannot be exported or pushed as asked; the message says why in one line."""


# --- reading the study ---------------------------------------------------------------------------------------


def _studies(store: Store, name: str, version: int | None) -> list[dict]:
    """The stored versions to export (configuration and salt), oldest first; an unknown name or version is an
    ExportError naming what the database holds, since a mistyped name would otherwise export nothing."""
    with store.reading() as session:
        rows = [
            dict(r)
            for r in session.execute(
                select(StudyRow.__table__).where(StudyRow.name == name).order_by(StudyRow.version)
            ).mappings()
        ]
        names = session.scalars(select(StudyRow.name).distinct().order_by(StudyRow.name)).all() if not rows else []
    if not rows:
        held = f"the studies there: {', '.join(names)}" if names else "it holds no study"
        raise ExportError(f"the database has no study named {name!r}; {held}")
    chosen = [r for r in rows if version is None or r["version"] == version]
    if not chosen:
        raise ExportError(
            f"study {name!r} has no version {version}; its versions: {', '.join(str(r['version']) for r in rows)}"
        )
    return chosen


def _answers(store: Store, name: str, versions: list[int]) -> list[dict]:
    """Every answer of those participants, in the order given."""
    query = (
        select(AnswerRow.__table__)
        .join(ParticipantRow.__table__, AnswerRow.participant_id == ParticipantRow.id)
        .where(ParticipantRow.study == name, ParticipantRow.version.in_(versions))
        .order_by(AnswerRow.id)
    )
    with store.reading() as session:
        return [dict(r) for r in session.execute(query).mappings()]


def _shown_id(person: dict, salts: Mapping[int, str], hashed: bool) -> str:
    """The participant's id as the exported files show it (a forgotten id is already its pseudonym)."""
    if not hashed or person["forgotten"]:
        return person["participant"]
    return records.pseudonym(salts[person["version"]], person["participant"])


# --- the tables ----------------------------------------------------------------------------------------------


def _stages(people: Iterable[dict]) -> list[str]:
    """The stages timed in the participants table: every stage after consent and every way out, then any other
    stage the records hold (such as `full`), so that the columns stay the same from one export to the next."""
    known = [*records.STAGES[1:], *(s for s in records.ENDED if s not in records.STAGES)]
    seen = {stage for person in people for stage in person["stage_times"]} - set(known) - {records.STAGES[0]}
    return known + sorted(seen)


def _participant_record(person: dict, shown: str, base: float, stages: list[str], hashed: bool, others: int) -> dict:
    """One participant's row."""
    entered = {stage: datetime.fromisoformat(at) for stage, at in person["stage_times"].items()}

    def since(stage: str) -> float | None:
        return (entered[stage] - person["created_at"]).total_seconds() if stage in entered else None

    owed = base if person["stage"] == "completed" else 0.0
    record = {
        "participant": shown,
        "version": person["version"],
        "stage": person["stage"],
        "forgotten": person["forgotten"],
        "consent_version": person["consent_version"],
        "comprehension_attempts": person["comprehension_attempts"],
        "cells": ";".join(person["cells"]),
        "games_done": person["games_done"],
        "attention_failures": person["attention_failures"],
        "timeouts": person["timeouts"],
        "excluded": person["excluded"],
        "browser_shared_with": others,
        "exclusion_reasons": ";".join(person["exclusion_reasons"]),
        "bonus": person["bonus"],
        "base_payment": owed,
        "total_payment": round(owed + (person["bonus"] or 0.0), 2),
        "created_at": person["created_at"],
        "completed_at": person["completed_at"],
        "seconds": since(person["stage"]),
        **{f"seconds_to_{stage}": since(stage) for stage in stages},
    }
    if not hashed:
        record.update({column: person["source"].get(parameter) for parameter, column in SOURCE_COLUMNS.items()})
    return record


def _participants_table(
    people: list[dict], shown: Mapping[int, str], studies: list[dict], hashed: bool
) -> pd.DataFrame:
    """One row per participant: where they got to, what they were assigned, what they earned, how long it took."""
    base = {s["version"]: s["config"]["payment"]["base"] for s in studies}
    stages = _stages(people)
    columns = [
        *(key for key in DESCRIPTIONS["participants"] if not key.startswith(("seconds_to_", "source_"))),
        *(f"seconds_to_{stage}" for stage in stages),
        *(() if hashed else SOURCE_COLUMNS.values()),
    ]
    others = records.shared_browsers(people)
    rows = [_participant_record(p, shown[p["id"]], base[p["version"]], stages, hashed, others[p["id"]]) for p in people]
    timed = {column: float for column in columns if column.startswith("seconds")}
    return pd.DataFrame(rows, columns=columns).astype({**timed, "bonus": float, "completed_at": "datetime64[us]"})


def _study_games(store: Store, name: str, people: list[dict]) -> pd.DataFrame:
    """The arena's rows of the study's games played by these participants (the versions exported). A game between
    two participants is a row for each, on their own side (its `participant`, `human_role` and `game_index` theirs,
    `partner` the other)."""
    games = store.games_frame().reindex(columns=GameRow.__table__.columns.keys())
    players = {p["participant"] for p in people}
    own = games[(games["study"] == name) & games["participant"].isin(players)].assign(partner=None)
    with store.reading() as session:
        seats = pd.DataFrame(
            session.execute(
                select(SeatRow.game_id, SeatRow.role, SeatRow.person, SeatRow.game_index).where(
                    SeatRow.game_id.in_(select(SeatRow.game_id).where(SeatRow.study == name))
                )
            ).all(),
            columns=["game_id", "role", "person", "game_index"],
        )
    rows = []
    for seat in seats[seats["person"].isin(players)].itertuples():
        others = seats[(seats["game_id"] == seat.game_id) & (seats["role"] != seat.role)]["person"].tolist()
        game = games[games["id"] == seat.game_id].assign(
            participant=seat.person, human_role=seat.role, game_index=seat.game_index, partner=(others or [None])[0]
        )
        rows.append(game)
    return pd.concat([own, *rows], ignore_index=True) if rows else own.reset_index(drop=True)


def _study_moves(store: Store, games: pd.DataFrame) -> pd.DataFrame:
    """The moves of those games, in order."""
    moves = store.moves_frame().reindex(columns=MoveRow.__table__.columns.keys())
    return moves[moves["game_id"].isin(set(games["id"]))].reset_index(drop=True)


def _games_table(
    games: pd.DataFrame, moves: pd.DataFrame, people: list[dict], shown: Mapping[int, str], hashed: bool
) -> pd.DataFrame:
    """The arena's game rows with the study's view of them: whose game it was, which of their games and cells,
    both sides' normalised utilities, and whether the participant timed out (what the bonus rule reads)."""
    owner = {p["participant"]: p for p in people}
    table = games.copy()
    buyer = table["human_role"] == "buyer"
    timeouts = (moves["actor"] == "human") & (moves["error"] == TIMEOUT) & ~moves["duplicate"].astype(bool)
    late = set(zip(moves.loc[timeouts, "game_id"], moves.loc[timeouts, "role"]))  # the side that timed out
    table["participant"] = [shown[owner[x]["id"]] for x in games["participant"]]
    table["version"] = pd.array([owner[x]["version"] for x in games["participant"]], dtype="Int64")
    table["game_index"] = pd.array(games["game_index"], dtype="Int64")
    table["cell"] = [
        None if pd.isna(i) else owner[x]["cells"][int(i) - 1] for x, i in zip(games["participant"], games["game_index"])
    ]
    table["person_norm_utility"] = games["buyer_norm_utility"].where(buyer, games["seller_norm_utility"]).astype(float)
    table["agent_norm_utility"] = games["seller_norm_utility"].where(buyer, games["buyer_norm_utility"]).astype(float)
    table["timed_out"] = [(game, role) in late for game, role in zip(games["id"], games["human_role"])]
    table["opponent_was"] = ["person" if arm == PERSON else "program" for arm in games["arm"]]
    table["partner"] = [shown[owner[x]["id"]] if x in owner else None for x in games["partner"]]
    return table.drop(columns=["player"]) if hashed else table


def _moves_table(moves: pd.DataFrame, games: pd.DataFrame, shown: Mapping[str, str]) -> pd.DataFrame:
    """The moves, each with its participant and the game's place among theirs: in a game between two participants,
    the one who made it (`person`, shown as `participant` is: `shown` maps their id to how it is shown)."""
    which = games[["id", "participant", "game_index", "human_role", "arm"]].rename(columns={"id": "game_id"})
    between = which["arm"] == PERSON
    which = which.assign(side=which["human_role"].where(between))[["game_id", "side", "participant", "game_index"]]
    moves = moves.assign(
        side=moves["role"].where(moves["game_id"].isin(set(which.loc[between, "game_id"]))),
        person=[None if pd.isna(p) else shown.get(p) for p in moves["person"]],
    )
    return moves.merge(which, on=["game_id", "side"], how="left").drop(columns="side")


def _long_table(answers: list[dict], shown: Mapping[int, str]) -> pd.DataFrame:
    """One row per answer."""
    rows = [
        (
            shown[a["participant_id"]],
            a["survey"],
            a["game"],
            a["item"],
            a["attempt"],
            a["value"],
            a["correct"],
            a["created_at"],
        )
        for a in answers
    ]
    return pd.DataFrame(rows, columns=list(LONG_COLUMNS)).astype(
        {"game": "Int64", "attempt": "Int64", "correct": "boolean", "answered_at": "datetime64[us]"}
    )


def _wide_name(survey: str, game: int, item: str, attempt: int) -> str:
    """An answer's column in the wide table."""
    if survey == "comprehension":
        return f"comprehension{attempt}_{item}"
    return f"final_{item}" if survey == "final" else f"g{game}_{item}"  # per_game and attention: after game N


def _wide_columns(configs: Iterable[dict]) -> dict[str, bool]:
    """The wide table's answer columns in the order the study asks them (whether each holds numbers), from the
    study files: the columns are the same whoever answered what."""
    columns: dict[str, bool] = {}
    for config in configs:
        comprehension = config["comprehension"]
        for attempt in range(1, comprehension["attempts"] + 1):
            columns.update(
                {_wide_name("comprehension", 0, q["id"], attempt): False for q in comprehension["questions"]}
            )
        for game in range(1, config["games_per_participant"] + 1):
            columns.update({f"g{game}_{item['id']}": _numeric(item) for item in config["surveys"]["per_game"]})
            columns.update(
                {f"g{game}_{check['id']}": False for check in config["attention_checks"] if check["after_game"] == game}
            )
        columns.update({f"final_{item['id']}": _numeric(item) for item in config["surveys"]["final"]})
    return columns


def _numeric(item: dict) -> bool:
    """Whether a survey item's answers are numbers (a scale point, a rubric level)."""
    return item["type"] == "likert" or item["builtin"] in NUMERIC_BUILTINS


def _wide_table(long: pd.DataFrame, people: list[dict], shown: Mapping[int, str], configs: list[dict]) -> pd.DataFrame:
    """One row per participant, one column per question asked (per game, per comprehension attempt); scales and
    rubric levels as whole numbers."""
    columns = _wide_columns(configs)
    named = long.assign(
        column=[_wide_name(*key) for key in zip(long["survey"], long["game"], long["item"], long["attempt"])]
    )
    values = named.pivot(index="participant", columns="column", values="value").reindex(columns=list(columns))
    table = pd.DataFrame(
        {
            "participant": pd.array([shown[p["id"]] for p in people], dtype=object),
            "version": pd.array([p["version"] for p in people], dtype="Int64"),
        }
    )
    values.index = values.index.astype(object)  # no participant yet: both keys empty, of one type
    table = table.join(values, on="participant")
    for column, numeric in columns.items():
        if numeric:
            table[column] = pd.to_numeric(table[column]).astype("Int64")
    return table


def _payments_table(people: list[dict], studies: list[dict]) -> pd.DataFrame:
    """Base, bonus and completion code per completed participant whose real id is still known, for paying them."""
    payment = {s["version"]: s["config"]["payment"] for s in studies}
    code = {
        s["version"]: functools.partial(Completion(**s["config"]["completion"]).code_for, s["salt"]) for s in studies
    }
    rows = [
        {
            "participant_id": p["participant"],
            "currency": payment[p["version"]]["currency"],
            "base": payment[p["version"]]["base"],
            "bonus": round(p["bonus"] or 0.0, 2),
            "completion_code": code[p["version"]](p["participant"]),
        }
        for p in people
        if p["stage"] == "completed" and not p["forgotten"]
    ]
    table = pd.DataFrame(rows, columns=["participant_id", "currency", "base", "bonus", "completion_code"])
    return table.assign(total=(table["base"] + table["bonus"]).round(2))


def _bonuses_table(payments: pd.DataFrame) -> pd.DataFrame:
    """The bonus lines: every payment with a bonus above zero."""
    return payments.loc[payments["bonus"] > 0, ["participant_id", "bonus"]].rename(columns={"bonus": "amount"})


def _settings(config: dict) -> dict:
    """A version's stored configuration as study.json gives it: the completion codes withheld, the path left out."""
    completion = {key: WITHHELD_TEXT if key in WITHHELD else value for key, value in config["completion"].items()}
    return {key: value for key, value in config.items() if key != "path"} | {"completion": completion}


def _settings_document(name: str, studies: list[dict]) -> dict:
    """study.json: the study's name and, per version exported, its hash and settings."""
    return {
        "name": name,
        "versions": [{"version": s["version"], "hash": s["hash"], "settings": _settings(s["config"])} for s in studies],
    }


def _settings_keys(document: dict) -> pd.DataFrame:
    """study.json's keys as the codebook lists them (one row of their values, from the newest version, so that
    each key's type is read as a column's is)."""
    newest = document["versions"][-1]
    keys = {
        "name": document["name"],
        "versions": document["versions"],
        **{f"versions[].{key}": value for key, value in newest.items()},
        **{f"versions[].settings.{key}": value for key, value in newest["settings"].items()},
    }
    return pd.DataFrame({key: pd.Series([value]) for key, value in keys.items()})


# --- the codebook --------------------------------------------------------------------------------------------


def _vocabulary(configs: list[dict], stages: list[str]) -> dict[str, dict[str, str]]:
    """What each `{...}` of a family of columns ranges over, with the question's text and what its answers mean
    where it has them."""

    def texts(config: dict, items: Iterable[dict]) -> dict[str, str]:
        roles = list(dict.fromkeys(cell["role"] for cell in config["cells"]))
        return {item["id"]: f"{' '.join(item['text'].split())} ({_answer_key(item, roles)})" for item in items}

    return {
        "stage": dict.fromkeys(stages, ""),
        "game": dict.fromkeys(map(str, range(1, max(c["games_per_participant"] for c in configs) + 1)), ""),
        "attempt": dict.fromkeys(map(str, range(1, max(c["comprehension"]["attempts"] for c in configs) + 1)), ""),
        "question": {k: v for c in configs for k, v in texts(c, c["comprehension"]["questions"]).items()},
        "item": {
            k: v for c in configs for k, v in texts(c, [*c["surveys"]["per_game"], *c["attention_checks"]]).items()
        },
        "final": {k: v for c in configs for k, v in texts(c, c["surveys"]["final"]).items()},
        "setting": dict.fromkeys(_settings(configs[-1]), ""),
    }


def _answer_key(item: dict, roles: list[str]) -> str:
    """What the stored answers to a question mean: a rubric's levels in its words, a scale's anchors, a choice's
    options (and the value stored for each where it differs), a right answer."""
    if "answer" in item:  # a comprehension question or an attention check
        return f"options: {'; '.join(item['options'])}; right answer: {item['answer']}"
    if item["builtin"] in NUMERIC_BUILTINS:
        return _rubric_key(Builtin(item["builtin"]), roles)
    if item["type"] == "likert":
        (low, high), (bottom, top) = item["scale"], item["anchors"]
        return f"scale {low} to {high}: {low} = {bottom}, {high} = {top}"
    if item["type"] == "choice" and item["values"] != item["options"]:
        pairs = zip(item["values"], item["options"])
        return "stored as: " + "; ".join(f"{value} = {option}" for value, option in pairs)
    if item["type"] == "choice":
        return f"options: {'; '.join(item['options'])}"
    return f"free text, at most {item['max_length']} characters"


def _rubric_key(kind: Builtin, roles: list[str]) -> str:
    """A built-in rubric's levels as the participants saw them, once, or for each role where they differ (honesty
    names the other party's price floor to a buyer and its ceiling to a seller)."""
    levels = {role: builtin_item(kind, role=Role(role)).options for role in roles}

    def listed(options: tuple[str, ...]) -> str:
        return "; ".join(f"{level} = {words}" for level, words in enumerate(options))

    if len(set(levels.values())) == 1:
        return f"the rubric's level, 0-4: {listed(next(iter(levels.values())))}"
    return " ".join(f"as a {role} saw it, 0-4: {listed(options)}." for role, options in levels.items())


def _design_text(configs: list[dict]) -> str:
    """How the study's cells were drawn for each participant, in words (version by version where they differ)."""
    told = {config["version"]: _drawn(config) for config in configs}
    if len(set(told.values())) == 1:
        return next(iter(told.values()))
    return " ".join(f"Version {version}: {text}" for version, text in told.items())


def _drawn(config: dict) -> str:
    """How one version of the study drew a participant's cells (bargain.study.records.assign)."""
    design, games = config["design"], config["games_per_participant"]
    if design["assignment"] == "between":
        return (
            f"between subjects: one cell per participant, drawn at random among the cells with the fewest "
            f"participants and room left (quota {design['quota_per_cell']} participants per cell), for all "
            f"{games} of their games."
        )
    arms = (
        "each of a participant's games against a different arm"
        if design.get("distinct_arms")
        else "the same arm may come in more than one of a participant's games (in another condition or role)"
    )
    order = "in random order" if design["order"] == "random" else "in the study's fixed order of cells"
    return (
        f"within subjects: {games} games per participant, each in its own cell, drawn at random among the cells "
        f"with the fewest games and room left (quota {design['quota_per_cell']} games per cell), so that the "
        f"cells' counts stay within one of each other; {arms}; played {order}."
    )


def _expanded(
    descriptions: Mapping[str, str], vocabulary: Mapping[str, Mapping[str, str]], design: str
) -> Iterator[tuple[str, str]]:
    """(column, description) for every column a file's descriptions name, families expanded."""
    for name, description in descriptions.items():
        keys = re.findall(r"\{(\w+)\}", name)
        for chosen in itertools.product(*(vocabulary[key].items() for key in keys)):
            values = {key: value for key, (value, _) in zip(keys, chosen)}
            text = next((text for _, text in chosen if text), "")
            yield name.format(**values), description.format(**values, text=text, design=design)


def _kind(column: pd.Series) -> str:
    """A column's type in words, from its values (for the study's own columns, which are typed when made)."""
    values = column.dropna()
    if len(values) and all(isinstance(v, (list, dict)) for v in values):
        return "JSON"
    if pd.api.types.is_bool_dtype(column) or (len(values) and all(isinstance(v, bool) for v in values)):
        return KINDS[bool]
    if pd.api.types.is_datetime64_any_dtype(column):
        return KINDS[datetime]
    if pd.api.types.is_integer_dtype(column):
        return KINDS[int]
    return KINDS[float] if pd.api.types.is_float_dtype(column) else KINDS[str]


def _declared_kinds() -> dict[str, dict[str, str]]:
    """The arena's columns' types as the database declares them: a column without a value yet keeps its type."""
    return {
        file: {
            c.key: "JSON" if isinstance(c.type, JSON) else KINDS[c.type.python_type] for c in model.__table__.columns
        }
        for file, model in (("games", GameRow), ("moves", MoveRow))
    }


def _codebook(
    tables: Mapping[str, pd.DataFrame], vocabulary: Mapping[str, Mapping[str, str]], design: str
) -> pd.DataFrame:
    """file, column, type, description for every column of every file written."""
    rows, declared = [], _declared_kinds()
    for file, table in tables.items():
        described = dict(_expanded(DESCRIPTIONS[file], vocabulary, design))
        rows += [
            {
                "file": file,
                "column": column,
                "type": declared.get(file, {}).get(column) or _kind(table[column]),
                "description": described.get(column, UNDESCRIBED),
            }
            for column in table.columns
        ]
    return pd.DataFrame(rows, columns=["file", "column", "type", "description"])


def _codebook_markdown(codebook: pd.DataFrame, name: str, versions: list[int], hashed: bool) -> str:
    """The codebook for people: one table per file."""
    ids = (
        "pseudonyms (p_ and a salted hash of the platform's id, stable within the study)"
        if hashed
        else "the recruiting platform's ids"
    )
    lines = [
        f"# Codebook: study {name}, version{'s' if len(versions) > 1 else ''} {', '.join(map(str, versions))}",
        "",
        f"Participants are identified by {ids}. Tables are written as CSV and Parquet; CSV shows numbers to "
        "10 significant digits and prefixes with ' any text that a spreadsheet would run as a formula, "
        "Parquet holds the exact values. The payment files (payment/) carry the platform's ids.",
        "",
    ]
    for file, rows in codebook.groupby("file", sort=False):
        where = f"{PAYMENT_DIR}/{file}.csv" if file in ("bonuses", "payments") else f"{file}.csv, {file}.parquet"
        where = SETTINGS_FILE if file == "study" else where
        lines += [f"## {file} ({where})", "", "| column | type | description |", "|---|---|---|"]
        lines += [f"| {r.column} | {r.type} | {r.description.replace('|', '/')} |" for r in rows.itertuples()]
        lines.append("")
    return "\n".join(lines)


# --- writing -------------------------------------------------------------------------------------------------


def _write_payment(table: pd.DataFrame, path: Path, header: bool) -> Path:
    """A payment file: amounts with two decimals, ids formula-safe like every CSV cell."""
    table.assign(participant_id=table["participant_id"].map(_inert)).to_csv(
        path, index=False, header=header, float_format="%.2f"
    )
    return path


def export_study(
    store: Store, name: str, version: int | None = None, *, out_dir: str | Path, hashed: bool | None = None
) -> list[Path]:
    """Write the study's tables, codebook and payment files into `out_dir` (see the module's docstring); `hashed`
    None follows the study's `hash_participant_ids_in_exports`. Returns the paths written."""
    studies = _studies(store, name, version)
    hashed = (
        any(s["config"].get("hash_participant_ids_in_exports", True) for s in studies) if hashed is None else hashed
    )
    versions, configs = [s["version"] for s in studies], [s["config"] for s in studies]
    people = records.participants(store, name, versions)
    shown = {p["id"]: _shown_id(p, {s["version"]: s["salt"] for s in studies}, hashed) for p in people}
    games = _study_games(store, name, people)
    moves = _study_moves(store, games)
    game_table = _games_table(games, moves, people, shown, hashed)
    long = _long_table(_answers(store, name, versions), shown)
    payments = _payments_table(people, studies)
    settings = _settings_document(name, studies)
    tables = {
        "participants": _participants_table(people, shown, studies, hashed),
        "games": game_table,
        "moves": _moves_table(moves, game_table, {p["participant"]: shown[p["id"]] for p in people}),
        "surveys_long": long,
        "surveys_wide": _wide_table(long, people, shown, configs),
    }
    codebook = _codebook(
        {**tables, "study": _settings_keys(settings), "bonuses": _bonuses_table(payments), "payments": payments},
        _vocabulary(configs, _stages(people)),
        _design_text(configs),
    )
    directory = Path(out_dir)
    (directory / PAYMENT_DIR).mkdir(parents=True, exist_ok=True)
    written = [path for table_name, table in tables.items() for path in write_table(table, directory, table_name)]
    codebook.to_csv(directory / CODEBOOK[1], index=False)
    (directory / CODEBOOK[0]).write_text(_codebook_markdown(codebook, name, versions, hashed), encoding="utf-8")
    (directory / SETTINGS_FILE).write_text(
        json.dumps(settings, indent=1) + "\n", encoding="utf-8"
    )  # arms in file order
    return [
        *written,
        directory / SETTINGS_FILE,
        directory / CODEBOOK[0],
        directory / CODEBOOK[1],
        _write_payment(_bonuses_table(payments), directory / PAYMENT_DIR / "bonuses.csv", header=False),
        _write_payment(payments, directory / PAYMENT_DIR / "payments.csv", header=True),
    ]


# --- publishing ----------------------------------------------------------------------------------------------

PUBLISHED = [f"{table}{suffix}" for table in TABLES for suffix in (".csv", ".parquet")] + [
    SETTINGS_FILE,
    *CODEBOOK,
]  # never payment/
