"""Under injected 5xx and secondary rate limits, every delivery completes: one comment and one
review per PR, no duplicate write."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli.example import TEST_TEMPLATE
from bot.github.publish import SUMMARY_MARKER, SummaryState
from tests.e2e.conftest import TEMPLATE, World, make_world

MOE = "tests/e2e/megatron/test_qwen35_moe.py"
WORKFLOW = ".github/workflows/rocm-targeted.yml"


def test_faults_do_not_lose_or_double_anything(world: World) -> None:
    faults = world.sim.faults
    faults.reseed(7)
    prs = []
    for n in range(4):
        prs.append(world.open_pr({MOE: TEST_TEMPLATE.format(disabled="", ep=4),
                                  f"docs/note{n}.md": f"{n}\n"}, branch=f"feature-{n}"))
    faults.fail(502, times=None, fraction=0.2)
    faults.secondary_rate_limit(retry_after=1, times=None, fraction=0.03)
    for pr in prs:
        world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    for pr in prs:
        before = pr.head_sha
        world.sim.state.push(pr, {"README.md": f"# miles {pr.number}\n"})
        world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=before))
    world.settle(timeout=240)
    faults.clear()
    injected = Counter(i.kind for i in faults.injected)
    assert injected["status"] > 5, injected
    counts = world.store.counts()
    assert counts["dead"] == 0, [(d.delivery_id, d.last_error) for d in world.store.recent("dead")]
    for pr in prs:
        summaries = [c for c in world.bot_comments(pr) if c.body.startswith(SUMMARY_MARKER)]
        assert len(summaries) == 1, pr.number
        assert summaries[0].body.count("PAR002") >= 1
        # One review: the push changed no file with a finding, so the new head repeats none of
        # its inline comments, even when an attempt reviewed the first head and died before
        # its summary recorded them (the ledger remembers).
        assert len(world.reviews(pr)) == 1, pr.number
        assert len(world.checks(pr.head_sha)) == 1


def test_a_reply_made_before_a_5xx_is_not_made_twice(world: World) -> None:
    """Found by bench/chaos.py: GitHub made the reply but answered 502, the retry replied again."""
    pr = world.open_pr({"docs/note.md": "a note\n"})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    world.sim.faults.fail_after(502, times=1, method="POST", path="/repos/*/issues/*/comments")
    comment = world.sim.state.add_comment(world.repo, pr.number, "/run-amd help", author="dev")
    world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
    world.settle()
    assert world.sim.faults.count("status_after") == 1
    replies = [c for c in world.bot_comments(pr) if f"<!-- rocmbot:reply {comment.id}:" in c.body]
    assert len(replies) == 1 and replies[0].body.startswith("**rocmbot commands**")
    record = world.store.get(world.sim.state.deliveries[-1].guid)
    assert record is not None and record.status == "done" and record.attempts == 2


def test_a_push_after_a_review_whose_summary_failed_repeats_no_inline_comment(world: World) -> None:
    """Found by bench/chaos.py: the review of the first head was made, its sticky comment (which
    records the inline comments as posted) was not, and the head moved on: the next head's review
    repeated the same comments. The ledger now remembers them."""
    pr = world.open_pr({MOE: TEST_TEMPLATE.format(disabled="", ep=4)})
    world.sim.faults.fail(502, times=None, method="POST", path="/repos/*/issues/*/comments")
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    deadline = time.monotonic() + 60
    while not world.reviews(pr) or (world.store.counts()["queued"] == 0):
        assert time.monotonic() < deadline, "the first head was not reviewed"
        time.sleep(0.02)
    before = pr.head_sha
    world.sim.state.push(pr, {"README.md": "# miles, pushed\n"})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=before))
    world.sim.faults.clear()
    world.settle()
    (review,) = world.reviews(pr)
    assert review.commit_id == before
    (summary,) = [c for c in world.bot_comments(pr) if c.body.startswith(SUMMARY_MARKER)]
    assert SummaryState.load(summary.body).head == pr.head_sha
    assert SummaryState.load(summary.body).posted  # it records the first review's comments


@pytest.fixture
def dispatching(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE})


@pytest.mark.parametrize(("author", "fork", "title"), [
    ("dev", False, "1 ROCm test on stage-c-4-gpu-mi350: queued"),  # the dispatch's check
    ("stranger", True, "Approval needed: 1 ROCm tests, about 107 GPU-minutes"),  # the approve button
])
def test_a_rocm_check_made_before_a_5xx_is_not_made_twice(dispatching: World, author: str, fork: bool,
                                                          title: str) -> None:
    """Found by bench/chaos.py: GitHub made the `rocmbot / rocm` check but answered 502; the
    retry made a second one (two approve buttons). Both POSTs to check-runs (the analysis check,
    then the ROCm one) are made and answered 502 here."""
    world = dispatching
    world.sim.faults.fail_after(502, times=2, method="POST", path="/repos/*/check-runs")
    pr = world.open_pr({MOE: TEST_TEMPLATE.format(disabled="", ep=2)}, author=author, fork=fork)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    assert world.sim.faults.count("status_after") == 2
    (rocm,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert rocm.title == title and rocm.external_id
    assert len(world.checks(pr.head_sha)) == 1
