"""Databases for the tests: a scratch PostgreSQL database emptied, and a database taken back to a schema that the
program versioned by hand (versions 1 to 4, before Alembic)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from sqlalchemy import MetaData, create_engine, text

from bargain.records.migrations import legacy

POSTGRES = os.environ.get("BARGAIN_TEST_POSTGRES_URL")

# The columns each hand version added (bargain.records.migrations.legacy.STEPS), and the unique indexes version 4 made.
ADDED = {
    reached: [re.match(r"ALTER TABLE (\w+) ADD COLUMN (\w+)", statement).groups() for statement in statements]
    for reached, statements, _ in legacy.STEPS
}
UNIQUE_INDEXES = [index.name for table in legacy.metadata.sorted_tables for index in table.indexes if index.unique]


def emptied(url: str) -> str:
    """`url`, every table in it dropped (whatever an earlier run of any version left)."""
    engine = create_engine(url)
    tables = MetaData()
    tables.reflect(engine)
    tables.drop_all(engine)
    engine.dispose()
    return url


def back_to_hand_version(url: str, version: int) -> None:
    """The database at `url`, made by today's store, as the program of hand version `version` left it: without
    Alembic's table and what the revisions after 0001 added, without the columns and indexes of later hand
    versions, and the version in bargain_meta."""
    engine = create_engine(url)
    with engine.begin() as connection:
        for statement in (
            "DROP TABLE alembic_version",
            "DROP TABLE limit_failures",  # revision 0007
            "DROP TABLE limit_events",
            "ALTER TABLE moves DROP COLUMN paced_s",  # revision 0004
            "DROP TABLE seats",  # revision 0003
            "ALTER TABLE moves DROP COLUMN person",
            "DROP TABLE rescores",  # revision 0002
            "ALTER TABLE games DROP COLUMN claims_checker",
        ):
            connection.execute(text(statement))
        if version < 4:
            for index in UNIQUE_INDEXES:
                connection.execute(text(f"DROP INDEX {index}"))
        for reached, columns in ADDED.items():
            for table, column in columns if reached > version else ():
                connection.execute(text(f"ALTER TABLE {table} DROP COLUMN {column}"))
        connection.execute(text("UPDATE bargain_meta SET value = :v WHERE key = 'schema_version'"), {"v": str(version)})
    engine.dispose()


def processes_database(tmp_path: Path) -> tuple[str, int]:
    """The database a test of app processes runs on, and how many processes share it: the scratch PostgreSQL database,
    emptied, and two processes where BARGAIN_TEST_POSTGRES_URL names one (CI), as a deployment of several processes
    runs; else a SQLite file and one process. Each such test runs once, on the one or the other: the same run on both
    would assert the same twice, the slower way."""
    return (emptied(POSTGRES), 2) if POSTGRES else (f"sqlite:///{tmp_path / 'processes.db'}", 1)
