"""One PR's ROCm runs: read the facts `decide.py` needs, carry its decisions out, reply.

Handlers call the operations below; every GitHub write they lead to goes through the ledger.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.analysis.engine import audit
from bot.core.deadline import RetryLaterError
from bot.formats.markdown import Run
from bot.github import keys
from bot.github.context import HandlerContext
from bot.github.port import PullRequest
from bot.github.publish import SummaryState, with_runs
from bot.github.tree import GitHubTree
from bot.rocm import decide, payloads
from bot.rocm.authz import actor
from bot.rocm.decide import Actor, Refusal
from bot.rocm.dispatch import Dispatcher, ensure_check
from bot.rocm.payloads import Result
from bot.rocm.ready import passed
from bot.store.dispatch import NOT_SPENT, UNKNOWN, Dispatch, DispatchStore, SelectedTest, Selection

log = logging.getLogger(__name__)

# How a test's job (or, without its news, its run) ended for `/run-amd retry` to run it again.
RETRIED = ("failure", "timed_out", "startup_failure")


@dataclass(frozen=True)
class Outcome:
    decision: Literal["dispatch", "pending"]
    result: Result | None = None
    reason: str = ""


class RocmRuns:
    """The ROCm runs of one PR, for one delivery."""

    def __init__(self, ctx: HandlerContext, repo: str, number: int) -> None:
        assert ctx.github is not None
        self.repo = repo
        self.number = number
        self._ctx = ctx
        self._loaded = ctx.policy(repo)
        self.config = self._loaded.config
        self._store = DispatchStore(ctx.store)
        self._effects = ctx.effects()
        self._dispatcher = Dispatcher(ctx.github, self._effects, self._store, self.config, ctx.default_branch)

    @property
    def pr(self) -> PullRequest:
        return self._ctx.pull_request(self.repo, self.number)

    def actor(self, login: str) -> Actor:
        assert self._ctx.github is not None
        return actor(self._ctx.github, self.repo, login, self.config.dispatch)

    def selection(self) -> Selection | None:
        return self._store.selection(self.repo, self.number, self.pr.head_sha)

    def analysed_selection(self) -> Selection | None:
        """The current head's selection, once its analysis has run. While a delivery of that
        head waits to be analysed (GitHub's answer failed and it is retried later, say), a
        command or an approval of it is answered after it: RetryLaterError until then. None:
        the head was not analysed and nothing is on its way."""
        selection = self.selection()
        if selection is not None:
            return selection
        due = self._ctx.store.analysis_due(self.repo, self.number, self.pr.head_sha)
        if due is None:
            return None
        raise RetryLaterError(max(1.0, due - time.time() + 1.0),
                              f"the analysis of head {self.pr.head_sha[:12]} is still queued")

    def head_at(self, when: float) -> str:
        """The PR's head when a comment was written at ``when``, as the bot saw the heads
        arrive; empty when it was written before the bot knew any."""
        return self._store.head_at(self.repo, self.number, when, self.pr.head_sha) or ""

    # what to run ---------------------------------------------------------------------------

    def _head(self) -> GitHubTree:
        assert self._ctx.github is not None
        return GitHubTree(self._ctx.github, self.repo, self.pr.head_sha)

    def _head_tests(self) -> list[tuple[SelectedTest, bool]]:
        return decide.rocm_tests(audit(self._head(), loaded=self._loaded).tests, self.config)

    def parked_candidates(self, selection: Selection | None) -> list[SelectedTest]:
        """The PR's parked ROCm tests that could come back (`/run-amd disabled`), as its
        analysis found them; with none, Refusal saying why for each parked test."""
        parked = selection.parked if selection is not None else []
        tests = [p.test for p in parked if p.candidate]
        if not tests:
            raise decide.no_candidate(parked)
        return tests

    def named_parked(self, paths: Sequence[str], *, force: bool) -> list[SelectedTest]:
        """The named tests (`/run-amd disabled <paths>`), each a parked ROCm test of the head,
        candidate or not; one whose launch would fail only with ``force``."""
        head = self._head()
        report = audit(head, loaded=self._loaded)
        parked = decide.parked_tests(report.tests, report.parked)
        enabled = {t.path for t, _ in decide.rocm_tests(report.tests, self.config)}
        known = {p.test.path for p in parked} | enabled
        files = {p for p in map(decide.clean_path, paths) if p not in known and head.blob_id(p) is not None}
        tests, problems = decide.named_parked(paths, parked, enabled, files, force=force)
        if problems:
            raise decide.named_refusal(problems)
        return tests

    def all_tests(self) -> list[SelectedTest]:
        """Every enabled ROCm test of the per-PR suites at the head (`/run-amd all`)."""
        return [t for t, per_pr in self._head_tests() if per_pr]

    def named_tests(self, paths: Sequence[str]) -> list[SelectedTest]:
        """The named tests (`/run-amd <paths>`), each an enabled ROCm marker at the head."""
        head = self._head()
        known = {t.path: t for t, _ in self._head_tests()}
        files = {p for p in map(decide.clean_path, paths) if p not in known and head.blob_id(p) is not None}
        tests, problems = decide.named_tests(paths, known, files)
        if problems:
            raise decide.named_refusal(problems)
        return tests

    def failed_tests(self) -> list[SelectedTest]:
        """The tests whose last run on the current head failed (`/run-amd retry`), as that run
        sent them (a parked test as parked); Refusal when none did."""
        head = self.pr.head_sha
        last: dict[str, Dispatch] = {}
        for record in self._store.for_pr(self.repo, self.number, head):  # in the order made
            if record.status not in NOT_SPENT:  # a run GitHub made (or may have)
                last.update(dict.fromkeys(record.tests, record))
        failed: dict[str, Dispatch] = {}
        running = 0
        for path, record in last.items():
            if record.active or record.status == UNKNOWN:
                running += 1
                continue
            outcome = self._store.outcomes(record.dispatch_id).get(path)
            ended = outcome.conclusion if outcome is not None and outcome.status == "completed" \
                else record.conclusion  # its job gave no news: the run's end tells
            if ended in RETRIED:
                failed[path] = record
        if not failed:
            raise decide.nothing_failed(head, running, bool(last))
        selection = self.selection()
        tests: list[SelectedTest] = []
        for record in {r.dispatch_id: r for r in failed.values()}.values():
            tests.extend(self._as_sent(record, [p for p, r in failed.items() if r is record], selection))
        return tests

    def _as_sent(self, record: Dispatch, paths: Sequence[str],
                 selection: Selection | None) -> list[SelectedTest]:
        """``paths`` of a dispatch's tests as it sent them: with what the head's selection knows
        of them (their cost), a parked test as parked."""
        chosen = (selection.tests if selection is not None else [])
        if record.include_disabled:  # parked tests: run again as parked
            chosen = [p.test for p in (selection.parked if selection is not None else [])]
        known = {t.path: t for t in chosen if t.suite == record.suite}  # on the suite it ran on
        return [known.get(p) or SelectedTest(p, record.suite, None, None, parked=record.include_disabled)
                for p in paths]

    # decisions, carried out ---------------------------------------------------------------

    def request(self, who: Actor, tests: Sequence[SelectedTest], *, force: bool, origin: str,
                failing: Sequence[str], seen: str | None = None) -> Outcome:
        """Dispatch, or queue for approval, or raise Refusal with the reply. ``seen``: the head
        the requester saw; a maintainer's request approves only that head."""
        refused = decide.screen(who, tests, force=force, failing=failing, config=self.config.dispatch)
        if refused is not None:
            raise refused
        head = self.pr.head_sha
        facts = decide.Head(
            head,
            self.pr.author,
            self.actor(self.pr.author).trusted,
            self._store.gpu_minutes(self.repo, pr=self.number, head=head),
            self._store.gpu_minutes(self.repo, since=time.time() - 86400),
            self._store.approver(self.repo, self.number, head, decide.digest(tests)),
        )
        decision = decide.request(who, tests, facts, self.config.dispatch, seen=seen)
        if isinstance(decision, Refusal):
            raise decision
        if isinstance(decision, decide.AwaitApproval):
            self.queue_for_approval(decision.tests, decision.reason)
            if decision.refusal is not None:
                raise decision.refusal
            return Outcome("pending", reason=decision.reason)
        if decision.approve_as is not None:
            self._store.approve(self.repo, self.number, head, decide.digest(tests), decision.approve_as,
                                "command")
        return Outcome("dispatch", self._dispatcher.run(self.repo, self.number, head, decision.tests,
                                                        who.login, origin))

    def approve(self, who: Actor, via: str, *, head: str | None = None) -> Outcome:
        """A maintainer releases the pending selection of the current head; ``head`` is the
        head the maintainer saw (the review's commit, the check's head, the head current when
        the comment was written): an approval of another head releases nothing."""
        refused = decide.may_approve(who, self.config.dispatch)
        if refused is not None:  # before the PR is read
            raise refused
        pending = self.selection()
        current = self.pr.head_sha
        decision = decide.approval(who, head, current, pending, self.config.dispatch)
        if isinstance(decision, Refusal):
            raise decision
        assert pending is not None
        digest = decide.digest(decision.tests)
        self._store.approve(self.repo, self.number, current, digest, who.login, via)
        result = self._dispatcher.run(self.repo, self.number, current, decision.tests, who.login,
                                      keys.by_approval(digest))
        self._store.set_selection(self.repo, self.number, current, state="dispatched")
        if pending.check_run_id is not None:
            key = keys.approved_check(self.repo, self.number, current, digest)
            done = payloads.approved_check(who.login)
            self._effects.update_check(key, self.repo, pending.check_run_id, done)
        return Outcome("dispatch", result)

    def queue_for_approval(self, tests: Sequence[SelectedTest], reason: str) -> None:
        """A `rocmbot / rocm` check in action_required, with an approve button. The head's
        parked tests are kept: `/run-amd disabled` still finds them."""
        head = self.pr.head_sha
        before = self.selection()
        self._store.save_selection(self.repo, self.number, head, self.pr.author, list(tests), [], "pending",
                                   parked=before.parked if before is not None else ())
        digest = decide.digest(tests)
        key = keys.pending_check(self.repo, self.number, head, digest)
        check_id = self._effects.make_check(key, self.repo, payloads.approval_check(head, list(tests), reason,
                                                                                    digest))
        if check_id is not None:
            self._store.set_selection(self.repo, self.number, head, check_run_id=check_id)

    def after_analysis(self, tests: Sequence[SelectedTest], failing: Sequence[str]) -> None:
        """The head was just analysed and ``tests`` selected: cancel the previous heads' runs;
        dispatch the selection when its author may (else ask a maintainer); a dispatch that
        cannot happen shows as a failed `rocmbot / rocm` check."""
        if self.config.dispatch.cancel_stale:
            self.cancel(except_head=self.pr.head_sha)
        if not decide.automatic(self.config.dispatch, tests, failing):
            return
        author = self.actor(self.pr.author)
        if not author.trusted:
            self.queue_for_approval(tests, decide.untrusted_author(self.pr.author))
            return
        head = self.pr.head_sha
        try:
            self.request(author, tests, force=False, origin=keys.AUTOMATIC, failing=[])
            refresh_summary_runs(self._ctx, self.repo, self.number, head)
        except Refusal as refusal:
            log.info("automatic dispatch refused", extra={"delivery_id": self._ctx.event.delivery_id,
                                                          "reason": refusal.reason})
            key = keys.refusal_check(self.repo, self.number, head, refusal.rule)
            failed = payloads.refusal_check(head, refusal.reason, refusal.rule)
            self._effects.make_check(key, self.repo, failed)

    def not_sent(self, tests: Sequence[SelectedTest]) -> list[SelectedTest]:
        """The tests no dispatch of the current head has sent yet (each by suite and path)."""
        head = self.pr.head_sha
        sent = {(d.suite, path) for d in self._store.for_pr(self.repo, self.number, head) for path in d.tests}
        return [t for t in tests if (t.suite, t.path) not in sent]

    def after_relabel(self, before: Selection | None, tests: Sequence[SelectedTest],
                      failing: Sequence[str]) -> None:
        """The head was analysed again because its labels changed (what the repository's own CI
        runs for it may have): nothing more happens when it selects what it did (``before``);
        otherwise the tests no dispatch of this head has run go as after a push."""
        if before is not None and before.holds(tests):
            return
        rest = self.not_sent(tests)
        if rest:
            self.after_analysis(rest, failing)

    def rerun(self, record: Dispatch, login: str) -> None:
        """"Re-run" on a dispatch's check: the same tests again, as a request by ``login``."""
        if self.pr.head_sha != record.head_sha or self.pr.state != "open":
            log.info("re-run of an old head's ROCm run: not dispatched",
                     extra={"delivery_id": self._ctx.event.delivery_id})
            return
        selection = self.selection()
        tests = self._as_sent(record, record.tests, selection)
        origin = keys.by_rerun(self._ctx.event.delivery_id)
        try:
            self.request(self.actor(login), tests, force=False, origin=origin,
                         failing=selection.failing if selection is not None else [])
        except Refusal as refusal:
            log.info("re-run refused", extra={"delivery_id": self._ctx.event.delivery_id,
                                              "reason": refusal.reason})

    def cancel(self, *, except_head: str | None = None) -> list[Dispatch]:
        """Cancel this PR's runs in flight (all, or those of other heads)."""
        return self._dispatcher.cancel(self.repo, self.number, except_head=except_head)

    def complete(self, record: Dispatch) -> tuple[str | None, bool]:
        """Complete a dispatch an attempt left pending: what became of it if GitHub had not
        accepted it (see :meth:`Dispatcher.complete`), and whether it got its check now."""
        what = None
        if record.status == "dispatching":
            what = self._dispatcher.complete(
                record, lambda: self.pr.state == "open" and self.pr.head_sha == record.head_sha)
            if what in ("withdrawn", "unknown"):
                return what, False
        before = self._store.get(record.dispatch_id)
        ensure_check(self._effects, self._store, record.dispatch_id)
        after = self._store.get(record.dispatch_id)
        return what, before is not None and after is not None and before.check_run_id != after.check_run_id

    def refresh_summary(self) -> None:
        refresh_summary_runs(self._ctx, self.repo, self.number, self.pr.head_sha)

    # replies --------------------------------------------------------------------------------

    def react(self, comment_id: int, content: str) -> None:
        self._effects.react(self.repo, comment_id, content)

    def reply(self, comment_id: int, command: str, kind: str, text: str) -> None:
        """One reply per command (a comment and its text: an edit is a new command).

        The reply carries a hidden marker, so an attempt that died after GitHub made the comment
        but before the ledger recorded it (a 5xx after the write, a killed worker) finds it and
        brings it up to date instead of answering twice; a retry may have reached another outcome.
        """
        digest = payloads.digest(command)
        marker = payloads.reply_marker(comment_id, digest)
        self._effects.marked_comment(
            keys.reply(self.repo, comment_id, digest), self.repo, self.number, payloads.marked(text, marker),
            marker, made={"kind": kind}, found={"kind": kind}, refresh=True,
        )

    def answer(self, comment_id: int, text: str) -> None:
        """A refusal or a "waiting for approval": one reply per answer and head. The same answer to
        a later command on the same head edits that reply (it counts the commands) instead of
        adding a comment: five refused `/run-amd` make one reply, not five."""
        head = self.pr.head_sha
        digest = payloads.digest(text)
        group = keys.answer_group(self.repo, self.number, head, digest)
        marker = payloads.answer_marker(head, digest)
        first = self._effects.marked_comment(
            keys.answer(group), self.repo, self.number, payloads.marked(text, marker), marker,
            made={"command": comment_id}, found={"command": None},
        )
        if not isinstance(first, dict) or first.get("command") == comment_id or first.get("dry_run"):
            return
        mine = keys.answer_edit(group, comment_id)
        earlier = self._effects.made_starting(keys.answer_edit_prefix(group)) - {mine}
        body = payloads.counted(text, len(earlier) + 2, marker)
        self._effects.edit_comment(mine, self.repo, self.number, int(first["id"]), body)

    def review_reply(self, review_id: int, text: str) -> None:
        """One reply per review, found again by its marker when GitHub made it unseen."""
        marker = payloads.review_reply_marker(review_id)
        self._effects.marked_comment(keys.review_reply(self.repo, review_id), self.repo, self.number,
                                     payloads.marked(text, marker), marker)

    def help_reply(self) -> str:
        return payloads.help_reply(self.config.dispatch, self.selection())


def summary_runs(ctx: HandlerContext, repo: str, number: int, head: str) -> list[Run]:
    """A head's ROCm runs as the summary shows them."""
    store = DispatchStore(ctx.store)
    return _runs(store, store.for_pr(repo, number, head))


def _runs(store: DispatchStore, records: Sequence[Dispatch]) -> list[Run]:
    """The runs of a head, each with its tests that failed, explained: a test once, from the
    last of its runs that has news of it (a test run again and passing is not shown failed)."""
    outcomes = {d.dispatch_id: store.outcomes(d.dispatch_id) for d in records}
    last: dict[str, str] = {}
    for d in records:  # in the order they were made
        last.update({path: d.dispatch_id for path in d.tests if path in outcomes[d.dispatch_id]})
    runs = []
    for d in records:
        failed = (payloads.failure_of(outcomes[d.dispatch_id].get(p)) for p in d.tests
                  if last.get(p) == d.dispatch_id)
        ready = tuple(p for p in passed(d, outcomes[d.dispatch_id])
                      if last.get(p, d.dispatch_id) == d.dispatch_id)  # no later run has news of it
        runs.append(Run(d.suite, tuple(d.tests), d.conclusion or d.status, d.run_url,
                        tuple(f for f in failed if f is not None), ready, d.head_sha))
    return runs


def refresh_summary_runs(ctx: HandlerContext, repo: str, number: int, head: str) -> None:
    """Show the head's ROCm runs, with their status, in the summary the ledger last wrote for
    that head (a dispatch, a run that moved on); nothing when it shows another head."""
    effects = ctx.effects()
    existing = effects.known_summary(repo, number)
    if existing is None or SummaryState.load(existing[1]).head != head:
        return
    store = DispatchStore(ctx.store)
    records = store.for_pr(repo, number, head)
    body = with_runs(existing[1], _runs(store, records))
    if body != existing[1]:
        # An edit is made once per version: a re-run shows its first states again, so the runs'
        # later attempts are part of the version.
        again = [f"{d.dispatch_id}:{d.run_attempt}" for d in records if (d.run_attempt or 1) > 1]
        version = hashlib.sha1("\n".join([body, *again]).encode(), usedforsecurity=False).hexdigest()[:12]
        effects.summary(repo, number, body, existing, version=version)


__all__ = ["Outcome", "Refusal", "RocmRuns", "refresh_summary_runs", "summary_runs"]
