"""`analyze` judged against the base: `baseline` on every finding, exit status for new
errors only; disabled tests checked as warnings; what a marker's `launch` says was checked."""

from __future__ import annotations

import json

import pytest

from bot.analysis.engine import DISABLED_PREFIX, analyze, audit
from bot.analysis.tree import GitRepository
from bot.cli import main
from bot.cli.example import BASE_FILES, TEST_TEMPLATE
from bot.formats import FORMATS, markdown, text
from tests.analysis.test_engine import _entry, _run
from tests.analysis.test_pins_engine import BUILDS_THE_IMAGE
from tests.gitrepo import GitRepo

MOE = "tests/e2e/megatron/test_qwen35_moe.py"
REASON = "FIXME: hangs"
UPSTREAM = "world_size (4) is not divisible by expert_tensor_model_pipeline_parallel size (8)"
DOCKERFILE = "docker/Dockerfile.rocm"
REQUIREMENTS = "docker/requirements-rocm.txt"


def _moe(ep: int, disabled: str | None) -> str:
    """The example's MoE test with its ROCm marker only (a CUDA one would fail alike)."""
    return TEST_TEMPLATE.format(ep=ep, disabled=f', disabled="{disabled}"' if disabled else "").replace(
        'register_cuda_ci(1500, "stage-c-8-gpu-h200")\n', "")


def _commit(repo: GitRepo, files: dict[str, str]) -> str:
    repo.write_all(files)
    return repo.commit()


def test_a_disabled_test_with_an_impossible_expert_grid_is_a_warning_in_audit(git_repo: GitRepo) -> None:
    _commit(git_repo, {**BASE_FILES, MOE: _moe(4, REASON)})
    with GitRepository(git_repo.root) as git:
        report = audit(git.tree("HEAD"))
    (rocm,) = [f for f in report.findings if f.rule == "PAR002"]
    assert rocm.severity.value == "warning" and rocm.baseline is None
    assert (rocm.backend, rocm.suite) == ("rocm", "stage-c-4-gpu-mi350")  # the marker it is about
    assert rocm.message == DISABLED_PREFIX + UPSTREAM  # the upstream message, with its numbers
    assert rocm.fix == "`ep_size=2` or `pp_size=1`"  # the same fix as when enabled
    assert report.exit_code == 0  # a disabled test blocks nothing
    assert _entry(report, MOE).launch == "checked"


def test_a_pr_that_disables_a_test_says_its_launch_cannot_run(git_repo: GitRepo) -> None:
    base = _commit(git_repo, {**BASE_FILES, MOE: _moe(4, None)})
    report = _run(git_repo, base, _commit(git_repo, {MOE: _moe(4, REASON)}))
    entry = _entry(report, MOE)
    assert entry.change == "disabled"
    assert entry.reasons == [f"disabled: '{REASON}'", f"disabled with a launch that cannot run: {UPSTREAM}"]
    warnings = [f for f in report.findings if f.rule == "PAR002"]
    assert warnings and all(f.severity.value == "warning" and f.baseline == "new" for f in warnings)
    assert report.exit_code == 0
    assert "disabled with a launch that cannot run" in markdown.render(report)


def test_a_re_enabled_test_has_new_errors_and_its_launch_change(git_repo: GitRepo) -> None:
    base = _commit(git_repo, {**BASE_FILES, MOE: _moe(2, REASON)})
    report = _run(git_repo, base, _commit(git_repo, {MOE: _moe(4, None)}))
    entry = _entry(report, MOE)
    assert entry.change == "enabled"
    assert entry.reasons == [f"disabled marker removed; was: '{REASON}'", "ep 2 -> 4"]
    (error,) = [f for f in report.findings if f.rule == "PAR002" and f.test == MOE and
                f.severity.value == "error"]
    assert (error.message, error.baseline) == (UPSTREAM, "new")
    assert report.exit_code == 1


