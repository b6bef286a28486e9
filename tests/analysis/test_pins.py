"""The PIN rules on small repositories: groups, install paths, findings, matrices."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from bot.analysis import pins
from bot.analysis.findings import Finding, Severity
from bot.analysis.pins import analyze_pins, complementary, describe_groups, is_rocm_name, matrix
from bot.analysis.pins import files as pin_files
from bot.analysis.snapshot import Snapshot
from bot.analysis.source import Unreadable
from bot.analysis.tree import FolderTree
from bot.analysis.workflows import Workflow, parse_workflow
from config.repo import RepoConfig, default_data, defaults, merge, parse_config

DOCKERFILE_ROCM = """
ARG BASE_IMAGE=rocm/sgl-dev:latest
FROM ${BASE_IMAGE}
RUN pip install polars "numba==0.65.1"
"""

HEADER = """
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
"""


def workflow(steps: str) -> str:
    body = textwrap.dedent(steps).lstrip("\n")
    return textwrap.dedent(HEADER).lstrip("\n") + textwrap.indent(body, "      ")


def snapshot(root: Path, files: dict[str, str], config: dict[str, Any] | None = None) -> Snapshot:
    for path, text in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        if path.startswith(".github/workflows/"):
            full.write_text(text, encoding="utf-8")
        else:
            full.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    loaded = defaults() if config is None else RepoConfig.model_validate(
        merge(default_data(), config)
    )
    return Snapshot(FolderTree(root), loaded)


def found(snap: Snapshot, changed: set[str] | None = None) -> list[tuple[str, str | None, int | None]]:
    return sorted((f.rule, f.path, f.line) for f in analyze_pins(snap, changed).findings)


def only(snap: Snapshot, rule: str) -> Finding:
    hits = [f for f in analyze_pins(snap, None).findings if f.rule == rule]
    assert len(hits) == 1, hits
    return hits[0]


ALTERNATIVES = """
- name: Install (full)
  if: ${{ !inputs.skip_dependency_install }}
  run: |
    pip install -e . --no-deps --break-system-packages
    pip install polars "numba==0.65.1" --break-system-packages
- name: Install (miles only)
  if: ${{ inputs.skip_dependency_install }}
  run: |
    pip install polars --break-system-packages
"""


def test_pinned_in_the_image_and_in_one_alternative_step_only_is_pin003(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        ".github/workflows/_run-ci-rocm.yml": workflow(ALTERNATIVES),
    })
    assert found(snap) == [("PIN003", ".github/workflows/_run-ci-rocm.yml", 19)]
    hit = only(snap, "PIN003")
    assert hit.severity is Severity.ERROR
    assert "`numba`" in hit.message and "step `Install (full)`" in hit.message
    assert "step `Install (miles only)`" in hit.message
    assert "`docker/Dockerfile.rocm:3`" in hit.message
    assert hit.fix == 'add `"numba==0.65.1"` to the step `Install (miles only)`, line 19'
    assert "`docker/Dockerfile.rocm:3`: `numba==0.65.1`" in hit.details


def test_different_versions_are_pin001(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        ".github/workflows/ci-rocm.yml": workflow("""
            - name: Install
              run: pip install polars "numba==0.64.0"
        """),
    })
    hit = only(snap, "PIN001")
    assert (hit.path, hit.line, hit.severity) == (".github/workflows/ci-rocm.yml", 12, Severity.ERROR)
    assert "`0.64.0`" in hit.message and "`0.65.1`" in hit.message
    assert "step `Install`" in hit.message
    assert hit.fix == (
        'use `"numba==0.65.1"` in the step `Install`, line 12, as `docker/Dockerfile.rocm:3` does')
    assert found(snap) == [("PIN001", ".github/workflows/ci-rocm.yml", 12)]


def test_pinned_in_the_image_unpinned_in_the_workflow_is_pin002(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        ".github/workflows/ci-rocm.yml": workflow("""
            - name: Install
              run: |
                pip install polars "numba>=0.60" --break-system-packages
                pip install numba
        """),
    })
    assert found(snap) == [("PIN002", ".github/workflows/ci-rocm.yml", 13)]  # one per package
    message = only(snap, "PIN002").message
    assert "installed `>=0.60` at step `Install` (`.github/workflows/ci-rocm.yml:13`); " \
        "unpinned at step `Install` (`.github/workflows/ci-rocm.yml:14`)" in message
    assert only(snap, "PIN002").fix == (
        'pin it here too: `"numba==0.65.1"` in the step `Install`, line 13 '
        "(and at the other places listed)"
    )


def test_the_workflow_pins_something_the_image_never_installs_is_pin004(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        ".github/workflows/ci-rocm.yml": workflow("""
            - name: Install
              run: pip install "xxhash==3.5.0" "numba<0.60" pytest
        """),
    })
    assert found(snap) == [
        ("PIN004", ".github/workflows/ci-rocm.yml", 12),
        ("PIN004", ".github/workflows/ci-rocm.yml", 12),
    ]
    messages = sorted(f.message for f in analyze_pins(snap, None).findings)
    assert "excludes `0.65.1`" in messages[0]
    assert "no Dockerfile of the `rocm` group installs it" in messages[1]


def test_a_package_the_image_installs_through_a_requirements_file_is_in_the_image(
    tmp_path: Path,
) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": """
            FROM rocm/sgl-dev:latest
            COPY docker/requirements.txt /tmp/requirements.txt
            RUN pip install -r /tmp/requirements.txt
        """,
        "docker/requirements.txt": "-r base.txt\nxxhash==3.5.0\n",
        "docker/base.txt": "blake3==1.0.0\n",
        ".github/workflows/ci-rocm.yml": workflow("""
            - run: pip install "xxhash==3.5.0" "blake3==1.0.0"
        """),
    })
    assert found(snap) == []
    groups = describe_groups(snap)
    assert groups[0]["requirements"] == ["docker/base.txt", "docker/requirements.txt"]


def test_requirements_drift_is_pin005(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "requirements-rocm.txt": "polars>=1.0\nnumba==0.64.0\nzstandard==0.23.0\n"
                                 "blake3<1\n",
        "docker/Dockerfile.rocm": """
            FROM rocm/sgl-dev:latest
            COPY requirements-rocm.txt /tmp/
            RUN pip install -r /tmp/requirements-rocm.txt && \\
                pip install "numba==0.65.1" "blake3==1.0.5"
        """,
        ".github/workflows/ci-rocm.yml": workflow("""
            - run: pip install zstandard "polars==1.2"
        """),
    })
    assert found(snap) == [
        ("PIN005", ".github/workflows/ci-rocm.yml", 11),
        ("PIN005", "requirements-rocm.txt", 2),
        ("PIN005", "requirements-rocm.txt", 4),
    ]
    hits = {f.line: f for f in analyze_pins(snap, None).findings}
    assert "installed unpinned" in hits[11].message
    assert "requirements-rocm.txt:3" in hits[11].message
    assert "excludes `1.0.5`" in hits[4].message
    assert hits[11].fix == ('pin it here too: `"zstandard==0.23.0"` in the step '
                            '`Run pip install zstandard "polars==1.2"`, line 11')
    assert hits[2].fix == 'use `"numba==0.65.1"` at line 2, as `docker/Dockerfile.rocm:4` does'


def test_a_requirements_file_only_a_workflow_installs_ranks_after_the_workflow(
    tmp_path: Path,
) -> None:
    snap = snapshot(tmp_path, {
        "requirements-ci.txt": "pytest==8.0.0\n",
        ".github/workflows/ci.yml": """
