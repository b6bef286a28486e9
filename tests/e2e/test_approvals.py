"""Approvals cover only a head the maintainer could have seen, and fail closed: a push first seen
in the second an `/approve-amd` was written in is not covered, whichever came first. The approve
button binds to its own check run's head, and works for the fork PRs it exists for.

No test waits between an approval and a push; `World.read` waits, before an approval, for the
clock to pass the second the service first saw the head in, as a person reading it would."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ghsim.state import IssueComment, PullRequest, Review
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


def _push(world: World, pr: PullRequest, text: str, *, handled: bool = True) -> str:
    """A push, at once, and its `synchronize` delivered (and handled, unless not ``handled``);
    the head before it."""
    before = pr.head_sha
    world.sim.state.push(pr, {"docs/note.md": text})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=before))
    if handled:
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


def test_the_button_pressed_by_someone_who_may_not_approve_reads_nothing_more(world: World) -> None:
    """Whoever presses the button is asked about first: for someone who may not approve, the
    PR and its selection are not read."""
    pr = _fork_pr(world)
    (pending,) = world.checks(pr.head_sha, "rocmbot / rocm")
    start = len(world.sim.state.calls)
    world.deliver("check_run", world.sim.payloads.check_run(pending, "requested_action",
                                                            identifier="approve-rocm", sender="dev"))
    world.settle()
    calls = world.sim.state.calls[start:]
    assert [c.path for c in calls if c.path.endswith("/collaborators/dev/permission")]
    assert [c.path for c in calls if c.path.endswith(f"/pulls/{pr.number}")] == []
    assert _runs(world) == []


@pytest.mark.parametrize("handled", [True, False])
def test_the_button_of_an_older_heads_check_releases_nothing(world: World, handled: bool) -> None:
    """The button approves the head of its own check run, never the PR's current head: pressed
    on the check of a head a push left behind, at once (the push handled, or not yet), it
    dispatches nothing, and the new head's check still waits."""
    pr = _fork_pr(world)
    (old,) = world.checks(pr.head_sha, "rocmbot / rocm")
    pressed = world.sim.payloads.check_run(old, "requested_action", identifier="approve-rocm", sender="lead")
    assert pressed["check_run"]["head_sha"] == old.head_sha
    _push(world, pr, "pushed after the check was shown\n", handled=handled)
    world.deliver("check_run", pressed)
    world.settle()
    assert _runs(world) == []
    (new,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert new.conclusion == "action_required"


def _stamp_in_the_second_of(world: World, comment: IssueComment, head: str) -> None:
    """Stamp ``comment`` as written in the second the service first saw ``head`` in (GitHub's
    stamps are whole seconds): what a comment and a push made together get, made certain."""
    first = world.first_seen(head)
    assert first is not None
    with world.sim.state.lock:
        comment.created_at = comment.updated_at = datetime.fromtimestamp(math.floor(first), UTC)


def _moved_reply(world: World, pr: PullRequest, seen: str) -> str:
    """The one reply to an approval of ``seen``: it names that head and the current one."""
    reply = _replies(world, pr)[-1]
    assert reply.startswith(f"Not dispatched: this approval is for `{seen[:12]}`"), reply
    assert f"the head is now `{pr.head_sha[:12]}`, which needs its own approval" in reply, reply
    assert "a new `/approve-amd`" in reply, reply
    return reply


def test_approve_amd_then_a_push_in_the_same_second_does_not_run_the_new_head(world: World) -> None:
    """A fork pushes right after the maintainer's `/approve-amd`, no time between: GitHub stamps
    both in the same second, so the comment's stamp cannot tell whether the maintainer saw the
    new head, and the approval covers the head seen before that second only."""
    pr = _fork_pr(world)
    world.read(pr)
    comment = world.sim.state.add_comment(world.repo, pr.number, "/approve-amd", author="lead")
    seen = _push(world, pr, "pushed right after the approval was written\n")
    _stamp_in_the_second_of(world, comment, pr.head_sha)
    world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
    world.settle()
    assert _runs(world) == []
    _moved_reply(world, pr, seen)
    (pending,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert pending.conclusion == "action_required"
    _comment(world, pr, "/approve-amd", "lead")  # written after the new head arrived: it runs
    (run,) = _runs(world)
    assert run.inputs["head_sha"] == pr.head_sha


def test_approve_amd_written_as_a_push_is_delivered_does_not_run_the_new_head(world: World) -> None:
    """The push's delivery reaches the service before the maintainer writes `/approve-amd`, in
    the same second: still not covered (the stamp cannot order them), whatever order the two
    deliveries are handled in."""
    pr = _fork_pr(world)
    world.read(pr)
    seen = _push(world, pr, "pushed as the approval was being written\n", handled=False)
    comment = world.sim.state.add_comment(world.repo, pr.number, "/approve-amd", author="lead")
    _stamp_in_the_second_of(world, comment, pr.head_sha)
    world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
    world.settle()
    assert _runs(world) == []
    _moved_reply(world, pr, seen)


def test_approve_amd_written_before_a_push_does_not_run_the_new_head(world: World) -> None:
    """A fork pushed between the maintainer's reading and the bot's handling of `/approve-amd`:
    the unreviewed head must not run."""
    pr = _fork_pr(world)
    world.read(pr)
    comment = world.sim.state.add_comment(world.repo, pr.number, "/approve-amd", author="lead")
    seen = _push(world, pr, "pushed after the approval was written\n")
    world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
    world.settle()
    assert _runs(world) == []
    _moved_reply(world, pr, seen)
    _comment(world, pr, "/approve-amd", "lead")  # written after the push: the new head runs
    (run,) = _runs(world)
    assert run.inputs["head_sha"] == pr.head_sha


def test_approve_amd_before_any_head_was_seen_approves_nothing(world: World) -> None:
    """The PR opened and the maintainer commented in the same second: no head was seen before
    the comment's second, so there is nothing the approval covers."""
    pr = _fork_pr(world)
    comment = world.sim.state.add_comment(world.repo, pr.number, "/approve-amd", author="lead")
    _stamp_in_the_second_of(world, comment, pr.head_sha)
    world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
    world.settle()
    assert _runs(world) == []
    reply = _replies(world, pr)[-1]
    assert reply.startswith("Not dispatched: this approval was given before rocmbot saw the PR's head")
    assert f"the head is now `{pr.head_sha[:12]}`, which needs its own approval" in reply


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


def _wait(condition: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


@pytest.mark.parametrize("how", ["/run-amd", "/approve-amd", "review"])
def test_a_maintainers_command_waits_for_the_analysis_of_the_head_it_acts_on(world: World, how: str) -> None:
    """The push's analysis fails for now (GitHub's 502s) and is retried later; a maintainer's
    `/run-amd`, `/approve-amd` or approving review of that head, delivered meanwhile, is answered
    after the analysis: the head runs. Found by bench/chaos.py: the command was answered at once
    ("nothing to run", or silently for a review), and the maintainer's decision was lost."""
    # the analysis is retried until GitHub answers again, each attempt giving up at its first 502
    world.restart(max_attempts=100_000, github_retries=0)
    world.sim.faults.fail(502, times=None, method="GET", path="/repos/*/pulls/*/files")
    pr = world.open_pr({MOE: GOOD}, author="stranger", fork=True)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    _wait(lambda: (d := world.store.recent()[0]).attempts >= 1 and d.status == "queued",
          "the analysis was not tried")
    world.read(pr)
    if how == "review":
        review = Review(9_100_001, world.repo, pr.number, world.sim.state.account("lead"), "LGTM", "APPROVED",
                        pr.head_sha)
        world.sim.state.reviews[review.id] = review
        sent = world.sim.deliver("pull_request_review", world.sim.payloads.pull_request_review(review))
    else:
        comment = world.sim.state.add_comment(world.repo, pr.number, how, author="lead")
        sent = world.sim.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
    _wait(lambda: (d := world.store.get(sent.guid)) is not None and d.attempts >= 1,
          "the maintainer's delivery was not tried")
    assert _runs(world) == []
    world.sim.faults.clear()
    world.settle()
    (run,) = _runs(world)
    assert run.inputs["head_sha"] == pr.head_sha


def test_an_approval_covers_the_current_head_when_the_pushes_arrived_out_of_order(world: World) -> None:
    """Two pushes in a row; GitHub delivers the second's `synchronize` before the first's. The
    maintainer's `/approve-amd` covers the PR's head (seen before the comment), not the head
    whose delivery happened to arrive last."""
    pr = _fork_pr(world)
    first_before = pr.head_sha
    world.sim.state.push(pr, {"docs/note.md": "one"})
    first = world.sim.payloads.pull_request(pr, "synchronize", before=first_before)
    second_before = pr.head_sha
    world.sim.state.push(pr, {"docs/note.md": "two"})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=second_before))
    world.settle()
    world.deliver("pull_request", first)  # the older push, delivered last
    world.settle()
    _comment(world, pr, "/approve-amd", "lead")
    (run,) = _runs(world)
    assert run.inputs["head_sha"] == pr.head_sha
