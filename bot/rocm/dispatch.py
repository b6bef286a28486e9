"""Dispatching ROCm runs: check the workflow's contract, dispatch once per key, track the run."""

from __future__ import annotations

import hashlib
import logging
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import yaml

from bot.formats.escape import code
from bot.formats.markdown import grid
from bot.github.effects import Effects
from bot.github.port import GitHubPort
from bot.store.dispatch import UNACCEPTED, Dispatch, DispatchStore, JobOutcome, SelectedTest
from config.repo import RepoConfig

log = logging.getLogger(__name__)

ROCM_CHECK = "rocmbot / rocm"
REQUIRED_INPUTS = ("tests", "suite", "pr_number", "head_sha", "dispatch_id")
APPROVE_ACTION = "approve-rocm"


class Refusal(Exception):  # noqa: N818 - a refusal is an answer, not an error
    """Nothing was dispatched; ``reason`` is the one-paragraph reply."""

    def __init__(self, reason: str, *, rule: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.rule = rule


def workflow_problem(text: bytes | None, path: str) -> str | None:
    """CFG002: why the dispatch workflow cannot take the bot's dispatch, or None."""
    if text is None:
        return f"the dispatch workflow `{path}` does not exist on the default branch"
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        return f"`{path}` is not valid YAML{where}"
    if not isinstance(data, dict):
        return f"`{path}` is not a workflow"
    triggers = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on:` key as True
    if isinstance(triggers, str):
        triggers = {triggers: None}
    elif isinstance(triggers, list):
        triggers = dict.fromkeys(triggers)
    if not isinstance(triggers, dict) or "workflow_dispatch" not in triggers:
        return f"`{path}` has no `workflow_dispatch` trigger"
    declared = (triggers.get("workflow_dispatch") or {}).get("inputs") or {}
    missing = [name for name in REQUIRED_INPUTS if name not in declared]
    if missing:
        return (
            f"`{path}` does not declare the input{'s' if len(missing) > 1 else ''} "
            + ", ".join(f"`{m}`" for m in missing)
            + " that rocmbot sends"
        )
    return None


def _passable(word: str) -> bool:
    """A test path or suite name that survives the workflow's `tests.split()` as itself."""
    return bool(word) and not word.startswith("-") and not any(c.isspace() for c in word)


def find_check(gh: GitHubPort, repo: str, head: str, external_id: str) -> dict[str, Any] | None:
    """The `rocmbot / rocm` check with this external id on ``head``, if GitHub has it: made by
    an attempt that died (a 5xx after the write, a killed worker) before the ledger recorded it.
    Creating it again would show two checks, two approve buttons (found by bench/chaos.py)."""
    for run in gh.check_runs(repo, head, ROCM_CHECK):
        if run.external_id == external_id:
            return {"id": run.id, "reconciled": True}
    return None


def ensure_check(gh: GitHubPort, effects: Effects, runs: DispatchStore, dispatch_id: str,
                 *, defer_to_live: float = 0.0) -> None:
    """Give an accepted dispatch its `rocmbot / rocm` check, once: whoever learns of the run
    first (the dispatch, its `workflow_run` delivery, the sweeper) makes it. With
    ``defer_to_live``, a check another attempt began making that recently is left to it."""
    record = runs.get(dispatch_id)
    if record is None or record.check_run_id is not None:
        return
    repo, head = record.repository, record.head_sha

    def create() -> dict[str, Any]:
        payload = Dispatcher.check_payload(head, dispatch_id, record.suite, record.tests,
                                           record.gpu_minutes, "queued")
        return {"id": gh.create_check_run(repo, payload).id}

    check = effects.once(
        f"rocm-check:{dispatch_id}", "check_run", f"{repo}@{head}", create,
        lambda: find_check(gh, repo, head, dispatch_id), defer_to_live=defer_to_live,
    )
    if isinstance(check, dict) and isinstance(check.get("id"), int):
        runs.update(dispatch_id, check_run_id=check["id"])


_JOB_URL = re.compile(r"https?://[^\s()<>\[\]`]+")


def job_target(name: str, tests: list[str]) -> str | None:
    """The test a job ran: the targeted workflow's matrix names each job after its test
    (`stage-c-4-gpu-mi350 (tests/e2e/test_x.py)`); a job named after no test is not one."""
    wanted = set(tests)
    for word in re.split(r"[\s(),]+", name):
        if word in wanted:
            return word
    return None


def outcome_lines(paths: list[str], outcomes: dict[str, JobOutcome]) -> list[str]:
    """A table of each test's result, with a link to its job."""
    rows = []
    for path in paths:
        found = outcomes.get(path)
        if found is None:
            rows.append([code(path), "waiting", ""])
            continue
        result = _word(found)
        if found.job_url and _JOB_URL.fullmatch(found.job_url):
            result = f"[{result}]({found.job_url})"
        took = f"{found.seconds / 60:.0f} min" if found.seconds is not None else ""
        rows.append([code(path), result, took])
    return grid(["Test", "Result", "Time"], rows)


