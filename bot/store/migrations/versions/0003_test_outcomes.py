"""Per-test outcomes of dispatched runs, from the jobs of the targeted workflow's matrix.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "test_outcomes",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("dispatch_id", sa.String(40), nullable=False),
        sa.Column("path", sa.String(500), nullable=False),
        sa.Column("job_id", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(30), nullable=False),
        sa.Column("conclusion", sa.String(30)),
        sa.Column("job_url", sa.String(500)),
        sa.Column("seconds", sa.Float),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.UniqueConstraint("dispatch_id", "path", name="uq_test_outcome"),
    )


def downgrade() -> None:
    op.drop_table("test_outcomes")
