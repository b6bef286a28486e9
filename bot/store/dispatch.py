"""What the dispatch side remembers: each PR head's selection, approvals, dispatched runs."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Integer,
    Row,
    String,
    and_,
    case,
    func,
    literal,
    or_,
    select,
    update,
)

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
# A run's states in the order they come, per attempt; any other status (a dispatch not yet
# accepted, or accepted with no news) comes before them all.
RUN_ORDER = {"queued": 0, "in_progress": 1, "completed": 2}


@dataclass(frozen=True)
class SelectedTest:
    path: str
    suite: str
    est_time: float | None
    gpus: int | None
    tier: str = "direct"
    # a disabled marker's test (`/run-amd disabled`): dispatched with `include_disabled`, so
    # the workflow runs it although its marker says it is disabled
    parked: bool = False

    @property
    def gpu_minutes(self) -> float:
        return (self.est_time or 0) / 60 * (self.gpus or 0)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "suite": self.suite,
            "est_time": self.est_time,
            "gpus": self.gpus,
            "tier": self.tier,
        }
        if self.parked:
            out["parked"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SelectedTest:
        return cls(data["path"], data["suite"], data["est_time"], data["gpus"], data.get("tier", "direct"),
                   bool(data.get("parked", False)))


@dataclass(frozen=True)
class ParkedTest:
    """A disabled ROCm marker of a PR head (the analysis' `parked[]`) as `/run-amd disabled`
    sees it: its test (``parked`` set), whether it is a candidate to bring back (its launch
    checked and valid, and reached by the PR), why or why not, and the rules its launch breaks."""

    test: SelectedTest
    candidate: bool
    why: str
    problems: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {**self.test.as_dict(), "candidate": self.candidate, "why": self.why,
                "problems": list(self.problems)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ParkedTest:
        return cls(SelectedTest.from_dict({**data, "parked": True}), bool(data.get("candidate")),
                   str(data.get("why") or ""), tuple(data.get("problems") or ()))


def tests_hash(tests: list[SelectedTest]) -> str:
    """What an approval is bound to, besides the PR and its head: the set of tests."""
    key = "\n".join(sorted(f"{t.suite} {t.path}" for t in tests))
    return hashlib.sha256(key.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class KnownFinding:
    """A finding the analysis of a head had, as kept to explain a failed run by."""

    rule: str
    severity: str
    path: str | None
    line: int | None
    message: str
    fix: str | None = None
    test: str | None = None
    fingerprint: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "severity": self.severity, "path": self.path, "line": self.line,
                "message": self.message, "fix": self.fix, "test": self.test, "fingerprint": self.fingerprint}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KnownFinding:
        return cls(str(data["rule"]), str(data.get("severity") or "error"), data.get("path"),
                   data.get("line"), str(data.get("message") or ""), data.get("fix"), data.get("test"),
                   str(data.get("fingerprint") or ""))


@dataclass(frozen=True)
class HeadFindings:
    """What the analysis of a head found that a failed ROCm run may have hit: the PAR findings
    of each test's ROCm launch, the PIN findings of the image every test runs in, and the line
    of each test's ROCm marker."""

    tests: dict[str, list[KnownFinding]] = field(default_factory=dict)
    pins: list[KnownFinding] = field(default_factory=list)
    markers: dict[str, int] = field(default_factory=dict)

    def of(self, path: str) -> list[KnownFinding]:
        """The findings a run of ``path`` may have hit."""
        return [*self.tests.get(path, []), *self.pins]

    def as_json(self) -> str:
        tests = {p: [f.as_dict() for f in fs] for p, fs in sorted(self.tests.items())}
        return json.dumps({"tests": tests, "pins": [f.as_dict() for f in self.pins],
                           "markers": dict(sorted(self.markers.items()))})

    @classmethod
    def from_json(cls, text: str | None) -> HeadFindings | None:
        if not text:
            return None
        data = json.loads(text)
        found = (data.get("tests") or {}).items()
        tests = {str(p): [KnownFinding.from_dict(f) for f in fs] for p, fs in found}
        return cls(tests, [KnownFinding.from_dict(f) for f in data.get("pins") or []],
                   {str(p): int(n) for p, n in (data.get("markers") or {}).items()})


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
    held: list[SelectedTest] = field(default_factory=list)  # selected, but with a new error
    parked: list[ParkedTest] = field(default_factory=list)  # its disabled ROCm markers
    findings: HeadFindings | None = None  # what the head's analysis found on its ROCm tests

    @property
    def candidates(self) -> list[SelectedTest]:
        """The parked tests `/run-amd disabled` runs: those that could come back."""
        return [p.test for p in self.parked if p.candidate]

    def holds(self, tests: Sequence[SelectedTest]) -> bool:
        """Whether this is a selection of the same tests (each by suite and path)."""
        return tests_hash(self.tests) == tests_hash(list(tests))


@dataclass(frozen=True)
class Dispatch:
    dispatch_id: str
    repository: str
    pr_number: int | None  # None: a run of the default branch's head (the re-enable sweep)
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
    run_attempt: int | None = None  # of the news the status shows; None: no news yet
    news_at: int | None = None  # GitHub's time of that news, whole seconds
    include_disabled: bool = False  # sent with `include_disabled`: its tests are parked ones

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
            m["run_attempt"],
            m["news_at"],
            bool(m["include_disabled"]),
        )

    @property
    def active(self) -> bool:
        return self.status in ACTIVE


