"""The re-enable sweep: each repository's schedule and lease, what each sweep found, and
dispatches that belong to no PR (a run of the default branch's head).

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "reenable_sweeps",
        sa.Column("repository", sa.String(300), primary_key=True),
        sa.Column("cadence", sa.String(10)),
        sa.Column("period", sa.String(20)),
        sa.Column("swept_at", sa.Float),
        sa.Column("checked_at", sa.Float),
        sa.Column("owner", sa.String(200)),
        sa.Column("expires_at", sa.Float, nullable=False, server_default="0"),
        sa.Column("retry_at", sa.Float, nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text),
    )
    op.create_table(
        "reenable_tests",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("repository", sa.String(300), nullable=False),
        sa.Column("period", sa.String(20), nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=False),
        sa.Column("path", sa.String(500), nullable=False),
        sa.Column("suite", sa.String(200), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("launch", sa.Text, nullable=False),
        sa.Column("candidate", sa.Boolean, nullable=False),
        sa.Column("gpu_minutes", sa.Float, nullable=False),
        sa.Column("note", sa.Text),
        sa.Column("dispatch_id", sa.String(40)),
        sa.Column("patch", sa.Text),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.UniqueConstraint("repository", "period", "path", "suite", name="uq_reenable_test"),
    )
    op.create_index("ix_reenable_tests_dispatch", "reenable_tests", ["dispatch_id"])
    with op.batch_alter_table("dispatches") as batch:
        batch.alter_column("pr_number", existing_type=sa.Integer, nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM dispatches WHERE pr_number IS NULL")  # the sweep's runs: no PR to keep them
    with op.batch_alter_table("dispatches") as batch:
        batch.alter_column("pr_number", existing_type=sa.Integer, nullable=False)
    op.drop_index("ix_reenable_tests_dispatch", table_name="reenable_tests")
    op.drop_table("reenable_tests")
    op.drop_table("reenable_sweeps")
