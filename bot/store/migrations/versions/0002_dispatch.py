"""ROCm dispatch: each PR head's selection, maintainer approvals, and dispatched runs.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "selections",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("repository", sa.String(300), nullable=False),
        sa.Column("pr_number", sa.Integer, nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=False),
        sa.Column("author", sa.String(100), nullable=False),
        sa.Column("tests", sa.Text, nullable=False),
        sa.Column("errors", sa.Integer, nullable=False),
        sa.Column("gpu_minutes", sa.Float, nullable=False),
        sa.Column("check_run_id", sa.BigInteger),
        sa.Column("state", sa.String(30), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.UniqueConstraint("repository", "pr_number", "head_sha", name="uq_selection_head"),
    )
    op.create_table(
        "approvals",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("repository", sa.String(300), nullable=False),
        sa.Column("pr_number", sa.Integer, nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=False),
        sa.Column("tests_hash", sa.String(64), nullable=False),
        sa.Column("approver", sa.String(100), nullable=False),
        sa.Column("via", sa.String(30), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.UniqueConstraint("repository", "pr_number", "head_sha", "tests_hash", name="uq_approval"),
    )
    op.create_table(
        "dispatches",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("dispatch_id", sa.String(40), nullable=False, unique=True),
        sa.Column("repository", sa.String(300), nullable=False),
        sa.Column("pr_number", sa.Integer, nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=False),
        sa.Column("suite", sa.String(200), nullable=False),
        sa.Column("tests", sa.Text, nullable=False),
        sa.Column("gpu_minutes", sa.Float, nullable=False),
        sa.Column("requested_by", sa.String(100), nullable=False),
        sa.Column("status", sa.String(30), nullable=False),
        sa.Column("conclusion", sa.String(30)),
        sa.Column("run_id", sa.BigInteger),
        sa.Column("run_url", sa.String(500)),
        sa.Column("check_run_id", sa.BigInteger),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_dispatches_pr", "dispatches", ["repository", "pr_number", "head_sha"])
    op.create_index("ix_dispatches_run", "dispatches", ["repository", "run_id"])
    op.create_index("ix_dispatches_created", "dispatches", ["repository", "created_at"])


def downgrade() -> None:
    op.drop_table("dispatches")
    op.drop_table("approvals")
    op.drop_table("selections")