def test_an_error_disabled_at_base_is_new_once_the_test_is_enabled(git_repo: GitRepo) -> None:
    base = _commit(git_repo, {**BASE_FILES, MOE: _moe(4, REASON)})
    report = _run(git_repo, base, _commit(git_repo, {MOE: _moe(4, None)}))
    assert _entry(report, MOE).reasons == [f"disabled marker removed; was: '{REASON}'"]
    errors = [f for f in report.errors if f.rule == "PAR002"]
    assert errors and {f.baseline for f in errors} == {"new"}
    assert report.exit_code == 1


def test_an_error_the_base_had_is_unchanged_and_does_not_fail_the_pr(git_repo: GitRepo) -> None:
    base = _commit(git_repo, {**BASE_FILES, MOE: _moe(4, None)})
    moved = "# a comment that moves every line\n" + _moe(4, None)
    report = _run(git_repo, base, _commit(git_repo, {MOE: moved}))
    errors = [f for f in report.errors if f.rule == "PAR002"]
    assert errors and {f.baseline for f in errors} == {"unchanged"}
    assert report.new_errors == [] and report.exit_code == 0
    assert "(already on the base)" in text.render(report, verbose=True)
    assert "1 finding the base already had (PAR002" in text.render(report)  # counted
    shown = markdown.render(report)  # reported, one click away, not failed
    assert shown.startswith("### ✅ no new problems")
    assert "Already on the base (`" in shown and "PAR002 \u00d7" in shown  # counted; the check lists
    full = markdown.render(report, full=True)
    assert "<summary>Already on the base: " in full and "PAR002" in full


PIN_FILES = {
    DOCKERFILE: (
        "FROM rocm/sgl-dev:latest\n"
        f"COPY {REQUIREMENTS} /tmp/\n"
        "RUN pip install -r /tmp/requirements-rocm.txt \"numba==0.65.1\"\n"
    ),
    REQUIREMENTS: "polars\nnumba==0.60.0\n",
}


@pytest.mark.parametrize("touched", [REQUIREMENTS, DOCKERFILE])
def test_a_pin_drift_the_base_already_had_is_reported_unchanged_and_exits_0(
        git_repo: GitRepo, touched: str) -> None:
    base = _commit(git_repo, {**BASE_FILES, **PIN_FILES})
    # the PR touches one of the drifting places, moving its lines (the finding is anchored
    # there, where the base anchored it elsewhere), and adds nothing new
    head = _commit(git_repo, {touched: "# ROCm test-time packages\n" + PIN_FILES[touched]})
    code = main(["analyze", "--repo", str(git_repo.root), "--base", base, "--head", head,
                 "--format", "json", "-o", str(git_repo.root.parent / "out.json")])
    doc = json.loads((git_repo.root.parent / "out.json").read_text())
    drift = [f for f in doc["findings"] if f["rule"].startswith("PIN") and "numba" in f["message"]]
    assert drift, doc["findings"]
    assert {f["baseline"] for f in drift} == {"unchanged"}
    assert code == 0


def test_a_pin_drift_the_pr_brings_is_new(git_repo: GitRepo) -> None:
    base = _commit(git_repo, {**BASE_FILES, **PIN_FILES, REQUIREMENTS: "polars\nnumba==0.65.1\n"})
    report = _run(git_repo, base, _commit(git_repo, {REQUIREMENTS: "polars\nnumba==0.61.0\n"}))
    drift = [f for f in report.findings if f.rule.startswith("PIN") and "numba" in f.message]
    assert drift and {f.baseline for f in drift} == {"new"}


LAUNCHES = {
    "tests/e2e/megatron/test_partial.py": TEST_TEMPLATE.format(ep=2, disabled="").replace(
        "tp_size=2,", 'tp_size=int(os.environ["TP"]),').replace("from tests", "import os\nfrom tests"),
    "tests/e2e/megatron/test_guarded.py": TEST_TEMPLATE.format(ep=2, disabled="").replace(
        "    execute(CASE)", '    if socket.gethostname().startswith("gpu"):\n        execute(CASE)').replace(
        "from tests", "import socket\nfrom tests"),
    "tests/e2e/test_torchrun.py": 'register_rocm_ci(60, "stage-b-1-gpu-mi350")\n'
                                  'import subprocess\nsubprocess.run(["torchrun", "x.py"])\n',
    "tests/e2e/test_server.py": 'register_rocm_ci(60, "stage-b-1-gpu-mi350")\n'
                                'launch_server_process("m", "http://127.0.0.1", other_args=["--tp", "2"])\n',
    "tests/e2e/test_sglang.py": 'register_rocm_ci(60, "stage-b-1-gpu-mi350")\n'
                                'popen_launch_server("m", "http://127.0.0.1", other_args=["--tp", "1"])\n',
}


