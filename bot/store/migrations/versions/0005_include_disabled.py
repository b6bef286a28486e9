"""Dispatches of parked tests (`/run-amd disabled`): whether the workflow is told to run tests
whose marker is disabled, so a dispatch completed later, or re-run, is sent as it was first.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("dispatches") as batch:
        batch.add_column(sa.Column("include_disabled", sa.Boolean, nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("dispatches") as batch:
        batch.drop_column("include_disabled")
