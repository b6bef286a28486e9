"""The repository's CI evaluated, not pattern-matched: which jobs run for which event, with
their path filters, labels, gates and the outputs of the jobs they need; suite cadences from
it and from the repository's suite registry; what its CI runs for one pull request."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.analysis.ci import ci_index
from bot.analysis.ci.cadence import CiModel
from bot.analysis.ci.expressions import Unknown
from bot.analysis.ci.logic import and3, or3
from bot.analysis.ci.model import Event, Simulation
from bot.analysis.engine import analyze, audit
from bot.analysis.report import Report, TestEntry
from bot.analysis.snapshot import Snapshot
from bot.analysis.tree import FolderTree, GitRepository
from bot.analysis.workflows import Workflow, parse_workflow
from config.repo import defaults
from tests.analysis.ci_fixtures import RUN_SUITE, SGLANG_WORKFLOWS
from tests.gitrepo import GitRepo


def _workflows(texts: dict[str, str]) -> dict[str, Workflow]:
    out = {}
    for path, text in texts.items():
        parsed = parse_workflow(path, text)
        assert isinstance(parsed, Workflow)
        out[path] = parsed
    return out


def _sim(event: Event, texts: dict[str, str] = SGLANG_WORKFLOWS) -> Simulation:
    return Simulation(_workflows(texts), lambda path: None, event)


def _runs(sim: Simulation, workflow: str, job: str) -> bool | None:
    found = sim.run((f".github/workflows/{workflow}", job))
    assert found is not None
    return found.runs


def test_three_valued_and_or() -> None:
    assert and3(True, None) is None and and3(None, False) is False and and3(True, True) is True
    assert or3(False, None) is None and or3(None, True) is True and or3(False, False) is False


def test_a_pull_request_runs_the_stages_its_path_filters_select() -> None:
    library = _sim(Event(labels=frozenset({"run-ci"}), changed=frozenset({"python/sglang/srt/x.py"})))
    assert _runs(library, "pr-amd.yml", "stage-a-test-1-gpu-small-amd") is True
    assert _runs(library, "pr-amd.yml", "stage-b-test-1-gpu-small-amd") is True
    assert _runs(library, "pr-amd.yml", "jit-kernel-unit-test-amd") is False
    kernels = _sim(Event(labels=frozenset({"run-ci"}), changed=frozenset({"python/sglang/kernels/a.py"})))
    assert _runs(kernels, "pr-amd.yml", "jit-kernel-unit-test-amd") is True
    assert _runs(kernels, "pr-amd.yml", "stage-a-test-1-gpu-small-amd") is False


def test_a_readme_change_runs_none_of_the_amd_workflow() -> None:
    readme = _sim(Event(labels=frozenset({"run-ci"}), changed=frozenset({"README.md"})))
    assert _runs(readme, "pr-amd.yml", "stage-a-test-1-gpu-small-amd") is False
    markdown = _sim(Event(labels=frozenset({"run-ci"}), changed=frozenset({"test/README.md"})))
    assert _runs(markdown, "pr-amd.yml", "stage-a-test-1-gpu-small-amd") is False  # `!(*.md)`


def test_without_changed_paths_the_filtered_jobs_are_unknown_not_guessed() -> None:
    sim = _sim(Event(labels=frozenset({"run-ci"})))
    assert _runs(sim, "pr-amd.yml", "stage-a-test-1-gpu-small-amd") is None
    assert _runs(sim, "pr-amd.yml", "call-gate") is None
    assert "path filter" in sim.runs[(".github/workflows/pr-amd.yml", "call-gate")].why


def test_a_label_gate_in_a_called_workflow_fails_the_jobs_that_need_it() -> None:
    files = frozenset({"python/sglang/srt/x.py"})
    without = _sim(Event(labels=frozenset(), changed=files))
    assert _runs(without, "pr-amd.yml", "stage-a-test-1-gpu-small-amd") is False
    assert _runs(without, "pr-amd-extra.yml", "extra-a-test-1-gpu-small-amd") is False
    gate = without.runs[(".github/workflows/pr-amd-extra.yml", "call-gate")]  # asked above
    assert gate.result == "failure" and "run-ci" in gate.why
    base = _sim(Event(labels=frozenset({"run-ci"}), changed=files))
    assert _runs(base, "pr-amd-extra.yml", "extra-a-test-1-gpu-small-amd") is False
    extra = _sim(Event(labels=frozenset({"run-ci", "run-ci-extra"}), changed=files))
    assert _runs(extra, "pr-amd-extra.yml", "extra-a-test-1-gpu-small-amd") is True
    unknown = _sim(Event(labels=None, changed=files))
    assert _runs(unknown, "pr-amd-extra.yml", "extra-a-test-1-gpu-small-amd") is None


def test_a_schedule_runs_everything_that_escapes_on_schedule() -> None:
    sim = _sim(Event(name="schedule", labels=frozenset()))
    assert _runs(sim, "pr-amd.yml", "stage-b-test-1-gpu-small-amd") is True  # run_all_tests
    assert _runs(sim, "nightly-amd.yml", "nightly-amd-1-gpu") is True
    cuda = sim.run((".github/workflows/pr-cuda.yml", "base-b-test-1-gpu-small"))
    assert cuda is not None and cuda.runs is False and cuda.why == "the workflow does not run on `schedule`"


def _model(texts: dict[str, str] = SGLANG_WORKFLOWS, registry: bool = True) -> CiModel:
    from bot.analysis.ci.registry import SuiteRegistry, read_registry

    found = read_registry("test/run_suite.py", RUN_SUITE) if registry else None
    assert found is None or isinstance(found, SuiteRegistry)
    return CiModel(_workflows(texts), dict(texts), lambda path: None, found)


def test_cadences_per_pr_on_label_nightly_and_the_wrong_backend() -> None:
    model = _model()
    assert model.ci_labels == frozenset({"run-ci"})
    stage_a = model.cadence("stage-a-test-1-gpu-small-amd", "rocm")
    assert (stage_a.cadence, stage_a.gate) == ("per-pr", None)
    assert model.cadence("stage-b-test-1-gpu-small-amd", "rocm").cadence == "per-pr"
    extra = model.cadence("extra-a-test-1-gpu-small-amd", "rocm")
    assert (extra.cadence, extra.gate) == ("on-label", "run-ci-extra")
    assert "run-ci-extra" in extra.why
    assert model.cadence("nightly-amd-1-gpu", "rocm").cadence == "nightly"
    # a ROCm marker on a CUDA suite: no AMD job runs it
    cuda = model.cadence("base-b-test-1-gpu-small", "rocm")
    assert cuda.cadence == "external"
    assert model.cadence("base-b-test-1-gpu-small", "cuda").cadence == "per-pr"
    assert model.cadence("no-such-suite", "rocm").cadence == "external"


def test_without_a_registry_the_workflows_decide_and_a_schedule_only_job_is_nightly() -> None:
    texts = {**SGLANG_WORKFLOWS, ".github/workflows/nightly-amd.yml": SGLANG_WORKFLOWS[
        ".github/workflows/nightly-amd.yml"].replace("nightly-amd-1-gpu", "stage-z-1-gpu-amd")}
    model = _model(texts, registry=False)
    assert model.cadence("stage-z-1-gpu-amd", "rocm").cadence == "nightly"
    assert model.cadence("stage-a-test-1-gpu-small-amd", "rocm").cadence == "per-pr"


def test_what_the_repository_ci_runs_for_one_pull_request() -> None:
    model = _model()
    library = frozenset({"python/sglang/srt/x.py"})
    assert model.repo_ci("stage-a-test-1-gpu-small-amd", "rocm", None, library).runs is True
    assert model.repo_ci("jit-kernel-unit-test-amd", "rocm", None, library).runs is False
    assert model.repo_ci("extra-a-test-1-gpu-small-amd", "rocm", None, library).runs is False
    labelled = frozenset({"run-ci", "run-ci-extra"})
    assert model.repo_ci("extra-a-test-1-gpu-small-amd", "rocm", labelled, library).runs is True
    readme = model.repo_ci("stage-a-test-1-gpu-small-amd", "rocm", None, frozenset({"README.md"}))
    assert readme.runs is False


SGLANG_TEST = """\
from sglang.test.ci.ci_register import register_amd_ci

