"""What the re-enable sweep remembers: each repository's schedule and lease, and what each
sweep found (its parked tests, which ran, and why the others did not).

A repository is swept by one worker at a time, across processes: the worker takes the
repository's lease row atomically (a row that has no owner, or whose lease expired), reads the
row as the lease left it, and sweeps only when the period it is in has not been swept yet. Two
workers that both saw the period due take the lease one after the other; the second finds the
period recorded by the first and does nothing.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, delete, func, or_, select, update

from bot.store.dispatch import Dispatch, DispatchStore, JobOutcome
from bot.store.schema import deliveries, reenable_sweeps, reenable_tests
from bot.store.store import Store


@dataclass(frozen=True)
class KnownRepository:
    """A repository the service serves, as its latest delivery with an installation names it."""

    repository: str
    installation_id: int
    default_branch: str | None


@dataclass(frozen=True)
class SweepRow:
    """A repository's schedule: the cadence last read, the period last swept, and the lease."""

    repository: str
    cadence: str | None
    period: str | None
    swept_at: float | None
    checked_at: float | None
    owner: str | None
    expires_at: float
    retry_at: float
    last_error: str | None

    @classmethod
    def from_row(cls, row: Row[Any]) -> SweepRow:
        m = row._mapping
        return cls(m["repository"], m["cadence"], m["period"], m["swept_at"], m["checked_at"], m["owner"],
                   float(m["expires_at"] or 0), float(m["retry_at"] or 0), m["last_error"])


@dataclass(frozen=True)
class SweptTest:
    """A parked ROCm test as one sweep found it: why it is parked, what its launch says, whether
    it could come back (``candidate``), and what the sweep did: ``dispatch_id`` when it ran,
    ``note`` when it did not (why); ``patch`` takes its `disabled=` out."""

    path: str
    suite: str
    reason: str
    launch: str
    candidate: bool
    gpu_minutes: float
    note: str | None = None
    dispatch_id: str | None = None
    patch: str | None = None


@dataclass(frozen=True)
class SweptRun:
    """A test of a sweep with the run that ran it and its job's outcome, when there are."""

    test: SweptTest
    head_sha: str
    dispatch: Dispatch | None
    outcome: JobOutcome | None


