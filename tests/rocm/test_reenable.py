"""The re-enable sweep: its configuration, when it is due, what it runs, and its issue."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from bot.github.effects import Effects
from bot.github.port import CheckRun
from bot.rocm.dispatch import Dispatcher
from bot.store.dispatch import DispatchStore, SelectedTest
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
        tests = [SelectedTest("tests/a.py", "stage-c-4-gpu-mi350", 1600, 4, parked=True)]
        done = dispatcher.run("octo/miles", None, "h" * 40, tests, "rocmbot", "reenable:2026-W19")
        (record,) = done.dispatched
        assert (record.pr_number, record.status, record.run_id) == (None, "queued", 501)
        assert record.include_disabled
        (inputs,) = gh.sent
        assert inputs["pr_number"] == "" and inputs["head_sha"] == "h" * 40 and inputs["ref"] == "main"
        assert inputs["include_disabled"] == "true" and inputs["tests"] == "tests/a.py"
        again = dispatcher.run("octo/miles", None, "h" * 40, tests, "rocmbot", "reenable:2026-W19")
        assert [d.dispatch_id for d in again.already] == [record.dispatch_id] and len(gh.sent) == 1
        assert runs.for_pr("octo/miles", None) == [runs.get(record.dispatch_id)]
    finally:
        store.close()
