"""Run news in order: the attempt and GitHub's time of the news a dispatch and a test's outcome
show, so a late delivery of an earlier state is told apart and ignored.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("dispatches", "test_outcomes"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("run_attempt", sa.Integer))
            batch.add_column(sa.Column("news_at", sa.BigInteger))


def downgrade() -> None:
    for table in ("dispatches", "test_outcomes"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("news_at")
            batch.drop_column("run_attempt")
