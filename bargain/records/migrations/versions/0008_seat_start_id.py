"""A seat in free play may name the start that took it (the caller's start id, unique per player), so that a start
sent again, after its answer was lost, gives the seat the first one took instead of a second seat.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("seats", sa.Column("start_id", sa.String(64)))
    op.create_index(
        "one_seat_per_start",
        "seats",
        ["person", "start_id"],
        unique=True,
        sqlite_where=sa.text("start_id IS NOT NULL"),
        postgresql_where=sa.text("start_id IS NOT NULL"),
    )
