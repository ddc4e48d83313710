"""The arena's limits counted in the database, so that they hold across app processes: the events of sliding-window
limits (games started), and each key's failures under a backoff (wrong admin passwords). Keys are SHA-256 hashes.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "limit_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(32), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("at", sa.Double, nullable=False),
    )
    op.create_index("ix_limit_events_name_key_at", "limit_events", ["name", "key", "at"])
    op.create_table(
        "limit_failures",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("last_at", sa.Double, nullable=False),
    )
