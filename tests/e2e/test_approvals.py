"""Approvals are bound to the head the maintainer saw, and the approve button works for the fork
PRs it exists for."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ghsim.state import PullRequest, Review
from tests.e2e.conftest import TEMPLATE, World, make_world
from tests.e2e.test_dispatch import GOOD, MOE, WORKFLOW, _comment, _opened, _replies, _runs


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE})


def _fork_pr(world: World) -> PullRequest:
    pr = _opened(world, {MOE: GOOD}, author="stranger", fork=True)
    (pending,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert pending.conclusion == "action_required"
    return pr


def _push(world: World, pr: PullRequest, text: str) -> str:
    """A push the bot sees strictly after every comment written so far (GitHub's timestamps
    are whole seconds): waits for the clock to reach the next second first."""
    second = int(time.time())
    while int(time.time()) <= second:
        time.sleep(0.01)
    before = pr.head_sha
    world.sim.state.push(pr, {"docs/note.md": text})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=before))
    world.settle()
    return before


def test_the_approve_button_works_for_a_fork_pr(world: World) -> None:
    """GitHub leaves `check_run.pull_requests` empty when the head is in a fork; the bot finds
    the PR from its own record of the check it made."""
    pr = _fork_pr(world)
    (pending,) = world.checks(pr.head_sha, "rocmbot / rocm")
    payload = world.sim.payloads.check_run(pending, "requested_action", identifier="approve-rocm",
                                           sender="lead")
    assert payload["check_run"]["pull_requests"] == []
    world.deliver("check_run", payload)
    world.settle()
    (run,) = _runs(world)
    assert run.inputs["head_sha"] == pr.head_sha


def test_the_button_of_an_older_heads_check_releases_nothing(world: World) -> None:
    pr = _fork_pr(world)
    (old,) = world.checks(pr.head_sha, "rocmbot / rocm")
    _push(world, pr, "pushed after the check was shown\n")
    world.deliver("check_run", world.sim.payloads.check_run(old, "requested_action",
                                                            identifier="approve-rocm", sender="lead"))
    world.settle()
    assert _runs(world) == []
    (new,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert new.conclusion == "action_required"


def test_approve_amd_written_before_a_push_does_not_run_the_new_head(world: World) -> None:
    """A fork pushed between the maintainer's reading and the bot's handling of `/approve-amd`:
    the unreviewed head must not run."""
    pr = _fork_pr(world)
    comment = world.sim.state.add_comment(world.repo, pr.number, "/approve-amd", author="lead")
    seen = _push(world, pr, "pushed after the approval was written\n")
    world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
    world.settle()
    assert _runs(world) == []
    reply = _replies(world, pr)[-1]
    assert f"is for `{seen[:12]}`" in reply and f"`{pr.head_sha[:12]}`, which needs its own approval" in reply
    _comment(world, pr, "/approve-amd", "lead")  # written after the push: the new head runs
    (run,) = _runs(world)
    assert run.inputs["head_sha"] == pr.head_sha


def test_an_approving_review_of_an_older_head_says_the_new_one_needs_approval(world: World) -> None:
    pr = _fork_pr(world)
    state = world.sim.state
    with state.lock:
        review = Review(8_800_001, world.repo, pr.number, state.account("lead"), "LGTM", "APPROVED",
                        pr.head_sha)
        state.reviews[review.id] = review
    seen = _push(world, pr, "pushed after the review\n")
    world.deliver("pull_request_review", world.sim.payloads.pull_request_review(review))
    world.settle()
    assert _runs(world) == []
    reply = _replies(world, pr)[-1]
    assert reply.startswith(f"Not dispatched: this approval is for `{seen[:12]}`")
    assert "which needs its own approval" in reply
