"""A closed PR's ROCm runs are cancelled; "Re-run" on rocmbot's checks analyses or dispatches again."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ghsim.state import PullRequest
from tests.e2e.conftest import TEMPLATE, World, make_world
from tests.e2e.test_dispatch import GOOD, MOE, WORKFLOW, _opened, _runs


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE})


def _close(world: World, pr: PullRequest, *, merged: bool = False) -> None:
    world.sim.state.set_pull_state(pr, state="closed", merged=merged)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "closed"))
    world.settle()


@pytest.mark.parametrize("merged", [False, True])
def test_closing_or_merging_a_pr_cancels_its_rocm_runs(world: World, merged: bool) -> None:
    pr = _opened(world, {MOE: GOOD})
    (run,) = _runs(world)
    _close(world, pr, merged=merged)
    assert run.status == "completed" and run.conclusion == "cancelled"
    (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert check.conclusion == "cancelled"


def _bury(world: World, run: Any, newer: int = 120) -> None:
    """``newer`` runs of the workflow made after ``run``: it is no longer on the first page of
    the run list (100 runs, newest first)."""
    state = world.sim.state
    with state.lock:
        for n in range(newer):
            other = replace(run, id=state.next_id() + 500_000_000, status="completed", conclusion="success",
                            inputs={**run.inputs, "dispatch_id": f"{n:016x}"})
            state.runs[other.id] = other


@pytest.mark.parametrize(("news", "buried"), [("never", False), ("after", False), ("never", True)])
def test_a_run_that_completed_before_the_cancel_shows_how_it_ended(
        world: World, news: str, buried: bool) -> None:
    """Closing cancels the PR's runs; a run that had just succeeded answers the cancel with 409.
    Its check shows the run's real conclusion (read from GitHub by its id, however many runs
    came after it), not "cancelled", whether its own news comes after or not at all. Found by
    bench/chaos.py."""
    pr = _opened(world, {MOE: GOOD})
    (run,) = _runs(world)
    world.sim.state.set_run_status(run, "completed", "success")
    if buried:
        _bury(world, run)
    _close(world, pr)
    assert run.conclusion == "success"
    if news == "after":
        world.deliver("workflow_run", world.sim.payloads.workflow_run(run, "completed"))
        world.settle()
    (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert (check.status, check.conclusion) == ("completed", "success")


def test_a_repository_may_keep_a_closed_prs_runs(tmp_path: Path) -> None:
    policy = "dispatch:\n  cancel_on_close: false\n"
    for world in make_world(tmp_path, {WORKFLOW: TEMPLATE, ".github/rocmbot.yml": policy}):
        pr = _opened(world, {MOE: GOOD})
        _close(world, pr)
        (run,) = _runs(world)
        assert run.status != "completed"


def _rerun(world: World, check: Any, *, sender: str, suite: bool = False) -> None:
    payload = world.sim.payloads.check_run(check, "rerequested", sender=sender)
    if suite:  # "Re-run all checks": the suite, not a run, is re-requested
        payload = {**{k: v for k, v in payload.items() if k != "check_run"},
                   "check_suite": payload["check_run"]["check_suite"]}
    world.deliver("check_suite" if suite else "check_run", payload)
    world.settle()


@pytest.mark.parametrize("suite", [False, True])
def test_re_running_the_analysis_check_analyses_the_head_again(world: World, suite: bool) -> None:
    """A fork's PR, whose check GitHub names no PR for: found from the bot's own records."""
    pr = _opened(world, {MOE: GOOD}, author="stranger", fork=True)
    (check,) = world.checks(pr.head_sha)
    before = len(world.sim.state.find_calls("GET", f"/repos/{world.repo.full_name}/pulls/{pr.number}/files"))
    _rerun(world, check, sender="dev", suite=suite)
    after = world.sim.state.find_calls("GET", f"/repos/{world.repo.full_name}/pulls/{pr.number}/files")
    assert len(after) > before  # read again
    assert [c.id for c in world.checks(pr.head_sha)] == [check.id]  # the same check, written again
    assert world.sim.state.find_calls("PATCH", f"/repos/*/check-runs/{check.id}")


def test_re_running_a_rocm_check_dispatches_its_tests_again(world: World) -> None:
    pr = _opened(world, {MOE: GOOD})
    (run,) = _runs(world)
    world.sim.advance_run(run, "completed", "failure", notify=True)
    world.settle()
    (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
    _rerun(world, check, sender="stranger")  # may not run anything
    assert len(_runs(world)) == 1
    _rerun(world, check, sender="dev")
    first, second = _runs(world)
    assert second.inputs["tests"] == first.inputs["tests"] == MOE
    assert second.inputs["dispatch_id"] != first.inputs["dispatch_id"]
    assert len(world.checks(pr.head_sha, "rocmbot / rocm")) == 2
