"""The PR's labels decide what the repository's own CI runs: the summary says which label to add
and what its CI runs once the PR carries it; a label change analyses the head again and
dispatches only tests no run of that head has had."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ghsim.state import PullRequest
from tests.analysis.ci_fixtures import GATE, PR_AMD_EXTRA, RUN_SUITE
from tests.e2e.conftest import TEMPLATE, World, make_world

# The per-PR AMD jobs behind the `run-ci` gate: `stage-a` for library and test changes, the jit
# suite only for `python/kernels/**` (a `dorny/paths-filter` output).
PR_AMD = """\
name: PR Test (AMD)
on:
  pull_request:
jobs:
  call-gate:
    uses: ./.github/workflows/gate.yml
  check-changes:
    runs-on: ubuntu-latest
    outputs:
      main_package: ${{ steps.filter.outputs.main_package }}
      jit_kernel: ${{ steps.filter.outputs.jit_kernel }}
    steps:
      - id: filter
        uses: dorny/paths-filter@v3
        with:
          filters: |
            main_package:
              - "python/sglang/**"
              - "test/**/!(*.md)"
            jit_kernel:
              - "python/kernels/**"
  stage-a-test-1-gpu-small-amd:
    needs: [check-changes, call-gate]
    if: needs.check-changes.outputs.main_package == 'true'
    runs-on: linux-mi300-1gpu-sglang
    steps:
      - run: python3 run_suite.py --hw amd --suite stage-a-test-1-gpu-small-amd
  jit-kernel-unit-test-amd:
    needs: [check-changes, call-gate]
    if: needs.check-changes.outputs.jit_kernel == 'true'
    runs-on: linux-mi300-1gpu-sglang
    steps:
      - run: python3 run_suite.py --hw amd --suite jit-kernel-unit-test-amd
"""

MARKER = """\
from sglang.test.ci.ci_register import register_amd_ci

