"""The durable store: webhook deliveries, per-PR leases and the effects ledger (SQLAlchemy)."""
