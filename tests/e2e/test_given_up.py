"""A delivery that cannot succeed: GitHub's permanent answers end it at once, and a delivery
given up after its retries says so on its PR, until an analysis of that head succeeds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.github.notice import REASON_CHARS, output
from bot.github.publish import CHECK_NAME
from bot.store.store import DeliveryRecord
from ghsim.state import PullRequest
from tests.e2e.conftest import World, make_world


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    """Three attempts, reads retried once by the client: a persistent 5xx is given up quickly."""
    yield from make_world(tmp_path, max_attempts=3, github_retries=1)


def _opened(world: World) -> tuple[PullRequest, str]:
    pr = world.open_pr({"docs/note.md": "a note\n"})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    return pr, world.sim.state.deliveries[-1].guid


def test_a_delivery_for_a_deleted_pr_ends_after_one_attempt(world: World) -> None:
    pr = world.open_pr({"docs/note.md": "a note\n"})
    world.sim.state.delete_repository(world.repo)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    record = world.store.get(world.sim.state.deliveries[-1].guid)
    assert record is not None
    assert (record.status, record.attempts) == ("done", 1), record.last_error
    assert record.last_error is not None and "404" in record.last_error and "(gone)" in record.last_error
    assert f"/repos/{world.repo.full_name}/pulls/{pr.number}" in record.last_error
    assert world.store.effects() == []  # nothing to tell: the PR is gone
    assert world.checks(pr.head_sha, CHECK_NAME) == []


def test_a_delivery_whose_access_was_lost_is_dead_after_one_attempt(world: World) -> None:
    pr = world.open_pr({"docs/note.md": "a note\n"})
    world.sim.faults.fail(403, times=None, path="/repos/*")
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    world.sim.faults.clear()
    record = world.store.get(world.sim.state.deliveries[-1].guid)
    assert record is not None
    assert (record.status, record.attempts) == ("dead", 1), record.last_error
    assert record.last_error is not None and "403" in record.last_error and "access lost" in record.last_error
    assert world.checks(pr.head_sha, CHECK_NAME) == []  # GitHub refuses the App: nothing is posted


def test_a_rate_limit_403_is_still_waited_out(world: World) -> None:
    world.sim.faults.secondary_rate_limit(retry_after=1, times=1, path="/repos/*/pulls/*/files")
    pr, guid = _opened(world)
    record = world.store.get(guid)
    assert record is not None and record.status == "done" and record.last_error is None
    assert world.sim.faults.count("secondary") == 1
    assert len(world.checks(pr.head_sha, CHECK_NAME)) == 1


def test_a_delivery_given_up_says_so_on_its_pr_until_the_analysis_succeeds(world: World) -> None:
    world.sim.faults.fail(502, times=None, method="GET", path="/repos/*/pulls/*/files")
    pr, guid = _opened(world)
    world.sim.faults.clear()
    record = world.store.get(guid)
    assert record is not None
    assert (record.status, record.attempts) == ("dead", 3)  # a 5xx is retried
    (check,) = world.checks(pr.head_sha, CHECK_NAME)
    assert (check.status, check.conclusion) == ("completed", "neutral")
    assert check.title == "rocmbot could not analyse this commit"
    assert guid in check.summary and "502" in check.summary
    assert "\n" not in (check.summary or "")

    assert world.store.retry(guid)  # the operator's `rocmbot deliveries retry`
    world.settle()
    assert world.store.get(guid).status == "done"  # type: ignore[union-attr]
    (after,) = world.checks(pr.head_sha, CHECK_NAME)
    assert after.id == check.id and after.conclusion == "success"
    assert guid not in f"{after.title} {after.summary}"


def test_a_delivery_given_up_after_its_analysis_was_published_leaves_the_check(world: World) -> None:
    """What failed came after the analysis (its sticky comment): the PR shows the analysis."""
    world.sim.faults.fail(502, times=None, method="POST", path="/repos/*/issues/*/comments")
    pr = world.open_pr({"tests/e2e/megatron/test_qwen35_moe.py": "import os\nos.environ['X'] = '1'\n"})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    world.sim.faults.clear()
    assert world.store.counts()["dead"] == 1
    (check,) = world.checks(pr.head_sha, CHECK_NAME)
    assert check.title is not None and "could not analyse" not in check.title


def test_the_notice_is_one_inert_line_without_credentials() -> None:
    record = DeliveryRecord(1, "d-1", "pull_request", "opened", 1, "o/r", 7, "o/r#7", "a" * 40, "dead", 3,
                            0.0, None, None, None, 0.0, 0.0, None, "{}")
    hostile = "Boom: @team see #12 <img src=x> token ghs_" + "A" * 36 + "\n" + "x" * 2 * REASON_CHARS
    summary = output(record, hostile)["output"]["summary"]
    assert "\n" not in summary and "ghs_AAAA" not in summary and "(redacted)" in summary
    assert summary.startswith("The analysis failed after 3 attempts: `")
    assert "`rocmbot deliveries show d-1`" in summary
    assert len(summary) < REASON_CHARS + 300
