"""The re-enable sweep end to end: a repository that opted in to a weekly sweep, two worker
replicas on one database with a clock the test moves, its parked tests tried within the budget,
and one "Parked ROCm tests" issue kept up to date as the runs end."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from bot.cli.example import BASE_FILES, TEST_TEMPLATE
from bot.cli.wiring import service_app
from bot.formats.parked_issue import MARKER
from bot.store.reenable import SweepRow, SweepStore
from tests.e2e.conftest import TEMPLATE, World, make_world
from tests.service.server import serving

pytestmark = pytest.mark.slow

MOE = "tests/e2e/megatron/test_qwen35_moe.py"  # parked in the example, its launch valid: 106.7 GPU-minutes
LONG = "tests/e2e/megatron/test_qwen35_moe_long.py"  # the same case run longer: 240 GPU-minutes
SUITE = "stage-c-4-gpu-mi350"
DISABLED = ', disabled="FIXME: re-enable once this case passes on the MI350 runners."'
CONFIG = "reenable:\n  sweep: weekly\n  budget_gpu_minutes: 150\n"  # one of the two fits
WORKFLOW = ".github/workflows/rocm-targeted.yml"
MONDAY = datetime(2026, 5, 4, 9, 0, tzinfo=UTC).timestamp()  # ISO week 19
DAY = 86400.0

T = TypeVar("T")


class Clock:
    """The time the replicas' sweep schedule follows: it runs as time does, from where the test
    sets it (so a wait a failure asks for passes)."""

    def __init__(self, at: float) -> None:
        self.set(at)

    def set(self, at: float) -> None:
        self.at, self.since = at, time.monotonic()

    def __call__(self) -> float:
        return self.at + time.monotonic() - self.since


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    files = {WORKFLOW: TEMPLATE, ".github/rocmbot.yml": CONFIG,
             LONG: TEST_TEMPLATE.format(disabled=DISABLED, ep=2).replace("1600", "3600")}
    # the service that takes the webhooks sweeps nothing: the two replicas below do, on the test's clock
    yield from make_world(tmp_path, files, reenable_seconds=0)


def _until(found: Callable[[], T | None], what: str, timeout: float = 60) -> T:
    """Wait for ``found`` to give something (never a fixed time)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _passes(url: str) -> float:
    """How many passes over the repositories a replica's worker has made (its /metrics)."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    found = re.search(r"^rocmbot_reenable_passes_total (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def _looked_again(urls: list[str]) -> None:
    """Wait until every replica has made two more passes: each looked at the repository again."""
    for url, before in [(url, _passes(url)) for url in urls]:
        _until(lambda: _passes(url) >= before + 2, f"two more passes of {url}")  # noqa: B023


def _replicas(world: World, clock: Clock, stack: ExitStack, count: int = 2) -> list[str]:
    settings = world.settings.model_copy(update={"reenable_seconds": 0.05})
    return [stack.enter_context(serving(service_app(settings, run_worker=True, clock=clock)))
            for _ in range(count)]


def _dispatches(world: World) -> list[Any]:
    return world.sim.state.find_calls("POST", "/repos/*/actions/workflows/*/dispatches")


def _issues(world: World) -> list[Any]:
    return [i for i in world.sim.state.issues_of(world.repo) if MARKER in (i.body or "")]


def _row(body: str, path: str) -> str:
    (line,) = [line for line in body.splitlines() if line.startswith(f"| `{path}` |")]
    return line


def _pass(world: World, run: Any, path: str) -> None:
    world.sim.advance_job(run, f"{SUITE} ({path})", "completed", "success", notify=True)
    world.sim.advance_run(run, "completed", "success", notify=True)
    world.settle()


def test_a_weekly_sweep_runs_what_fits_once_across_replicas_and_keeps_one_issue(world: World) -> None:
    state = world.sim.state
    pr = world.open_pr({"README.md": "# miles, and its ROCm CI\n"})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()  # the service now knows the repository and the installation that serves it
    assert _dispatches(world) == []
    head = world.repo.branches[world.repo.default_branch]
    sweeps = SweepStore(world.store)
    clock = Clock(MONDAY)
    with ExitStack() as replicas:
        urls = _replicas(world, clock, replicas)
        (first,) = _until(lambda: list(state.runs.values()), "the first sweep's run")
        _until(lambda: (r := sweeps.row(world.repo.full_name)) and r.period == "2026-W19", "week 19 swept")
        (issue,) = _until(lambda: _issues(world), "the issue")
        _looked_again(urls)  # both replicas looked again: nothing more was sent or made
        assert len(_dispatches(world)) == 1 and len(state.find_calls("POST", "/repos/*/issues")) == 1
        assert first.inputs["tests"] == MOE and first.inputs["suite"] == SUITE
        assert first.inputs["head_sha"] == head and first.inputs["pr_number"] == ""
        assert str(first.inputs["include_disabled"]).lower() == "true"
        assert issue.title == "Parked ROCm tests" and issue.user.login.endswith("[bot]")
        assert "| dispatched" in _row(issue.body, MOE)
        assert "not run: 240 GPU-minutes, over the budget" in _row(issue.body, LONG)

        _pass(world, first, MOE)
        _until(lambda: "| passed ([run](" in _row(issue.body, MOE), "the issue to show the pass")
        assert "Ready to come back" not in issue.body  # one pass is not two

        clock.set(MONDAY + 7 * DAY)  # week 20
        (second,) = _until(lambda: [r for r in state.runs.values() if r.id != first.id], "week 20's run")
        assert second.inputs["tests"] == MOE and len(_dispatches(world)) == 2
        _until(lambda: (r := sweeps.row(world.repo.full_name)) and r.period == "2026-W20", "week 20 swept")
        _pass(world, second, MOE)
        _until(lambda: "Ready to come back" in issue.body, "the patch")
        ready = issue.body.split("### Ready to come back", 1)[1]
        assert f"`{MOE}` passed on `{SUITE}` in the last two sweeps" in ready
        assert f'-register_rocm_ci(1600, "{SUITE}"{DISABLED})\n' in ready and DISABLED in BASE_FILES[MOE]
        assert f'+register_rocm_ci(1600, "{SUITE}")\n' in ready and LONG not in ready
    swept = sweeps.row(world.repo.full_name)
    assert swept is not None and swept.swept_at is not None

    clock.set(MONDAY + 10 * DAY)  # Thursday of week 20, after a restart of both replicas
    with ExitStack() as replicas:
        urls = _replicas(world, clock, replicas)
        _looked_again(urls)
    assert len(_dispatches(world)) == 2 and len(state.runs) == 2
    assert len(_issues(world)) == 1 and len(state.find_calls("POST", "/repos/*/issues")) == 1
    again = sweeps.row(world.repo.full_name)
    assert again is not None and (again.period, again.swept_at) == ("2026-W20", swept.swept_at)
    assert world.sim.state.validation_failures == []


def _failed(sweeps: SweepStore, repo: str) -> SweepRow | None:
    row = sweeps.row(repo)
    return row if row is not None and row.last_error else None


def test_a_sweep_github_failed_is_tried_again_later_and_runs_once(world: World) -> None:
    state = world.sim.state
    pr = world.open_pr({"README.md": "# miles\n"})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    sweeps = SweepStore(world.store)
    clock = Clock(MONDAY)
    world.sim.faults.fail(502, times=None, method="POST", path="/repos/*/actions/workflows/*/dispatches")
    with ExitStack() as replicas:
        urls = _replicas(world, clock, replicas)
        failed = _until(lambda: _failed(sweeps, world.repo.full_name), "a failure")
        assert failed.period is None and MONDAY + 900 <= failed.retry_at < MONDAY + 960  # tried again later
        world.sim.faults.clear()
        _looked_again(urls)  # the failure asked to wait: nobody tried meanwhile
        sent = len(_dispatches(world))
        assert sent == 1 and "502" in (failed.last_error or "")
        clock.set(MONDAY + 901)
        (run,) = _until(lambda: list(state.runs.values()), "the run, once GitHub takes the dispatch")
        _until(lambda: (r := sweeps.row(world.repo.full_name)) and r.period == "2026-W19", "week 19 swept")
        _looked_again(urls)
    assert run.inputs["tests"] == MOE and len(_dispatches(world)) == sent + 1
    (issue,) = _issues(world)
    assert "| dispatched" in _row(issue.body, MOE)
    swept = sweeps.row(world.repo.full_name)
    assert swept is not None and swept.last_error is None