jobs:
  a:
    steps:
      - run: pip install -r requirements-ci.txt "pytest==8.1.0"
""",
    })
    assert found(snap) == [("PIN005", "requirements-ci.txt", 1)]


def test_the_same_git_url_at_two_commits_in_two_dockerfiles_is_pin006(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "Dockerfile": """
            FROM nvcr.io/nvidia/pytorch:25.01-py3
            RUN pip install "git+https://github.com/org/lib.git@1111111" \\
                "git+https://github.com/org/other.git@aaa"
        """,
        "Dockerfile.rocm": """
            FROM rocm/sgl-dev:latest
            RUN pip install git+https://github.com/Org/lib@2222222
            RUN pip install "git+https://github.com/org/other@aaa"
        """,
    })
    assert found(snap) == [("PIN006", "Dockerfile.rocm", 2)]
    hit = only(snap, "PIN006")
    assert hit.severity is Severity.WARNING
    assert "`2222222`" in hit.message and "`1111111`" in hit.message
    assert hit.fix == "use `@1111111` on line 2, as `Dockerfile` does"


def test_git_refs_differing_within_one_group_are_pin001_not_pin006(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/a.Dockerfile": 'FROM x\nRUN pip install "git+https://github.com/org/lib@1"\n',
        "docker/b.Dockerfile": 'FROM x\nRUN pip install "git+https://github.com/org/lib@2"\n'
                               'RUN pip install "git+https://github.com/org/lib@2"\n',
    }, {"pins": {"groups": {"images": {"dockerfiles": ["docker/*.Dockerfile"]}}}})
    assert found(snap) == [("PIN001", "docker/b.Dockerfile", 2)]
    assert "branch `2` of `github.com/org/lib`" in only_first(snap).message


def test_every_dockerfile_is_a_group_of_its_own(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/a.Dockerfile": 'FROM x\nRUN pip install "git+https://github.com/org/lib@1111111"\n',
        "docker/b.Dockerfile": 'FROM x\nRUN pip install "git+https://github.com/org/lib@2222222"\n'
                               'RUN pip install "git+https://github.com/org/lib@3333333"\n',
    })
    assert found(snap) == [("PIN001", "docker/b.Dockerfile", 3), ("PIN006", "docker/b.Dockerfile", 2)]
    pin006 = only(snap, "PIN006")
    assert "at commit `1111111` in `docker/a.Dockerfile:2` but at commit `2222222` in " \
        "`docker/b.Dockerfile:2`; commit `3333333` in `docker/b.Dockerfile:3`" in pin006.message
    assert "moves" not in pin006.message


def only_first(snap: Snapshot) -> Finding:
    return analyze_pins(snap, None).findings[0]


def test_a_consistent_group_with_the_same_package_in_three_places_has_no_finding(
    tmp_path: Path,
) -> None:
    snap = snapshot(tmp_path, {
        "requirements-rocm.txt": "numba==0.65.1\n",
        "docker/Dockerfile.rocm": """
            FROM rocm/sgl-dev:latest
            COPY requirements-rocm.txt /tmp/
            RUN pip install -r /tmp/requirements-rocm.txt "numba==0.65.1"
        """,
        ".github/workflows/ci-rocm.yml": workflow("""
            - name: Install
              run: python3 -m pip install 'numba==0.65.1.0'
        """),
    })
    outcome = analyze_pins(snap, None)
    assert outcome.findings == [] and outcome.tables == []
    changed = analyze_pins(snap, {"docker/Dockerfile.rocm"})
    (table,) = changed.tables
    assert table.header == ("package", "docker/Dockerfile.rocm", "ci-rocm.yml / test / Install",
                            "requirements-rocm.txt")
    assert table.rows == (("numba", "==0.65.1", "==0.65.1.0", "==0.65.1"),)
    assert "`rocm` group (ROCm image)" in table.title


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("${{ !inputs.skip }}", "${{ inputs.skip }}", True),
        ("inputs.skip", "!inputs.skip", True),
        ("! inputs.skip", "inputs.skip", True),
        ("inputs.gpu == 'mi350'", "inputs.gpu != 'mi350'", True),
        ("'mi350' == inputs.gpu", 'inputs.gpu != "mi350"', True),
        ("inputs.skip == true", "!inputs.skip", True),
        ("inputs.skip == false", "inputs.skip", True),
        ("false != inputs.skip", "!inputs.skip", True),
        ("!(inputs.a && inputs.b)", "inputs.a && inputs.b", True),
        ("!(inputs.gpu == 'a')", "inputs.gpu == 'a'", True),
        ("((inputs.a))", "!inputs.a", True),
        ("!!inputs.a", "!inputs.a", True),
        ("!contains(github.event.labels, 'x')", "contains(github.event.labels, 'x')", True),
        ("!contains(a, 'x') || b", "contains(a, 'x') || b", False),
        ("inputs.a", "inputs.b", False),
        ("inputs.gpu == 'a'", "inputs.gpu == 'b'", False),
        ("inputs.a", "inputs.a", False),
        ("(a) && (b)", "!(a) && (b)", False),
        ("a) || (b", "!a) || (b", False),
    ],
)
def test_complementary_conditions(a: str, b: str, expected: bool) -> None:
    assert complementary(a, b) is expected
    assert complementary(b, a) is expected


@pytest.mark.parametrize(
    ("path", "rocm"),
    [("docker/Dockerfile.rocm", True), ("pr-test-amd.yml", True), ("rocm.Dockerfile", True),
     ("command.yml", False), ("Dockerfile", False), ("amd64-build.yml", False)],
)
def test_rocm_names(path: str, rocm: bool) -> None:
    assert is_rocm_name(path) is rocm


def test_inferred_groups_are_images_and_the_jobs_that_run_in_them(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "Dockerfile": "FROM nvidia/cuda:12.8\n",
        "docker/Dockerfile.rocm": "FROM y\nCOPY . /w\nRUN pip install -r /w/requirements-rocm.txt\n",
        "docker/Dockerfile.rocm_mi350": "FROM y\n",
        "docker/npu.Dockerfile": "FROM ascend/cann\n",
        "requirements-rocm.txt": "numba==0.65.1\n",
        "requirements-cpu.txt": "numba==0.60.0\n",
        "scripts/ci/amd/install.sh": "docker exec ci pip install 'xxhash==3.5.0'\n",
        "tests/fixtures/Dockerfile": "FROM z\n",
        ".github/workflows/pr-test-amd.yml": "jobs:\n  a:\n    uses: ./.github/workflows/_shared.yml\n"
                                              "    with: {runs_on: linux-mi300-gpu-1}\n"
                                              "  c:\n    uses: ./.github/workflows/missing.yml\n",
        ".github/workflows/_shared.yml": "jobs:\n  x:\n    runs-on: ${{ inputs.runs_on }}\n"
                                          "    steps:\n      - run: bash scripts/ci/amd/install.sh\n",
        ".github/workflows/pr-test.yml": "jobs:\n"
                                         "  unit:\n    runs-on: ubuntu-latest\n    steps:\n"
                                         "      - run: pip install -r requirements-cpu.txt\n"
                                         "  gpu:\n    runs-on: [self-hosted, 8-gpu-h100]\n    steps:\n"
                                         "      - run: pip install numba\n",
        ".github/workflows/pr-test-npu.yml": "jobs:\n  npu:\n    runs-on: linux-aarch64-a3\n"
                                             "    container: {image: 'swr/ascend:1'}\n"
                                             "    steps:\n      - run: pip install 'numba==0.61.0'\n",
        ".github/workflows/lint.yaml": "jobs: {}\n",
    }, {"pins": {"exclude": ["tests/**"]}})
    groups = {str(g["name"]): g for g in describe_groups(snap)}
    assert sorted(groups) == [".github/workflows/pr-test.yml / gpu",  # on the runner itself
                              ".github/workflows/pr-test.yml / unit", "cuda",
                              "docker/Dockerfile.rocm_mi350", "npu", "rocm"]
    assert groups["rocm"] == {
        "name": "rocm", "source": "inferred", "rocm": True,
        "dockerfiles": ["docker/Dockerfile.rocm"],
        "workflows": [".github/workflows/_shared.yml"],
        "requirements": ["requirements-rocm.txt"],
        "scripts": ["scripts/ci/amd/install.sh"],
        "hardware": "rocm",
        "callers": [".github/workflows/pr-test-amd.yml"],
        "install_paths": ["_shared.yml / x / Run bash scripts/ci/amd/install.sh"],
    }
    assert groups["cuda"]["workflows"] == []
    assert groups["cuda"]["requirements"] == []  # only the CPU job installs it
    assert groups[".github/workflows/pr-test.yml / unit"]["requirements"] == ["requirements-cpu.txt"]
    assert groups["npu"]["workflows"] == [".github/workflows/pr-test-npu.yml"]
    assert groups["npu"]["hardware"] == "npu"
    outcome = analyze_pins(snap, None)
    assert outcome.environment == frozenset({  # the scripts and workflows: the engine judges them
        "docker/Dockerfile.rocm", "requirements-rocm.txt",
        "docker/Dockerfile.rocm_mi350",  # another ROCm image
    })
    # numba: 0.65.1 (ROCm), 0.60.0 (CPU job), 0.61.0 (NPU), unpinned (CUDA): never compared
    assert sorted((f.rule, f.path) for f in outcome.findings) == [
        ("PIN004", ".github/workflows/pr-test-npu.yml"),  # the NPU image lacks numba
        ("PIN004", "scripts/ci/amd/install.sh"),  # xxhash, sent into the ROCm image
    ]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("docker/Dockerfile.rocm", "rocm"), ("linux-mi325-gpu-1", "rocm"), ("pr-test-amd.yml", "rocm"),
        ("docker/arm64.Dockerfile", None), ("npu.Dockerfile", "npu"), ("xpu.Dockerfile", "xpu"),
        ("Dockerfile.gb10", "gb10"), ("gb200", "cuda"), ("kimi_k3_cu13.Dockerfile", "cuda"),
        ("8-gpu-h200", "cuda"), ("xeon.Dockerfile", "cpu"), ("sgl-router.Dockerfile", None),
    ],
)
def test_hardware_names(text: str, kind: str | None) -> None:
    assert pins.hardware(text) == kind


def test_a_hardware_without_a_main_image_leaves_its_jobs_on_their_own(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm_a": "FROM y\n",
        "docker/Dockerfile.rocm_b": "FROM y\n",
        ".github/workflows/ci-rocm.yml": "jobs:\n  t:\n    runs-on: mi300\n    steps:\n"
                                         "      - run: pip install 'numba==1'\n",
    })
    names = [g["name"] for g in describe_groups(snap)]
    assert names == ["docker/Dockerfile.rocm_a", "docker/Dockerfile.rocm_b",
                     ".github/workflows/ci-rocm.yml / t"]


def test_a_repository_without_dockerfiles_or_workflows_has_no_groups(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {"README.md": "hello\n"})
    assert describe_groups(snap) == []
    assert analyze_pins(snap, None) == pins.PinOutcome()


def test_configured_groups_replace_the_inferred_ones(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "images/gpu.Dockerfile": DOCKERFILE_ROCM,
        "images/mi.Dockerfile": DOCKERFILE_ROCM,
        "reqs/ci.txt": "numba==0.64.0\n",
        ".github/workflows/gpu.yml": workflow("""
            - run: pip install "numba==0.63.0"
        """),
        ".github/workflows/other.yml": "jobs: [\n",
    }, {"pins": {"groups": {
        "amd-rocm": {"dockerfiles": ["images/mi.Dockerfile"], "workflows": [],
                     "requirements": ["reqs/*.txt"]},
        "gpu": {"dockerfiles": ["images/gpu.Dockerfile"], "workflows": [".github/workflows/gpu.yml"]},
    }}})
    groups = describe_groups(snap)
    assert [(g["name"], g["source"], g["rocm"]) for g in groups] == [
        ("amd-rocm", "config", True), ("gpu", "config", False),
    ]
    assert found(snap) == [
        ("PIN001", ".github/workflows/gpu.yml", 11),
        ("PIN005", "reqs/ci.txt", 1),
    ]
    assert analyze_pins(snap, {"reqs/ci.txt"}).environment == frozenset(
        {"images/mi.Dockerfile", "reqs/ci.txt"}
    )


def test_ignored_packages_are_never_compared(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        ".github/workflows/ci-rocm.yml": workflow("""
            - run: pip install "Numba==0.64.0"
        """),
    }, {"pins": {"ignore": ["NUMBA"]}})
    assert found(snap) == []


def test_markers_that_only_sometimes_hold_are_not_compared(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        ".github/workflows/ci-rocm.yml": workflow("""
            - run: |
                pip install "numba==0.64.0; python_version < '3.12'"
                pip install "polars==1.0; sys_platform == 'win32'"
        """),
    })
    assert found(snap) == []


def test_analyze_reports_a_finding_only_when_one_of_its_places_changed(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        ".github/workflows/_run-ci-rocm.yml": workflow(ALTERNATIVES),
        "Dockerfile": 'FROM x\nRUN pip install "a==1"\n',
        ".github/workflows/ci.yml": "jobs:\n  a:\n    container: x\n    steps:\n"
                                    "      - run: pip install a==2\n",
    })
    everything = found(snap)
    assert everything == [
        ("PIN001", ".github/workflows/ci.yml", 5),
        ("PIN003", ".github/workflows/_run-ci-rocm.yml", 19),
    ]
    assert found(snap, {"docker/Dockerfile.rocm"}) == [everything[1]]
    assert found(snap, {".github/workflows/_run-ci-rocm.yml"}) == [everything[1]]
    assert found(snap, {"Dockerfile"}) == [everything[0]]
    assert found(snap, {"tests/test_x.py"}) == []
    outcome = analyze_pins(snap, {"Dockerfile"})
    assert [t.title for t in outcome.tables] == ["Dependency pins: `default` group (image)"]
    assert analyze_pins(snap, set()).tables == []
    assert len(analyze_pins(snap, None).tables) == 2


def test_the_matrix_marks_mismatches_and_missing_packages(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM + 'RUN pip install "torch==2.5.1"\n',
        "requirements-ci.txt": "polars\nblake3\n",
        ".github/workflows/_run-ci-rocm.yml": workflow("""
            - name: Install (full)
              if: ${{ !inputs.skip_dependency_install }}
              run: pip install -r requirements-ci.txt "numba==0.64.0" xxhash
            - name: Install (miles only)
              if: ${{ inputs.skip_dependency_install }}
              run: pip install polars blake3 xxhash
        """),
    })
    (table,) = analyze_pins(snap, None).tables
    assert table.header == (
        "package", "docker/Dockerfile.rocm", "_run-ci-rocm.yml / test / Install (full)",
        "_run-ci-rocm.yml / test / Install (miles only)", "requirements-ci.txt",
    )
    rows = {row[0]: row[1:] for row in table.rows}
    assert rows["numba"] == ("==0.65.1", "==0.64.0 ✗", "missing ✗", "")
    assert rows["polars"] == ("any", "any (via `requirements-ci.txt`)", "any", "any")
    assert rows["xxhash"] == ("", "any", "any", "")
    assert "torch" not in rows
    assert table.note is not None
    assert "1 packages installed in one place only are not shown." in table.note
    assert "Alternative install paths: step `Install (full)` / step `Install (miles only)`." \
        in table.note


def test_the_matrix_is_cut_at_its_row_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matrix, "MAX_ROWS", 1)
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": 'FROM x\nRUN pip install "a==1" "b==1"\n',
        ".github/workflows/ci-rocm.yml": workflow("""
            - run: pip install "a==2" "b==2"
        """),
    })
    (table,) = analyze_pins(snap, None).tables
    assert [row[0] for row in table.rows] == ["a"]
    assert table.note is not None and "1 more packages are not shown." in table.note


def test_job_conditions_and_unconditional_steps(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        ".github/workflows/ci.yml": """
jobs:
  full:
    if: inputs.full
    steps:
      - run: pip install polars "numba==0.65.1"
  slim:
    if: "!inputs.full"
    steps:
      - run: pip install zstandard
      - name: Install extras
        if: inputs.extra
        run: pip install polars numba==0.65.1
      - name: Install less
        if: ${{ !inputs.extra }}
        run: pip install polars