register_amd_ci(est_time=60, suite="{suite}")
"""

PER_PR = "test/registered/test_stage_a.py"  # run by the repository's CI for this PR
JIT = "test/registered/test_jit_kernel.py"  # its filter does not match: run by rocmbot only
EXTRA = "test/registered/test_extra.py"  # run by the repository's CI only with `run-ci-extra`
SUITES = {PER_PR: "stage-a-test-1-gpu-small-amd", JIT: "jit-kernel-unit-test-amd",
          EXTRA: "extra-a-test-1-gpu-small-amd"}
FILES = {
    ".github/workflows/gate.yml": GATE,
    ".github/workflows/pr-amd.yml": PR_AMD,
    ".github/workflows/pr-amd-extra.yml": PR_AMD_EXTRA,
    ".github/workflows/rocm-targeted.yml": TEMPLATE,
    # each test costs a GPU-minute: the budget holds the head's tests once, not twice
    ".github/rocmbot.yml": "suites:\n  jit-kernel-unit-test-amd: {gpus: 1}\n"
                           "dispatch:\n  budget_gpu_minutes_per_head: 2.5\n",
    "test/run_suite.py": RUN_SUITE,
    **{path: MARKER.format(suite=suite) for path, suite in SUITES.items()},
}
DISPATCHES = "/repos/*/actions/workflows/*/dispatches"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, FILES)


def _opened_with(world: World, labels: list[str]) -> PullRequest:
    """A PR changing the three tests, opened with ``labels``."""
    pr = world.open_pr({path: text + "# changed\n" for path, text in FILES.items() if path in SUITES})
    world.sim.state.add_labels(world.repo, pr.number, labels)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    return pr


def _dispatched(world: World) -> list[tuple[str, str, str]]:
    """(suite, tests, head) of every run the bot dispatched, in order."""
    runs = sorted(world.sim.state.runs.values(), key=lambda r: r.id)
    return [(r.inputs["suite"], r.inputs["tests"], r.inputs["head_sha"]) for r in runs]


def _summary(world: World, pr: PullRequest) -> Any:
    (summary,) = world.bot_comments(pr)
    return summary


def test_the_gate_label_is_asked_for_then_counted_and_nothing_is_dispatched_twice(world: World) -> None:
    pr = _opened_with(world, ["run-ci"])
    first = _summary(world, pr)
    ask = "Add the `run-ci-extra` label to run 1 more affected test in the repository's own CI."
    assert ask in first.body
    assert "The repository's own CI runs 1 AMD test for this PR (with `run-ci`)" in first.body
    # the per-PR and the path-filtered tests run on ROCm; the label-gated one waits for its label
    assert sorted(_dispatched(world)) == [
        ("jit-kernel-unit-test-amd", JIT, pr.head_sha),
        ("stage-a-test-1-gpu-small-amd", PER_PR, pr.head_sha),
    ]
    assert all(EXTRA not in tests for _, tests, _ in _dispatched(world))
    dispatches = len(world.sim.state.find_calls("POST", DISPATCHES))
    for run in list(world.sim.state.runs.values()):
        world.sim.advance_run(run, "completed", "success", notify=True)
    world.settle()

    assert world.sim.add_label(pr, "run-ci-extra", sender="lead", notify=True)
    world.settle()
    after = _summary(world, pr)
    assert after.id == first.id  # the same sticky comment, edited
    assert "Add the `run-ci-extra` label" not in after.body
    assert ("The repository's own CI runs 2 AMD tests for this PR (with `run-ci`, `run-ci-extra`)"
            in after.body)
    assert ("With the `run-ci-extra` label this PR carries, the repository's own CI runs 1 more "
            "affected test.") in after.body
    assert f"`{PER_PR}`" in after.body and f"`{JIT}`" in after.body  # its runs are still shown
    assert len(world.sim.state.find_calls("POST", DISPATCHES)) == dispatches
    assert len(_dispatched(world)) == 2
    (check,) = world.checks(pr.head_sha)
    assert check.conclusion == "success"
    # one per run, both passed; no approval asked for a second round over the head's budget
    assert [c.conclusion for c in world.checks(pr.head_sha, "rocmbot / rocm")] == ["success", "success"]


def test_in_complement_mode_a_label_taken_off_dispatches_only_what_the_ci_no_longer_runs(
    tmp_path: Path,
) -> None:
    """With `dispatch.mode: complement` rocmbot skips what the repository's CI runs: taking the
    CI label off the PR leaves `stage-a` to rocmbot, which runs it, and runs the jit test it
    already ran no second time; putting the label back dispatches nothing."""
    policy = FILES[".github/rocmbot.yml"] + "  mode: complement\n"
    for world in make_world(tmp_path, {**FILES, ".github/rocmbot.yml": policy}):
        pr = _opened_with(world, ["run-ci"])
        assert _dispatched(world) == [("jit-kernel-unit-test-amd", JIT, pr.head_sha)]
        assert "Skipped 1 affected test the repository's own CI runs for this PR." in _summary(world, pr).body

        assert world.sim.remove_label(pr, "run-ci", sender="lead", notify=True)
        world.settle()
        assert _dispatched(world) == [("jit-kernel-unit-test-amd", JIT, pr.head_sha),
                                      ("stage-a-test-1-gpu-small-amd", PER_PR, pr.head_sha)]
        assert "Skipped 1 affected test" not in _summary(world, pr).body
        assert all(c.conclusion is None for c in world.checks(pr.head_sha, "rocmbot / rocm"))  # queued

        assert world.sim.add_label(pr, "run-ci", sender="lead", notify=True)
        world.settle()
        assert len(_dispatched(world)) == 2
        assert "Skipped 1 affected test the repository's own CI runs for this PR." in _summary(world, pr).body
        assert [d.action for d in world.sim.state.deliveries] == ["opened", "unlabeled", "labeled"]
