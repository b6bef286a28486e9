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


def _passes(world: World, run: Any, test: str) -> Any:
    """The run's job for ``test`` passes and the run ends in success, each delivered."""
    world.sim.advance_run(run, "in_progress", notify=True)
    job = world.sim.advance_job(run, f"{SUITE} ({test})", "completed", "success", notify=True)
    world.sim.advance_run(run, "completed", "success", notify=True)
    world.settle()
    return job


def _runs_section(world: World, pr: PullRequest) -> str:
    return world.summary(pr).split("<!-- rocmbot:runs -->")[1].split("<!-- rocmbot:/runs -->")[0]


def test_the_seeds_story_a_passing_run_of_a_fixed_parked_test_offers_its_patch_once(world: World) -> None:
    """The PR fixes the grid (its diff does not reach the marker); the summary offers the
    command; a maintainer runs it; the run passes: one comment carries the patch that removes
    `disabled=`, and the summary says ready. A push that breaks the grid again is a new head:
    not ready there."""
    pr = _opened(world, {MOE: FIXED})
    assert "`/run-amd disabled`" in world.summary(pr)
    _comment(world, pr, "/run-amd disabled", "lead")
    (run,) = _runs(world)
    job = _passes(world, run, MOE)
    (offer,) = [r for r in _replies(world, pr) if "rocmbot:unpark" in r]
    head = pr.head_sha[:12]
    assert offer.startswith(f"`{MOE}` passed on `{SUITE}` at `{head}`")
    assert "ready to re-enable" in offer and "outside this PR's diff" in offer
    assert f'-register_rocm_ci(1600, "{SUITE}"{DISABLED})\n+register_rocm_ci(1600, "{SUITE}")\n' in offer
    assert f"--- a/{MOE}\n+++ b/{MOE}\n" in offer
    assert world.reviews(pr) == [] or all("rocmbot:unpark" not in r.body for r in world.reviews(pr))
    section = _runs_section(world, pr)
    assert f"`{MOE}` passed on `{SUITE}` at `{head}`" in section and "ready to re-enable" in section
    # the news again: nothing more
    world.deliver("workflow_job", world.sim.payloads.workflow_job(run, "completed", job=job))
    world.deliver("workflow_run", world.sim.payloads.workflow_run(run, "completed"))
    world.settle()
    assert sum("rocmbot:unpark" in r for r in _replies(world, pr)) == 1
    # a push that breaks the grid again: its summary is not ready, and offers no command
    world.sim.state.push(pr, {MOE: TEST_TEMPLATE.format(disabled=DISABLED, ep=8)})
    pushed = world.sim.payloads.pull_request(pr, "synchronize", before=run.inputs["head_sha"])
    world.deliver("pull_request", pushed)
    world.settle()
    assert "ready to re-enable" not in world.summary(pr) and "PAR002" in world.summary(pr)
    assert sum("rocmbot:unpark" in r for r in _replies(world, pr)) == 1


def test_a_passing_parked_test_whose_marker_is_in_the_diff_gets_a_suggestion(world: World) -> None:
    touched = FIXED.replace("register_rocm_ci(1600,", "register_rocm_ci(1700,")  # the marker line too
    pr = _opened(world, {MOE: touched})
    _comment(world, pr, "/run-amd disabled", "lead")
    (run,) = _runs(world)
    _passes(world, run, MOE)
    (review,) = [r for r in world.reviews(pr) if "rocmbot:unpark" in r.body]
    (comment,) = review.comments
    assert (comment.path, comment.line, comment.start_line) == (MOE, 4, None)
    assert comment.body.endswith(f'```suggestion\nregister_rocm_ci(1700, "{SUITE}")\n```')
    assert "ready to re-enable" in review.body
    assert not [r for r in _replies(world, pr) if "rocmbot:unpark" in r]
