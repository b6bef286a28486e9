"""A failed ROCm job, explained: what the analysis found on each test of a head (kept with its
selection), and the class, excerpt and fix of a failed test's log (kept with its outcome,
once per job).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("selections") as batch:
        batch.add_column(sa.Column("findings", sa.Text))
    with op.batch_alter_table("test_outcomes") as batch:
        batch.add_column(sa.Column("triage", sa.Text))
        batch.add_column(sa.Column("triage_job", sa.BigInteger))


def downgrade() -> None:
    with op.batch_alter_table("test_outcomes") as batch:
        batch.drop_column("triage_job")
        batch.drop_column("triage")
    with op.batch_alter_table("selections") as batch:
        batch.drop_column("findings")
