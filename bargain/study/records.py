"""Study mode's records: the study as served, its cells and their quotas, participants, their answers.

They live in the arena's database beside games and moves (the same declarative base; the schema's revisions,
bargain.records.migrations, create and upgrade them with the rest), so one transaction can assign a participant and one
export can join a participant's games, answers and payment. Every operation is a named function taking the store:
each is one committed transaction, and the ones that must be exact under concurrency (taking a slot in a cell,
saving a page and moving on) lock the participant's row at their start and say which stage they were based on: a
request sent twice, or to two processes at once, changes things once. A page's answers and the stage it leads to
are saved together, so a process that dies between them leaves nothing half-done.
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    and_,
    or_,
    select,
    union,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from bargain.arena.people import CANCELLED
from bargain.records.store import Base, GameRow, SeatRow, Store, StoreError, columns_of, utcnow

# Where a participant is: the stages in order, then the ways out.
STAGES = ("consent", "instructions", "comprehension", "game", "game_survey", "final_survey", "debrief", "completed")
ENDED = ("completed", "declined", "screened_out", "dropped")
TOUCH_EVERY = timedelta(seconds=10)  # a participant's activity is recorded at most this often (idle_minutes >= 1)


class StudyRow(Base):
    """A study as it was served: name, version and the hash of its file and texts (a changed file under the
    same name and version is refused), and the loaded configuration for the record."""

    __tablename__ = "studies"
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    version: Mapped[int] = mapped_column(primary_key=True)
    hash: Mapped[str] = mapped_column(String(64))
    config: Mapped[dict] = mapped_column(JSON)  # the study as loaded, its texts (consent included) among it
    salt: Mapped[str] = mapped_column(String(32), default=lambda: secrets.token_hex(16))  # for hashed participant ids
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class CellRow(Base):
    """One cell of a study's design and how many of its slots are taken (by active or finished participants)."""

    __tablename__ = "study_cells"
    study: Mapped[str] = mapped_column(String(64), primary_key=True)
    version: Mapped[int] = mapped_column(primary_key=True)
    cell: Mapped[str] = mapped_column(String(128), primary_key=True)
    quota: Mapped[int]
    filled: Mapped[int] = mapped_column(default=0)


class ParticipantRow(Base):
    """One participant of one study: where they are, what they were assigned, what they earned."""

    __tablename__ = "study_participants"
    __table_args__ = (UniqueConstraint("study", "participant", name="one_participant_per_study"),)
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    study: Mapped[str] = mapped_column(String(64), index=True)
    version: Mapped[int]
    study_hash: Mapped[str] = mapped_column(String(64))
    participant: Mapped[str] = mapped_column(String(128))  # the recruiting platform's id
    source: Mapped[dict] = mapped_column(JSON, default=dict)  # STUDY_ID, SESSION_ID as given
    forgotten: Mapped[bool] = mapped_column(Boolean, default=False)  # the id was replaced by its pseudonym (retention)
    # A random token the participant's browser keeps, from their first page: one browser taking part under several
    # ids shows here (a flag for the researcher, not proof: people share computers, and storage can be cleared).
    browser: Mapped[str | None] = mapped_column(String(64), index=True)
    stage: Mapped[str] = mapped_column(String(16), default="consent", index=True)
    consent_version: Mapped[str | None] = mapped_column(String(64))
    comprehension_attempts: Mapped[int] = mapped_column(default=0)
    cells: Mapped[list] = mapped_column(JSON, default=list)  # the cell of each game, in order
    games: Mapped[list] = mapped_column(JSON, default=list)  # the ids of the games started, in order
    games_done: Mapped[int] = mapped_column(default=0)  # games played to their end
    attention_failures: Mapped[int] = mapped_column(default=0)
    timeouts: Mapped[int] = mapped_column(default=0)
    excluded: Mapped[bool] = mapped_column(Boolean, default=False)
    exclusion_reasons: Mapped[list] = mapped_column(JSON, default=list)
    bonus: Mapped[float | None] = mapped_column(Float)
    stage_times: Mapped[dict] = mapped_column(JSON, default=dict)  # stage -> when it was entered (ISO, UTC)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    completed_at: Mapped[datetime | None]


