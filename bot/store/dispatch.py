"""What the dispatch side remembers: each PR head's selection, approvals, dispatched runs."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, func, select, update

from bot.store.schema import approvals, deliveries, dispatches, selections, test_outcomes
from bot.store.store import Store

ACTIVE = ("requested", "queued", "in_progress", "waiting", "pending")
# Rows GitHub has not accepted: `dispatching` is written before the request and stays until the
# run is known (GitHub's answer, or the dispatch id found in a run's name); `dry_run` was never
# sent. Neither is in flight, counts against a budget, or answers "already running".
UNACCEPTED = ("dispatching", "dry_run")
# Given up: the head moved or the PR closed before GitHub accepted it, and no run was found.
WITHDRAWN = "withdrawn"
NOT_SPENT = (*UNACCEPTED, WITHDRAWN)
# Sent, never answered, and its run not found while GitHub could still have shown it: never sent
# again under its id; its run's `workflow_run` delivery settles it. It counts against the budgets
# (it may be running), not as in flight.
UNKNOWN = "unknown"


@dataclass(frozen=True)
class SelectedTest:
    path: str
    suite: str
    est_time: float | None
    gpus: int | None
    tier: str = "direct"

    @property
    def gpu_minutes(self) -> float:
        return (self.est_time or 0) / 60 * (self.gpus or 0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "suite": self.suite,
            "est_time": self.est_time,
            "gpus": self.gpus,
            "tier": self.tier,
        }


def tests_hash(tests: list[SelectedTest]) -> str:
    """What an approval is bound to, besides the PR and its head: the set of tests."""
    key = "\n".join(sorted(f"{t.suite} {t.path}" for t in tests))
    return hashlib.sha256(key.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Selection:
    repository: str
    pr_number: int
    head_sha: str
    author: str
    tests: list[SelectedTest]
    failing: list[str]  # tests whose launch has error findings
    gpu_minutes: float
    check_run_id: int | None
    state: str

    def holds(self, tests: Sequence[SelectedTest]) -> bool:
        """Whether this is a selection of the same tests (each by suite and path)."""
        return tests_hash(self.tests) == tests_hash(list(tests))


@dataclass(frozen=True)
class Dispatch:
    dispatch_id: str
    repository: str
    pr_number: int
    head_sha: str
    suite: str
    tests: list[str]
    gpu_minutes: float
    requested_by: str
    status: str
    conclusion: str | None
    run_id: int | None
    run_url: str | None
    check_run_id: int | None
    created_at: float

    @classmethod
    def from_row(cls, row: Row[Any]) -> Dispatch:
        m = row._mapping
        return cls(
            m["dispatch_id"],
            m["repository"],
            m["pr_number"],
            m["head_sha"],
            m["suite"],
            m["tests"].split(),
            m["gpu_minutes"],
            m["requested_by"],
            m["status"],
            m["conclusion"],
            m["run_id"],
            m["run_url"],
            m["check_run_id"],
            m["created_at"],
        )

    @property
    def active(self) -> bool:
        return self.status in ACTIVE


@dataclass(frozen=True)
class JobOutcome:
    """How one test of a dispatch went, from the job that ran it."""

    path: str
    job_id: int
    status: str
    conclusion: str | None
    job_url: str | None
    seconds: float | None


class DispatchStore:
    """Dispatch bookkeeping on the service's database."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    def _insert(self) -> Any:
        return self.store._insert()

    # selections ------------------------------------------------------------

    def save_selection(
        self,
        repo: str,
        pr: int,
        head: str,
        author: str,
        tests: list[SelectedTest],
        failing: list[str],
        state: str,
    ) -> None:
        """The head's selection, and the tests whose launch has error findings."""
        now = time.time()
        failing = sorted(set(failing))
        data = {"tests": [t.as_dict() for t in tests], "failing": failing}
        values = {
            "author": author,
            "tests": json.dumps(data),
            "errors": len(failing),
            "gpu_minutes": sum(t.gpu_minutes for t in tests),
            "state": state,
            "updated_at": now,
        }
        stmt = self._insert()(selections).values(
            repository=repo, pr_number=pr, head_sha=head, created_at=now, **values
        )
        stmt = stmt.on_conflict_do_update(index_elements=["repository", "pr_number", "head_sha"], set_=values)
        with self.engine.begin() as conn:
            conn.execute(stmt)

    def selection(self, repo: str, pr: int, head: str) -> Selection | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(selections).where(
                    selections.c.repository == repo,
                    selections.c.pr_number == pr,
                    selections.c.head_sha == head,
                )
            ).first()
        if row is None:
            return None
        m = row._mapping
        data = json.loads(m["tests"])
        tests = [
            SelectedTest(t["path"], t["suite"], t["est_time"], t["gpus"], t.get("tier", "direct"))
            for t in data["tests"]
        ]
        return Selection(
            repo,
            pr,
            head,
            m["author"],
            tests,
            list(data["failing"]),
            m["gpu_minutes"],
            m["check_run_id"],
            m["state"],
        )

    def prs_of_head(self, repo: str, head: str) -> list[int]:
        """The PRs the bot analysed this head for (GitHub names no PR for a fork's head)."""
        query = select(selections.c.pr_number).where(
            selections.c.repository == repo, selections.c.head_sha == head
        ).order_by(selections.c.pr_number)
        with self.engine.connect() as conn:
            return [int(r[0]) for r in conn.execute(query).all()]

    def selection_of_check(self, repo: str, check_run_id: int) -> tuple[int, str] | None:
        """The PR and head of the selection whose approval check this is (the bot's own record:
        GitHub leaves a fork PR's check without its PR)."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(selections.c.pr_number, selections.c.head_sha).where(
                    selections.c.repository == repo, selections.c.check_run_id == check_run_id
                )
            ).first()
        return None if row is None else (int(row[0]), str(row[1]))

    def set_selection(self, repo: str, pr: int, head: str, **values: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(selections)
                .where(
                    selections.c.repository == repo,
                    selections.c.pr_number == pr,
                    selections.c.head_sha == head,
                )
                .values(updated_at=time.time(), **values)
            )

    # approvals -------------------------------------------------------------

    def head_at(self, repo: str, pr: int, when: float) -> str | None:
        """The head an approval written at ``when`` (a GitHub timestamp, whole seconds) covers:
        of the heads whose first delivery came before that second began, the one that came
        last. A head first seen within the comment's second may have come after the comment:
        it is not covered. None: no head was seen before."""
        seen = func.min(deliveries.c.received_at)
        query = (
            select(deliveries.c.head_sha, seen)
            .where(deliveries.c.pr_key == f"{repo}#{pr}", deliveries.c.head_sha.is_not(None))
            .group_by(deliveries.c.head_sha)
        )
        with self.engine.connect() as conn:
            heads = [(float(first), str(head)) for head, first in conn.execute(query).all()]
        start = math.floor(when)
        known = [(first, head) for first, head in heads if first < start]
        return max(known)[1] if known else None

    def approve(self, repo: str, pr: int, head: str, digest: str, approver: str, via: str) -> bool:
        stmt = (
            self._insert()(approvals)
            .values(
                repository=repo,
                pr_number=pr,
                head_sha=head,
                tests_hash=digest,
                approver=approver,
                via=via,
                created_at=time.time(),
            )
            .on_conflict_do_nothing(index_elements=["repository", "pr_number", "head_sha", "tests_hash"])
        )
        with self.engine.begin() as conn:
            return bool(conn.execute(stmt).rowcount)

    def approver(self, repo: str, pr: int, head: str, digest: str) -> str | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(approvals.c.approver).where(
                    approvals.c.repository == repo,
                    approvals.c.pr_number == pr,
                    approvals.c.head_sha == head,
                    approvals.c.tests_hash == digest,
                )
            ).first()
        return None if row is None else str(row[0])

    # dispatches --------------------------------------------------------------

    def add(
        self,
        dispatch_id: str,
        repo: str,
        pr: int,
        head: str,
        suite: str,
        tests: list[str],
        gpu_minutes: float,
        requested_by: str,
    ) -> bool:
        """Record a dispatch before it is sent: `dispatching`, not yet in flight."""
        now = time.time()
        stmt = (
            self._insert()(dispatches)
            .values(
                dispatch_id=dispatch_id,
                repository=repo,
                pr_number=pr,
                head_sha=head,
                suite=suite,
                tests=" ".join(tests),
                gpu_minutes=gpu_minutes,
                requested_by=requested_by,
                status="dispatching",
                created_at=now,
                updated_at=now,
            )
            .on_conflict_do_nothing(index_elements=["dispatch_id"])
        )
        with self.engine.begin() as conn:
            return bool(conn.execute(stmt).rowcount)

    def accept(self, dispatch_id: str, run_id: int | None) -> None:
        """GitHub accepted the dispatch: in flight (`queued`) unless its run's news came first."""
        now = time.time()
        with self.engine.begin() as conn:
            conn.execute(
                update(dispatches)
                .where(dispatches.c.dispatch_id == dispatch_id, dispatches.c.status.in_(UNACCEPTED))
                .values(status="queued", updated_at=now)
            )
            if run_id is not None:
                conn.execute(
                    update(dispatches)
                    .where(dispatches.c.dispatch_id == dispatch_id, dispatches.c.run_id.is_(None))
                    .values(run_id=run_id, updated_at=now)
                )

    def doubt(self, dispatch_id: str) -> bool:
        """A dispatch not yet accepted whose outcome is unknown (see UNKNOWN); False when its
        run's news came first."""
        with self.engine.begin() as conn:
            return bool(conn.execute(
                update(dispatches)
                .where(dispatches.c.dispatch_id == dispatch_id, dispatches.c.status == "dispatching")
                .values(status=UNKNOWN, updated_at=time.time())
            ).rowcount)

    def update(self, dispatch_id: str, **values: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(dispatches)
                .where(dispatches.c.dispatch_id == dispatch_id)
                .values(updated_at=time.time(), **values)
            )

    def get(self, dispatch_id: str) -> Dispatch | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(dispatches).where(dispatches.c.dispatch_id == dispatch_id)).first()
        return None if row is None else Dispatch.from_row(row)

    def by_run(self, repo: str, run_id: int) -> Dispatch | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(dispatches).where(dispatches.c.repository == repo, dispatches.c.run_id == run_id)
            ).first()
        return None if row is None else Dispatch.from_row(row)

    def for_pr(self, repo: str, pr: int, head: str | None = None) -> list[Dispatch]:
        query = select(dispatches).where(dispatches.c.repository == repo, dispatches.c.pr_number == pr)
        if head is not None:
            query = query.where(dispatches.c.head_sha == head)
        with self.engine.connect() as conn:
            return [Dispatch.from_row(r) for r in conn.execute(query.order_by(dispatches.c.id)).all()]

    def left_pending(self, before: float) -> list[Dispatch]:
        """Dispatches untouched since ``before`` that lack something: GitHub's acceptance (in
        doubt), or, accepted, their `rocmbot / rocm` check."""
        doubt = dispatches.c.status == "dispatching"
        no_check = (dispatches.c.status.not_in((*NOT_SPENT, UNKNOWN)) & dispatches.c.check_run_id.is_(None))
        query = (select(dispatches).where(dispatches.c.updated_at < before, doubt | no_check)
                 .order_by(dispatches.c.id).limit(200))
        with self.engine.connect() as conn:
            return [Dispatch.from_row(r) for r in conn.execute(query).all()]

    def take(self, dispatch_id: str, before: float) -> bool:
        """Claim a dispatch left pending for one sweep: False when another sweeper touched it."""
        with self.engine.begin() as conn:
            return bool(conn.execute(
                update(dispatches)
                .where(dispatches.c.dispatch_id == dispatch_id, dispatches.c.updated_at < before)
                .values(updated_at=time.time())
            ).rowcount)

    def gpu_minutes(
        self, repo: str, *, since: float | None = None, pr: int | None = None, head: str | None = None
    ) -> float:
        query = select(func.coalesce(func.sum(dispatches.c.gpu_minutes), 0.0)).where(
            dispatches.c.repository == repo, dispatches.c.status.not_in(NOT_SPENT)
        )
        if since is not None:
            query = query.where(dispatches.c.created_at >= since)
        if pr is not None:
            query = query.where(dispatches.c.pr_number == pr)
        if head is not None:
            query = query.where(dispatches.c.head_sha == head)
        with self.engine.connect() as conn:
            return float(conn.execute(query).scalar() or 0.0)

    # per-test outcomes --------------------------------------------------------

    def record_outcome(self, dispatch_id: str, outcome: JobOutcome) -> None:
        """Keep the latest news of a test's job. Deliveries arrive out of order: a job's
        `in_progress` that comes after its `completed` must not undo it."""
        values = {
            "job_id": outcome.job_id,
            "status": outcome.status,
            "conclusion": outcome.conclusion,
            "job_url": outcome.job_url,
            "seconds": outcome.seconds,
            "updated_at": time.time(),
        }
        stmt = self._insert()(test_outcomes).values(dispatch_id=dispatch_id, path=outcome.path, **values)
        stmt = stmt.on_conflict_do_update(
            index_elements=["dispatch_id", "path"],
            set_=values,
            where=None if outcome.status == "completed" else test_outcomes.c.status != "completed",
        )
        with self.engine.begin() as conn:
            conn.execute(stmt)

    def outcomes(self, dispatch_id: str) -> dict[str, JobOutcome]:
        query = select(test_outcomes).where(test_outcomes.c.dispatch_id == dispatch_id)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return {
            m["path"]: JobOutcome(
                m["path"], m["job_id"], m["status"], m["conclusion"], m["job_url"], m["seconds"]
            )
            for m in (r._mapping for r in rows)
        }
