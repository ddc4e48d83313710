"""Games between two people: a seat for each side (its token is that person's handle on the game; the joining
person's is free until they arrive by the invitation link, which carries another token, or the queue), and which
person made each move.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("moves", sa.Column("person", sa.String(128)))
    op.create_table(
        "seats",
        sa.Column("token", sa.String(32), primary_key=True),
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("role", sa.String(8), nullable=False),
        sa.Column("person", sa.String(128)),
        sa.Column("invitation", sa.String(32), unique=True),
        sa.Column("queue", sa.String(200)),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("joined_at", sa.DateTime),
    )
    op.create_index("ix_seats_game_id", "seats", ["game_id"])
    op.create_index("ix_seats_queue", "seats", ["queue"])
    op.create_index("one_seat_per_role", "seats", ["game_id", "role"], unique=True)
