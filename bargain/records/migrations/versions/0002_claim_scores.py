"""The claim checker's version beside each game's findings, and a record of every rescore.

Findings made before (or adopted from a hand-versioned database) have no version: `python -m bargain rescore`
remakes them with the checker of the day and records which it was.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("games", sa.Column("claims_checker", sa.String(32)))
    op.create_table(
        "rescores",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("checker", sa.String(32), nullable=False),
        sa.Column("at", sa.DateTime, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
    )
