from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bot.analysis.imports import ImportGraph, _all_imports, _statements, import_candidates
from bot.analysis.source import Module, Sources, parse_python
from bot.analysis.tree import FolderTree


def _candidates(path: str, stmt: str, roots: tuple[str, ...] = (".",)) -> list[str]:
    node = ast.parse(stmt).body[0]
    assert isinstance(node, ast.Import | ast.ImportFrom)
    return import_candidates(path, node, roots)


@pytest.mark.parametrize(
    ("stmt", "expected"),
    [
        ("import a", ["a.py", "a/__init__.py"]),
        ("import a.b", ["a/__init__.py", "a/b.py", "a/b/__init__.py"]),
        (
            "from a.b import c",
            ["a/__init__.py", "a/b.py", "a/b/__init__.py", "a/b/c.py", "a/b/c/__init__.py"],
        ),
        ("from . import h", ["t/__init__.py", "t/e2e/__init__.py", "t/e2e/h.py", "t/e2e/h/__init__.py"]),
        (
            "from ._common import X",
            [
                "t/__init__.py",
                "t/e2e/__init__.py",
                "t/e2e/_common.py",
                "t/e2e/_common/__init__.py",
                "t/e2e/_common/X.py",
                "t/e2e/_common/X/__init__.py",
            ],
        ),
        ("from .. import h", ["t/__init__.py", "t/h.py", "t/h/__init__.py"]),
        ("from ....... import h", []),
        ("from a import *", ["a.py", "a/__init__.py"]),
    ],
)
def test_import_candidates(stmt: str, expected: list[str]) -> None:
    found = _candidates("t/e2e/test_x.py", stmt)
    assert sorted(found) == sorted(expected)


def test_candidates_follow_every_import_root() -> None:
    found = _candidates("tests/test_x.py", "import pkg", (".", "src"))
    assert found == ["pkg.py", "pkg/__init__.py", "src/pkg.py", "src/pkg/__init__.py"]


def test_closure_follows_repository_imports_transitively(tmp_path: Path) -> None:
    root = tmp_path
    files = {
        "tests/__init__.py": "",
        "tests/e2e/__init__.py": "",
        "tests/e2e/test_a.py": (
            "import os\nfrom tests.e2e._common import run\nif X:\n    from . import other\n"
        ),
        "tests/e2e/_common.py": "from scripts.launch import args\nimport numpy\n",
        "tests/e2e/other.py": "from .test_a import x\n",
        "scripts/launch.py": "from .models import m\n",
        "scripts/models.py": "def f():\n    import json\n",
        "broken.py": "def (:\n",
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    graph = ImportGraph(Sources(FolderTree(root)), ["."])
    loaded, candidates = graph.closure("tests/e2e/test_a.py")
    assert set(loaded) == {
        "tests/__init__.py",
        "tests/e2e/__init__.py",
        "tests/e2e/_common.py",
        "tests/e2e/other.py",
        "scripts/launch.py",
        "scripts/models.py",
    }
    assert "numpy.py" in candidates and "scripts/__init__.py" in candidates
    assert graph.closure("tests/e2e/test_a.py") is graph.closure("tests/e2e/test_a.py")
    assert graph.imports("missing.py") == ()
    assert graph.imports("broken.py") == ()
    assert [u.path for u in graph.unreadable(["broken.py", "scripts/launch.py"])] == ["broken.py"]
    first = graph.imports("tests/e2e/test_a.py")[1]
    assert first.module == "tests.e2e._common" and first.names == ("run",) and first.line == 2


def test_a_package_importing_its_own_submodule_does_not_load_itself(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("from . import sub\nfrom ........ import far\n")
    (tmp_path / "pkg/sub.py").write_text("")
    graph = ImportGraph(Sources(FolderTree(tmp_path)), ["."])
    (only,) = graph.imports("pkg/__init__.py")
    assert only.module == "." and only.names == ("sub",)
    assert "pkg/__init__.py" in only.candidates
    assert only.found == ("pkg/sub.py",)
    assert graph.closure("pkg/__init__.py")[0] == ("pkg/sub.py",)


@pytest.mark.parametrize("source", [
    "import os\nfrom a import b\n",
    "import os\ndef f():\n    import json\n",
    "if x: import y\n",
    "x = 'import'\nimport os\n",
    "try:\n    from .import x\nexcept ImportError:\n    x = None\n",
    "class C:\n    import os as o\n",
])
def test_the_shortcut_for_top_level_imports_finds_every_import(source: str) -> None:
    module = parse_python("pkg/t.py", source)
    assert isinstance(module, Module)
    every = [ast.dump(n) for n in _statements(module.tree.body)]
    assert [ast.dump(n) for n in _all_imports(module)] == every
    assert every  # each source holds an import somewhere