""",
    })
    assert found(snap) == [
        ("PIN003", ".github/workflows/ci.yml", 6),
        ("PIN003", ".github/workflows/ci.yml", 16),
    ]
    messages = [f.message for f in analyze_pins(snap, None).findings]
    assert any("job `slim`" in m and "job `full`" in m for m in messages)


def test_a_package_every_path_gets_from_an_unconditional_step_is_not_missing(
    tmp_path: Path,
) -> None:
    snap = snapshot(tmp_path, {
        "reqs.txt": "numba==0.65.1\n",
        ".github/workflows/ci.yml": """
jobs:
  a:
    steps:
      - run: pip install "numba==0.65.1"
      - if: inputs.x
        run: pip install polars numba==0.65.1
      - if: "!inputs.x"
        run: pip install polars
      - if: inputs.y == 'a'
        run: pip install -r reqs.txt -c reqs.txt
      - if: inputs.y != 'a'
        run: pip install "numba==0.65.1"
""",
    })
    assert found(snap) == []


def test_same_named_steps_of_different_jobs_are_compared_only_when_alike(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        ".github/workflows/ci.yml": """
jobs:
  lint:
    steps:
      - name: Install dependencies
        run: pip install ruff
  test:
    steps:
      - name: Install dependencies
        run: pip install torch numpy
      - name: Install dependencies
        run: pip install pytest
