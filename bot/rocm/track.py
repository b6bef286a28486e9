"""Tracking dispatched runs to completion: each run's and each job's news on its dispatch's check,
a failed job explained from its log."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from bot.analysis import triage
from bot.core.deadline import RetryLaterError
from bot.github import keys
from bot.github.effects import Effects
from bot.github.port import LogUnreadableError, WorkflowJob, Workflows
from bot.rocm import decide, explain, payloads
from bot.rocm.dispatch import ensure_check, settle_run
from bot.store.dispatch import Dispatch, DispatchStore, HeadFindings, JobOutcome, RunNews
from config.repo import FailureRule

log = logging.getLogger(__name__)

IN_FLIGHT_SECONDS = 60.0  # a write begun this recently by another attempt may still be under way
MADE_MEANWHILE_SECONDS = 10.0  # how long a delivery waits for another live attempt's write to land
# How often one delivery writes the check again when the run moved on while it wrote: each time
# means another delivery moved the run meanwhile (and writes it too), so a few suffice.
SHOWN_AGAIN = 3

STATUS = {
    "requested": "queued",
    "queued": "queued",
    "waiting": "queued",
    "pending": "queued",
    "in_progress": "in_progress",
    "completed": "completed",
}


def job_target(name: str, tests: list[str]) -> str | None:
    """The test a job ran: the targeted workflow's matrix names each job after its test
    (`stage-c-4-gpu-mi350 (tests/e2e/test_x.py)`); a job named after no test is not one."""
    wanted = set(tests)
    for word in re.split(r"[\s(),]+", name):
        if word in wanted:
            return word
    return None


def epoch(when: object) -> int | None:
    """GitHub's ISO 8601 time (`2026-11-30T10:00:00Z`) in whole seconds since the epoch; None
    when it is missing or not a time."""
    try:
        return int(datetime.fromisoformat(str(when).replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


def attempt_of(payload: dict[str, Any]) -> int:
    """The run attempt a `workflow_run` or `workflow_job` is of (1 when not told)."""
    attempt = payload.get("run_attempt")
    return attempt if isinstance(attempt, int) and attempt > 0 else 1


def seconds(job: WorkflowJob) -> float | None:
    """How long a job ran, from its `started_at` and `completed_at` (ISO 8601), when both are known."""
    try:
        started = datetime.fromisoformat(str(job.started_at).replace("Z", "+00:00"))
        ended = datetime.fromisoformat(str(job.completed_at).replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, (ended - started).total_seconds())


def job_of(payload: dict[str, Any]) -> WorkflowJob | None:
    """The job a `workflow_job` delivery is about; None without a numeric id."""
    return WorkflowJob.from_api(payload) if isinstance(payload.get("id"), int) else None


def record_job(store: DispatchStore, record: Dispatch, job: WorkflowJob) -> bool:
    """Keep the outcome of the test a job ran; False for a job that ran no test of the dispatch,
    and for news of it that is not later than what is kept (late, or delivered again)."""
    path = job_target(job.name, record.tests)
    if path is None:
        return False
    status = STATUS.get(job.status, "in_progress")
    done = status == "completed"
    at = epoch(job.completed_at if done else job.started_at)
    return store.record_outcome(
        record.dispatch_id,
        JobOutcome(path, job.id, status, job.conclusion if done else None, job.html_url or None,
                   seconds(job) if done else None, job.run_attempt, at),
    )


def shown(record: Dispatch, outcomes: dict[str, JobOutcome]) -> dict[str, Any]:
    """The check's payload for what is stored."""
    return payloads.run_check_update(record, outcomes)


def digest(payload: dict[str, Any]) -> str:
    return hashlib.sha1(json.dumps(payload, sort_keys=True, default=str).encode(),
                        usedforsecurity=False).hexdigest()[:12]


def failed(job: WorkflowJob) -> bool:
    """Whether a job's news is its end in failure (what a log is read for)."""
    return STATUS.get(job.status) == "completed" and job.conclusion == "failure"


