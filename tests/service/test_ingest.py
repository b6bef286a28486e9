"""Storing a delivery from the event loop, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Awaitable
from pathlib import Path
from types import SimpleNamespace
from typing import TypeVar, cast

import pytest
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from bot.store import ingest
from bot.store.ingest import LoopInserter, PostgresInserter, SqliteInserter, loop_inserter
from bot.store.store import Store
from tests.service.helpers import event_of, pr_payload

T = TypeVar("T")


def _run(step: Awaitable[T]) -> T:
    async def run() -> T:
        return await step

    return asyncio.run(run())


def _inserter(store: Store) -> LoopInserter:
    inserter = loop_inserter(store)
    assert inserter is not None
    return inserter


async def _add(inserter: LoopInserter, delivery_id: str) -> bool | None:
    payload = pr_payload()
    return await inserter.add(event_of("pull_request", delivery_id, payload), json.dumps(payload))


def test_a_delivery_is_committed_when_add_returns(store: Store) -> None:
    other = Store(store.engine.url.render_as_string(hide_password=False))
    inserter = _inserter(store)

    async def scenario() -> None:
        for n in range(3):
            assert await _add(inserter, f"d{n}") is True
            assert other.get(f"d{n}") is not None  # another connection sees it: committed
        assert await _add(inserter, "d0") is False
        await inserter.close()
        assert await _add(inserter, "d3") is True  # closing is not the end of it
        await inserter.close()

    _run(scenario())
    other.close()
    assert store.counts()["queued"] == 4


def test_each_database_file_gets_its_inserter(store: Store) -> None:
    expected = PostgresInserter if store.dialect == "postgresql" else SqliteInserter
    assert type(loop_inserter(store)) is expected
    for url in ("sqlite://", "sqlite:///:memory:"):  # in memory: the thread path only
        assert loop_inserter(Store(url)) is None, url
    other_driver = SimpleNamespace(dialect="postgresql", engine=SimpleNamespace(
        dialect=SimpleNamespace(driver="psycopg2")))
    assert loop_inserter(cast(Store, other_driver)) is None


def test_sqlite_steps_aside_while_another_connection_writes(tmp_path: Path) -> None:
    db = Store(f"sqlite:///{tmp_path}/loop.db")
    db.upgrade()
    inserter = _inserter(db)
    other = sqlite3.connect(tmp_path / "loop.db", isolation_level=None)

    async def scenario() -> None:
        assert await _add(inserter, "d1") is True
        other.execute("BEGIN IMMEDIATE")
        assert await _add(inserter, "d2") is None  # no waiting on the event loop:
        assert inserter._driver().execute("PRAGMA busy_timeout").fetchone() == (0,)  # type: ignore[attr-defined]
        other.execute("COMMIT")
        assert await _add(inserter, "d2") is True
        await inserter.close()

    _run(scenario())
    # Its connection never checkpoints: the log keeps every frame until Store.checkpoint.
    frames, copied = db.checkpoint()
    assert frames > 0 and copied == frames
    other.close()
    db.close()


def test_a_failed_sqlite_insert_is_a_store_error_and_the_next_one_reconnects(tmp_path: Path) -> None:
    db = Store(f"sqlite:///{tmp_path}/later.db")
    inserter = _inserter(db)

    async def scenario() -> None:
        with pytest.raises(SQLAlchemyError):  # no table yet: the app answers 503
            await _add(inserter, "d1")
        db.upgrade()
        assert await _add(inserter, "d1") is True
        await inserter.close()

    _run(scenario())
    db.close()


def test_a_long_log_is_restarted_by_the_checkpoint(monkeypatch: pytest.MonkeyPatch, store: Store) -> None:
    """A passive checkpoint stops at the oldest reader's snapshot; past WAL_RESTART_FRAMES the
    checkpoint waits for that reader, copies everything, and the log starts over."""
    if store.dialect == "postgresql":
        assert store.checkpoint() == (-1, -1)
        return
    monkeypatch.setattr("bot.store.store.WAL_RESTART_FRAMES", 20)
    monkeypatch.setattr("bot.store.store.RESTART_WAIT_MS", 10_000)
    inserter = _inserter(store)
    reader = sqlite3.connect(str(store.engine.url.database), isolation_level=None, check_same_thread=False)

    async def scenario() -> None:
        await _add(inserter, "p")
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM deliveries").fetchone()  # holds the snapshot
        for n in range(10):
            await _add(inserter, f"p{n}")
        threading.Timer(0.2, reader.execute, ["COMMIT"]).start()
        frames, copied = store.checkpoint()
        assert frames > 20 and copied == frames  # waited for the reader: all copied
        await _add(inserter, "after")
        assert store.checkpoint()[0] < 20  # the log started over
        await inserter.close()

    _run(scenario())
    reader.close()


def test_an_unreachable_postgres_is_a_store_error() -> None:
    inserter = _inserter(Store("postgresql://nobody@127.0.0.1:1/none"))
    with pytest.raises(SQLAlchemyError):
        _run(_add(inserter, "d1"))


def _terminate_other_backends(store: Store) -> int:
    with store.engine.begin() as conn:
        return len(conn.execute(text(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()")).all())


@pytest.mark.parametrize("store", ["postgresql"], indirect=True)
def test_postgres_drops_every_idle_connection_when_the_server_drops_one(store: Store) -> None:
    inserter = _inserter(store)

    async def scenario() -> None:
        both = await asyncio.gather(_add(inserter, "a"), _add(inserter, "b"))  # two connections
        assert list(both) == [True, True]
        assert _terminate_other_backends(store) >= 2  # both idle connections are gone
        with pytest.raises(SQLAlchemyError):
            await _add(inserter, "c")  # this one finds out...
        assert await _add(inserter, "c") is True  # ...and the next opens a new connection
        await inserter.close()

    _run(scenario())
    assert store.get("c") is not None


@pytest.mark.parametrize("store", ["postgresql"], indirect=True)
def test_postgres_renews_old_connections_and_drops_interrupted_ones(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    inserter = _inserter(store)

    async def scenario() -> None:
        assert await _add(inserter, "a") is True
        [(first, _)] = inserter._idle  # type: ignore[attr-defined]
        monkeypatch.setattr(ingest, "RECYCLE_SECONDS", 0.0)
        assert await _add(inserter, "b") is True
        [(second, _)] = inserter._idle  # type: ignore[attr-defined]
        assert first.closed and second is not first  # renewed
        monkeypatch.setattr(ingest, "RECYCLE_SECONDS", 1800.0)
        adding = asyncio.ensure_future(_add(inserter, "c"))
        await asyncio.sleep(0)
        adding.cancel()  # in mid-statement: the connection's state is unknown
        with pytest.raises(asyncio.CancelledError):
            await adding
        assert await _add(inserter, "d") is True
        await inserter.close()

    _run(scenario())
    assert store.get("d") is not None
