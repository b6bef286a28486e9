"""What a PR shows when the delivery for its head was given up: the analysis check, neutral.

A delivery dead-lettered after its retries would otherwise leave the PR with no word from
rocmbot. The worker (which does not know GitHub) calls :func:`analysis_failed`, handed to it by
the composition root, after it dead-letters a delivery that names a PR head. The notice is the
analysis's own check run (same name, same ledger prefix), so the next analysis of that head
that succeeds updates this very check run with its result.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.core.redact import redacted
from bot.formats.escape import code
from bot.github import keys as ledger
from bot.github.context import HandlerContext
from bot.github.publish import CHECK_NAME
from bot.store.store import DeliveryRecord

log = logging.getLogger(__name__)

FAILED = "failed:"  # the version of a notice, in its ledger key: failed:<delivery id>
REASON_CHARS = 300


def version(delivery_id: str) -> str:
    return f"{FAILED}{delivery_id}"


def published(ctx: HandlerContext, repo: str, head: str) -> bool:
    """Whether the head's analysis check shows a result already (the analysis was published:
    what failed came after it, and the dead letter is the operator's to read)."""
    return any(e.status == "done" and not e.key.startswith(ledger.check(repo, head, CHECK_NAME, FAILED))
               for e in ctx.store.effects_starting(ledger.check_prefix(repo, head, CHECK_NAME)))


def output(record: DeliveryRecord, error: str) -> dict[str, Any]:
    """The check's conclusion and output: one line on what failed (credentials out, in a code
    span: it may quote PR text), and the delivery's id."""
    reason = redacted(" ".join(error.split()))
    if len(reason) > REASON_CHARS:
        reason = reason[: REASON_CHARS - 1] + "…"
    attempts = f"{record.attempts} attempt{'s' if record.attempts != 1 else ''}"
    return {
        "status": "completed",
        "conclusion": "neutral",
        "output": {
            "title": "rocmbot could not analyse this commit",
            "summary": (f"The analysis failed after {attempts}: {code(reason)}. "
                        f"Delivery {code(record.delivery_id)} (for the operator: "
                        f"`rocmbot deliveries show {record.delivery_id}`); pushing again, or "
                        "re-running this check, analyses the commit again."),
        },
    }


def analysis_failed(ctx: Any, record: DeliveryRecord, error: str) -> None:
    """Post the neutral analysis check on the head of a delivery that was given up."""
    if not isinstance(ctx, HandlerContext) or ctx.github is None:
        return  # no GitHub to tell (no App credentials)
    repo, head = record.repository, record.head_sha
    if repo is None or head is None or record.pr_number is None:
        return
    if published(ctx, repo, head):
        log.info("delivery given up after its analysis was published: the check stays",
                 extra={"delivery_id": record.delivery_id, "repository": repo, "pr": record.pr_number})
        return
    ctx.effects().check_run(repo, head, CHECK_NAME, output(record, error), [],
                            version=version(record.delivery_id))
    log.info("told the PR its delivery was given up", extra={
        "delivery_id": record.delivery_id, "repository": repo, "pr": record.pr_number, "head": head})
