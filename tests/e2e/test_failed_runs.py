"""A failed ROCm run, explained end to end: each failed job's log read through the simulator's
302 and classified against what rocmbot knew of its test, shown once in the dispatch's check
(with an annotation on the test's marker) and in the summary's runs section."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.cli.example import TEST_TEMPLATE
from ghsim.state import PullRequest
from tests.e2e.conftest import TEMPLATE, World, make_world

WORKFLOW = ".github/workflows/rocm-targeted.yml"
MOE = "tests/e2e/megatron/test_qwen35_moe.py"  # its ROCm launch has a new PAR002 error: held
OOM = "tests/e2e/megatron/test_qwen35_oom.py"
NEW = "tests/e2e/megatron/test_qwen35_new.py"
GONE = "tests/e2e/megatron/test_qwen35_gone.py"
GOOD = TEST_TEMPLATE.format(disabled="", ep=2)
BAD = TEST_TEMPLATE.format(disabled="", ep=4)
MARKER_LINE = 4  # `register_rocm_ci(...)` in the template
NO_AUTO = "dispatch:\n  auto: \"off\"\n"  # nothing runs until a maintainer asks

UPSTREAM = "world_size (4) is not divisible by expert_tensor_model_pipeline_parallel size (8)"
MEGATRON = f"""\
[rank0]: Traceback (most recent call last):
[rank0]:   File "/__w/miles/miles/{MOE}", line 19, in <module>
[rank0]:     execute(CASE)
[rank0]:   File "/usr/local/lib/python3.10/dist-packages/megatron/core/parallel_state.py", line 512, in init
[rank0]:     raise RuntimeError(
[rank0]: RuntimeError: {UPSTREAM}
##[error]Process completed with exit code 1.
"""
OOM_LOG = """\
step 12 loss 2.31
torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 192 GiB
##[error]Process completed with exit code 1.
"""


def _new_error(shard: int) -> str:
    return f"""\
Traceback (most recent call last):
  File "/__w/miles/miles/{NEW}", line 19, in <module>
ValueError: checkpoint shard {shard} of 8 is corrupt: `@octocat` <b>see #12</b>
##[error]Process completed with exit code 1.
"""


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE, ".github/rocmbot.yml": NO_AUTO}, github_retries=2)


def _job(test: str) -> str:
    return f"stage-c-4-gpu-mi350 ({test})"


def _forced(world: World, files: dict[str, str | None]) -> tuple[PullRequest, Any]:
    """A PR opened and analysed, then run by a maintainer's `/run-amd --force` (its held test
    too): the one run of its tests."""
    pr = world.open_pr(files)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    assert not world.sim.state.runs
    world.read(pr)
    comment = world.sim.state.add_comment(world.repo, pr.number, "/run-amd --force", author="lead")
    world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
    world.settle()
    (run,) = world.sim.state.runs.values()
    assert sorted(run.inputs["tests"].split()) == sorted(p for p in files if files[p])
    return pr, run


def _fail(world: World, run: Any, test: str, log: str | bytes | None = None, **kw: Any) -> Any:
    """A job of the run that fails with ``log``; its `workflow_job` delivered."""
    job = world.sim.state.set_job_status(run, _job(test), "in_progress")
    if log is not None:
        world.sim.state.set_job_log(job, log, **kw)
    job = world.sim.advance_job(run, _job(test), "completed", "failure", notify=True)
    world.settle()
    return job


def _page(world: World, run: Any, job: Any) -> str:
    """A job's page, as GitHub links it (the simulator's own address stands for github.com)."""
    return f"{world.sim.url}/{world.repo.full_name}/actions/runs/{run.id}/job/{job.id}"


def _check(world: World, pr: PullRequest) -> Any:
    (check,) = world.checks(pr.head_sha, "rocmbot / rocm")
    return check


def _runs_section(world: World, pr: PullRequest) -> str:
    return world.summary(pr).split("<!-- rocmbot:runs -->")[1].split("<!-- rocmbot:/runs -->")[0]


def test_each_class_of_failure_is_explained_once_in_the_check_and_the_summary(world: World) -> None:
    pr, run = _forced(world, {MOE: BAD, OOM: GOOD, NEW: GOOD, GONE: GOOD})
    world.sim.advance_run(run, "in_progress", notify=True)
    moe = _fail(world, run, MOE, MEGATRON)
    oom = _fail(world, run, OOM, OOM_LOG)
    new = _fail(world, run, NEW, _new_error(3))
    gone = world.sim.state.set_job_status(run, _job(GONE), "in_progress")
    world.sim.state.delete_job_log(gone)
    gone = _fail(world, run, GONE)
    world.sim.advance_run(run, "completed", "failure", notify=True)
    world.settle()

    check = _check(world, pr)
    summary = check.summary or ""
    assert check.title == "4 ROCm tests on stage-c-4-gpu-mi350: failure (4 failed)"
    assert "**Failed tests, explained** (4)" in summary
    # predicted: the finding's rule and fix, and Megatron's own line quoted
    assert (f"- `{MOE}`: **predicted by PAR002**: the failure PAR002 foretold: world\\_size \\(4\\) is not "
            "divisible by expert\\_tensor\\_model\\_pipeline\\_parallel size \\(8\\) "
            f"([log]({_page(world, run, moe)}))") in summary
    assert "  - **Fix**: `ep_size=2` or `pp_size=1`" in summary
    assert f"  RuntimeError: {UPSTREAM}\n  at {MOE}:19 in <module>" in summary
    # infrastructure: the pattern, and the retry
    assert (f"- `{OOM}`: **infrastructure \\(device-out-of-memory\\)**: the GPU ran out of device memory; "
            "another job may have held it, or the test needs a larger runner "
            f"([log]({_page(world, run, oom)}))\n"
            "  - A retry may pass: `/run-amd retry` runs it again.") in summary
    # new: the excerpt quoted inert (no mention, no HTML, no reference)
    assert f"- `{NEW}`: **new**: an error rocmbot has no explanation for" in summary
    assert ("  ```\n  ValueError: checkpoint shard 3 of 8 is corrupt: `@octocat` <b>see #12</b>\n"
            f"  at {NEW}:19 in <module>\n") in summary
    # gone: one line, with the job's page
    assert (f"- `{GONE}`: log not available: GitHub no longer has it \\(404 or 410\\) "
            f"([log]({_page(world, run, gone)}))") in summary
    for test in (MOE, OOM, NEW, GONE):
        assert summary.count(f"- `{test}`:") == 1

    annotations = {a["path"]: a for a in check.annotations}
    assert len(check.annotations) == 4 and set(annotations) == {MOE, OOM, NEW, GONE}
    assert {(a["start_line"], a["end_line"], a["annotation_level"]) for a in check.annotations} == {
        (MARKER_LINE, MARKER_LINE, "failure")}
    assert annotations[MOE]["title"] == "ROCm run failed: predicted by PAR002"
    assert "Fix: `ep_size=2` or `pp_size=1`" in annotations[MOE]["message"]
    assert annotations[MOE]["raw_details"].startswith(f"RuntimeError: {UPSTREAM}")
    assert "A retry may pass: /run-amd retry runs it again." in annotations[OOM]["message"]
    assert annotations[GONE]["message"] == ("Log not available: GitHub no longer has it (404 or 410)\n"
                                            f"Log: {_page(world, run, gone)}")

    section = _runs_section(world, pr)
    assert "**Failed ROCm tests, explained** (4)" in section
    assert "**predicted by PAR002**" in section and "  - **Fix**: `ep_size=2` or `pp_size=1`" in section
    assert "**infrastructure \\(device-out-of-memory\\)**" in section and "`/run-amd retry`" in section
    assert "  ValueError: checkpoint shard 3 of 8 is corrupt: `@octocat` <b>see #12</b>" in section
    assert f"- `{GONE}`: log not available: GitHub no longer has it" in section
    for test in (MOE, OOM, NEW, GONE):
        assert section.count(f"- `{test}`:") == 1

    # Every job's news and the run's end delivered again: nothing is read, written or shown twice.
    downloads = len(world.sim.state.find_calls("GET", "/repos/*/actions/jobs/*/logs"))
    patches = len(world.sim.state.find_calls("PATCH", "/repos/*/check-runs/*"))
    edits = len(world.sim.state.find_calls("PATCH", "/repos/*/issues/comments/*"))
    body = world.summary(pr)
    for job in (moe, oom, new, gone):
        world.deliver("workflow_job", world.sim.payloads.workflow_job(run, "completed", job=job))
    world.deliver("workflow_run", world.sim.payloads.workflow_run(run, "completed"))
    world.settle()
    assert len(world.sim.state.find_calls("GET", "/repos/*/actions/jobs/*/logs")) == downloads == 4
    assert len(world.sim.state.find_calls("PATCH", "/repos/*/check-runs/*")) == patches
    assert len(world.sim.state.find_calls("PATCH", "/repos/*/issues/comments/*")) == edits
    assert world.summary(pr) == body and _check(world, pr).annotations == check.annotations
    assert world.store.counts()["dead"] == 0


def test_the_same_error_in_a_re_run_is_known(world: World) -> None:
    pr, run = _forced(world, {NEW: GOOD})
    _fail(world, run, NEW, _new_error(3))
    world.sim.advance_run(run, "completed", "failure", notify=True)
    world.settle()
    assert f"- `{NEW}`: **new**" in (_check(world, pr).summary or "")
    world.sim.rerun(run, notify=True)
    world.sim.advance_job(run, _job(NEW), "in_progress", notify=True)
    world.settle()
    assert "**Failed tests, explained**" not in (_check(world, pr).summary or "")  # its new job starts clean
    assert "Failed ROCm tests" not in _runs_section(world, pr)
    again = _fail(world, run, NEW, _new_error(5))  # the same error, with other numbers
    world.sim.advance_run(run, "completed", "failure", notify=True)
    world.settle()
    check = _check(world, pr)
    assert (f"- `{NEW}`: **known \\(seen before\\)**: the same error as an earlier failure of this test "
            f"([log]({_page(world, run, again)}))") in (check.summary or "")
    assert "  ValueError: checkpoint shard 5 of 8 is corrupt" in (check.summary or "")
    titles = [a["title"] for a in check.annotations]  # one for each attempt's job
    assert titles == ["ROCm run failed: new", "ROCm run failed: known (seen before)"]
    section = _runs_section(world, pr)
    assert section.count(f"- `{NEW}`:") == 1 and "**known \\(seen before\\)**" in section


def test_a_log_that_is_huge_binary_cut_short_or_empty_never_fails_the_delivery(world: World) -> None:
    huge, binary, cut, empty = (f"tests/e2e/megatron/test_{n}.py" for n in ("huge", "binary", "cut", "empty"))
    pr, run = _forced(world, {huge: GOOD, binary: GOOD, cut: GOOD, empty: GOOD})
    noise = b"".join(b"%09d step done, loss nominal\n" % n for n in range(200_000))  # about 6 MB
    _fail(world, run, huge, noise + b"torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1 GiB\n")
    _fail(world, run, binary, bytes(range(256)) * 4096)
    _fail(world, run, cut, b"x" * 200_000, cut_at=1000)
    _fail(world, run, empty, b"")
    world.sim.advance_run(run, "completed", "failure", notify=True)
    world.settle()
    summary = _check(world, pr).summary or ""
    assert f"- `{huge}`: **infrastructure \\(device-out-of-memory\\)**" in summary  # its end was read
    ranged = [c for c in world.sim.state.find_calls("GET", "/_blobs/*") if "range" in c.headers]
    assert [c.status for c in ranged] == [206]
    assert f"- `{binary}`: log not available: the log is not text" in summary
    assert f"- `{cut}`: log not available: the download was cut short" in summary
    assert f"- `{empty}`: log not available: the log is empty" in summary
    assert len(_check(world, pr).annotations) == 4
    section = _runs_section(world, pr)
    assert section.count("log not available") == 3
    assert world.store.counts()["dead"] == 0
    assert all(d.last_error is None for d in world.store.recent())


def test_a_failure_whose_job_news_was_lost_is_explained_when_the_run_ends(world: World) -> None:
    pr, run = _forced(world, {MOE: BAD})
    job = world.sim.state.set_job_status(run, _job(MOE), "in_progress")
    world.sim.state.set_job_log(job, MEGATRON)
    job = world.sim.state.set_job_status(run, _job(MOE), "completed", "failure")  # its delivery lost
    world.sim.advance_run(run, "completed", "failure", notify=True)
    world.settle()
    check = _check(world, pr)
    assert f"- `{MOE}`: **predicted by PAR002**" in (check.summary or "")
    assert [a["title"] for a in check.annotations] == ["ROCm run failed: predicted by PAR002"]
    assert "**predicted by PAR002**" in _runs_section(world, pr)
    late = world.sim.payloads.workflow_job(run, "completed", job=job)  # it comes after all
    world.deliver("workflow_job", late)
    world.deliver("workflow_run", world.sim.payloads.workflow_run(run, "completed"))
    world.settle()
    assert len(_check(world, pr).annotations) == 1
    assert len(world.sim.state.find_calls("GET", "/repos/*/actions/jobs/*/logs")) == 1


def _said(world: World, pr: PullRequest, body: str, author: str) -> Any:
    world.read(pr)
    comment = world.sim.state.add_comment(world.repo, pr.number, body, author=author)
    world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
    world.settle()
    return comment


def _reactions(world: World, comment: Any) -> list[str]:
    calls = world.sim.state.find_calls("POST", f"/repos/*/issues/comments/{comment.id}/reactions")
    return [c.body["content"] for c in calls]


def _replies(world: World, pr: PullRequest) -> list[str]:
    return [c.body for c in world.bot_comments(pr) if not c.body.startswith("<!-- rocmbot:summary")]


def test_run_amd_retry_runs_again_only_the_tests_that_failed_on_the_head(world: World) -> None:
    pr, run = _forced(world, {OOM: GOOD, NEW: GOOD, GONE: GOOD})
    world.sim.advance_run(run, "in_progress", notify=True)
    _fail(world, run, OOM, OOM_LOG)
    world.sim.advance_job(run, _job(NEW), "completed", "success", notify=True)
    gone = world.sim.state.set_job_status(run, _job(GONE), "completed", "timed_out")  # its news lost
    assert gone is not None
    early = _said(world, pr, "/run-amd retry", "dev")  # the run has not ended: its tests still run
    assert "confused" in _reactions(world, early)
    assert f"3 ROCm tests of head `{pr.head_sha[:12]}` are still running" in _replies(world, pr)[-1]
    world.sim.advance_run(run, "completed", "failure", notify=True)
    world.settle()

    stranger = _said(world, pr, "/run-amd retry", "stranger")  # rights as for `/run-amd`
    assert "confused" in _reactions(world, stranger) and len(world.sim.state.runs) == 1
    retry = _said(world, pr, "/run-amd retry", "dev")  # budgets as for `/run-amd`: 320 + 213 > 480
    assert "over the 480 GPU-minutes budget per PR head" in _replies(world, pr)[-1]
    assert len(world.sim.state.runs) == 1 and "rocket" not in _reactions(world, retry)
    _said(world, pr, "/approve-amd", "lead")
    _, second = sorted(world.sim.state.runs.values(), key=lambda r: r.id)
    assert second.inputs["head_sha"] == pr.head_sha
    assert sorted(second.inputs["tests"].split()) == sorted([OOM, GONE])  # not the test that passed
    again = _said(world, pr, "/run-amd retry", "dev")  # while the retry runs: nothing more
    assert "confused" in _reactions(world, again) and len(world.sim.state.runs) == 2
    assert f"2 ROCm tests of head `{pr.head_sha[:12]}` are still running" in _replies(world, pr)[-1]

    world.sim.advance_run(second, "in_progress", notify=True)
    world.sim.advance_job(second, _job(GONE), "completed", "success", notify=True)
    _fail(world, second, OOM, OOM_LOG)
    world.sim.advance_run(second, "completed", "failure", notify=True)
    world.settle()
    retry = _said(world, pr, "/run-amd retry", "lead")  # a maintainer's request approves as it goes
    assert "rocket" in _reactions(world, retry)
    third = max(world.sim.state.runs.values(), key=lambda r: r.id)
    assert third.inputs["tests"] == OOM  # what failed last, alone
    world.sim.advance_run(third, "in_progress", notify=True)
    world.sim.advance_job(third, _job(OOM), "completed", "success", notify=True)
    world.sim.advance_run(third, "completed", "success", notify=True)
    world.settle()
    done = _said(world, pr, "/run-amd retry", "dev")
    assert "confused" in _reactions(world, done) and len(world.sim.state.runs) == 3
    said = f"no ROCm test failed on head `{pr.head_sha[:12]}`: nothing to run again."
    assert said in _replies(world, pr)[-1]
    assert world.store.counts()["dead"] == 0
