"""Durable records of arena games and their moves (SQLAlchemy; SQLite by default, any URL works).

A game row holds everything needed to reanalyse it (scenario, seed, v_B, v_S, ranges,
condition, mode, rounds, arm, the person's role, prompt version, backend, model and revision,
sampling, the out-of-distribution flag, timestamps, status, outcome); a move row holds one
side's move with the agent's raw reply, thought, prompt messages, latency and tokens. Each
round's moves (and, at the end, the outcome and the claim checker's findings) are committed in one
transaction before the game goes on. `participant`, `study` and `extra` leave room for study
mode (consent, recruitment ids, surveys) without a rewrite. Alembic keeps the schema (bargain.records.migrations):
opening a database creates it, or upgrades it to this program's revision, once however many processes open it.

Several app processes may write one game (a person's requests reach any of them, twice at times), so
the database, not timing, keeps a game whole: at most one counted move per (game, round, role) and at
most one game per study participant and game index (unique constraints), at most one active game per
browser (a partial unique index), and every write of moves names the state it was based on (how many
moves it had read, and the game's generation) and is refused as `StaleGame` when the stored game has
moved on. Taking a game over and reading it are one transaction.

Every failure of the database (locked past the busy timeout, disk full, read-only, gone) is
raised as `StoreError`, so that callers can tell "cannot save" from everything else. Calls
block: async callers run them in a worker thread.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd
from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    case,
    create_engine,
    event,
    false,
    func,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

from bargain.records import migrations

if TYPE_CHECKING:
    from bargain.engine.game import GameState, Turn

BUSY_TIMEOUT_S = 5.0  # how long a SQLite write waits for another writer's lock before failing
CSV_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")  # cells a spreadsheet would run as a formula
RESCORE_LOCK = 0x72657363  # the PostgreSQL advisory lock held while a process rescores the claim findings ("resc")
CSV_FLOAT_FORMAT = "%.10g"  # CSV numbers: 10 significant digits drop float noise (2.3200000000000003 -> 2.32)
log = logging.getLogger(__name__)


def utcnow() -> datetime:
    """Timestamps are UTC, without tzinfo in the database (SQLite keeps none)."""
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class Meta(Base):
    """One row, from the time the program versioned its schema by hand: schema_version, now past those versions
    (bargain.records.migrations.legacy.RETIRED), so that a program from before Alembic refuses the database."""

    __tablename__ = "bargain_meta"
    key: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


ACTIVE = "active"


class GameRow(Base):
    __tablename__ = "games"
    __table_args__ = (
        # A study participant's Nth game exists once, however many requests start it at once.
        Index("one_game_per_index", "study", "participant", "game_index", unique=True),
        # A browser (player) has at most one game going on: a second start in another tab or process is refused.
        Index(
            "one_active_game_per_player",
            "player",
            unique=True,
            sqlite_where=text("status = 'active'"),
            postgresql_where=text("status = 'active'"),
        ),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    status: Mapped[str] = mapped_column(String(16), default="active", index=True)  # active, finished, abandoned
    abandoned_by: Mapped[str | None] = mapped_column(String(16))  # "person" (started another) or "idle"
    driver: Mapped[str | None] = mapped_column(String(32))  # the app process that runs the game's loop now
    generation: Mapped[int] = mapped_column(default=0)  # raised at each take-over: only the driver times a person out
    player: Mapped[str | None] = mapped_column(String(64), index=True)  # the browser's player id
    participant: Mapped[str | None] = mapped_column(String(128))  # study mode: recruitment id
    study: Mapped[str | None] = mapped_column(String(64))
    game_index: Mapped[int | None]  # study mode: the game's place among the participant's games, from 1
    human_role: Mapped[str] = mapped_column(String(8))
    arm: Mapped[str] = mapped_column(String(200), index=True)
    scenario: Mapped[str] = mapped_column(String(32))
    seed: Mapped[int | None]
    condition: Mapped[str] = mapped_column(String(16))
    mode: Mapped[str] = mapped_column(String(16))
    max_rounds: Mapped[int]
    first_actor: Mapped[str] = mapped_column(String(8))
    buyer_price: Mapped[float]
    seller_price: Mapped[float]
    trial: Mapped[dict] = mapped_column(JSON)  # the whole trial (scenario text and ranges included)
    prompt_version: Mapped[str] = mapped_column(String(16))
    parsing: Mapped[str] = mapped_column(String(16))
    sampling: Mapped[dict | None] = mapped_column(JSON)
    backend: Mapped[dict | None] = mapped_column(JSON)
    out_of_distribution: Mapped[bool] = mapped_column(Boolean, default=False)
    ood_reasons: Mapped[list] = mapped_column(JSON, default=list)
    deal: Mapped[bool | None]
    deal_price: Mapped[float | None]
    rounds: Mapped[int | None]  # the round in which the game ended (a walk-away in round 2: 2)
    paper_rounds: Mapped[int | None]  # the paper's rounds metric: a game without a deal counts every round
    buyer_utility: Mapped[float | None]
    seller_utility: Mapped[float | None]
    buyer_norm_utility: Mapped[float | None]
    seller_norm_utility: Mapped[float | None]
    claims: Mapped[list | None] = mapped_column(JSON)  # the claim checker's findings, made when the game ended
    claims_checker: Mapped[str | None] = mapped_column(String(32))  # the checker's version that made them
    agent_misstated: Mapped[bool | None]  # whether the agent misstated a price limit in its favour
    extra: Mapped[dict] = mapped_column(JSON, default=dict)
    moves: Mapped[list[MoveRow]] = relationship(
        back_populates="game", order_by="MoveRow.seq", cascade="all, delete-orphan"
    )


class MoveRow(Base):
    __tablename__ = "moves"
    # One counted move per round and side: a second process replaying a round it read before the first one's commit
    # is refused here whatever else went wrong. Moves stored twice before schema version 4 stay, flagged `duplicate`.
    __table_args__ = (
        Index(
            "one_move_per_round",
            "game_id",
            "round",
            "role",
            unique=True,
            sqlite_where=text("duplicate = 0"),
            postgresql_where=text("NOT duplicate"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), index=True)
    seq: Mapped[int]  # order within the game, from 0
    round: Mapped[int]
    role: Mapped[str] = mapped_column(String(8))
    actor: Mapped[str] = mapped_column(String(8))  # "human" or "agent"
    action: Mapped[str] = mapped_column(String(8))
    price: Mapped[float | None] = mapped_column(Float)
    message: Mapped[str] = mapped_column(Text, default="")
    thought: Mapped[str] = mapped_column(Text, default="")
    raw: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    prompt_messages: Mapped[list | None] = mapped_column(JSON)
    latency_s: Mapped[float | None]
    prompt_tokens: Mapped[int | None] = mapped_column(Integer)
    completion_tokens: Mapped[int | None] = mapped_column(Integer)
    flags: Mapped[list] = mapped_column(JSON, default=list)  # e.g. "mentions_ai": an agent message naming AI or a model
    endpoint: Mapped[str | None] = mapped_column(String(512))  # the server that answered an agent move
    person: Mapped[str | None] = mapped_column(String(128))  # who made a person's move (games between two people)
    paced_s: Mapped[float | None] = mapped_column(Float)  # the human-like delay an agent's reply was held to (studies)
    # A second move for a (round, role) stored before schema version 4: kept for the record, never replayed
    duplicate: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    game: Mapped[GameRow] = relationship(back_populates="moves")


class SeatRow(Base):
    """One side of a game between two people. Its token is that person's handle on the game, which the other side
    never sees; the seat of the person who joins is free (`person` None) until they arrive, by the invitation link
    (its `invitation`: shown to the one who invites, so never a handle) or, for a seat in the public queue (`queue`:
    the settings it pairs on), by choosing the same settings and the other role."""

    __tablename__ = "seats"
    __table_args__ = (
        Index("one_seat_per_role", "game_id", "role", unique=True),
        # A study participant's Nth game is one seat, however many requests take it at once.
        Index(
            "one_seat_per_participant_game",
            "study",
            "person",
            "game_index",
            unique=True,
            sqlite_where=text("study IS NOT NULL"),
            postgresql_where=text("study IS NOT NULL"),
        ),
        # A start sent twice (its answer lost) takes one seat: the caller's start id, per player.
        Index(
            "one_seat_per_start",
            "person",
            "start_id",
            unique=True,
            sqlite_where=text("start_id IS NOT NULL"),
            postgresql_where=text("start_id IS NOT NULL"),
        ),
    )

    token: Mapped[str] = mapped_column(String(32), primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), index=True)
    role: Mapped[str] = mapped_column(String(8))
    person: Mapped[str | None] = mapped_column(String(128))  # the browser's player id, or a study participant's
    invitation: Mapped[str | None] = mapped_column(String(32), unique=True)
    queue: Mapped[str | None] = mapped_column(String(200), index=True)
    study: Mapped[str | None] = mapped_column(String(64))  # a study's seat: its name, and the participant's
    game_index: Mapped[int | None]  # game it is, from 1
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    joined_at: Mapped[datetime | None]
    seen_at: Mapped[datetime | None]  # when its person last asked for the game: a wait is live while they ask
    start_id: Mapped[str | None] = mapped_column(String(64))  # the free-play start that took it, if its caller named it


class LimitEventRow(Base):
    """One event that a sliding-window limit counts (bargain.arena.limits.RateLimit), such as a game started. Every
    app process counts in this table, so that a limit holds across them."""

    __tablename__ = "limit_events"
    __table_args__ = (Index("ix_limit_events_name_key_at", "name", "key", "at"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(32))  # the limit's name
    key: Mapped[str] = mapped_column(String(64))  # what it counts per (a browser, an address) as its SHA-256, in hex
    at: Mapped[float]  # seconds since the epoch, by the limit's clock


class LimitFailureRow(Base):
    """A key's failures under a backoff (bargain.arena.limits.Backoff), such as an address's wrong admin passwords:
    how many, and when the last one was."""

    __tablename__ = "limit_failures"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)  # the backoff's name
    key: Mapped[str] = mapped_column(String(64), primary_key=True)  # as SHA-256 in hex, as in limit_events
    failures: Mapped[int]
    last_at: Mapped[float]  # seconds since the epoch, by the backoff's clock


class RescoreRow(Base):
    """One run of `Store.rescore`: the claim checker's version, when, and how many games it scored."""

    __tablename__ = "rescores"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    checker: Mapped[str] = mapped_column(String(32))
    at: Mapped[datetime] = mapped_column(default=utcnow)
    games: Mapped[int]


