"""A seat of a study's game between two people names the study and the participant's game index, once.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("seats", sa.Column("study", sa.String(64)))
    op.add_column("seats", sa.Column("game_index", sa.Integer))
    op.create_index(
        "one_seat_per_participant_game",
        "seats",
        ["study", "person", "game_index"],
        unique=True,
        sqlite_where=sa.text("study IS NOT NULL"),
        postgresql_where=sa.text("study IS NOT NULL"),
    )
