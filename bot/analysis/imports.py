"""Imports of repository modules, resolved to files, built lazily over what tests reach."""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable, Iterator, Sequence, Set
from dataclasses import dataclass
from itertools import compress

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


class _Index:
    """Paths numbered in the order they are met: bit ``n`` of a bit set is path ``n``."""

    __slots__ = ("numbers", "paths")

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}
        self.paths: list[str] = []

    def add(self, path: str) -> int:
        number = self.numbers.get(path)
        if number is None:
            number = self.numbers[path] = len(self.paths)
            self.paths.append(path)
        return number

    def members(self, bits: int) -> tuple[str, ...]:
        """The paths of a bit set, in the order they were met."""
        # the bits as bytes 0 and 1, lowest first, select the paths (all of it in C)
        selectors = f"{bits:b}"[::-1].encode().translate(_ZERO_ONE)
        return tuple(compress(self.paths, selectors))


# b"0" -> 0, b"1" -> 1
_ZERO_ONE = bytes.maketrans(b"01", b"\0\1")


class PathSet(Set[str]):
    """A set of paths held as a bit set over an :class:`_Index` (which only grows, so the
    set never changes): membership and size are cheap, iterating lists the paths."""

    __slots__ = ("_bits", "_index")

    def __init__(self, bits: int, index: _Index) -> None:
        self._bits = bits
        self._index = index

    def __contains__(self, path: object) -> bool:
        number = self._index.numbers.get(path) if isinstance(path, str) else None
        return number is not None and bool(self._bits >> number & 1)

    def __len__(self) -> int:
        return self._bits.bit_count()

    def __iter__(self) -> Iterator[str]:
        return iter(self._index.members(self._bits))

    @classmethod
    def _from_iterable(cls, it: Iterable[str]) -> frozenset[str]:  # type: ignore[override]
        return frozenset(it)  # what `&`, `|` and `-` give: a plain set


class ImportGraph:
    """Direct imports per file, computed on first use; closures walk only what is reached.

    A closure is shared: the files a module reaches, and the candidate paths on the way, are
    worked out once per snapshot for each strongly connected group of modules (modules that
    import each other reach the same files) and reused by every closure that reaches the
    group. They are kept as bit sets over the paths met so far: a thousand tests that each
    reach the same two thousand library modules, and twenty thousand candidate paths, cost a
    few kilobytes each, not a copy of those paths each.
    """

    def __init__(self, sources: Sources, roots: Sequence[str]) -> None:
        self.sources = sources
        self.roots = tuple(roots)
        self._direct: dict[str, tuple[Import, ...]] = {}
        self._lines: dict[tuple[object, ...], tuple[str, ...]] = {}
        self._existing: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._closures: dict[str, tuple[tuple[str, ...], PathSet]] = {}
        self._broken: dict[str, Unreadable] = {}  # the files read for their imports that do not parse
        self._files = _Index()  # the files walked, each a node of the graph
        self._paths = _Index()  # every candidate path of an import walked
        self._bits: dict[tuple[str, ...], int] = {}  # an import's candidates, as a bit set
        self._next: dict[int, tuple[int, ...]] = {}  # node -> the nodes it imports
        # node -> (the files it reaches, itself included; the candidates on the way)
        self._reach: dict[int, tuple[int, int]] = {}
    def imports(self, path: str) -> tuple[Import, ...]:
        """The repository imports of one file (empty when it is absent or does not parse)."""
        if path not in self._direct:
            module = self.sources.module(path)
            self._direct[path] = self._read(module) if isinstance(module, Module) else ()
            if isinstance(module, Unreadable):
                self._broken[path] = module
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

    def closure(self, path: str) -> tuple[tuple[str, ...], PathSet]:
        """Repository files ``path`` loads, transitively (itself left out, even when an
        import cycle leads back to it), and every candidate path along the way (a file added
        or removed there changes what loads).

        Worked out once per file: a test's closure is asked for by its registration check
        and by each of its markers, and the imports it follows never change in a snapshot.
        """
        found = self._closures.get(path)
        if found is None:
            node = self._files.add(path)
            if node not in self._reach:
                self._solve(node)
            files, candidates = self._reach[node]
            found = (self._files.members(files & ~(1 << node)),
                     PathSet(candidates, self._paths))
            self._closures[path] = found
        return found

    def _imported(self, node: int) -> tuple[int, ...]:
        """The nodes a node imports (each file found for each of its imports)."""
        found = self._next.get(node)
        if found is None:
            found = tuple(self._files.add(dep) for imp in self.imports(self._files.paths[node])
                          for dep in imp.found)
            self._next[node] = found
        return found

    def _solve(self, root: int) -> None:
        """The reach of ``root`` and of every node it reaches that has none yet: Tarjan's
        strongly connected components, without recursion. A component is complete once
        every component it imports is, and all its nodes reach the same files."""
        number = {root: 0}  # the order nodes were met in
        low = {root: 0}
        stack = [root]  # met, and not yet in a complete component: those without a reach
        work = [(root, iter(self._imported(root)))]
        while work:
            node, pending = work[-1]
            for nxt in pending:
                if nxt in self._reach:
                    continue
                if nxt not in number:
                    number[nxt] = low[nxt] = len(number)
                    stack.append(nxt)
                    work.append((nxt, iter(self._imported(nxt))))
                    break
                low[node] = min(low[node], number[nxt])  # on the stack: a cycle back
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == number[node]:  # the first node met of a component
                    members = []
                    while True:
                        member = stack.pop()
                        members.append(member)
                        if member == node:
                            break
                    self._finish(members)

    def _finish(self, members: list[int]) -> None:
        """The reach of one strongly connected component, from its own imports and the
        reach of the components they lead to (each complete already)."""
        files = candidates = 0
        inside = set(members)
        joined: set[int] = set()  # components already added (by their reach's identity)
        for node in members:
            files |= 1 << node
            for imp in self.imports(self._files.paths[node]):
                candidates |= self._candidate_bits(imp.candidates)
            for nxt in self._imported(node):
                if nxt in inside:
                    continue
                reach = self._reach[nxt]
                if id(reach) not in joined:
                    joined.add(id(reach))
                    files |= reach[0]
                    candidates |= reach[1]
        reach = (files, candidates)
        for node in members:
            self._reach[node] = reach

    def _candidate_bits(self, candidates: tuple[str, ...]) -> int:
        bits = self._bits.get(candidates)
        if bits is None:
            bits = 0
            for path in candidates:
                bits |= 1 << self._paths.add(path)
            self._bits[candidates] = bits
        return bits

    def unreadable(self, paths: Sequence[str]) -> list[Unreadable]:
        """Why any of ``paths`` could not be parsed (what reading their imports found, for
        those read already: a closure's files are)."""
        given = set(paths)
        if self._broken.keys().isdisjoint(given) and given.issubset(self._direct):
            return []  # the common case, a closure with nothing broken, at the speed of sets
        out = []
        for p in paths:
            m = self._broken.get(p) if p in self._direct else self.sources.module(p)
            if isinstance(m, Unreadable):
                out.append(m)
        return out