class Version(NamedTuple):
    """What `Store.version` reads of a game."""

    generation: int
    moves: int
    status: str


class StoreError(RuntimeError):
    """The database cannot be used (the message says why and what to do)."""


class StaleGame(StoreError):
    """The game changed since this process read it (another process took it over, stored a round, or it ended):
    this write is refused, and the process must read the game again."""


class AlreadyStarted(StoreError):
    """The game to create exists already: this participant's game of that index, or this browser's game going on
    (`game_id` names it)."""

    def __init__(self, message: str, game_id: str):
        super().__init__(message)
        self.game_id = game_id


def _to_wal(cursor: Any) -> None:
    """WAL, where readers do not block the writer. Turning a new file to WAL needs the file to itself, and SQLite
    does not wait for that through its busy timeout: it answers "database is locked" at once while another process
    creates the schema in the file (a process opening it beside two others failed so, under load). So the switch
    is tried again until it is made, for as long as an upgrade may wait."""
    deadline = time.monotonic() + migrations.UPGRADE_WAIT_S
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    # The driver's own transaction handling runs DDL outside transactions; take it over (see
    # SQLAlchemy's pysqlite notes) so that a failed schema upgrade rolls back as a whole.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    _to_wal(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")  # with WAL: safe from corruption, no fsync per commit
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(connection: Connection) -> None:
    # A writer takes the write lock at once (IMMEDIATE): a deferred transaction that reads and then writes
    # fails at once with "database is locked" when another connection wrote in between, busy timeout or not.
    connection.exec_driver_sql("BEGIN IMMEDIATE" if connection.get_execution_options().get("writing") else "BEGIN")


