"""Storing a webhook delivery from the event loop, the one wait before the acknowledgement.

``Store.add_delivery`` blocks; run in a thread, handing it over and back costs more than the
insert itself on SQLite (about 120 us), and on PostgreSQL it adds two thread wake-ups to the
round trip. ``loop_inserter(store)`` gives the web service an inserter that needs no thread:
on SQLite a connection of its own used on the loop, on PostgreSQL psycopg's asyncio
connections. Each commits the row before ``add`` returns, as ``Store.add_delivery`` does.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from abc import ABC, abstractmethod
from typing import Any

from sqlalchemy.exc import DBAPIError, StatementError

from bot.core.events import Event
from bot.store.store import Store

# Like the store's engine: at most this many PostgreSQL connections, each renewed after
# RECYCLE_SECONDS.
POOL_SIZE = 8
RECYCLE_SECONDS = 1800.0


class LoopInserter(ABC):
    """Stores a delivery from the event loop; use it from that loop only."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @abstractmethod
    async def add(self, event: Event, payload_text: str, now: float | None = None) -> bool | None:
        """True: stored; False: stored already; None: not now, use ``Store.add_delivery``.

        The row is committed when this returns; a database error is a SQLAlchemy error."""

    @abstractmethod
    async def close(self) -> None:
        """Close the connections (another ``add`` opens new ones)."""

    def _error(self, sql: str, params: Any, exc: Exception, base: type[Exception]) -> StatementError:
        return DBAPIError.instance(sql, params, exc, base, hide_parameters=True,
                                   dialect=self.store.engine.dialect)


def loop_inserter(store: Store) -> LoopInserter | None:
    """The inserter for ``store``'s database; None for an in-memory SQLite one, or PostgreSQL
    through a driver other than psycopg (the thread path serves those)."""
    if store.dialect == "postgresql":
        return PostgresInserter(store) if store.engine.dialect.driver == "psycopg" else None
    url = store.engine.url
    in_memory = url.database in (None, "", ":memory:") or url.query.get("mode") == "memory"
    return SqliteInserter(store) if store.dialect == "sqlite" and not in_memory else None


class SqliteInserter(LoopInserter):
    """SQLite: the insert runs on the loop itself, tens of microseconds.

    Its connection never waits for the write lock (busy timeout 0: when another connection
    holds it, ``add`` answers None and the caller stores through ``Store.add_delivery`` in a
    thread, which waits its turn) and never checkpoints (``Store.checkpoint`` does, in the
    background). What remains besides the insert is the sync of the log's header when a write
    starts the log over after a checkpoint.
    """

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self._conn: Any = None

    def _driver(self) -> Any:
        if self._conn is None:
            conn = self.store.engine.raw_connection()
            try:
                driver: Any = conn.driver_connection
                driver.isolation_level = None  # each statement is its own transaction
                driver.execute("PRAGMA busy_timeout=0")
                driver.execute("PRAGMA wal_autocheckpoint=0")
            except BaseException:
                conn.invalidate()
                conn.close()
                raise
            self._conn = conn
        return self._conn.driver_connection

    async def add(self, event: Event, payload_text: str, now: float | None = None) -> bool | None:
        sql, params = self.store.delivery_insert(event, payload_text, now)
        try:
            cursor = self._driver().cursor()
            try:
                rows = cursor.execute(sql, params).fetchall()  # to the end: the commit
            finally:
                cursor.close()
        except sqlite3.Error as exc:
            if exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                return None
            await self.close()  # a new connection for the next delivery
            raise self._error(sql, params, exc, sqlite3.Error) from exc
        return bool(rows)

    async def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.invalidate()  # its settings are not the pool's: never hand it to anyone else
            conn.close()


class PostgresInserter(LoopInserter):
    """PostgreSQL: the insert runs on psycopg's asyncio connections, in autocommit, opened
    with the parameters of the store's engine; the loop serves other requests meanwhile.

    A connection whose statement failed is closed; a connection-level failure (the server
    restarted, say) closes the idle ones too, so one delivery finds out, not one per
    connection.
    """

    def __init__(self, store: Store, size: int = POOL_SIZE) -> None:
        super().__init__(store)
        self._connect_args = store.engine.dialect.create_connect_args(store.engine.url)
        self._idle: list[tuple[Any, float]] = []  # (connection, opened at), last used last
        self._slots = asyncio.Semaphore(size)

    async def _connection(self) -> tuple[Any, float]:
        import psycopg

        while self._idle:
            conn, opened = self._idle.pop()
            if time.monotonic() - opened < RECYCLE_SECONDS and not conn.closed:
                return conn, opened
            await conn.close()
        args, kwargs = self._connect_args
        conn = await psycopg.AsyncConnection.connect(*args, **kwargs, autocommit=True)
        return conn, time.monotonic()

    async def add(self, event: Event, payload_text: str, now: float | None = None) -> bool | None:
        import psycopg

        sql, params = self.store.delivery_insert(event, payload_text, now)
        async with self._slots:
            try:
                conn, opened = await self._connection()
            except psycopg.Error as exc:
                raise self._error(sql, params, exc, psycopg.Error) from exc
            try:
                async with conn.cursor() as cursor:
                    await cursor.execute(sql, params)
                    rows = await cursor.fetchall()
            except BaseException as exc:  # a failure or a cancellation: its state is unknown
                await conn.close()
                if isinstance(exc, psycopg.OperationalError):
                    await self.close()
                if isinstance(exc, psycopg.Error):
                    raise self._error(sql, params, exc, psycopg.Error) from exc
                raise
            self._idle.append((conn, opened))
        return bool(rows)

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for conn, _opened in idle:
            await conn.close()