register_amd_ci(est_time=60, suite="{suite}")
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def _repo_files() -> dict[str, str]:
    files = dict(SGLANG_WORKFLOWS)
    files["test/run_suite.py"] = RUN_SUITE
    for suite in ("stage-a-test-1-gpu-small-amd", "extra-a-test-1-gpu-small-amd",
                  "nightly-amd-1-gpu", "base-b-test-1-gpu-small", "jit-kernel-unit-test-amd"):
        files[f"test/registered/test_{suite.replace('-', '_')}.py"] = SGLANG_TEST.format(suite=suite)
    return files


def _entry(report: Report, suite: str) -> TestEntry:
    (entry,) = [t for t in report.tests if t.suite == suite]
    return entry


def test_the_audit_reports_each_marker_cadence_and_gate(tmp_path: Path) -> None:
    report = audit(FolderTree(_write(tmp_path, _repo_files())))
    assert _entry(report, "stage-a-test-1-gpu-small-amd").cadence == "per-pr"
    extra = _entry(report, "extra-a-test-1-gpu-small-amd")
    assert (extra.cadence, extra.gate) == ("on-label", "run-ci-extra")
    assert extra.as_json()["gate"] == "run-ci-extra"
    assert _entry(report, "nightly-amd-1-gpu").cadence == "nightly"
    assert _entry(report, "base-b-test-1-gpu-small").cadence == "external"
    assert [f.rule for f in report.findings if f.test and "base_b" in f.test] == ["REG001"]


