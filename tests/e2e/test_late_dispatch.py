"""One run per dispatch id under GitHub's timing: a dispatch GitHub finishes after the client
gave up, or answers 5xx, and a run listed some seconds after its dispatch was answered. The run
is looked for over the lookup window before anything is sent again; a dispatch GitHub never
answered whose run does not show is recorded `unknown`, and its run's `workflow_run` delivery
settles it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.github import keys
from bot.github.context import context_factory
from bot.rocm.pending import sweep
from bot.store.dispatch import DispatchStore
from ghsim.state import PullRequest
from tests.e2e.conftest import TEMPLATE, World, make_world
from tests.e2e.test_dispatch import GOOD, MOE, WORKFLOW, _runs

DISPATCHES = "/repos/*/actions/workflows/*/dispatches"
# a client that gives up after a second, and a window long enough for a run listed 3 s late
TIMING: dict[str, Any] = {"github_timeout_seconds": 1, "dispatch_lookup_seconds": 30.0,
                          "dispatch_lookup_first_seconds": 0.25}


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE}, **TIMING)


def _opened(world: World) -> PullRequest:
    pr = world.open_pr({MOE: GOOD})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle(timeout=120)
    return pr


def _until(what: str, condition: Callable[[], object], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def _sent(world: World) -> int:
    return len(world.sim.state.find_calls("POST", DISPATCHES))


def _dispatch_effect(world: World, dispatch_id: str) -> Any:
    (effect,) = world.store.effects_for([keys.dispatch(dispatch_id)])
    return effect


def _accepted_once(world: World, pr: PullRequest) -> None:
    """One run, one dispatch sent, the row accepted with that run, and its check."""
    (run,) = _runs(world)
    assert _sent(world) == 1
    (row,) = DispatchStore(world.store).for_pr(world.repo.full_name, pr.number)
    assert (row.dispatch_id, row.status, row.run_id) == (run.inputs["dispatch_id"], "queued", run.id)
    assert _dispatch_effect(world, row.dispatch_id).status == "done"
    (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert check.external_id == row.dispatch_id


def test_a_dispatch_github_finished_after_the_client_gave_up_makes_one_run(world: World) -> None:
    """GitHub made the run and answered after the client's timeout, and listed the run 3 s
    later: the retry, one second on, found nothing and dispatched a second run."""
    world.sim.state.run_listing_delay = 3.0
    world.sim.faults.answer_late(3, times=1, method="POST", path=DISPATCHES)
    pr = _opened(world)
    assert world.sim.faults.count("answer_late") == 1
    _accepted_once(world, pr)


def test_a_dispatch_answered_502_whose_run_is_listed_late_makes_one_run(world: World) -> None:
    """GitHub made the run, answered 502 and listed the run 3 s later: the retry, at once (the
    502 was an answer), found nothing and dispatched a second run."""
    world.sim.state.run_listing_delay = 3.0
    world.sim.faults.fail_after(502, times=1, method="POST", path=DISPATCHES)
    pr = _opened(world)
    assert world.sim.faults.count("status_after") == 1
    _accepted_once(world, pr)


def test_a_dispatch_never_answered_and_not_listed_in_the_window_is_unknown_until_its_run_shows(
    tmp_path: Path,
) -> None:
    """The connection closed after GitHub made the run, which it lists only after the window:
    the dispatch is recorded `unknown`, is not sent again (by the delivery or the sweep), and
    the run's `workflow_run` delivery settles it."""
    timing = {**TIMING, "dispatch_lookup_seconds": 2.0}
    for world in make_world(tmp_path, {WORKFLOW: TEMPLATE}, **timing):
        world.sim.state.run_listing_delay = 3600.0
        world.sim.faults.drop_after(times=1, method="POST", path=DISPATCHES)
        pr = _opened(world)
        (run,) = _runs(world)
        dispatch_id = run.inputs["dispatch_id"]
        runs = DispatchStore(world.store)
        (row,) = runs.for_pr(world.repo.full_name, pr.number)
        assert (row.dispatch_id, row.status, row.run_id) == (dispatch_id, "unknown", None)
        effect = _dispatch_effect(world, dispatch_id)
        assert effect.status == "unknown" and effect.result["unknown"] is True
        assert world.store.counts()["dead"] == 0 and world.checks(pr.head_sha, "rocmbot / rocm") == []
        summary = next(c.body for c in world.bot_comments(pr) if c.body.startswith("<!-- rocmbot:summary"))
        assert "unknown" in summary
        swept = sweep(world.store, context_factory(world.settings, world.store), 0.0)
        assert not swept and _sent(world) == 1  # the sweep leaves it alone
        world.deliver("pull_request", world.sim.payloads.pull_request(pr, "reopened"))
        world.settle(timeout=120)
        assert _sent(world) == 1 and len(_runs(world)) == 1  # nor does the same request again
        world.sim.advance_run(run, "in_progress", notify=True)
        world.settle(timeout=120)
        (row,) = runs.for_pr(world.repo.full_name, pr.number)
        assert (row.status, row.run_id) == ("in_progress", run.id)
        effect = _dispatch_effect(world, dispatch_id)
        assert (effect.status, effect.result["run_id"]) == ("done", run.id)
        (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
        assert check.external_id == dispatch_id and check.status == "in_progress"
        assert _sent(world) == 1 and len(_runs(world)) == 1


@pytest.fixture
def sweeping(tmp_path: Path) -> Iterator[World]:
    """Deliveries given up after one attempt; the sweep completes what they left pending."""
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE}, max_attempts=1, pending_effect_seconds=0.5,
                          **TIMING)


def test_the_sweep_waits_for_a_run_listed_late_instead_of_dispatching_again(sweeping: World) -> None:
    """The delivery gave up after the connection closed on a dispatch GitHub made and listed
    3 s later: the sweep, finding no run, sent it again."""
    world = sweeping
    world.sim.state.run_listing_delay = 3.0
    world.sim.faults.drop_after(times=1, method="POST", path=DISPATCHES)
    pr = _opened(world)
    assert world.store.counts()["dead"] == 1
    _until("the dispatch's check", lambda: world.checks(pr.head_sha, "rocmbot / rocm"))
    world.settle(timeout=120)
    _accepted_once(world, pr)
