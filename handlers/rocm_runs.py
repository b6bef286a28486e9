"""ROCm runs: cancelled with their PR, released by maintainers' approvals, tracked to completion
(a re-enable sweep's runs, which belong to no PR, on the parked tests' issue).

The dispatch after an analysis is the review's last step (handlers/review.py), which hands over
the selection it just made.
"""

from __future__ import annotations

import logging

from bot.core.events import Event
from bot.github.context import HandlerContext
from bot.rocm.decide import Refusal
from bot.rocm.payloads import APPROVE_ACTION, refused_reply
from bot.rocm.ready import offer
from bot.rocm.reenable import after_run
from bot.rocm.runs import RocmRuns, refresh_summary_runs
from bot.rocm.track import Tracker
from bot.service.router import Router
from bot.store.dispatch import Dispatch, DispatchStore

router = Router()
log = logging.getLogger(__name__)


@router.register("pull_request", "closed")
def cancel_when_closed(event: Event, ctx: HandlerContext) -> None:
    """A closed or merged PR's ROCm runs are cancelled (`dispatch.cancel_on_close`)."""
    if ctx.github is None or event.repository is None or event.pr_number is None:
        return
    runs = RocmRuns(ctx, event.repository, event.pr_number)
    if runs.config.dispatch.cancel_on_close:
        cancelled = runs.cancel()
        log.info("PR closed: ROCm runs cancelled", extra={"delivery_id": event.delivery_id,
                                                         "cancelled": len(cancelled)})


@router.register("check_run", "requested_action")
def approve_from_button(event: Event, ctx: HandlerContext) -> None:
    """The "Approve ROCm run" button: the clicking maintainer approves the head the check is on
    (the check run's own `head_sha`), which releases nothing once the PR has moved on.

    The PR is the one the bot made the check for: GitHub leaves `pull_requests` empty when the
    head is in a fork, which is when an approval is asked for."""
    action = (event.payload.get("requested_action") or {}).get("identifier")
    check = event.payload.get("check_run") or {}
    head = check.get("head_sha")
    if action != APPROVE_ACTION or ctx.github is None or event.repository is None:
        return
    mine = DispatchStore(ctx.store).selection_of_check(event.repository, int(check.get("id") or 0))
    if mine is None or not isinstance(head, str) or mine[1] != head:
        log.info("approve button on a check rocmbot has no record of for its head",
                 extra={"delivery_id": event.delivery_id, "check_run": check.get("id")})
        return
    number = mine[0]
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
    selection = runs.analysed_selection()  # a review of a head whose analysis is queued waits for it
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
            runs.review_reply(int(review.get("id") or 0), refused_reply(refusal.reason))


def _tracker(ctx: HandlerContext, repo: str) -> Tracker:
    """The tracker of a repository's runs; its policy's failure patterns are read only when a
    failed job's log is (from the default branch, as all policy)."""
    assert ctx.github is not None
    return Tracker(ctx.github, ctx.effects(), DispatchStore(ctx.store), repo,
                   lambda: ctx.policy(repo).config.failures)


@router.register("workflow_run")
def track_workflow_run(event: Event, ctx: HandlerContext) -> None:
    """Move the dispatch's `rocmbot / rocm` check with its run, and the summary's runs section."""
    run = event.payload.get("workflow_run") or {}
    if ctx.github is None or event.repository is None or not isinstance(run, dict):
        return
    record = _tracker(ctx, event.repository).run_news(run)
    if record is not None:
        _shown(ctx, record)


def _shown(ctx: HandlerContext, record: Dispatch) -> None:
    """A run moved on: its PR's summary shows it, or, for a re-enable sweep's run (no PR), the
    parked tests' issue shows how it ended."""
    if record.pr_number is None:
        after_run(ctx, record)
    else:
        refresh_summary_runs(ctx, record.repository, record.pr_number, record.head_sha)
        offer(ctx, record)  # a parked test that passed: the edit that brings it back


@router.register("workflow_job")
def track_workflow_job(event: Event, ctx: HandlerContext) -> None:
    """A job of a dispatched run (one test of it) started or ended: show it on the dispatch's
    check; a failed one is explained from its log there and in the summary's runs section,
    which also shows a job that moved the run on."""
    job = event.payload.get("workflow_job") or {}
    if ctx.github is None or event.repository is None or not isinstance(job, dict):
        return
    moved = _tracker(ctx, event.repository).job_news(job)
    if moved is not None:
        _shown(ctx, moved)
