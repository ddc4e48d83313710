"""Alembic's environment: runs the revisions on the connection that `bargain.records.migrations.upgrade` passes in.

That connection is already inside the transaction that holds the upgrade lock, so Alembic starts none of its own:
the whole upgrade commits, or rolls back, as one.
"""

from alembic import context

from bargain.records.migrations import applied

connection = context.config.attributes.get("connection")
if connection is None:
    raise SystemExit("bargain's revisions run through the program: python -m bargain db upgrade --db URL")
context.configure(connection=connection, on_version_apply=applied)
with context.begin_transaction():
    context.run_migrations()