@pytest.fixture
def sglang(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path)
    repo.write_all(_repo_files())
    repo.commit("base")
    return repo


def _analyze(repo: GitRepo, base: str, head: str) -> Report:
    with GitRepository(repo.root) as git:
        return analyze(git.tree(base), git.tree(head))


def test_a_library_change_selects_per_pr_tests_and_skips_the_label_gated_with_why(sglang: GitRepo) -> None:
    base = sglang.git("rev-parse", "HEAD")
    for suite in ("stage-a-test-1-gpu-small-amd", "extra-a-test-1-gpu-small-amd",
                  "jit-kernel-unit-test-amd"):
        path = f"test/registered/test_{suite.replace('-', '_')}.py"
        sglang.write_all({path: SGLANG_TEST.format(suite=suite) + "# changed\n"})
    head = sglang.commit("change tests")
    report = _analyze(sglang, base, head)
    picked = {s.suite: s for s in report.selected}
    assert set(picked) == {"stage-a-test-1-gpu-small-amd", "jit-kernel-unit-test-amd"}
    assert picked["stage-a-test-1-gpu-small-amd"].trigger == \
        "test/registered/test_stage_a_test_1_gpu_small_amd.py"
    (skipped,) = report.skipped
    assert (skipped.suite, skipped.why, skipped.gate) == (
        "extra-a-test-1-gpu-small-amd", "on-label", "run-ci-extra")
    assert report.dispatch_mode == "targeted"
    assert report.repo_ci is not None and report.repo_ci.labels == ("run-ci",)
    # test/** matches main_package, test/registered/kernels/** does not: stage-a runs, jit does not
    assert report.repo_ci.affected == 1
    as_json = report.as_json()
    assert as_json["dispatch_mode"] == "targeted"
    assert as_json["skipped"] == [skipped.as_json()] and skipped.as_json()["why"] == "on-label"


def test_complement_skips_what_the_repository_ci_runs(sglang: GitRepo) -> None:
    sglang.write_all({".github/rocmbot.yml": "dispatch:\n  mode: complement\n"})
    base = sglang.commit("policy")
    for suite in ("stage-a-test-1-gpu-small-amd", "jit-kernel-unit-test-amd"):
        path = f"test/registered/test_{suite.replace('-', '_')}.py"
        sglang.write_all({path: SGLANG_TEST.format(suite=suite) + "# changed\n"})
    head = sglang.commit("change tests")
    report = _analyze(sglang, base, head)
    assert report.dispatch_mode == "complement"
    assert [s.suite for s in report.selected] == ["jit-kernel-unit-test-amd"]
    (skipped,) = report.skipped
    assert skipped.why == "repo-ci" and "stage-a-test-1-gpu-small-amd" in (skipped.job or "")


def test_complement_falls_back_to_targeted_when_the_ci_cannot_be_decided(sglang: GitRepo) -> None:
    sglang.write_all({".github/rocmbot.yml": "dispatch:\n  mode: complement\n",
                  ".github/workflows/pr-amd.yml": SGLANG_WORKFLOWS[".github/workflows/pr-amd.yml"]
                  .replace("!inputs.target_stage &&", "!inputs.target_stage && vars.RUN_AMD &&", 1)})
    base = sglang.commit("policy")
    path = "test/registered/test_stage_a_test_1_gpu_small_amd.py"
    sglang.write_all({path: SGLANG_TEST.format(suite="stage-a-test-1-gpu-small-amd") + "# changed\n"})
    head = sglang.commit("change test")
    report = _analyze(sglang, base, head)
    assert report.dispatch_mode == "targeted"
    assert "cannot be decided" in report.dispatch_reason
    assert [s.suite for s in report.selected] == ["stage-a-test-1-gpu-small-amd"]


def test_the_index_warms_every_event_once(tmp_path: Path) -> None:
    snap = Snapshot(FolderTree(_write(tmp_path, _repo_files())), defaults())
    index = ci_index(snap)
    index.warm()
    assert index.model.registry is not None
    assert len(index.model._sims) >= 4


