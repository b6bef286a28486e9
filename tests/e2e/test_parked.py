"""`/run-amd disabled` end to end: a PR's parked tests that can come back, dispatched once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.cli.example import TEST_TEMPLATE
from ghsim.state import PullRequest
from tests.e2e.conftest import TEMPLATE, World, make_world

MOE = "tests/e2e/megatron/test_qwen35_moe.py"
SHORT = "tests/e2e/megatron/test_short.py"
SUITE = "stage-c-4-gpu-mi350"
DISABLED = ', disabled="FIXME: re-enable once this case passes on the MI350 runners."'
BROKEN = TEST_TEMPLATE.format(disabled=DISABLED, ep=4)  # ep 4 with tp 2, pp 2 on 4 GPUs: PAR002
FIXED = TEST_TEMPLATE.format(disabled=DISABLED, ep=2)  # still disabled, its grid valid again
WORKFLOW = ".github/workflows/rocm-targeted.yml"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE, MOE: BROKEN})


def _runs(world: World) -> list[Any]:
    return sorted(world.sim.state.runs.values(), key=lambda r: r.id)


def _comment(world: World, pr: PullRequest, body: str, author: str) -> Any:
    """A comment written once its author could have read the PR's head, delivered and handled."""
    world.read(pr)
    comment = world.sim.state.add_comment(world.repo, pr.number, body, author=author)
    world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
    world.settle()
    return comment


def _replies(world: World, pr: PullRequest) -> list[str]:
    return [c.body for c in world.bot_comments(pr) if not c.body.startswith("<!-- rocmbot:summary")]


def _reactions(world: World, comment: Any) -> list[str]:
    calls = world.sim.state.find_calls("POST", f"/repos/*/issues/comments/{comment.id}/reactions")
    return [c.body["content"] for c in calls]


def _opened(world: World, files: dict[str, str | None], **kw: Any) -> PullRequest:
    pr = world.open_pr(files, **kw)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    return pr


def test_a_parked_test_the_pr_fixes_is_dispatched_once_by_run_amd_disabled(world: World) -> None:
    pr = _opened(world, {MOE: FIXED})
    assert _runs(world) == []  # a parked test is never in the selection
    first = _comment(world, pr, "/run-amd disabled", "lead")
    (run,) = _runs(world)
    assert run.inputs["tests"] == MOE and run.inputs["suite"] == SUITE
    assert run.inputs["head_sha"] == pr.head_sha and str(run.inputs["include_disabled"]).lower() == "true"
    assert {"eyes", "rocket"} <= set(_reactions(world, first)) and _replies(world, pr) == []
    (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert check.external_id == run.inputs["dispatch_id"]
    dispatches = world.sim.state.find_calls("POST", "/repos/*/actions/workflows/*/dispatches")
    assert len(dispatches) == 1
    again = _comment(world, pr, "/run-amd disabled", "lead")  # the same command, a second time
    assert _runs(world) == [run]
    assert len(world.sim.state.find_calls("POST", "/repos/*/actions/workflows/*/dispatches")) == 1
    assert "+1" in _reactions(world, again) and "rocket" not in _reactions(world, again)


def test_run_amd_disabled_says_why_nothing_can_come_back_and_runs_only_parked_tests_by_name(
        world: World) -> None:
    pr = _opened(world, {MOE: BROKEN.replace("cp_size=1", "cp_size=1 ")})
    _comment(world, pr, "/run-amd disabled", "dev")
    reply = _replies(world, pr)[-1]
    first_line = reply.split("\n\n<!--")[0]
    assert first_line.startswith("Not dispatched: no parked ROCm test of this PR can come back: ")
    assert f"`{MOE}`: its launch would fail: PAR002" in first_line and "\n" not in first_line
    assert _runs(world) == []
    _comment(world, pr, f"/run-amd disabled {MOE} {SHORT} tests/nope.py", "dev")
    named = _replies(world, pr)[-1]
    assert f"the launch of `{MOE}` would fail (PAR002): a maintainer can add `--force`" in named
    assert f"`{SHORT}` is not parked: its ROCm marker is enabled" in named
    assert "`tests/nope.py` is not a file at the head" in named and _runs(world) == []
    _comment(world, pr, f"/run-amd disabled --force {MOE}", "dev")
    assert "`--force` may be used by people with maintain or admin" in _replies(world, pr)[-1]
    forced = _comment(world, pr, f"/run-amd disabled --force {MOE}", "lead")
    (run,) = _runs(world)
    assert (run.inputs["tests"], run.inputs["suite"]) == (MOE, SUITE)
    assert "rocket" in _reactions(world, forced)
    assert str(run.inputs["include_disabled"]).lower() == "true"


def test_parked_tests_asked_for_on_an_untrusted_authors_pr_wait_for_approval(world: World) -> None:
    pr = _opened(world, {MOE: FIXED}, author="stranger", fork=True)
    _comment(world, pr, "/run-amd disabled", "dev")
    assert _runs(world) == [] and "Waiting for a maintainer's approval" in _replies(world, pr)[-1]
    (pending,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert pending.conclusion == "action_required" and MOE in (pending.summary or "")
    _comment(world, pr, "/approve-amd", "lead")
    (run,) = _runs(world)  # released as asked for: a parked test, run although disabled
    assert (run.inputs["tests"], run.inputs["suite"]) == (MOE, SUITE)
    assert str(run.inputs["include_disabled"]).lower() == "true"
