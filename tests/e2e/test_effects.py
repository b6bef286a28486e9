"""Effects are complete, not just unduplicated: a dispatch GitHub refused or answered with a 5xx
is found again or retried, its run gets its `rocmbot / rocm` check, nothing counts as in flight
without a run, and dry-run effects are not mistaken for effects made."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.store.dispatch import DispatchStore
from ghsim.state import PullRequest
from tests.e2e.conftest import TEMPLATE, World, make_world
from tests.e2e.test_dispatch import GOOD, MOE, WORKFLOW, _runs

DISPATCHES = "/repos/*/actions/workflows/*/dispatches"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE})


def _opened(world: World) -> PullRequest:
    pr = world.open_pr({MOE: GOOD})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    return pr


def _given_up(tmp_path: Path, *, after: bool, **overrides: Any) -> Iterator[tuple[World, PullRequest]]:
    """A world with a PR whose dispatch GitHub answered 502 (after making it, or not) until
    its delivery was given up."""
    for given in make_world(tmp_path, {WORKFLOW: TEMPLATE}, max_attempts=1, **overrides):
        fail = given.sim.faults.fail_after if after else given.sim.faults.fail
        fail(502, times=None, method="POST", path=DISPATCHES)
        pr = _opened(given)
        given.sim.faults.clear()
        yield given, pr


def _one_dispatch_with_its_check(world: World, pr: PullRequest) -> None:
    (run,) = _runs(world)
    (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert check.external_id == run.inputs["dispatch_id"]
    (row,) = DispatchStore(world.store).for_pr(world.repo.full_name, pr.number)
    assert (row.dispatch_id, row.status, row.run_id) == (run.inputs["dispatch_id"], "queued", run.id)


def test_a_dispatch_refused_with_a_5xx_is_sent_again(world: World) -> None:
    """The row was written as in flight before the POST; the retry skipped the suite as
    "already running" and nothing was ever dispatched."""
    world.sim.faults.fail(502, times=1, method="POST", path=DISPATCHES)
    pr = _opened(world)
    assert world.sim.faults.count("status") == 1
    _one_dispatch_with_its_check(world, pr)


def test_a_dispatch_github_made_before_a_5xx_is_found_by_its_id(world: World) -> None:
    world.sim.faults.fail_after(502, times=1, method="POST", path=DISPATCHES)
    pr = _opened(world)
    assert world.sim.faults.count("status_after") == 1
    _one_dispatch_with_its_check(world, pr)


def test_a_run_whose_dispatch_died_unseen_gets_its_check_from_its_workflow_run(tmp_path: Path) -> None:
    """GitHub made the run and answered 502, and the delivery was given up: the run's own
    `workflow_run` delivery finds the dispatch by the id in its name and makes its check."""
    for world, pr in _given_up(tmp_path, after=True):
        (run,) = _runs(world)
        assert world.checks(pr.head_sha, "rocmbot / rocm") == []
        (row,) = DispatchStore(world.store).for_pr(world.repo.full_name, pr.number)
        assert not row.active  # not counted as in flight without a known run
        world.sim.advance_run(run, "in_progress", notify=True)
        world.settle()
        (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
        assert check.external_id == run.inputs["dispatch_id"] and check.status == "in_progress"


def test_a_dispatch_in_doubt_is_not_already_running_for_a_command(tmp_path: Path) -> None:
    """A dispatch refused until its delivery was given up does not answer a maintainer's
    `/run-amd` with "already running": the command completes it under its own id (at once:
    no lookup window after a 5xx here, since the command's delivery has one attempt too)."""
    for world, pr in _given_up(tmp_path, after=False, dispatch_lookup_seconds=0):
        assert _runs(world) == []
        comment = world.sim.state.add_comment(world.repo, pr.number, "/run-amd", author="lead")
        world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
        world.settle()
        _one_dispatch_with_its_check(world, pr)
        replies = [c.body for c in world.bot_comments(pr) if "rocmbot:reply" in c.body]
        assert not any("already running" in r for r in replies), replies


def test_what_dry_run_recorded_is_made_when_the_service_runs_live(tmp_path: Path) -> None:
    """Dry-run recorded its effects as done: after the switch to live, the PR it had seen never
    got its check, summary or dispatch."""
    for world in make_world(tmp_path, {WORKFLOW: TEMPLATE}, dry_run=True):
        pr = _opened(world)
        assert world.checks(pr.head_sha) == [] and world.bot_comments(pr) == [] and _runs(world) == []
        assert {e.status for e in world.store.effects()} == {"dry_run"}
        world.restart(dry_run=False)
        world.deliver("pull_request", world.sim.payloads.pull_request(pr, "reopened"))
        world.settle()
        assert len(world.checks(pr.head_sha)) == 1
        assert len([c for c in world.bot_comments(pr) if c.body.startswith("<!-- rocmbot:summary")]) == 1
        _one_dispatch_with_its_check(world, pr)


def _until(what: str, condition: Callable[[], object], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


@pytest.fixture
def sweeping(tmp_path: Path) -> Iterator[World]:
    """Deliveries given up after one attempt; the sweep completes what they left pending."""
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE}, max_attempts=1, pending_effect_seconds=0.5)


@pytest.mark.parametrize("after", [False, True])
def test_the_sweeper_completes_a_dispatch_whose_delivery_gave_up(sweeping: World, after: bool) -> None:
    """Nothing else comes for the PR: the worker's sweep sends the dispatch again (GitHub never
    made it) or finds its run (GitHub made it and answered 502), and gives the run its check."""
    world = sweeping
    fail = world.sim.faults.fail_after if after else world.sim.faults.fail
    fail(502, times=None, method="POST", path=DISPATCHES)
    world.sim.faults.fail(502, times=None, method="POST", path="/repos/*/check-runs")
    pr = _opened(world)
    assert world.store.counts()["dead"] == 1
    world.sim.faults.clear()
    _until("the dispatch's check", lambda: world.checks(pr.head_sha, "rocmbot / rocm"))
    world.settle()
    _one_dispatch_with_its_check(world, pr)
    assert len(world.checks(pr.head_sha)) == 1  # the analysis check: its delivery retried once


def test_the_sweeper_withdraws_a_dispatch_whose_head_moved(sweeping: World) -> None:
    world = sweeping
    world.sim.faults.fail(502, times=None, method="POST", path=DISPATCHES)
    pr = _opened(world)
    world.sim.state.push(pr, {"README.md": "# moved on\n"})  # its delivery not yet come
    world.sim.faults.clear()
    runs = DispatchStore(world.store)
    _until("withdrawn", lambda: [d.status for d in runs.for_pr(world.repo.full_name, pr.number)]
           == ["withdrawn"])
    assert _runs(world) == [] and runs.gpu_minutes(world.repo.full_name) == 0


def test_a_redelivery_does_not_put_a_finished_run_back_in_flight(world: World) -> None:
    """Found while completing dispatches: the same request handled again marked its finished
    dispatch `queued`, in flight for good with no run behind it."""
    pr = world.open_pr({MOE: GOOD})
    payload = world.sim.payloads.pull_request(pr, "opened")
    world.deliver("pull_request", payload)
    world.settle()
    (run,) = _runs(world)
    world.sim.advance_run(run, "completed", "success", notify=True)
    world.settle()
    world.deliver("pull_request", payload)  # GitHub's "redeliver": a new delivery id, same payload
    world.settle()
    (row,) = DispatchStore(world.store).for_pr(world.repo.full_name, pr.number)
    assert (row.status, row.conclusion) == ("completed", "success") and len(_runs(world)) == 1