_WORDS = st.sampled_from([
    "[linux-mi35x-gpu-8.fabric]", "!(*.md)", "python/**", "test/[z-a]*.py", "**/*.py", "{a,b}",
    "stage-a-test-1-gpu-small-amd", "${{ inputs.x }}", "'", "\"", "*", "?(x)", "+(a|aa)b", "\\",
    "contains(github.event.pull_request.labels.*.name, 'run-ci')", "always()", "failure(", "!",
    "needs.x.outputs.y == 'true'", "github.event_name == 'schedule'", "fromJSON('[')", "",
])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(_WORDS, min_size=6, max_size=6),
    changed=st.lists(st.one_of(_WORDS, st.text(max_size=12)), max_size=4),
)
def test_random_workflow_words_never_stop_the_model(words: list[str], changed: list[str]) -> None:
    """Runner labels, `if:`s, filters and paths of any shape give decisions, never a crash."""
    import json

    quoted = [json.dumps(w) for w in words]
    workflow = (
        f"on:\n  pull_request:\n    paths: [{quoted[0]}]\n"
        "jobs:\n"
        f"  x:\n    runs-on: {quoted[1]}\n    if: {quoted[2]}\n    outputs:\n      y: {quoted[3]}\n"
        "    steps:\n      - id: f\n        uses: dorny/paths-filter@v3\n        with:\n"
        f"          filters: {json.dumps('y: [' + json.dumps(words[4]) + ']')}\n"
        f"      - run: {quoted[5]}\n"
        "  stage-a-test-1-gpu-small-amd:\n    needs: [x]\n    runs-on: [mi300]\n"
        f"    if: {quoted[2]}\n    steps:\n      - run: run_suite --suite stage-a-test-1-gpu-small-amd\n"
    )
    texts = {".github/workflows/pr-amd.yml": workflow}
    parsed = parse_workflow(".github/workflows/pr-amd.yml", workflow)
    if not isinstance(parsed, Workflow):
        return  # not YAML: the workflow is REG004, nothing to evaluate
    model = CiModel({".github/workflows/pr-amd.yml": parsed}, texts, lambda path: None)
    found = model.cadence("stage-a-test-1-gpu-small-amd", "rocm")
    assert found.cadence in ("per-pr", "on-label", "nightly", "external")
    run = model.repo_ci("stage-a-test-1-gpu-small-amd", "rocm", None, frozenset(changed))
    assert run.runs in (True, False, None)


ODD = """\
on:
  pull_request:
    types: [labeled]
jobs:
  a:
    runs-on: [self-hosted, mi300]
    steps:
      - run: run_suite --suite only-when-labelled-amd
"""

BROKEN = """\
on:
  pull_request:
  workflow_dispatch:
    inputs:
      n: {type: number, default: "x"}
      flag: {type: boolean, default: "true"}
jobs:
  missing-need:
    needs: [nowhere]
    runs-on: [self-hosted, mi300]
    steps:
      - run: run_suite --suite odd-a-amd
  calls-nothing:
    uses: ./.github/workflows/absent.yml
  loop-a:
    needs: [loop-b]
    runs-on: [self-hosted, mi300]
    steps:
      - run: run_suite --suite odd-b-amd
  loop-b:
    needs: [loop-a]
    runs-on: [self-hosted, mi300]
    steps: [{run: "true"}]
  filters:
    runs-on: [self-hosted, mi300]
    outputs:
      x: ${{ steps.none.outputs.x }}
      y: ${{ steps.bad.outputs.y }}
      z: ${{ steps.bad.outputs.lib }}
      w: ${{ steps.s.outputs.w }}
      v: ${{ ) }}
    steps:
      - id: none
        uses: dorny/paths-filter@v3
      - id: bad
        uses: dorny/paths-filter@v3
        with:
          filters: .github/filters.yml
      - name: broken if
        if: github.event_name ==
        run: "true"
      - id: s
        run: python write_outputs.py
  after:
    needs: [filters]
    if: needs.filters.outputs.z == 'true'
    runs-on: [self-hosted, mi300]
    steps:
      - run: run_suite --suite odd-c-amd
"""


