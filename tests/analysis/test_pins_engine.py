"""Pins through `analyze` between two commits: reported when a place changed, and the
ROCm group's files feeding the `environment` selection tier."""

from __future__ import annotations

import pytest

from bot.analysis.engine import analyze, audit
from bot.analysis.pins import files as pin_files
from bot.analysis.report import Report, TestEntry
from bot.analysis.tree import GitRepository
from tests.gitrepo import GitRepo

WORKFLOW = """\
name: ROCm CI
on:
  workflow_call:
    inputs:
      skip_dependency_install: {type: boolean, default: false}
jobs:
  test:
    runs-on: [self-hosted, mi350]
    container: rocm/sgl-dev:latest
    steps:
      - name: Install (full)
        if: ${{ !inputs.skip_dependency_install }}
        run: |
          pip install -e . --no-deps --break-system-packages
          pip install polars zstandard "numba==0.65.1" --break-system-packages
      - name: Install (miles only)
        if: ${{ inputs.skip_dependency_install }}
        run: |
          pip install polars zstandard --break-system-packages
      - name: Run
        run: python tests/ci/run_suite.py --suite stage-b-1-gpu-mi350 --suite stage-b-1-gpu-h200
"""

# a per-PR job that builds the ROCm image, so that a change to its Dockerfile reaches the tests
BUILDS_THE_IMAGE = """\
on: pull_request
jobs:
  image:
    runs-on: ubuntu-latest
    steps:
      - run: docker build -f docker/Dockerfile.rocm -t ci .
"""

FILES = {
    "docker/Dockerfile.rocm": (
        "FROM rocm/sgl-dev:latest\n"
        "COPY docker/requirements-rocm.txt /tmp/\n"
        "RUN pip install -r /tmp/requirements-rocm.txt \"numba==0.65.1\"\n"
    ),
    "docker/requirements-rocm.txt": "polars\nzstandard\n",
    ".github/workflows/_run-ci-rocm.yml": WORKFLOW,
    "tests/__init__.py": "",
    "tests/test_rocm_only.py": 'register_rocm_ci(600, "stage-b-1-gpu-mi350")\n',
    "tests/test_cuda_only.py": 'register_cuda_ci(600, "stage-b-1-gpu-h200")\n',
    "README.md": "a repository\n",
}
ROCM_TEST = "tests/test_rocm_only.py"
CUDA_TEST = "tests/test_cuda_only.py"
WORKFLOW_PATH = ".github/workflows/_run-ci-rocm.yml"
PLAIN = "launch: none, a plain test: it starts no training launch"


@pytest.fixture
def repo(git_repo: GitRepo) -> tuple[GitRepo, str]:
    git_repo.write_all(FILES)
    return git_repo, git_repo.commit("base")


def _run(repo: GitRepo, base: str, head: str) -> Report:
    with GitRepository(repo.root) as git:
        return analyze(git.tree(base), git.tree(head))


def _entry(report: Report, path: str) -> TestEntry:
    (entry,) = [t for t in report.tests if t.path == path]
    return entry


def _pins(report: Report) -> list[tuple[str, str | None, int | None]]:
    return [(f.rule, f.path, f.line) for f in report.findings if f.rule.startswith("PIN")]


def test_an_old_pin_problem_is_not_reported_when_none_of_its_places_changed(
    repo: tuple[GitRepo, str],
) -> None:
    git_repo, base = repo
    git_repo.write("README.md", "a repository, described\n")
    report = _run(git_repo, base, git_repo.commit())
    assert _pins(report) == []
    assert not any(t.title.startswith("Dependency pins") for t in report.tables)
    with GitRepository(git_repo.root) as git:
        assert _pins(audit(git.tree(base))) == [("PIN003", WORKFLOW_PATH, 19)]


def test_a_pin_problem_is_reported_when_one_of_its_places_changed(
    repo: tuple[GitRepo, str],
) -> None:
    git_repo, base = repo
    git_repo.write(WORKFLOW_PATH, WORKFLOW.replace("name: ROCm CI", "name: ROCm CI (PR)"))
    report = _run(git_repo, base, git_repo.commit())
    assert _pins(report) == [("PIN003", WORKFLOW_PATH, 19)]
    rocm = _entry(report, ROCM_TEST)  # a ROCm workflow is part of the environment too
    assert (rocm.change, rocm.tier, rocm.reasons) == (
        "affected", "environment", [f"the ROCm environment changed: `{WORKFLOW_PATH}`", PLAIN])
    assert _entry(report, CUDA_TEST).change == "unchanged"
    (finding,) = [f for f in report.findings if f.rule == "PIN003"]
    assert finding.fix == 'add `"numba==0.65.1"` to the step `Install (miles only)`, line 19'
    (table,) = [t for t in report.tables if t.title.startswith("Dependency pins")]
    assert table.rows == (
        ("numba", "==0.65.1", "==0.65.1", "missing ✗", ""),
        ("polars", "any (via `docker/requirements-rocm.txt`)", "any", "any", "any"),
        ("zstandard", "any (via `docker/requirements-rocm.txt`)", "any", "any", "any"),
    )


