"""A dispatched run's news out of order, end to end: the run only moves forward, per attempt, and
its `rocmbot / rocm` check and the summary show what is stored, whatever order GitHub delivers in."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.formats.markdown import RUNS_END, RUNS_START
from bot.github.context import context_factory
from bot.rocm.pending import sweep
from bot.store.dispatch import Dispatch, DispatchStore, RunNews
from ghsim.state import PullRequest
from tests.e2e.conftest import TEMPLATE, World, make_world
from tests.e2e.test_dispatch import BAD, GOOD, MOE, WORKFLOW, _comment, _job, _opened, _reactions, _runs

SUMMARY = "<!-- rocmbot:summary"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE})


def _check(world: World, pr: PullRequest) -> Any:
    (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
    return check


def _dispatch(world: World, pr: PullRequest) -> Dispatch:
    (record,) = DispatchStore(world.store).for_pr(world.repo.full_name, pr.number)
    return record


def _runs_shown(world: World, pr: PullRequest) -> str:
    """The runs section of the sticky summary."""
    (summary,) = [c.body for c in world.bot_comments(pr) if c.body.startswith(SUMMARY)]
    return str(summary[summary.index(RUNS_START):summary.index(RUNS_END)])


def test_an_in_progress_delivered_after_completed_changes_nothing(world: World) -> None:
    pr = _opened(world, {MOE: GOOD})
    (run,) = _runs(world)
    sim = world.sim
    sim.news.hold("in_progress", after_completed=False)  # sent below, once the end is processed
    sim.advance_run(run, "in_progress", notify=True)
    sim.advance_job(run, _job(MOE), "in_progress", notify=True)
    sim.advance_job(run, _job(MOE), "completed", "failure", notify=True)
    sim.advance_run(run, "completed", "failure", notify=True)
    world.settle()
    check = _check(world, pr)
    assert (check.status, check.conclusion) == ("completed", "failure")
    patches = len(sim.state.find_calls("PATCH", f"/repos/*/check-runs/{check.id}"))
    late = sim.release_news(run)
    assert [(d.event, d.action, d.status_code) for d in late] == [
        ("workflow_run", "in_progress", 202), ("workflow_job", "in_progress", 202)]
    world.settle()
    check = _check(world, pr)
    assert (check.status, check.conclusion) == ("completed", "failure")
    assert len(sim.state.find_calls("PATCH", f"/repos/*/check-runs/{check.id}")) == patches  # nothing new
    assert "(1 failed)" in (check.title or "") and f"| `{MOE}` | [failure](" in (check.summary or "")
    record = _dispatch(world, pr)
    assert (record.status, record.conclusion, record.active) == ("completed", "failure", False)
    shown = _runs_shown(world, pr)
    assert "failure" in shown and "progress" not in shown
    # Not "already running": the same tests are dispatched again.
    again = _comment(world, pr, "/run-amd", "dev")
    assert len(_runs(world)) == 2 and "rocket" in _reactions(world, again)


def test_a_re_run_starts_over_and_the_first_attempts_late_news_is_ignored(world: World) -> None:
    pr = _opened(world, {MOE: GOOD})
    (run,) = _runs(world)
    sim = world.sim
    sim.advance_job(run, _job(MOE), "completed", "failure", notify=True)
    sim.advance_run(run, "completed", "failure", notify=True)
    first_end = sim.payloads.workflow_run(run, "completed")
    world.settle()
    assert _check(world, pr).conclusion == "failure"
    sim.rerun(run, notify=True)  # "Re-run all jobs" on GitHub: the same run, attempt 2
    world.settle()
    assert _check(world, pr).status == "queued"
    assert "queued" in _runs_shown(world, pr)
    assert _dispatch(world, pr).active and _dispatch(world, pr).run_attempt == 2
    job = sim.advance_job(run, _job(MOE), "in_progress", notify=True)
    world.settle()
    assert _check(world, pr).status == "in_progress" and "progress" in _runs_shown(world, pr)
    sim.advance_job(run, _job(MOE), "completed", "success", notify=True)
    sim.advance_run(run, "completed", "success", notify=True)
    world.settle()
    world.deliver("workflow_run", first_end)  # the first attempt's end, delivered again, late
    world.settle()
    check = _check(world, pr)
    assert (check.status, check.conclusion) == ("completed", "success")
    assert f"| `{MOE}` | [success](" in (check.summary or "") and f"/job/{job.id})" in (check.summary or "")
    record = _dispatch(world, pr)
    assert (record.run_attempt, record.status, record.conclusion) == (2, "completed", "success")
    assert not record.active
    shown = _runs_shown(world, pr)
    assert "success" in shown and "failure" not in shown


def test_a_check_write_of_an_earlier_state_that_lands_last_is_made_again(world: World) -> None:
    """Two workers with two deliveries of one run: the `in_progress` one renders the check, and
    before its write reaches GitHub the other stores the run's end and shows it on the check.
    The late write would leave the check in progress: the writer reads the stored state again
    after writing, and shows it."""
    pr = _opened(world, {MOE: GOOD})
    (run,) = _runs(world)
    check, record = _check(world, pr), _dispatch(world, pr)

    def the_other_worker() -> None:
        DispatchStore(world.store).advance(record.dispatch_id, RunNews(1, "completed", "success",
                                                                       int(time.time()) + 60))
        shown = world.sim.state.check_runs[check.id]
        shown.status, shown.conclusion = "completed", "success"

    crossed = world.sim.faults.before(the_other_worker, method="PATCH",
                                      path=f"/repos/*/check-runs/{check.id}")
    world.sim.advance_run(run, "in_progress", notify=True)
    world.settle()
    assert crossed.hits == 1
    patches = world.sim.state.find_calls("PATCH", f"/repos/*/check-runs/{check.id}")
    assert [c.body["status"] for c in patches] == ["in_progress", "completed"]
    check = _check(world, pr)
    assert (check.status, check.conclusion) == ("completed", "success")


def test_a_runs_end_stored_while_its_check_is_being_made_is_shown(world: World) -> None:
    """The dispatch makes its check; before the check exists, another worker (a `workflow_run`
    delivery names no PR, so it is not held back by the PR's lease) stores the run's end and
    finds no check to show it on. The check, made `queued`, then shows the stored end. Found by
    bench/chaos.py on PostgreSQL: a failed run's check stayed queued."""
    state = world.sim.state
    ended: list[str] = []

    def the_other_worker() -> None:  # before the check-run POSTs: the dispatch's is the one after it
        made = [r for r in DispatchStore(world.store).for_pr(world.repo.full_name, 1) if r.run_id]
        if made and not ended:
            ended.append(made[0].dispatch_id)
            DispatchStore(world.store).advance(made[0].dispatch_id, RunNews(1, "completed", "failure",
                                                                            int(time.time())))

    world.sim.faults.before(the_other_worker, times=None, method="POST", path="/repos/*/check-runs")
    pr = _opened(world, {MOE: GOOD})
    assert pr.number == 1 and len(ended) == 1
    (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert (check.status, check.conclusion) == ("completed", "failure")
    assert len([c for c in state.check_runs.values() if c.name == "rocmbot / rocm"]) == 1


def test_a_check_made_late_for_a_cancelled_run_shows_it_cancelled(tmp_path: Path) -> None:
    """GitHub failed every attempt to make a dispatch's check, and the PR was closed (its run
    cancelled) before the workers' sweep made it: the check is made in the run's stored state,
    not queued, which no later news would have changed."""
    for world in make_world(tmp_path, {WORKFLOW: TEMPLATE}, max_attempts=1, pending_effect_seconds=3600):
        pr = _opened(world, {MOE: BAD})  # error findings: nothing dispatched until forced
        failing = world.sim.faults.fail(502, times=None, method="POST", path="/repos/*/check-runs")
        _comment(world, pr, "/run-amd --force", "lead")
        (run,) = _runs(world)
        assert world.checks(pr.head_sha, "rocmbot / rocm") == [] and world.store.counts()["dead"] == 1
        world.sim.faults.clear()
        assert failing.hits > 0
        world.sim.state.set_pull_state(pr, state="closed")
        world.deliver("pull_request", world.sim.payloads.pull_request(pr, "closed"))
        world.settle()
        assert (run.status, run.conclusion) == ("completed", "cancelled")
        record = _dispatch(world, pr)
        assert (record.status, record.conclusion, record.check_run_id) == ("completed", "cancelled", None)
        swept = sweep(world.store, context_factory(world.settings, world.store), 0.0)
        assert swept.checks == [record.dispatch_id]
        check = _check(world, pr)
        assert (check.status, check.conclusion, check.external_id) == ("completed", "cancelled",
                                                                       record.dispatch_id)


def test_a_cancelled_runs_check_written_after_a_failed_attempt(world: World) -> None:
    """GitHub answers 502 to the first writes of the cancelled check of a closed PR's run (the
    delivery fails and is retried): each retry finds the dispatch still in flight and writes the
    check again, where one marked cancelled before its check was written was passed over."""
    pr = _opened(world, {MOE: GOOD})
    (run,) = _runs(world)
    check = _check(world, pr)
    failing = world.sim.faults.fail(502, times=3, method="PATCH", path=f"/repos/*/check-runs/{check.id}")
    world.sim.state.set_pull_state(pr, state="closed")
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "closed"))
    world.settle()
    assert failing.hits == 3
    assert (run.status, run.conclusion) == ("completed", "cancelled")
    check = _check(world, pr)
    assert (check.status, check.conclusion) == ("completed", "cancelled")
    assert (_dispatch(world, pr).status, _dispatch(world, pr).conclusion) == ("completed", "cancelled")


def test_the_check_of_a_run_that_ended_before_its_cancel_is_written_after_a_failed_attempt(
    world: World,
) -> None:
    """The run had completed, unseen, when the PR closed: GitHub refuses the cancel (409) and the
    check shows how the run ended, read from GitHub; the first writes of it fail, and each
    retry finds the dispatch still in flight and writes it again."""
    pr = _opened(world, {MOE: GOOD})
    (run,) = _runs(world)
    check = _check(world, pr)
    world.sim.state.set_run_status(run, "completed", "success")  # its news not delivered
    failing = world.sim.faults.fail(502, times=3, method="PATCH", path=f"/repos/*/check-runs/{check.id}")
    world.sim.state.set_pull_state(pr, state="closed")
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "closed"))
    world.settle()
    assert failing.hits == 3 and world.sim.state.find_calls("POST", "*/cancel")[-1].status == 409
    check = _check(world, pr)
    assert (check.status, check.conclusion) == ("completed", "success")
    assert (_dispatch(world, pr).status, _dispatch(world, pr).conclusion) == ("completed", "success")
