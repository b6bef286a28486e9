"""Suite registries: which suites a repository's `run_suite.py` lists per backend and cadence."""

from __future__ import annotations

from types import MappingProxyType

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.analysis.ci.registry import (
    RegistryProblem,
    SuiteRegistry,
    backend_name,
    find_registry,
    read_registry,
    registry_candidates,
)

# SGLang's test/run_suite.py (as of commit 0bda0b168), trimmed: the real shape and comments.
SGLANG = '''\
import argparse
from typing import Dict, List, Optional

from sglang.test.ci.ci_register import (
    CIRegistry,
    HWBackend,
    auto_partition,
    collect_tests,
)

HW_MAPPING = {
    "cpu": HWBackend.CPU,
    "cuda": HWBackend.CUDA,
    "amd": HWBackend.AMD,
}

# Per-commit test suites (run on every PR).
PER_COMMIT_SUITES = {
    HWBackend.CPU: [
        "base-a-test-cpu",
        "base-b-test-cpu",
    ],
    HWBackend.AMD: [
        "stage-a-test-1-gpu-small-amd",
        "stage-b-test-1-gpu-small-amd",
        "stage-c-test-large-8-gpu-amd-mi35x",
        # extra-a: label-gated PR opt-in suites in pr-test-amd-extra.yml
        # (mirror of CUDA extra-a; tests stay tagged per-commit but only
        # dispatch when the PR carries the `run-ci-extra` label).
        "extra-a-test-1-gpu-small-amd",
    ],
    HWBackend.MUSA: [],
    HWBackend.CUDA: [
        "base-a-test-1-gpu-small",
        "base-c-test-8-gpu-b300",
        # extra-a / extra-b: label-gated PR opt-in suites in pr-test-extra.yml
        "extra-b-test-8-gpu-h200",
    ],
    HWBackend.NPU: [
        "base-a-test-1-npu-a2",
    ],
}

# Nightly test suites (run nightly, organized by GPU configuration)
NIGHTLY_SUITES = {
    HWBackend.CUDA: [
        # `stage="nightly"` + a runner_config
        "nightly-test-1-gpu-large",
    ],
    HWBackend.AMD: [
        "nightly-amd",
        "nightly-amd-8-gpu-mi35x-deepseek-v4-flash",
        # MI35x 8-GPU suite (different model configs)
        "nightly-amd-8-gpu-mi35x",
    ],
    HWBackend.CPU: [],
}


OTHER_SUITES = {
    HWBackend.CPU: [
        "default",
    ],
    HWBackend.CUDA: [
        "stress",
        "weekly-test-8-gpu-h200",
    ],
}


def _valid_suites_by_backend() -> dict:
    """Build a mapping from backend to its set of valid suite names."""
    result = {}
    for suite_dict in (PER_COMMIT_SUITES, NIGHTLY_SUITES, OTHER_SUITES):
        for backend, suites in suite_dict.items():
            if backend not in result:
                result[backend] = set()
            result[backend].update(suites)
    return result


if __name__ == "__main__":
    main()
'''


def _read(text: str, path: str = "test/run_suite.py") -> SuiteRegistry:
    found = read_registry(path, text)
    assert isinstance(found, SuiteRegistry)
    return found


def test_reads_sglang_tables_by_backend_with_amd_as_rocm() -> None:
    registry = _read(SGLANG)
    assert registry.path == "test/run_suite.py"
    assert registry.per_commit["rocm"] == {
        "stage-a-test-1-gpu-small-amd", "stage-b-test-1-gpu-small-amd",
        "stage-c-test-large-8-gpu-amd-mi35x", "extra-a-test-1-gpu-small-amd"}
    assert registry.per_commit["musa"] == frozenset()
    assert set(registry.per_commit) == {"cpu", "rocm", "musa", "cuda", "npu"}
    assert registry.nightly["rocm"] == {
        "nightly-amd", "nightly-amd-8-gpu-mi35x-deepseek-v4-flash", "nightly-amd-8-gpu-mi35x"}
    assert registry.other == {"cpu": {"default"}, "cuda": {"stress", "weekly-test-8-gpu-h200"}}
    assert registry.notes == () and registry.unread == frozenset()
    assert isinstance(registry.per_commit, MappingProxyType)  # the registry cannot be changed


def test_cadence_is_the_first_table_listing_the_suite_for_that_backend() -> None:
    registry = _read(SGLANG)
    assert registry.cadence("rocm", "stage-a-test-1-gpu-small-amd") == "per-pr"
    assert registry.cadence("rocm", "extra-a-test-1-gpu-small-amd") == "per-pr"
    assert registry.cadence("rocm", "nightly-amd-8-gpu-mi35x") == "nightly"
    assert registry.cadence("cuda", "stress") == "other"
    assert registry.cadence("cuda", "stage-a-test-1-gpu-small-amd") is None  # another backend's
    assert registry.cadence("xpu", "anything") is None  # a backend no table lists
    assert registry.cadence("rocm", "stage-z-unknown") is None