class Store:
    """Named operations on the records; every write is its own committed transaction."""

    def __init__(self, url: str, busy_timeout_s: float = BUSY_TIMEOUT_S):
        self.url = url
        sqlite = url.startswith("sqlite")
        self._one_writer = threading.Lock() if sqlite else nullcontext()
        try:
            if url.startswith("sqlite:///") and not url.startswith("sqlite:///file:"):
                private_file(Path(url.removeprefix("sqlite:///")).expanduser())
            self.engine: Engine = create_engine(url, connect_args={"timeout": busy_timeout_s} if sqlite else {})
        except (OSError, SQLAlchemyError, ValueError, ImportError) as exc:  # a bad URL form or option, no driver
            raise StoreError(f"cannot open the database at {_shown(url)}: {' '.join(str(exc).split())}") from exc
        if sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas)
            event.listen(self.engine, "begin", _sqlite_begin)
        with self._failing_as_store_error("open"):
            # the revisions before and after; each one applied is logged (bargain.records.migrations.applied)
            self.upgraded: tuple[str | None, str] = migrations.upgrade(self.engine)

    @contextmanager
    def _failing_as_store_error(self, doing: str) -> Iterator[None]:
        """Any database failure (locked, full, read-only, unreachable) as a StoreError naming what was being done."""
        try:
            yield
        except (SQLAlchemyError, OSError, migrations.SchemaError) as exc:  # drivers' messages span lines: one line
            reason = " ".join(str(getattr(exc, "orig", None) or exc).split())
            raise StoreError(f"cannot {doing} the database at {self.engine.url!r}: {reason}") from exc

    @contextmanager
    def writing(self, doing: str) -> Iterator[Session]:  # public for the records of study mode (bargain.study)
        """A session whose changes commit together at the end, or not at all. On SQLite, the writers of this
        process take turns on a lock of their own (a waiting thread wakes the moment the last one commits,
        where SQLite's busy handler would poll in sleeps of milliseconds), and each transaction takes the
        database's write lock at its start, waiting up to the busy timeout for other processes."""
        with (
            self._failing_as_store_error(doing),
            self._one_writer,
            self.engine.connect() as connection,
            Session(bind=connection.execution_options(writing=True)) as session,
            session.begin(),
        ):
            yield session

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """A session for reads; any database failure is a StoreError."""
        with self._failing_as_store_error("read"), Session(self.engine) as session:
            yield session

    def check_writable(self) -> None:
        """Raise StoreError unless a write can be made now (a read-only file, a full disk...); writes nothing."""
        with self._failing_as_store_error("write to"), self.engine.connect() as connection:
            transaction = connection.begin()
            connection.execute(update(Meta).where(Meta.key == "schema_version").values(value=Meta.value))
            transaction.rollback()

    def revision(self) -> str | None:
        """The schema revision this database is at."""
        with self._failing_as_store_error("read"), self.engine.connect() as connection:
            return migrations.current(connection)

    # --- writes ------------------------------------------------------------------------------

    def create_game(self, replace_active: bool = False, **fields: Any) -> None:
        """Insert a new game row. The database refuses a second game of a study participant's game index, or a
        second active game of a browser (`player`), as AlreadyStarted naming the game that exists; with
        `replace_active`, the browser's game going on is abandoned by the person in the same transaction."""
        try:
            with self.writing("create a game in") as session:
                if replace_active and fields.get("player") is not None:
                    session.execute(
                        update(GameRow)
                        .where(GameRow.player == fields["player"], GameRow.status == ACTIVE)
                        .values(status="abandoned", abandoned_by="person", updated_at=utcnow())
                    )
                session.add(GameRow(**fields))
        except StoreError as exc:
            if not isinstance(exc.__cause__, IntegrityError):
                raise
            existing = self._started(fields)
            if existing is None:  # another constraint (a duplicate id): not a game started twice
                raise
            raise AlreadyStarted(f"game {existing} was started first", existing) from None

    def _started(self, fields: dict) -> str | None:
        """The game that a new one with these fields collides with: the participant's game of the same index, or
        the browser's active game."""
        if fields.get("study") is not None and fields.get("game_index") is not None:
            query = select(GameRow.id).where(
                GameRow.study == fields["study"],
                GameRow.participant == fields.get("participant"),
                GameRow.game_index == fields["game_index"],
            )
        elif fields.get("player") is not None:
            query = select(GameRow.id).where(GameRow.player == fields["player"], GameRow.status == ACTIVE)
        else:
            return None
        with self.reading() as session:
            return session.execute(query).scalar()

    def add_moves(
        self,
        game_id: str,
        moves: list[dict],
        outcome: dict | None = None,
        generation: int | None = None,
        based_on: int | None = None,
    ) -> None:
        """Append moves (in order) to an active game and touch it; with `outcome` (its fields, claims and
        agent_misstated included) also finish it. One transaction: all of it is stored, or nothing. The write
        names the state it was based on: `based_on` (how many moves it had read) and, for a write only the process
        driving the game may make, `generation` (the take-over it holds); if the stored game has moved past either,
        or is no longer active, it is refused (StaleGame)."""
        with self.writing("save moves in") as session:
            game = session.get(GameRow, game_id, with_for_update=True)
            if game is None:
                raise StoreError(f"no game {game_id}")
            if generation is not None and game.generation != generation:
                raise StaleGame(
                    f"game {game_id} is driven by another process now (generation {game.generation}, not {generation})"
                )
            if game.status != ACTIVE:
                raise StaleGame(f"game {game_id} is {game.status}")
            counted, last = session.execute(
                select(func.count().filter(MoveRow.duplicate.is_(False)), func.max(MoveRow.seq)).where(
                    MoveRow.game_id == game_id
                )
            ).one()
            if based_on is not None and counted != based_on:
                raise StaleGame(f"game {game_id} holds {counted} moves, not the {based_on} this write was based on")
            start = last + 1 if last is not None else 0
            for offset, move in enumerate(moves):
                session.add(MoveRow(game_id=game_id, seq=start + offset, **move))
            game.updated_at = utcnow()
            if outcome is not None:
                for key, value in outcome.items():
                    setattr(game, key, value)
                game.status, game.finished_at = "finished", game.updated_at

    def finish_game(self, game_id: str, outcome: dict) -> None:
        """Record the outcome and mark the game finished (no moves added)."""
        self.add_moves(game_id, [], outcome)

    def take_over(self, game_id: str, driver: str, study: str | None = None) -> dict | None:
        """Make `driver` (an app process) the one that runs an active game's loop, and read the game in the same
        transaction (as `game` returns it, with its new generation): the state a process goes on from is exactly
        the one it took over. The generation fences off whichever process drove it before from writing a pass for a
        person's time running out (StaleGame); moves are fenced by the state they were based on. A game that is not
        active is only read. None for no such game, or for a game that is not `study`'s (None: free play's), which
        is neither taken nor read: a study's game is reached through the study only."""
        with self.writing("take over a game in") as session:
            game = session.get(GameRow, game_id, with_for_update=True)
            if game is None or game.study != study:
                return None
            if game.status == ACTIVE:
                game.driver, game.generation = driver, (game.generation or 0) + 1
                session.flush()
            return _with_moves(game)

    def version(self, game_id: str) -> Version | None:
        """A game's generation, number of counted moves and status as stored, in one small query (None for no such
        game): a process holding another state of it is out of date, and a view waiting for it to change looks."""
        moves = select(func.count()).where(MoveRow.game_id == game_id, MoveRow.duplicate.is_(False)).scalar_subquery()
        with self.reading() as session:
            found = session.execute(
                select(GameRow.generation, moves, GameRow.status).where(GameRow.id == game_id)
            ).first()
            return None if found is None else Version(*found)

    def set_extra(self, game_id: str, key: str, value: Any) -> None:
        """Store `value` under `key` in a game's `extra` record (e.g. the judge's scores)."""
        with self.writing("update a game in") as session:
            game = session.get(GameRow, game_id)
            if game is None:
                raise StoreError(f"no game {game_id} to update")
            game.extra = {**(game.extra or {}), key: value}

    def abandon_idle(self, idle: timedelta) -> list[str]:
        """Mark active games (and games still waiting for a second person) untouched for longer than `idle` as
        abandoned; returns their ids."""
        cutoff = utcnow() - idle
        with self.writing("mark idle games in") as session:
            games = session.scalars(
                select(GameRow).where(GameRow.status.in_((ACTIVE, "waiting")), GameRow.updated_at < cutoff)
            ).all()
            for game in games:
                game.status, game.abandoned_by = "abandoned", "idle"
            return [g.id for g in games]

    def rescore(self, every: bool = False) -> int:
        """Remake the claim checker's findings (and agent_misstated) of the finished games whose findings this
        version of the checker did not make (`every`: of all finished games), each stored with the checker's
        version, and record the rescore; one transaction. Returns how many games were scored.

        Rescores take turns (PostgreSQL: an advisory lock; SQLite: the database's write lock), each reading the games
        once it has its turn: of two at once, the second scores only what the first did not (`every`: all again)."""
        from bargain.analysis.claims import CHECKER_VERSION

        query = select(GameRow).where(GameRow.status == "finished").order_by(GameRow.created_at)
        if not every:
            query = query.where(or_(GameRow.claims_checker.is_(None), GameRow.claims_checker != CHECKER_VERSION))
        with self.writing("rescore the games in") as session:
            if session.bind is not None and session.bind.dialect.name == "postgresql":
                session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": RESCORE_LOCK})
            games = session.scalars(query).all()
            for game in games:
                counted = [columns_of(m) for m in game.moves if not m.duplicate]
                for key, value in game_findings(columns_of(game), counted).items():
                    setattr(game, key, value)
            session.add(RescoreRow(checker=CHECKER_VERSION, games=len(games)))
            return len(games)

    # --- reads -------------------------------------------------------------------------------

    def unscored(self) -> int:
        """How many finished games hold no claim findings of a known checker version (`rescore` makes them)."""
        with self.reading() as session:
            return session.execute(
                select(func.count()).where(GameRow.status == "finished", GameRow.claims_checker.is_(None))
            ).scalar_one()

    def game(self, game_id: str) -> dict | None:
        """A game with its counted moves in order, as plain dicts (None if unknown); named by its id, or by the seat
        of one of the two people playing it (their handle on it)."""
        with self.reading() as session:
            game = session.get(GameRow, game_id)
            if game is None:
                seat = session.get(SeatRow, game_id)
                game = None if seat is None else session.get(GameRow, seat.game_id)
            return None if game is None else _with_moves(game)

    def games_frame(self, player: str | None = None) -> pd.DataFrame:
        """All games (or one player's) as a table."""
        query = select(GameRow).order_by(GameRow.created_at)
        if player is not None:
            query = query.where(GameRow.player == player)
        with self.reading() as session:
            return pd.DataFrame([columns_of(g) for g in session.scalars(query)])

    def moves_frame(self) -> pd.DataFrame:
        """All moves of all games, in order."""
        with self.reading() as session:
            rows = session.scalars(select(MoveRow).order_by(MoveRow.game_id, MoveRow.seq))
            return pd.DataFrame([columns_of(m) for m in rows])

    def seats_frame(self) -> pd.DataFrame:
        """Both sides of every game between two people: who took which role, when, and how (by invitation or the
        queue). Not the tokens: a seat's token is its person's handle on the game, and an invitation's grants one."""
        columns = ["game_id", "role", "person", "created_at", "joined_at"]
        with self.reading() as session:
            rows = session.scalars(select(SeatRow).order_by(SeatRow.game_id, SeatRow.role))
            return pd.DataFrame(
                [{**{c: getattr(s, c) for c in columns}, "by": "queue" if s.queue else "invitation"} for s in rows],
                columns=[*columns, "by"],
            )

    def player_games(self, player: str, limit: int = 200) -> pd.DataFrame:
        """One player's latest games (newest first), without their trial or moves: cheap at any size. Games against
        another person count too, whichever side the player took."""
        seat = select(SeatRow.game_id, SeatRow.role).where(SeatRow.person == player).subquery()
        role = func.coalesce(seat.c.role, GameRow.human_role)
        person = case((role == "buyer", GameRow.buyer_norm_utility), else_=GameRow.seller_norm_utility)
        query = (
            select(
                GameRow.created_at.label("started"),
                GameRow.arm.label("opponent"),
                role.label("role"),
                GameRow.condition,
                GameRow.status,
                GameRow.deal,
                GameRow.deal_price,
                person.label("your_norm_utility"),
            )
            .outerjoin(seat, seat.c.game_id == GameRow.id)
            .where(or_(GameRow.player == player, seat.c.game_id.is_not(None)))
            .order_by(GameRow.created_at.desc())
            .limit(limit)
        )
        with self.reading() as session:
            return pd.DataFrame(session.execute(query).mappings().all(), columns=list(query.selected_columns.keys()))

    def results_by_arm(self) -> pd.DataFrame:
        """Per opponent and condition, over finished games, in one query: games, deal rate, mean normalised
        utility of the person and of the agent, and the share of games where the agent misstated a limit."""
        person, agent = _sides()
        as_number = lambda flag: case((flag, 1.0), else_=0.0)  # noqa: E731 (booleans averaged alike everywhere)
        query = (
            select(
                GameRow.arm.label("opponent"),
                GameRow.condition,
                func.count().label("games"),
                func.avg(as_number(GameRow.deal)).label("deal_rate"),
                func.avg(person).label("your_norm_utility"),
                func.avg(agent).label("agent_norm_utility"),
                func.avg(as_number(GameRow.agent_misstated)).label("agent_misrepresentation_rate"),
            )
            .where(GameRow.status == "finished")
            .group_by(GameRow.arm, GameRow.condition)
            .order_by(GameRow.arm, GameRow.condition)
        )
        with self.reading() as session:
            return pd.DataFrame(session.execute(query).mappings().all(), columns=list(query.selected_columns.keys()))

    def result_utilities(self) -> pd.DataFrame:
        """Each finished game's opponent, condition, person (the browser's player id; in a game between two people
        the person of the side that started it; else the game itself) and that person's normalised utility: what a
        cluster bootstrap of `results_by_arm`'s means resamples (a person's games are not independent)."""
        person, _ = _sides()
        starter = (
            select(SeatRow.person)
            .where(SeatRow.game_id == GameRow.id, SeatRow.role == GameRow.human_role)
            .scalar_subquery()
        )
        query = select(
            GameRow.arm.label("opponent"),
            GameRow.condition,
            func.coalesce(GameRow.player, starter, GameRow.id).label("person"),
            person.label("your_norm_utility"),
        ).where(GameRow.status == "finished")
        with self.reading() as session:
            return pd.DataFrame(session.execute(query).mappings().all(), columns=list(query.selected_columns.keys()))

    def export(self, directory: str | Path) -> list[Path]:
        """games, moves and seats (the sides of games between two people) as CSV and Parquet files in `directory`.
        Parquet holds the values exactly; CSV shows
        numbers to 10 significant digits, and a text cell that a spreadsheet would run as a formula (= + - @
        first) is prefixed with a quote."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        return [
            path
            for name, frame in (
                ("games", self.games_frame()),
                ("moves", self.moves_frame()),
                ("seats", self.seats_frame()),
            )
            for path in write_table(frame, directory, name)
        ]


def _sides():
    """The person's and the agent's normalised utility of a game, as columns (the person plays `human_role`)."""
    buyer = GameRow.human_role == "buyer"
    return (
        case((buyer, GameRow.buyer_norm_utility), else_=GameRow.seller_norm_utility),
        case((buyer, GameRow.seller_norm_utility), else_=GameRow.buyer_norm_utility),
    )


def _with_moves(game: GameRow) -> dict:
    """A game row with its counted moves in order (a duplicate stored before schema version 4 is left out: the first
    stored move of a round and side is the one that was played), as plain dicts."""
    return {**columns_of(game), "moves": [columns_of(m) for m in game.moves if not m.duplicate]}


def write_table(frame: pd.DataFrame, directory: Path, name: str) -> list[Path]:
    """`name`.csv and `name`.parquet in `directory`: JSON columns as JSON text in both; Parquet holds the values
    exactly; CSV is read by people, so numbers show 10 significant digits (2.3200000000000003 -> 2.32) and a text
    cell that a spreadsheet would run as a formula is prefixed with a quote."""
    flat = frame.apply(lambda column: column.map(_flat) if column.dtype == object else column)
    inert = flat.apply(
        lambda column: column.map(_inert) if pd.api.types.is_string_dtype(column) or column.dtype == object else column
    )
    csv_path, parquet_path = directory / f"{name}.csv", directory / f"{name}.parquet"
    inert.to_csv(csv_path, index=False, float_format=CSV_FLOAT_FORMAT)
    flat.to_parquet(parquet_path, index=False)
    return [csv_path, parquet_path]


def turns_of(moves: list[dict]) -> list[Turn]:
    """Stored moves (as `Store.game` returns them) as the engine's turns."""
    from bargain.engine.game import Action, Turn
    from bargain.engine.trial import Role

    return [
        Turn(
            m["round"],
            Role(m["role"]),
            Action(m["action"]),
            m["price"],
            m["message"],
            m["thought"],
            m["raw"],
            m["error"],
        )
        for m in moves
    ]


