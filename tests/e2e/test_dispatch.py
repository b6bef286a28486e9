"""ROCm dispatch end to end: automatic runs, slash commands, approvals, budgets, tracking."""

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
GOOD = TEST_TEMPLATE.format(disabled="", ep=2)
BAD = TEST_TEMPLATE.format(disabled="", ep=4)
WORKFLOW = ".github/workflows/rocm-targeted.yml"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE})


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


def test_a_trusted_authors_selection_is_dispatched_and_tracked(world: World) -> None:
    pr = _opened(world, {MOE: GOOD})
    (run,) = _runs(world)
    assert run.inputs["tests"] == MOE and run.inputs["suite"] == "stage-c-4-gpu-mi350"
    assert run.inputs["head_sha"] == pr.head_sha and run.inputs["pr_number"] == str(pr.number)
    assert run.inputs["dispatch_id"] in run.display_title
    assert run.head_branch == world.repo.default_branch  # named by the delivery: not asked for
    assert world.sim.state.find_calls("GET", f"/repos/{world.repo.full_name}") == []
    (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert check.status == "queued" and check.external_id == run.inputs["dispatch_id"]
    world.sim.advance_run(run, "in_progress", notify=True)
    world.settle()
    assert world.checks(pr.head_sha, "rocmbot / rocm")[0].status == "in_progress"
    world.sim.advance_run(run, "completed", "success", notify=True)
    world.settle()
    (done,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert (done.status, done.conclusion) == ("completed", "success")
    assert done.details_url and str(run.id) in done.details_url


def test_new_errors_of_a_test_it_would_not_run_do_not_stop_automatic_dispatch(world: World) -> None:
    nightly = "tests/e2e/megatron/test_nightly_moe.py"
    pr = _opened(world, {nightly: BAD.replace('"stage-c-4-gpu-mi350"', '"stage-c-4-gpu-mi350", nightly=True'),
                         SHORT: TEST_TEMPLATE.format(disabled="", ep=2)})
    (check,) = world.checks(pr.head_sha, "rocmbot / analysis")
    assert check.conclusion == "failure"  # the nightly test's new errors fail the analysis
    assert [r.inputs["tests"] for r in _runs(world)] == [SHORT]  # but do not stop SHORT's run


def test_error_findings_block_dispatch_until_a_maintainer_forces(world: World) -> None:
    pr = _opened(world, {MOE: BAD})
    assert _runs(world) == []
    summary = world.summary(pr)
    assert "**Held**: 1 test has a new error (PAR002)" in summary and "`/run-amd --force`" in summary
    dev = _comment(world, pr, "/run-amd", "dev")
    assert f"`{MOE}` is held" in _replies(world, pr)[-1] and "confused" in _reactions(world, dev)
    _comment(world, pr, "/run-amd --force", "dev")
    assert "`--force` may be used by people with maintain or admin" in _replies(world, pr)[-1]
    replies = _replies(world, pr)
    lead = _comment(world, pr, "/run-amd --force", "lead")
    assert len(_runs(world)) == 1
    assert {"eyes", "rocket"} <= set(_reactions(world, lead))
    assert _replies(world, pr) == replies  # a success posts no comment: the reaction and the check say it


def test_a_held_test_stays_out_of_the_runs_until_forced(world: World) -> None:
    pr = _opened(world, {MOE: BAD, SHORT: GOOD})
    # the test with a new error is held; the other one runs as it would have
    assert [r.inputs["tests"] for r in _runs(world)] == [SHORT]
    summary = world.summary(pr)
    runs = summary.split("<!-- rocmbot:runs -->")[1].split("<!-- rocmbot:/runs -->")[0]
    assert SHORT in runs and MOE not in runs
    assert f"- `{MOE}` `stage-c-4-gpu-mi350`: **PAR002**" in summary
    _comment(world, pr, "/run-amd", "lead")  # a plain command: what was selected, not the held
    assert [r.inputs["tests"] for r in _runs(world)] == [SHORT]
    _comment(world, pr, f"/run-amd {MOE}", "dev")
    assert "has error findings" in _replies(world, pr)[-1]  # named: refused without --force
    forced = _comment(world, pr, "/run-amd --force", "lead")
    assert sorted(r.inputs["tests"] for r in _runs(world)) == [MOE, SHORT]
    assert "rocket" in _reactions(world, forced)


def test_an_untrusted_author_waits_for_a_maintainer(world: World) -> None:
    pr = _opened(world, {MOE: GOOD}, author="stranger", fork=True)
    assert _runs(world) == []
    (pending,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert pending.conclusion == "action_required"
    assert pending.actions[0]["identifier"] == "approve-rocm"
    _comment(world, pr, "/run-amd", "stranger")
    assert "ROCm runs may be started by people with write" in _replies(world, pr)[-1]
    _comment(world, pr, "/run-amd", "dev")  # trusted, but the author is not: still needs a maintainer
    assert "Waiting for a maintainer's approval" in _replies(world, pr)[-1]
    assert _runs(world) == []
    _comment(world, pr, "/approve-amd", "dev")
    assert "may be approved by people with maintain or admin" in _replies(world, pr)[-1]
    _comment(world, pr, "/approve-amd", "lead")
    assert len(_runs(world)) == 1


def test_the_approve_button_releases_the_run_and_a_push_voids_the_approval(world: World) -> None:
    pr = _opened(world, {MOE: GOOD}, author="stranger", fork=True)
    (pending,) = world.checks(pr.head_sha, "rocmbot / rocm")
    world.deliver("check_run", world.sim.payloads.check_run(pending, "requested_action",
                                                            identifier="approve-rocm", sender="dev"))
    world.settle()
    assert _runs(world) == []  # dev may not approve
    world.deliver("check_run", world.sim.payloads.check_run(pending, "requested_action",
                                                            identifier="approve-rocm", sender="lead"))
    world.settle()
    assert len(_runs(world)) == 1
    before = pr.head_sha
    world.sim.state.push(pr, {MOE: GOOD.replace("cp_size=1", "cp_size=1 ")})
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=before))
    world.settle()
    assert len(_runs(world)) == 1  # the new head waits for a new approval
    (new_pending,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert new_pending.conclusion == "action_required"


def test_a_redelivered_or_doubled_command_dispatches_once(world: World) -> None:
    pr = _opened(world, {MOE: BAD})
    comment = world.sim.state.add_comment(world.repo, pr.number, "/run-amd --force", author="lead")
    payload = world.sim.payloads.issue_comment(comment)
    world.deliver("issue_comment", payload)
    world.deliver("issue_comment", payload)
    world.settle()
    again = _comment(world, pr, "/run-amd --force", "lead")
    assert len(_runs(world)) == 1
    assert "+1" in _reactions(world, again) and _replies(world, pr) == []  # already running


def test_paths_all_cancel_help_and_unknown_commands(world: World) -> None:
    nightly = "tests/e2e/megatron/test_nightly.py"
    parked = "tests/e2e/megatron/test_parked.py"
    pr = _opened(world, {MOE: BAD, nightly: 'register_rocm_ci(60, "stage-b-1-gpu-mi350", nightly=True)\n',
                         parked: 'register_rocm_ci(60, "stage-b-1-gpu-mi350", disabled="FIXME")\n'})
    _comment(world, pr, f"/run-amd {parked}", "dev")
    assert f"`{parked}` has no enabled ROCm marker" in _replies(world, pr)[-1]
    _comment(world, pr, f"/run-amd {SHORT} tests/nope.py", "dev")
    assert "`tests/nope.py` is not a file at the head" in _replies(world, pr)[-1]
    _comment(world, pr, f"/run-amd {SHORT}", "dev")
    (run,) = _runs(world)
    assert run.inputs["tests"] == SHORT and run.inputs["suite"] == "stage-b-1-gpu-mi350"
    cancel = _comment(world, pr, "/run-amd cancel", "dev")
    assert "+1" in _reactions(world, cancel) and "rocmbot:reply" not in _replies(world, pr)[-1]
    assert world.sim.state.runs[run.id].status == "completed"
    _comment(world, pr, "/run-amd help", "stranger")
    assert "/approve-amd" in _replies(world, pr)[-1]
    _comment(world, pr, "/run-and all", "dev")
    assert "did you mean `/run-amd all`?" in _replies(world, pr)[-1]
    _comment(world, pr, "/run-amd all --force", "lead")
    suites = sorted((r.inputs["suite"], r.inputs["tests"]) for r in _runs(world)[1:])
    assert suites == [("stage-b-1-gpu-mi350", SHORT), ("stage-c-4-gpu-mi350", MOE)]  # not the nightly one
    _comment(world, pr, f"/run-amd {nightly}", "dev")  # by name: whatever its cadence
    assert _runs(world)[-1].inputs["tests"] == nightly


def test_a_workflow_without_an_input_is_cfg002_and_nothing_is_dispatched(tmp_path: Path) -> None:
    broken = TEMPLATE.replace("      dispatch_id:\n", "      dispatch_idx:\n")
    for world in make_world(tmp_path, {WORKFLOW: broken}):
        pr = _opened(world, {MOE: GOOD})
        assert world.sim.state.find_calls("POST", "/repos/*/actions/workflows/*/dispatches") == []
        (refused,) = world.checks(pr.head_sha, "rocmbot / rocm")
        assert "CFG002" in (refused.title or "")
        _comment(world, pr, "/run-amd", "dev")
        assert "does not declare the input `dispatch_id`" in _replies(world, pr)[-1]


def test_over_budget_needs_a_maintainer(tmp_path: Path) -> None:
    config = "dispatch:\n  budget_gpu_minutes_per_head: 50\n"
    for world in make_world(tmp_path, {WORKFLOW: TEMPLATE, ".github/rocmbot.yml": config}):
        pr = _opened(world, {MOE: GOOD})  # about 107 GPU-minutes
        assert _runs(world) == []
        (pending,) = world.checks(pr.head_sha, "rocmbot / rocm")
        assert pending.conclusion == "action_required"
        _comment(world, pr, "/run-amd", "lead")
        assert len(_runs(world)) == 1


def test_the_head_moving_between_command_and_dispatch_dispatches_nothing(world: World) -> None:
    pr = _opened(world, {MOE: BAD})
    # The handler reads the PR once for the command; a push lands before the dispatcher's re-read.
    moved = world.sim.faults.before(
        lambda: world.sim.state.push(pr, {MOE: BAD.replace("cp_size=1", "cp_size=1 ")}),
        skip=1, method="GET", path=f"/repos/{world.repo.full_name}/pulls/{pr.number}",
    )
    old_head = pr.head_sha
    command = _comment(world, pr, "/run-amd --force", "lead")
    assert moved.hits == 1 and pr.head_sha != old_head
    assert _runs(world) == []
    assert world.sim.state.find_calls("POST", "/repos/*/actions/workflows/*/dispatches") == []
    reply = _replies(world, pr)[-1]
    assert f"the PR's head moved to `{pr.head_sha[:12]}`" in reply and "nothing was dispatched" in reply
    assert "confused" in _reactions(world, command)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=old_head))
    world.settle()
    _comment(world, pr, "/run-amd --force", "lead")  # asked again, once the push is analysed
    (run,) = _runs(world)
    assert run.inputs["head_sha"] == pr.head_sha


