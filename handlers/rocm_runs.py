"""ROCm runs after analysis, maintainers' approvals, and tracking the runs to completion."""

from __future__ import annotations

import logging
from datetime import datetime

from bot.github.port import WorkflowJob
from bot.rocm.dispatch import APPROVE_ACTION, Dispatcher, Refusal, ensure_check, job_target
from bot.rocm.runs import RocmRuns
from bot.service.context import HandlerContext
from bot.service.events import Event
from bot.service.router import Router
from bot.store.dispatch import Dispatch, DispatchStore, JobOutcome
from handlers.review import refresh_summary_runs

IN_FLIGHT_SECONDS = 60.0  # a write begun this recently by another attempt may still be under way

router = Router()
log = logging.getLogger(__name__)

_STATUS = {
    "requested": "queued",
    "queued": "queued",
    "waiting": "queued",
    "pending": "queued",
    "in_progress": "in_progress",
    "completed": "completed",
}


@router.register("pull_request", "opened")
@router.register("pull_request", "synchronize")
@router.register("pull_request", "reopened")
@router.register("pull_request", "ready_for_review")
def dispatch_after_analysis(event: Event, ctx: HandlerContext) -> None:
    """Cancel the previous head's runs; dispatch this head's selection when the author is trusted."""
    if ctx.github is None or event.repository is None or event.pr_number is None:
        return
    if (event.payload.get("pull_request") or {}).get("draft") and not ctx.settings.analyse_drafts:
        return  # not analysed, so nothing is selected
    runs = RocmRuns(ctx, event.repository, event.pr_number)
    if event.head_sha and runs.pr.head_sha != event.head_sha:
        return  # stale: a newer delivery handles the new head
    if runs.config.dispatch.cancel_stale:
        runs.dispatcher.cancel(runs.repo, runs.number, except_head=runs.pr.head_sha)
    selection = runs.selection()
    if runs.config.dispatch.auto == "off" or selection is None or not selection.tests:
        return
    if {t.path for t in selection.tests} & set(selection.failing):
        return  # a test it would run has a new error: the run would fail on the runner
    if selection.state != "selected":
        return
    author = runs.actor(runs.pr.author)
    if not author.trusted:
        runs.queue_for_approval(selection.tests, f"@{runs.pr.author} may not start ROCm runs")
        return
    try:
        runs.request(author, selection.tests, force=False, origin="auto", failing=[])
        refresh_summary_runs(ctx, runs.repo, runs.number, runs.pr.head_sha)
    except Refusal as refusal:
        log.info("automatic dispatch refused", extra={"delivery_id": event.delivery_id,
                                                      "reason": refusal.reason})
        runs.report_refusal(refusal)


@router.register("pull_request", "closed")
def cancel_when_closed(event: Event, ctx: HandlerContext) -> None:
    """A closed or merged PR's ROCm runs are cancelled (`dispatch.cancel_on_close`)."""
    if ctx.github is None or event.repository is None or event.pr_number is None:
        return
    runs = RocmRuns(ctx, event.repository, event.pr_number)
    if runs.config.dispatch.cancel_on_close:
        cancelled = runs.dispatcher.cancel(runs.repo, runs.number)
        log.info("PR closed: ROCm runs cancelled", extra={"delivery_id": event.delivery_id,
                                                         "cancelled": len(cancelled)})


@router.register("check_run", "requested_action")
def approve_from_button(event: Event, ctx: HandlerContext) -> None:
    """The "Approve ROCm run" button: the clicking maintainer approves the head the check is on.

    The PR is the one the bot made the check for: GitHub leaves `pull_requests` empty when the
    head is in a fork, which is when an approval is asked for."""
    action = (event.payload.get("requested_action") or {}).get("identifier")
    check = event.payload.get("check_run") or {}
    if action != APPROVE_ACTION or ctx.github is None or event.repository is None:
        return
    mine = DispatchStore(ctx.store).selection_of_check(event.repository, int(check.get("id") or 0))
    if mine is None:
        log.info("approve button on a check rocmbot has no record of",
                 extra={"delivery_id": event.delivery_id, "check_run": check.get("id")})
        return
    number, head = mine
    runs = RocmRuns(ctx, event.repository, number)
    try:
        runs.approve(runs.actor(event.sender or ""), "button", head=head)
    except Refusal as refusal:
        log.info("approval refused", extra={"delivery_id": event.delivery_id, "reason": refusal.reason})