def test_each_gpu_marker_says_how_much_of_its_launch_was_checked(git_repo: GitRepo) -> None:
    _commit(git_repo, {**BASE_FILES, **LAUNCHES})
    with GitRepository(git_repo.root) as git:
        report = audit(git.tree("HEAD"))
    states = {(t.path, t.backend): (t.launch, t.reasons) for t in report.tests}
    assert states[(MOE, "rocm")] == ("checked", [])
    assert states[("tests/e2e/megatron/test_partial.py", "rocm")][0] == "partial"
    assert states[("tests/e2e/megatron/test_guarded.py", "rocm")][0] == "unchecked"
    assert states[("tests/e2e/test_torchrun.py", "rocm")] == (
        "none", ["launch: none, it names `torchrun`, but no launch of it was found in the test's "
                 "run (one started by a program the test runs is not followed)"])
    assert states[("tests/e2e/test_server.py", "rocm")][1][0].startswith("launch: none, a server test")
    assert states[("tests/e2e/test_sglang.py", "rocm")] == ("checked", [])
    assert report.launch_counts() == {"checked": 4, "partial": 2, "unchecked": 2, "none": 2}
    assert "launches checked: 4 of 8 (2 partly, 2 not at all); 2 GPU markers start no launch the " \
           "rules model" in " ".join(text.render(report).split()).replace("Launches", "launches")
    assert "Launches checked: 4 of 8" in markdown.render(report)


def test_launch_checking_switched_off_leaves_launches_unchecked(git_repo: GitRepo) -> None:
    _commit(git_repo, {**BASE_FILES, ".github/rocmbot.yml": "launch:\n  enabled: false\n"})
    with GitRepository(git_repo.root) as git:
        report = audit(git.tree("HEAD"))
    assert _entry(report, MOE).launch == "unchecked"
    assert _entry(report, MOE).reasons == ["launch not checked: launch checking is off (`launch.enabled`)"]


@pytest.mark.parametrize("mode", ["analyze", "audit"])
def test_cpu_markers_and_markers_without_a_suite_have_no_cadence(git_repo: GitRepo, mode: str) -> None:
    files = {"tests/test_cpu.py": 'register_cpu_ci(60, "stage-a-cpu")\n',
             "tests/test_nosuite.py": "register_rocm_ci(60)\n"}
    base = _commit(git_repo, {**BASE_FILES, **files})
    head = _commit(git_repo, {path: text + "# changed\n" for path, text in files.items()})
    with GitRepository(git_repo.root) as git:
        report = audit(git.tree(head)) if mode == "audit" else analyze(git.tree(base), git.tree(head))
    cpu = _entry(report, "tests/test_cpu.py", "cpu")
    assert (cpu.launch, cpu.cadence) == (None, None)
    assert _entry(report, "tests/test_nosuite.py").cadence is None
    assert "launches checked: 3 of 3" in text.render(report).replace("Launches", "launches")


def test_disabling_a_test_whose_launch_is_only_unresolved_says_nothing_more(git_repo: GitRepo) -> None:
    partial = LAUNCHES["tests/e2e/megatron/test_partial.py"]
    base = _commit(git_repo, {**BASE_FILES, "tests/e2e/megatron/test_partial.py": partial})
    disabled = partial.replace('"stage-c-4-gpu-mi350")', f'"stage-c-4-gpu-mi350", disabled="{REASON}")')
    report = _run(git_repo, base, _commit(git_repo, {"tests/e2e/megatron/test_partial.py": disabled}))
    entry = _entry(report, "tests/e2e/megatron/test_partial.py")
    assert (entry.change, entry.reasons, entry.launch) == ("disabled", [f"disabled: '{REASON}'"], "partial")


