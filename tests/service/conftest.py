from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from bot.store.store import Store


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A migrated, empty store on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        db = Store(f"sqlite:///{tmp_path / 'rocmbot.db'}")
        db.upgrade()
    else:
        db = Store(request.getfixturevalue("postgres_url"))
        db.upgrade()
        with db.engine.begin() as conn:
            conn.execute(
                text(
                    "TRUNCATE deliveries, pr_leases, effects, selections, approvals, dispatches,"
                    " test_outcomes, reenable_sweeps, reenable_tests RESTART IDENTITY"
                )
            )
    yield db
    db.close()
