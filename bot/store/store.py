"""Deliveries with leases and backoff, and the effects ledger, on SQLite or PostgreSQL."""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

from sqlalchemy import (
    Connection,
    Engine,
    Row,
    and_,
    create_engine,
    delete,
    event,
    func,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from bot.core.events import Event
from bot.store.schema import deliveries, effects, pr_leases

log = logging.getLogger(__name__)

# SQLite's write-ahead log: past this many frames (pages; 16 MiB of 4 KiB pages) a checkpoint
# restarts it, waiting at most RESTART_WAIT_MS for readers of older frames (see Store.checkpoint).
WAL_RESTART_FRAMES = 4096
RESTART_WAIT_MS = 100

# The columns a new delivery sets; the others start NULL.
_DELIVERY_COLUMNS = (
    "delivery_id", "event", "action", "installation_id", "repository", "pr_number", "pr_key",
    "head_sha", "payload", "status", "attempts", "next_attempt_at", "received_at", "updated_at",
)

Status = Literal["queued", "processing", "done", "failed", "dead", "superseded"]
STATUSES: tuple[Status, ...] = ("queued", "processing", "done", "failed", "dead", "superseded")


class StoreError(Exception):
    """The database cannot be used (unreachable, or its schema is not current)."""


def normalise_url(url: str) -> str:
    """Use psycopg 3 for PostgreSQL URLs that name no driver."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


@dataclass(frozen=True)
class DeliveryRecord:
    """A stored delivery."""

    id: int
    delivery_id: str
    event: str
    action: str | None
    installation_id: int | None
    repository: str | None
    pr_number: int | None
    pr_key: str | None
    head_sha: str | None
    status: str
    attempts: int
    next_attempt_at: float
    lease_owner: str | None
    lease_expires_at: float | None
    last_error: str | None
    received_at: float
    updated_at: float
    finished_at: float | None
    payload_text: str

    @classmethod
    def from_row(cls, row: Row[Any]) -> DeliveryRecord:
        m = row._mapping
        return cls(
            id=m["id"], delivery_id=m["delivery_id"], event=m["event"], action=m["action"],
            installation_id=m["installation_id"], repository=m["repository"],
            pr_number=m["pr_number"], pr_key=m["pr_key"], head_sha=m["head_sha"],
            status=m["status"], attempts=m["attempts"], next_attempt_at=m["next_attempt_at"],
            lease_owner=m["lease_owner"], lease_expires_at=m["lease_expires_at"],
            last_error=m["last_error"], received_at=m["received_at"], updated_at=m["updated_at"],
            finished_at=m["finished_at"], payload_text=m["payload"],
        )

    def payload(self) -> dict[str, Any]:
        data = json.loads(self.payload_text)
        assert isinstance(data, dict)
        return data

    def to_event(self) -> Event:
        return Event.from_payload(self.event, self.delivery_id, self.payload())

    def summary(self) -> dict[str, Any]:
        """Everything but the payload, for listings."""
        return {k: v for k, v in self.__dict__.items() if k != "payload_text"}


ATTEMPT_ENDED = "attempt_ended"  # in a pending entry's result: its attempt's write is over
ATTEMPT_ANSWER = "answer"  # with it, the HTTP status GitHub answered (None: it was not sent)
ATTEMPT_SENT = "sent_at"  # and when that attempt was sent


@dataclass(frozen=True)
class Effect:
    """An entry of the effects ledger."""

    key: str
    kind: str
    target: str
    # pending | done | dry_run (recorded, not sent) | superseded (recorded in dry-run for a head
    # that moved on: not sent, nor made unless a later delivery makes it) | retried (its
    # delivery queued again) | unknown (sent, never answered, and not found on GitHub in the
    # time it could have shown)
    status: str
    result: Any
    created: bool  # this call wrote the entry
    age: float = 0.0  # seconds since the entry was last written


def backoff_seconds(attempt: int, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Exponential backoff with full jitter between half and the whole of the step."""
    step = min(cap, base * (2 ** max(0, attempt - 1)))
    return float(step * (0.5 + 0.5 * (rng or random).random()))


class Store:
    """One database: deliveries, leases, the ledger. Safe to share between threads."""

    def __init__(self, url: str, *, engine: Engine | None = None) -> None:
        self.url = normalise_url(url)
        self.engine = engine or self._engine(self.url)
        self.dialect = self.engine.dialect.name
        self._add_stmt: tuple[str, tuple[str, ...] | None] | None = None

    @staticmethod
    def _engine(url: str) -> Engine:
        if url.startswith("sqlite"):
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

            @event.listens_for(engine, "connect")
            def _connect(dbapi_connection: Any, _record: Any) -> None:
                dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
                cursor = dbapi_connection.cursor()
                if ":memory:" not in url and url not in ("sqlite://", "sqlite:///"):
                    cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
                cursor.execute("PRAGMA busy_timeout=30000")
                cursor.close()

            @event.listens_for(engine, "begin")
            def _begin(conn: Connection) -> None:
                # Take the write lock up front: a read that later writes would otherwise fail
                # with "database is locked" instead of waiting its turn.
                conn.exec_driver_sql("BEGIN IMMEDIATE")

            return engine
        # No pre-ping: it costs a round trip per request; a dropped connection fails that
        # transaction (the delivery is answered 503 and redelivered) and the pool is renewed.
        return create_engine(url, pool_size=8, max_overflow=8, pool_recycle=1800)

    def close(self) -> None:
        self.engine.dispose()

    # ---------------------------------------------------------------- schema

    def _alembic_config(self, connection: Connection) -> Any:
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(resources.files("bot.store") / "migrations"))
        config.attributes["connection"] = connection
        return config

    def upgrade(self) -> str | None:
        """Apply every migration; returns the revision the database is at."""
        from alembic import command

        with self.engine.begin() as conn:
            command.upgrade(self._alembic_config(conn), "head")
        return self.revision()

    def revision(self) -> str | None:
        from alembic.runtime.migration import MigrationContext

        with self.engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()

    def head_revision(self) -> str | None:
        from alembic.script import ScriptDirectory

        with self.engine.connect() as conn:
            return ScriptDirectory.from_config(self._alembic_config(conn)).get_current_head()

    def check_ready(self) -> None:
        """Raise StoreError unless the database answers and its schema is current."""
        try:
            with self.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            current, head = self.revision(), self.head_revision()
        except SQLAlchemyError as exc:
            raise StoreError(f"database unreachable: {type(exc).__name__}") from exc
        if current != head:
            raise StoreError(f"database schema at {current or 'nothing'}, expected {head}: "
                             "run `rocmbot db upgrade`")

    # ------------------------------------------------------------ deliveries

    def _insert(self) -> Any:
        return postgresql.insert if self.dialect == "postgresql" else sqlite.insert

    def _add_sql(self) -> tuple[str, tuple[str, ...] | None]:
        """The insert of a delivery as the driver takes it, compiled once for this database."""
        if self._add_stmt is None:  # compiling costs more than running it
            compiled = (
                self._insert()(deliveries)
                .on_conflict_do_nothing(index_elements=["delivery_id"])
                .returning(deliveries.c.id)
                .compile(dialect=self.engine.dialect, column_keys=list(_DELIVERY_COLUMNS))
            )
            order = tuple(compiled.positiontup or ()) if self.engine.dialect.positional else None
            self._add_stmt = (str(compiled), order)
        sql, order = self._add_stmt
        return sql, order

    def delivery_insert(self, event: Event, payload_text: str, now: float | None) -> tuple[str, Any]:
        """The insert of a new delivery and its parameters, as the driver takes them."""
        now = time.time() if now is None else now
        row: dict[str, Any] = {
            "delivery_id": event.delivery_id, "event": event.name, "action": event.action,
            "installation_id": event.installation_id, "repository": event.repository,
            "pr_number": event.pr_number, "pr_key": event.pr_key, "head_sha": event.head_sha,
            "payload": payload_text, "status": "queued", "attempts": 0, "next_attempt_at": now,
            "received_at": now, "updated_at": now,
        }
        sql, order = self._add_sql()
        return sql, row if order is None else tuple(row[key] for key in order)

    def add_delivery(self, event: Event, payload_text: str, now: float | None = None) -> bool:
        """Store a delivery unless its id is stored already; True when it is new.

        The row is committed when this returns. The webhook answers after this or after
        ``bot.store.ingest``'s inserters, which run the same statement, so it is one statement
        in autocommit on a pooled driver connection: one round trip on PostgreSQL instead of
        three (BEGIN, INSERT, COMMIT), and none of the per-execution work of a SQLAlchemy
        connection. A single statement is its own transaction on both databases; SQLite waits
        for the write lock (busy timeout) as ``BEGIN IMMEDIATE`` does.
        """
        sql, params = self.delivery_insert(event, payload_text, now)
        with self._driver_connection(sql, params) as driver:
            postgres = self.dialect == "postgresql"
            if postgres:  # psycopg; SQLite connections are in autocommit already (see _engine)
                driver.autocommit = True
            cursor = driver.cursor()
            try:
                cursor.execute(sql, params)
                rows = cursor.fetchall()  # to the end: SQLite commits when the statement ends
            finally:
                cursor.close()
            if postgres:
                driver.autocommit = False
            elif driver.in_transaction:  # an engine not made by _engine: the driver began one
                driver.commit()
        return bool(rows)

    @contextmanager
    def _driver_connection(self, sql: str, params: Any = None) -> Iterator[Any]:
        """A pooled driver connection; a driver error is raised as SQLAlchemy's (naming
        ``sql``, never the parameters) and the connection, in whatever state, is dropped."""
        dbapi_error = self.engine.dialect.loaded_dbapi.Error
        conn = self.engine.raw_connection()
        try:
            yield conn.driver_connection
        except dbapi_error as exc:
            conn.invalidate(exc)
            raise DBAPIError.instance(sql, params, exc, dbapi_error, hide_parameters=True,
                                      connection_invalidated=True, dialect=self.engine.dialect) from exc
        finally:
            conn.close()

    def checkpoint(self) -> tuple[int, int]:
        """SQLite: copy the write-ahead log into the database file; (frames in the log, frames
        copied). PostgreSQL, or SQLite not in WAL mode: nothing to do, (-1, -1).

        Passive, so writers go on meanwhile. Under steady writes a passive checkpoint never
        finds the log wholly copied when a write begins, and the log only grows; past
        WAL_RESTART_FRAMES it is restarted, which holds writers back for at most
        ``RESTART_WAIT_MS`` (then it gives up until the next call).
        """
        if self.dialect != "sqlite":
            return -1, -1
        with self._driver_connection("PRAGMA wal_checkpoint") as driver:
            _busy, frames, copied = driver.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if frames > WAL_RESTART_FRAMES:
                (timeout,) = driver.execute("PRAGMA busy_timeout").fetchone()
                driver.execute(f"PRAGMA busy_timeout={RESTART_WAIT_MS}")
                try:
                    _busy, frames, copied = driver.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
                finally:
                    driver.execute(f"PRAGMA busy_timeout={int(timeout)}")
        return int(frames), int(copied)

    def claim(self, owner: str, *, limit: int = 1, lease_seconds: float, max_attempts: int,
              now: float | None = None) -> list[DeliveryRecord]:
        """Lease up to ``limit`` due deliveries, at most one per PR across all workers: the
        oldest due delivery of each PR that no other worker holds, oldest PR first.

        Due: queued with its next attempt reached, or processing with an expired lease (its
        worker died). PRs another worker holds are left out in the query, so however many
        deliveries one PR has queued, the others' are found; a PR whose lease is lost to a
        concurrent claim is left out of the next look. PostgreSQL skips rows other workers
        are claiming (SKIP LOCKED); a PR is held through a lease row, taken atomically, so no
        two workers ever process deliveries of one PR at once.
        """
        now = time.time() if now is None else now
        due = or_(
            and_(deliveries.c.status == "queued", deliveries.c.next_attempt_at <= now),
            and_(deliveries.c.status == "processing", deliveries.c.lease_expires_at < now),
        )
        held_elsewhere = select(pr_leases.c.pr_key).where(pr_leases.c.expires_at >= now,
                                                          pr_leases.c.owner != owner)
        free = or_(deliveries.c.pr_key.is_(None), deliveries.c.pr_key.not_in(held_elsewhere))
        claimed: list[DeliveryRecord] = []
        with self.engine.begin() as conn:
            passed: set[str] = set()  # PRs claimed in this call, or lost to another worker
            while len(claimed) < limit:
                query = select(deliveries).where(due, free)
                if passed:
                    query = query.where(or_(deliveries.c.pr_key.is_(None),
                                            deliveries.c.pr_key.not_in(sorted(passed))))
                query = query.order_by(deliveries.c.id).limit(max(4 * limit, 8))
                if self.dialect == "postgresql":
                    query = query.with_for_update(skip_locked=True)
                rows = conn.execute(query).all()
                if not rows:
                    break
                for row in rows:  # each is claimed, dead-lettered or its PR passed: no row twice
                    if len(claimed) >= limit:
                        break
                    record = DeliveryRecord.from_row(row)
                    if record.pr_key is not None and record.pr_key in passed:
                        continue
                    if record.status == "processing" and record.attempts >= max_attempts:
                        self._set(conn, record.id, status="dead", finished_at=now, lease_owner=None,
                                  lease_expires_at=None,
                                  last_error=(record.last_error or "") + " (lease expired: worker lost)")
                        log.error("delivery dead-lettered after its lease expired",
                                  extra={"delivery_id": record.delivery_id})
                        continue
                    if record.pr_key is not None:
                        passed.add(record.pr_key)
                        if not self._take_pr(conn, record.pr_key, owner, now + lease_seconds, now):
                            continue
                    self._set(conn, record.id, status="processing", lease_owner=owner,
                              lease_expires_at=now + lease_seconds, attempts=record.attempts + 1,
                              updated_at=now)
                    claimed.append(DeliveryRecord.from_row(
                        conn.execute(select(deliveries).where(deliveries.c.id == record.id)).one()))
        return claimed

    def _take_pr(self, conn: Connection, pr_key: str, owner: str, expires: float, now: float) -> bool:
        insert = self._insert()
        stmt = insert(pr_leases).values(pr_key=pr_key, owner=owner, expires_at=expires)
        stmt = stmt.on_conflict_do_update(
            index_elements=["pr_key"],
            set_={"owner": stmt.excluded.owner, "expires_at": stmt.excluded.expires_at},
            where=or_(pr_leases.c.expires_at < now, pr_leases.c.owner == owner),
        ).returning(pr_leases.c.pr_key)
        return conn.execute(stmt).first() is not None

    @staticmethod
    def _set(conn: Connection, pk: int, **values: Any) -> int:
        return conn.execute(update(deliveries).where(deliveries.c.id == pk).values(**values)).rowcount

    def renew(self, owner: str, pks: list[int], lease_seconds: float, now: float | None = None) -> int:
        """Extend the leases this owner holds; returns how many it still holds."""
        if not pks:
            return 0
        now = time.time() if now is None else now
        with self.engine.begin() as conn:
            count = conn.execute(
                update(deliveries)
                .where(deliveries.c.id.in_(pks), deliveries.c.lease_owner == owner,
                       deliveries.c.status == "processing")
                .values(lease_expires_at=now + lease_seconds)
            ).rowcount
            conn.execute(update(pr_leases).where(pr_leases.c.owner == owner)
                         .values(expires_at=now + lease_seconds))
        return count

    def finish(self, record: DeliveryRecord, owner: str, status: Status, *, error: str | None = None,
               retry_at: float | None = None, now: float | None = None) -> bool:
        """End a claim: done, superseded, dead, or back to queued for ``retry_at``."""
        now = time.time() if now is None else now
        values: dict[str, Any] = {"status": status, "lease_owner": None, "lease_expires_at": None,
                                  "updated_at": now}
        if error is not None:
            values["last_error"] = error[:4000]
        if status == "queued":
            values["next_attempt_at"] = retry_at if retry_at is not None else now
        else:
            values["finished_at"] = now
        with self.engine.begin() as conn:
            changed = conn.execute(
                update(deliveries)
                .where(deliveries.c.id == record.id, deliveries.c.lease_owner == owner)
                .values(**values)
            ).rowcount
            if record.pr_key is not None:
                conn.execute(delete(pr_leases).where(pr_leases.c.pr_key == record.pr_key,
                                                     pr_leases.c.owner == owner))
        if not changed:
            log.warning("lease lost before finishing", extra={"delivery_id": record.delivery_id})
        return bool(changed)

    def release(self, owner: str) -> int:
        """Give back every lease an owner holds (graceful shutdown): the work is queued again
        and the attempt it used is not counted."""
        now = time.time()
        with self.engine.begin() as conn:
            count = conn.execute(
                update(deliveries)
                .where(deliveries.c.lease_owner == owner, deliveries.c.status == "processing")
                .values(status="queued", lease_owner=None, lease_expires_at=None,
                        attempts=func.max(deliveries.c.attempts - 1, 0)
                        if self.dialect == "sqlite" else func.greatest(deliveries.c.attempts - 1, 0),
                        next_attempt_at=now, updated_at=now)
            ).rowcount
            conn.execute(delete(pr_leases).where(pr_leases.c.owner == owner))
        return count

    def lease_owners(self) -> set[str]:
        """Every owner holding a delivery or a PR lease, expired or not."""
        with self.engine.connect() as conn:
            owners = {str(r[0]) for r in conn.execute(
                select(deliveries.c.lease_owner).distinct()
                .where(deliveries.c.status == "processing", deliveries.c.lease_owner.is_not(None))).all()}
            owners.update(str(r[0]) for r in conn.execute(select(pr_leases.c.owner).distinct()).all())
        return owners

    def expire_leases(self, owners: list[str]) -> int:
        """End the leases of owners known to be gone now, as if they had expired: the work is
        due at once, and the attempt it used counts (it may have failed the worker)."""
        if not owners:
            return 0
        with self.engine.begin() as conn:
            count = conn.execute(
                update(deliveries)
                .where(deliveries.c.lease_owner.in_(owners), deliveries.c.status == "processing")
                .values(lease_expires_at=0.0)
            ).rowcount
            conn.execute(update(pr_leases).where(pr_leases.c.owner.in_(owners)).values(expires_at=0.0))
        return count

    def analysis_due(self, repo: str, pr: int, head: str) -> float | None:
        """When the analysis of this PR head is next tried: the earliest next attempt of its
        stored, unprocessed `pull_request` deliveries (now, for one a worker holds); None when
        no such delivery is waiting."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(deliveries.c.status, deliveries.c.next_attempt_at).where(
                    deliveries.c.pr_key == f"{repo}#{pr}", deliveries.c.head_sha == head,
                    deliveries.c.event == "pull_request", deliveries.c.status.in_(("queued", "processing")))
                .limit(20)
            ).all()
        now = time.time()
        times = [now if status == "processing" else float(at or now) for status, at in rows]
        return min(times) if times else None

    def newer_head(self, record: DeliveryRecord) -> str | None:
        """The head that replaced this delivery's head, when a newer stored delivery proves it.

        The proof is a ``synchronize`` delivery of the same PR, stored after this one, whose
        ``before`` is this head: a push from it. A newer delivery with merely another head
        proves nothing: GitHub delivers concurrently and redeliveries come late, so a delivery
        stored later may carry an older head, and superseding on it would leave the PR's final
        head unanalysed.
        """
        if record.pr_key is None or record.head_sha is None:
            return None
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(deliveries.c.head_sha, deliveries.c.payload)
                .where(deliveries.c.pr_key == record.pr_key, deliveries.c.id > record.id,
                       deliveries.c.event == "pull_request", deliveries.c.action == "synchronize",
                       deliveries.c.head_sha.is_not(None), deliveries.c.head_sha != record.head_sha)
                .order_by(deliveries.c.id.desc()).limit(200)
            ).all()
        for head, payload in rows:
            try:
                before = json.loads(payload).get("before")
            except (ValueError, AttributeError):
                continue
            if before == record.head_sha:
                return str(head)
        return None

    def pr_heads(self, pr_key: str) -> list[str]:
        """Every head SHA the stored deliveries of one PR carried."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(deliveries.c.head_sha).distinct()
                .where(deliveries.c.pr_key == pr_key, deliveries.c.head_sha.is_not(None))
            ).all()
        return [str(r[0]) for r in rows]

    def get(self, delivery_id: str) -> DeliveryRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(deliveries).where(deliveries.c.delivery_id == delivery_id)).first()
        return None if row is None else DeliveryRecord.from_row(row)

    def stored_ids(self, delivery_ids: list[str]) -> set[str]:
        """Which of these delivery ids are stored (any status)."""
        found: set[str] = set()
        unique = list(dict.fromkeys(delivery_ids))
        with self.engine.connect() as conn:
            for start in range(0, len(unique), 500):
                part = unique[start:start + 500]
                found.update(str(r[0]) for r in conn.execute(
                    select(deliveries.c.delivery_id).where(deliveries.c.delivery_id.in_(part))).all())
        return found

    def recent(self, status: str | None = None, limit: int = 50) -> list[DeliveryRecord]:
        query = select(deliveries).order_by(deliveries.c.id.desc()).limit(limit)
        if status is not None:
            query = query.where(deliveries.c.status == status)
        with self.engine.connect() as conn:
            return [DeliveryRecord.from_row(r) for r in conn.execute(query).all()]

    def retry(self, delivery_id: str) -> bool:
        """Queue a finished (dead, failed, done, superseded) delivery again, attempts reset."""
        now = time.time()
        with self.engine.begin() as conn:
            return bool(conn.execute(
                update(deliveries)
                .where(deliveries.c.delivery_id == delivery_id, deliveries.c.status != "processing")
                .values(status="queued", attempts=0, next_attempt_at=now, updated_at=now,
                        finished_at=None)
            ).rowcount)

    def counts(self) -> dict[str, int]:
        """Deliveries by status."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(deliveries.c.status, func.count()).group_by(deliveries.c.status)
            ).all()
        out: dict[str, int] = dict.fromkeys(STATUSES, 0)
        out.update({str(status): int(n) for status, n in rows})
        return out

    # -------------------------------------------------------------- effects

    def begin_effect(self, key: str, kind: str, target: str, delivery_id: str | None = None) -> Effect:
        """Record an effect before making it. If the key is known, return what is recorded:
        ``done`` (skip it) or ``pending`` (an earlier attempt died mid-way: reconcile)."""
        now = time.time()
        stmt = self._insert()(effects).values(
            key=key, kind=kind, target=target[:500], status="pending", delivery_id=delivery_id,
            created_at=now, updated_at=now,
        ).on_conflict_do_nothing(index_elements=["key"]).returning(effects.c.id)
        with self.engine.begin() as conn:
            created = conn.execute(stmt).first() is not None
            row = conn.execute(select(effects).where(effects.c.key == key)).one()
        m = row._mapping
        result = json.loads(m["result"]) if m["result"] else None
        return Effect(key, m["kind"], m["target"], m["status"], result, created,
                      max(0.0, now - float(m["updated_at"] or now)))

    def finish_effect(self, key: str, result: Any, status: str = "done", *,
                      was: Sequence[str] | None = None) -> bool:
        """``status``: ``done``, ``dry_run`` for a write recorded and not sent, or ``unknown``;
        with ``was``, only an entry in one of those statuses is changed. False: none was."""
        query = update(effects).where(effects.c.key == key)
        if was is not None:
            query = query.where(effects.c.status.in_(list(was)))
        with self.engine.begin() as conn:
            return bool(conn.execute(query.values(
                status=status, result=json.dumps(result, default=str), updated_at=time.time())).rowcount)

    def effect_attempt(self, key: str, *, ended: bool, answer: int | None = None,
                       sent_at: float | None = None) -> None:
        """Note on a pending entry whether a write of it may be in flight: not ended as an
        attempt sends it (the entry's age counts from then), ended once the attempt saw it end
        (GitHub answered an error: the write was not made, or made unseen), with the status
        GitHub answered (``answer``) and when the attempt was sent."""
        ended_with = {ATTEMPT_ENDED: True, ATTEMPT_ANSWER: answer, ATTEMPT_SENT: sent_at}
        result = json.dumps(ended_with) if ended else None
        with self.engine.begin() as conn:
            conn.execute(update(effects).where(effects.c.key == key, effects.c.status == "pending").values(
                result=result, updated_at=time.time()))

    def pending_effects(self, before: float, limit: int = 200) -> list[tuple[Effect, str | None]]:
        """Ledger entries left ``pending`` since before ``before``, with the delivery that began them."""
        query = (select(effects).where(effects.c.status == "pending", effects.c.updated_at < before)
                 .order_by(effects.c.id).limit(limit))
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [(Effect(r.key, r.kind, r.target, r.status, json.loads(r.result) if r.result else None,
                        False), r.delivery_id) for r in rows]

    def mark_effect(self, key: str, status: str, *, was: str = "pending") -> bool:
        """Move an entry from ``was`` to ``status`` (``retried``: its delivery was queued again;
        ``pending``: a dry-run entry about to be made live); False when another did it first."""
        with self.engine.begin() as conn:
            return bool(conn.execute(update(effects).where(effects.c.key == key, effects.c.status == was)
                                     .values(status=status, updated_at=time.time())).rowcount)

    def effect_delivery(self, key: str) -> str | None:
        """The delivery whose handling began this ledger entry."""
        with self.engine.connect() as conn:
            row = conn.execute(select(effects.c.delivery_id).where(effects.c.key == key)).first()
        return None if row is None or row[0] is None else str(row[0])

    def effects_for(self, keys: list[str]) -> list[Effect]:
        """The ledger entries of these keys (those recorded)."""
        out: list[Effect] = []
        unique = list(dict.fromkeys(keys))
        with self.engine.connect() as conn:
            for start in range(0, len(unique), 500):
                rows = conn.execute(select(effects).where(effects.c.key.in_(unique[start:start + 500]))).all()
                out.extend(Effect(r.key, r.kind, r.target, r.status,
                                  json.loads(r.result) if r.result else None, False) for r in rows)
        return out

    def effects_starting(self, *prefixes: str) -> list[Effect]:
        """The ledger entries whose key starts with one of ``prefixes``, oldest first."""
        matching = or_(*(effects.c.key.startswith(p, autoescape=True) for p in prefixes))
        query = select(effects).where(matching).order_by(effects.c.id)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [Effect(r.key, r.kind, r.target, r.status,
                       json.loads(r.result) if r.result else None, False) for r in rows]

    def effects_of(self, delivery_id: str) -> list[Effect]:
        """The ledger entries the handling of one delivery began, oldest first."""
        query = select(effects).where(effects.c.delivery_id == delivery_id).order_by(effects.c.id)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [Effect(r.key, r.kind, r.target, r.status,
                       json.loads(r.result) if r.result else None, False) for r in rows]

    def effects_in(self, status: str, limit: int = 10_000) -> list[tuple[Effect, str | None]]:
        """Ledger entries in ``status``, oldest first, with the delivery that began them."""
        query = select(effects).where(effects.c.status == status).order_by(effects.c.id).limit(limit)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [(Effect(r.key, r.kind, r.target, r.status, json.loads(r.result) if r.result else None,
                        False), r.delivery_id) for r in rows]

    def effects(self, kind: str | None = None) -> list[Effect]:
        query = select(effects).order_by(effects.c.id)
        if kind is not None:
            query = query.where(effects.c.kind == kind)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [Effect(r.key, r.kind, r.target, r.status,
                       json.loads(r.result) if r.result else None, False) for r in rows]


@contextmanager
def open_store(url: str, *, migrate: bool = False) -> Iterator[Store]:
    store = Store(url)
    try:
        if migrate:
            store.upgrade()
        yield store
    finally:
        store.close()
