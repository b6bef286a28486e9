"""A pull_request delivery produces the check run, the sticky summary and the review, once."""

from __future__ import annotations

from bot.cli.example import TEST_TEMPLATE
from bot.github.publish import SUMMARY_MARKER
from tests.e2e.conftest import World

MOE = "tests/e2e/megatron/test_qwen35_moe.py"
ENABLED_EP4 = TEST_TEMPLATE.format(disabled="", ep=4)
ENABLED_EP2 = TEST_TEMPLATE.format(disabled="", ep=2)


def test_a_par_error_gets_a_failing_check_a_summary_and_an_inline_comment(world: World) -> None:
    pr = world.open_pr({MOE: ENABLED_EP4})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    (check,) = world.checks(pr.head_sha)
    assert check.status == "completed" and check.conclusion == "failure"
    assert any(a["annotation_level"] == "failure" for a in check.annotations)
    (summary,) = world.bot_comments(pr)
    assert summary.body.startswith(SUMMARY_MARKER) and "PAR002" in summary.body
    (review,) = world.reviews(pr)
    assert review.commit_id == pr.head_sha
    assert any(r"world\_size \(4\) is not divisible" in c.body for c in review.comments)


def test_a_redelivery_and_a_quiet_push_post_nothing_new(world: World) -> None:
    pr = world.open_pr({MOE: ENABLED_EP4})
    payload = world.sim.payloads.pull_request(pr, "opened")
    world.deliver("pull_request", payload)
    world.settle()
    writes = len(world.sim.state.writes)
    world.deliver("pull_request", payload)  # GitHub's "redeliver": a new delivery id, same payload
    world.settle()
    assert len(world.bot_comments(pr)) == 1 and len(world.reviews(pr)) == 1
    before = pr.head_sha
    world.sim.state.push(pr, {"README.md": "# miles, reworded\n"})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=before))
    world.settle()
    assert len(world.bot_comments(pr)) == 1
    assert len(world.reviews(pr)) == 1  # the same finding on an unchanged file is not posted again
    assert len(world.sim.state.writes) > writes  # a check run on the new head, the summary edited


def test_a_push_that_fixes_the_error_edits_the_same_comment(world: World) -> None:
    pr = world.open_pr({MOE: ENABLED_EP4})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    (first,) = world.bot_comments(pr)
    before = pr.head_sha
    world.sim.state.push(pr, {MOE: ENABLED_EP2})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=before))
    world.settle()
    (after,) = world.bot_comments(pr)
    assert after.id == first.id
    assert "Resolved since" in after.body and "PAR002" in after.body.split("Resolved since")[1]
    (check,) = world.checks(pr.head_sha)
    assert check.conclusion == "success"


def test_a_pr_that_changes_nothing_relevant_gets_a_quiet_success(world: World) -> None:
    pr = world.open_pr({"docs/notes.md": "hello\n"})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    (check,) = world.checks(pr.head_sha)
    assert check.conclusion == "success"
    assert world.bot_comments(pr) == [] and world.reviews(pr) == []


def test_mentions_and_html_from_the_pr_do_not_reach_the_comment(world: World) -> None:
    nasty = TEST_TEMPLATE.format(disabled=', disabled="@octocat <img src=x> [x](https://e.example)"', ep=2)
    pr = world.open_pr({MOE: nasty})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    (summary,) = world.bot_comments(pr)
    assert "@octocat" not in summary.body.replace("@\u200b", "")
    assert "<img" not in summary.body and "](https://" not in summary.body


def test_a_pr_that_only_re_enables_a_test(world: World) -> None:
    pr = world.open_pr({MOE: ENABLED_EP2})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    (check,) = world.checks(pr.head_sha)
    assert check.conclusion == "success"
    (summary,) = world.bot_comments(pr)
    assert "**enabled**" in summary.body and "disabled marker removed" in summary.body
    assert world.reviews(pr) == []
    (refused,) = world.checks(pr.head_sha, "rocmbot / rocm")  # no dispatch workflow in this repository
    assert refused.conclusion == "failure" and "CFG002" in (refused.title or "")


def test_drafts_wait_until_they_are_ready(world: World) -> None:
    draft = world.open_pr({MOE: ENABLED_EP4}, branch="drafted")
    world.sim.state.set_pull_state(draft, draft=True)
    world.sim.state.reset_calls()
    world.deliver("pull_request", world.sim.payloads.pull_request(draft, "opened"))
    world.settle()
    assert world.checks(draft.head_sha) == []
    assert [c.path for c in world.sim.state.calls] == []  # not even read
    # Sent before the PR went back to draft: the read that comes with the files says so.
    pr = world.open_pr({MOE: ENABLED_EP4}, branch="undecided")
    payload = world.sim.payloads.pull_request(pr, "opened")
    world.sim.state.set_pull_state(pr, draft=True)
    world.deliver("pull_request", payload)
    world.settle()
    assert world.checks(pr.head_sha) == [] and world.bot_comments(pr) == []
    world.sim.state.set_pull_state(pr, draft=False)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "ready_for_review"))
    world.settle()
    assert world.checks(pr.head_sha)[0].conclusion == "failure"


def test_publishing_asks_github_only_what_the_ledger_does_not_know(world: World) -> None:
    state = world.sim.state
    pr = world.open_pr({MOE: ENABLED_EP4})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    (summary,) = world.bot_comments(pr)
    assert state.find_calls("GET", "/repos/*/issues/*/comments") == []
    assert state.find_calls("GET", "/repos/*/commits/*/check-runs") == []
    # The policy changes on the default branch: the same head gets a new report, and its
    # check run (known to the ledger) is updated in place.
    state.commit(world.repo, {".github/rocmbot.yml": "exclude: ['tests/e2e/megatron/**']\n"})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=pr.head_sha))
    world.settle()
    (check,) = world.checks(pr.head_sha)
    assert check.conclusion == "success"
    assert state.find_calls("GET", "/repos/*/commits/*/check-runs") == []
    assert len(state.find_calls("PATCH", f"/repos/*/check-runs/{check.id}")) == 1
    # Someone deletes the summary; the next change posts it again, once.
    with state.lock:
        del state.issue_comments[summary.id]
    state.commit(world.repo, {".github/rocmbot.yml": "exclude: []\n"})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=pr.head_sha))
    world.settle()
    (again,) = world.bot_comments(pr)
    assert again.id != summary.id and "PAR002" in again.body
    assert state.find_calls("GET", "/repos/*/issues/*/comments") == []


def test_the_summary_is_found_by_this_apps_identity_not_any_bots(world: World) -> None:
    """Another App's bot wrote a comment that starts with the summary marker: the bot, which
    has no record of a summary of its own, must not take that one over."""
    pr = world.open_pr({MOE: ENABLED_EP4})
    before = pr.head_sha
    world.sim.state.account("other-app[bot]", "Bot")
    imitation = world.sim.state.add_comment(world.repo, pr.number, f"{SUMMARY_MARKER}\nnot rocmbot's",
                                            author="other-app[bot]")
    world.sim.state.push(pr, {"README.md": "# miles, pushed\n"})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=before))
    world.settle()
    assert imitation.body == f"{SUMMARY_MARKER}\nnot rocmbot's"
    (summary,) = [c for c in world.comments(pr) if c.user is world.sim.state.bot]
    assert summary.body.startswith(SUMMARY_MARKER) and "PAR002" in summary.body
