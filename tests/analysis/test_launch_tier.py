"""A library change reaches the tests whose launches run it (tier `launch`): through the
program a launch starts and what that imports; where the program is not known statically,
the repository's own CI decides, and the reason says so."""

from __future__ import annotations

from bench.gpu_minutes import ARGUMENTS, BACKEND, LAUNCHING, TRAIN
from bot.analysis.engine import analyze
from bot.analysis.report import Report
from bot.analysis.tree import GitRepository
from tests.gitrepo import GitRepo

WORKFLOW = """\
on: pull_request
jobs:
  stage-c-4-gpu-mi350:
    runs-on: [self-hosted, mi350]
    steps:
      - run: python tests/ci/run_suite.py --suite stage-c-4-gpu-mi350
"""

TEST = """\
from tests.e2e._common import CaseConfig, execute

register_rocm_ci(600, "stage-c-4-gpu-mi350")

execute(CaseConfig(num_gpus_per_node=4, tp_size=2))
"""

UNKNOWN_PROGRAM = """\
from launcher_elsewhere import execute_train

register_rocm_ci(600, "stage-c-4-gpu-mi350")

execute_train("--tensor-model-parallel-size 2 --actor-num-gpus-per-node 4")
"""

FILES = {
    ".github/workflows/pr-rocm.yml": WORKFLOW,
    "tests/__init__.py": "",
    "tests/e2e/__init__.py": "",
    "tests/e2e/_common.py": LAUNCHING,
    "tests/e2e/test_launched.py": TEST,
    "train.py": TRAIN,
    "trainlib/__init__.py": "",
    "trainlib/arguments.py": ARGUMENTS,
    "trainlib/backend.py": BACKEND,
    "trainlib/unused.py": "X = 1\n",
}


def _analyze(repo: GitRepo, base: str, head: str) -> Report:
    with GitRepository(repo.root) as git:
        return analyze(git.tree(base), git.tree(head))


def test_a_module_train_py_imports_selects_the_tests_that_launch_it(git_repo: GitRepo) -> None:
    git_repo.write_all(FILES)
    base = git_repo.commit()
    git_repo.write("trainlib/arguments.py", ARGUMENTS + "# a new flag\n")
    report = _analyze(git_repo, base, git_repo.commit())
    (picked,) = report.selected
    assert (picked.path, picked.tier, picked.trigger) == (
        "tests/e2e/test_launched.py", "launch", "trainlib/arguments.py")
    assert picked.reason == ("`trainlib/arguments.py`, imported by `train.py`, which this test "
                             "launches (launched by `execute_train`)")


def test_the_entry_point_itself_and_a_module_nothing_runs(git_repo: GitRepo) -> None:
    git_repo.write_all(FILES)
    base = git_repo.commit()
    git_repo.write("train.py", TRAIN + "# logged\n")
    (picked,) = _analyze(git_repo, base, git_repo.commit()).selected
    assert picked.reason.startswith("`train.py`, which this test launches")
    base = git_repo.commit()
    git_repo.write("trainlib/unused.py", "X = 2\n")
    assert _analyze(git_repo, base, git_repo.commit()).selected == []


def test_a_program_not_known_statically_defers_to_the_repository_ci(git_repo: GitRepo) -> None:
    git_repo.write_all({**FILES, "tests/e2e/test_dynamic.py": UNKNOWN_PROGRAM})
    base = git_repo.commit()
    git_repo.write("trainlib/unused.py", "X = 2\n")
    report = _analyze(git_repo, base, git_repo.commit())
    (picked,) = report.selected
    assert (picked.path, picked.tier) == ("tests/e2e/test_dynamic.py", "launch")
    assert "not known statically" in picked.reason and "repository's own CI runs it" in picked.reason
