"""The ROCm decision core, from plain values: who may run what, when a maintainer approves."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from bot.github import keys
from bot.rocm import decide
from bot.rocm.decide import Actor, AwaitApproval, DispatchTests, Head, Refusal
from bot.store.dispatch import Dispatch, SelectedTest, Selection
from config.repo import DispatchConfig, RepoConfig, Suite, defaults

HEAD, OLD = "h" * 40, "o" * 40
MOE = SelectedTest("tests/e2e/test_moe.py", "stage-c-4-gpu-mi350", 600, 4)  # 40 GPU-minutes
DENSE = SelectedTest("tests/e2e/test_dense.py", "stage-c-4-gpu-mi350", 300, 4)
CONFIG = DispatchConfig()
DEV = Actor("dev", "write", trusted=True, maintainer=False)
LEAD = Actor("lead", "maintain", trusted=True, maintainer=True)
GUEST = Actor("guest", "read", trusted=False, maintainer=False)


def head(*, trusted: bool = True, spent: float = 0.0, today: float = 0.0, approved: str | None = None
         ) -> Head:
    return Head(HEAD, "author", trusted, spent, today, approved)


def test_an_untrusted_requester_is_refused_with_who_may() -> None:
    refused = decide.screen(GUEST, [MOE], force=False, failing=[], config=CONFIG)
    assert refused is not None and refused.reason.startswith("@guest has `read` permission; ROCm runs")
    assert "write, maintain or admin" in refused.reason


def test_force_is_for_maintainers_and_lets_failing_tests_through() -> None:
    forced = decide.screen(DEV, [MOE], force=True, failing=[], config=CONFIG)
    assert forced is not None and "`--force` may be used by" in forced.reason
    blocked = decide.screen(DEV, [MOE, DENSE], force=False, failing=[MOE.path, DENSE.path], config=CONFIG)
    assert blocked is not None and "have error findings" in blocked.reason
    assert decide.screen(LEAD, [MOE], force=True, failing=[MOE.path], config=CONFIG) is None


def test_nothing_selected_is_refused() -> None:
    refused = decide.screen(DEV, [], force=False, failing=[], config=CONFIG)
    assert refused is not None and refused.reason.startswith("there is nothing to run")


def test_a_trusted_author_within_budget_dispatches() -> None:
    assert decide.request(DEV, [MOE], head(), CONFIG) == DispatchTests((MOE,))


def test_an_untrusted_author_waits_for_a_maintainer() -> None:
    decision = decide.request(DEV, [MOE], head(trusted=False), CONFIG)
    reason = "the PR author @author is not trusted to run code on the ROCm runners"
    assert decision == AwaitApproval((MOE,), reason)


def test_budgets_per_head_and_per_day() -> None:
    per_head = decide.request(DEV, [MOE], head(spent=450), CONFIG)
    assert isinstance(per_head, AwaitApproval)
    assert per_head.reason == (
        "this head would use 490 GPU-minutes, over the 480 GPU-minutes budget per PR head")
    per_day = decide.request(DEV, [MOE], head(today=3990), CONFIG)
    assert isinstance(per_day, AwaitApproval) and "daily budget" in per_day.reason
    both = decide.request(DEV, [MOE], head(trusted=False, spent=450), CONFIG)
    assert isinstance(both, AwaitApproval) and both.reason.count("; ") == 1


def test_an_approval_given_earlier_lets_the_request_through() -> None:
    assert decide.request(DEV, [MOE], head(trusted=False, approved="lead"), CONFIG) == DispatchTests((MOE,))


def test_a_maintainers_request_approves_the_head_it_saw() -> None:
    approving = DispatchTests((MOE,), "lead")
    assert decide.request(LEAD, [MOE], head(trusted=False), CONFIG, seen=HEAD) == approving
    assert decide.request(LEAD, [MOE], head(trusted=False), CONFIG) == approving
    moved = decide.request(LEAD, [MOE], head(trusted=False), CONFIG, seen=OLD)
    assert isinstance(moved, AwaitApproval) and moved.refusal is not None
    assert moved.refusal.reason.startswith(f"this approval is for `{OLD[:12]}`")
    before_any = decide.request(LEAD, [MOE], head(trusted=False), CONFIG, seen="")
    assert isinstance(before_any, AwaitApproval) and before_any.refusal is not None
    assert "was given before rocmbot saw the PR's head" in before_any.refusal.reason


def _pending(state: str = "pending", tests: tuple[SelectedTest, ...] = (MOE,)) -> Selection:
    return Selection("o/r", 1, HEAD, "author", list(tests), [], 40.0, 5, state)


def test_an_approval_releases_the_tests_waiting_on_the_head() -> None:
    assert decide.approval(LEAD, HEAD, HEAD, _pending(), CONFIG) == DispatchTests((MOE,), "lead")
    assert decide.approval(LEAD, None, HEAD, _pending(), CONFIG) == DispatchTests((MOE,), "lead")


@pytest.mark.parametrize(("who", "seen", "pending", "says"), [
    (DEV, HEAD, _pending(), "ROCm runs may be approved by people with maintain or admin"),
    (LEAD, OLD, _pending(), "the head is now `hhhhhhhhhhhh`"),
    (LEAD, HEAD, None, "nothing waiting"),
    (LEAD, HEAD, _pending("dispatched"), "nothing waiting"),
    (LEAD, HEAD, _pending(tests=()), "nothing waiting"),
])
def test_an_approval_that_releases_nothing_says_why(
    who: Actor, seen: str, pending: Selection | None, says: str
) -> None:
    refused = decide.approval(who, seen, HEAD, pending, CONFIG)
    assert isinstance(refused, Refusal) and says in refused.reason


def test_cancelling_is_for_those_who_may_run() -> None:
    assert decide.may_cancel(DEV, CONFIG) is None
    refused = decide.may_cancel(GUEST, CONFIG)
    assert refused is not None and "runs may be cancelled by" in refused.reason


def test_a_selection_runs_by_itself_unless_off_empty_or_failing() -> None:
    assert decide.automatic(CONFIG, [MOE], [])
    assert not decide.automatic(DispatchConfig(auto="off"), [MOE], [])
    assert not decide.automatic(CONFIG, [], [])
    assert not decide.automatic(CONFIG, [MOE, DENSE], [DENSE.path])
    assert decide.untrusted_author("fork") == "@fork may not start ROCm runs"


@dataclass(frozen=True)
class Marker:
    path: str
    suite: str | None
    backend: str = "rocm"
    disabled: str | None = None
    est_time: float | None = 600
    gpus: int | None = 4
    cadence: str | None = "per-pr"


def test_the_head_s_rocm_tests_and_whether_pr_runs_may_use_their_suite() -> None:
    config = defaults().model_copy(update={"suites": {"stage-x": Suite(per_pr=False)}})
    found = [
        Marker("a.py", "stage-c-4-gpu-mi350"), Marker("b.py", "stage-x"),
        Marker("c.py", "n", cadence="nightly"),
        Marker("d.py", "s", backend="cuda"), Marker("e.py", "s", disabled="flaky"), Marker("f.py", None),
    ]
    chosen = decide.rocm_tests(found, config)
    assert [(t.path, per_pr) for t, per_pr in chosen] == [("a.py", True), ("b.py", False), ("c.py", False)]
    assert isinstance(config, RepoConfig)


def test_named_tests_are_found_or_each_is_said_why_not() -> None:
    known = {MOE.path: MOE}
    tests, problems = decide.named_tests([f"`./{MOE.path}`", "README.md", "canel"], known, {"README.md"})
    assert tests == [MOE]
    assert problems == ["`README.md` has no enabled ROCm marker",
                        "`canel` is not a file at the head (did you mean `/run-amd cancel`?)"]
    assert decide.named_refusal(problems).reason.startswith("nothing was dispatched: `README.md`")


def test_paths_that_would_not_survive_the_workflow_input_are_refused() -> None:
    assert decide.unsendable([MOE]) is None
    refused = decide.unsendable([SelectedTest("tests/a b.py", "s", 1, 1)])
    assert refused is not None and "white space" in refused.reason
    nothing = decide.unsendable([])
    assert nothing is not None and nothing.reason.startswith("there is nothing to run")


def _dispatch(dispatch_id: str, status: str, tests: list[str]) -> Dispatch:
    return Dispatch(dispatch_id, "o/r", 1, HEAD, MOE.suite, tests, 40.0, "dev", status, None, None, None,
                    None, 0.0)


def test_a_plan_dispatches_each_suite_once() -> None:
    other = SelectedTest("tests/e2e/test_b.py", "stage-b-1-gpu-mi350", 60, 1)
    steps = decide.plan("o/r", 1, HEAD, [MOE, DENSE, other], "auto", [])
    assert [(s.suite, s.paths) for s in steps if isinstance(s, decide.Send)] == [
        ("stage-b-1-gpu-mi350", [other.path]), (MOE.suite, sorted([MOE.path, DENSE.path]))]
    send = steps[1]
    assert isinstance(send, decide.Send) and send.gpu_minutes == 60 and send.unsure is None
    assert send.dispatch_id == keys.dispatch_id("o/r", 1, HEAD, MOE.suite, send.paths, "auto")
    assert len(send.dispatch_id) == 16


def test_a_plan_leaves_running_tests_and_completes_unsure_dispatches() -> None:
    running = _dispatch("a" * 16, "in_progress", [MOE.path])
    assert decide.plan("o/r", 1, HEAD, [MOE], "comment:1", [running]) == [running]
    unsure = _dispatch("b" * 16, "dispatching", [MOE.path])
    (step,) = decide.plan("o/r", 1, HEAD, [MOE], "comment:2", [unsure])
    assert isinstance(step, decide.Send) and step.unsure == unsure
    finished = _dispatch("c" * 16, "completed", [MOE.path])
    (again,) = decide.plan("o/r", 1, HEAD, [MOE], "comment:3", [finished])
    assert isinstance(again, decide.Send) and again.unsure is None


def test_a_run_is_known_by_the_dispatch_id_its_name_carries() -> None:
    dispatch_id = "0123456789abcdef"
    assert decide.run_dispatch_id(f"rocmbot {dispatch_id}: ROCm PR #7") == dispatch_id
    template = f"ROCm PR #7 stage-c-4-gpu-mi350 ({dispatch_id})"  # the workflow template's
    assert decide.run_dispatch_id(template) == dispatch_id
    assert decide.run_dispatch_id("ROCm targeted tests", f"x ({dispatch_id})") == dispatch_id
    assert decide.run_dispatch_id("ROCm PR #7 tests/e2e/test_moe.py 0123456789abcdef0") is None
    assert decide.run_dispatch_id("other words 0123456789abcdef") is None  # a bare word is no id
    assert decide.run_dispatch_id("(0123456789ABCDEF)") is None


def test_the_workflow_contract_is_checked_before_dispatching() -> None:
    missing = decide.workflow_problem(None, "w.yml")
    assert missing == "the dispatch workflow `w.yml` does not exist on the default branch"
    refused = decide.workflow_refusal("`w.yml` has no `workflow_dispatch` trigger")
    assert refused.rule == "CFG002" and refused.reason.startswith("CFG002: `w.yml`")
    assert decide.head_moved(OLD).reason.startswith(f"the PR's head moved to `{OLD[:12]}`")


def test_who_may_ask_is_settled_before_what_is_asked_for() -> None:
    outsider = Actor("outsider", "read", trusted=False, maintainer=False)
    refused = decide.may_request(outsider, force=False, config=CONFIG)
    assert refused is not None and refused.reason.startswith("@outsider has `read` permission")
    forced = decide.may_request(DEV, force=True, config=CONFIG)
    assert forced is not None and "`--force` may be used by" in forced.reason
    assert decide.may_request(DEV, force=False, config=CONFIG) is None
    assert decide.may_request(LEAD, force=True, config=CONFIG) is None
    approving = decide.may_approve(DEV, CONFIG)
    assert approving is not None and "may be approved by" in approving.reason
    assert decide.may_approve(LEAD, CONFIG) is None


def test_a_refusal_names_the_first_paths_and_counts_the_rest() -> None:
    paths = [f"t/{n}.py" for n in range(30)]
    tests, problems = decide.named_tests(paths, {}, set())
    reason = decide.named_refusal(problems).reason
    assert tests == [] and reason.count("is not a file at the head") == 20
    assert reason.endswith("; …and 10 more.")
    failing = [SelectedTest(p, "s", 60, 1) for p in paths]
    blocked = decide.screen(DEV, failing, force=False, failing=paths, config=CONFIG)
    assert blocked is not None and blocked.reason.count("`t/") == 20
    assert ", …and 10 more have error findings" in blocked.reason


def test_a_retry_with_nothing_failed_says_why() -> None:
    head = "ab" * 20
    assert decide.nothing_failed(head, 1, True).reason.startswith(
        "no ROCm test has failed in its last run: 1 ROCm test of head `abababababab` is still running.")
    assert decide.nothing_failed(head, 0, True).reason == (
        "no ROCm test failed on head `abababababab`: nothing to run again.")
    assert "`/run-amd` runs the selection" in decide.nothing_failed(head, 0, False).reason