def test_backends_of_a_suite() -> None:
    registry = _read(SGLANG)
    assert registry.backends_of("nightly-amd") == {"rocm"}
    assert registry.backends_of("base-a-test-cpu") == {"cpu"}
    assert registry.backends_of("nowhere") == frozenset()
    both = _read('PER_COMMIT_SUITES = {"cuda": ["s"]}\nNIGHTLY_SUITES = {"AMD": ("s",)}\n')
    assert both.backends_of("s") == {"cuda", "rocm"}
    assert both.cadence("rocm", "s") == "nightly"


def test_string_keys_tuples_sets_and_annotations() -> None:
    registry = _read(
        'PER_COMMIT_SUITES: dict[str, list[str]] = {"AMD": ("a", "b"), "cuda": {"c"}}\n'
        'NIGHTLY_SUITES = {"Rocm": ["n" "ightly"]}\n')
    assert registry.per_commit == {"rocm": {"a", "b"}, "cuda": {"c"}}
    assert registry.nightly == {"rocm": {"nightly"}}
    assert registry.other == {}


def test_backend_names_follow_the_markers() -> None:
    assert [backend_name(k) for k in ("AMD", "amd", "CUDA", "CPU", "NPU", "rocm")] == [
        "rocm", "rocm", "cuda", "cpu", "npu", "rocm"]


def test_an_entry_that_is_not_literal_is_noted_and_unread_never_guessed() -> None:
    registry = _read(
        'BASE = ["x"]\n'
        'PER_COMMIT_SUITES = {\n'
        '    HWBackend.AMD: [s for s in BASE],\n'
        '    HWBackend.CUDA: BASE,\n'
        '    HWBackend.CPU: ["ok", f"{BASE}"],\n'
        '    HWBackend.NPU: ["fine"],\n'
        '    BACKEND: ["k"],\n'
        '    **EXTRA,\n'
        '}\n')
    assert registry.per_commit == {"npu": {"fine"}}
    assert registry.unread == {("per-pr", "rocm"), ("per-pr", "cuda"), ("per-pr", "cpu"),
                               ("per-pr", None)}
    assert registry.notes == (
        "test/run_suite.py:3: PER_COMMIT_SUITES[rocm] is not a list of string literals; not read",
        "test/run_suite.py:4: PER_COMMIT_SUITES[cuda] is not a list of string literals; not read",
        "test/run_suite.py:5: PER_COMMIT_SUITES[cpu] is not a list of string literals; not read",
        "test/run_suite.py:7: PER_COMMIT_SUITES has a key that is not a backend name; "
        "its suites are not read",
        "test/run_suite.py:8: PER_COMMIT_SUITES spreads another mapping (`**`); it is not read",
    )
    assert registry.cadence("rocm", "x") is None


def test_a_table_that_is_not_a_dict_literal_is_unread() -> None:
    registry = _read("NIGHTLY_SUITES = dict(amd=['n'])\n")
    assert registry.nightly == {} and registry.unread == {("nightly", None)}
    assert registry.notes == (
        "test/run_suite.py:1: NIGHTLY_SUITES is not a dict literal; its suites are not read",)


def test_later_statements_win_as_python_runs_them() -> None:
    registry = _read(
        'PER_COMMIT_SUITES = {"amd": [x for x in y]}\n'
        'PER_COMMIT_SUITES = {"amd": ["first"], "amd": ["second"]}\n'
        'PER_COMMIT_SUITES["cuda"] = ["c"]\n'
        'PER_COMMIT_SUITES["cuda"] = ["c2"]\n'
        'PER_COMMIT_SUITES["cpu"] = [name]\n'
        'PER_COMMIT_SUITES["cpu"] = ["cpu-ok"]\n'
        'OTHER[HWBackend.AMD] = ["not ours"]\n'
        'OTHER_SUITES = {"cpu": ["d"]}\n'
        'x, y = 1, 2\n')
    assert registry.per_commit == {"rocm": {"second"}, "cuda": {"c2"}, "cpu": {"cpu-ok"}}
    assert registry.unread == frozenset()  # the unread entries were replaced
    assert len(registry.notes) == 2  # kept: they say what was seen


