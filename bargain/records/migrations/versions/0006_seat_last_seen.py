"""When the person at a seat last asked for their game: a wait is live only while its page (or API caller) keeps
asking, and the queue pairs live waits only.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("seats", sa.Column("seen_at", sa.DateTime))