@router.register("pull_request_review", "submitted")
def approve_from_review(event: Event, ctx: HandlerContext) -> None:
    """An APPROVED review by a maintainer releases the waiting ROCm runs of the head it reviewed
    (its `commit_id`); a review of an older head says that the new head needs its own approval."""
    review = event.payload.get("review") or {}
    if str(review.get("state", "")).lower() != "approved" or ctx.github is None:
        return
    if event.repository is None or event.pr_number is None:
        return
    runs = RocmRuns(ctx, event.repository, event.pr_number)
    selection = runs.selection()
    if selection is None or selection.state != "pending":
        return
    login = str((review.get("user") or {}).get("login") or event.sender or "")
    try:
        runs.approve(runs.actor(login), "review", head=str(review.get("commit_id") or ""))
    except Refusal as refusal:
        log.info(
            "approval by review refused", extra={"delivery_id": event.delivery_id, "reason": refusal.reason}
        )
        if runs.actor(login).maintainer:  # a maintainer expects the runs: say why not
            _review_reply(runs, int(review.get("id") or 0), f"Not dispatched: {refusal.reason}")


def _review_reply(runs: RocmRuns, review_id: int, text: str) -> None:
    """One reply per review, found again by its marker when GitHub made it unseen."""
    marker = f"<!-- rocmbot:review-reply {review_id} -->"
    body = f"{text}\n\n{marker}"

    def reconcile() -> dict[str, object] | None:
        for found in runs.gh.comments(runs.repo, runs.number):
            if runs.effects.ours(found) and marker in found.body:
                return {"id": found.id, "reconciled": True}
        return None

    runs.effects.once(
        f"review-reply:{runs.repo}:{review_id}", "comment", f"{runs.repo}#{runs.number}",
        lambda: {"id": runs.gh.create_comment(runs.repo, runs.number, body).id}, reconcile,
    )


def _dispatch_of(store: DispatchStore, repo: str, run: dict[str, object]) -> str | None:
    run_id = run.get("id")
    if isinstance(run_id, int):
        found = store.by_run(repo, run_id)
        if found is not None:
            return found.dispatch_id
    title = f"{run.get('display_title') or ''} {run.get('name') or ''}"
    for word in title.replace("(", " ").replace(")", " ").split():
        if len(word) == 16 and store.get(word) is not None:
            return word
    return None


def _seconds(job: WorkflowJob) -> float | None:
    """How long a job ran, from its `started_at` and `completed_at` (ISO 8601), when both are known."""
    try:
        started = datetime.fromisoformat(str(job.started_at).replace("Z", "+00:00"))
        ended = datetime.fromisoformat(str(job.completed_at).replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, (ended - started).total_seconds())


def _job_of(payload: dict[str, object]) -> WorkflowJob | None:
    """The job a `workflow_job` delivery is about; None without a numeric id."""
    return WorkflowJob.from_api(payload) if isinstance(payload.get("id"), int) else None


def _record_job(store: DispatchStore, record: Dispatch, job: WorkflowJob) -> bool:
    """Keep the outcome of the test a job ran; False for a job that ran no test of the dispatch."""
    path = job_target(job.name, record.tests)
    if path is None:
        return False
    status = _STATUS.get(job.status, "in_progress")
    done = status == "completed"
    store.record_outcome(
        record.dispatch_id,
        JobOutcome(path, job.id, status, job.conclusion if done else None, job.html_url or None,
                   _seconds(job) if done else None),
    )
    return True


