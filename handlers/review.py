"""Analyse a pull request and publish the check run, the sticky summary and an inline review."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

from bot.analysis.engine import analyze
from bot.analysis.tree import match
from bot.core.events import Event
from bot.github.context import HandlerContext
from bot.github.policy import from_files as policy_from
from bot.github.policy import requests as policy_requests
from bot.github.port import InlineComment, PullRequest
from bot.github.publish import (
    CHECK_NAME,
    SummaryState,
    check_annotations,
    check_output,
    conclusion,
    inline_comments,
    is_relevant,
    summary_body,
)
from bot.github.tree import GitHubTree, likely_reads, read_together
from bot.rocm.decide import parked_tests
from bot.rocm.explain import head_findings
from bot.rocm.runs import RocmRuns, summary_runs
from bot.service.router import Router
from bot.store.dispatch import DispatchStore, SelectedTest
from config.repo import LoadedConfig, defaults

router = Router()
log = logging.getLogger(__name__)

REVIEW_BODY = "rocmbot found problems on lines this PR changes; the summary comment has the rest."


def _first_read(
    ctx: HandlerContext, repo: str, number: int, head: GitHubTree, changed: set[str]
) -> tuple[PullRequest, LoadedConfig]:
    """One batch of requests for what the analysis needs first: the changed files at base and
    head, the files it will likely read next, the workflows, the policy from the default
    branch, and the PR as GitHub has it now (whether the head moved since the delivery)."""
    guess = defaults()
    paths = sorted(changed)
    # tests are found by their markers, which are not read yet: a guess goes by the name
    paths += likely_reads(head, changed, lambda p: match("**/test_*.py", p), guess.launch.model_script)
    paths += head.list(".github/workflows/*.yml") + head.list(".github/workflows/*.yaml")
    branch = ctx.default_branch
    extra = policy_requests(branch) if branch and not ctx.has_policy(repo) else []
    batch = read_together(head, list(dict.fromkeys(paths)), extra=extra, pull=number)
    if extra and branch:
        ctx.remember_policy(repo, policy_from(branch, batch.blobs))
    if batch.pull is not None:
        ctx.remember_pull_request(batch.pull)
    return ctx.pull_request(repo, number), ctx.policy(repo)


def _line_of(tree: GitHubTree) -> Callable[[str, int], str | None]:
    """A line of a file at the head, for quoting an offending line outside the diff."""
    def line_of(path: str, line: int) -> str | None:
        data = tree.read(path)
        if data is None:
            return None
        lines = data.decode("utf-8", "replace").splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else None
    return line_of


def _analyse_delivery(event: Event, ctx: HandlerContext) -> tuple[list[SelectedTest], list[str]] | None:
    """Analyse the head a pull_request delivery names (see :func:`analyse`); None when it is
    not analysed (no GitHub access, a draft, a head that moved)."""
    if ctx.github is None or event.repository is None or event.pr_number is None:
        log.info(
            "no GitHub access for this delivery: not analysed",
            extra={"delivery_id": event.delivery_id, "repository": event.repository},
        )
        return None
    sent = event.payload.get("pull_request") or {}
    if sent.get("draft") and not ctx.settings.analyse_drafts:
        log.info("draft PR: not analysed", extra={"delivery_id": event.delivery_id, "pr": event.pr_number})
        return None
    base_sha = (sent.get("base") or {}).get("sha")
    expected = sent.get("changed_files")
    return analyse(ctx, event.repository, event.pr_number, event.head_sha,
                   base_sha if isinstance(base_sha, str) else None,
                   expected=expected if isinstance(expected, int) else None,
                   known_new=event.action == "opened")


@router.register("pull_request", "opened")
@router.register("pull_request", "synchronize")
@router.register("pull_request", "reopened")
@router.register("pull_request", "ready_for_review")
def review_pull_request(event: Event, ctx: HandlerContext) -> None:
    """Analyse base..head; publish what a maintainer should read, once per head."""
    selected = _analyse_delivery(event, ctx)
    if selected is not None and event.repository is not None and event.pr_number is not None:
        tests, failing = selected  # the ROCm runs of the head, from the selection just made
        RocmRuns(ctx, event.repository, event.pr_number).after_analysis(tests, failing)


@router.register("pull_request", "labeled")
@router.register("pull_request", "unlabeled")
def relabel_pull_request(event: Event, ctx: HandlerContext) -> None:
    """A label can change what the repository's own CI runs for the PR (a job gated on
    `run-ci-extra`): analyse the head again with its labels and publish. What was dispatched
    for this head is not dispatched again."""
    if event.repository is None or event.pr_number is None:
        return
    before = (DispatchStore(ctx.store).selection(event.repository, event.pr_number, event.head_sha)
              if event.head_sha else None)
    selected = _analyse_delivery(event, ctx)
    if selected is not None:
        tests, failing = selected
        RocmRuns(ctx, event.repository, event.pr_number).after_relabel(before, tests, failing)


def analyse(ctx: HandlerContext, repo: str, number: int, head_sha: str | None, base_sha: str | None, *,
            expected: int | None = None, known_new: bool = False, rerun: str | None = None,
            ) -> tuple[list[SelectedTest], list[str]] | None:
    """Analyse base..head of PR ``number`` and publish; ``rerun`` (a re-run's delivery id)
    writes the check again even when its contents did not change. The ROCm tests selected and
    those of them that have new errors; None when the head was not analysed."""
    assert ctx.github is not None
    gh, delivery_id = ctx.github, ctx.event.delivery_id
    if not head_sha or base_sha is None:  # the delivery does not say: ask GitHub
        known = ctx.pull_request(repo, number)
        head_sha, base_sha = head_sha or known.head_sha, known.base_sha
    files = gh.pull_files(repo, number, expected=expected)
    changed = {f.path for f in files} | {f.previous_path for f in files if f.previous_path}
    head = GitHubTree(gh, repo, head_sha)
    base = GitHubTree.before(head, base_sha, files)
    pr, loaded = _first_read(ctx, repo, number, head, changed)
    if pr.head_sha != head_sha:
        log.info(
            "head moved since this delivery: a newer one will analyse it",
            extra={"delivery_id": delivery_id, "pr": number},
        )
        return None
    if pr.draft and not ctx.settings.analyse_drafts:
        log.info("draft PR: not analysed", extra={"delivery_id": delivery_id, "pr": number})
        return None
    report = analyze(base, head, loaded=loaded, changed=changed, full=False, labels=pr.labels)

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
        version=f"{version}:rerun:{rerun}" if rerun else version,
    )

    # The ledger knows the comment it wrote; a PR just opened has none it does not know of.
    existing = effects.known_summary(repo, number)
    if existing is None and not known_new:
        existing = effects.find_summary(repo, number)
    previous = SummaryState.load(existing[1] if existing else None)
    previous.posted = list(dict.fromkeys([*previous.posted, *effects.posted_inline(repo, number)]))
    patches = {f.path: f.patch for f in files}
    inline = inline_comments(report, patches, previous.posted, _line_of(head))
    if inline:  # before the summary, which records them as posted
        effects.review(
            repo, number, pr.head_sha, REVIEW_BODY, [InlineComment(c.path, c.line, c.body) for c in inline],
            keys=[k for c in inline for k in c.keys],
        )
    if existing is not None or is_relevant(report):
        runs = summary_runs(ctx, repo, number, pr.head_sha)
        body, _ = summary_body(report, previous, [k for c in inline for k in c.keys], runs)
        effects.summary(repo, number, body, existing, version=version)
    selected = [SelectedTest(s.path, s.suite, s.est_time, s.gpus, s.tier) for s in report.selected]
    held = [SelectedTest(h.test.path, h.test.suite, h.test.est_time, h.test.gpus, h.test.tier)
            for h in report.held]  # a new error: run only by `/run-amd --force`
    parked = parked_tests(report.tests, report.parked)  # run only by `/run-amd disabled`
    failing = [f.test or f.path or "" for f in report.new_errors]  # the base's do not block
    # kept for the later deliveries (commands, re-runs, approvals); the same tests selected
    # again for a head (a re-run, a label) keep where they stand (waiting for approval, say)
    store = DispatchStore(ctx.store)
    before = store.selection(repo, number, pr.head_sha)
    state = before.state if before is not None and before.holds(selected) else "selected"
    store.save_selection(repo, number, pr.head_sha, pr.author, selected, failing, state, held, parked,
                         head_findings(report))  # the findings: to explain a run of this head that fails
    return selected, failing
