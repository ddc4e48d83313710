"""Every table of the arena and of study mode, as the program made them by hand up to its schema version 4.

An empty database gets them all; a database the program versioned by hand (versions 1 to 4 in bargain_meta) is
adopted in place, nothing lost (bargain.records.migrations.legacy).

Revision ID: 0001
Revises:
Create Date: 2026-12-04
"""

from alembic import op

from bargain.records.migrations import legacy

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    legacy.adopt(op.get_bind())
