"""Dispatching ROCm runs: check the workflow's contract, dispatch once per key, find the run."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from bot.github import keys
from bot.github.effects import Effects
from bot.github.port import Workflows
from bot.rocm import decide
from bot.rocm.payloads import CANCELLED_CHECK, Result, queued_check, run_check_update
from bot.store.dispatch import UNACCEPTED, UNKNOWN, Dispatch, DispatchStore, SelectedTest
from config.repo import RepoConfig

log = logging.getLogger(__name__)


def ensure_check(effects: Effects, runs: DispatchStore, dispatch_id: str, *, defer_to_live: float = 0.0
                 ) -> None:
    """Give an accepted dispatch its `rocmbot / rocm` check, once: whoever learns of the run
    first (the dispatch, its `workflow_run` delivery, the sweeper) makes it. With
    ``defer_to_live``, a check another attempt began making that recently is left to it."""
    record = runs.get(dispatch_id)
    if record is None or record.check_run_id is not None:
        return
    check_id = effects.make_check(keys.rocm_check(dispatch_id), record.repository, queued_check(record),
                                  defer_to_live=defer_to_live)
    if check_id is None:
        return
    runs.update(dispatch_id, check_run_id=check_id)
    now = runs.get(dispatch_id)
    if now is not None and (now.status, now.conclusion, now.run_attempt) != (
            record.status, record.conclusion, record.run_attempt):
        # The run's news came (on another worker: `workflow_run` deliveries name no PR) while
        # the check was being made; it found no check to show itself on, so it is shown here,
        # under the key that news uses. News stored after the id was stored updates it itself.
        effects.update_check(keys.run_news(dispatch_id, now.status, now.conclusion, now.run_attempt),
                             now.repository, check_id, run_check_update(now, runs.outcomes(dispatch_id)))


def _target(record: Dispatch) -> str:
    pr = "" if record.pr_number is None else f"#{record.pr_number}"
    return f"{record.repository}{pr}@{record.head_sha} {record.suite}"


def settle_run(effects: Effects, record: Dispatch, run_id: int) -> None:
    """A run named after a dispatch the ledger has not settled (in doubt, or `unknown`): GitHub
    made it, so the dispatch is done, with that run."""
    if effects.settle(keys.dispatch(record.dispatch_id), {"run_id": run_id, "found": "workflow_run"},
                      unsure_only=True):
        log.info("dispatch settled by its run's news", extra={
            "repository": record.repository, "dispatch_id": record.dispatch_id, "run_id": run_id,
            "was": record.status})


class Dispatcher:
    """Dispatches for one repository: GitHub read through ``gh``, written through the ledger."""

    def __init__(
        self,
        gh: Workflows,
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

    def ref(self, repo: str) -> str:
        """The ref the workflow runs on."""
        return self.config.dispatch.ref or self.default_branch or self.gh.default_branch(repo)

    def run(
        self, repo: str, pr: int | None, head: str, tests: Sequence[SelectedTest], requested_by: str,
        origin: str
    ) -> Result:
        """Dispatch ``tests`` (grouped by suite) for ``head`` of PR ``pr``; ``origin`` makes the
        id (a command's comment, an approval, automatic, a re-enable sweep). With ``pr`` None the
        head is a commit of the default branch (the re-enable sweep), which no push replaces:
        it is run as it is."""
        refused = decide.unsendable(tests)
        if refused is not None:
            raise refused
        if pr is not None:
            current = self.gh.pull_request(repo, pr)
            if current.head_sha != head:
                raise decide.head_moved(current.head_sha)
        workflow = self.config.dispatch.workflow
        problem = decide.workflow_problem(self.gh.workflow_file(repo, workflow), workflow,
                                          disabled=any(t.parked for t in tests))
        if problem is not None:
            raise decide.workflow_refusal(problem)
        ref = self.ref(repo)
        result = Result()
        for step in decide.plan(repo, pr, head, tests, origin, self.runs.for_pr(repo, pr, head)):
            if isinstance(step, Dispatch):
                result.already.append(step)
                continue
            record = step.unsure
            if record is None:
                added = self.runs.add(step.dispatch_id, repo, pr, head, step.suite, step.paths,
                                      step.gpu_minutes, requested_by, step.include_disabled)
                record = self.runs.get(step.dispatch_id)
                assert record is not None
                if not added and record.status not in UNACCEPTED:  # this very request, handled before
                    result.already.append(record)
                    continue
            result.dispatched.append(self.send(record, ref))
            log.info(
                "dispatched ROCm run",
                extra={"repository": repo, "pr": pr, "dispatch_id": record.dispatch_id,
                       "suite": step.suite, "tests": len(step.paths)},
            )
        return result

    def find_run(self, record: Dispatch) -> int | None:
        """The run GitHub made for this dispatch, found by the dispatch id its name carries."""
        for run in self.gh.workflow_runs(record.repository, self.config.dispatch.workflow):
            if decide.run_dispatch_id(run.display_title, run.name) == record.dispatch_id:
                return run.id
        return None

    def send(self, record: Dispatch, ref: str) -> Dispatch:
        """Make GitHub accept ``record`` (or find the run an earlier attempt made): only then is
        it in flight. Then give it its `rocmbot / rocm` check."""
        dispatch_id = record.dispatch_id
        inputs = {
            "tests": " ".join(record.tests),
            "suite": record.suite,
            "pr_number": "" if record.pr_number is None else str(record.pr_number),
            "head_sha": record.head_sha,
            "dispatch_id": dispatch_id,
        }
        if record.include_disabled:  # parked tests: the workflow runs them although disabled
            inputs[decide.DISABLED_INPUT] = "true"

        def reconcile() -> dict[str, Any] | None:
            run_id = self.find_run(record)
            return None if run_id is None else {"run_id": run_id}

        done = self.effects.dispatch(
            dispatch_id, _target(record), record.repository, self.config.dispatch.workflow, ref, inputs,
            reconcile,
        )
        if isinstance(done, dict) and done.get("dry_run"):
            self.runs.update(dispatch_id, status="dry_run")
        elif isinstance(done, dict) and done.get("unknown"):
            self._unknown(record)
        else:
            self.runs.accept(dispatch_id, (done or {}).get("run_id"))
            ensure_check(self.effects, self.runs, dispatch_id)
        found = self.runs.get(dispatch_id)
        assert found is not None
        return found

    def _unknown(self, record: Dispatch) -> None:
        if self.runs.doubt(record.dispatch_id):
            log.warning("dispatch never answered and its run not found: outcome unknown", extra={
                "repository": record.repository, "pr": record.pr_number, "dispatch_id": record.dispatch_id,
                "suite": record.suite})

    def complete(self, record: Dispatch, head_open: Callable[[], bool]) -> str:
        """Complete a dispatch GitHub has not accepted (`dispatching`) that an attempt left:
        `found` its run, `dispatched` it again while its head is the open PR's (``head_open``),
        or `withdrawn` it; `unknown` when GitHub never answered it and its run did not show.
        While its run may still show, RetryLaterError: nothing is sent or given up yet."""
        run_id = self.find_run(record)
        if run_id is not None:
            self.runs.accept(record.dispatch_id, run_id)
            self.effects.settle(keys.dispatch(record.dispatch_id), {"run_id": run_id})
            return "found"
        if head_open():
            sent = self.send(record, self.ref(record.repository))
            return UNKNOWN if sent.status == UNKNOWN else "dispatched"
        done = self.effects.give_up(keys.dispatch(record.dispatch_id), "dispatch", _target(record),
                                    {"withdrawn": True})
        if isinstance(done, dict) and done.get("unknown"):
            self._unknown(record)
            return UNKNOWN
        if isinstance(done, dict) and not done.get("withdrawn"):  # its run's news came meanwhile
            self.runs.accept(record.dispatch_id, done.get("run_id"))
            return "found"
        if not self.runs.withdraw(record.dispatch_id):  # its run's news came just now
            return "found"
        return "withdrawn"

    def cancel(self, repo: str, pr: int, *, except_head: str | None = None) -> list[Dispatch]:
        """Cancel this PR's in-flight runs (all, or those of other heads). A dispatch whose
        outcome is unknown is looked for first: GitHub may have made its run."""
        cancelled = []
        for d in self.runs.for_pr(repo, pr):
            if d.head_sha == except_head or not (d.active or d.status in (*UNACCEPTED, UNKNOWN)):
                continue
            run_id = d.run_id
            if run_id is None and d.status != "dry_run":
                run_id = self.find_run(d)
                if run_id is None and d.status in UNACCEPTED:
                    if self.runs.withdraw(d.dispatch_id):
                        continue
                    run_id = (self.runs.get(d.dispatch_id) or d).run_id  # its run's news came just now
                if run_id is None:  # unknown: left for its run's news, which may still come
                    continue
                self.runs.update(d.dispatch_id, run_id=run_id)
                ensure_check(self.effects, self.runs, d.dispatch_id)
            if run_id is not None and not self.effects.cancel_run(d.dispatch_id, repo, run_id):
                self._ended_first(d, run_id)
                continue
            # the check first: a retry after a failed write finds the row still in flight and
            # writes it again, where a row already marked cancelled would be passed over
            check_run_id = (self.runs.get(d.dispatch_id) or d).check_run_id
            if check_run_id is not None:
                self.effects.update_check(keys.cancelled_check(d.dispatch_id), repo, check_run_id,
                                          CANCELLED_CHECK)
            self.runs.update(d.dispatch_id, status="completed", conclusion="cancelled")
            cancelled.append(d)
        return cancelled

    def _ended_first(self, record: Dispatch, run_id: int) -> None:
        """A run GitHub would not cancel, having completed: its check shows how it ended, read
        from GitHub by its id, under the ledger key its `completed` news uses (so that news,
        delivered before or after, writes nothing more); a run GitHub does not know: the news
        will tell."""
        log.info("run completed before it could be cancelled",
                 extra={"repository": record.repository, "dispatch_id": record.dispatch_id, "run_id": run_id})
        run = self.gh.workflow_run(record.repository, run_id)
        if run is None or run.status != "completed":
            return
        current = self.runs.get(record.dispatch_id)
        if current is not None and current.check_run_id is not None:  # first, as in cancel()
            ended = replace(current, status="completed", conclusion=run.conclusion)
            key = keys.run_news(record.dispatch_id, "completed", run.conclusion, current.run_attempt)
            self.effects.update_check(key,
                                      record.repository, current.check_run_id,
                                      run_check_update(ended, self.runs.outcomes(record.dispatch_id)))
        self.runs.update(record.dispatch_id, status="completed", conclusion=run.conclusion)