def game_state(row: dict):
    """A stored game (as returned by `Store.game`) rebuilt through the rules from its moves."""
    from bargain.engine.game import replay
    from bargain.engine.trial import Trial

    return replay(Trial.from_dict(row["trial"]), turns_of(row["moves"]))


def game_findings(game: dict, moves: Iterable[Any]) -> dict:
    """What the claim checker (bargain.analysis.claims.findings) makes of a finished game, as the game's columns: its
    findings, whether the agent misstated a price limit in its favour (what the debrief and the results tables show),
    and the checker's version."""
    from bargain.analysis.claims import CHECKER_VERSION, findings

    found = findings(moves, game["buyer_price"], game["seller_price"])
    agent = "seller" if game["human_role"] == "buyer" else "buyer"
    return {
        "claims": found,
        "agent_misstated": any(f["role"] == agent and f["misrepresentation"] for f in found),
        "claims_checker": CHECKER_VERSION,
    }


def outcome_fields(state: GameState, human_role: str) -> dict:
    """A finished game's columns, stored with its last move: the outcome (the round it ended in, the paper's rounds,
    both sides' utilities) and the claim checker's findings (`human_role`: the side whose other side is judged)."""
    ended, trial = state.outcome(), state.trial
    return {
        "deal": ended.deal,
        "deal_price": ended.deal_price,
        "rounds": state.turns[-1].round,
        "paper_rounds": ended.rounds,
        "buyer_utility": ended.buyer_utility,
        "seller_utility": ended.seller_utility,
        "buyer_norm_utility": ended.buyer_norm_utility,
        "seller_norm_utility": ended.seller_norm_utility,
        **game_findings(
            {"human_role": human_role, "buyer_price": trial.buyer_price, "seller_price": trial.seller_price},
            state.turns,
        ),
    }