""",
    })
    assert found(snap) == []


def test_places_are_cut_in_long_messages(tmp_path: Path) -> None:
    steps = "- run: pip install numba\n" * 9
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        ".github/workflows/ci-rocm.yml": workflow(steps),
    })
    findings = analyze_pins(snap, None).findings
    assert len(findings) == 1  # one per package
    assert "and 1 more places" in findings[0].message


def test_unreadable_group_files_are_reg004(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        ".github/workflows/ci-rocm.yml": "jobs:\n  a:\n    steps: [\n",
        "requirements.txt": "x\n",
    })
    (tmp_path / "Dockerfile").write_bytes(b"FROM x\0\n")
    (tmp_path / "docker/Dockerfile.rocm").write_text(
        "FROM x\nCOPY requirements.txt /r.txt\nRUN pip install -r /r.txt\n"
    )
    (tmp_path / "requirements.txt").write_bytes(b"\xff\xfe")
    hits = [(f.rule, f.path, f.line) for f in analyze_pins(snap, None).findings]
    assert hits == [
        ("REG004", ".github/workflows/ci-rocm.yml", 4),
        ("REG004", "Dockerfile", None),
        ("REG004", "requirements.txt", 1),
    ]


def test_a_workflow_outside_every_group_is_not_read(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "Dockerfile": "FROM x\n",
        ".github/workflows/broken.yml": "jobs: [\n",
    }, {"pins": {"groups": {"main": {"dockerfiles": ["Dockerfile"]}}}})
    assert found(snap) == []


def test_each_file_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counting(path: str, text: str) -> Workflow | Unreadable:
        calls.append(path)
        return parse_workflow(path, text)

    monkeypatch.setattr(pin_files, "parse_workflow", counting)
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        ".github/workflows/_run-ci-rocm.yml": workflow(ALTERNATIVES),
        ".github/workflows/pr-test-rocm.yml": "jobs:\n  a:\n    uses: ./.github/workflows/_run-ci-rocm.yml\n",
    })
    analyze_pins(snap, None)
    analyze_pins(snap, {"docker/Dockerfile.rocm"})
    describe_groups(snap)
    assert sorted(calls) == [".github/workflows/_run-ci-rocm.yml",
                             ".github/workflows/pr-test-rocm.yml"]


def test_workflows_that_only_call_each_other_are_grouped_by_name(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        ".github/workflows/a.yml": "jobs:\n  x:\n    uses: ./.github/workflows/b.yml\n",
        ".github/workflows/b.yml": "jobs:\n  x:\n    uses: ./.github/workflows/a.yml\n",
    })
    assert describe_groups(snap) == []  # no job installs anything


def test_configured_groups_follow_the_workflows_they_call(tmp_path: Path) -> None:
    calls = "".join(
        f"  j{i}:\n    uses: ./.github/workflows/{name}\n"
        for i, name in enumerate(["_shared.yml", "other.yml", "missing.yml", "broken.yml"])
    )
    snap = snapshot(tmp_path, {
        ".github/workflows/rocm.yml": "jobs:\n" + calls,
        ".github/workflows/_shared.yml": "jobs:\n  x:\n    uses: ./.github/workflows/rocm.yml\n",
        ".github/workflows/other.yml": "jobs: {}\n",
        ".github/workflows/broken.yml": "jobs: [\n",
    }, {"pins": {"groups": {
        "rocm": {"workflows": [".github/workflows/rocm.yml"]},
        "main": {"workflows": [".github/workflows/other.yml"]},
    }}})
    groups = {g["name"]: g["workflows"] for g in describe_groups(snap)}
    assert groups == {
        "rocm": [".github/workflows/_shared.yml", ".github/workflows/broken.yml",
                 ".github/workflows/rocm.yml"],
        "main": [".github/workflows/other.yml"],
    }
    assert found(snap) == [("REG004", ".github/workflows/broken.yml", 2)]


def test_requirements_files_are_followed_through_includes(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "Dockerfile.rocm": "FROM x\nCOPY . /w\nRUN pip install -r /w/a.txt -r /nowhere.txt\n",
        "a.txt": "-r b.txt\n-r missing.txt\n-c c.txt\n-r bad.txt\n.\nnumba==0.65.1\nskipme==1\n",
        "b.txt": "-r a.txt\npolars==1.0\n",
        "c.txt": "numba==0.65.1\n",
        ".github/workflows/ci-rocm.yml": workflow("""
            - run: pip install "numba==0.65.1" "polars==1.0"
        """),
    }, {"pins": {"ignore": ["skipme"]}})
    (tmp_path / "bad.txt").write_bytes(b"x\0")
    (group,) = describe_groups(snap)
    assert group["requirements"] == ["a.txt", "b.txt", "bad.txt", "c.txt"]
    assert found(snap) == [("REG004", "bad.txt", None)]


def test_the_same_missing_package_is_reported_once(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        ".github/workflows/ci.yml": """
jobs:
  full:
    if: inputs.full
    steps:
      - name: Install
        run: pip install polars numba==0.65.1
  slim:
    if: "!inputs.full"
    steps:
      - name: Install
        run: pip install polars