OTHER = "tests/e2e/megatron/test_qwen35_moe_long.py"


def _job(test: str) -> str:
    return f"stage-c-4-gpu-mi350 ({test})"


def test_each_tests_outcome_reaches_the_rocm_check(world: World) -> None:
    pr = _opened(world, {MOE: GOOD, OTHER: GOOD})
    (run,) = _runs(world)
    assert sorted(run.inputs["tests"].split()) == sorted([MOE, OTHER])
    world.sim.advance_job(run, "plan", "completed", "success", notify=True)  # runs no test
    world.sim.advance_job(run, _job(MOE), "in_progress", notify=True)
    world.settle()
    (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert check.status == "in_progress"
    assert f"| `{MOE}` | [in progress](" in (check.summary or "")
    assert f"| `{OTHER}` | waiting |" in (check.summary or "")
    moe = world.sim.advance_job(run, _job(MOE), "completed", "success", notify=True)
    world.settle()
    (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert "(1 passed)" in (check.title or "") and check.status == "in_progress"
    # The other job's delivery is lost: the bot reads the run's jobs when the run completes.
    other = world.sim.advance_job(run, _job(OTHER), "completed", "failure")
    world.sim.advance_run(run, "completed", "failure", notify=True)
    world.settle()
    (done,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert (done.status, done.conclusion) == ("completed", "failure")
    assert done.title == "2 ROCm tests on stage-c-4-gpu-mi350: failure (1 failed, 1 passed)"
    summary = done.summary or ""
    assert f"| `{MOE}` | [success](" in summary and f"/job/{moe.id})" in summary
    assert f"| `{OTHER}` | [failure](" in summary and f"/job/{other.id})" in summary
    assert len(world.sim.state.find_calls("GET", f"/repos/*/actions/runs/{run.id}/jobs")) == 1
    # A late or redelivered `in_progress` of a finished job changes nothing.
    patches = len(world.sim.state.find_calls("PATCH", f"/repos/*/check-runs/{done.id}"))
    world.deliver("workflow_job", world.sim.payloads.workflow_job(run, "in_progress", job=moe))
    world.deliver("workflow_run", world.sim.payloads.workflow_run(run, "completed"))
    world.settle()
    assert world.checks(pr.head_sha, "rocmbot / rocm")[0].summary == summary
    late = world.sim.state.find_calls("PATCH", f"/repos/*/check-runs/{done.id}")
    assert len(late) <= patches + 1 and all(c.body.get("status") == "completed" for c in late[patches:])


def test_a_successful_command_posts_no_comment_and_repeated_refusals_make_one_reply(world: World) -> None:
    pr = _opened(world, {MOE: BAD})
    refused = [_comment(world, pr, "/run-amd", "dev") for _ in range(5)]
    (reply,) = _replies(world, pr)
    assert reply.startswith("Not dispatched: ") and f"`{MOE}` is held" in reply
    assert "The same answer to 5 commands on this head." in reply
    assert all("confused" in _reactions(world, c) for c in refused)
    forced = _comment(world, pr, "/run-amd --force", "lead")
    assert len(_runs(world)) == 1 and "rocket" in _reactions(world, forced)
    assert _replies(world, pr) == [reply]  # the dispatch is shown by the reaction and the check


def test_other_bots_commands_are_left_alone_unless_the_repository_claims_them(
        tmp_path: Path) -> None:
    config = "dispatch:\n  command_prefixes: [/gpu-]\n"
    for world in make_world(tmp_path, {WORKFLOW: TEMPLATE, ".github/rocmbot.yml": config}):
        pr = _opened(world, {SHORT: GOOD})
        before = _replies(world, pr)
        others = [_comment(world, pr, body, "dev") for body in
                  ("/rerun-failed-ci", "/run-ci", "/approve", "/rerun-test tests/x.py")]
        assert all(_reactions(world, c) == [] for c in others)  # not even 👀
        assert _replies(world, pr) == before
        claimed = _comment(world, pr, "/gpu-run", "dev")
        assert "confused" in _reactions(world, claimed)
        assert "did you mean `/run-amd`?" in _replies(world, pr)[-1]