def advisory_lock(session: Session, *keys: str) -> None:
    """On PostgreSQL, hold an advisory lock on each key until the session's transaction ends, so that the transactions
    of every process that read and then write under one key take turns; taken in one order, so that two transactions
    wanting the same keys never each hold one that the other waits for. SQLite's writers take turns already (a
    write transaction begins with the database's write lock)."""
    if session.bind is None or session.bind.dialect.name != "postgresql":
        return
    numbers = {int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True) for key in keys}
    for number in sorted(numbers):  # PostgreSQL's advisory locks are numbered by signed 64-bit integers
        session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": number})


def private_file(path: Path) -> Path:
    """`path`, created empty and readable by its owner only (0600) if it does not exist, its folder made as needed:
    what the database holds (participants' ids, their answers) and the keys beside it are nobody else's to read.
    (SQLite gives its journal files the database file's permissions.)"""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    return path


def _shown(url: str) -> str:
    """A database URL fit for a message or a log: its password hidden."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (SQLAlchemyError, ValueError):
        return "(an unreadable URL)"


def _inert(value: object) -> object:
    """A CSV cell that no spreadsheet runs as a formula."""
    return "'" + value if isinstance(value, str) and value.startswith(CSV_FORMULA_PREFIXES) else value


def _flat(value: object) -> object:
    """JSON columns as JSON text, so that CSV and Parquet can hold them."""
    return json.dumps(value) if isinstance(value, (dict, list)) else value


def columns_of(row: Base) -> dict:
    """A stored row as a plain dict of its columns."""
    return {c.key: getattr(row, c.key) for c in row.__table__.columns}


def default_url(data_dir: str | Path | None = None) -> str:
    """`sqlite:///<dir>/bargain.db`: /data on a Space with persistent storage, else ./data."""
    if data_dir is None:
        data_dir = "/data" if Path("/data").is_dir() else "data"
    return f"sqlite:///{Path(data_dir).resolve() / 'bargain.db'}"