def test_changes_in_place_are_noted() -> None:
    registry = _read(
        'PER_COMMIT_SUITES = {"amd": ["a"]}\n'
        'PER_COMMIT_SUITES[HWBackend.AMD].append("b")\n'
        'PER_COMMIT_SUITES.update(extra)\n'
        'NIGHTLY_SUITES = {}\n'
        'NIGHTLY_SUITES |= more\n'
        'del OTHER_SUITES\n'
        'if FLAG:\n'
        '    PER_COMMIT_SUITES["cuda"] = ["c"]\n'
        'print(PER_COMMIT_SUITES)\n'
        'helper.update(PER_COMMIT_SUITES)\n'
        'def f():\n'
        '    PER_COMMIT_SUITES["amd"].append("inside a function: runs when called")\n'
        'class C:\n'
        '    pass\n')
    assert registry.per_commit == {"rocm": {"a"}}
    assert registry.notes == tuple(
        f"test/run_suite.py:{line}: {name} may be changed here; its lists are read as assigned"
        for line, name in [(2, "PER_COMMIT_SUITES"), (3, "PER_COMMIT_SUITES"),
                           (5, "NIGHTLY_SUITES"), (6, "OTHER_SUITES"), (7, "PER_COMMIT_SUITES")])


def test_a_module_without_the_tables_is_not_a_registry() -> None:
    assert read_registry("python/x/test/run_suite.py", "SUITES = {'a': ['b']}\n") is None
    assert read_registry("tests/ci/run_suite.py", "CI_SUITES = {HWBackend.ROCM: ['s']}\n") is None
    assert read_registry("t.py", "") is None
    only_nightly = _read("NIGHTLY_SUITES = {}\n")
    assert only_nightly.per_commit == {} and only_nightly.cadence("rocm", "s") is None


def test_a_module_that_does_not_parse_is_a_problem_with_its_line() -> None:
    found = read_registry("test/run_suite.py", "PER_COMMIT_SUITES = {\n  'amd': [\n")
    assert isinstance(found, RegistryProblem)
    assert found == RegistryProblem(
        "test/run_suite.py", "does not parse: '[' was never closed", 2)
    nul = read_registry("test/run_suite.py", "PER_COMMIT_SUITES = {}\x00\n")
    assert isinstance(nul, RegistryProblem) and nul.message.startswith("does not parse")
    deep = read_registry("test/run_suite.py", "x = " + "[" * 5000 + "]" * 5000)
    assert isinstance(deep, RegistryProblem)


_PIECES = st.sampled_from(["PER_COMMIT_SUITES", "NIGHTLY_SUITES", "HWBackend.AMD", "'amd'",
                           "=", ":", "{", "}", "[", "]", ",", "**", "\n", " ", "'s'", "x", "#",
                           "for", "in", "(", ")", "+=", ".append", "del ", "if x:\n "])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES | st.characters(), max_size=40))
def test_never_raises(pieces: list[str]) -> None:
    found = read_registry("test/run_suite.py", "".join(pieces))
    assert found is None or isinstance(found, (SuiteRegistry, RegistryProblem))


def test_candidates_prefer_the_top_level_test_folder() -> None:
    paths = ["python/sglang/multimodal_gen/test/run_suite.py", "tests/ci/run_suite.py",
             "scripts/run_suite.py", "test/run_suite.py", "test/x.py", "run_suite.py",
             "tests/run_suite.py", "a/tests/run_suite.py"]
    assert registry_candidates(paths) == [
        "test/run_suite.py", "tests/run_suite.py", "a/tests/run_suite.py",
        "tests/ci/run_suite.py", "python/sglang/multimodal_gen/test/run_suite.py"]


def test_find_registry_reads_candidates_until_one_defines_the_tables() -> None:
    files = {
        "test/run_suite.py": "SUITES = {}\n",  # not a registry
        "tests/ci/run_suite.py": "PER_COMMIT_SUITES = {'amd': ['s']}\n",
    }
    found = find_registry(files, files.get)
    assert isinstance(found, SuiteRegistry)
    assert found.path == "tests/ci/run_suite.py" and found.cadence("rocm", "s") == "per-pr"


def test_find_registry_reports_the_first_problem_when_none_is_found() -> None:
    files = {"test/run_suite.py": "PER_COMMIT_SUITES = {", "tests/run_suite.py": None,
             "a/test/run_suite.py": "x = 1\n"}
    found = find_registry(files, files.get)
    assert isinstance(found, RegistryProblem) and found.path == "test/run_suite.py"
    unreadable = find_registry(["tests/run_suite.py"], lambda path: None)
    assert unreadable == RegistryProblem("tests/run_suite.py", "cannot be read", None)
    assert find_registry(["a/test/run_suite.py"], lambda path: "x = 1\n") is None
    assert find_registry(["src/run_suite.py"], lambda path: "PER_COMMIT_SUITES = {}") is None
