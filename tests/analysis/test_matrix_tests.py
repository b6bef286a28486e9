"""Tests a workflow job lists in its `strategy.matrix` (slime's registration), and the
notices of what an analysis could not use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.analysis.ci.matrix import MAX_NOTICES, read_matrices
from bot.analysis.engine import analyze, audit
from bot.analysis.report import Report, TestEntry
from bot.analysis.tree import GitRepository
from bot.analysis.workflows import Workflow, parse_workflow
from bot.formats import FORMATS, markdown
from config.repo import defaults
from tests.gitrepo import GitRepo

HARNESS = '''
def execute_train(train_args, num_gpus_per_node, megatron_model_type=None):
    raise SystemExit("runs on a GPU runner: " + train_args)
'''

TEST = '''
import slime.utils.command_utils as U

NUM_GPUS = {gpus}


def execute():
    perf_args = (
        "--tensor-model-parallel-size {tp} "
        "--pipeline-model-parallel-size 1 "
        "--context-parallel-size 1 "
    )
    misc_args = (
        "--actor-num-nodes 1 "
        "--actor-num-gpus-per-node {gpus} "
        "--rollout-num-gpus-per-engine 2 "
        "--colocate "
    )
    U.execute_train(train_args=f"{{perf_args}} {{misc_args}}", num_gpus_per_node=NUM_GPUS)


if __name__ == "__main__":
    execute()
'''

WORKFLOW = '''
name: PR Test
on:
  pull_request:
    types: [opened, synchronize, labeled]
jobs:
  e2e-test-megatron:
    if: contains(github.event.pull_request.labels.*.name, 'run-ci-megatron')
    runs-on: self-hosted
    strategy:
      fail-fast: false
      matrix:
        info:
          [
            {"num_gpus": 8, "test_file": "test_ppo.py"},
            {"num_gpus": 4, "test_file": "test_short.py"},
            {"num_gpus": 4, "test_file": "test_gone.py"}
          ]
    steps:
      - run: |
          docker run --rm --gpus all -e TEST_FILE="${{ matrix.info.test_file }}" img \\
            python "tests/$TEST_FILE"
  cpu-unittest:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        include:
          - {num_gpus: 0, test_file: test_units.py}
    steps:
      - run: python tests/${{ matrix.test_file }}
  e2e-test-changed:
    runs-on: self-hosted
    strategy:
      matrix: ${{ fromJson(needs.detect.outputs.matrix) }}
    steps:
      - run: python tests/x.py
  npu-e2e:
    runs-on: linux-npu-a3
    strategy:
      matrix:
        include:
          - {test_case: npu/test_npu.py}
    steps:
      - run: python ${{ matrix.test_case }}
'''


@pytest.fixture
def slime_like(git_repo: GitRepo) -> tuple[GitRepo, str]:
    git_repo.write_all({
        "slime/__init__.py": "",
        "slime/utils/__init__.py": "",
        "slime/utils/command_utils.py": HARNESS,
        "tests/test_ppo.py": TEST.format(gpus=8, tp=2),
        "tests/test_short.py": TEST.format(gpus=4, tp=2),
        "tests/test_units.py": "def test_one():\n    assert 1 + 1 == 2\n",
        ".github/workflows/pr-test.yml": WORKFLOW,
    })
    return git_repo, git_repo.commit("base")


def _audit(repo: GitRepo, rev: str = "HEAD") -> Report:
    with GitRepository(repo.root) as git:
        return audit(git.tree(rev))


def _entries(report: Report, path: str) -> list[TestEntry]:
    return [t for t in report.tests if t.path == path]


def test_matrix_entries_are_tests_with_the_jobs_suite_gpus_backend_and_cadence(
    slime_like: tuple[GitRepo, str],
) -> None:
    repo, _ = slime_like
    report = _audit(repo)
    (ppo,) = _entries(report, "tests/test_ppo.py")
    assert (ppo.suite, ppo.gpus, ppo.backend) == ("e2e-test-megatron", 8, "cuda")
    assert (ppo.cadence, ppo.gate) == ("on-label", "run-ci-megatron")
    assert ppo.registered == ".github/workflows/pr-test.yml:14"
    assert ppo.launch == "checked"
    (units,) = _entries(report, "tests/test_units.py")
    assert (units.backend, units.suite, units.gpus, units.launch) == ("cpu", "cpu-unittest", 0, None)
    assert _entries(report, "tests/test_gone.py") == []
    assert not [f for f in report.findings if f.severity.value == "error"]
    doc = json.loads(FORMATS["json"](report))
    assert {t["registered"] for t in doc["tests"]} >= {".github/workflows/pr-test.yml:14"}


def test_a_matrix_entry_whose_gpus_do_not_fit_the_launch_is_an_error(
    slime_like: tuple[GitRepo, str],
) -> None:
    repo, base = slime_like
    text = (repo.root / ".github/workflows/pr-test.yml").read_text()
    (repo.root / ".github/workflows/pr-test.yml").write_text(
        text.replace('{"num_gpus": 8, "test_file": "test_ppo.py"}',
                     '{"num_gpus": 4, "test_file": "test_ppo.py"}'))
    head = repo.commit("fewer GPUs")
    with GitRepository(repo.root) as git:
        report = analyze(git.tree(base), git.tree(head))
    (ppo,) = _entries(report, "tests/test_ppo.py")
    assert ppo.gpus == 4 and ppo.change != "unchanged"
    errors = [f for f in report.findings if f.severity.value == "error"]
    assert errors and all(f.test == "tests/test_ppo.py" and f.baseline == "new" for f in errors)
    assert {f.rule for f in errors} == {"PAR003"}
    assert "8" in errors[0].message and "4" in errors[0].message


def test_what_the_matrices_could_not_give_is_a_notice(slime_like: tuple[GitRepo, str]) -> None:
    repo, _ = slime_like
    report = _audit(repo)
    messages = [n.message for n in report.notices]
    assert any("`test_gone.py`, which is not in the repository" in m and "`tests/test_gone.py`" in m
               for m in messages)
    assert any("`e2e-test-changed`" in m and "computed when the workflow runs" in m for m in messages)
    assert not any("npu" in m for m in messages)  # other hardware is another CI's
    assert all(n.kind != "no-tests" for n in report.notices)


def test_a_job_whose_hardware_nothing_says_is_a_notice_and_the_configuration_decides(
    git_repo: GitRepo,
) -> None:
    git_repo.write_all({
        "tests/test_a.py": "print('a')\n",
        ".github/workflows/ci.yml": """
            on: [pull_request]
            jobs:
              e2e:
                runs-on: self-hosted
                strategy:
                  matrix:
                    include: [{test_file: tests/test_a.py, num_gpus: 2}]
                steps:
                  - run: python ${{ matrix.test_file }}
            """,
    })
    git_repo.commit()
    report = _audit(git_repo)
    assert [t.backend for t in report.tests] == ["cuda"]
    (notice,) = [n for n in report.notices if n.kind == "hardware"]
    assert "`e2e`" in notice.message and notice.fix is not None and "backends" in notice.fix
    git_repo.write(".github/rocmbot.yml", "matrix_tests:\n  backends: {e2e: rocm}\n")
    git_repo.commit()
    report = _audit(git_repo)
    assert [t.backend for t in report.tests] == ["rocm"]
    assert not [n for n in report.notices if n.kind == "hardware"]
    git_repo.write(".github/rocmbot.yml", "matrix_tests:\n  enabled: false\n")
    git_repo.commit()
    assert _audit(git_repo).tests == []


def test_amd_docker_flags_make_a_rocm_job_and_an_unread_key_is_named(git_repo: GitRepo) -> None:
    git_repo.write_all({
        "tests/test_a.py": "print('a')\n",
        "tests/test_b.py": "print('b')\n",
        ".github/workflows/ci.yml": """
            on: [pull_request]
            jobs:
              amd:
                runs-on: self-hosted
                strategy:
                  matrix:
                    include: [{test_file: test_a.py, num_gpus: 2}]
                steps:
                  - run: docker run --device /dev/kfd --device /dev/dri img python ${{ matrix.test_file }}
              other:
                runs-on: self-hosted
                strategy:
                  matrix:
                    case: [tests/test_b.py]
                steps:
                  - run: python ${{ matrix.case }}
            """,
    })
    git_repo.commit()
    report = _audit(git_repo)
    assert [(t.path, t.backend, t.cadence) for t in report.tests] == [("tests/test_a.py", "rocm", "per-pr")]
    (notice,) = [n for n in report.notices if "`case`" in n.message]
    assert notice.fix is not None and "file_keys: [test_file, case]" in notice.fix


def test_slime_conventions_are_inferred_from_the_slime_package(git_repo: GitRepo) -> None:
    # slime: colocated rollout GPUs are --rollout-num-gpus when set; miles: always the world
    files = {
        "tests/test_a.py": """
            import x.command_utils as U

            register_rocm_ci(60, "stage-a-8-gpu-mi350")
            U.execute_train(
                train_args="--actor-num-gpus-per-node 8 --colocate --rollout-num-gpus 3 "
                "--rollout-num-gpus-per-engine 2",
                num_gpus_per_node=8,
            )
            """,
        "x/__init__.py": "",
        "x/command_utils.py": HARNESS,
    }
    git_repo.write_all(files)
    git_repo.commit()
    assert not [f for f in _audit(git_repo).findings if f.rule == "PAR004"]  # miles: R = 8
    git_repo.write("slime/__init__.py", "")
    git_repo.commit()
    assert [f.rule for f in _audit(git_repo).findings if f.rule == "PAR004"] == ["PAR004"]  # R = 3


def test_matrix_expansion_follows_github() -> None:
    workflow = parse_workflow("w.yml", """
        on: push
        jobs:
          a:
            runs-on: x
            strategy:
              matrix:
                os: [u, w]
                gpus: [1, 2]
                exclude: [{os: u, gpus: 2}]
                include:
                  - {os: u, extra: yes}
                  - {os: z, gpus: 8}
                  - {os: z, gpus: 4}
          b:
            strategy:
              matrix: ${{ fromJSON(needs.x.outputs.m) }}
          c:
            strategy:
              matrix:
                n: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]
                m: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]
          d:
            runs-on: x
          e:
            strategy:
              matrix:
                include: [{test_file: a.py, num_gpus: 1}, {test_file: b.py, num_gpus: 2}]
    """.replace("\n        ", "\n"))
    assert isinstance(workflow, Workflow)
    a, b, c, d, e = workflow.jobs
    assert e.matrix is not None  # a matrix of `include` alone: one combination per entry
    assert [dict(r.values) for r in e.matrix.rows] == [{"test_file": "a.py", "num_gpus": "1"},
                                                       {"test_file": "b.py", "num_gpus": "2"}]
    assert a.matrix is not None and b.matrix is not None and c.matrix is not None
    rows = [dict(r.values) for r in a.matrix.rows]
    assert rows == [
        {"os": "u", "gpus": "1", "extra": "yes"},
        {"os": "w", "gpus": "1"},
        {"os": "w", "gpus": "2"},
        {"os": "z", "gpus": "8"},
        {"os": "z", "gpus": "4"},  # an added combination is not extended by the next `include`
    ]
    assert b.matrix.rows == () and "fromJSON" in (b.matrix.computed or "")
    assert len(c.matrix.rows) == 256 and c.matrix.truncated
    assert d.matrix is None


def test_a_marker_the_configuration_does_not_know_is_a_notice_with_the_line_that_maps_it(
    git_repo: GitRepo,
) -> None:
    git_repo.write_all({
        "test/test_a.py": 'register_hcu_ci(60, "stage-a-1-gpu", disabled="flaky")\n',
        "test/test_b.py": 'register_npu_ci(60, "npu-suite")\n',
    })
    git_repo.commit()
    report = _audit(git_repo)
    assert report.tests == []
    kinds = [n.kind for n in report.notices]
    assert kinds == ["unknown-marker", "unknown-marker", "no-tests"]
    hcu, npu, nothing = report.notices
    assert "`register_hcu_ci(...)`" in hcu.message and "1 test file" in hcu.message
    assert hcu.fix is not None and "`markers: {register_hcu_ci: rocm}`" in hcu.fix
    assert "`register_npu_ci` (1 test file)" in npu.message and npu.fix is None
    assert "`register_rocm_ci`" in nothing.message and "`tests/`, `test/`" in nothing.message
    git_repo.write(".github/rocmbot.yml", "markers: {register_hcu_ci: rocm}\n")
    git_repo.commit()
    report = _audit(git_repo)
    assert [(t.path, t.disabled) for t in report.tests] == [("test/test_a.py", "flaky")]
    assert [n.kind for n in report.notices] == ["unknown-marker"]


def test_notices_reach_the_text_the_summary_and_the_check_run(git_repo: GitRepo) -> None:
    git_repo.write_all({
        "test/test_a.py": 'register_hcu_ci(60, "stage-a-1-gpu")\n',
        "tests/test_broken.py": 'register_rocm_ci(60, "stage-a-1-gpu"\n',
        ".github/workflows/broken.yml": "on: [push\njobs: {}\n",
        ".github/workflows/rocm.yml": """
            on: [pull_request]
            jobs:
              e2e-test-amd:
                runs-on: linux-mi300-gpu-1
                steps:
                  - run: python tests/run_all.py
            """,
    })
    git_repo.commit()
    report = _audit(git_repo)
    kinds = {n.kind for n in report.notices}
    assert {"unknown-marker", "workflow", "unreadable", "unmapped-job"} <= kinds
    (unread,) = [n for n in report.notices if n.kind == "unreadable"]
    assert "`tests/test_broken.py`" in unread.message
    (job,) = [n for n in report.notices if n.kind == "unmapped-job"]
    assert "`e2e-test-amd` in `.github/workflows/rocm.yml`" in job.message
    text = FORMATS["text"](report)
    assert f"Not understood ({len(report.notices)} notices):" in text
    assert "-v lists them" in text
    assert text.count("\n- ") == 4  # three notices and the line that counts the rest
    summary = markdown.render(report)
    assert summary.count("<summary>Not understood:") == 1
    assert "register_hcu_ci" in summary


def test_analyze_of_a_pr_changing_a_matrix_entry_only_reads_it_as_modified(
    slime_like: tuple[GitRepo, str],
) -> None:
    repo, base = slime_like
    text = (repo.root / ".github/workflows/pr-test.yml").read_text()
    (repo.root / ".github/workflows/pr-test.yml").write_text(
        text.replace('{"num_gpus": 4, "test_file": "test_short.py"},\n', ""))
    head = repo.commit("drop a test")
    with GitRepository(repo.root) as git:
        report = analyze(git.tree(base), git.tree(head))
    (short,) = _entries(report, "tests/test_short.py")
    assert short.change == "removed"
    (ppo,) = _entries(report, "tests/test_ppo.py")
    assert ppo.change == "unchanged"


def test_matrices_read_directly_give_each_use_or_a_notice_of_why_not() -> None:
    """A computed matrix with `include` rows still gives those rows; a file named by an
    expression, a count of GPUs that is no number, NVIDIA's docker flags, a matrix larger than
    GitHub runs and more notices than are shown (counted, not listed)."""
    missing = ", ".join(f"{{test_file: gone_{i}.py, num_gpus: 1}}" for i in range(MAX_NOTICES + 3))
    tests = ", ".join(f"t{i}.py" for i in range(17))
    plan = "needs.plan.outputs." + "shard_" * 20
    workflow = parse_workflow("w.yml", f"""
        on: pull_request
        jobs:
          test-computed:
            runs-on: self-hosted
            strategy:
              matrix:
                shard: ${{{{ fromJSON({plan}) }}}}
                include: [{{test_file: tests/a.py, num_gpus: 2}}]
            steps: [{{run: "docker run --gpus all img python ${{{{ matrix.test_file }}}}"}}]
          named:
            runs-on: self-hosted
            strategy:
              matrix:
                include:
                  - {{test_file: "${{{{ inputs.file }}}}", num_gpus: 1}}
                  - {{test_file: tests/b.py, num_gpus: many}}
            steps: [{{run: "docker run --device=/dev/kfd img"}}]
          big:
            runs-on: linux-mi300-gpu-1
            strategy:
              matrix:
                test_file: [{tests}]
                n: [{tests}]
          lost:
            runs-on: linux-mi300-gpu-1
            strategy:
              matrix:
                include: [{missing}]
    """.replace("\n        ", "\n"))
    assert isinstance(workflow, Workflow)
    files = {"tests/a.py", "tests/b.py", *(f"tests/t{i}.py" for i in range(17))}
    found = read_matrices({"w.yml": workflow}, defaults(), files.__contains__)
    (a,) = found.markers["tests/a.py"]
    assert (a.suite, a.gpus, a.backend) == ("test-computed", 2, "cuda")  # NVIDIA's --gpus
    (b,) = found.markers["tests/b.py"]
    assert (b.suite, b.gpus, b.backend) == ("named", None, "rocm")
    assert len(found.markers["tests/t0.py"]) == 17 and found.jobs["big"] == (("w.yml", "big"),)
    messages = [n.message for n in found.notices]
    computed = next(m for m in messages if "computed when the workflow runs" in m)
    assert "..." in computed and len(computed) < 300  # the expression, shortened
    assert any("names a test file by an expression" in m for m in messages)
    assert any("more matrix combinations than GitHub runs (256)" in m for m in messages)
    # 26 of a kind: the first MAX_NOTICES, then a count of the rest
    assert sum("which is not in the repository" in m for m in messages) == MAX_NOTICES - 3
    assert messages[-1] == f"{26 - MAX_NOTICES} more `test-list` notices like these"


def test_nothing_found_under_the_configured_globs_says_where_it_looked(git_repo: GitRepo) -> None:
    config = "tests: ['suite/**/test_*.py']\nmatrix_tests: {enabled: false}\n"
    git_repo.write_all({".github/rocmbot.yml": config, "suite/test_a.py": "print('no marker')\n"})
    git_repo.commit()
    (nothing,) = _audit(git_repo).notices
    assert nothing.kind == "no-tests"
    assert "the files the `tests:` globs match (`suite/**/test_*.py`)" in nothing.message
    assert "(job matrices not read: `matrix_tests.enabled`)" in nothing.message


def test_the_workflow_rocmbot_dispatches_is_not_read_for_matrix_tests(git_repo: GitRepo) -> None:
    """Its matrix is the tests rocmbot sends it: nothing to list, nothing to notice."""
    template = (Path(__file__).parents[2] / "config" / "workflows" / "rocm-targeted.yml").read_text()
    git_repo.write_all({".github/workflows/rocm-targeted.yml": template,
                        ".github/workflows/elsewhere.yml": template})
    git_repo.commit()
    notices = _audit(git_repo).notices
    assert [n.path for n in notices if "computed when the workflow runs" in n.message] == [
        ".github/workflows/elsewhere.yml"]