""",
    })
    assert found(snap) == [("PIN003", ".github/workflows/ci.yml", 12)]


def test_pins_of_requirements_a_workflow_installs_are_not_image_divergence(
    tmp_path: Path,
) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        "requirements-ci.txt": "pytest==8.0.0\n",
        ".github/workflows/ci-rocm.yml": workflow("""
            - run: pip install -r requirements-ci.txt
        """),
    })
    assert found(snap) == []


def test_a_workflow_range_excluding_another_workflow_pin_is_pin001(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        ".github/workflows/ci.yml": """
jobs:
  a:
    steps:
      - run: pip install "numba==0.65.1"
      - run: pip install "numba<0.60"
""",
    })
    hit = only(snap, "PIN001")
    assert hit.line == 6 and "excludes `0.65.1`" in hit.message


def test_direct_references_compare_by_url(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": 'FROM x\nRUN pip install "w @ https://h/w-1.whl"\n',
        ".github/workflows/ci-rocm.yml": workflow("""
            - run: pip install "w @ https://h/w-2.whl"
        """),
    })
    hit = only(snap, "PIN001")
    assert "`https://h/w-2.whl`" in hit.message and "`https://h/w-1.whl`" in hit.message


def test_a_workflow_in_two_groups_is_reported_once(tmp_path: Path) -> None:
    shared = workflow(ALTERNATIVES).replace("ROCm CI", "Shared").replace(
        "[self-hosted, mi350]", "${{ inputs.runner }}").replace(
        "rocm/sgl-dev:latest", "${{ inputs.image }}")
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        "docker/Dockerfile": DOCKERFILE_ROCM.replace("rocm/sgl-dev", "lmsysorg/sglang"),
        ".github/workflows/_shared.yml": shared,
        ".github/workflows/pr-rocm.yml": "jobs:\n  a:\n    uses: ./.github/workflows/_shared.yml\n"
                                         "    with: {runner: mi300}\n"
                                         "  b:\n    uses: ./.github/workflows/_shared.yml\n"
                                         "    with: {runner: mi325}\n",
        ".github/workflows/pr.yml": "jobs:\n  a:\n    uses: ./.github/workflows/_shared.yml\n"
                                    "    with: {runner: h100}\n",
    })
    groups = {str(g["name"]): g for g in describe_groups(snap)}
    assert groups["rocm"]["workflows"] == [".github/workflows/_shared.yml"]
    assert groups["default"]["workflows"] == [".github/workflows/_shared.yml"]
    assert groups["default"]["hardware"] is None
    assert found(snap) == [("PIN003", ".github/workflows/_shared.yml", 19)]
    assert groups["default"]["callers"] == [".github/workflows/pr.yml"]
    assert ".github/workflows/pr.yml" not in analyze_pins(snap, None).environment


def test_the_pins_section_of_the_configuration_is_validated() -> None:
    good = parse_config(
        "pins:\n  groups:\n    rocm: {dockerfiles: [docker/Dockerfile.rocm]}\n  ignore: [pip]\n"
    )
    assert good.problems == []
    assert good.config.pins.groups["rocm"].dockerfiles == ["docker/Dockerfile.rocm"]
    assert good.config.pins.groups["rocm"].workflows == []
    bad = parse_config("pins:\n  groups:\n    rocm: {dockerfile: [x]}\n")
    assert [p.key for p in bad.problems] == ["pins.groups.rocm.dockerfile"]
    assert bad.config.pins == defaults().pins


@pytest.mark.parametrize(
    ("slim", "reported"),
    [
        ("pip install polars --no-deps -e .", True),
        ("pip install polars -e .", False),
        ("pip install polars ${{ inputs.extra }}", False),
        ("pip install polars -r ci/missing.txt", False),
        ("pip install polars -c ci/missing.txt", True),
    ],
)
def test_a_path_installing_what_cannot_be_listed_is_not_said_to_miss_anything(
    tmp_path: Path, slim: str, reported: bool,
) -> None:
    snap = snapshot(tmp_path, {
        ".github/workflows/ci.yml": f"""
