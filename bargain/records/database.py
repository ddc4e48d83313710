"""What a `--db` flag names: the one reading of it shared by `python app.py` and `python -m bargain`.

Every program that takes a database accepts the same values (a SQLAlchemy URL, or a plain file
path for SQLite), so a path that works for the arena works for judging and reporting its games.
"""

from __future__ import annotations

import os
from pathlib import Path

from bargain.records.store import Store, StoreError, default_url


def database_url(value: str | None) -> str:
    """A SQLAlchemy URL from a URL (kept as given), a SQLite file path (made absolute), or nothing
    (the arena's default SQLite file)."""
    if not value:
        return default_url()
    return value if "://" in value else f"sqlite:///{os.path.abspath(os.path.expanduser(value))}"


def existing_store(url: str) -> Store:
    """The arena's database at `url`, refusing to create one or to add tables to another program's.

    Judging and reporting work on games already played: a mistyped --db must be reported as such,
    not answered with a new empty database (which `Store` would create) and nothing to do.
    """
    shown, tables = _existing_tables(url)
    if "bargain_meta" not in tables:
        raise StoreError(
            f"the database at {shown} is not a bargain arena database (it has no bargain_meta table): "
            "check the --db URL"
        )
    return Store(url)


def schema_state(url: str) -> str:
    """What `python -m bargain db current` says of the database at `url`, changing nothing: the schema revision it
    is at and whether that is this program's, or the hand-made version it awaits adoption from, or that it is
    empty. A revision this program does not know is a StoreError saying to upgrade bargain (a newer one made it)."""
    from sqlalchemy import create_engine

    from bargain.records import migrations
    from bargain.records.migrations import legacy

    shown, _ = _existing_tables(url)
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            revision, version = migrations.current(connection), None
            migrations.refuse_unknown(revision)
            if revision is None:
                version = legacy.hand_version(connection)
    except migrations.SchemaError as exc:
        raise StoreError(f"the database at {shown}: {exc}") from None
    finally:
        engine.dispose()
    head = migrations.head()
    if revision == head:
        return f"{shown}: schema revision {revision} (head, this program's)"
    if revision is not None:
        return f"{shown}: schema revision {revision}; this program's is {head} (python -m bargain db upgrade)"
    if version is not None:
        return (
            f"{shown}: schema version {version}, versioned by hand before Alembic; python -m bargain db upgrade "
            f"(or starting the app) adopts it as revision {head}"
        )
    return f"{shown}: empty; python -m bargain db upgrade (or starting the app) creates revision {head}"


def _existing_tables(url: str) -> tuple[str, set[str]]:
    """The database at `url`, shown without its password, and its tables; a StoreError for a missing SQLite file or
    a database that cannot be read."""
    from sqlalchemy import create_engine, inspect
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    try:
        location = make_url(url)
    except SQLAlchemyError as exc:
        raise StoreError(
            f"{url!r} is not a database URL: give a SQLite file path or a URL like sqlite:///data/bargain.db"
        ) from exc
    shown = location.render_as_string(hide_password=True)
    # SQLite creates a missing file; a `file:` URI (uri=true) carries its own open mode instead
    if (
        location.get_backend_name() == "sqlite"
        and not location.query.get("uri")
        and not Path(location.database or "").expanduser().is_file()
    ):
        raise StoreError(f"there is no database file at {location.database or shown!r}: check the --db URL")
    try:
        engine = create_engine(location)
        try:
            return shown, set(inspect(engine).get_table_names())
        finally:
            engine.dispose()
    except (SQLAlchemyError, ImportError) as exc:  # ImportError: the URL's database driver is not installed
        reason = " ".join(str(getattr(exc, "orig", None) or exc).split())  # drivers' messages span lines
        raise StoreError(f"cannot read the database at {shown}: {reason}; check the --db URL") from exc
