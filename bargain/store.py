"""Durable records of arena games and their moves (SQLAlchemy; SQLite by default, any URL works).

A game row holds everything needed to reanalyse it (scenario, seed, v_B, v_S, ranges,
condition, mode, rounds, arm, the person's role, prompt version, backend, model and revision,
sampling, the out-of-distribution flag, timestamps, status, outcome); a move row holds one
side's move with the agent's raw reply, thought, prompt messages, latency and tokens. Each
round's moves are committed before the game goes on. `participant`, `study` and `extra` leave
room for study mode (consent, recruitment ids, surveys) without a rewrite. The schema carries
a version number; `connect` creates a new database or upgrades an old one step by step.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Optional

import pandas as pd
from sqlalchemy import JSON, Boolean, Float, ForeignKey, Integer, String, Text, create_engine, event, select, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

SCHEMA_VERSION = 1


def utcnow() -> datetime:
    """Timestamps are UTC, without tzinfo in the database (SQLite keeps none)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class Meta(Base):
    """One row: the schema version of this database."""

    __tablename__ = "bargain_meta"
    key: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


class GameRow(Base):
    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[Optional[datetime]]
    status: Mapped[str] = mapped_column(String(16), default="active", index=True)  # active, finished, abandoned
    player: Mapped[Optional[str]] = mapped_column(String(64), index=True)  # the browser's player id
    participant: Mapped[Optional[str]] = mapped_column(String(128))  # study mode: recruitment id
    study: Mapped[Optional[str]] = mapped_column(String(64))
    human_role: Mapped[str] = mapped_column(String(8))
    arm: Mapped[str] = mapped_column(String(200), index=True)
    scenario: Mapped[str] = mapped_column(String(32))
    seed: Mapped[Optional[int]]
    condition: Mapped[str] = mapped_column(String(16))
    mode: Mapped[str] = mapped_column(String(16))
    max_rounds: Mapped[int]
    first_actor: Mapped[str] = mapped_column(String(8))
    buyer_price: Mapped[float]
    seller_price: Mapped[float]
    trial: Mapped[dict] = mapped_column(JSON)  # the whole trial (scenario text and ranges included)
    prompt_version: Mapped[str] = mapped_column(String(16))
    parsing: Mapped[str] = mapped_column(String(16))
    sampling: Mapped[Optional[dict]] = mapped_column(JSON)
    backend: Mapped[Optional[dict]] = mapped_column(JSON)
    out_of_distribution: Mapped[bool] = mapped_column(Boolean, default=False)
    ood_reasons: Mapped[list] = mapped_column(JSON, default=list)
    deal: Mapped[Optional[bool]]
    deal_price: Mapped[Optional[float]]
    rounds: Mapped[Optional[int]]
    buyer_utility: Mapped[Optional[float]]
    seller_utility: Mapped[Optional[float]]
    buyer_norm_utility: Mapped[Optional[float]]
    seller_norm_utility: Mapped[Optional[float]]
    extra: Mapped[dict] = mapped_column(JSON, default=dict)
    moves: Mapped[list["MoveRow"]] = relationship(back_populates="game", order_by="MoveRow.seq",
                                                  cascade="all, delete-orphan")


class MoveRow(Base):
    __tablename__ = "moves"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), index=True)
    seq: Mapped[int]  # order within the game, from 0
    round: Mapped[int]
    role: Mapped[str] = mapped_column(String(8))
    actor: Mapped[str] = mapped_column(String(8))  # "human" or "agent"
    action: Mapped[str] = mapped_column(String(8))
    price: Mapped[Optional[float]] = mapped_column(Float)
    message: Mapped[str] = mapped_column(Text, default="")
    thought: Mapped[str] = mapped_column(Text, default="")
    raw: Mapped[Optional[str]] = mapped_column(Text)
    error: Mapped[Optional[str]] = mapped_column(Text)
    prompt_messages: Mapped[Optional[list]] = mapped_column(JSON)
    latency_s: Mapped[Optional[float]]
    prompt_tokens: Mapped[Optional[int]] = mapped_column(Integer)
    completion_tokens: Mapped[Optional[int]] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    game: Mapped[GameRow] = relationship(back_populates="moves")


# Upgrades from each older version to the next: (version reached, SQL statements).
MIGRATIONS: list[tuple[int, list[str]]] = []