class SweepStore:
    """The re-enable sweep's bookkeeping on the service's database."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    # the repositories served -----------------------------------------------------------------

    def known(self) -> list[KnownRepository]:
        """Every repository a stored delivery with an installation came from, with the
        installation and default branch of its latest such delivery (an App's installation of a
        repository can change: the latest says which acts for it now)."""
        latest = (select(func.max(deliveries.c.id))
                  .where(deliveries.c.repository.is_not(None), deliveries.c.installation_id.is_not(None))
                  .group_by(deliveries.c.repository))
        query = (select(deliveries.c.repository, deliveries.c.installation_id, deliveries.c.payload)
                 .where(deliveries.c.id.in_(latest)).order_by(deliveries.c.repository))
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        out = []
        for repo, installation, payload in rows:
            try:
                branch = (json.loads(payload).get("repository") or {}).get("default_branch")
            except (ValueError, AttributeError):
                branch = None
            out.append(KnownRepository(str(repo), int(installation),
                                       branch if isinstance(branch, str) and branch else None))
        return out

    # the schedule and its lease --------------------------------------------------------------

    def row(self, repo: str) -> SweepRow | None:
        with self.engine.connect() as conn:
            found = conn.execute(select(reenable_sweeps).where(reenable_sweeps.c.repository == repo)).first()
        return None if found is None else SweepRow.from_row(found)

    def take(self, repo: str, owner: str, *, now: float, lease_seconds: float) -> SweepRow | None:
        """Take the repository's lease when nobody holds it (or its holder's expired) and no
        failure asked to wait: the row as the lease leaves it, read in the same transaction,
        or None. Atomic: of two workers, one takes it; the other waits for that transaction
        and finds it held."""
        t = reenable_sweeps.c
        with self.engine.begin() as conn:
            conn.execute(self.store._insert()(reenable_sweeps).values(repository=repo, expires_at=0.0,
                                                                     retry_at=0.0)
                         .on_conflict_do_nothing(index_elements=["repository"]))
            taken = conn.execute(
                update(reenable_sweeps)
                .where(t.repository == repo, or_(t.owner.is_(None), t.owner == owner, t.expires_at < now),
                       t.retry_at <= now)
                .values(owner=owner, expires_at=now + lease_seconds)
            ).rowcount
            if not taken:
                return None
            return SweepRow.from_row(conn.execute(select(reenable_sweeps).where(t.repository == repo)).one())

    def renew(self, repo: str, owner: str, *, now: float, lease_seconds: float) -> bool:
        """Extend a lease this owner holds; False when it is no longer its."""
        t = reenable_sweeps.c
        with self.engine.begin() as conn:
            return bool(conn.execute(
                update(reenable_sweeps).where(t.repository == repo, t.owner == owner)
                .values(expires_at=now + lease_seconds)).rowcount)

    def release(self, repo: str, owner: str, *, now: float, cadence: str | None = None,
                period: str | None = None, retry_at: float = 0.0, error: str | None = None) -> bool:
        """Give the lease back. With ``cadence``, the configuration was read now; with
        ``period``, that period is swept (now); with ``retry_at``, a failure (``error``) asks
        to try no sooner. False when the lease was no longer this owner's."""
        values: dict[str, Any] = {"owner": None, "expires_at": 0.0, "retry_at": retry_at,
                                  "last_error": error[:4000] if error else None}
        if cadence is not None:
            values.update(cadence=cadence, checked_at=now)
        if period is not None:
            values.update(period=period, swept_at=now)
        t = reenable_sweeps.c
        with self.engine.begin() as conn:
            return bool(conn.execute(update(reenable_sweeps).where(t.repository == repo, t.owner == owner)
                                     .values(**values)).rowcount)

    # what a sweep found ----------------------------------------------------------------------

    def record(self, repo: str, period: str, head: str, tests: list[SweptTest]) -> None:
        """A sweep's parked tests, before anything runs; a sweep taken up again after its worker
        died records them again and keeps the dispatches it made."""
        now = time.time()
        t = reenable_tests.c
        with self.engine.begin() as conn:
            keep = {(p.path, p.suite) for p in tests}
            for path, suite in conn.execute(select(t.path, t.suite).where(t.repository == repo,
                                                                          t.period == period)).all():
                if (path, suite) not in keep:
                    conn.execute(delete(reenable_tests).where(t.repository == repo, t.period == period,
                                                              t.path == path, t.suite == suite))
            for p in tests:
                values = {"head_sha": head, "reason": p.reason, "launch": p.launch, "candidate": p.candidate,
                          "gpu_minutes": p.gpu_minutes, "note": p.note, "patch": p.patch}
                stmt = self.store._insert()(reenable_tests).values(
                    repository=repo, period=period, path=p.path, suite=p.suite, created_at=now, **values)
                conn.execute(stmt.on_conflict_do_update(
                    index_elements=["repository", "period", "path", "suite"], set_=values))

    def head_of(self, repo: str, period: str) -> str | None:
        """The head a sweep of this period audited, once it recorded its tests."""
        t = reenable_tests.c
        with self.engine.connect() as conn:
            found = conn.execute(select(t.head_sha).where(t.repository == repo, t.period == period)
                                 .limit(1)).first()
        return None if found is None else str(found[0])

    def ran(self, repo: str, period: str, path: str, suite: str, *, dispatch_id: str | None = None,
            note: str | None = None) -> None:
        """What became of one test of a sweep: the dispatch that runs it, or why it did not run."""
        t = reenable_tests.c
        with self.engine.begin() as conn:
            conn.execute(update(reenable_tests)
                         .where(t.repository == repo, t.period == period, t.path == path, t.suite == suite)
                         .values(dispatch_id=dispatch_id, note=note))

    def periods(self, repo: str, limit: int = 2) -> list[str]:
        """The periods this repository was swept in, the latest first."""
        t = reenable_tests.c
        query = (select(t.period).where(t.repository == repo).group_by(t.period)
                 .order_by(func.max(t.id).desc()).limit(limit))
        with self.engine.connect() as conn:
            return [str(r[0]) for r in conn.execute(query).all()]

    def tests(self, repo: str, period: str) -> list[SweptRun]:
        """A sweep's tests, in the order they were recorded, each with its run and its job's
        outcome as the tracking of the run stored them."""
        t = reenable_tests.c
        query = select(reenable_tests).where(t.repository == repo, t.period == period).order_by(t.id)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        runs = DispatchStore(self.store)
        dispatches: dict[str, Dispatch | None] = {}
        outcomes: dict[str, dict[str, JobOutcome]] = {}
        out = []
        for r in rows:
            m = r._mapping
            test = SweptTest(m["path"], m["suite"], m["reason"], m["launch"], bool(m["candidate"]),
                             float(m["gpu_minutes"]), m["note"], m["dispatch_id"], m["patch"])
            dispatch = outcome = None
            if test.dispatch_id is not None:
                if test.dispatch_id not in dispatches:
                    dispatches[test.dispatch_id] = runs.get(test.dispatch_id)
                    outcomes[test.dispatch_id] = runs.outcomes(test.dispatch_id)
                dispatch = dispatches[test.dispatch_id]
                outcome = outcomes[test.dispatch_id].get(test.path)
            out.append(SweptRun(test, str(m["head_sha"]), dispatch, outcome))
        return out

    def sweep_of(self, dispatch_id: str) -> tuple[str, str] | None:
        """The repository and period of the sweep a dispatch ran tests of; None for another."""
        t = reenable_tests.c
        with self.engine.connect() as conn:
            found = conn.execute(select(t.repository, t.period).where(t.dispatch_id == dispatch_id)
                                 .limit(1)).first()
        return None if found is None else (str(found[0]), str(found[1]))