_CONCLUSIONS = (
    "success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required", "stale",
)


def _word(found: JobOutcome) -> str:
    """A job's state in a word or two; one GitHub does not document reads as `other`."""
    if found.status != "completed":
        return "in progress" if found.status == "in_progress" else "queued"
    return (found.conclusion if found.conclusion in _CONCLUSIONS else "other").replace("_", " ")


def tally(paths: list[str], outcomes: dict[str, JobOutcome]) -> str:
    """`3 passed, 1 failed` over the tests that finished."""
    counts: dict[str, int] = defaultdict(int)
    for path in paths:
        found = outcomes.get(path)
        if found is not None and found.status == "completed":
            word = _word(found)
            counts[{"success": "passed", "failure": "failed"}.get(word, word)] += 1
    return ", ".join(f"{n} {word}" for word, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def dispatch_key(repo: str, pr: int, head: str, suite: str, tests: list[str], origin: str) -> str:
    raw = "\n".join([repo, str(pr), head, suite, *sorted(tests), origin])
    return hashlib.sha256(raw.encode()).hexdigest()


def minutes(value: float) -> str:
    return f"{value:.0f} GPU-minutes"


@dataclass
class Result:
    dispatched: list[Dispatch] = field(default_factory=list)
    already: list[Dispatch] = field(default_factory=list)


class Dispatcher:
    """Dispatches for one repository, through the port, the ledger and the dispatch store."""

    def __init__(
        self,
        gh: GitHubPort,
        effects: Effects,
        runs: DispatchStore,
        config: RepoConfig,
        default_branch: str | None = None,
    ) -> None:
        self.gh = gh
        self.effects = effects
        self.runs = runs
        self.config = config
        self.default_branch = default_branch  # as the delivery names it: one request fewer

    def run(
        self, repo: str, pr: int, head: str, tests: list[SelectedTest], requested_by: str, origin: str
    ) -> Result:
        """Dispatch ``tests`` (grouped by suite) for ``head``; ``origin`` makes the key (a
        command's comment id, an approval, or automatic)."""
        if not tests:
            raise Refusal("there is nothing to run: no enabled ROCm test is selected for this head.")
        unsafe = sorted({t.path for t in tests if not _passable(t.path)} | {
            t.suite for t in tests if not _passable(t.suite)})
        if unsafe:
            raise Refusal(
                f"{', '.join(code(u) for u in unsafe)}: the workflow's `tests` and `suite` inputs are "
                "space-separated words, so a test path or suite name with white space (or one that "
                "starts with `-`, which the runner would read as an option) would reach it as "
                "something else. Rename it; nothing was dispatched."
            )
        current = self.gh.pull_request(repo, pr)
        if current.head_sha != head:
            raise Refusal(
                f"the PR's head moved to `{current.head_sha[:12]}` while this was being handled; "
                "nothing was dispatched. Comment again to run the new head."
            )
        workflow = self.config.dispatch.workflow
        problem = workflow_problem(self.gh.workflow_file(repo, workflow), workflow)
        if problem is not None:
            raise Refusal(
                f"CFG002: {problem}, so GitHub would refuse the dispatch. Nothing was dispatched.",
                rule="CFG002",
            )
        ref = self.config.dispatch.ref or self.default_branch or self.gh.default_branch(repo)
        by_suite: dict[str, list[SelectedTest]] = defaultdict(list)
        for t in tests:
            by_suite[t.suite].append(t)
        result = Result()
        rows = self.runs.for_pr(repo, pr, head)
        for suite, group in sorted(by_suite.items()):
            paths = sorted({t.path for t in group})
            same = [d for d in rows if d.suite == suite and sorted(d.tests) == paths]
            active = [d for d in same if d.active]
            if active:
                result.already.append(active[0])
                continue
            # A dispatch of the same tests whose outcome is not known (GitHub answered 5xx, the
            # worker died) is completed under its own id, not sent again under a new one.
            unsure = [d for d in same if d.status in UNACCEPTED]
            if unsure:
                record = unsure[0]
            else:
                key = dispatch_key(repo, pr, head, suite, paths, origin)
                gpu = sum(t.gpu_minutes for t in group)
                added = self.runs.add(key[:16], repo, pr, head, suite, paths, gpu, requested_by)
                found = self.runs.get(key[:16])
                assert found is not None
                if not added and found.status not in UNACCEPTED:  # this very request, handled before
                    result.already.append(found)
                    continue
                record = found
            result.dispatched.append(self.send(record, ref))
            log.info(
                "dispatched ROCm run",
                extra={"repository": repo, "pr": pr, "dispatch_id": record.dispatch_id,
                       "suite": suite, "tests": len(paths)},
            )
        return result

    def find_run(self, record: Dispatch) -> int | None:
        """The run GitHub made for this dispatch, found by the dispatch id in its name."""
        for run in self.gh.workflow_runs(record.repository, self.config.dispatch.workflow):
            if record.dispatch_id in run.display_title or record.dispatch_id in run.name:
                return run.id
        return None

    def send(self, record: Dispatch, ref: str) -> Dispatch:
        """Make GitHub accept ``record`` (or find the run an earlier attempt made): only then is
        it in flight. Then give it its `rocmbot / rocm` check."""
        repo, dispatch_id = record.repository, record.dispatch_id
        inputs = {
            "tests": " ".join(record.tests),
            "suite": record.suite,
            "pr_number": str(record.pr_number),
            "head_sha": record.head_sha,
            "dispatch_id": dispatch_id,
        }
        workflow = self.config.dispatch.workflow

        def act() -> dict[str, Any]:
            return {"run_id": self.gh.dispatch_workflow(repo, workflow, ref, inputs)}

        def reconcile() -> dict[str, Any] | None:
            run_id = self.find_run(record)
            return None if run_id is None else {"run_id": run_id}

        done = self.effects.once(
            record.effect_key, "dispatch", f"{repo}#{record.pr_number}@{record.head_sha} {record.suite}",
            act, reconcile,
        )
        if isinstance(done, dict) and done.get("dry_run"):
            self.runs.update(dispatch_id, status="dry_run")
        else:
            self.runs.accept(dispatch_id, (done or {}).get("run_id"))
            ensure_check(self.gh, self.effects, self.runs, dispatch_id)
        found = self.runs.get(dispatch_id)
        assert found is not None
        return found

    @staticmethod
    def check_payload(
        head: str,
        dispatch_id: str,
        suite: str,
        paths: list[str],
        gpu: float,
        status: str,
        *,
        conclusion: str | None = None,
        url: str | None = None,
        detail: str = "",
        outcomes: dict[str, JobOutcome] | None = None,
    ) -> dict[str, Any]:
        lines = [f"Suite {code(suite)}, about {minutes(gpu)}; dispatch `{dispatch_id}`.", ""]
        if outcomes:
            lines.extend(outcome_lines(paths, outcomes))
        else:
            lines.extend(f"- {code(p)}" for p in paths)
        if detail:
            lines.extend(["", detail])
        tests = f"{len(paths)} ROCm test{'s' if len(paths) != 1 else ''} on {suite}"
        title = f"{tests}: {conclusion or status.replace('_', ' ')}"
        counted = tally(paths, outcomes or {})
        if counted:
            title += f" ({counted})"
        payload: dict[str, Any] = {
            "name": ROCM_CHECK,
            "head_sha": head,
            "status": status,
            "external_id": dispatch_id,
            "output": {"title": title, "summary": "\n".join(lines)},
        }
        if url:
            payload["details_url"] = url
        if conclusion is not None:
            payload["conclusion"] = conclusion
        return payload

    def cancel(self, repo: str, pr: int, *, except_head: str | None = None) -> list[Dispatch]:
        """Cancel this PR's in-flight runs (all, or those of other heads). A dispatch whose
        outcome is unknown is looked for first: GitHub may have made its run."""
        cancelled = []
        for d in self.runs.for_pr(repo, pr):
            if d.head_sha == except_head or not (d.active or d.status in UNACCEPTED):
                continue
            run_id = d.run_id
            if run_id is None and d.status != "dry_run":
                run_id = self.find_run(d)
                if run_id is None and d.status in UNACCEPTED:
                    self.runs.update(d.dispatch_id, status="withdrawn")
                    continue
                self.runs.update(d.dispatch_id, run_id=run_id)
                ensure_check(self.gh, self.effects, self.runs, d.dispatch_id)
            if run_id is not None:

                def stop(run_id: int = run_id) -> dict[str, Any]:
                    self.gh.cancel_run(repo, run_id)
                    return {"cancelled": True}

                self.effects.once(f"cancel:{d.dispatch_id}", "cancel", f"{repo} run {run_id}", stop)
            self.runs.update(d.dispatch_id, status="completed", conclusion="cancelled")
            check_run_id = (self.runs.get(d.dispatch_id) or d).check_run_id
            if check_run_id is not None:
                self.gh.update_check_run(
                    repo,
                    check_run_id,
                    {
                        "status": "completed",
                        "conclusion": "cancelled",
                        "output": {"title": "Cancelled", "summary": "Cancelled by rocmbot."},
                    },
                )
            cancelled.append(d)
        return cancelled
