"""The schema as the program made it by hand before Alembic, frozen: hand version 4, every table.

Until then the store kept its own version number (1 to 4) in `bargain_meta` and upgraded a database with raw
ALTER statements; study mode's tables were created beside them outside any version. Revision 0001 creates this
schema on an empty database, and `adopt`s an older one in place: the missing steps of the hand versions (their
SQL as it was, their data fills written out here in plain SQL), then the tables, indexes and study columns a
database of the time could lack. Nothing is deleted. The claim checker's findings that the version 2 step used to
compute are not: they depend on the checker of the day, and `python -m bargain rescore` records them with the
checker's version. The steps' SQL is kept as it ran: a database adopted from version 1 has `games.generation` and
`moves.flags` nullable, as the program of version 4 left it (its old moves hold no flags).

`bargain_meta` stays, its version set to RETIRED: a program from before Alembic reads "schema version 5, newer
than this program's 4: upgrade bargain" and refuses the database, instead of writing to a schema it does not know.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Connection,
    DateTime,
    Double,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    func,
    inspect,
    select,
    text,
)

from bargain.records.migrations import SchemaError

HAND_VERSION = 4  # the last version numbered by hand
RETIRED = HAND_VERSION + 1  # bargain_meta's version once Alembic keeps the schema: old programs refuse it

metadata = MetaData()

meta = Table(
    "bargain_meta", metadata, Column("key", String(32), primary_key=True), Column("value", String(200), nullable=False)
)

games = Table(
    "games",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    Column("finished_at", DateTime),
    Column("status", String(16), nullable=False, index=True),
    Column("abandoned_by", String(16)),
    Column("driver", String(32)),
    Column("generation", Integer, nullable=False),
    Column("player", String(64), index=True),
    Column("participant", String(128)),
    Column("study", String(64)),
    Column("game_index", Integer),
    Column("human_role", String(8), nullable=False),
    Column("arm", String(200), nullable=False, index=True),
    Column("scenario", String(32), nullable=False),
    Column("seed", Integer),
    Column("condition", String(16), nullable=False),
    Column("mode", String(16), nullable=False),
    Column("max_rounds", Integer, nullable=False),
    Column("first_actor", String(8), nullable=False),
    Column("buyer_price", Double, nullable=False),
    Column("seller_price", Double, nullable=False),
    Column("trial", JSON, nullable=False),
    Column("prompt_version", String(16), nullable=False),
    Column("parsing", String(16), nullable=False),
    Column("sampling", JSON),
    Column("backend", JSON),
    Column("out_of_distribution", Boolean, nullable=False),
    Column("ood_reasons", JSON, nullable=False),
    Column("deal", Boolean),
    Column("deal_price", Double),
    Column("rounds", Integer),
    Column("paper_rounds", Integer),
    Column("buyer_utility", Double),
    Column("seller_utility", Double),
    Column("buyer_norm_utility", Double),
    Column("seller_norm_utility", Double),
    Column("claims", JSON),
    Column("agent_misstated", Boolean),
    Column("extra", JSON, nullable=False),
    Index("one_game_per_index", "study", "participant", "game_index", unique=True),
    Index(
        "one_active_game_per_player",
        "player",
        unique=True,
        sqlite_where=text("status = 'active'"),
        postgresql_where=text("status = 'active'"),
    ),
)

moves = Table(
    "moves",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("game_id", String(32), ForeignKey("games.id"), nullable=False, index=True),
    Column("seq", Integer, nullable=False),
    Column("round", Integer, nullable=False),
    Column("role", String(8), nullable=False),
    Column("actor", String(8), nullable=False),
    Column("action", String(8), nullable=False),
    Column("price", Float),
    Column("message", Text, nullable=False),
    Column("thought", Text, nullable=False),
    Column("raw", Text),
    Column("error", Text),
    Column("prompt_messages", JSON),
    Column("latency_s", Double),
    Column("prompt_tokens", Integer),
    Column("completion_tokens", Integer),
    Column("flags", JSON, nullable=False),
    Column("endpoint", String(512)),
    Column("duplicate", Boolean, nullable=False, server_default=false()),
    Column("created_at", DateTime, nullable=False),
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

studies = Table(
    "studies",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("hash", String(64), nullable=False),
    Column("config", JSON, nullable=False),
    Column("salt", String(32), nullable=False),
    Column("created_at", DateTime, nullable=False),
)

study_cells = Table(
    "study_cells",
    metadata,
    Column("study", String(64), primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("cell", String(128), primary_key=True),
    Column("quota", Integer, nullable=False),
    Column("filled", Integer, nullable=False),
)

study_participants = Table(
    "study_participants",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("study", String(64), nullable=False, index=True),
    Column("version", Integer, nullable=False),
    Column("study_hash", String(64), nullable=False),
    Column("participant", String(128), nullable=False),
    Column("source", JSON, nullable=False),
    Column("forgotten", Boolean, nullable=False),
    Column("browser", String(64), index=True),
    Column("stage", String(16), nullable=False, index=True),
    Column("consent_version", String(64)),
    Column("comprehension_attempts", Integer, nullable=False),
    Column("cells", JSON, nullable=False),
    Column("games", JSON, nullable=False),
    Column("games_done", Integer, nullable=False),
    Column("attention_failures", Integer, nullable=False),
    Column("timeouts", Integer, nullable=False),
    Column("excluded", Boolean, nullable=False),
    Column("exclusion_reasons", JSON, nullable=False),
    Column("bonus", Float),
    Column("stage_times", JSON, nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False, index=True),
    Column("completed_at", DateTime),
    UniqueConstraint("study", "participant", name="one_participant_per_study"),
)

study_answers = Table(
    "study_answers",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("participant_id", Integer, ForeignKey("study_participants.id"), nullable=False, index=True),
    Column("survey", String(16), nullable=False),
    Column("game", Integer, nullable=False),
    Column("item", String(64), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("value", Text, nullable=False),
    Column("correct", Boolean),
    Column("created_at", DateTime, nullable=False),
    UniqueConstraint("participant_id", "survey", "game", "item", "attempt", name="answered_once"),
)


def _fill_v2(connection: Connection) -> None:
    """Version 2, for games stored before it: who abandoned a game (then always the idle sweep), the paper's rounds
    metric in its own column, and `rounds` as the round in which a finished game ended."""
    connection.execute(games.update().where(games.c.status == "abandoned").values(abandoned_by="idle"))
    last_round = select(func.max(moves.c["round"])).where(moves.c.game_id == games.c.id).scalar_subquery()
    connection.execute(
        games.update()
        .where(games.c.status == "finished")
        .values(paper_rounds=games.c.rounds, rounds=func.coalesce(last_round, games.c.rounds))
    )


def _fill_v4(connection: Connection) -> None:
    """Version 4: the constraints that keep a game whole across processes, on data stored without them. A second
    move of a (round, role) is flagged `duplicate` (the first stored counts); a study's games get their index from
    their participant's list (a game started twice keeps none); of a browser's several active games, all but the
    newest are abandoned by the person. (`adopt` then makes the unique indexes.)"""
    seen: set[tuple] = set()
    for move_id, game_id, round_, role in connection.execute(
        select(moves.c.id, moves.c.game_id, moves.c["round"], moves.c.role).order_by(moves.c.game_id, moves.c.seq)
    ):
        if (game_id, round_, role) in seen:
            connection.execute(moves.update().where(moves.c.id == move_id).values(duplicate=True))
        seen.add((game_id, round_, role))
    if inspect(connection).has_table("study_participants"):
        people = connection.execute(text("SELECT study, participant, games FROM study_participants")).all()
        for study, participant, listed in people:
            listed = json.loads(listed) if isinstance(listed, str) else (listed or [])
            for index, game_id in enumerate(listed, 1):
                connection.execute(
                    games.update()
                    .where(games.c.id == game_id, games.c.study == study, games.c.participant == participant)
                    .values(game_index=index)
                )
    newest: dict[str, str] = {}
    for game_id, player in connection.execute(
        select(games.c.id, games.c.player)
        .where(games.c.status == "active", games.c.player.is_not(None))
        .order_by(games.c.created_at.desc())
    ):
        if player in newest:
            connection.execute(
                games.update().where(games.c.id == game_id).values(status="abandoned", abandoned_by="person")
            )
        newest.setdefault(player, game_id)


# The hand versions' upgrades, each from the version before: (version reached, SQL statements, then a fill or None).
STEPS: list[tuple[int, list[str], Callable[[Connection], None] | None]] = [
    (
        2,
        [
            "ALTER TABLE games ADD COLUMN claims JSON",
            "ALTER TABLE games ADD COLUMN agent_misstated BOOLEAN",
            "ALTER TABLE games ADD COLUMN paper_rounds INTEGER",
            "ALTER TABLE games ADD COLUMN abandoned_by VARCHAR(16)",
            "ALTER TABLE moves ADD COLUMN flags JSON",
            "ALTER TABLE games ADD COLUMN driver VARCHAR(32)",
            "ALTER TABLE games ADD COLUMN generation INTEGER DEFAULT 0",
        ],
        _fill_v2,
    ),
    (3, ["ALTER TABLE moves ADD COLUMN endpoint VARCHAR(512)"], None),
    (
        4,
        [
            "ALTER TABLE games ADD COLUMN game_index INTEGER",
            "ALTER TABLE moves ADD COLUMN duplicate BOOLEAN NOT NULL DEFAULT FALSE",
        ],
        _fill_v4,
    ),
]

# Columns the study tables gained while they were made outside any version (a study's pseudonym salt, retention's
# flag, the browser token): added where missing, with what a new row would get (each study then a salt of its own).
STUDY_COLUMNS = (
    ("studies", "salt", "VARCHAR(32) NOT NULL DEFAULT ''"),
    ("study_participants", "forgotten", "BOOLEAN NOT NULL DEFAULT FALSE"),
    ("study_participants", "browser", "VARCHAR(64)"),
)


def hand_version(connection: Connection) -> int | None:
    """The hand version a database records (None: an empty database, or one without bargain's tables)."""
    tables = set(inspect(connection).get_table_names())
    if "bargain_meta" not in tables:
        if "games" in tables:
            raise SchemaError("the database has a games table but no bargain_meta table: it was not made by bargain")
        return None
    value = connection.execute(select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
    if value is None or not value.isdigit() or not 1 <= int(value) <= HAND_VERSION:
        raise SchemaError(
            f"the database records schema version {value!r} in bargain_meta but no Alembic revision: "
            f"only versions 1 to {HAND_VERSION} can be adopted"
        )
    return int(value)


def adopt(connection: Connection) -> None:
    """Create the schema of hand version 4 on an empty database, or bring a hand-versioned one up to it in place;
    then mark bargain_meta RETIRED."""
    version = hand_version(connection)
    if version is None:
        metadata.create_all(connection)
        connection.execute(meta.insert().values(key="schema_version", value=str(RETIRED)))
        return
    for reached, statements, fill in STEPS:
        if reached > version:
            for statement in statements:
                connection.execute(text(statement))
            if fill is not None:
                fill(connection)
    _add_study_columns(connection)
    metadata.create_all(connection)  # the study tables, where no study ran yet
    for table in metadata.sorted_tables:
        for index in table.indexes:
            index.create(connection, checkfirst=True)
    connection.execute(meta.update().where(meta.c.key == "schema_version").values(value=str(RETIRED)))


def _add_study_columns(connection: Connection) -> None:
    """STUDY_COLUMNS where a study table lacks them; each study gets a salt of its own, as a new one does."""
    inspector = inspect(connection)
    for table, column, kind in STUDY_COLUMNS:
        if inspector.has_table(table) and column not in {c["name"] for c in inspector.get_columns(table)}:
            connection.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {kind}"))
            if column == "salt":
                for name, version in connection.execute(select(studies.c.name, studies.c.version)).all():
                    connection.execute(
                        studies.update()
                        .where(studies.c.name == name, studies.c.version == version)
                        .values(salt=secrets.token_hex(16))
                    )
