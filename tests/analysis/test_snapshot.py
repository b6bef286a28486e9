"""A snapshot: which files are tests, and their markers read once per revision."""

from __future__ import annotations

from pathlib import Path

from bot.analysis.snapshot import Snapshot
from bot.analysis.tree import FolderTree
from config.repo import RepoConfig, default_data, defaults, merge

MARKED = 'register_rocm_ci(60, "stage-a")\n'


def _snapshot(root: Path, files: dict[str, str], config: RepoConfig | None = None) -> Snapshot:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return Snapshot(FolderTree(root), config or defaults())


def test_excluded_globs_remove_files_from_the_test_list(tmp_path: Path) -> None:
    config = RepoConfig.model_validate(merge(default_data(), {"exclude": ["tests/slow/**"]}))
    snap = _snapshot(tmp_path, {"tests/test_a.py": MARKED, "tests/slow/test_b.py": MARKED}, config)
    assert snap.test_paths() == ["tests/test_a.py"]
    assert not snap.is_test("tests/slow/test_b.py")


def test_markers_are_read_once_and_an_absent_file_has_none(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, {"tests/test_a.py": MARKED})
    first = snap.markers("tests/test_a.py")
    (tmp_path / "tests/test_a.py").write_text("", encoding="utf-8")
    assert snap.markers("tests/test_a.py") is first
    assert [m.suite for m in first[0]] == ["stage-a"]
    assert snap.markers("tests/test_gone.py") == ([], [])


def test_a_python_file_under_a_test_root_that_calls_a_marker_is_a_test(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, {
        "test/registered/bench_moe.py": "import x\n" + MARKED,
        "test/registered/test_plain.py": "def test_a():\n    register_rocm_ci(60, 'inside')\n",
        "test/registered/helpers.py": "x = 1\n",
        "test/registered/ci_style.py": "ci.register_cpu_ci(60, 'stage-a')\n",
        "test/registered/data.txt": MARKED,
        "tests/test_b.py": MARKED,
        "tests/binary.py": "\0",
        "scripts/bench_c.py": MARKED,
    })
    assert snap.test_paths() == [
        "test/registered/bench_moe.py", "test/registered/ci_style.py", "tests/binary.py", "tests/test_b.py",
    ]
    assert snap.is_test("test/registered/bench_moe.py") and not snap.is_test("test/registered/helpers.py")
    assert not snap.is_test("scripts/bench_c.py") and not snap.is_test("tests/gone.py")
    assert snap.markers("tests/binary.py")[1][0].rule == "REG004"


def test_configured_globs_replace_the_search_and_a_root_may_be_the_whole_tree(tmp_path: Path) -> None:
    files = {"tests/test_a.py": MARKED, "tests/bench_b.py": MARKED, "scripts/run.py": MARKED,
             "tests/test_c.py": "x = 1\n"}
    globs = RepoConfig.model_validate(merge(default_data(), {"tests": ["tests/**/test_*.py"]}))
    assert _snapshot(tmp_path, files, globs).test_paths() == ["tests/test_a.py", "tests/test_c.py"]
    assert _snapshot(tmp_path, files, globs).is_test("tests/test_c.py")
    everywhere = RepoConfig.model_validate(merge(default_data(), {"test_roots": ["/"]}))
    assert everywhere.test_roots == ["."]
    snap = _snapshot(tmp_path, files, everywhere)
    assert snap.test_paths() == ["scripts/run.py", "tests/bench_b.py", "tests/test_a.py"]
    assert snap.is_test("scripts/run.py")
    none = defaults().model_copy(update={"markers": {}})
    assert _snapshot(tmp_path, files, none).test_paths() == []
