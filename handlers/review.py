"""Analyse a pull request and publish the check run, the sticky summary and an inline review."""

from __future__ import annotations

import hashlib
import logging

from bot.analysis.engine import analyze
from bot.context import HandlerContext
from bot.events import Event
from bot.ghtree import GitHubTree
from bot.port import InlineComment
from bot.publish import (
    CHECK_NAME,
    SummaryState,
    check_annotations,
    check_output,
    conclusion,
    diff_lines,
    finding_key,
    inline_comments,
    is_relevant,
    summary_body,
)
from bot.router import Router
from bot.store.dispatch import DispatchStore, SelectedTest

router = Router()
log = logging.getLogger(__name__)

REVIEW_BODY = "rocmbot found problems on lines this PR changes; the summary comment has the rest."


@router.register("pull_request", "opened")
@router.register("pull_request", "synchronize")
@router.register("pull_request", "reopened")
@router.register("pull_request", "ready_for_review")
def review_pull_request(event: Event, ctx: HandlerContext) -> None:
    """Analyse base..head; publish what a maintainer should read, once per head."""
    if ctx.github is None or event.repository is None or event.pr_number is None:
        log.info(
            "no GitHub access for this delivery: not analysed",
            extra={"delivery_id": event.delivery_id, "repository": event.repository},
        )
        return
    gh, repo, number = ctx.github, event.repository, event.pr_number
    pr = ctx.pull_request(repo, number)
    if event.head_sha and pr.head_sha != event.head_sha:
        log.info(
            "head moved since this delivery: a newer one will analyse it",
            extra={"delivery_id": event.delivery_id, "pr": number},
        )
        return
    if pr.draft and not ctx.settings.analyse_drafts:
        log.info("draft PR: not analysed", extra={"delivery_id": event.delivery_id, "pr": number})
        return
    files = gh.pull_files(repo, number)
    changed = {f.path for f in files} | {f.previous_path for f in files if f.previous_path}
    base, head = GitHubTree(gh, repo, pr.base_sha), GitHubTree(gh, repo, pr.head_sha)
    head.pair_with(base)
    head.fetch(sorted(changed))
    loaded = ctx.policy(repo)
    report = analyze(base, head, loaded=loaded, changed=changed, full=False)

    effects = ctx.effects()
    version = hashlib.sha1(check_output(report)["summary"].encode(), usedforsecurity=False).hexdigest()[:12]
    effects.check_run(
        repo,
        pr.head_sha,
        CHECK_NAME,
        {
            "status": "completed",
            "conclusion": conclusion(report),
            "output": check_output(report),
        },
        check_annotations(report),
        version=version,
    )

    existing = effects.find_summary(repo, number)
    previous = SummaryState.load(existing[1] if existing else None)
    previous.posted = list(dict.fromkeys([*previous.posted, *effects.posted_inline(repo, number)]))
    blobs = {f.path: f.blob_sha for f in files}
    diff = {f.path: diff_lines(f.patch) for f in files}
    inline = inline_comments(report, diff, blobs, previous.posted)
    keys = {finding_key(f, blobs.get(f.path or "")): f for f in report.findings}
    if inline:  # before the summary, which records them as posted
        effects.review(
            repo, number, pr.head_sha, REVIEW_BODY, [InlineComment(c.path, c.line, c.body) for c in inline],
            keys=[c.key for c in inline],
        )
    if existing is not None or is_relevant(report):
        body, _ = summary_body(report, previous, keys, [c.key for c in inline])
        effects.summary(repo, number, body, existing, version=version)
    selected = [SelectedTest(s.path, s.suite, s.est_time, s.gpus, s.tier) for s in report.selected]
    failing = [f.test or f.path or "" for f in report.errors]
    DispatchStore(ctx.store).save_selection(
        repo, number, pr.head_sha, pr.author, selected, failing, "selected"
    )