@dataclass(frozen=True)
class Explanation:
    """Why a failed job failed, from its log: its class (``predicted``, ``infrastructure``,
    ``known`` or ``new``; None when the log could not be read, ``unavailable`` saying why),
    the decisive lines, and what decided the class. ``signature`` is the error with its
    numbers masked; ``seen`` the signatures of the test's failures in earlier attempts of the
    run (what ``known`` is told by)."""

    job_id: int
    kind: str | None
    excerpt: tuple[str, ...] = ()
    explanation: str = ""
    rule: str | None = None
    pattern: str | None = None
    fix: str | None = None
    signature: str | None = None
    seen: tuple[str, ...] = ()
    unavailable: str | None = None

    def as_json(self) -> str:
        return json.dumps({"job": self.job_id, "class": self.kind, "excerpt": list(self.excerpt),
                           "explanation": self.explanation, "rule": self.rule, "pattern": self.pattern,
                           "fix": self.fix, "signature": self.signature, "seen": list(self.seen),
                           "unavailable": self.unavailable})

    @classmethod
    def from_json(cls, text: str | None) -> Explanation | None:
        if not text:
            return None
        d = json.loads(text)
        return cls(int(d["job"]), d.get("class"), tuple(d.get("excerpt") or ()),
                   str(d.get("explanation") or ""), d.get("rule"), d.get("pattern"), d.get("fix"),
                   d.get("signature"), tuple(d.get("seen") or ()), d.get("unavailable"))


@dataclass(frozen=True)
class JobOutcome:
    """How one test of a dispatch went, from the job that ran it."""

    path: str
    job_id: int
    status: str
    conclusion: str | None
    job_url: str | None
    seconds: float | None
    run_attempt: int = 1
    at: int | None = None  # GitHub's time of this news of the job, whole seconds
    explained: Explanation | None = None  # this job's failure, once its log was read


@dataclass(frozen=True)
class RunNews:
    """One state of a run, as a `workflow_run` (or `workflow_job`) delivery tells it."""

    attempt: int
    status: str  # queued | in_progress | completed (RUN_ORDER)
    conclusion: str | None = None
    at: int | None = None  # GitHub's `updated_at`, whole seconds; None when not told


def _rank(status: ColumnElement[Any]) -> ColumnElement[int]:
    return case(*((status == name, rank) for name, rank in RUN_ORDER.items() if rank), else_=0)


