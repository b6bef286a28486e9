"""Deliveries, per-PR leases and the effects ledger.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "deliveries",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("delivery_id", sa.String(100), nullable=False, unique=True),
        sa.Column("event", sa.String(100), nullable=False),
        sa.Column("action", sa.String(100)),
        sa.Column("installation_id", sa.BigInteger),
        sa.Column("repository", sa.String(300)),
        sa.Column("pr_number", sa.Integer),
        sa.Column("pr_key", sa.String(320)),
        sa.Column("head_sha", sa.String(64)),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", sa.Float, nullable=False),
        sa.Column("lease_owner", sa.String(200)),
        sa.Column("lease_expires_at", sa.Float),
        sa.Column("last_error", sa.Text),
        sa.Column("received_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("finished_at", sa.Float),
    )
    op.create_index("ix_deliveries_due", "deliveries", ["status", "next_attempt_at"])
    op.create_index("ix_deliveries_pr", "deliveries", ["pr_key", "id"])
    op.create_table(
        "pr_leases",
        sa.Column("pr_key", sa.String(320), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_table(
        "effects",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(512), nullable=False, unique=True),
        sa.Column("kind", sa.String(50), nullable=False),
        sa.Column("target", sa.String(500), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("result", sa.Text),
        sa.Column("delivery_id", sa.String(100)),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("effects")
    op.drop_table("pr_leases")
    op.drop_index("ix_deliveries_pr", "deliveries")
    op.drop_index("ix_deliveries_due", "deliveries")
    op.drop_table("deliveries")