jobs:
  a:
    steps:
      - if: inputs.full
        run: pip install polars "numba==0.65.1"
      - if: "!inputs.full"
        run: {slim}
""",
    })
    assert bool(found(snap)) is reported


def test_an_unconditional_step_installing_a_local_project_makes_every_path_uncertain(
    tmp_path: Path,
) -> None:
    snap = snapshot(tmp_path, {
        ".github/workflows/ci.yml": """
jobs:
  a:
    steps:
      - run: pip install -e .
      - if: inputs.full
        run: pip install polars "numba==0.65.1"
      - if: "!inputs.full"
        run: pip install polars
""",
    })
    assert found(snap) == []


def test_scripts_are_install_paths_of_what_runs_them(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile.rocm": """
            FROM rocm/sgl-dev:1
            COPY docker/install.sh /tmp/install.sh
            RUN bash /tmp/install.sh
            RUN pip install "numba==0.65.1"
        """,
        "docker/install.sh": """
            pip install "xxhash==3.5.0"
            pip install zstandard
            bash docker/nested.sh
            bash docker/missing.sh
            bash docker/install.sh
        """,
        "docker/nested.sh": 'pip install "numba==0.64.0"\n',
        "python/pkg/__init__.py": "",
        "scripts/ci/conda.sh": """
            conda create -n ci python=3.12 -y
            pip install "numba==0.10"
            bash scripts/ci/inner.sh
        """,
        "scripts/ci/inner.sh": 'pip install "numba==0.11"\n',
        "scripts/ci/tools.sh": "pip install polars\n",
        "scripts/ci/bad.sh": "pip install x\n",
        ".github/workflows/ci-rocm.yml": """
