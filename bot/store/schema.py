"""Tables of the durable store: deliveries, per-PR leases and the effects ledger."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

# SQLite only makes INTEGER PRIMARY KEY an auto-incrementing row id.
_ID = BigInteger().with_variant(Integer(), "sqlite")

deliveries = Table(
    "deliveries",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("delivery_id", String(100), nullable=False, unique=True),
    Column("event", String(100), nullable=False),
    Column("action", String(100)),
    Column("installation_id", BigInteger),
    Column("repository", String(300)),
    Column("pr_number", Integer),
    Column("pr_key", String(320)),
    Column("head_sha", String(64)),
    Column("payload", Text, nullable=False),
    Column("status", String(20), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", Float, nullable=False),
    Column("lease_owner", String(200)),
    Column("lease_expires_at", Float),
    Column("last_error", Text),
    Column("received_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("finished_at", Float),
    Index("ix_deliveries_due", "status", "next_attempt_at"),
    Index("ix_deliveries_pr", "pr_key", "id"),
)

pr_leases = Table(
    "pr_leases",
    metadata,
    Column("pr_key", String(320), primary_key=True),
    Column("owner", String(200), nullable=False),
    Column("expires_at", Float, nullable=False),
)

effects = Table(
    "effects",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("key", String(512), nullable=False, unique=True),
    Column("kind", String(50), nullable=False),
    Column("target", String(500), nullable=False),
    Column("status", String(20), nullable=False),
    Column("result", Text),
    Column("delivery_id", String(100)),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)
