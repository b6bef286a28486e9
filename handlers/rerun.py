"""The "Re-run" buttons of rocmbot's checks: analyse the head again, or dispatch the ROCm run again."""

from __future__ import annotations

import logging
from typing import Any

from bot.core.events import Event
from bot.github.context import HandlerContext
from bot.github.publish import CHECK_NAME
from bot.rocm.payloads import ROCM_CHECK
from bot.rocm.runs import RocmRuns
from bot.service.router import Router
from bot.store.dispatch import DispatchStore
from handlers.review import analyse

router = Router()
log = logging.getLogger(__name__)


def _prs(ctx: HandlerContext, repo: str, head: str, named: list[Any]) -> list[int]:
    """The PRs of a head: those GitHub names, else those the bot analysed it for (a fork's)."""
    numbers = [int(p["number"]) for p in named if isinstance(p, dict) and isinstance(p.get("number"), int)]
    return numbers or DispatchStore(ctx.store).prs_of_head(repo, head)


def _analyse_again(ctx: HandlerContext, repo: str, head: str, named: list[Any]) -> None:
    for number in _prs(ctx, repo, head, named):
        if ctx.pull_request(repo, number).head_sha != head:
            log.info("re-run of an old head's check: not analysed",
                     extra={"delivery_id": ctx.event.delivery_id, "pr": number})
            continue
        analyse(ctx, repo, number, head, None, rerun=ctx.event.delivery_id)


@router.register("check_suite", "rerequested")
def rerun_suite(event: Event, ctx: HandlerContext) -> None:
    """"Re-run all checks": analyse the head again."""
    suite = event.payload.get("check_suite") or {}
    head = suite.get("head_sha")
    if ctx.github is None or event.repository is None or not isinstance(head, str):
        return
    _analyse_again(ctx, event.repository, head, suite.get("pull_requests") or [])


@router.register("check_run", "rerequested")
def rerun_check(event: Event, ctx: HandlerContext) -> None:
    """"Re-run" on one check: the analysis is made again; a ROCm run is dispatched again, for
    the same tests, as a request by whoever pressed it (who must be allowed to run them)."""
    check = event.payload.get("check_run") or {}
    head = check.get("head_sha")
    if ctx.github is None or event.repository is None or not isinstance(head, str):
        return
    if check.get("name") == CHECK_NAME:
        _analyse_again(ctx, event.repository, head, check.get("pull_requests") or [])
    elif check.get("name") == ROCM_CHECK:
        _dispatch_again(event, ctx, event.repository, str(check.get("external_id") or ""))


def _dispatch_again(event: Event, ctx: HandlerContext, repo: str, dispatch_id: str) -> None:
    record = DispatchStore(ctx.store).get(dispatch_id)
    if record is None or record.repository != repo:
        log.info("re-run of a ROCm check that is no dispatch", extra={"delivery_id": event.delivery_id})
        return
    if record.pr_number is None:  # the re-enable sweep's run: the next sweep runs its tests again
        log.info("re-run of a re-enable sweep's ROCm check: not dispatched",
                 extra={"delivery_id": event.delivery_id, "dispatch_id": dispatch_id})
        return
    RocmRuns(ctx, repo, record.pr_number).rerun(record, event.sender or "")
