"""ROCm run decisions for one PR: who may run what, when a maintainer must approve, budgets."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Literal

from bot.analysis.engine import audit
from bot.formats.escape import code
from bot.github.port import PullRequest
from bot.github.tree import GitHubTree
from bot.rocm.authz import Actor, actor, who_may
from bot.rocm.dispatch import APPROVE_ACTION, ROCM_CHECK, Dispatcher, Refusal, Result, find_check, minutes
from bot.service.context import HandlerContext
from bot.store.dispatch import DispatchStore, SelectedTest, Selection, tests_hash
from config.repo import RepoConfig

log = logging.getLogger(__name__)

Decision = Literal["dispatch", "pending"]


@dataclass(frozen=True)
class Outcome:
    decision: Decision
    result: Result | None = None
    reason: str = ""


class RocmRuns:
    """Everything one PR's ROCm runs need, built once per delivery."""

    def __init__(self, ctx: HandlerContext, repo: str, number: int) -> None:
        assert ctx.github is not None
        self.ctx = ctx
        self.gh = ctx.github
        self.repo = repo
        self.number = number
        self.loaded = ctx.policy(repo)
        self.config: RepoConfig = self.loaded.config
        self.runs = DispatchStore(ctx.store)
        self.effects = ctx.effects()
        self.dispatcher = Dispatcher(self.gh, self.effects, self.runs, self.config, ctx.default_branch)
        self._pr: PullRequest | None = None

    @property
    def pr(self) -> PullRequest:
        if self._pr is None:
            self._pr = self.ctx.pull_request(self.repo, self.number)
        return self._pr

    def actor(self, login: str) -> Actor:
        return actor(self.gh, self.repo, login, self.config.dispatch)

    def selection(self) -> Selection | None:
        return self.runs.selection(self.repo, self.number, self.pr.head_sha)

    # what to run -----------------------------------------------------------

    def _head_tests(self) -> list[tuple[SelectedTest, bool]]:
        """Every enabled ROCm test at the head, and whether its suite is a per-PR one that
        PR runs may use."""
        report = audit(GitHubTree(self.gh, self.repo, self.pr.head_sha), loaded=self.loaded)
        out = []
        for t in report.tests:
            if t.backend != "rocm" or t.disabled is not None or t.suite is None:
                continue
            suite = self.config.suites.get(t.suite)
            per_pr = t.cadence == "per-pr" and (suite is None or suite.per_pr)
            out.append((SelectedTest(t.path, t.suite, t.est_time, t.gpus, "direct"), per_pr))
        return out

    def all_tests(self) -> list[SelectedTest]:
        """Every enabled ROCm test of the per-PR suites at the head (`/run-amd all`)."""
        return [t for t, per_pr in self._head_tests() if per_pr]

    def named_tests(self, paths: tuple[str, ...]) -> tuple[list[SelectedTest], list[str]]:
        """The named tests if each is an enabled ROCm marker at the head, whatever its
        suite's cadence; else why not, per path."""
        head = GitHubTree(self.gh, self.repo, self.pr.head_sha)
        known = {t.path: t for t, _ in self._head_tests()}
        tests, problems = [], []
        for path in paths:
            clean = path.strip("`'\"").lstrip("./")
            if clean in known:
                tests.append(known[clean])
            elif head.blob_id(clean) is None:
                hint = " (did you mean `/run-amd cancel`?)" if clean in ("canel", "cancle") else ""
                problems.append(f"{code(clean)} is not a file at the head{hint}")
            else:
                problems.append(f"{code(clean)} has no enabled ROCm marker")
        return tests, problems

    # budgets and approvals ---------------------------------------------------

    def budget_problem(self, tests: list[SelectedTest]) -> str | None:
        cost = sum(t.gpu_minutes for t in tests)
        d = self.config.dispatch
        spent_head = self.runs.gpu_minutes(self.repo, pr=self.number, head=self.pr.head_sha)
        if spent_head + cost > d.budget_gpu_minutes_per_head:
            return (
                f"this head would use {minutes(spent_head + cost)}, over the "
                f"{minutes(d.budget_gpu_minutes_per_head)} budget per PR head"
            )
        spent_day = self.runs.gpu_minutes(self.repo, since=time.time() - 86400)
        if spent_day + cost > d.budget_gpu_minutes_per_day:
            return (
                f"the repository has used {minutes(spent_day)} in the last 24 hours; this would pass "
                f"the {minutes(d.budget_gpu_minutes_per_day)} daily budget"
            )
        return None

    def author_trusted(self) -> bool:
        return self.actor(self.pr.author).trusted

    def request(
        self, who: Actor, tests: list[SelectedTest], *, force: bool, origin: str, failing: list[str],
        seen: str | None = None,
    ) -> Outcome:
        """Dispatch, or queue for approval, or raise Refusal with the reply. ``seen``: the head
        the requester saw; a maintainer's request approves only that head."""
        d = self.config.dispatch
        if not who.trusted:
            raise Refusal(f"{who.why()}; ROCm runs may be started by {who_may(d, approve=False)}.")
        if force and not who.maintainer:
            raise Refusal(f"{who.why()}; `--force` may be used by {who_may(d, approve=True)}.")
        blocked = sorted({t.path for t in tests} & set(failing))
        if blocked and not force:
            raise Refusal(
                f"{', '.join(code(p) for p in blocked)} ha{'ve' if len(blocked) > 1 else 's'} error "
                "findings (see the summary): the runs would fail after taking the GPUs. Fix them, or a "
                "maintainer can `/run-amd --force`."
            )
        if not tests:
            raise Refusal(
                "there is nothing to run: no enabled ROCm test is selected for this head. "
                "`/run-amd all` runs every enabled ROCm test; `/run-amd <path>` runs one."
            )
        reasons = []
        if not self.author_trusted():
            reasons.append(f"the PR author @{self.pr.author} is not trusted to run code on the ROCm runners")
        budget = self.budget_problem(tests)
        if budget:
            reasons.append(budget)
        digest = tests_hash(tests)
        head = self.pr.head_sha
        if reasons:
            approved = self.runs.approver(self.repo, self.number, head, digest)
            if who.maintainer and approved is None and seen not in (None, head):
                assert seen is not None
                self.queue_for_approval(tests, "; ".join(reasons))
                raise Refusal(moved(seen, head))
            if who.maintainer and approved is None:
                self.runs.approve(self.repo, self.number, head, digest, who.login, "command")
                approved = who.login
            if approved is None:
                self.queue_for_approval(tests, "; ".join(reasons))
                return Outcome("pending", reason="; ".join(reasons))
        result = self.dispatcher.run(self.repo, self.number, head, tests, who.login, origin)
        return Outcome("dispatch", result)

    def queue_for_approval(self, tests: list[SelectedTest], reason: str) -> None:
        """A `rocmbot / rocm` check in action_required, with an approve button."""
        head = self.pr.head_sha
        self.runs.save_selection(self.repo, self.number, head, self.pr.author, tests, [], "pending")
        cost = sum(t.gpu_minutes for t in tests)
        lines = [f"Waiting for a maintainer: {reason}.", "", f"Estimated cost: about {minutes(cost)}.", ""]
        lines.extend(f"- {code(t.path)} on {code(t.suite)}" for t in tests)
        payload = {
            "name": ROCM_CHECK,
            "head_sha": head,
            "status": "completed",
            "conclusion": "action_required",
            "output": {
                "title": f"Approval needed: {len(tests)} ROCm tests, about {minutes(cost)}",
                "summary": "\n".join(lines),
            },
            "actions": [
                {
                    "label": "Approve ROCm run",
                    "identifier": APPROVE_ACTION,
                    "description": f"Run {len(tests)} tests, about {cost:.0f} GPU-min"[:40],
                }
            ],
        }
        external_id = f"pending-{tests_hash(tests)[:16]}"
        payload["external_id"] = external_id
        check = self.effects.once(
            f"pending-check:{self.repo}#{self.number}:{head}:{tests_hash(tests)}",
            "check_run",
            f"{self.repo}@{head}",
            lambda: {"id": self.gh.create_check_run(self.repo, payload).id},
            lambda: find_check(self.gh, self.repo, head, external_id),
        )
        if check and check.get("id"):
            self.runs.set_selection(self.repo, self.number, head, check_run_id=check["id"])

    def report_refusal(self, refusal: Refusal) -> None:
        """An automatic dispatch that could not happen shows as a failed `rocmbot / rocm` check."""
        head = self.pr.head_sha
        payload = {
            "name": ROCM_CHECK,
            "head_sha": head,
            "status": "completed",
            "conclusion": "failure",
            "output": {
                "title": f"{refusal.rule or 'Not dispatched'}: ROCm runs not dispatched",
                "summary": refusal.reason,
            },
        }
        external_id = f"refusal-{refusal.rule or 'none'}"
        payload["external_id"] = external_id
        self.effects.once(
            f"refusal-check:{self.repo}#{self.number}:{head}:{refusal.rule}",
            "check_run",
            f"{self.repo}@{head}",
            lambda: {"id": self.gh.create_check_run(self.repo, payload).id},
            lambda: find_check(self.gh, self.repo, head, external_id),
        )

    def approve(self, who: Actor, via: str, *, head: str | None = None) -> Outcome:
        """A maintainer releases the pending selection of the current head; ``head`` is the
        head the maintainer saw (the review's commit, the check's head, the head current when
        the comment was written): an approval of another head releases nothing."""
        d = self.config.dispatch
        if not who.maintainer:
            raise Refusal(f"{who.why()}; ROCm runs may be approved by {who_may(d, approve=True)}.")
        if head is not None and head != self.pr.head_sha:
            raise Refusal(moved(head, self.pr.head_sha))
        pending = self.selection()
        if pending is None or pending.state != "pending" or not pending.tests:
            raise Refusal("there is nothing waiting for approval on this head.")
        digest = tests_hash(pending.tests)
        self.runs.approve(self.repo, self.number, self.pr.head_sha, digest, who.login, via)
        result = self.dispatcher.run(
            self.repo, self.number, self.pr.head_sha, pending.tests, who.login, f"approval:{digest}"
        )
        self.runs.set_selection(self.repo, self.number, self.pr.head_sha, state="dispatched")
        if pending.check_run_id is not None:
            self.gh.update_check_run(
                self.repo,
                pending.check_run_id,
                {
                    "status": "completed",
                    "conclusion": "success",
                    "output": {
                        "title": f"Approved by @{who.login}",
                        "summary": f"Approved by @{who.login}; the runs are dispatched.",
                    },
                },
            )
        return Outcome("dispatch", result)


def moved(seen: str, head: str) -> str:
    """The reply to an approval of a head that is no longer the PR's (``seen`` empty: written
    before rocmbot knew any head of the PR)."""
    given = f"is for `{seen[:12]}`, the PR's head when it was given" if seen else (
        "was given before rocmbot saw the PR's head")
    return (
        f"this approval {given}; the head is now `{head[:12]}`, which needs its own approval "
        "(nothing was dispatched)."
    )


def describe(result: Result) -> str:
    parts = []
    for d in result.dispatched:
        parts.append(
            f"{code(d.suite)}: {len(d.tests)} test{'s' if len(d.tests) != 1 else ''}, "
            f"about {minutes(d.gpu_minutes)} (dispatch `{d.dispatch_id}`)"
        )
    for d in result.already:
        parts.append(f"{code(d.suite)}: already running (dispatch `{d.dispatch_id}`)")
    return "; ".join(parts)


__all__ = ["Outcome", "Refusal", "RocmRuns", "describe", "moved"]