def test_a_module_that_cannot_be_read_does_not_stop_saying_why_there_is_no_launch(git_repo: GitRepo) -> None:
    _commit(git_repo, {**BASE_FILES, "tests/e2e/test_plain.py":
                       'from tests.e2e import helper\nregister_rocm_ci(60, "stage-b-1-gpu-mi350")\n'})
    git_repo.write("tests/e2e/helper.py", b"\xff\xfe torchrun \x00")
    git_repo.commit()
    with GitRepository(git_repo.root) as git:
        report = audit(git.tree("HEAD"))
    assert _entry(report, "tests/e2e/test_plain.py").reasons == [
        "launch: none, a plain test: it starts no training launch"]


def test_an_error_of_a_test_the_environment_change_reaches_is_unchanged(git_repo: GitRepo) -> None:
    base = _commit(git_repo, {**BASE_FILES, MOE: _moe(4, None),
                              ".github/workflows/build-image.yml": BUILDS_THE_IMAGE})
    dockerfile = BASE_FILES[DOCKERFILE] + "RUN echo rebuilt\n"
    report = _run(git_repo, base, _commit(git_repo, {DOCKERFILE: dockerfile}))
    assert (_entry(report, MOE).change, _entry(report, MOE).tier) == ("affected", "environment")
    errors = [f for f in report.errors if f.rule == "PAR002"]
    assert errors and {f.baseline for f in errors} == {"unchanged"}  # the head's, reused
    assert report.exit_code == 0


def test_a_pin_finding_the_change_only_reanchors_is_unchanged(git_repo: GitRepo) -> None:
    """The base has `numba` pinned one way in the image and another in two workflows; the PR
    touches the second workflow, where the head's finding is now anchored (the first place the
    PR can fix), while the base anchored it at the first workflow: still the same finding."""
    step = ("on: [pull_request]\njobs:\n  t:\n    runs-on: [self-hosted, mi350]\n    container: rocm/x:ci\n"
            "    steps:\n      - run: pip install \"numba==0.64.0\"\n")
    base = _commit(git_repo, {**BASE_FILES, DOCKERFILE: "FROM rocm/x\nRUN pip install \"numba==0.65.1\"\n",
                              ".github/workflows/a-rocm.yml": step, ".github/workflows/b-rocm.yml": step})
    head = _commit(git_repo, {".github/workflows/b-rocm.yml": "# touched\n" + step})
    report = _run(git_repo, base, head)
    (drift,) = [f for f in report.findings if f.rule.startswith("PIN") and "numba" in f.message]
    assert (drift.path, drift.baseline) == (".github/workflows/b-rocm.yml", "unchanged")


def test_the_same_headline_on_two_backends_names_each_suite(git_repo: GitRepo) -> None:
    _commit(git_repo, {**BASE_FILES, MOE: TEST_TEMPLATE.format(ep=4, disabled="")})
    with GitRepository(git_repo.root) as git:
        report = audit(git.tree("HEAD"))
    found = sorted((f.backend, f.suite, f.message) for f in report.findings if f.rule == "PAR002")
    assert found == [("cuda", "stage-c-8-gpu-h200", UPSTREAM), ("rocm", "stage-c-4-gpu-mi350", UPSTREAM)]
    doc = json.loads(FORMATS["json"](report))
    assert sorted((f["backend"], f["suite"]) for f in doc["findings"] if f["rule"] == "PAR002") == [
        ("cuda", "stage-c-8-gpu-h200"), ("rocm", "stage-c-4-gpu-mi350")]
    # the two read the same but for their suite, which the headline then names
    for rendered in (markdown.render(report), text.render(report)):
        assert "stage-c-8-gpu-h200" in _headline(rendered, "PAR002", 0)
        assert "stage-c-4-gpu-mi350" in _headline(rendered, "PAR002", 1)


def _headline(rendered: str, rule: str, index: int) -> str:
    return [line for line in rendered.splitlines() if rule in line and "expert-grid" in line][index]
