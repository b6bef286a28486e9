"""What the repository's own CI runs: suite cadences from workflow triggers, and the files
the per-PR ROCm environment reads (the environment selection tier)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.analysis.ci import ci_index, suite_gpus
from bot.analysis.ci.cadence import runner_gpus
from bot.analysis.ci.model import Event
from bot.analysis.engine import analyze, audit
from bot.analysis.report import Report, TestEntry
from bot.analysis.snapshot import Snapshot
from bot.analysis.tree import FolderTree, GitRepository
from config.repo import defaults, parse_config
from tests.gitrepo import GitRepo

PR_ROCM = """\
name: PR Test (ROCm)
on:
  pull_request:
  schedule:
    - cron: '0 15 * * *'
jobs:
  stage-c-4-gpu-mi350:
    uses: ./.github/workflows/_run-ci-rocm.yml
    with:
      run: python tests/ci/run_suite.py --hw rocm --suite stage-c-4-gpu-mi350
  nightly-only:
    if: github.event_name == 'schedule'
    uses: ./.github/workflows/_run-ci-rocm.yml
    with:
      run: python tests/ci/run_suite.py --hw rocm --suite stage-d-8-gpu-mi350
"""

RUN_ROCM = """\
name: ROCm CI
on:
  workflow_call:
    inputs:
      run: {type: string}
