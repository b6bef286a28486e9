"""The PR conversation over pushes: a finding is commented on once, whatever else changes in
its file; it is listed as resolved once, and only when it is gone; a finding the diff does not
show goes on the line the PR changed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli.example import TEST_TEMPLATE
from ghsim.state import PullRequest
from tests.e2e.conftest import TEMPLATE, World, make_world

MOE = "tests/e2e/megatron/test_qwen35_moe.py"
EP4 = TEST_TEMPLATE.format(disabled="", ep=4)
EP2 = TEST_TEMPLATE.format(disabled="", ep=2)
WORKFLOW = ".github/workflows/rocm-targeted.yml"


def _push(world: World, pr: PullRequest, files: dict[str, str | None]) -> None:
    before = pr.head_sha
    world.sim.state.push(pr, files)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=before))
    world.settle()


def _inline(world: World, pr: PullRequest) -> list[str]:
    return [c.body for r in world.reviews(pr) for c in r.comments]


def _resolved(body: str) -> str:
    """The summary's resolved line, or nothing."""
    return next((line for line in body.splitlines() if line.startswith("**Resolved since")), "")


def test_two_pushes_that_edit_the_file_of_a_finding_post_one_inline_comment(world: World) -> None:
    pr = world.open_pr({MOE: EP4})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    (first,) = _inline(world, pr)
    assert "PAR002" in first
    _push(world, pr, {MOE: "# a comment that moves every line\n" + EP4})
    moved_again = "# another one\n# a comment that moves every line\n" + EP4.replace("1500", "1400")
    _push(world, pr, {MOE: moved_again})
    assert _inline(world, pr) == [first]  # the same finding, two new blobs: not posted again
    (summary,) = world.bot_comments(pr)
    assert "PAR002" in summary.body and _resolved(summary.body) == ""  # moved, not resolved
    (check,) = world.checks(pr.head_sha)
    assert check.conclusion == "failure"


def test_a_fixed_finding_is_resolved_once(world: World) -> None:
    pr = world.open_pr({MOE: EP4})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    _push(world, pr, {MOE: EP2})
    (summary,) = world.bot_comments(pr)
    resolved = _resolved(summary.body)
    assert resolved.count("PAR002") == 1, resolved  # the CUDA and ROCm launches' finding, once
    assert summary.body.startswith("<!-- rocmbot:summary -->\n### ✅ no new problems")
    _push(world, pr, {"README.md": "# miles, reworded\n"})
    (summary,) = world.bot_comments(pr)
    assert _resolved(summary.body) == ""  # said once; not repeated on the next push
    assert "PAR002" not in summary.body.rsplit("\n<!-- rocmbot:state ", 1)[0]
    assert len(_inline(world, pr)) == 1


@pytest.fixture
def disabled_world(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {MOE: TEST_TEMPLATE.format(disabled=', disabled="flaky"', ep=4)})


def test_a_finding_off_the_diff_goes_on_the_line_the_pr_changed(disabled_world: World) -> None:
    world = disabled_world
    pr = world.open_pr({MOE: EP4})  # only the `disabled=` argument goes
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    (review,) = world.reviews(pr)
    (comment,) = review.comments
    marker = 1 + EP4.splitlines().index('register_rocm_ci(1600, "stage-c-4-gpu-mi350")')
    offending = 1 + EP4.splitlines().index("    ep_size=4,")
    assert (comment.path, comment.line) == (MOE, marker)
    assert f"`{MOE}:{offending}`, which this diff does not show" in comment.body
    assert "```\n    ep_size=4,\n```" in comment.body
    _push(world, pr, {MOE: "# moved\n" + EP4})
    assert len(world.reviews(pr)) == 1  # the same finding, still not posted again


@pytest.fixture
def dispatching(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE})


def _runs_section(world: World, pr: PullRequest) -> str:
    (summary,) = world.bot_comments(pr)
    body: str = summary.body
    return body.split("<!-- rocmbot:runs -->", 1)[1].split("<!-- rocmbot:/runs -->", 1)[0]


def test_the_summary_shows_the_runs_it_dispatched_with_their_status(dispatching: World) -> None:
    world = dispatching
    pr = world.open_pr({MOE: EP2})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    (run,) = world.sim.state.runs.values()
    section = _runs_section(world, pr)
    assert "**ROCm runs for this head** (1)" in section and f"`{MOE}`" in section
    world.sim.advance_run(run, "completed", "success", notify=True)
    world.settle()
    section = _runs_section(world, pr)
    # the simulator's run links are http: shown without a link
    assert f"| `stage-c-4-gpu-mi350` | `{MOE}` | success |" in section
    assert len(world.bot_comments(pr)) == 1  # edited in place, no new comment


@pytest.fixture
def on_command(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE, ".github/rocmbot.yml": "dispatch:\n  auto: "
                                                                                "'off'\n"})


def test_a_run_amd_that_dispatches_posts_no_comment_and_shows_in_the_summary(on_command: World) -> None:
    world = on_command
    pr = world.open_pr({MOE: EP2})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    assert not world.sim.state.runs  # automatic dispatch is off
    assert "**ROCm runs for this head**" not in _runs_section(world, pr)
    comment = world.sim.state.add_comment(world.repo, pr.number, "/run-amd", author="lead")
    world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
    world.settle()
    assert len(world.sim.state.runs) == 1
    assert len(world.bot_comments(pr)) == 1  # the summary only: no reply to a command that worked
    section = _runs_section(world, pr)
    assert "**ROCm runs for this head** (1)" in section and f"`{MOE}`" in section
    reactions = world.sim.state.find_calls("POST", f"/repos/*/issues/comments/{comment.id}/reactions")
    assert [c.body["content"] for c in reactions] == ["eyes", "rocket"]
