"""The re-enable sweep: its configuration, when it is due, what it runs, and its issue."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from bot.github import keys
from bot.github.effects import Effects
from bot.github.port import CheckRun
from bot.rocm.dispatch import Dispatcher
from bot.rocm.reenable import Result, choose, due, issue_rows, period_of, result_of, worth_a_look
from bot.store.dispatch import Dispatch, DispatchStore, Explanation, JobOutcome, SelectedTest
from bot.store.reenable import SweepRow, SweptRun, SweptTest
from bot.store.store import Store
from config.repo import ReenableConfig, defaults, parse_config


def test_the_sweep_is_off_by_default_and_a_bare_yaml_off_means_off() -> None:
    assert defaults().reenable == ReenableConfig("off", 600.0, True)
    loaded = parse_config("reenable:\n  sweep: off\n  budget_gpu_minutes: 90\n")
    assert loaded.problems == [] and loaded.config.reenable == ReenableConfig("off", 90.0, True)
    weekly = parse_config("reenable:\n  sweep: weekly\n  issue: false\n").config.reenable
    assert weekly == ReenableConfig("weekly", 600.0, False)


def test_an_unknown_cadence_or_a_negative_budget_falls_back_to_the_defaults() -> None:
    loaded = parse_config("reenable:\n  sweep: monthly\n")
    assert loaded.config.reenable == ReenableConfig() and loaded.problems[0].key == "reenable.sweep"
    loaded = parse_config("reenable:\n  sweep: daily\n  budget_gpu_minutes: -1\n")
    assert loaded.config.reenable == ReenableConfig()
    assert [p.key for p in loaded.problems] == ["reenable.budget_gpu_minutes"]


# when a sweep is due -----------------------------------------------------------------------------

MONDAY = datetime(2026, 5, 4, 9, 0, tzinfo=UTC).timestamp()  # ISO week 19
DAY = 86400.0


def _row(**values: Any) -> SweepRow:
    fields: dict[str, Any] = {"repository": "octo/miles", "cadence": "weekly", "period": "2026-W19",
                              "swept_at": MONDAY, "checked_at": MONDAY, "owner": None, "expires_at": 0.0,
                              "retry_at": 0.0, "last_error": None}
    return SweepRow(**{**fields, **values})


def test_a_period_is_a_utc_day_or_an_iso_week() -> None:
    assert period_of("daily", MONDAY) == "2026-05-04"
    assert period_of("weekly", MONDAY) == "2026-W19"
    assert period_of("weekly", MONDAY + 6 * DAY + 14 * 3600) == "2026-W19"  # Sunday 23:00
    assert period_of("weekly", MONDAY + 7 * DAY) == "2026-W20"
    assert period_of("weekly", datetime(2027, 1, 1, tzinfo=UTC).timestamp()) == "2026-W53"


def test_a_sweep_is_due_once_per_period_and_never_when_off() -> None:
    assert due("weekly", None, MONDAY)
    assert not due("weekly", "2026-W19", MONDAY + 3 * DAY)
    assert due("weekly", "2026-W19", MONDAY + 7 * DAY)
    assert due("daily", "2026-05-04", MONDAY + DAY) and not due("daily", "2026-05-04", MONDAY + 3600)
    assert due("daily", "2026-W19", MONDAY)  # the cadence changed: the new period is due
    assert not due("off", None, MONDAY) and not due(None, None, MONDAY)


def test_a_repository_is_looked_at_when_new_due_or_its_configuration_is_old() -> None:
    now = MONDAY + DAY
    assert worth_a_look(None, now)
    assert worth_a_look(_row(), now)  # swept this week, but its configuration was read a day ago
    assert worth_a_look(_row(checked_at=now - 10), now + 7 * DAY)  # a new week
    fresh = _row(checked_at=now - 60)
    assert not worth_a_look(fresh, now)
    assert not worth_a_look(_row(cadence="off", checked_at=now - 60, period=None), now)
    assert worth_a_look(_row(cadence="off", checked_at=now - 3601, period=None), now)  # read it again
    assert not worth_a_look(_row(period="2026-W18", owner="w1", expires_at=now + 5), now)  # held
    assert worth_a_look(_row(period="2026-W18", owner="w1", expires_at=now - 5, checked_at=now), now)
    waiting = _row(period="2026-W18", retry_at=now + 60, checked_at=now)
    assert not worth_a_look(waiting, now)  # a failure asked to wait


# what a sweep runs -------------------------------------------------------------------------------


def _test(path: str, est: float, gpus: int, suite: str = "stage-c-4-gpu-mi350") -> SelectedTest:
    return SelectedTest(path, suite, est, gpus, parked=True)


def test_the_cheapest_tests_go_first_while_they_fit_the_budget() -> None:
    a, b, c = _test("tests/a.py", 3600, 4), _test("tests/b.py", 600, 8), _test("tests/c.py", 1800, 2)
    assert (a.gpu_minutes, b.gpu_minutes, c.gpu_minutes) == (240, 80, 60)
    assert choose([a, b, c], 600) == ([c, b, a], [])
    assert choose([a, b, c], 200) == ([c, b], [a])
    assert choose([a, b, c], 140) == ([c, b], [a])  # exactly the budget fits
    assert choose([a, b, c], 59) == ([], [c, b, a])
    twin = _test("tests/a2.py", 3600, 4)
    assert choose([twin, a], 240) == ([a], [twin])  # ties by path: the same choice every sweep


# a test's result and the issue -------------------------------------------------------------------


RUN = "https://github.com/octo/miles/actions/runs/5"
JOB = f"{RUN}/job/7"


def _swept(path: str = "tests/a.py", *, dispatch_id: str | None = "d1", note: str | None = None,
           patch: str | None = "--- a/tests/a.py\n+++ b/tests/a.py\n") -> SweptTest:
    return SweptTest(path, "stage-c-4-gpu-mi350", "FIXME: hangs", "valid", True, 60.0, note, dispatch_id,
                     patch)


def _dispatch(status: str = "completed", conclusion: str | None = "success") -> Dispatch:
    return Dispatch("d1", "octo/miles", None, "h" * 40, "stage-c-4-gpu-mi350", ["tests/a.py"], 60.0,
                    "rocmbot", status, conclusion, 5, RUN, 9, 0.0)


def _outcome(conclusion: str) -> JobOutcome:
    return JobOutcome("tests/a.py", 7, "completed", conclusion, JOB, 61.0)


def test_a_tests_result_is_its_jobs_then_its_runs_or_why_it_did_not_run() -> None:
    job, run = JOB, RUN
    assert result_of(SweptRun(_swept(), "h", _dispatch(), _outcome("failure"))) == Result("failed", job)
    assert result_of(SweptRun(_swept(), "h", _dispatch(conclusion="failure"), _outcome("success"))) == Result(
        "passed", job)
    assert result_of(SweptRun(_swept(), "h", _dispatch(), None)) == Result("passed", run)
    running = SweptRun(_swept(), "h", _dispatch("in_progress", None), None)
    assert result_of(running) == Result("dispatched", run)
    assert result_of(SweptRun(_swept(), "h", _dispatch("completed", "cancelled"), None)).word == "cancelled"
    assert result_of(SweptRun(_swept(), "h", _dispatch("dry_run", None), None)).word.startswith("not run")
    over = _swept(dispatch_id=None, note="not run: 240 GPU-minutes, over the budget")
    assert result_of(SweptRun(over, "h", None, None)) == Result("not run: 240 GPU-minutes, over the budget")
    # a failure whose log was read says why the test still fails
    oom = Explanation(7, "infrastructure", ("torch.OutOfMemoryError: HIP out of memory",), "out of memory",
                      pattern="device-out-of-memory")
    explained = replace(_outcome("failure"), explained=oom)
    assert result_of(SweptRun(_swept(), "h", _dispatch(), explained)) == Result(
        "failed: infrastructure (device-out-of-memory)", job)


def test_a_test_that_passed_in_the_last_two_sweeps_gets_its_patch() -> None:
    passed = SweptRun(_swept(), "h", _dispatch(), None)
    failed = SweptRun(_swept(), "h", _dispatch(conclusion="failure"), None)
    (row,) = issue_rows([passed], [passed])
    assert (row.result, row.patch) == ("passed", _swept().patch)
    assert issue_rows([passed], [failed])[0].patch is None
    assert issue_rows([passed], [])[0].patch is None  # one pass is not two
    assert issue_rows([failed], [passed])[0].patch is None
    other = SweptRun(_swept("tests/b.py"), "h", _dispatch(), None)
    assert issue_rows([passed], [other])[0].patch is None  # another test's pass
    no_patch = SweptRun(_swept(patch=None), "h", _dispatch(), None)
    assert issue_rows([no_patch], [no_patch])[0].patch is None


# a dispatch of no PR --------------------------------------------------------------------------

TEMPLATE = (Path(__file__).parents[2] / "config" / "workflows" / "rocm-targeted.yml").read_bytes()


class _DefaultBranch:
    """GitHub as a dispatch of a default branch's commit sees it: it reads no PR."""

    def __init__(self) -> None:
        self.sent: list[dict[str, str]] = []

    def pull_request(self, repo: str, number: int) -> Any:
        raise AssertionError("a run of no PR reads no PR")

    def workflow_file(self, repo: str, path: str) -> bytes:
        return TEMPLATE

    def dispatch_workflow(self, repo: str, workflow: str, ref: str, inputs: dict[str, str]) -> int:
        self.sent.append({"ref": ref, **inputs})
        return 500 + len(self.sent)

    def check_runs(self, repo: str, sha: str, name: str) -> list[CheckRun]:
        return []

    def create_check_run(self, repo: str, payload: dict[str, Any]) -> CheckRun:
        return CheckRun(9, payload["name"], payload["head_sha"], payload["status"])