jobs:
  test:
    runs-on: [self-hosted, mi350]
    steps:
      - run: git apply docker/amd_patch/latest/*.patch
      - run: bash scripts/ci/install_rocm.sh
      - run: ${{ inputs.run }}
"""

NIGHTLY = """\
name: Nightly (ROCm)
on:
  schedule:
    - cron: '0 3 * * *'
jobs:
  nightly:
    runs-on: [self-hosted, mi350]
    steps:
      - run: bash scripts/ci/nightly_setup.sh
      - run: python tests/ci/run_suite.py --suite nightly-stage-c-8-gpu-mi350
"""

DOCKERFILE = """\
FROM rocm/sgl-dev:latest
COPY docker/amd_patch/sglang/ /tmp/sglang_patch/
COPY requirements.txt /tmp/requirements.txt
COPY . /miles
RUN pip install -r /tmp/requirements.txt
"""

PER_PR = "tests/e2e/test_per_pr.py"
SCHEDULED = "tests/e2e/test_scheduled.py"
NIGHTLY_TEST = "tests/e2e/test_nightly.py"
EXTERNAL = "tests/e2e/test_external.py"
FILES = {
    ".github/workflows/pr-test-rocm.yml": PR_ROCM,
    ".github/workflows/_run-ci-rocm.yml": RUN_ROCM,
    ".github/workflows/nightly-rocm.yml": NIGHTLY,
    "docker/Dockerfile.rocm": DOCKERFILE,
    "docker/amd_patch/latest/megatron.patch": "--- a\n+++ b\n",
    "docker/amd_patch/sglang/fix.patch": "--- a\n+++ b\n",
    "docker/npu_patch/megatron.patch": "--- a\n+++ b\n",
    "requirements.txt": "numpy\n",
    "scripts/ci/install_rocm.sh": "pip install polars\n",
    "scripts/ci/nightly_setup.sh": "echo nightly\n",
    "README.md": "a repository\n",
    "tests/__init__.py": "",
    PER_PR: 'register_rocm_ci(600, "stage-c-4-gpu-mi350")\n',
    SCHEDULED: 'register_rocm_ci(600, "stage-d-8-gpu-mi350")\n',
    NIGHTLY_TEST: 'register_rocm_ci(600, "nightly-stage-c-8-gpu-mi350")\n',
    EXTERNAL: 'register_rocm_ci(600, "stage-c-8-gpu-mi355")\n',
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def _entry(report: Report, path: str) -> TestEntry:
    (entry,) = [t for t in report.tests if t.path == path]
    return entry


def test_cadence_follows_the_events_of_the_jobs_that_name_a_suite(tmp_path: Path) -> None:
    report = audit(FolderTree(_write(tmp_path, FILES)))
    assert {t.path: t.cadence for t in report.tests} == {
        PER_PR: "per-pr",  # a job of a pull_request workflow names it
        SCHEDULED: "nightly",  # named only by a job that runs on the schedule
        NIGHTLY_TEST: "nightly",  # named only by a scheduled workflow
        EXTERNAL: "external",  # named by no workflow
    }
    assert [(f.rule, f.path, f.severity.value) for f in report.findings if f.rule == "REG001"] == [
        ("REG001", EXTERNAL, "info")]
    (reg,) = [f for f in report.findings if f.rule == "REG001"]
    assert reg.message == (
        "No workflow of this repository runs suite `stage-c-8-gpu-mi355`; if another repository's "
        "CI runs it, list it under `suites:` with `cadence: external` to silence this.")


def test_the_configuration_overrides_the_cadence_and_silences_reg001(tmp_path: Path) -> None:
    config = "suites:\n  stage-c-8-gpu-mi355: {cadence: external}\n  stage-d-8-gpu-mi350: {cadence: per-pr}\n"
    report = audit(FolderTree(_write(tmp_path, {**FILES, ".github/rocmbot.yml": config})))
    assert (_entry(report, EXTERNAL).cadence, _entry(report, SCHEDULED).cadence) == ("external", "per-pr")
    assert not [f for f in report.findings if f.rule == "REG001"]


def test_a_nightly_marker_is_nightly_and_cpu_markers_have_no_cadence(tmp_path: Path) -> None:
    files = {**FILES, PER_PR: 'register_rocm_ci(600, "stage-c-4-gpu-mi350", nightly=True)\n'
                              'register_cpu_ci(60, "stage-a-cpu")\n'}
    report = audit(FolderTree(_write(tmp_path, files)))
    rocm, cpu = sorted((t for t in report.tests if t.path == PER_PR), key=lambda t: t.backend != "rocm")
    assert (rocm.cadence, cpu.cadence, cpu.launch) == ("nightly", None, None)


def test_a_suite_named_outside_the_jobs_takes_the_workflows_events(tmp_path: Path) -> None:
    workflow = "on: schedule\nenv:\n  SUITE: stage-c-8-gpu-mi355\njobs:\n  a:\n    steps: []\n"
    report = audit(FolderTree(_write(tmp_path, {**FILES, ".github/workflows/other.yml": workflow})))
    assert _entry(report, EXTERNAL).cadence == "nightly"


@pytest.mark.parametrize(("caller", "expected"), [
    (None, "per-pr"),  # no caller here: called from elsewhere
    ("on: schedule\njobs:\n  a:\n    uses: ./.github/workflows/_called.yml\n", "nightly"),
    ("on: pull_request\njobs:\n  a:\n    if: github.event_name != 'pull_request'\n"
     "    uses: ./.github/workflows/_called.yml\n", "nightly"),
])
def test_a_reusable_workflow_runs_on_its_callers_events(tmp_path: Path, caller: str | None,
                                                          expected: str) -> None:
    called = ("on: workflow_call\njobs:\n  t:\n    steps:\n"
              "      - run: run_suite --suite stage-c-8-gpu-mi355\n")
    files = {**FILES, ".github/workflows/_called.yml": called}
    if caller:
        files[".github/workflows/caller.yml"] = caller
    assert _entry(audit(FolderTree(_write(tmp_path, files))), EXTERNAL).cadence == expected


def test_workflows_calling_each_other_in_a_cycle_end(tmp_path: Path) -> None:
    one = "on: [workflow_call, pull_request]\njobs:\n  a:\n    uses: ./.github/workflows/two.yml\n"
    two = ("on: workflow_call\njobs:\n  b:\n    uses: ./.github/workflows/one.yml\n  c:\n"
           "    steps:\n      - run: run_suite --suite stage-c-8-gpu-mi355\n")
    files = {".github/workflows/one.yml": one, ".github/workflows/two.yml": two,
             ".github/workflows/self.yml":
                 "on: workflow_call\njobs:\n  s:\n    uses: ./.github/workflows/self.yml\n",
             ".github/workflows/bad.yml": "on: [\n", EXTERNAL: FILES[EXTERNAL]}
    snap = Snapshot(FolderTree(_write(tmp_path, files)), defaults())
    index = ci_index(snap)
    assert index.cadence("stage-c-8-gpu-mi355", nightly=False).cadence == "per-pr"
    run = index.model.simulate(Event()).run((".github/workflows/self.yml", "s"))
    assert run is not None and run.runs is False  # only calls itself: nothing starts it


def _analyze(repo: GitRepo, base: str, head: str) -> Report:
    with GitRepository(repo.root) as git:
        return analyze(git.tree(base), git.tree(head))


@pytest.fixture
def ci_repo(git_repo: GitRepo) -> tuple[GitRepo, str]:
    git_repo.write_all(FILES)
    return git_repo, git_repo.commit("base")


@pytest.mark.parametrize("path", [
    "docker/amd_patch/latest/megatron.patch",  # a ROCm workflow step applies it (a glob)
    "docker/amd_patch/sglang/fix.patch",  # the ROCm image copies its folder
    "requirements.txt",  # the ROCm image copies it
    "scripts/ci/install_rocm.sh",  # a ROCm workflow step runs it
    ".github/workflows/_run-ci-rocm.yml",  # the reusable ROCm workflow a PR workflow calls
])
def test_a_file_the_rocm_environment_reads_selects_the_per_pr_rocm_tests(
        ci_repo: tuple[GitRepo, str], path: str) -> None:
    repo, base = ci_repo
    repo.write(path, (repo.root / path).read_text() + "# changed\n")
    report = _analyze(repo, base, repo.commit())
    assert (_entry(report, PER_PR).change, _entry(report, PER_PR).tier) == ("affected", "environment")
    assert [(s.path, s.tier) for s in report.selected] == [(PER_PR, "environment")]
    assert _entry(report, NIGHTLY_TEST).change == "affected"  # reported, not selected


@pytest.mark.parametrize("path", [
    "docker/npu_patch/megatron.patch",  # nothing ROCm reads it
    "README.md",  # the image copies the whole context (`COPY . /miles`): not the environment
    ".github/workflows/nightly-rocm.yml",  # a ROCm workflow that only runs on a schedule
    "scripts/ci/nightly_setup.sh",  # read only by that scheduled workflow
])
def test_a_file_no_per_pr_rocm_job_reads_selects_nothing(ci_repo: tuple[GitRepo, str], path: str) -> None:
    repo, base = ci_repo
    repo.write(path, (repo.root / path).read_text() + "# changed\n")
    report = _analyze(repo, base, repo.commit())
    assert report.selected == []
    assert all(t.change == "unchanged" for t in report.tests)


def test_only_per_pr_suites_are_selected_unless_configured(ci_repo: tuple[GitRepo, str]) -> None:
    repo, base = ci_repo
    for path in (PER_PR, SCHEDULED, NIGHTLY_TEST, EXTERNAL):
        repo.write(path, FILES[path] + "# touched\n")
    head = repo.commit()
    assert [s.path for s in _analyze(repo, base, head).selected] == [PER_PR]
    loaded = parse_config("select_nightly: true\nselect_external: true\n")
    with GitRepository(repo.root) as git:
        report = analyze(git.tree(base), git.tree(head), loaded=loaded)
    assert sorted(s.path for s in report.selected) == sorted([PER_PR, SCHEDULED, NIGHTLY_TEST, EXTERNAL])


def test_unreadable_workflows_and_dockerfiles_are_left_out(tmp_path: Path) -> None:
    files = {**FILES, ".github/workflows/binary.yml": "on: pull_request\x00\n",
             "docker/amd/Dockerfile.rocm": "FROM x\x00\n", "docker/Dockerfile": "FROM cuda\nCOPY a /a\n"}
    index = ci_index(Snapshot(FolderTree(_write(tmp_path, files)), defaults()))
    assert ".github/workflows/binary.yml" not in index.workflows
    assert list(index.rocm_images) == ["docker/Dockerfile.rocm"]


def test_a_reusable_workflow_a_rocm_workflow_calls_is_part_of_the_rocm_environment(tmp_path: Path) -> None:
    caller = "on: pull_request\njobs:\n  t:\n    uses: ./.github/workflows/_gpu.yml\n"
    called = "on: workflow_call\njobs:\n  g:\n    steps:\n      - run: bash scripts/ci/gpu_setup.sh\n"
    files = {".github/workflows/pr-amd.yml": caller, ".github/workflows/_gpu.yml": called}
    index = ci_index(Snapshot(FolderTree(_write(tmp_path, files)), defaults()))
    assert index.rocm_workflows() == [".github/workflows/_gpu.yml", ".github/workflows/pr-amd.yml"]
    assert index.environment(["scripts/ci/gpu_setup.sh", "scripts/other.sh"]) == ["scripts/ci/gpu_setup.sh"]
    assert index.environment([]) == []


def test_a_configured_glob_naming_a_scheduled_workflow_selects_nothing(ci_repo: tuple[GitRepo, str]) -> None:
    repo, base = ci_repo
    repo.write(".github/workflows/nightly-rocm.yml", NIGHTLY + "# changed\n")
    repo.write("docker/npu_patch/megatron.patch", "--- b\n")
    head = repo.commit()
    loaded = parse_config('environment: [".github/workflows/*rocm*.yml", "docker/npu_patch/*"]\n')
    with GitRepository(repo.root) as git:
        report = analyze(git.tree(base), git.tree(head), loaded=loaded)
    assert _entry(report, PER_PR).reasons[0] == \
        "the ROCm environment changed: `docker/npu_patch/megatron.patch`"  # not the workflow
    assert [s.path for s in report.selected] == [PER_PR]


def test_a_suite_is_named_where_the_whole_word_pattern_finds_it() -> None:
    import itertools
    import re

    from bot.analysis.ci.cadence import named as _named

    word = "stage-a-1"
    pieces = ["", " ", "x", ".", "-", "é", "\n", word, "stage-a-10", "_stage-a-1"]
    pattern = re.compile(rf"(?<![\w.-]){re.escape(word)}(?![\w.-])")
    for parts in itertools.product(pieces, repeat=3):
        text = "".join(parts)
        for start, end in ((0, len(text)), (1, len(text)), (0, max(len(text) - 1, 0)), (2, len(text) - 2)):
            expected = pattern.search(text, start, end) is not None
            assert _named(text, word, start, end) == expected, (text, start, end)


def test_what_a_helper_job_on_a_hosted_runner_reads_is_not_the_rocm_environment(tmp_path: Path) -> None:
    workflow = (
        "on: pull_request\njobs:\n"
        "  monitor:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: python parse.py .github/workflows/nightly-amd.yml\n"
        "  test:\n    runs-on: [self-hosted, mi300]\n    steps:\n      - run: bash scripts/ci/amd_setup.sh\n"
    )
    files = {".github/workflows/pr-amd-monitor.yml": workflow, "scripts/ci/amd_setup.sh": "true\n",
             ".github/workflows/nightly-amd.yml": "on: schedule\njobs: {}\n"}
    index = ci_index(Snapshot(FolderTree(_write(tmp_path, files)), defaults()))
    changed = [".github/workflows/nightly-amd.yml", "scripts/ci/amd_setup.sh"]
    assert index.environment(changed) == ["scripts/ci/amd_setup.sh"]


@pytest.mark.parametrize(("label", "gpus"), [
    ("linux-mi325-gpu-8", 8),
    ("linux-mi35x-gpu-8", 8),
    ("linux-mi300-1gpu-sglang", 1),
    ("${{ format('linux-{0}-2gpu-sglang', inputs.runner_arch || 'mi300') }}", 2),
    ("self-hosted stage-8-gpu-mi300", 8),
    ("${{ matrix.runner }}", None),
    ("ubuntu-latest", None),
    ("gb200-nvl", None),
    ("h100-runner", None),
    ("linux-mi300-gpu-1 linux-mi300-gpu-8", None),  # two counts: not known
])
def test_runner_gpus_from_its_label(label: str, gpus: int | None) -> None:
    assert runner_gpus(label) == gpus


def test_suite_gpus_from_the_label_of_its_jobs(tmp_path: Path) -> None:
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / ".github/workflows/amd.yml").write_text(
        "on: pull_request\njobs:\n"
        "  a:\n    runs-on: linux-mi325-gpu-8\n    steps: [{run: run_suite.py --suite big-amd}]\n"
        "  b:\n    runs-on: linux-mi325-gpu-4\n    steps: [{run: run_suite.py --suite big-amd}]\n"
        "  c:\n    runs-on: ${{ matrix.runner }}\n    steps: [{run: run_suite.py --suite any-amd}]\n"
        "  d:\n    runs-on: linux-mi325-gpu-8\n    steps: [{run: run_suite.py --suite named-2-gpu-amd}]\n"
        "  e:\n    runs-on: ubuntu-latest\n    steps: [{run: gh workflow run amd.yml -f suite=big-amd}]\n")
    snap = Snapshot(FolderTree(tmp_path), parse_config("suites: {table-amd: {gpus: 2}}\n").config)
    assert suite_gpus(snap, "big-amd", "rocm") == 4  # the fewest of its GPU runners
    assert suite_gpus(snap, "any-amd", "rocm") is None
    assert suite_gpus(snap, "named-2-gpu-amd", "rocm") == 2  # the name first
    assert suite_gpus(snap, "table-amd", "rocm") == 2
    assert suite_gpus(snap, None, "rocm") is None