class AnswerRow(Base):
    """One answer: a comprehension or attention question, or a survey item (after game N, or final: 0)."""

    __tablename__ = "study_answers"
    __table_args__ = (UniqueConstraint("participant_id", "survey", "game", "item", "attempt", name="answered_once"),)
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    participant_id: Mapped[int] = mapped_column(ForeignKey("study_participants.id"), index=True)
    survey: Mapped[str] = mapped_column(String(16))  # comprehension, attention, per_game, final
    game: Mapped[int] = mapped_column(Integer, default=0)
    item: Mapped[str] = mapped_column(String(64))
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    value: Mapped[str] = mapped_column(Text)
    correct: Mapped[bool | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class StudyConflict(StoreError):
    """The database already holds this study's name and version with another file: the message says what to do."""


def register(store: Store, name: str, version: int, digest: str, config: dict, quotas: dict[str, int]) -> None:
    """Record the study and its cells once; refuse a changed file under the same name and version. Processes
    starting together: one records the study, the others find it (the primary key decides)."""
    try:
        _record_study(store, name, version, digest, config, quotas)
    except StoreError as exc:
        if not isinstance(exc.__cause__, IntegrityError):
            raise
        _record_study(store, name, version, digest, config, quotas)  # another process recorded it first


def _record_study(store: Store, name: str, version: int, digest: str, config: dict, quotas: dict[str, int]) -> None:
    with store.writing("register the study in") as session:
        row = session.get(StudyRow, (name, version))
        if row is None:
            session.add(StudyRow(name=name, version=version, hash=digest, config=config))
            for cell, quota in quotas.items():
                session.add(CellRow(study=name, version=version, cell=cell, quota=quota))
        elif row.hash != digest:
            raise StudyConflict(
                f"the database already holds study {name!r} version {version} from a different file "
                f"(hash {row.hash[:12]}..., this one {digest[:12]}...): a changed study needs a new "
                "version number, or restore the file as it was"
            )


Row = TypeVar("Row", bound=Base)


def _must(session: Any, kind: type[Row], key: Any, **options: Any) -> Row:
    """A row the caller holds the key of: missing, the database lost it (one StoreError, as any failure of it)."""
    row = session.get(kind, key, **options)
    if row is None:
        raise StoreError(f"{kind.__tablename__} {key!r} is missing from the database")
    return row


def arrived(store: Store, study: str, external_id: str) -> dict:
    """The record of a participant just written: `participant`, which must find it."""
    found = participant(store, study, external_id)
    if found is None:
        raise StoreError(f"participant {external_id!r} of {study} is missing from the database")
    return found


def participant(store: Store, study: str, external_id: str) -> dict | None:
    """A participant's record, as a plain dict (None if they never arrived)."""
    with store.reading() as session:
        row = session.scalars(
            select(ParticipantRow).where(ParticipantRow.study == study, ParticipantRow.participant == external_id)
        ).first()
        return None if row is None else columns_of(row)


def arrive(
    store: Store, study: str, version: int, digest: str, external_id: str, source: dict, browser: str | None = None
) -> dict:
    """The participant's record, created at their first arrival (a second arrival, from any tab or process,
    finds the same one: the database's unique constraint decides a race), with the `browser` token of their first
    page. Every arrival (any request of the participant's: a page, a move, an answer) counts as activity, recorded
    at most every TOUCH_EVERY."""
    found = participant(store, study, external_id)
    if found is not None:
        now = utcnow()
        known = browser is None or found["browser"] is not None
        if now - found["updated_at"] >= TOUCH_EVERY or not known:
            with store.writing("record a participant's activity in") as session:
                session.execute(
                    update(ParticipantRow)
                    .where(ParticipantRow.id == found["id"], ParticipantRow.updated_at < now)
                    .values(updated_at=now)
                )
                if not known:
                    session.execute(
                        update(ParticipantRow)
                        .where(ParticipantRow.id == found["id"], ParticipantRow.browser.is_(None))
                        .values(browser=browser)
                    )
            return arrived(store, study, external_id)
        return found
    try:
        with store.writing("record a participant in") as session:
            session.add(
                ParticipantRow(
                    study=study,
                    version=version,
                    study_hash=digest,
                    participant=external_id,
                    source=source,
                    stage_times={"consent": utcnow().isoformat()},
                    browser=browser,
                )
            )
    except StoreError as exc:
        if not isinstance(exc.__cause__, IntegrityError):
            raise
    return arrived(store, study, external_id)


@dataclass(frozen=True)
class Answers:
    """One page's answers: item -> (value, correct), for a survey (comprehension, attention, per_game, final) after
    game `game` (0: not after a game), at an attempt (comprehension)."""

    survey: str
    game: int
    items: dict[str, tuple[str, bool | None]]
    attempt: int = 1


def move_to(
    store: Store, row_id: int, stage: str, expected: str | None = None, answers: Iterable[Answers] = (), **fields: Any
) -> dict:
    """Save a page's `answers` and set the participant's stage (and other fields) in one transaction; with
    `expected`, only from that stage, else StageError (a double submission or a second tab changes nothing
    twice). An answer already stored under the same key (a page saved by a process that died before it moved
    the participant on) is kept as it was."""
    with store.writing("update a participant in") as session:
        return columns_of(_move(session, row_id, stage, expected, answers, fields))


def leave(
    store: Store,
    row_id: int,
    stage: str,
    expected: str,
    answers: Iterable[Answers],
    within: bool,
    **fields: Any,
) -> dict:
    """As move_to, to a stage that ends the participant's study before their games (declined, screened out), their
    slots freed in the same transaction as release_idle frees a dropped participant's: once, whatever the number of
    requests or processes (a second finds them gone from `expected`)."""
    with store.writing("update a participant in") as session:
        row = _move(session, row_id, stage, expected, answers, fields)
        _free_slots(session, row, within)
        return columns_of(row)


def _move(
    session: Any, row_id: int, stage: str, expected: str | None, answers: Iterable[Answers], fields: dict[str, Any]
) -> ParticipantRow:
    """move_to's work, inside the caller's transaction: the participant's row, locked and moved on."""
    row = _must(session, ParticipantRow, row_id, with_for_update=True)
    if expected is not None and row.stage != expected:
        raise StageError(f"participant {row.participant} is at {row.stage!r}, not {expected!r}")
    for page in answers:
        kept = set(
            session.scalars(
                select(AnswerRow.item).where(
                    AnswerRow.participant_id == row_id,
                    AnswerRow.survey == page.survey,
                    AnswerRow.game == page.game,
                    AnswerRow.attempt == page.attempt,
                )
            )
        )
        for item, (value, correct) in page.items.items():
            if item not in kept:
                session.add(
                    AnswerRow(
                        participant_id=row_id,
                        survey=page.survey,
                        game=page.game,
                        item=item,
                        attempt=page.attempt,
                        value=value,
                        correct=correct,
                    )
                )
    for key, value in fields.items():
        setattr(row, key, value)
    now = utcnow()
    if stage != row.stage:
        row.stage_times = {**row.stage_times, stage: now.isoformat()}
    row.stage, row.updated_at = stage, now
    if stage == "completed":
        row.completed_at = now
    session.flush()
    return row


def _free_slots(session: Any, row: ParticipantRow, within: bool) -> None:
    """Give back the slots of a participant who leaves: between subjects their one slot; within, the slots of the
    games they did not finish."""
    for cell in row.cells[row.games_done :] if within else row.cells[:1]:
        session.execute(
            update(CellRow)
            .where(CellRow.study == row.study, CellRow.version == row.version, CellRow.cell == cell)
            .values(filled=CellRow.filled - 1)
        )


def saved_answers(store: Store, row_id: int, survey: str, game: int, attempt: int | None = None) -> dict[str, str]:
    """The stored answers of one page (item -> value): of `attempt`, or of the latest attempt when None."""
    query = select(AnswerRow.item, AnswerRow.value, AnswerRow.attempt).where(
        AnswerRow.participant_id == row_id, AnswerRow.survey == survey, AnswerRow.game == game
    )
    with store.reading() as session:
        rows = session.execute(query if attempt is None else query.where(AnswerRow.attempt == attempt)).all()
    latest = max((r.attempt for r in rows), default=None)
    return {r.item: r.value for r in rows if r.attempt == latest}


def record_game(store: Store, row_id: int, index: int, game_id: str) -> list[str]:
    """Note the participant's game number `index` (from 1), once: the database holds one game per participant and
    index, so a second request that started it finds the same one. Returns the participant's games."""
    with store.writing("record a participant's game in") as session:
        row = _must(session, ParticipantRow, row_id, with_for_update=True)
        if len(row.games) == index - 1:
            row.games = [*row.games, game_id]
        return list(row.games)


def met_scenarios(store: Store, study: str, participant: str) -> frozenset[str]:
    """The scenarios of a participant's games in a study that were not cancelled: against programs (their own
    games) and against people (their seats), so that their next game is drawn from items they have not met."""
    mine = select(GameRow.scenario).where(GameRow.study == study, GameRow.participant == participant)
    seated = (
        select(GameRow.scenario)
        .join(SeatRow, SeatRow.game_id == GameRow.id)
        .where(SeatRow.study == study, SeatRow.person == participant)
    )
    with store.reading() as session:
        return frozenset(
            session.scalars(union(mine.where(GameRow.status != CANCELLED), seated.where(GameRow.status != CANCELLED)))
        )


def replace_game(store: Store, row_id: int, index: int, old: str, new: str) -> list[str]:
    """Put `new` in place of the participant's game number `index` if it is still `old` (a game with another
    participant that nobody joined, replaced by one against a program): once, however many requests ask."""
    with store.writing("record a participant's game in") as session:
        row = _must(session, ParticipantRow, row_id, with_for_update=True)
        if len(row.games) >= index and row.games[index - 1] == old:
            row.games = [*row.games[: index - 1], new, *row.games[index:]]
        return list(row.games)


class StageError(StoreError):
    """A step submitted for a stage the participant has already left (a double submission, a stale tab)."""


def assign(
    store: Store,
    study: str,
    version: int,
    row_id: int,
    games: int,
    within: bool,
    fixed_order: list[str] | None = None,
    rng: random.Random | None = None,
    distinct_arms: bool = False,
) -> list[str]:
    """Take slots for a participant, exactly and at most once, as `draw_cells` chooses them. The cells' rows are
    locked for the transaction (SQLite: the write lock; PostgreSQL: row locks), so concurrent arrivals in any
    number of processes never overfill a cell. Returns the cells in play order ([] when the quotas are full)."""
    rng = rng or random.SystemRandom()
    with store.writing("assign a participant in") as session:
        row = _must(session, ParticipantRow, row_id, with_for_update=True)
        if row.cells:  # assigned already (another tab, another process): the same assignment
            return list(row.cells)
        cells = session.scalars(
            select(CellRow)
            .where(CellRow.study == study, CellRow.version == version)
            .order_by(CellRow.cell)
            .with_for_update()
        ).all()
        slots = [Slot(c.cell, c.filled, c.quota) for c in cells]
        chosen = draw_cells(slots, games, within, rng, fixed_order, distinct_arms)
        for cell in cells:
            if cell.cell in chosen:
                cell.filled += 1
        row.cells = chosen
        row.updated_at = utcnow()
        return chosen


@dataclass(frozen=True)
class Slot:
    """A cell's slots as an assignment reads them: its name (arm/condition/role), how many are taken, its quota."""

    cell: str
    filled: int
    quota: int


def draw_cells(
    slots: Sequence[Slot],
    games: int,
    within: bool,
    rng: random.Random,
    fixed_order: Sequence[str] | None = None,
    distinct_arms: bool = False,
) -> list[str]:
    """The cells of a participant's `games` in play order: one cell for all of them (between-subject), or `games`
    distinct cells (within-subject), always among the cells with the fewest slots taken and a free one (ties broken
    at random), so that the cells' counts stay within one of each other. With `distinct_arms` (within) the cells are
    of `games` different arms (`_distinct_arms` says how balance is kept). Within subjects the play order is
    `fixed_order`'s, or random. [] when the quotas are full. Pure, so that `assign` takes these slots in its
    transaction and bargain.study.simulate draws whole studies the same way; `slots` in name order, as `assign`
    reads them."""
    open_cells = [s for s in slots if s.filled < s.quota]
    rng.shuffle(open_cells)
    open_cells.sort(key=lambda s: s.filled)  # stable: random among equals
    if not within:
        chosen = open_cells[:1]
    else:
        chosen = _distinct_arms(slots, open_cells, games, rng) if distinct_arms else open_cells[:games]
    if not chosen or (within and len(chosen) < games):
        return []
    if fixed_order is not None:
        chosen.sort(key=lambda s: fixed_order.index(s.cell))
    else:
        rng.shuffle(chosen)
    return [s.cell for s in chosen] * (games if not within else 1)


def _arm(cell: str) -> str:
    """The arm of a cell named arm/condition/role."""
    return cell.split("/", 1)[0]


def _distinct_arms(slots: Sequence[Slot], open_cells: list[Slot], games: int, rng: random.Random) -> list[Slot]:
    """`games` open cells of different arms: the arms with the fewest slots taken over all their cells (ties at
    random), and in each its least-filled open cell (`open_cells` is least-filled first). Picking the g least-loaded
    of the arms keeps the arms' loads within one of each other, and every arm has the same number of cells (the
    study crosses arms with conditions and roles), so an arm of load L holds cells of floor(L/k) and ceil(L/k):
    the cells' counts stay within one of each other as they do without the option. Fewer than `games` arms with
    room: fewer cells (the caller reads the study as full)."""
    load: dict[str, int] = {}
    for slot in slots:
        load[_arm(slot.cell)] = load.get(_arm(slot.cell), 0) + slot.filled
    least: dict[str, Slot] = {}
    for slot in open_cells:
        least.setdefault(_arm(slot.cell), slot)
    arms = list(least)
    rng.shuffle(arms)
    arms.sort(key=load.__getitem__)  # stable: random among equals
    return [least[arm] for arm in arms[:games]]


def release_idle(store: Store, study: str, version: int, idle: timedelta, within: bool) -> list[str]:
    """Participants idle past `idle` in an unfinished stage are dropped, their slots freed (between subjects
    the participant's one slot; within, the slots of the games they did not finish) and a game they left going
    on is abandoned, in one transaction (run by several processes at once, it drops each participant once);
    returns their ids."""
    cutoff = utcnow() - idle
    with store.writing("release idle participants in") as session:
        idle_rows = session.scalars(
            select(ParticipantRow)
            .where(
                ParticipantRow.study == study,
                ParticipantRow.version == version,
                ParticipantRow.stage.notin_(ENDED),
                ParticipantRow.updated_at < cutoff,
            )
            .with_for_update()
        ).all()
        for row in idle_rows:
            _free_slots(session, row, within)
            row.stage, row.updated_at = "dropped", utcnow()
            row.stage_times = {**row.stage_times, "dropped": row.updated_at.isoformat()}
            # Their games: by id, or by their seat at a game with another participant (its token, or the seat of a
            # game started but not yet recorded with them). A wait for a partner is cancelled, so that nobody is
            # paired with them from now on; a game going on is abandoned.
            seated = select(SeatRow.game_id).where(
                or_(SeatRow.token.in_(row.games), and_(SeatRow.study == study, SeatRow.person == row.participant))
            )
            theirs = or_(GameRow.id.in_(row.games), GameRow.id.in_(seated))
            for status, ended in (("waiting", "cancelled"), ("active", "abandoned")):
                session.execute(
                    update(GameRow)
                    .where(theirs, GameRow.status == status)
                    .values(status=ended, abandoned_by="idle", updated_at=row.updated_at)
                )
        return [r.participant for r in idle_rows]


def shared_browsers(people: list[dict]) -> dict[int, int]:
    """Participant row id -> how many other participants took part from the same browser (0: none known)."""
    seen: dict[str, int] = {}
    for person in people:
        if person["browser"]:
            seen[person["browser"]] = seen.get(person["browser"], 0) + 1
    return {person["id"]: seen.get(person["browser"], 1) - 1 if person["browser"] else 0 for person in people}


def pseudonym(salt: str, external_id: str) -> str:
    """A participant's id as exports and retention show it: a salted hash (the study's own salt), stable per study."""
    return "p_" + hashlib.sha256(f"{salt}:{external_id}".encode()).hexdigest()[:20]


def study_salt(store: Store, name: str, version: int) -> str:
    """The salt of a study's pseudonyms."""
    with store.reading() as session:
        return _must(session, StudyRow, (name, version)).salt


def forget_identifiers(store: Store, name: str, version: int, days: int) -> int:
    """Retention: the recruiting platform's ids of participants who arrived more than `days` days ago are
    replaced by their pseudonyms (in their record, their games and the recruiting parameters dropped);
    returns how many were replaced."""
    cutoff = utcnow() - timedelta(days=days)
    with store.writing("forget participant ids in") as session:
        salt = _must(session, StudyRow, (name, version)).salt
        rows = session.scalars(
            select(ParticipantRow).where(
                ParticipantRow.study == name,
                ParticipantRow.version == version,
                ParticipantRow.created_at < cutoff,
                ParticipantRow.forgotten.is_(False),
            )
        ).all()
        for row in rows:
            alias = pseudonym(salt, row.participant)
            session.execute(
                update(GameRow)
                .where(GameRow.study == name, GameRow.participant == row.participant)
                .values(participant=alias, player=None)
            )
            row.participant, row.source, row.forgotten = alias, {}, True
        return len(rows)


def cell_counts(store: Store, study: str, version: int) -> dict[str, tuple[int, int]]:
    """Cell -> (slots taken, quota)."""
    with store.reading() as session:
        return {
            c.cell: (c.filled, c.quota)
            for c in session.scalars(select(CellRow).where(CellRow.study == study, CellRow.version == version))
        }


def participants(store: Store, study: str, versions: list[int]) -> list[dict]:
    """The participants of these versions of a study, in order of arrival."""
    query = (
        select(ParticipantRow)
        .where(ParticipantRow.study == study, ParticipantRow.version.in_(versions))
        .order_by(ParticipantRow.id)
    )
    with store.reading() as session:
        return [columns_of(row) for row in session.scalars(query)]


def answers(store: Store, row_id: int) -> list[dict]:
    """A participant's answers in the order given."""
    with store.reading() as session:
        return [
            columns_of(a)
            for a in session.scalars(select(AnswerRow).where(AnswerRow.participant_id == row_id).order_by(AnswerRow.id))
        ]