class Tracker:
    """The news of one repository's dispatched runs. ``failures``: the repository's own
    patterns of failed logs (its policy's `failures:`), asked for only when a log is read."""

    def __init__(self, gh: Workflows, effects: Effects, store: DispatchStore, repo: str,
                 failures: Callable[[], Sequence[FailureRule]] = tuple) -> None:
        self.gh = gh
        self.effects = effects
        self.store = store
        self.repo = repo
        self.failures = failures
        self._heads: dict[tuple[int, str], HeadFindings | None] = {}

    def dispatch_of(self, run: dict[str, Any]) -> Dispatch | None:
        """The dispatch a run is: known by its run id, or named in its title."""
        run_id = run.get("id")
        if isinstance(run_id, int):
            found = self.store.by_run(self.repo, run_id)
            if found is not None:
                return found
        named = decide.run_dispatch_id(str(run.get("display_title") or ""), str(run.get("name") or ""))
        record = self.store.get(named) if named is not None else None
        return record if record is not None and record.repository == self.repo else None

    def run_news(self, run: dict[str, Any]) -> Dispatch | None:
        """Move the dispatch's check with its run: queued, in progress, completed, with each
        test's result at the end. News arrive out of order: the run only moves forward (per
        attempt; a re-run starts over), and the check shows what is stored, not the delivery.
        The dispatch, None for a run that is none."""
        found = self.dispatch_of(run)
        if found is None:
            return None
        dispatch_id = found.dispatch_id
        status = STATUS.get(str(run.get("status")), "in_progress")
        conclusion = run.get("conclusion") if status == "completed" else None
        run_id, url = run.get("id"), run.get("html_url")
        news = RunNews(attempt_of(run), status, conclusion, epoch(run.get("updated_at")))
        self.store.advance(dispatch_id, news, run_id=run_id if isinstance(run_id, int) else None,
                           run_url=url if isinstance(url, str) else None)
        if isinstance(run_id, int):
            settle_run(self.effects, found, run_id)
        # a run whose dispatch died unseen; one whose dispatch is still making its check (the run's
        # first delivery often arrives meanwhile) is left to it: a second check would be a duplicate
        ensure_check(self.effects, self.store, dispatch_id, defer_to_live=IN_FLIGHT_SECONDS)
        record = self.store.get(dispatch_id)
        assert record is not None
        if status == record.status == "completed" and record.run_id is not None:
            self._fill_from_jobs(record)
        self._refresh_check(dispatch_id)
        self._show_failures(record)
        return record

    def job_news(self, job: dict[str, Any]) -> Dispatch | None:
        """A job of a dispatched run (one test of it) started or ended: show it on the check. A
        job queued or started moves the run on too (its `workflow_run` news may come later);
        the dispatch when it did, else None."""
        run_id = job.get("run_id")
        record = self.store.by_run(self.repo, run_id) if isinstance(run_id, int) else None
        if record is None:
            return None
        status = STATUS.get(str(job.get("status")), "in_progress")
        started = RunNews(attempt_of(job), status)
        moved = status != "completed" and self.store.advance(record.dispatch_id, started)
        known = job_of(job)
        recorded = known is not None and record_job(self.store, record, known)
        explained = known is not None and self.explain_job(record, known)
        shown = self._show_failures(record)  # this job's failure, explained: with its annotation
        if not (recorded or moved or shown):
            return None
        if not shown:
            news = keys.job_news(record.dispatch_id, job.get("id"), job.get("status"), job.get("conclusion"))
            self._refresh_check(record.dispatch_id, news)
        return record if moved or explained or shown else None

    def explain_job(self, record: Dispatch, job: WorkflowJob) -> bool:
        """A test's job that failed: read the end of its log and keep why it failed, once per
        job and only while it is the test's latest. What rocmbot knew of the test at the head
        (its launch's findings, the image's pins) decides `predicted`; the failures of the test
        explained earlier at the head, in any dispatch or attempt, decide `known`. A log that
        is gone or cannot be read is kept as such: it never fails the delivery. True when an
        explanation was kept."""
        path = job_target(job.name, record.tests) if failed(job) else None
        latest = self.store.outcomes(record.dispatch_id).get(path) if path is not None else None
        if path is None or latest is None or latest.job_id != job.id or latest.explained is not None:
            return False
        head = self._head(record)
        seen = self.store.failures_seen(record.repository, record.head_sha, path, besides=job.id)
        data: bytes | None = None
        unreadable: str | None = None
        try:
            data = self.gh.job_log(record.repository, job.id, limit=triage.MAX_LOG_BYTES)
        except LogUnreadableError as exc:
            unreadable = str(exc)
        patterns = self.failures() if data is not None else ()  # the policy is read for a log only
        found = explain.explain(job.id, data, head.of(path) if head is not None else [], patterns, seen,
                                unreadable=unreadable)
        kept = self.store.explain(record.dispatch_id, path, found)
        log.info("failed ROCm job explained", extra={
            "repository": record.repository, "dispatch_id": record.dispatch_id, "job_id": job.id,
            "class": found.kind or "log not available", "rule": found.rule, "pattern": found.pattern,
            "unavailable": found.unavailable, "kept": kept})
        return kept

    def _head(self, record: Dispatch) -> HeadFindings | None:
        """What the analysis of the dispatch's head found, as its selection keeps it (a run of
        no PR, the re-enable sweep's, has no selection: None)."""
        if record.pr_number is None:
            return None
        at = (record.pr_number, record.head_sha)
        if at not in self._heads:
            selection = self.store.selection(record.repository, record.pr_number, record.head_sha)
            self._heads[at] = selection.findings if selection is not None else None
        return self._heads[at]

    def _show_failures(self, record: Dispatch) -> bool:
        """Show on the dispatch's check each failed test explained and not shown yet, with its
        annotation on the test's ROCm marker (GitHub adds annotations to the check's: each is
        sent once, under its job's key). True when one was shown."""
        now = self.store.get(record.dispatch_id)
        if now is None or now.check_run_id is None:
            return False
        outcomes = self.store.outcomes(record.dispatch_id)
        due = [(o, f) for o, f in ((o, payloads.failure_of(o)) for o in outcomes.values()) if f is not None]
        if not due:
            return False
        shown = self.effects.done_starting(keys.failure_prefix(record.dispatch_id))
        head = self._head(record)
        wrote = False
        for outcome, failure in sorted(due, key=lambda pair: pair[0].path):
            key = keys.failure(record.dispatch_id, outcome.job_id)
            if key in shown:
                continue
            line = head.markers.get(outcome.path) if head is not None else None
            annotation = payloads.failure_annotation(failure, line)
            self._refresh_check(record.dispatch_id, key, annotations=[annotation])
            wrote = True
        return wrote

    def _fill_from_jobs(self, record: Dispatch) -> None:
        """At the end of a run, read its jobs for the tests whose `workflow_job` news of this
        attempt never came (a lost delivery, or a run whose id was learnt only from its
        `workflow_run`)."""
        assert record.run_id is not None
        attempt = record.run_attempt or 1
        known = self.store.outcomes(record.dispatch_id)
        if all(p in known and known[p].status == "completed" and known[p].run_attempt >= attempt
               for p in record.tests):
            return
        for job in self.gh.run_jobs(record.repository, record.run_id):
            record_job(self.store, record, job)
            self.explain_job(record, job)

    def _refresh_check(self, dispatch_id: str, news: str | None = None,
                       annotations: list[dict[str, Any]] | None = None) -> None:
        """Bring the dispatch's check up to date with what is stored of its run and its tests.
        ``news`` (the ledger key) names a job's news; by default the key is the run's stored
        state, so news that moved nothing (late, or redelivered) writes nothing.

        Another delivery of the same run may move it on while this one writes, and its write may
        land first: after writing, the stored state is read again and written once more when it
        shows something else, so the last write shows the last state. ``annotations`` go with
        the first write only (GitHub adds them to the check's), which another attempt that
        began it moments ago is left to make."""
        record = self.store.get(dispatch_id)
        assert record is not None
        if record.check_run_id is None:
            return
        key = news or keys.run_news(dispatch_id, record.status, record.conclusion, record.run_attempt)
        payload = shown(record, self.store.outcomes(dispatch_id))
        if annotations:
            first = {**payload, "output": {**payload["output"], "annotations": annotations}}
            if self.effects.update_check(key, record.repository, record.check_run_id, first,
                                         defer_to_live=IN_FLIGHT_SECONDS) is None \
                    and self.effects.made_meanwhile(key, MADE_MEANWHILE_SECONDS) is None:
                # left to the attempt that began it, which is usually done a moment later; should
                # it have died, this delivery comes back when the write can no longer be in
                # flight, and makes it
                raise RetryLaterError(IN_FLIGHT_SECONDS, "another attempt is writing a failed test's note")
        else:
            self.effects.update_check(key, record.repository, record.check_run_id, payload)
        for _ in range(SHOWN_AGAIN):
            now = self.store.get(dispatch_id)
            assert now is not None and now.check_run_id is not None
            again = shown(now, self.store.outcomes(dispatch_id))
            if again == payload:
                return
            key, payload = keys.check_shown_again(key, digest(again)), again
            self.effects.update_check(key, now.repository, now.check_run_id, payload)
