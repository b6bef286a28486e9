"""`analyze` and `audit` on git repositories shaped like the target ones: one scenario per
change kind, per selection tier and per registration rule."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import weakref
from dataclasses import replace
from pathlib import Path

import pytest

from bot.analysis import pins
from bot.analysis.engine import _Analysis, analyze, audit, compare_markers, read_config
from bot.analysis.markers import Marker
from bot.analysis.report import Report, TestEntry
from bot.analysis.snapshot import Derived, Snapshot
from bot.analysis.tree import FolderTree, GitRepository
from bot.cli.example import BASE_FILES
from bot.formats import markdown
from config.repo import defaults
from tests.gitrepo import GitRepo

MOE = "tests/e2e/megatron/test_qwen35_moe.py"
SHORT = "tests/e2e/megatron/test_short.py"
HARNESS = "tests/e2e/megatron/_common.py"
REASON = "FIXME: re-enable once this case passes on the MI350 runners."


def _run(repo: GitRepo, base: str, head: str) -> Report:
    with GitRepository(repo.root) as git:
        return analyze(git.tree(base), git.tree(head))


def _entry(report: Report, path: str, backend: str = "rocm") -> TestEntry:
    (entry,) = [t for t in report.tests if t.path == path and t.backend == backend]
    return entry


@pytest.fixture
def example(git_repo: GitRepo) -> tuple[GitRepo, str]:
    git_repo.write_all(BASE_FILES)
    return git_repo, git_repo.commit("base")


def _replace(repo: GitRepo, path: str, old: str, new: str) -> None:
    text = (repo.root / path).read_text()
    assert old in text, (old, path)
    (repo.root / path).write_text(text.replace(old, new))


def test_enabling_a_test_selects_it_directly_and_quotes_the_old_reason(example: tuple[GitRepo, str]) -> None:
    repo, base = example
    _replace(repo, MOE, f', disabled="{REASON}"', "")
    report = _run(repo, base, repo.commit())
    moe = _entry(report, MOE)
    assert moe.change == "enabled"
    assert moe.reasons == [f"disabled marker removed; was: '{REASON}'"]
    assert _entry(report, MOE, "cuda").change == "modified"
    assert _entry(report, SHORT).change == "unchanged"
    assert [(s.path, s.tier, s.suite) for s in report.selected] == [(MOE, "direct", "stage-c-4-gpu-mi350")]
    assert report.selected[0].gpu_minutes == pytest.approx(1600 / 60 * 4)
    assert report.base and report.head and len(report.head) == 40


def test_disabling_and_changing_the_reason(example: tuple[GitRepo, str]) -> None:
    repo, base = example
    _replace(repo, SHORT, '"stage-b-1-gpu-mi350")', '"stage-b-1-gpu-mi350", disabled="FIXME: hangs")')
    _replace(repo, MOE, REASON, "FIXME: still failing")
    report = _run(repo, base, repo.commit())
    short = _entry(report, SHORT)
    assert (short.change, short.disabled, short.reasons) == (
        "disabled",
        "FIXME: hangs",
        ["disabled: 'FIXME: hangs'"],
    )
    assert _entry(report, MOE).change == "reason"
    assert "to 'FIXME: still failing'" in _entry(report, MOE).reasons[0]
    assert report.selected == []  # disabled markers are never selected


def test_suite_change_and_estimate_change(example: tuple[GitRepo, str]) -> None:
    repo, base = example
    _replace(repo, SHORT, '900, "stage-b-1-gpu-mi350"', '1200, "stage-c-4-gpu-mi350"')
    report = _run(repo, base, repo.commit())
    short = _entry(report, SHORT)
    assert short.change == "suite"
    assert short.reasons == [
        "suite changed from stage-b-1-gpu-mi350 to stage-c-4-gpu-mi350",
        "estimated time changed from 900 s to 1200 s",
    ]
    assert [s.path for s in report.selected] == [SHORT]
    assert (f"- `{SHORT}` (rocm, `stage-c-4-gpu-mi350`): **moved**; launch checked, valid — "
            "suite changed from stage-b-1-gpu-mi350 to stage-c-4-gpu-mi350; estimated time "
            "changed from 900 s to 1200 s") in markdown.render(report)


def test_added_and_removed_markers_and_files(example: tuple[GitRepo, str]) -> None:
    repo, base = example
    repo.write("tests/e2e/test_new.py", 'register_rocm_ci(60, "stage-b-1-gpu-mi350")\n')
    _replace(repo, MOE, 'register_cuda_ci(1500, "stage-c-8-gpu-h200")\n', "")
    repo.remove(SHORT)
    report = _run(repo, base, repo.commit())
    new = _entry(report, "tests/e2e/test_new.py")
    assert (new.change, new.reasons) == (
        "added", ["new test file", "launch: none, a plain test: it starts no training launch"])
    assert (new.launch, new.cadence) == ("none", "per-pr")
    assert _entry(report, MOE, "cuda").change == "removed"
    assert _entry(report, MOE, "cuda").reasons == ["marker removed"]
    assert _entry(report, SHORT).reasons == ["test file removed"]
    assert [s.path for s in report.selected] == ["tests/e2e/test_new.py"]


def test_marker_added_to_an_existing_file(example: tuple[GitRepo, str]) -> None:
    repo, base = example
    _replace(
        repo,
        SHORT,
        'register_rocm_ci(900, "stage-b-1-gpu-mi350")',
        'register_rocm_ci(900, "stage-b-1-gpu-mi350")\nregister_cuda_ci(900, "stage-c-8-gpu-h200")',
    )
    report = _run(repo, base, repo.commit())
    assert _entry(report, SHORT, "cuda").reasons == ["marker added"]
    assert _entry(report, SHORT).change == "modified"


def test_a_changed_harness_makes_its_importers_affected(example: tuple[GitRepo, str]) -> None:
    repo, base = example
    _replace(repo, HARNESS, "exist_ok=True", "exist_ok=False")
    report = _run(repo, base, repo.commit())
    short = _entry(report, SHORT)
    assert short.change == "affected"
    assert short.reasons == [f"imports `{HARNESS}`, which changed"]
    assert _entry(report, MOE).change == "affected"  # affected, but disabled: not selected
    assert [(s.path, s.tier) for s in report.selected] == [(SHORT, "harness")]


def test_a_removed_imported_module_still_counts(example: tuple[GitRepo, str]) -> None:
    repo, base = example
    repo.write("tests/e2e/megatron/helpers.py", "X = 1\n")
    _replace(repo, SHORT, "from tests.e2e", "from tests.e2e.megatron.helpers import X\nfrom tests.e2e")
    base = repo.commit()
    repo.remove("tests/e2e/megatron/helpers.py")
    report = _run(repo, base, repo.commit())
    assert _entry(report, SHORT).change == "affected"


def test_a_rocm_environment_change_affects_every_rocm_test(example: tuple[GitRepo, str]) -> None:
    repo, base = example
    # the ROCm job builds its image from the Dockerfile: a change to it reaches every test
    _replace(repo, ".github/workflows/_run-ci-rocm.yml", "      - name: Run\n",
             "      - run: docker build -f docker/Dockerfile.rocm -t ci .\n      - name: Run\n")
    base = repo.commit()
    _replace(repo, "docker/Dockerfile.rocm", "polars", "polars xxhash")
    report = _run(repo, base, repo.commit())
    short = _entry(report, SHORT)
    assert (short.change, short.tier) == ("affected", "environment")
    assert short.reasons == ["the ROCm environment changed: `docker/Dockerfile.rocm`"]
    assert _entry(report, MOE, "cuda").change == "unchanged"
    assert [(s.path, s.tier, s.trigger) for s in report.selected] == [
        (SHORT, "environment", "docker/Dockerfile.rocm")]
    assert report.unreached == {}


def test_a_dockerfile_the_jobs_do_not_build_selects_nothing_and_says_so(
        example: tuple[GitRepo, str]) -> None:
    repo, base = example  # its ROCm job runs in the prebuilt `rocm/sgl-dev:latest`
    _replace(repo, "docker/Dockerfile.rocm", "polars", "polars xxhash")
    report = _run(repo, base, repo.commit())
    assert _entry(report, SHORT).change == "unchanged" and report.selected == []
    assert report.unreached == {"docker/Dockerfile.rocm": (
        "`docker/Dockerfile.rocm` changed; the PR's ROCm jobs run `rocm/sgl-dev:latest`, which no job "
        "of this PR's CI builds, so the change reaches them only when that image is rebuilt")}
    assert report.as_json()["unreached"] == [{"path": "docker/Dockerfile.rocm",
                                              "why": report.unreached["docker/Dockerfile.rocm"]}]


def test_an_unrelated_change_changes_nothing(example: tuple[GitRepo, str]) -> None:
    repo, base = example
    repo.write("README.md", "hello\n")
    report = _run(repo, base, repo.commit())
    assert {t.change for t in report.tests} == {"unchanged"}
    assert report.selected == [] and report.findings == [] and report.exit_code == 0


def test_nightly_and_off_pr_suites_are_not_selected_unless_configured(git_repo: GitRepo) -> None:
    git_repo.write_all(
        {
            ".github/workflows/ci.yml": "run: --suite stage-b-1-gpu-mi350\n",
            ".github/rocmbot.yml": "suites:\n  stage-b-1-gpu-mi350: {per_pr: false}\n",
        }
    )
    base = git_repo.commit()
    git_repo.write("tests/test_a.py", 'register_rocm_ci(60, "nightly-1-gpu-mi350")\n')
    git_repo.write("tests/test_b.py", 'register_rocm_ci(60, "stage-b-1-gpu-mi350")\n')
    # sglang's nightly=True: run by the nightly CI only, whatever the suite
    git_repo.write("tests/test_c.py", 'register_rocm_ci(60, "stage-c-1-gpu-mi350", nightly=True)\n')
    git_repo.write(".github/workflows/ci.yml",
                   "run: --suite stage-b-1-gpu-mi350 --suite stage-c-1-gpu-mi350\n")
    report = _run(git_repo, base, git_repo.commit())
    assert [t.change for t in report.tests] == ["added", "added", "added"]
    assert report.selected == []
    git_repo.write(".github/rocmbot.yml", "select_nightly: true\n")
    base = git_repo.commit()
    git_repo.write("tests/test_a.py", 'register_rocm_ci(61, "nightly-1-gpu-mi350")\n')
    git_repo.write("tests/test_c.py", 'register_rocm_ci(61, "stage-c-1-gpu-mi350", nightly=True)\n')
    report = _run(git_repo, base, git_repo.commit())
    assert [s.path for s in report.selected] == ["tests/test_a.py", "tests/test_c.py"]


def test_policy_is_read_from_the_base_not_the_head(git_repo: GitRepo) -> None:
    git_repo.write("tests/test_a.py", 'register_rocm_ci(60, "stage-q-big")\n')
    git_repo.write(".github/workflows/ci.yml", "run: --suite stage-q-big\n")
    base = git_repo.commit()
    git_repo.write(".github/rocmbot.yml", "tests: ['nothing/*.py']\n")
    git_repo.write("tests/test_a.py", 'register_rocm_ci(61, "stage-q-big")\n')
    report = _run(git_repo, base, git_repo.commit())
    assert [t.change for t in report.tests] == ["modified"]
    assert [f.rule for f in report.findings] == ["REG003"]


def test_registration_findings_are_reported_for_touched_tests_only(example: tuple[GitRepo, str]) -> None:
    repo, base = example
    repo.write(
        "tests/e2e/test_bad.py", 'register_rocm_ci(T, "stage-c-9-gpu-nowhere")\nregister_rocm_ci(1, "big")\n'
    )
    repo.write("tests/e2e/test_broken.py", "register_rocm_ci(1,\n")
    base2 = repo.commit()
    report = _run(repo, base, base2)
    rules = sorted((f.rule, f.path, f.line) for f in report.findings)
    assert rules == [
        ("REG001", "tests/e2e/test_bad.py", 1),
        ("REG001", "tests/e2e/test_bad.py", 2),
        ("REG002", "tests/e2e/test_bad.py", 1),
        ("REG003", "tests/e2e/test_bad.py", 2),
        ("REG004", "tests/e2e/test_broken.py", 1),
    ]
    assert report.exit_code == 1
    repo.write("README.md", "x\n")
    later = _run(repo, base2, repo.commit())
    assert later.findings == []
    full = audit(FolderTree(repo.root))
    assert {f.rule for f in full.findings} == {"REG001", "REG002", "REG003", "REG004"}


def test_a_broken_harness_is_reg004_for_its_tests(example: tuple[GitRepo, str]) -> None:
    repo, base = example
    _replace(repo, HARNESS, "def prepare(case: CaseConfig) -> None:", "def prepare(case: CaseConfig) -> None")
    report = _run(repo, base, repo.commit())
    assert [(f.rule, f.path) for f in report.findings] == [("REG004", HARNESS)]
    assert _entry(report, SHORT).change == "affected"


def test_oversized_and_binary_test_files_are_skipped_with_reg004(git_repo: GitRepo) -> None:
    git_repo.write("README.md", "x")
    base = git_repo.commit()
    git_repo.write("tests/test_big.py", "x = 1\n" * 200_000)
    git_repo.write("tests/test_bin.py", b"\x00\x01register_rocm_ci(1)")
    git_repo.write("tests/test_latin.py", b"# \xe9\n")
    report = _run(git_repo, base, git_repo.commit())
    messages = {f.path: f.message for f in report.findings}
    assert set(messages) == {"tests/test_big.py", "tests/test_bin.py", "tests/test_latin.py"}
    assert "over the 1048576-byte limit" in messages["tests/test_big.py"]
    assert "binary" in messages["tests/test_bin.py"]
    assert "not UTF-8" in messages["tests/test_latin.py"]


def test_invalid_config_is_cfg001_and_the_defaults_stand_in(git_repo: GitRepo) -> None:
    git_repo.write(".github/rocmbot.yml", "tests: 5\nselect_nightly: true\n")
    git_repo.write("tests/test_a.py", 'register_rocm_ci(60, "nightly-1-gpu-x")\n')
    sha = git_repo.commit()
    with GitRepository(git_repo.root) as git:
        loaded = read_config(git.tree(sha))
        report = audit(git.tree(sha))
    assert loaded.config.select_nightly is True
    assert loaded.sources["tests"] == "default"
    assert loaded.sources["select_nightly"] == ".github/rocmbot.yml"
    (cfg,) = [f for f in report.findings if f.rule == "CFG001"]
    assert cfg.line == 1 and "`tests`" in cfg.message
    assert [t.path for t in report.tests] == ["tests/test_a.py"]


def test_a_config_file_that_is_not_utf8_is_cfg001_and_the_defaults_stand_in(git_repo: GitRepo) -> None:
    git_repo.write(".github/rocmbot.yml", b"select_nightly: \xff\n")
    sha = git_repo.commit()
    with GitRepository(git_repo.root) as git:
        loaded = read_config(git.tree(sha))
    assert loaded.path == ".github/rocmbot.yml"
    assert loaded.config == defaults()
    (problem,) = loaded.problems
    assert problem.key == "(file)" and "not valid YAML" in problem.message


def test_the_defaults_built_without_validation_are_the_validated_defaults() -> None:
    from config.repo import RepoConfig, default_data

    built, validated = defaults(), RepoConfig.model_validate(default_data())
    assert built == validated
    # the same JSON, types too (`480.0`, as validating a float field gives)
    assert json.dumps(built.model_dump(mode="json")) == json.dumps(validated.model_dump(mode="json"))
    assert built.markers is not defaults().markers  # a copy each time, as validating gave


def test_the_defaults_are_what_the_packaged_defaults_yml_says() -> None:
    from config.repo import default_data, packaged_defaults

    assert default_data() == packaged_defaults()
    assert list(default_data()) == list(packaged_defaults())  # the keys in the same order


def test_the_validators_mirror_the_policy_dataclasses_field_for_field() -> None:
    import dataclasses

    from config import repo, schema

    for name in ("Suite", "PinGroupConfig", "PinsConfig", "LaunchConfig", "DispatchConfig",
                 "ReenableConfig", "RepoConfig"):
        fields = [f.name for f in dataclasses.fields(getattr(repo, name))]
        assert fields == list(getattr(schema, name).model_fields), name


def test_an_audit_without_a_configuration_file_or_workflow_imports_no_validation_nor_yaml(
        tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text('register_cuda_ci(60, "stage-a-1-gpu")\n')
    probe = (
        "import sys; from bot.analysis.engine import audit, read_config; "
        "from bot.analysis.tree import FolderTree; "
        f"tree = FolderTree({str(tmp_path)!r}); loaded = read_config(tree); "
        "report = audit(tree, loaded=loaded); "
        "assert loaded.path is None and report.tests, report; "
        "sys.stderr.write(repr(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'yaml'})))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert proc.stderr == "[]"


def test_label_and_nightly_changes_are_modifications() -> None:
    base = Marker("tests/test_a.py", 1, "register_rocm_ci", "rocm", 0, 60.0, "stage-a", ("moe",),
                  False, None, None)
    head = replace(base, labels=("moe", "fp8"), nightly=True)
    assert compare_markers(base, head) == [
        ("modified", "labels changed from ['moe'] to ['moe', 'fp8']"),
        ("modified", "nightly changed from False to True"),
    ]
    assert compare_markers(base, replace(base)) == []


def test_audit_lists_every_marker(example: tuple[GitRepo, str]) -> None:
    repo, _ = example
    with GitRepository(repo.root) as git:
        report = audit(git.tree("HEAD"))
    assert [(t.path, t.backend) for t in report.tests] == [
        (MOE, "cuda"),
        (MOE, "rocm"),
        (SHORT, "rocm"),
    ]
    assert report.selected == [] and report.mode == "audit"


def test_a_snapshot_and_what_was_worked_out_from_it_go_by_reference_counting(
    example: tuple[GitRepo, str],
) -> None:
    repo, _ = example
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        with GitRepository(repo.root) as git:
            tree = git.tree("HEAD")
            snap = Snapshot(tree, read_config(tree).config)
            run = _Analysis(snap, None, None)
            outcomes = [run.launch_of(m) for p in snap.test_paths() for m in snap.markers(p)[0]]
            assert any(o.launches for o in outcomes)
            assert pins.analyze_pins(snap, None).environment
            gone = weakref.ref(snap)
            del snap, run
            assert gone() is None  # no cache anywhere keeps a revision (or its files) alive
    finally:
        if enabled:
            gc.enable()


def test_a_derived_result_is_worked_out_once_per_snapshot(example: tuple[GitRepo, str]) -> None:
    repo, _ = example
    kind: Derived[list[Snapshot]] = Derived(lambda s: [s])
    with GitRepository(repo.root) as git:
        tree = git.tree("HEAD")
        one, two = (Snapshot(tree, read_config(tree).config) for _ in range(2))
        first = one.derived(kind)
        assert one.derived(kind) is first and first == [one]
        assert two.derived(kind) == [two]


def test_a_limited_analysis_reads_only_the_changed_tests_when_nothing_else_can_reach_them(
    example: tuple[GitRepo, str],
) -> None:
    repo, base = example
    _replace(repo, SHORT, "900,", "901,")
    repo.write("docs/notes.md", "words\n")
    head = repo.commit()
    with GitRepository(repo.root) as git:
        limited = analyze(git.tree(base), git.tree(head), full=False)
        complete = analyze(git.tree(base), git.tree(head))
    assert [(t.path, t.change) for t in limited.tests] == [(SHORT, "modified")]
    assert {t.path for t in complete.tests} == {MOE, SHORT}
    assert limited.selected == complete.selected


@pytest.mark.parametrize(
    "extra",
    [
        {HARNESS: "# a harness change\n"},
        {"docker/Dockerfile.rocm": 'RUN pip install "numba==0.65.1"\n'},
        {".github/rocmbot.yml": "select_nightly: true\n"},
    ],
)
def test_a_change_that_can_reach_other_tests_is_analysed_in_full(
    example: tuple[GitRepo, str], extra: dict[str, str]
) -> None:
    repo, base = example
    for path, text in extra.items():
        (repo.root / path).write_text((repo.root / path).read_text() + text if (repo.root / path).exists()
                                      else text)
    head = repo.commit()
    with GitRepository(repo.root) as git:
        limited = analyze(git.tree(base), git.tree(head), full=False)
    assert {t.path for t in limited.tests} == {MOE, SHORT}


LIBRARY = "miles/utils/sizes.py"


def _library(repo: GitRepo, uses: str) -> str:
    """A test importing a library module, which a later change edits."""
    repo.write(LIBRARY, 'TP = "--tensor-model-parallel-size 1 "\nOTHER = 1\n')
    repo.write("tests/e2e/test_lib.py", 'from miles.utils.sizes import TP, OTHER\n'
               'register_rocm_ci(60, "stage-b-1-gpu-mi350")\n' + uses)
    return repo.commit("library")


def test_a_library_module_reached_only_by_imports_selects_nothing(
        example: tuple[GitRepo, str]) -> None:
    repo, _ = example
    base = _library(repo, "x = OTHER\n")
    _replace(repo, LIBRARY, "OTHER = 1", "OTHER = 2")
    head = repo.commit()
    report = _run(repo, base, head)
    assert (_entry(report, "tests/e2e/test_lib.py").change, report.selected) == ("unchanged", [])
    for number, config in enumerate(("select_imports: true\n", "harness: ['miles/utils/**']\n")):
        repo.write(".github/rocmbot.yml", config)
        with_config = repo.commit()
        _replace(repo, LIBRARY, f"OTHER = {number + 2}", f"OTHER = {number + 3}")
        report = _run(repo, with_config, repo.commit())
        entry = _entry(report, "tests/e2e/test_lib.py")
        assert (entry.change, entry.tier) == ("affected", "harness"), config
        assert entry.reasons[0] == f"imports `{LIBRARY}`, which changed"


def test_a_library_module_that_gives_a_launch_its_values_selects(
        example: tuple[GitRepo, str]) -> None:
    repo, _ = example
    base = _library(repo, 'execute_train(train_args=TP + "--actor-num-gpus-per-node 1 ")\n')
    _replace(repo, LIBRARY, "OTHER = 1", "OTHER = 2")  # a value the launch does not read
    report = _run(repo, base, repo.commit())
    entry = _entry(report, "tests/e2e/test_lib.py")
    assert (entry.change, entry.tier) == ("affected", "harness")
    assert [s.path for s in report.selected] == ["tests/e2e/test_lib.py"]


def test_the_module_that_defines_the_launch_function_is_a_harness(
        example: tuple[GitRepo, str]) -> None:
    repo, _ = example
    repo.write("miles/utils/runner.py", "def execute_train(train_args):\n    return 0\n")
    base = _library(repo, "from miles.utils.runner import execute_train\nx = OTHER\n")
    _replace(repo, "miles/utils/runner.py", "return 0", "return 1")
    report = _run(repo, base, repo.commit())
    entry = _entry(report, "tests/e2e/test_lib.py")
    assert (entry.change, entry.tier) == ("affected", "harness")
    assert entry.reasons[0] == "imports `miles/utils/runner.py`, which changed"


def test_reg003_is_one_finding_per_suite_listing_its_tests(tmp_path: Path) -> None:
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / ".github/workflows/ci.yml").write_text("run: --suite stage-q-big\n")
    (tmp_path / "tests").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / f"tests/test_{name}.py").write_text(
            'register_rocm_ci(60, "stage-q-big")\nregister_rocm_ci(60, "stage-q-big")\n')
    for processes in (1, 2):
        report = audit(FolderTree(tmp_path), jobs=processes)
        (found,) = [f for f in report.findings if f.rule == "REG003"]
        assert (found.path, found.line) == ("tests/test_a.py", 1)
        assert "`stage-q-big`" in found.message
        assert found.details == ("6 tests of the suite: `tests/test_a.py:1`, `tests/test_a.py:2`, "
                                 "`tests/test_b.py:1`, `tests/test_b.py:2`, `tests/test_c.py:1`, "
                                 "`tests/test_c.py:2`.",)


def test_a_pr_that_breaks_the_configuration_gets_cfg001_though_the_base_judges_it(
    git_repo: GitRepo,
) -> None:
    git_repo.write("tests/test_a.py", 'register_rocm_ci(60, "stage-q-4-gpu")\n')
    git_repo.write(".github/rocmbot.yml", "select_nightly: false\n")
    base = git_repo.commit()
    git_repo.write(".github/rocmbot.yml", "select_nightly: false\nselect_nigthly: true\ntest_roots: [7]\n")
    report = _run(git_repo, base, git_repo.commit("typo"))
    cfg = [f for f in report.findings if f.rule == "CFG001"]
    assert [(f.line, f.baseline) for f in cfg] == [(2, "new"), (3, "new")]
    assert "as this PR leaves it: `select_nigthly`" in cfg[0].message
    assert "select_nightly" in cfg[0].message  # the closest known key
    assert report.exit_code == 1
    # the same file on the base: the PR did not bring it, and does not answer for it
    broken = git_repo.commit("nothing")
    git_repo.write("tests/test_a.py", 'register_rocm_ci(61, "stage-q-4-gpu")\n')
    report = _run(git_repo, broken, git_repo.commit("unrelated"))
    assert {f.baseline for f in report.findings if f.rule == "CFG001"} == {"unchanged"}
    assert report.exit_code == 0


def test_parked_tests_in_audit_and_a_fixed_grid_is_a_candidate_in_analyze(
    example: tuple[GitRepo, str],
) -> None:
    repo, _ = example
    _replace(repo, MOE, "ep_size=2,", "ep_size=4,")  # EP 4 with PP 2 cannot fit 4 GPUs
    broken = repo.commit("break the grid")
    with GitRepository(repo.root) as git:
        report = audit(git.tree(broken))
    (parked,) = report.parked
    assert (parked.path, parked.backend, parked.suite, parked.reason) == (
        MOE, "rocm", "stage-c-4-gpu-mi350", REASON)
    assert parked.candidate is False and [p.rule for p in parked.problems] == ["PAR002"]
    assert parked.problems[0].fix and "ep_size=2" in parked.problems[0].fix
    assert "would fail: PAR002" in parked.why
    doc = json.loads(report_json(report))
    assert doc["parked"][0]["launch"]["state"] == "checked"
    assert doc["parked"][0]["launch"]["findings"][0]["rule"] == "PAR002"
    assert doc["parked"][0]["since"] is None  # the analysis has no history: the CLI adds it
    # the grid fixed, the test still parked: a candidate, with what the base said
    _replace(repo, MOE, "ep_size=4,", "ep_size=2,")
    report = _run(repo, broken, repo.commit("fix the grid"))
    (parked,) = report.parked
    assert parked.candidate and parked.touched and parked.problems == []
    assert parked.was is not None and parked.was.startswith("PAR002: ") and "ep 4 -> 2" in parked.was
    summary = markdown.render(report)
    assert "**Parked tests this PR touches** (1)" in summary
    assert "its launch is valid now (was `PAR002: " in summary
    assert "Comment `/run-amd disabled` to try it on ROCm." in summary
    # a change that does not reach it: parked, but not a candidate of this PR
    repo.write("README.md", "docs\n")
    head = repo.commit("docs")
    report = _run(repo, head, head)
    assert [(p.candidate, p.touched) for p in report.parked] == [(False, False)]
    assert "this PR does not touch it" in report.parked[0].why


def report_json(report: Report) -> str:
    from bot.formats import FORMATS

    return FORMATS["json"](report)
