"""The delay a program's reply was held to, where a study paces replies to a human-like speed (blinding).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("moves", sa.Column("paced_s", sa.Float))
