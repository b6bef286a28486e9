"""Imports of repository modules, resolved to files, built lazily over what tests reach."""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bot.analysis.source import Module, Sources, Unreadable


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement's possible files: ``found`` exist, ``candidates`` may (for diffs)."""

    line: int
    module: str  # dotted, with leading dots for relative imports
    names: tuple[str, ...]
    candidates: tuple[str, ...]
    found: tuple[str, ...]


_IMPORTS = (ast.Import, ast.ImportFrom)
# the statement lists each compound statement holds (simple statements hold none)
_INNER: dict[type[ast.AST], tuple[str, ...]] = {
    ast.FunctionDef: ("body",), ast.AsyncFunctionDef: ("body",), ast.ClassDef: ("body",),
    ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",),
    ast.Try: ("body", "handlers", "orelse", "finalbody"),
    ast.TryStar: ("body", "handlers", "orelse", "finalbody"),
    ast.ExceptHandler: ("body",), ast.Match: ("cases",), ast.match_case: ("body",),
}


def _statements(body: Sequence[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, into compound statements but not into expressions (cheap)."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, _IMPORTS):
            yield stmt
            continue
        for attr in _INNER.get(type(stmt), ()):
            inner = getattr(stmt, attr)
            if inner:
                stack.extend(reversed(inner))


def _all_imports(module: Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of a module. Each one holds the word `import`: when the text
    holds it no more often than the top level has import statements, there are no others,
    and the walk into function bodies is skipped."""
    top = [stmt for stmt in module.tree.body if isinstance(stmt, _IMPORTS)]
    if module.text.count("import") <= len(top):
        return iter(top)
    return _statements(module.tree.body)


def import_statements(module: Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, at any depth of its statements."""
    return _all_imports(module)


def _module_files(parts: Sequence[str]) -> list[str]:
    base = "/".join(parts)
    return [f"{base}.py", f"{base}/__init__.py"] if base else []


def _with_root(root: str, path: str) -> str:
    return path if root == "." else f"{root}/{path}"


def import_candidates(path: str, node: ast.Import | ast.ImportFrom, roots: Sequence[str]) -> list[str]:
    """Files an import statement may load, in a repository whose import roots are ``roots``.

    Parent packages' ``__init__.py`` files are included (Python runs them), as are the
    submodule files of ``from package import name``.
    """
    out: list[str] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = alias.name.split(".")
            for root in roots:
                for depth in range(1, len(parts) + 1):
                    files = _module_files(parts[:depth])
                    if depth < len(parts):
                        files = files[1:]  # a parent is a package: only its __init__.py
                    out.extend(_with_root(root, f) for f in files)
        return out
    names = [a.name for a in node.names if a.name != "*"]
    if node.level:
        package = posixpath.dirname(path).split("/") if "/" in path else []
        up = node.level - 1
        if up > len(package):
            return []
        package = package[: len(package) - up] if up else package
        rooted = [(".", package + (node.module.split(".") if node.module else []))]
    else:
        rooted = [(root, (node.module or "").split(".")) for root in roots]
    package_only = bool(node.level) and not node.module  # `from . import x`: a folder
    for root, parts in rooted:
        for depth in range(1, len(parts)):
            out.append(_with_root(root, "/".join(parts[:depth]) + "/__init__.py"))
        module_files = _module_files(parts)
        out.extend(_with_root(root, f) for f in (module_files[1:] if package_only else module_files))
        for name in names:
            out.extend(_with_root(root, f) for f in _module_files([*parts, name]))
    return out


class ImportGraph:
    """Direct imports per file, computed on first use; closures walk only what is reached."""

    def __init__(self, sources: Sources, roots: Sequence[str]) -> None:
        self.sources = sources
        self.roots = tuple(roots)
        self._direct: dict[str, tuple[Import, ...]] = {}
        self._lines: dict[tuple[object, ...], tuple[str, ...]] = {}
        self._existing: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._closures: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}

    def imports(self, path: str) -> tuple[Import, ...]:
        """The repository imports of one file (empty when it is absent or does not parse)."""
        if path not in self._direct:
            module = self.sources.module(path)
            self._direct[path] = self._read(module) if isinstance(module, Module) else ()
        return self._direct[path]

    def _read(self, module: Module) -> tuple[Import, ...]:
        found: list[Import] = []
        for stmt in _all_imports(module):
            candidates = self._candidates(module.path, stmt)
            exists = self._existing.get(candidates)
            if exists is None:
                exists = tuple(c for c in candidates if self.sources.exists(c))
                self._existing[candidates] = exists
            if module.path in exists:
                exists = tuple(c for c in exists if c != module.path)
            if isinstance(stmt, ast.ImportFrom):
                name = "." * stmt.level + (stmt.module or "")
                names = tuple(a.name for a in stmt.names)
            else:
                name, names = ",".join(a.name for a in stmt.names), ()
            if candidates:
                found.append(Import(stmt.lineno, name, names, candidates, exists))
        self.sources.hint([p for imp in found for p in imp.found])
        return tuple(found)

    def _candidates(self, path: str, stmt: ast.Import | ast.ImportFrom) -> tuple[str, ...]:
        # Many tests share their import lines; what a line can load depends only on the line
        # and, for a relative import, the importing file's folder.
        if isinstance(stmt, ast.Import):
            key: tuple[object, ...] = ("import", tuple(a.name for a in stmt.names))
        else:
            folder = posixpath.dirname(path) if stmt.level else ""
            key = (folder, stmt.level, stmt.module, tuple(a.name for a in stmt.names))
        found = self._lines.get(key)
        if found is None:
            found = tuple(dict.fromkeys(import_candidates(path, stmt, self.roots)))
            self._lines[key] = found
        return found

    def closure(self, path: str) -> tuple[tuple[str, ...], frozenset[str]]:
        """Repository files ``path`` loads, transitively, in discovery order, and every
        candidate path along the way (a file added or removed there changes what loads).

        Worked out once per file: a test's closure is asked for by its registration check
        and by each of its markers, and the imports it follows never change in a snapshot.
        """
        found = self._closures.get(path)
        if found is None:
            found = self._walk(path)
            self._closures[path] = found
        return found

    def _walk(self, path: str) -> tuple[tuple[str, ...], frozenset[str]]:
        order: list[str] = []
        seen = {path}
        candidates: set[str] = set()
        stack = [path]
        while stack:
            current = stack.pop()
            for imp in self.imports(current):
                candidates.update(imp.candidates)
                for dep in imp.found:
                    if dep not in seen:
                        seen.add(dep)
                        order.append(dep)
                        stack.append(dep)
        return tuple(order), frozenset(candidates)

    def unreadable(self, paths: Sequence[str]) -> list[Unreadable]:
        """Why any of ``paths`` could not be parsed."""
        out = []
        for p in paths:
            m = self.sources.module(p)
            if isinstance(m, Unreadable):
                out.append(m)
        return out