def test_a_run_of_the_default_branch_is_dispatched_for_no_pr_once(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/db.sqlite")
    store.upgrade()
    try:
        gh = _DefaultBranch()
        effects = Effects(store, cast(Any, gh), dry_run=False, delivery_id="reenable:octo/miles")
        runs = DispatchStore(store)
        dispatcher = Dispatcher(cast(Any, gh), effects, runs, defaults(), "main")
        tests = [_test("tests/a.py", 1600, 4)]
        done = dispatcher.run("octo/miles", None, "h" * 40, tests, "rocmbot", keys.by_sweep("2026-W19"))
        (record,) = done.dispatched
        assert (record.pr_number, record.status, record.run_id) == (None, "queued", 501)
        assert record.include_disabled
        (inputs,) = gh.sent
        assert inputs["pr_number"] == "" and inputs["head_sha"] == "h" * 40 and inputs["ref"] == "main"
        assert inputs["include_disabled"] == "true" and inputs["tests"] == "tests/a.py"
        again = dispatcher.run("octo/miles", None, "h" * 40, tests, "rocmbot", keys.by_sweep("2026-W19"))
        assert [d.dispatch_id for d in again.already] == [record.dispatch_id] and len(gh.sent) == 1
        assert runs.for_pr("octo/miles", None) == [runs.get(record.dispatch_id)]
    finally:
        store.close()