def test_what_cannot_be_evaluated_is_unknown_and_noted() -> None:
    texts = {".github/workflows/odd.yml": ODD, ".github/workflows/broken.yml": BROKEN}
    sim = _sim(Event(labels=frozenset(), changed=frozenset({"lib/x.py"})), texts)
    assert _runs(sim, "odd.yml", "a") is False  # only `labeled` events
    assert "runs only on `labeled`" in sim.runs[(".github/workflows/odd.yml", "a")].why
    assert _runs(sim, "broken.yml", "missing-need") is None
    assert isinstance(sim.runs[(".github/workflows/broken.yml", "calls-nothing")].result, Unknown)
    assert sim.runs[(".github/workflows/broken.yml", "missing-need")].why == "a job it needs may not succeed"
    assert _runs(sim, "broken.yml", "loop-a") is None
    assert _runs(sim, "broken.yml", "after") is None
    sim.run_all()
    notes = sorted(n.message for n in sim.notes)
    assert any("needs `nowhere`, which is not a job" in n for n in notes)
    assert any("calls `./.github/workflows/absent.yml`" in n or "absent.yml" in n for n in notes)
    assert any("broken if" in n and "does not parse" in n for n in notes)
    assert any("paths filter of step" in n for n in notes)
    dispatch = _sim(Event(name="workflow_dispatch", labels=frozenset()), texts)
    assert _runs(dispatch, "broken.yml", "missing-need") is None


def test_the_index_reports_what_it_could_not_evaluate_and_the_registry(tmp_path: Path) -> None:
    files = {".github/workflows/broken.yml": BROKEN, "test/run_suite.py": "PER_COMMIT_SUITES = {\n"}
    index = ci_index(Snapshot(FolderTree(_write(tmp_path, files)), defaults()))
    problems = index.problems()
    assert any(path == "test/run_suite.py" and "cannot be read" in message
               for path, _, message in problems)
    assert any(path == ".github/workflows/broken.yml" for path, _, _ in problems)


def test_a_registry_decides_suites_no_job_names(tmp_path: Path) -> None:
    registry = ('PER_COMMIT_SUITES = {"amd": ["dyn-a-amd"]}\n'
                'NIGHTLY_SUITES = {"amd": ["dyn-n-amd"]}\n')
    files = {".github/workflows/pr.yml": "on: pull_request\njobs:\n  t:\n    runs-on: [mi300]\n"
             "    steps:\n      - run: run_suite --suite ${{ matrix.s }}\n",
             "test/run_suite.py": registry}
    index = ci_index(Snapshot(FolderTree(_write(tmp_path, files)), defaults()))
    assert index.model.cadence("dyn-a-amd", "rocm").cadence == "per-pr"
    assert index.model.cadence("dyn-n-amd", "rocm").cadence == "nightly"
    assert index.model.required((".github/workflows/none.yml", "x")) == frozenset()


def test_an_image_built_with_the_build_action_reaches_the_tests(tmp_path: Path) -> None:
    files = {
        ".github/workflows/pr-rocm.yml": (
            "on: pull_request\njobs:\n  image:\n    runs-on: [self-hosted, mi300]\n    steps:\n"
            "      - uses: docker/build-push-action@v6\n        with: {file: docker/Dockerfile.rocm}\n"
            "  test:\n    runs-on: [self-hosted, mi300]\n    container: rocm/x:1\n    steps:\n"
            "      - id: f\n        uses: dorny/paths-filter@v3\n        with:\n"
            "          filters: |\n            lib: ['!(*.md)']\n"
            "      - run: run_suite --suite s-amd\n"),
        "docker/Dockerfile.rocm": "FROM rocm/x:1\n",
    }
    index = ci_index(Snapshot(FolderTree(_write(tmp_path, files)), defaults()))
    assert index.built_for_pull_requests() == frozenset({"docker/Dockerfile.rocm"})
    assert index.unreached_images({"docker/Dockerfile.rocm"}) == {}
    assert index.environment({"README.md"}) == []  # `!(*.md)` is a filter, not a file


def test_helper_jobs_on_hosted_runners_do_not_hide_a_prebuilt_image(tmp_path: Path) -> None:
    """miles' ROCm workflow resolves its image on `ubuntu-latest` and runs the tests in it."""
    files = {
        ".github/workflows/pr-test-rocm.yml": (
            "on: pull_request\njobs:\n  resolve:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - run: echo image=rocm/sgl-dev:x >> $GITHUB_OUTPUT\n"
            "  test:\n    runs-on: [self-hosted, mi350]\n    container: ${{ needs.resolve.outputs.image }}\n"
            "    steps:\n      - run: run_suite --suite stage-c-4-gpu-mi350\n"),
        "docker/Dockerfile.rocm": "FROM rocm/x:1\n",
    }
    index = ci_index(Snapshot(FolderTree(_write(tmp_path, files)), defaults()))
    assert list(index.unreached_images({"docker/Dockerfile.rocm"})) == ["docker/Dockerfile.rocm"]
    assert "a prebuilt image" in index.unreached_images({"docker/Dockerfile.rocm"})["docker/Dockerfile.rocm"]