def _fill_from_jobs(ctx: HandlerContext, store: DispatchStore, record: Dispatch) -> None:
    """At the end of a run, read its jobs for the tests whose `workflow_job` news never came
    (a lost delivery, or a run whose id was learnt only from its `workflow_run`)."""
    assert ctx.github is not None and record.run_id is not None
    known = store.outcomes(record.dispatch_id)
    if all(p in known and known[p].status == "completed" for p in record.tests):
        return
    for job in ctx.github.run_jobs(record.repository, record.run_id):
        _record_job(store, record, job)


def _refresh_check(ctx: HandlerContext, store: DispatchStore, dispatch_id: str, news: str) -> None:
    """Bring the dispatch's `rocmbot / rocm` check up to date with its run and its tests.

    ``news`` names what changed; the ledger makes each piece of news one update, so a
    redelivered webhook does not write again."""
    record = store.get(dispatch_id)
    assert record is not None and ctx.github is not None
    if record.check_run_id is None:
        return
    payload = Dispatcher.check_payload(
        record.head_sha,
        dispatch_id,
        record.suite,
        record.tests,
        record.gpu_minutes,
        record.status,
        conclusion=record.conclusion if record.status == "completed" else None,
        url=record.run_url,
        detail=f"Workflow run: {record.run_url}" if record.run_url else "",
        outcomes=store.outcomes(dispatch_id),
    )
    payload.pop("head_sha")
    payload.pop("name")
    gh, repo, check_id = ctx.github, record.repository, record.check_run_id
    ctx.effects().once(
        f"rocm-check-update:{dispatch_id}:{news}",
        "check_run",
        f"{repo}/check-runs/{check_id}",
        lambda: {"id": gh.update_check_run(repo, check_id, payload).id},
    )


@router.register("workflow_run")
def track_workflow_run(event: Event, ctx: HandlerContext) -> None:
    """Move the dispatch's `rocmbot / rocm` check with its run: queued, in progress, completed,
    with each test's result at the end."""
    run = event.payload.get("workflow_run") or {}
    if ctx.github is None or event.repository is None or not isinstance(run, dict):
        return
    store = DispatchStore(ctx.store)
    dispatch_id = _dispatch_of(store, event.repository, run)
    if dispatch_id is None:
        return
    status = _STATUS.get(str(run.get("status")), "in_progress")
    conclusion = run.get("conclusion") if status == "completed" else None
    store.update(
        dispatch_id, run_id=run.get("id"), run_url=run.get("html_url"), status=status, conclusion=conclusion
    )
    # a run whose dispatch died unseen; one whose dispatch is still making its check (the run's
    # first delivery often arrives meanwhile) is left to it: a second check would be a duplicate
    ensure_check(ctx.github, ctx.effects(), store, dispatch_id, defer_to_live=IN_FLIGHT_SECONDS)
    record = store.get(dispatch_id)
    assert record is not None
    if status == "completed" and record.run_id is not None:
        _fill_from_jobs(ctx, store, record)
    _refresh_check(ctx, store, dispatch_id, f"{status}:{conclusion}")
    refresh_summary_runs(ctx, record.repository, record.pr_number, record.head_sha)


@router.register("workflow_job")
def track_workflow_job(event: Event, ctx: HandlerContext) -> None:
    """A job of a dispatched run (one test of it) started or ended: show it on the dispatch's check."""
    job = event.payload.get("workflow_job") or {}
    if ctx.github is None or event.repository is None or not isinstance(job, dict):
        return
    store = DispatchStore(ctx.store)
    run_id = job.get("run_id")
    record = store.by_run(event.repository, run_id) if isinstance(run_id, int) else None
    if record is None:
        return
    started = job.get("status") == "in_progress" and record.status in ("requested", "queued")
    if started:
        store.update(record.dispatch_id, status="in_progress")
    known = _job_of(job)
    if not (known is not None and _record_job(store, record, known)) and not started:
        return
    status, conclusion = job.get("status"), job.get("conclusion")
    _refresh_check(ctx, store, record.dispatch_id, f"job:{job.get('id')}:{status}:{conclusion}")
