"""The database's schema, every table of the arena and of study mode, as Alembic revisions (versions/).

Each revision changes the schema one step and is never edited once released, so a database of any age reaches
the schema of this program the same way. The first one (0001) creates the whole schema on an empty database, and
adopts a database that the program versioned by hand before (bargain.records.migrations.legacy). Opening the store runs
`upgrade`, as does `python -m bargain db upgrade`.

Processes starting together on one database upgrade it once: the upgrade is one transaction that first takes a
lock (PostgreSQL: an advisory lock; SQLite: the database's write lock, BEGIN IMMEDIATE), so the others wait, then
find the database at its head and have nothing to do.

Each revision applied is logged in one line of the program's own (`applied`); Alembic's own lines (its plugins, its
context, each revision it runs) are left to its logger, which the app keeps at WARNING.
"""

from __future__ import annotations

import logging
import textwrap
import threading
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext, MigrationInfo
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

SCRIPTS = Path(__file__).resolve().parent
LOCK = 0x62617267  # the PostgreSQL advisory lock held while a process upgrades the schema ("barg")
UPGRADE_WAIT_S = 600  # SQLite: how long an upgrade waits for another process's upgrade (or write) to end
_ALEMBIC = threading.Lock()  # Alembic's `context` and `op` are process-wide: one thread runs revisions at a time
log = logging.getLogger(__name__)


class SchemaError(RuntimeError):
    """The database's schema is not one this program can upgrade (the message says why)."""


def config(connection: Connection | None = None) -> Config:
    """Alembic's configuration (alembic.ini in this folder), with the connection the revisions run on."""
    settings = Config(str(SCRIPTS / "alembic.ini"))
    settings.attributes["connection"] = connection
    return settings


def applied(ctx: MigrationContext, step: MigrationInfo, heads: Collection[Any], run_args: Mapping[str, Any]) -> None:
    """Log a revision just applied, in one line: which, from which, and what it changes (the start of its docstring).
    Alembic calls it for each step of an upgrade (`on_version_apply`, in env.py)."""
    doc = getattr(step.up_revision, "doc", None) or ""  # the revision's script: its docstring
    what = textwrap.shorten(" ".join(doc.split()), 100, placeholder="...")
    before = ", ".join(step.down_revision_ids) or "none"
    log.info("database schema upgraded to revision %s (from %s): %s", step.up_revision_id, before, what)


def head() -> str:
    """The revision this program's schema is at."""
    newest = ScriptDirectory.from_config(config()).get_current_head()
    if newest is None:
        raise SchemaError("the package holds no schema revisions: reinstall bargain")
    return newest


def current(connection: Connection) -> str | None:
    """The revision a database is at (None: not under Alembic yet, empty or versioned by hand)."""
    return MigrationContext.configure(connection).get_current_revision()


def refuse_unknown(revision: str | None) -> None:
    """A SchemaError for a revision this program does not know: a newer bargain wrote the database."""
    if revision is not None and revision not in {
        script.revision for script in ScriptDirectory.from_config(config()).walk_revisions()
    }:
        raise SchemaError(
            f"the database is at schema revision {revision}, which this program does not know "
            "(a newer bargain made it): upgrade bargain"
        )


def upgrade(engine: Engine) -> tuple[str | None, str]:
    """Bring the database to this program's schema, exactly once however many processes ask at the same time; the
    revisions it was at before and is at now. A database at a revision this program does not know (written by a
    newer one) is refused."""
    newest = head()
    with engine.connect() as connection:
        at = current(connection)
        connection.rollback()
        if at == newest:  # the usual opening: nothing to do, and no lock to wait for (a schema never goes back)
            return at, at
        with _waiting_long(connection), connection.execution_options(writing=True).begin():  # SQLite: BEGIN IMMEDIATE
            if connection.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK})
            before = current(connection)  # another process may have upgraded it meanwhile
            refuse_unknown(before)
            with _ALEMBIC:
                command.upgrade(config(connection), "head")
            return before, newest


@contextmanager
def _waiting_long(connection: Connection) -> Iterator[None]:
    """On SQLite, the connection waits up to UPGRADE_WAIT_S for the write lock while it upgrades (another process's
    upgrade of a large database takes longer than the store's busy timeout), and as before afterwards."""
    if connection.dialect.name != "sqlite":
        yield
        return
    raw: Any = connection.connection.driver_connection
    before = raw.execute("PRAGMA busy_timeout").fetchone()[0]
    raw.execute(f"PRAGMA busy_timeout = {UPGRADE_WAIT_S * 1000}")
    try:
        yield
    finally:
        raw.execute(f"PRAGMA busy_timeout = {before}")