class StoreError(RuntimeError):
    """The database cannot be used (the message says why and what to do)."""


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    # The driver's own transaction handling runs DDL outside transactions; take it over (see
    # SQLAlchemy's pysqlite notes) so that a failed schema upgrade rolls back as a whole.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer
    cursor.execute("PRAGMA synchronous=NORMAL")  # with WAL: safe from corruption, no fsync per commit
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class Store:
    """Named operations on the records; every write is its own committed transaction."""

    def __init__(self, url: str):
        self.url = url
        if url.startswith("sqlite:///"):
            Path(url.removeprefix("sqlite:///")).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self.engine: Engine = create_engine(url, future=True)
        if url.startswith("sqlite"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
            event.listen(self.engine, "begin", lambda connection: connection.exec_driver_sql("BEGIN"))
        self._migrate()

    def _migrate(self) -> None:
        with self.engine.begin() as connection:
            Base.metadata.create_all(connection)
            row = connection.execute(select(Meta.value).where(Meta.key == "schema_version")).scalar()
            version = int(row) if row is not None else None
            if version is None:
                connection.execute(Meta.__table__.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
                return
            if version > SCHEMA_VERSION:
                raise StoreError(f"the database at {self.url} has schema version {version}, newer than this "
                                 f"program's {SCHEMA_VERSION}: upgrade bargain")
            for reached, statements in MIGRATIONS:
                if reached > version:
                    for statement in statements:
                        connection.execute(text(statement))
                    connection.execute(Meta.__table__.update().where(Meta.key == "schema_version")
                                       .values(value=str(reached)))

    def schema_version(self) -> int:
        """The version this database is at."""
        with Session(self.engine) as session:
            return int(session.get(Meta, "schema_version").value)

    # --- writes ------------------------------------------------------------------------------

    def create_game(self, **fields: Any) -> None:
        """Insert a new game row."""
        with Session(self.engine) as session, session.begin():
            session.add(GameRow(**fields))

    def add_moves(self, game_id: str, moves: list[dict]) -> None:
        """Append moves (in order) to a game and touch it, in one transaction."""
        with Session(self.engine) as session, session.begin():
            game = session.get(GameRow, game_id)
            if game is None:
                raise StoreError(f"no game {game_id}")
            start = session.execute(select(MoveRow.seq).where(MoveRow.game_id == game_id)
                                    .order_by(MoveRow.seq.desc()).limit(1)).scalar()
            for offset, move in enumerate(moves):
                session.add(MoveRow(game_id=game_id, seq=(start + 1 if start is not None else 0) + offset, **move))
            game.updated_at = utcnow()

    def finish_game(self, game_id: str, outcome: dict) -> None:
        """Record the outcome and mark the game finished."""
        with Session(self.engine) as session, session.begin():
            game = session.get(GameRow, game_id)
            for key, value in outcome.items():
                setattr(game, key, value)
            game.status, game.finished_at = "finished", utcnow()
            game.updated_at = game.finished_at

    def set_extra(self, game_id: str, key: str, value: Any) -> None:
        """Store `value` under `key` in a game's `extra` record (e.g. the judge's scores)."""
        with Session(self.engine) as session, session.begin():
            game = session.get(GameRow, game_id)
            game.extra = {**(game.extra or {}), key: value}

    def abandon_idle(self, idle: timedelta) -> list[str]:
        """Mark active games untouched for longer than `idle` as abandoned; returns their ids."""
        cutoff = utcnow() - idle
        with Session(self.engine) as session, session.begin():
            games = session.scalars(select(GameRow).where(GameRow.status == "active", GameRow.updated_at < cutoff)).all()
            for game in games:
                game.status = "abandoned"
            return [g.id for g in games]

    # --- reads -------------------------------------------------------------------------------

    def game(self, game_id: str) -> dict | None:
        """A game with its moves in order, as plain dicts (None if unknown)."""
        with Session(self.engine) as session:
            game = session.get(GameRow, game_id)
            if game is None:
                return None
            return {**_columns(game), "moves": [_columns(m) for m in game.moves]}

    def games_frame(self, player: str | None = None) -> pd.DataFrame:
        """All games (or one player's) as a table."""
        query = select(GameRow).order_by(GameRow.created_at)
        if player is not None:
            query = query.where(GameRow.player == player)
        with Session(self.engine) as session:
            return pd.DataFrame([_columns(g) for g in session.scalars(query)])

    def moves_frame(self) -> pd.DataFrame:
        """All moves of all games, in order."""
        with Session(self.engine) as session:
            rows = session.scalars(select(MoveRow).order_by(MoveRow.game_id, MoveRow.seq))
            return pd.DataFrame([_columns(m) for m in rows])

    def export(self, directory: str | Path) -> list[Path]:
        """games and moves as CSV and Parquet files in `directory`."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for name, frame in (("games", self.games_frame()), ("moves", self.moves_frame())):
            flat = frame.apply(lambda column: column.map(_flat) if column.dtype == object else column)
            for suffix, write in ((".csv", lambda f, p: f.to_csv(p, index=False)),
                                  (".parquet", lambda f, p: f.to_parquet(p, index=False))):
                path = directory / f"{name}{suffix}"
                write(flat, path)
                written.append(path)
        return written


def game_state(row: dict):
    """A stored game (as returned by `Store.game`) rebuilt through the rules from its moves."""
    from bargain.game import Action, Turn, replay
    from bargain.trial import Role, Trial

    turns = [Turn(m["round"], Role(m["role"]), Action(m["action"]), m["price"], m["message"], m["thought"], m["raw"],
                  m["error"]) for m in row["moves"]]
    return replay(Trial.from_dict(row["trial"]), turns)


def _flat(value: object) -> object:
    """JSON columns as JSON text, so that CSV and Parquet can hold them."""
    return json.dumps(value) if isinstance(value, (dict, list)) else value


def _columns(row: Base) -> dict:
    return {c.key: getattr(row, c.key) for c in row.__table__.columns}


def default_url(data_dir: str | Path | None = None) -> str:
    """`sqlite:///<dir>/bargain.db`: /data on a Space with persistent storage, else ./data."""
    if data_dir is None:
        data_dir = "/data" if Path("/data").is_dir() else "data"
    return f"sqlite:///{Path(data_dir).resolve() / 'bargain.db'}"

