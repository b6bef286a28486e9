"""ROCm runs after analysis, maintainers' approvals, and tracking the runs to completion."""

from __future__ import annotations

import logging

from bot.context import HandlerContext
from bot.dispatcher import APPROVE_ACTION, Refusal
from bot.events import Event
from bot.rocm import RocmRuns
from bot.router import Router
from bot.store.dispatch import DispatchStore

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
    runs = RocmRuns(ctx, event.repository, event.pr_number)
    if event.head_sha and runs.pr.head_sha != event.head_sha:
        return  # stale: a newer delivery handles the new head
    if runs.config.dispatch.cancel_stale:
        runs.dispatcher.cancel(runs.repo, runs.number, except_head=runs.pr.head_sha)
    selection = runs.selection()
    if runs.config.dispatch.auto == "off" or selection is None or not selection.tests or selection.failing:
        return
    if selection.state != "selected":
        return
    author = runs.actor(runs.pr.author)
    if not author.trusted:
        runs.queue_for_approval(selection.tests, f"@{runs.pr.author} may not start ROCm runs")
        return
    try:
        runs.request(author, selection.tests, force=False, origin="auto", failing=[])
    except Refusal as refusal:
        log.info("automatic dispatch refused", extra={"delivery_id": event.delivery_id,
                                                      "reason": refusal.reason})
        runs.report_refusal(refusal)


@router.register("check_run", "requested_action")
def approve_from_button(event: Event, ctx: HandlerContext) -> None:
    """The "Approve ROCm run" button: the clicking maintainer approves the current head."""
    action = (event.payload.get("requested_action") or {}).get("identifier")
    if action != APPROVE_ACTION or ctx.github is None or event.repository is None:
        return
    prs = (event.payload.get("check_run") or {}).get("pull_requests") or []
    if not prs:
        return
    runs = RocmRuns(ctx, event.repository, int(prs[0]["number"]))
    try:
        runs.approve(runs.actor(event.sender or ""), "button")
    except Refusal as refusal:
        log.info("approval refused", extra={"delivery_id": event.delivery_id, "reason": refusal.reason})


@router.register("pull_request_review", "submitted")
def approve_from_review(event: Event, ctx: HandlerContext) -> None:
    """An APPROVED review by a maintainer releases the head's waiting ROCm runs."""
    review = event.payload.get("review") or {}
    if str(review.get("state", "")).lower() != "approved" or ctx.github is None:
        return
    if event.repository is None or event.pr_number is None:
        return
    runs = RocmRuns(ctx, event.repository, event.pr_number)
    selection = runs.selection()
    if selection is None or selection.state != "pending" or review.get("commit_id") != runs.pr.head_sha:
        return
    login = str((review.get("user") or {}).get("login") or event.sender or "")
    try:
        runs.approve(runs.actor(login), "review")
    except Refusal as refusal:
        log.info(
            "approval by review refused", extra={"delivery_id": event.delivery_id, "reason": refusal.reason}
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


@router.register("workflow_run")
def track_workflow_run(event: Event, ctx: HandlerContext) -> None:
    """Move the dispatch's `rocmbot / rocm` check with its run: queued, in progress, completed."""
    run = event.payload.get("workflow_run") or {}
    if ctx.github is None or event.repository is None or not isinstance(run, dict):
        return
    store = DispatchStore(ctx.store)
    dispatch_id = _dispatch_of(store, event.repository, run)
    if dispatch_id is None:
        return
    record = store.get(dispatch_id)
    assert record is not None
    status = _STATUS.get(str(run.get("status")), "in_progress")
    conclusion = run.get("conclusion") if status == "completed" else None
    store.update(
        dispatch_id, run_id=run.get("id"), run_url=run.get("html_url"), status=status, conclusion=conclusion
    )
    if record.check_run_id is None:
        return
    from bot.dispatcher import Dispatcher

    runs = Dispatcher(ctx.github, ctx.effects(), store, None)  # type: ignore[arg-type]
    payload = runs.check_payload(
        record.head_sha,
        dispatch_id,
        record.suite,
        record.tests,
        record.gpu_minutes,
        status,
        conclusion=str(conclusion) if conclusion else None,
        url=str(run.get("html_url") or "") or None,
        detail=f"Workflow run: {run.get('html_url')}",
    )
    payload.pop("head_sha")
    payload.pop("name")
    effects = ctx.effects()
    effects.once(
        f"rocm-check-update:{dispatch_id}:{status}:{conclusion}",
        "check_run",
        f"{event.repository}/check-runs/{record.check_run_id}",
        lambda: (
            {"id": ctx.github.update_check_run(event.repository or "", record.check_run_id or 0, payload).id}
            if ctx.github
            else None
        ),
    )


@router.register("workflow_job")
def track_workflow_job(event: Event, ctx: HandlerContext) -> None:
    """A job of a dispatched run started or ended: note it on the dispatch's check."""
    job = event.payload.get("workflow_job") or {}
    if ctx.github is None or event.repository is None or not isinstance(job, dict):
        return
    store = DispatchStore(ctx.store)
    run_id = job.get("run_id")
    record = store.by_run(event.repository, run_id) if isinstance(run_id, int) else None
    if record is None or record.check_run_id is None or record.status == "completed":
        return
    if job.get("status") == "in_progress" and record.status != "in_progress":
        store.update(record.dispatch_id, status="in_progress")
        ctx.effects().once(
            f"rocm-check-update:{record.dispatch_id}:in_progress:None",
            "check_run",
            f"{event.repository}/check-runs/{record.check_run_id}",
            lambda: (
                {
                    "id": ctx.github.update_check_run(
                        event.repository or "",
                        record.check_run_id or 0,
                        {
                            "status": "in_progress",
                            "output": {
                                "title": f"{len(record.tests)} ROCm tests on {record.suite}: in progress",
                                "summary": f"Job `{job.get('name')}` started on `{job.get('runner_name')}`.",
                            },
                        },
                    ).id
                }
                if ctx.github
                else None
            ),
        )