jobs:
  test:
    runs-on: linux-mi300-gpu-1
    container: rocm/sgl-dev:1
    steps:
      - run: bash scripts/ci/conda.sh
      - run: bash scripts/missing.sh && bash scripts/ci/bad.sh
      - run: |
          pip install python
          pip install polars
          bash scripts/ci/tools.sh
      - run: pip install "polars==1.0"
""",
    })
    (tmp_path / "scripts/ci/bad.sh").write_bytes(b"pip install \xff\n")  # not UTF-8
    groups = {str(g["name"]): g for g in describe_groups(snap)}
    assert sorted(groups) == ["rocm", "scripts/ci/conda.sh"]
    assert groups["rocm"]["scripts"] == ["docker/install.sh", "docker/nested.sh",
                                         "scripts/ci/bad.sh", "scripts/ci/tools.sh"]
    assert groups["scripts/ci/conda.sh"]["scripts"] == ["scripts/ci/conda.sh",
                                                        "scripts/ci/inner.sh"]
    assert found(snap) == [
        ("PIN001", "docker/nested.sh", 1),  # run by the image
        ("PIN001", "scripts/ci/inner.sh", 1),  # in the environment conda.sh makes
        ("PIN002", ".github/workflows/ci-rocm.yml", 11),
        ("PIN004", ".github/workflows/ci-rocm.yml", 13),
        ("REG004", "scripts/ci/bad.sh", 1),
    ]
    nested = analyze_pins(snap, None).findings[0]
    assert nested.fix == 'use `"numba==0.65.1"` in `docker/nested.sh`, line 1, as ' \
        "`docker/Dockerfile.rocm:4` does"
    pin002 = only(snap, "PIN002")
    assert "`scripts/ci/tools.sh:1` (run by step `Run pip install python`)" in pin002.message
    assert all("`python`" not in f.message for f in analyze_pins(snap, None).findings)
    # a PR that changes only the script sees the finding anchored there
    (moved,) = [f for f in analyze_pins(snap, {"scripts/ci/tools.sh"}).findings if f.rule == "PIN002"]
    assert (moved.rule, moved.path, moved.line) == ("PIN002", "scripts/ci/tools.sh", 1)
    assert moved.fix == 'pin it here too: `"polars==1.0"` in `scripts/ci/tools.sh`, line 1 ' \
        "(and at the other places listed)"
    (same,) = [f for f in analyze_pins(snap, {".github/workflows/ci-rocm.yml"}).findings
               if f.rule == "PIN002"]
    assert (same.path, same.line) == (".github/workflows/ci-rocm.yml", 11)


def test_git_refs_are_named_for_what_they_are(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile": 'FROM nvidia/cuda\nRUN pip install "git+https://github.com/org/lib@1234abc"\n',
        "docker/Dockerfile.rocm": 'FROM x\nRUN pip install "git+https://github.com/org/lib@bridge"\n',
        "docker/npu.Dockerfile": 'FROM x\nRUN pip install "git+https://github.com/org/lib@v1.2.0"\n',
    })
    (pin006,) = analyze_pins(snap, None).findings
    assert pin006.message == (
        "`github.com/org/lib` is installed at commit `1234abc` in `docker/Dockerfile:2` but at "
        "branch `bridge` in `docker/Dockerfile.rocm:2`; tag `v1.2.0` in `docker/npu.Dockerfile:2`."
        " A branch or tag moves: the images may build different code on different days even "
        "where the names agree; pin a commit."
    )
    assert (pin006.path, pin006.line) == ("docker/Dockerfile.rocm", 2)
    (npu,) = analyze_pins(snap, {"docker/npu.Dockerfile"}).findings
    assert (npu.path, npu.line) == ("docker/npu.Dockerfile", 2)
    assert npu.fix == "use `@1234abc` on line 2, as `docker/Dockerfile` does"


def test_a_job_on_the_runner_sends_only_its_docker_exec_installs_into_the_image(
    tmp_path: Path,
) -> None:
    snap = snapshot(tmp_path, {
        "docker/rocm.Dockerfile": DOCKERFILE_ROCM,
        "scripts/ci/amd/install.sh": """
            pip install "huggingface-hub==0.30.0"
            docker exec ci_sglang pip install "numba==0.64.0"
        """,
        ".github/workflows/pr-test-amd.yml": """
jobs:
  unit:
    runs-on: linux-mi300-gpu-1
    steps:
      - run: bash scripts/ci/amd/install.sh
      - run: pip install "pytest==8.3.3"
