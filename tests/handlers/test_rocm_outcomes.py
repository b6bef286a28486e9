"""Per-test outcomes of a dispatched run: which job ran which test, and how the check shows it."""

from __future__ import annotations

from bot.github.port import WorkflowJob
from bot.rocm.payloads import outcome_lines, run_check, tally
from bot.rocm.track import job_of, job_target, record_job, seconds
from bot.store.dispatch import Dispatch, JobOutcome

A, B = "tests/e2e/test_a.py", "tests/e2e/test_b.py"


def test_a_job_is_matched_to_the_test_it_is_named_after() -> None:
    assert job_target(f"stage-c-4-gpu-mi350 ({A})", [A, B]) == A
    assert job_target(B, [A, B]) == B
    assert job_target(f"test ({A}, 4)", [A]) == A
    assert job_target("plan", [A, B]) is None
    assert job_target(f"stage ({A}x)", [A]) is None  # a word, not a prefix


def test_the_table_links_each_job_and_counts_the_results() -> None:
    outcomes = {
        A: JobOutcome(A, 1, "completed", "success", "https://github.com/o/r/actions/runs/1/job/1", 600.0),
        B: JobOutcome(B, 2, "completed", "timed_out", "javascript:alert(1)", None),
    }
    lines = outcome_lines([A, B, "tests/e2e/test_c.py"], outcomes)
    assert lines[2] == f"| `{A}` | [success](https://github.com/o/r/actions/runs/1/job/1) | 10 min |"
    assert lines[3] == f"| `{B}` | timed out |  |"
    assert lines[4] == "| `tests/e2e/test_c.py` | waiting |  |"
    odd = JobOutcome(A, 3, "completed", "<b>x</b>", "https://x/(y)", None)
    assert outcome_lines([A], {A: odd})[2] == f"| `{A}` | other |  |"
    queued = JobOutcome(A, 3, "queued", None, None, None)
    assert outcome_lines([A], {A: queued})[2] == f"| `{A}` | queued |  |"
    assert tally([A, B], outcomes) == "1 passed, 1 timed out"
    assert tally([A, B], {}) == ""


def test_the_check_title_carries_the_tally() -> None:
    outcomes = {A: JobOutcome(A, 1, "completed", "failure", None, None)}
    payload = run_check("f" * 40, "d1", "s", [A, B], 10.0, "in_progress", outcomes=outcomes)
    assert payload["output"]["title"] == "2 ROCm tests on s: in progress (1 failed)"
    assert "| Test | Result | Time |" in payload["output"]["summary"]
    plain = run_check("f" * 40, "d1", "s", [A], 10.0, "queued")
    assert plain["output"]["title"] == "1 ROCm test on s: queued"
    assert f"- `{A}`" in plain["output"]["summary"]


def test_job_times_need_both_ends() -> None:
    def job(started: str | None, completed: str | None) -> WorkflowJob:
        return WorkflowJob(1, A, "completed", "success", "", started, completed)

    assert seconds(job("2026-11-30T10:00:00Z", "2026-11-30T10:02:30Z")) == 150
    assert seconds(job("2026-11-30T10:00:00Z", None)) is None
    assert seconds(job(None, None)) is None


def test_a_job_without_an_id_or_test_is_not_recorded() -> None:
    record = Dispatch("d1", "o/r", 1, "f" * 40, "s", [A], 1.0, "dev", "queued", None, 5, None, 9, 0.0)
    recorded: list[JobOutcome] = []

    class Store:
        def record_outcome(self, dispatch_id: str, outcome: JobOutcome) -> bool:
            recorded.append(outcome)
            return True

    store = Store()
    plan = job_of({"id": 3, "name": "plan", "status": "completed"})
    assert plan is not None and not record_job(store, record, plan)  # type: ignore[arg-type]
    assert job_of({"id": "3", "name": A}) is None
    waiting = job_of({"id": 3, "name": A, "status": "waiting"})
    assert waiting is not None and record_job(store, record, waiting)  # type: ignore[arg-type]
    assert recorded == [JobOutcome(A, 3, "queued", None, None, None)]
