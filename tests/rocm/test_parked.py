"""`/run-amd disabled`: the parked tests it runs, what it refuses, and how it is dispatched."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bot.rocm import decide
from bot.rocm.ready import passed
from bot.store.dispatch import Dispatch, JobOutcome, ParkedTest, SelectedTest

HEAD = "h" * 40
SUITE = "stage-c-4-gpu-mi350"
TEMPLATE = (Path(__file__).parents[2] / "config" / "workflows" / "rocm-targeted.yml").read_bytes()


@dataclass(frozen=True)
class Marker:
    path: str
    suite: str | None
    backend: str = "rocm"
    disabled: str | None = "FIXME"
    est_time: float | None = 1600
    gpus: int | None = 4
    cadence: str | None = "per-pr"


@dataclass(frozen=True)
class Problem:
    rule: str


@dataclass(frozen=True)
class Parked:
    path: str
    suite: str | None
    candidate: bool
    why: str
    backend: str = "rocm"
    problems: list[Problem] = field(default_factory=list)


def _parked(path: str, *, candidate: bool = True, why: str = "its launch is checked and valid.",
            rules: tuple[str, ...] = ()) -> ParkedTest:
    return ParkedTest(SelectedTest(path, SUITE, 1600, 4, parked=True), candidate, why, rules)


def test_the_parked_rocm_tests_carry_their_markers_time_and_gpus() -> None:
    found = [Marker("a.py", SUITE), Marker("a.py", "stage-c-8-gpu-h200", backend="cuda", gpus=8),
             Marker("b.py", SUITE, est_time=None)]
    fails = [Problem("PAR002")] * 2
    parked = [Parked("a.py", SUITE, True, "valid."),
              Parked("a.py", "stage-c-8-gpu-h200", True, "valid.", "cuda"),
              Parked("b.py", SUITE, False, "its launch would fail: PAR002.", problems=fails),
              Parked("c.py", None, True, "valid.")]  # no suite: nothing to run it on
    got = decide.parked_tests(found, parked)
    assert got == [
        ParkedTest(SelectedTest("a.py", SUITE, 1600, 4, parked=True), True, "valid."),
        ParkedTest(SelectedTest("b.py", SUITE, None, 4, parked=True), False, "its launch would fail: PAR002.",
                   ("PAR002",)),
    ]
    assert got[0].test.gpu_minutes == 1600 / 60 * 4


def test_with_no_candidate_the_answer_is_one_line_with_each_why() -> None:
    none = decide.no_candidate([])
    assert none.reason.startswith("this PR has no parked ROCm test to run.") and "\n" not in none.reason
    parked = [_parked("a.py", candidate=False, why="its launch would fail: PAR002 (fix: `ep_size=2`)."),
              _parked("b.py", candidate=False,
                      why="its launch is checked and valid; this PR does not touch it.")]
    reason = decide.no_candidate(parked).reason
    assert "\n" not in reason
    assert reason == (
        "no parked ROCm test of this PR can come back: `a.py`: its launch would fail: PAR002 \\(fix: "
        "`ep_size=2`\\); `b.py`: its launch is checked and valid; this PR does not touch it. "
        "`/run-amd disabled <path>` runs a named one.")


def test_named_parked_tests_are_found_or_each_is_refused_in_one_line() -> None:
    parked = [_parked("a.py", candidate=False), _parked("bad.py", rules=("PAR002", "PAR005"))]
    named = ["`./a.py`", "on.py", "README.md", "gone.py", "bad.py"]
    tests, problems = decide.named_parked(named, parked, {"on.py"}, {"README.md"}, force=False)
    assert tests == [parked[0].test] and tests[0].parked  # a named one runs, candidate or not
    assert problems == [
        "`on.py` is not parked: its ROCm marker is enabled (`/run-amd <path>` runs it)",
        "`README.md` has no disabled ROCm marker",
        "`gone.py` is not a file at the head",
        "the launch of `bad.py` would fail (PAR002, PAR005): a maintainer can add `--force`",
    ]
    assert "\n" not in decide.named_refusal(problems).reason
    forced, none = decide.named_parked(["bad.py"], parked, set(), set(), force=True)
    assert forced == [parked[1].test] and none == []


def test_parked_tests_are_dispatched_with_include_disabled_and_only_they() -> None:
    parked = SelectedTest("a.py", SUITE, 1600, 4, parked=True)
    enabled = SelectedTest("b.py", "stage-b-1-gpu-mi350", 60, 1)
    steps = decide.plan("o/r", 1, HEAD, [parked, enabled], "comment:1", [])
    assert [(s.suite, s.include_disabled) for s in steps if isinstance(s, decide.Send)] == [
        ("stage-b-1-gpu-mi350", False), (SUITE, True)]
    # the same tests, parked or not, are the same test set: one approval, one dispatch id
    assert decide.digest([parked]) == decide.digest([SelectedTest("a.py", SUITE, 1600, 4)])


def test_a_dispatch_of_parked_tests_needs_the_include_disabled_input() -> None:
    assert decide.workflow_problem(TEMPLATE, "t.yml", disabled=True) is None
    old = TEMPLATE.replace(b"      include_disabled:\n", b"      something_else:\n")
    assert decide.workflow_problem(old, "t.yml") is None  # enough for every other dispatch
    problem = decide.workflow_problem(old, "t.yml", disabled=True)
    assert problem == "`t.yml` does not declare the input `include_disabled` that rocmbot sends"


def test_a_parked_test_round_trips_through_its_stored_form() -> None:
    stored = _parked("a.py", candidate=False, why="w.", rules=("PAR002",))
    assert ParkedTest.from_dict(stored.as_dict()) == stored
    plain = SelectedTest("b.py", SUITE, 60, 1)
    assert "parked" not in plain.as_dict() and SelectedTest.from_dict(plain.as_dict()) == plain
    assert SelectedTest.from_dict(stored.test.as_dict()).parked


def test_a_parked_test_passed_when_its_jobs_last_news_of_the_last_attempt_is_a_success() -> None:
    def run(status: str, conclusion: str | None, *, parked: bool = True, attempt: int = 1) -> Dispatch:
        return Dispatch("d", "o/r", 7, "f" * 40, "s", ["a.py", "b.py", "c.py"], 10.0, "lead", status,
                        conclusion, 1, None, 2, 0.0, attempt, None, parked)

    def job(path: str, conclusion: str, attempt: int = 1) -> JobOutcome:
        return JobOutcome(path, 1, "completed", conclusion, None, 1.0, attempt)

    outcomes = {"a.py": job("a.py", "success"), "b.py": job("b.py", "failure")}
    assert passed(run("completed", "failure"), outcomes) == ["a.py"]
    assert passed(run("completed", "success"), outcomes) == ["a.py", "c.py"]  # c: no news, the run passed
    assert passed(run("completed", "success", attempt=2), outcomes) == ["c.py"]  # a: an earlier attempt's
    assert passed(run("in_progress", None), outcomes) == []
    assert passed(run("completed", "success", parked=False), outcomes) == []  # not a parked test's run