""",
    })
    groups = {str(g["name"]): g for g in describe_groups(snap)}
    assert sorted(groups) == [".github/workflows/pr-test-amd.yml / unit", "rocm"]
    assert groups["rocm"]["install_paths"] == ["pr-test-amd.yml / unit / Run bash scripts/ci/amd/install.sh"]
    # huggingface-hub and pytest go to the runner's own environment: never PIN004 against the image
    assert found(snap) == [("PIN001", "scripts/ci/amd/install.sh", 2)]


def test_a_hosted_job_in_a_generic_container_is_no_image_of_the_repository(
    tmp_path: Path,
) -> None:
    snap = snapshot(tmp_path, {
        "docker/Dockerfile": 'FROM nvidia/cuda\nRUN pip install "numba==0.65.1"\n',
        "docker/Dockerfile.rocm": DOCKERFILE_ROCM,
        ".github/workflows/lint.yml": "jobs:\n  lint:\n    runs-on: ubuntu-latest\n"
                                      "    container: python:3.12\n    steps:\n"
                                      "      - run: pip install 'numba==0.60.0'\n"
                                      "  amd:\n    runs-on: ubuntu-22.04\n"
                                      "    container: rocm/sgl-dev:latest\n    steps:\n"
                                      "      - run: pip install 'numba==0.61.0'\n",
    })
    groups = {str(g["name"]): g for g in describe_groups(snap)}
    assert sorted(groups) == [".github/workflows/lint.yml / lint", "cuda", "rocm"]
    assert found(snap) == [("PIN001", ".github/workflows/lint.yml", 11)]  # the ROCm container


def test_pin004_names_the_workflow_and_its_trigger_when_it_does_not_run_for_pull_requests(
        tmp_path: Path) -> None:
    nightly = textwrap.dedent("""
        name: Nightly ROCm
        on:
          schedule:
            - cron: "0 0 * * *"
        jobs:
          test:
            runs-on: [self-hosted, mi350]
            container: rocm/sgl-dev:latest
            steps:
              - name: Install
                run: pip install "xxhash==3.5.0"
    """).lstrip("\n")
    snap = snapshot(tmp_path, {"docker/Dockerfile.rocm": DOCKERFILE_ROCM,
                               ".github/workflows/nightly-rocm.yml": nightly})
    (message,) = [f.message for f in analyze_pins(snap, None).findings if f.rule == "PIN004"]
    assert "so the `Nightly ROCm` workflow (`nightly-rocm.yml`: nightly, on a schedule) and " \
           "the image differ" in message
    assert "PR CI" not in message


def test_a_job_in_a_container_no_dockerfile_builds_is_its_own_group_and_says_so(
        tmp_path: Path) -> None:
    build = textwrap.dedent("""
        name: Release
        on: {push: {branches: [main]}}
        jobs:
          build:
            runs-on: ubuntu-latest
            steps:
              - uses: docker/build-push-action@v6
                with: {file: docker/Dockerfile.rocm, tags: "myorg/sglang:rocm"}
    """).lstrip("\n")
    test = textwrap.dedent("""
        name: ROCm CI
        on: {pull_request: {}}
        jobs:
          test:
            runs-on: [self-hosted, mi350]
            container: ${{ inputs.image }}
            steps:
              - run: pip install "numba==0.64.0"
              - run: pip install "numba==0.63.0"
    """).lstrip("\n")
    snap = snapshot(tmp_path, {"docker/Dockerfile.rocm": DOCKERFILE_ROCM,
                               ".github/workflows/release.yml": build,
                               ".github/workflows/pr-test-rocm.yml": test})
    groups = {str(g["name"]): g for g in describe_groups(snap)}
    assert groups["rocm"]["workflows"] == []
    (finding,) = [f for f in analyze_pins(snap, None).findings if f.rule == "PIN001"]
    assert "Dockerfile.rocm" not in finding.message
    assert "in the jobs' container `${{ inputs.image }}`, which no Dockerfile of the " \
           "repository is known to build" in finding.message


def test_a_container_image_from_a_job_output_is_followed_to_the_dockerfile_that_builds_it(
        tmp_path: Path) -> None:
    build = textwrap.dedent("""
        name: Release dev
        on: {schedule: [{cron: "0 0 * * *"}]}
        jobs:
          build:
            runs-on: ubuntu-latest
            steps:
              - run: docker build -f docker/Dockerfile.dev -t myorg/sglang:dev .
    """).lstrip("\n")
    test = textwrap.dedent("""
        name: Full test
        on:
          workflow_dispatch:
            inputs:
              image: {type: string, default: ''}
        jobs:
          config:
            runs-on: ubuntu-latest
            outputs:
              image: ${{ steps.vars.outputs.image }}
            steps:
              - id: vars
                run: |
                  if [ -z "${{ inputs.image }}" ]; then
                    echo "image=myorg/sglang:dev" >> $GITHUB_OUTPUT
                  else
                    echo "image=${{ inputs.image }}" >> $GITHUB_OUTPUT
                  fi
          test:
            needs: [config]
            runs-on: [self-hosted, linux-a3]
            container:
              image: ${{ needs.config.outputs.image }}
            steps:
              - run: pip install "numba==0.64.0"
    """).lstrip("\n")
    snap = snapshot(tmp_path, {
        "docker/Dockerfile": 'FROM ubuntu:22.04\nRUN pip install "numba==0.64.0"\n',
        "docker/Dockerfile.dev": 'FROM ubuntu:22.04\nRUN pip install "numba==0.65.1"\n',
        ".github/workflows/release-dev.yml": build,
        ".github/workflows/full-test.yml": test,
    })
    (finding,) = [f for f in analyze_pins(snap, None).findings if f.rule == "PIN001"]
    assert finding.path == ".github/workflows/full-test.yml"
    assert "`docker/Dockerfile.dev:2`" in finding.message
