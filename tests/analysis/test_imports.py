from __future__ import annotations

import ast
from collections.abc import Set as AbstractSet
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


class _Files:
    """A repository held in memory (the Tree protocol), for many small graphs."""

    rev = None

    def __init__(self, files: dict[str, str]) -> None:
        self.files = {path: text.encode() for path, text in files.items()}

    def read(self, path: str) -> bytes | None:
        return self.files.get(path)

    def list(self, pattern: str) -> list[str]:
        return sorted(self.files)

    def blob_id(self, path: str) -> str | None:
        return path if path in self.files else None

    def size(self, path: str) -> int | None:
        data = self.files.get(path)
        return None if data is None else len(data)


def _graph(files: dict[str, str], roots: tuple[str, ...] = (".",)) -> ImportGraph:
    return ImportGraph(Sources(_Files(files)), roots)


def _walked(graph: ImportGraph, path: str) -> tuple[list[str], set[str]]:
    """The closure as a plain walk from ``path`` finds it, from nothing worked out before."""
    order: list[str] = []
    seen = {path}
    candidates: set[str] = set()
    stack = [path]
    while stack:
        for imp in graph.imports(stack.pop()):
            candidates.update(imp.candidates)
            for dep in imp.found:
                if dep not in seen:
                    seen.add(dep)
                    order.append(dep)
                    stack.append(dep)
    return order, candidates


# how module i imports module j (files p/m<i>.py in package p)
_STYLES = (
    "import p.m{j}\n",
    "from p import m{j}\n",
    "from . import m{j}\n",
    "from .m{j} import name\n",
    "def f():\n    from p.m{j} import name\n",
    "import p.missing{j}\n",
)


@settings(max_examples=150)
@given(
    size=st.integers(1, 9),
    edges=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8), st.integers(0, len(_STYLES) - 1)),
                   max_size=30),
    broken=st.sets(st.integers(0, 8), max_size=2),
    package_imports=st.lists(st.integers(0, 8), max_size=3),
    asked=st.permutations(list(range(10))),
)
def test_shared_closures_are_what_a_walk_from_each_file_finds(
    size: int, edges: list[tuple[int, int, int]], broken: set[int], package_imports: list[int],
    asked: list[int],
) -> None:
    texts = {i: "" for i in range(size)}
    for i, j, style in edges:
        if i < size and j < size:
            texts[i] += _STYLES[style].format(j=j)
    files = {f"p/m{i}.py": ("def (:\n" if i in broken else text) for i, text in texts.items()}
    files["p/__init__.py"] = "".join(f"from . import m{j}\n" for j in package_imports if j < size)
    files["t.py"] = "import p.m0\n"
    paths = [*(f"p/m{i}.py" for i in range(size)), "p/__init__.py", "t.py", "p/absent.py"]
    shared = _graph(files)
    for index in asked:  # in any order: what one closure works out, the next ones reuse
        path = paths[index % len(paths)]
        loaded, candidates = shared.closure(path)
        order, walked = _walked(_graph(files), path)
        assert path not in loaded and len(set(loaded)) == len(loaded)
        assert set(loaded) == set(order)
        assert set(candidates) == walked and len(candidates) == len(walked)
        assert all(c in candidates for c in walked)
        assert "nowhere.py" not in candidates
        assert sorted(u.path for u in shared.unreadable(loaded)) == \
            sorted(f"p/m{i}.py" for i in broken if f"p/m{i}.py" in loaded)


def test_a_closure_through_an_import_cycle_holds_every_file_of_the_cycle_but_itself() -> None:
    files = {
        "a.py": "import b\n",
        "b.py": "import c\nimport d\n",
        "c.py": "import a\n",  # a -> b -> c -> a
        "d.py": "import e\n",
        "e.py": "import d\nimport f\n",  # d <-> e
        "f.py": "",
    }
    graph = _graph(files)
    assert set(graph.closure("a.py")[0]) == {"b.py", "c.py", "d.py", "e.py", "f.py"}
    assert set(graph.closure("c.py")[0]) == {"a.py", "b.py", "d.py", "e.py", "f.py"}
    assert set(graph.closure("e.py")[0]) == {"d.py", "f.py"}
    assert graph.closure("f.py")[0] == ()
    assert set(graph.closure("b.py")[1]) == {f"{m}{ext}" for m in "abcdef"
                                             for ext in (".py", "/__init__.py")}


def test_closure_candidates_are_a_set_of_paths() -> None:
    graph = _graph({"a.py": "import b\n", "b.py": "import c.d\n", "z.py": "import q\n"})
    _, candidates = graph.closure("a.py")
    expected: AbstractSet[object] = frozenset(
        {"b.py", "b/__init__.py", "c/__init__.py", "c/d.py", "c/d/__init__.py"})
    assert candidates == expected
    assert candidates & {"b.py", "x.py"} == frozenset({"b.py"})
    assert isinstance(candidates & {"b.py"}, frozenset)
    number: object = 3
    assert len(candidates) == 5 and "x.py" not in candidates and number not in candidates
    # the paths met later (``q``) are not in a set worked out before
    graph.closure("z.py")
    assert "q.py" not in candidates and len(candidates) == 5


def test_a_closure_reports_the_files_it_loads_that_do_not_parse() -> None:
    graph = _graph({"t.py": "import a\nimport b\n", "a.py": "def (:\n", "b.py": ""})
    loaded, _ = graph.closure("t.py")
    assert [(u.path, u.line) for u in graph.unreadable(loaded)] == [("a.py", 1)]
