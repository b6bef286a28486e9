"""Dry-run shows what it would do, and a service that starts live makes it for the heads that
are still their PR's, once; what it recorded for a head that moved on is left unmade."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.cli import main
from bot.github.publish import CHECK_NAME, SUMMARY_MARKER
from ghsim.state import PullRequest
from tests.e2e.conftest import TEMPLATE, World, make_world
from tests.e2e.test_dispatch import GOOD, MOE, WORKFLOW, _runs


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    """The service in dry-run, with App credentials: it reads GitHub and writes nothing."""
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE}, dry_run=True)


def _until(what: str, condition: Callable[[], object], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def _opened(world: World, branch: str) -> tuple[PullRequest, str]:
    pr = world.open_pr({MOE: GOOD, f"docs/{branch}.md": f"{branch}\n"}, branch=branch)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    return pr, world.sim.state.deliveries[-1].guid


def _summaries(world: World, pr: PullRequest) -> list[str]:
    return [c.body for c in world.bot_comments(pr) if c.body.startswith(SUMMARY_MARKER)]


def test_dry_run_records_what_it_would_send_and_deliveries_show_prints_it(
        world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pr, guid = _opened(world, "feature")
    assert world.checks(pr.head_sha, CHECK_NAME) == [] and world.bot_comments(pr) == []
    monkeypatch.setenv("ROCMBOT_DATABASE_URL", world.settings.database_url)
    assert main(["deliveries", "show", guid]) == 0
    shown = json.loads(capsys.readouterr().out)
    effects = {e["kind"]: e for e in shown["effects"]}
    assert {e["status"] for e in shown["effects"]} == {"dry_run"}
    check = next(e for e in shown["effects"] if e["key"].startswith("check:"))["result"]["content"]
    assert (check["name"], check["head_sha"], check["status"]) == (CHECK_NAME, pr.head_sha, "completed")
    assert check["conclusion"] in ("success", "neutral") and check["title"] and check["summary"]
    assert effects["comment"]["result"]["content"]["body"].startswith(SUMMARY_MARKER)
    dispatch = effects["dispatch"]["result"]["content"]
    assert dispatch["workflow"] == WORKFLOW and dispatch["inputs"]["tests"] == MOE
    assert shown["payload"]["pull_request"]["number"] == pr.number


def test_a_service_started_live_makes_what_dry_run_recorded_for_current_heads_once(world: World) -> None:
    current, _ = _opened(world, "current")
    moved, moved_guid = _opened(world, "moved")
    old_head = moved.head_sha
    world.sim.state.push(moved, {"README.md": "# moved on\n"})  # its delivery has not come yet
    assert {e.status for e in world.store.effects()} == {"dry_run"}

    world.restart(dry_run=False)
    _until("the dry-run effects are looked at",
           lambda: not any(e.status == "dry_run" for e in world.store.effects()))
    _until("the current head's check", lambda: world.checks(current.head_sha, CHECK_NAME))
    world.settle()
    assert len(world.checks(current.head_sha, CHECK_NAME)) == 1
    assert len(_summaries(world, current)) == 1
    assert [r.inputs["tests"] for r in _runs(world)] == [MOE]
    assert len(world.checks(current.head_sha, "rocmbot / rocm")) == 1
    # the head that moved on: nothing made, its entries left unmade
    assert world.checks(old_head, CHECK_NAME) == [] and world.bot_comments(moved) == []
    left = world.store.effects_of(moved_guid)
    assert left and {e.status for e in left} == {"superseded"}

    world.restart()  # started live again: nothing is made twice
    world.deliver("pull_request", world.sim.payloads.pull_request(current, "reopened"))
    world.settle()
    assert len(world.checks(current.head_sha, CHECK_NAME)) == 1 and len(_summaries(world, current)) == 1
    assert len(_runs(world)) == 1

    # the moved PR's next delivery makes its writes, the sticky comment it shares included
    world.deliver("pull_request", world.sim.payloads.pull_request(moved, "synchronize", before=old_head))
    world.settle()
    assert len(world.checks(moved.head_sha, CHECK_NAME)) == 1 and len(_summaries(world, moved)) == 1
    assert world.checks(old_head, CHECK_NAME) == []


def test_what_dry_run_recorded_for_a_pr_gone_since_is_left_unmade(world: World) -> None:
    pr, guid = _opened(world, "gone")
    world.sim.state.delete_repository(world.repo)
    world.restart(dry_run=False)
    _until("the dry-run effects are looked at",
           lambda: not any(e.status == "dry_run" for e in world.store.effects()))
    assert {e.status for e in world.store.effects_of(guid)} == {"superseded"}
    assert world.store.get(guid).status == "done"  # type: ignore[union-attr]  # not run again
    assert world.sim.state.check_runs_for(world.repo, pr.head_sha) == []