def later(old: tuple[ColumnElement[Any], ColumnElement[Any], ColumnElement[Any]],
          new: tuple[ColumnElement[Any], ColumnElement[Any], ColumnElement[Any]]) -> ColumnElement[bool]:
    """Whether news ``new`` (attempt, status, time) comes after the stored ``old``: a later
    attempt (a re-run starts over), or in the same attempt a later state, or the same state told
    at a later second. Equal news is not later: the first stays, and a redelivery changes
    nothing. A stored attempt of NULL is the first; news with no time is later only when it
    moves to a later state. In SQL, so the comparison and the write are one statement: two workers with two
    deliveries of one run cannot move it backwards between reading and writing."""
    old_attempt, new_attempt = func.coalesce(old[0], 1), new[0]
    old_rank, new_rank = _rank(old[1]), _rank(new[1])
    same_state = and_(new_rank == old_rank, new[2].is_not(None), or_(old[2].is_(None), old[2] < new[2]))
    return or_(new_attempt > old_attempt,
               and_(new_attempt == old_attempt, or_(new_rank > old_rank, same_state)))


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
        held: Sequence[SelectedTest] = (),
        parked: Sequence[ParkedTest] = (),
        findings: HeadFindings | None = None,
    ) -> None:
        """The head's selection, the tests whose launch has error findings, those held
        from the selection for a new error (which `/run-amd --force` runs), and its parked
        ROCm tests (which `/run-amd disabled` runs when they are candidates); ``findings``,
        what its analysis found on its ROCm tests, when given (otherwise what was kept stays)."""
        now = time.time()
        failing = sorted(set(failing))
        data = {"tests": [t.as_dict() for t in tests], "failing": failing,
                "held": [t.as_dict() for t in held], "parked": [p.as_dict() for p in parked]}
        values: dict[str, Any] = {
            "author": author,
            "tests": json.dumps(data),
            "errors": len(failing),
            "gpu_minutes": sum(t.gpu_minutes for t in tests),
            "state": state,
            "updated_at": now,
        }
        if findings is not None:
            values["findings"] = findings.as_json()
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
        tests, held = ([SelectedTest.from_dict(t) for t in data.get(key, [])] for key in ("tests", "held"))
        parked = [ParkedTest.from_dict(p) for p in data.get("parked", [])]
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
            held,
            parked,
            HeadFindings.from_json(m["findings"]),
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

    def head_at(self, repo: str, pr: int, when: float, current: str | None = None) -> str | None:
        """The head an approval written at ``when`` (a GitHub timestamp, whole seconds) covers:
        the PR's ``current`` head when its first delivery came before that second began;
        otherwise, of the heads whose first delivery came before then, the one that came last
        (GitHub delivers a burst of pushes in any order, so the last to arrive is not always
        the newest: the current head decides when it was seen). A head first seen within the
        comment's second may have come after the comment: it is not covered. None: no head
        was seen before."""
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
        if current is not None and any(head == current for _, head in known):
            return current
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
        pr: int | None,
        head: str,
        suite: str,
        tests: list[str],
        gpu_minutes: float,
        requested_by: str,
        include_disabled: bool = False,
    ) -> bool:
        """Record a dispatch before it is sent: `dispatching`, not yet in flight.
        ``include_disabled``: its tests are parked, and the workflow is told to run them;
        ``pr`` None: it runs a head of the default branch, for no PR."""
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
                # only when set: the column's default says false
                **({"include_disabled": True} if include_disabled else {}),
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

    def advance(self, dispatch_id: str, news: RunNews, *, run_id: int | None = None,
                run_url: str | None = None) -> bool:
        """Move a dispatch's run on to ``news``, unless the stored state is as late or later
        (see :func:`later`): one conditional UPDATE. True when it moved. The run's id and URL
        are learnt either way when the row has none yet."""
        d = dispatches.c
        new = (literal(news.attempt, Integer), literal(news.status, String), literal(news.at, BigInteger))
        values: dict[str, Any] = {"status": news.status, "conclusion": news.conclusion,
                                  "run_attempt": news.attempt, "news_at": news.at, "updated_at": time.time()}
        if run_id is not None:
            values["run_id"] = run_id
        if run_url is not None:
            values["run_url"] = run_url
        with self.engine.begin() as conn:
            moved = bool(conn.execute(
                update(dispatches)
                .where(d.dispatch_id == dispatch_id, later((d.run_attempt, d.status, d.news_at), new))
                .values(**values)
            ).rowcount)
            if not moved and run_id is not None:
                conn.execute(update(dispatches).where(d.dispatch_id == dispatch_id, d.run_id.is_(None))
                             .values(run_id=run_id, run_url=run_url, updated_at=time.time()))
        return moved

    def withdraw(self, dispatch_id: str) -> bool:
        """Give up a dispatch GitHub has not accepted; False when it has meanwhile (its run's
        news came in between), which then stays as that news left it."""
        with self.engine.begin() as conn:
            return bool(conn.execute(
                update(dispatches)
                .where(dispatches.c.dispatch_id == dispatch_id, dispatches.c.status.in_(UNACCEPTED))
                .values(updated_at=time.time(), status=WITHDRAWN)
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

    def for_pr(self, repo: str, pr: int | None, head: str | None = None) -> list[Dispatch]:
        """A PR's dispatches (of one head); ``pr`` None: those of no PR."""
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

    def record_outcome(self, dispatch_id: str, outcome: JobOutcome) -> bool:
        """Keep the latest news of a test's job, in the order of :func:`later` (attempt, state,
        time). Deliveries arrive out of order: a job's `in_progress` that comes after its
        `completed` must not undo it, nor a first attempt's news a re-run's. True when kept."""
        values = {
            "job_id": outcome.job_id,
            "status": outcome.status,
            "conclusion": outcome.conclusion,
            "job_url": outcome.job_url,
            "seconds": outcome.seconds,
            "run_attempt": outcome.run_attempt,
            "news_at": outcome.at,
            "updated_at": time.time(),
        }
        stmt = self._insert()(test_outcomes).values(dispatch_id=dispatch_id, path=outcome.path, **values)
        t, new = test_outcomes.c, stmt.excluded
        stmt = stmt.on_conflict_do_update(
            index_elements=["dispatch_id", "path"],
            set_=values,
            where=later((t.run_attempt, t.status, t.news_at), (new.run_attempt, new.status, new.news_at)),
        ).returning(t.id)  # a row only when one was written: the rowcount does not say so on PostgreSQL
        with self.engine.begin() as conn:
            return conn.execute(stmt).first() is not None

    def outcomes(self, dispatch_id: str) -> dict[str, JobOutcome]:
        """Each test's latest news, with its job's failure explained once it is (an earlier
        attempt's explanation is not this job's)."""
        query = select(test_outcomes).where(test_outcomes.c.dispatch_id == dispatch_id)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return {
            m["path"]: JobOutcome(
                m["path"], m["job_id"], m["status"], m["conclusion"], m["job_url"], m["seconds"],
                m["run_attempt"] or 1, m["news_at"],
                Explanation.from_json(m["triage"]) if m["triage_job"] == m["job_id"] else None,
            )
            for m in (r._mapping for r in rows)
        }

    def last_explained(self, dispatch_id: str, path: str) -> Explanation | None:
        """The last failure of a test of a dispatch explained, whichever attempt it was of."""
        query = select(test_outcomes.c.triage).where(test_outcomes.c.dispatch_id == dispatch_id,
                                                     test_outcomes.c.path == path)
        with self.engine.connect() as conn:
            return Explanation.from_json(conn.execute(query).scalar())

    def explain(self, dispatch_id: str, path: str, explained: Explanation) -> bool:
        """Keep the explanation of a test's failed job: once per job, and only while the job
        is the test's latest (a re-run's news may have come meanwhile). True when kept."""
        t = test_outcomes.c
        stmt = (update(test_outcomes)
                .where(t.dispatch_id == dispatch_id, t.path == path, t.job_id == explained.job_id,
                       or_(t.triage_job.is_(None), t.triage_job != explained.job_id))
                .values(triage=explained.as_json(), triage_job=explained.job_id, updated_at=time.time()))
        with self.engine.begin() as conn:
            return bool(conn.execute(stmt).rowcount)

    def failures_seen(self, repo: str, head: str, path: str, *, besides: int) -> set[str]:
        """The signatures of a test's failures explained at a head, in any dispatch of it, each
        with those its earlier attempts saw; job ``besides`` (the one being explained) left out."""
        t, d = test_outcomes.c, dispatches.c
        query = (select(t.triage).join(dispatches, d.dispatch_id == t.dispatch_id)
                 .where(d.repository == repo, d.head_sha == head, t.path == path, t.triage.is_not(None),
                        t.triage_job != besides))
        with self.engine.connect() as conn:
            found = [Explanation.from_json(text) for (text,) in conn.execute(query).all()]
        return {s for e in found if e is not None for s in (*e.seen, e.signature) if s}