def test_a_dockerfile_rocm_change_makes_rocm_tests_affected_in_the_environment_tier(
    repo: tuple[GitRepo, str],
) -> None:
    git_repo, _ = repo
    git_repo.write(".github/workflows/build-image.yml", BUILDS_THE_IMAGE)
    base = git_repo.commit()
    git_repo.write("docker/Dockerfile.rocm",
                   FILES["docker/Dockerfile.rocm"].replace("0.65.1", "0.65.2"))
    report = _run(git_repo, base, git_repo.commit())
    rocm = _entry(report, ROCM_TEST)
    assert (rocm.change, rocm.tier) == ("affected", "environment")
    assert "docker/Dockerfile.rocm" in rocm.reasons[0]
    assert _entry(report, CUDA_TEST).change == "unchanged"
    assert [(s.path, s.tier) for s in report.selected] == [(ROCM_TEST, "environment")]
    assert _pins(report) == [
        ("PIN001", WORKFLOW_PATH, 15),
        ("PIN003", WORKFLOW_PATH, 19),
    ]


def test_a_requirements_file_the_rocm_image_installs_is_part_of_the_environment(
    repo: tuple[GitRepo, str],
) -> None:
    git_repo, base = repo
    git_repo.write("docker/requirements-rocm.txt", "polars\nzstandard\nxxhash\n")
    report = _run(git_repo, base, git_repo.commit())
    rocm = _entry(report, ROCM_TEST)
    assert (rocm.change, rocm.tier) == ("affected", "environment")
    assert [(s.path, s.tier) for s in report.selected] == [(ROCM_TEST, "environment")]
    assert _pins(report) == []  # the missing `numba` is not in the changed file


LOCK_FILES = {
    **FILES,
    "docker/Dockerfile.rocm": (
        "FROM rocm/sgl-dev:latest\n"
        "COPY docker/rocm.lock /tmp/rocm.lock\n"
        "RUN pip install -r /tmp/rocm.lock \"numba==0.65.1\"\n"
    ),
    "docker/rocm.lock": "polars\nzstandard\n",
}


@pytest.mark.parametrize("full", [True, False])
def test_a_requirements_file_of_any_name_the_rocm_image_installs_is_part_of_the_environment(
    git_repo: GitRepo, full: bool,
) -> None:
    git_repo.write_all(LOCK_FILES)
    base = git_repo.commit("base")
    git_repo.write("docker/rocm.lock", "polars\nzstandard\nnumba==0.64.0\n")
    head = git_repo.commit()
    with GitRepository(git_repo.root) as git:
        report = analyze(git.tree(base), git.tree(head), full=full)
    rocm = _entry(report, ROCM_TEST)
    assert (rocm.change, rocm.tier) == ("affected", "environment")
    assert rocm.reasons == ["the ROCm environment changed: `docker/rocm.lock`", PLAIN]
    assert [(s.path, s.tier) for s in report.selected] == [(ROCM_TEST, "environment")]
    assert ("PIN005", "docker/rocm.lock", 3) in _pins(report)


def test_a_containerfile_change_reports_the_pin_problems_it_takes_part_in(git_repo: GitRepo) -> None:
    git_repo.write_all({
        "Containerfile": "FROM python:3.11\nRUN pip install \"torch==2.4.0\"\n",
        ".github/workflows/ci.yml": (
            "jobs:\n  test:\n    container: python:3.11\n    steps:\n      - name: Install\n"
            "        run: pip install \"torch==2.3.0\"\n"
        ),
    })
    base = git_repo.commit("base")
    git_repo.write("Containerfile", "FROM python:3.12\nRUN pip install \"torch==2.4.0\"\n")
    report = _run(git_repo, base, git_repo.commit())
    assert _pins(report) == [("PIN001", ".github/workflows/ci.yml", 6)]


def test_a_change_of_python_files_only_never_reads_the_pin_groups(
    repo: tuple[GitRepo, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    git_repo, base = repo
    git_repo.write("tests/helpers.py", "X = 1\n")
    git_repo.write(ROCM_TEST, 'register_rocm_ci(601, "stage-b-1-gpu-mi350")\n')
    head = git_repo.commit()
    parsed: list[str] = []
    monkeypatch.setattr(pin_files, "parse_dockerfile", lambda path, text: parsed.append(path))
    report = _run(git_repo, base, head)
    assert _entry(report, ROCM_TEST).change == "modified"
    assert parsed == []
    git_repo.write("README.md", "a repository, described again\n")
    report = _run(git_repo, head, git_repo.commit())
    assert parsed == ["docker/Dockerfile.rocm"]  # README.md might have been a requirements file
    assert _pins(report) == [] and {t.change for t in report.tests} == {"unchanged"}
