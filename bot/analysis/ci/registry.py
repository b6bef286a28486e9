"""A repository's own statement of which suites each hardware backend runs per commit, nightly
or otherwise (SGLang's `test/run_suite.py`), read from its syntax tree.

The statement is three module-level dict literals, `PER_COMMIT_SUITES`, `NIGHTLY_SUITES` and
`OTHER_SUITES`, keyed by backend (`HWBackend.AMD`, or a string `"amd"`) with lists of suite
names. A key is the attribute's (or string's) name lower-cased, with `amd` named `rocm` as
rocmbot's markers name it. An entry whose key or list is not literal (a name, a comprehension,
a `**` spread) is not guessed: it is left out, noted with its line, and its table and backend
are listed in `unread`. The module is parsed, never imported.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from bot.analysis.source import Module, parse_python

RegistryCadence = Literal["per-pr", "nightly", "other"]
# the tables, in the order `cadence` consults them
TABLES: dict[str, RegistryCadence] = {
    "PER_COMMIT_SUITES": "per-pr", "NIGHTLY_SUITES": "nightly", "OTHER_SUITES": "other",
}
REGISTRY_NAME = "run_suite.py"
PREFERRED = ("test/run_suite.py", "tests/run_suite.py")
_TEST_FOLDERS = frozenset({"test", "tests"})
_BACKEND_NAMES = {"amd": "rocm"}  # as `register_amd_ci` markers are ROCm's
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # bodies run when called

Suites = Mapping[str, frozenset[str]]


@dataclass(frozen=True)
class RegistryProblem:
    """Why a registry file could not be read."""

    path: str
    message: str
    line: int | None


@dataclass(frozen=True)
class SuiteRegistry:
    """The suites each backend lists, per table (backend -> suite names)."""

    path: str
    per_commit: Suites
    nightly: Suites
    other: Suites
    notes: tuple[str, ...] = ()  # `path:line: ...` for every entry that was not read
    # (cadence, backend) of every list not read; backend None when its key was not read
    unread: frozenset[tuple[RegistryCadence, str | None]] = field(default_factory=frozenset)

    def _tables(self) -> tuple[tuple[RegistryCadence, Suites], ...]:
        return (("per-pr", self.per_commit), ("nightly", self.nightly), ("other", self.other))

    def cadence(self, backend: str, suite: str) -> RegistryCadence | None:
        """The first table whose list for the backend names the suite; None when none does
        (a list in `unread` may still name it)."""
        for cadence, table in self._tables():
            if suite in table.get(backend, frozenset()):
                return cadence
        return None

    def backends_of(self, suite: str) -> frozenset[str]:
        """Every backend whose lists name the suite, in any table."""
        return frozenset(backend for _, table in self._tables()
                         for backend, suites in table.items() if suite in suites)


def backend_name(key: str) -> str:
    """rocmbot's name for a registry key's backend (`AMD` -> `rocm`, `CUDA` -> `cuda`)."""
    lowered = key.lower()
    return _BACKEND_NAMES.get(lowered, lowered)


def registry_candidates(paths: Iterable[str]) -> list[str]:
    """The files of a tree that may be its registry, the likeliest first: `test/run_suite.py`,
    `tests/run_suite.py`, then any `run_suite.py` under a `test` or `tests` folder, shallowest
    first."""
    found = {p for p in paths if posixpath.basename(p) == REGISTRY_NAME
             and _TEST_FOLDERS.intersection(p.split("/")[:-1])}
    rank = {p: i for i, p in enumerate(PREFERRED)}
    return sorted(found, key=lambda p: (rank.get(p, len(rank)), p.count("/"), p))


def find_registry(
    paths: Iterable[str], read: Callable[[str], str | None],
) -> SuiteRegistry | RegistryProblem | None:
    """The first candidate (see `registry_candidates`) that defines a table; ``read`` gives a
    file's text, None when it cannot be read. When none does, the first candidate's problem,
    or None when no candidate had one."""
    problem: RegistryProblem | None = None
    for path in registry_candidates(paths):
        text = read(path)
        found = RegistryProblem(path, "cannot be read", None) if text is None \
            else read_registry(path, text)
        if isinstance(found, SuiteRegistry):
            return found
        problem = problem or found
    return problem


def read_registry(path: str, text: str) -> SuiteRegistry | RegistryProblem | None:
    """The registry a module states; None when it assigns none of the tables at top level."""
    module = parse_python(path, text)
    if not isinstance(module, Module):
        return RegistryProblem(path, module.reason, module.line)
    return registry_of(module)


def registry_of(module: Module) -> SuiteRegistry | None:
    """The registry of an already parsed module; None when it assigns none of the tables."""
    reader = _Reader(module.path)
    for stmt in module.tree.body:
        reader.statement(stmt)
    if not reader.assigned:
        return None
    per_commit, nightly, other = (MappingProxyType(reader.tables[name]) for name in TABLES)
    return SuiteRegistry(module.path, per_commit, nightly, other, tuple(reader.notes),
                         frozenset(reader.unread))


@dataclass
class _Reader:
    """The tables as the module's top-level statements leave them, in order."""

    path: str
    tables: dict[str, dict[str, frozenset[str]]] = field(
        default_factory=lambda: {name: {} for name in TABLES})
    assigned: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    unread: set[tuple[RegistryCadence, str | None]] = field(default_factory=set)

    def note(self, node: ast.AST, message: str) -> None:
        self.notes.append(f"{self.path}:{getattr(node, 'lineno', 0)}: {message}")

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                self.assign(target, stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, stmt.value)
        elif not isinstance(stmt, _DEFINITIONS):
            self.changes(stmt)

    def assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name) and target.id in TABLES:
            self.table(target.id, value)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and target.value.id in TABLES:
            self.entry(target.value.id, target.slice, value)

    def table(self, name: str, value: ast.expr) -> None:
        self.assigned.add(name)
        self.tables[name] = {}
        self.unread = {(c, b) for c, b in self.unread if c != TABLES[name]}
        if not isinstance(value, ast.Dict):
            self.note(value, f"{name} is not a dict literal; its suites are not read")
            self.unread.add((TABLES[name], None))
            return
        for key, suites in zip(value.keys, value.values, strict=True):
            if key is None:
                self.note(suites, f"{name} spreads another mapping (`**`); it is not read")
                self.unread.add((TABLES[name], None))
            else:
                self.entry(name, key, suites)

    def entry(self, name: str, key: ast.expr, value: ast.expr) -> None:
        cadence = TABLES[name]
        backend = _backend(key)
        if backend is None:
            self.note(key, f"{name} has a key that is not a backend name; its suites are not read")
            self.unread.add((cadence, None))
            return
        self.tables[name].pop(backend, None)
        self.unread.discard((cadence, backend))
        suites = _suites(value)
        if suites is None:
            self.note(value, f"{name}[{backend}] is not a list of string literals; not read")
            self.unread.add((cadence, backend))
        else:
            self.tables[name][backend] = suites

    def changes(self, stmt: ast.stmt) -> None:
        """Note a top-level statement (other than a plain assignment) that may change a table:
        `PER_COMMIT_SUITES[k].append(...)`, `+=`, `del`, an assignment under an `if`."""
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Name, ast.Subscript, ast.Attribute)) and \
                    isinstance(node.ctx, (ast.Store, ast.Del)):
                name = _root(node)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                name = _root(node.func.value)
            else:
                continue
            if name is not None:
                self.note(stmt, f"{name} may be changed here; its lists are read as assigned")
                return


def _root(node: ast.expr) -> str | None:
    """The table a `T[k].x` chain starts from, if any."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) and node.id in TABLES else None


def _backend(key: ast.expr) -> str | None:
    if isinstance(key, ast.Attribute):
        return backend_name(key.attr)
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return backend_name(key.value)
    return None


def _suites(value: ast.expr) -> frozenset[str] | None:
    if not isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return None
    names = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return frozenset(names) if len(names) == len(value.elts) else None
