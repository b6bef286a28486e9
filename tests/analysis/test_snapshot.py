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
