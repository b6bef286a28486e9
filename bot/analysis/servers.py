"""SGLang server launches in a test, read from its syntax, and the PAR rules they meet.

A test starts an SGLang server in one of three forms:

- a server launcher of the repository (``launch.servers``, ``popen_launch_server(model,
  base_url, timeout, other_args=["--tp", "2"])``), whose ``other_args`` are the server's
  command line;
- a command line ``python -m sglang.launch_server --tp 2 ...`` handed to any call;
- the keyword form (``launch.server_keywords``: ``sgl.Engine(model_path=..., tp_size=2)``,
  ``ServerArgs(tp_size=2, ...)``). Building ``ServerArgs`` validates the arguments but takes
  no GPU, so only SGLang's own constraints apply to it, and not inside ``assertRaises``.

The values are resolved from the test's own syntax: literals, ``str(N)``, lists and their
sums, and names bound once in the function, the class or the module. The changes made to a
bound list on the way to the launch are replayed (``append``, ``extend``, ``insert``,
``remove``, ``+=``), in straight code, in a branch whose condition is known in CI, and over
both ways of a branch whose condition is not (a size the ways disagree on is decided by that
condition). Any other change that may come first (in a loop, through an alias, in another
function, by a call the list is handed to) leaves the list not known, named by that change.
Anything else is not known: the rules that need it are not evaluated (PAR019). A launch the test skips in CI
(``if is_in_ci(): return`` before it, ``@unittest.skipIf(is_in_ci(), ...)`` around it, or
``@unittest.skip``) is not checked at all.

The GPUs a server takes are ``tp x pp``, times ``dp`` without DP attention (its data
parallel controller starts ``dp`` schedulers of ``tp x pp`` GPUs each; with DP attention
``dp`` splits the ``tp`` GPUs), over ``nnodes`` nodes.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from bot.analysis.evaluate import ExternalCall
from bot.analysis.evaluate.core import Many
from bot.analysis.source import Module
from bot.analysis.values import (
    Alternatives,
    Choice,
    Chunk,
    Const,
    ListV,
    Text,
    TupleV,
    Unknown,
    Value,
    origin_of,
    python,
)

# SGLang's spellings (python/sglang/srt/server_args.py: field names as flags, their aliases,
# and the prefixes argparse accepts that its tests use, `--tp` and `--dp`) -> symbol
SERVER_FLAGS: dict[str, str] = {
    "--tp": "tp", "--tp-size": "tp", "--tensor-parallel-size": "tp",
    "--dp": "dp", "--dp-size": "dp", "--data-parallel-size": "dp",
    "--ep": "ep", "--ep-size": "ep", "--expert-parallel-size": "ep",
    "--pp-size": "pp", "--pipeline-parallel-size": "pp",  # (`--pp` is ambiguous there)
    "--nnodes": "nnodes",
    "--enable-dp-attention": "dp_attention",
    "--moe-a2a-backend": "a2a", "--enable-waterfill": "waterfill",
}
# the keyword form: ServerArgs / Engine field -> symbol
SERVER_KEYWORDS: dict[str, str] = {
    "tp_size": "tp", "dp_size": "dp", "ep_size": "ep", "pp_size": "pp", "nnodes": "nnodes",
    "enable_dp_attention": "dp_attention", "moe_a2a_backend": "a2a",
    "enable_waterfill": "waterfill",
}
_BOOL = frozenset({"dp_attention", "waterfill"})
_TEXT = frozenset({"a2a"})  # symbols whose value is a word, not a number
SYMBOLS = ("tp", "pp", "dp", "ep", "nnodes", "dp_attention", "a2a", "waterfill")
LAUNCH_SERVER = "sglang.launch_server"
# calls whose truth in a CI run is known, per backend (None: on every backend)
_IN_CI: dict[str, str | None] = {"is_in_ci": None, "is_in_amd_ci": "rocm", "is_hip": "rocm"}


@dataclass(frozen=True, slots=True)
class Unresolved:
    """A value the test's syntax does not decide; ``many``: in a command line, words not
    known that may be any number of them (a list, a string split), never a flag's value."""

    text: str
    line: int
    many: bool = field(default=False, compare=False)

    def words(self) -> Unresolved:
        return Unresolved(self.text, self.line, True)


Scalar = int | bool | str | Unresolved


@dataclass(slots=True)
class Server:
    """One server launch of a test."""

    path: str
    line: int
    form: str  # the launcher, `sglang.launch_server` or the keyword class
    settings: dict[str, Scalar] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)  # symbol -> the line that set it
    opaque: list[Unresolved] = field(default_factory=list)  # words that may set any flag
    takes_gpus: bool = True
    guard: str | None = None  # a condition that decides whether it runs, not known

    def value(self, symbol: str) -> Scalar:
        """The effective value (SGLang's default 1 / off when unset), or what hides it."""
        if symbol in self.settings:
            return self.settings[symbol]
        if self.opaque:
            return self.opaque[0]
        return False if symbol in _BOOL else 1


# ----- reading the syntax --------------------------------------------------------------------

_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


class _Scopes:
    """Names bound exactly once, by plain assignment, per scope of a module."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.classes: dict[ast.ClassDef, dict[str, ast.expr | None]] = {}
        self.functions: dict[ast.AST, dict[str, ast.expr | None]] = {}
        self._module_changes: dict[frozenset[str], dict[str, list[ast.AST]]] = {}

    @cached_property
    def module(self) -> dict[str, ast.expr | None]:
        return _bindings(self.tree.body)

    def all_changes(self, exempt: frozenset[str]) -> dict[str, list[ast.AST]]:
        """:func:`_changes` over the whole module."""
        found = self._module_changes.get(exempt)
        if found is None:
            found = _changes(self.tree, exempt)
            self._module_changes[exempt] = found
        return found

    def module_changes(self, name: str, exempt: frozenset[str]) -> list[ast.AST]:
        """The changes of a module-level name: anywhere in the module but in the functions
        where the name is a local of their own."""
        changes = self.all_changes(exempt).get(name, [])
        if not changes:
            return []
        local: set[int] = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not any(
                    isinstance(n, ast.Global) and name in n.names for n in ast.walk(node)):
                params = {a.arg for a in [*node.args.posonlyargs, *node.args.args,
                                          *node.args.kwonlyargs]}
                if name in self.bindings(node) or name in params:
                    local.update(id(n) for n in ast.walk(node))
        return [c for c in changes if id(c) not in local]

    def bindings(self, scope: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr | None]:
        found = self.functions.get(scope)
        if found is None:
            found = _bindings(scope.body)
            self.functions[scope] = found
        return found

    def ancestors(self, node: ast.expr) -> list[ast.AST]:
        """The nodes that contain ``node``, innermost first (found by their source spans:
        only a child that spans it, or one without a position, is searched)."""
        start, end = (node.lineno, node.col_offset), (node.end_lineno or 0, node.end_col_offset or 0)

        def down(current: ast.AST) -> list[ast.AST] | None:
            for child in ast.iter_child_nodes(current):
                if child is node:
                    return [current]
                if isinstance(child, ast.stmt | ast.expr):
                    first = (child.lineno, child.col_offset)
                    last = (child.end_lineno or 0, child.end_col_offset or 0)
                    if not (first <= start and end <= last):
                        continue
                found = down(child)
                if found is not None:
                    return [*found, current]
            return None

        return down(self.tree) or []

    def chain(self, node: ast.expr) -> list[_Def]:
        """The enclosing functions and classes, innermost first."""
        return [n for n in self.ancestors(node)
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]

    def attributes(self, cls: ast.ClassDef) -> dict[str, ast.expr | None]:
        """A class's attributes bound once: in its body, or as ``cls.x`` / ``self.x``."""
        found = self.classes.get(cls)
        if found is None:
            found = _bindings(cls.body)
            for node in ast.walk(cls):
                if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                    for target in _targets(node):
                        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                                and target.value.id in ("self", "cls"):
                            _bind(found, target.attr, _assigned(node))
            self.classes[cls] = found
        return found


def _targets(node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> list[ast.expr]:
    return list(node.targets) if isinstance(node, ast.Assign) else [node.target]


def _assigned(node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> ast.expr | None:
    if isinstance(node, ast.AugAssign):
        return None
    return node.value


def _bind(names: dict[str, ast.expr | None], name: str, value: ast.expr | None) -> None:
    names[name] = None if name in names else value  # bound twice: not known


def _bindings(body: list[ast.stmt]) -> dict[str, ast.expr | None]:
    names: dict[str, ast.expr | None] = {}
    for stmt in body:
        for node in _own_nodes(stmt):
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                names.setdefault(node.target.id, None)  # a change (see _Changes), or unbound
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                for target in _targets(node):
                    if isinstance(target, ast.Name):
                        _bind(names, target.id, _assigned(node))
                    else:
                        for inner in ast.walk(target):
                            if isinstance(inner, ast.Name):
                                _bind(names, inner.id, None)
            elif isinstance(node, ast.For | ast.NamedExpr | ast.withitem):
                bound: ast.expr | None = \
                    node.optional_vars if isinstance(node, ast.withitem) else node.target
                for inner in ast.walk(bound) if bound is not None else ():
                    if isinstance(inner, ast.Name):
                        _bind(names, inner.id, None)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    _bind(names, (alias.asname or alias.name).split(".")[0], None)
    return names


def _own_nodes(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of a statement, not entering nested functions or classes."""
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef |
                              ast.Lambda):
                todo.append(child)


# ----- what changes a value after it is bound ---------------------------------------------------

# methods that read their object and change nothing
_READS = frozenset({
    "copy", "count", "index", "get", "keys", "values", "items", "split", "rsplit", "join", "format",
    "startswith", "endswith", "strip", "lstrip", "rstrip", "replace", "lower", "upper",
    "partition", "rpartition", "find", "rfind", "encode", "splitlines", "isdigit",
})
# calls that read their arguments and change none of them
_PURE = frozenset({
    "str", "int", "float", "bool", "len", "list", "tuple", "set", "dict", "sorted", "reversed",
    "print", "repr", "enumerate", "zip", "isinstance", "any", "all", "min", "max", "range", "iter",
    "hash", "id", "type", *_READS,
})
# the changes of a list the reader replays: `x.append(v)`, `x.extend(l)`, `x.insert(i, v)`,
# `x.remove(v)` (and `x += l`)
_REPLAYED = frozenset({"append", "extend", "insert", "remove"})
# where a launcher takes the server's command line, when not `other_args` (5th positional)
_ARGUMENTS: dict[str, tuple[str, int]] = {
    "run_bench_serving": ("other_server_args", 3),
    "ModelLaunchSettings": ("extra_args", 2),
}
MAX_PATHS = 16  # the values a name may have at a launch, after undecided branches


def _key(expr: ast.expr) -> str | None:
    """The value an expression names, as the reader follows it: a name, or ``self.x``
    (``cls.x`` alike)."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and \
            expr.value.id in ("self", "cls"):
        return "self." + expr.attr
    return None


def _changes(tree: ast.AST, exempt: frozenset[str]) -> dict[str, list[ast.AST]]:
    """Per value (see :func:`_key`), the nodes under ``tree`` that may change it in place:
    a method call other than a read, a store into or through it, ``x += ...``, a call that is
    handed it (it may change it), and, for a name that is another's alias (``b = a``), what
    changes the alias. ``exempt``: the calls that only read what they are given (the
    launchers)."""
    found: dict[str, list[ast.AST]] = {}
    aliases: list[tuple[str, str, ast.AST]] = []

    def add(expr: ast.expr, node: ast.AST) -> None:
        key = _key(expr)
        if key is not None:
            found.setdefault(key, []).append(node)

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr not in _READS:
                add(func.value, node)
            tail = _tail(func)
            if tail in _PURE or tail in exempt or tail.startswith("assert"):
                continue
            for arg in [*node.args, *(kw.value for kw in node.keywords)]:
                add(arg.value if isinstance(arg, ast.Starred) else arg, node)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for target in targets:
                for inner in ast.walk(target):
                    if isinstance(inner, ast.Subscript | ast.Attribute):
                        add(inner.value, node)  # a store into it, or into what it holds
                if isinstance(node, ast.AugAssign):
                    add(target, node)
            if isinstance(node, ast.Assign):
                # `b = a` and `a = b = [...]`: one list under two names, either changes both
                names = [k for k in (_key(t) for t in node.targets) if k is not None]
                source = _key(node.value)
                if source is not None:
                    names.append(source)
                for first in names:
                    for second in names:
                        if first != second:
                            aliases.append((first, second, node))
    for _ in range(4):  # an alias of an alias
        for alias, key, node in aliases:
            if alias in found and node not in found.get(key, ()):
                found.setdefault(key, []).append(node)
    return found


@dataclass(frozen=True, slots=True)
class _Paths:
    """The values a name may have at a launch, one per way through undecided branches."""

    values: list[object]
    condition: Unresolved  # the first condition that decides between them


class _Replay:
    """The value a name has at a launch, replaying the changes of it on the way there (see
    :meth:`_Reader._replayed`). Only straight code is replayed: the changes in a branch whose
    condition is known in CI, in a ``with``, or before the launch in the same block."""

    UNSET = object()

    def __init__(self, reader: _Reader, key: str, bound: ast.expr, changes: list[ast.AST]) -> None:
        self.reader = reader
        self.key = key
        self.bound = bound
        self.changes = changes
        self.values: list[object] = []  # one per way of getting here (empty: not bound yet)
        self.forks: list[ast.expr] = []  # the undecided conditions that made them
        self.reached = False
        self.opaque: ast.AST | None = None

    def _contains(self, stmt: ast.AST, target: ast.AST) -> bool:
        return any(node is target for node in ast.walk(stmt))

    def _changed_in(self, stmt: ast.AST) -> ast.AST | None:
        inside = {id(n) for n in ast.walk(stmt)}
        return next((c for c in self.changes if id(c) in inside), None)

    def run(self, block: list[ast.stmt]) -> None:
        for stmt in block:
            if self.reached or self.opaque is not None:
                return
            self._stmt(stmt)

    def _branches(self, stmt: ast.stmt) -> list[list[ast.stmt]] | None:
        """The blocks of a compound statement that run, in order, when that is known."""
        if isinstance(stmt, ast.If):
            truth = _truth(stmt.test, self.reader.backend)
            if truth is None:
                return None
            return [stmt.body if truth else stmt.orelse]
        if isinstance(stmt, ast.With | ast.AsyncWith):
            return [stmt.body]
        return None

    def _stmt(self, stmt: ast.stmt) -> None:
        launch = self.reader.node
        here = self._contains(stmt, launch)
        binds = self._contains(stmt, self.bound)
        change = self._changed_in(stmt)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if change is not None:
                self.opaque = change  # runs when called, which is not followed here
            return
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is self.bound:
            self.values = [self._at(self.bound)]
            return
        if not here and not binds and change is None:
            return
        if not _blocks(stmt):
            if here:
                self.reached = True  # the launch: what its own statement changes comes after
            elif not self._apply(stmt):
                self.opaque = change or stmt
            return
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While) and change is not None:
            self.opaque = change  # a loop's changes are not unrolled here
            return
        branches = self._branches(stmt)
        if branches is None and change is not None and isinstance(stmt, ast.If) and \
                not here and not binds:
            self._fork(stmt)
            return
        if branches is None:
            if change is not None:
                self.opaque = change
                return
            branches = [b for b in _blocks(stmt) if any(
                self._contains(s, self.bound) or self._contains(s, launch) for s in b)]
        for branch in branches:
            self.run(branch)

    def _fork(self, stmt: ast.If) -> None:
        """Both ways through an ``if`` whose condition is not known in CI: the value is one
        of what each leaves."""
        before = self.values
        out: list[object] = []
        for branch in (stmt.body, stmt.orelse):
            self.values = list(before)
            self.run(branch)
            if self.opaque is not None:
                return
            out.extend(v for v in self.values if v not in out)
        if len(out) > MAX_PATHS:
            self.opaque = stmt.test
            return
        self.values = out
        self.forks.append(stmt.test)

    def _apply(self, stmt: ast.stmt) -> bool:
        """Replay a simple statement that changes the value; False: it cannot be."""
        if not self.values:
            return False
        out = []
        for value in self.values:
            changed = self._apply_one(stmt, value)
            if changed is self.UNSET:
                return False
            out.append(changed)
        self.values = out
        return True

    def _at(self, expr: ast.expr) -> object:
        """The value of ``expr`` where the statement that holds it runs."""
        reader = self.reader
        saved = reader.node, reader._chain
        reader.node, reader._chain = expr, None
        try:
            return reader.value(expr)
        finally:
            reader.node, reader._chain = saved

    def _apply_one(self, stmt: ast.stmt, value: object) -> object:
        if isinstance(value, Unresolved):
            # words not known, then the words added after them (a later flag still wins)
            value = [value.words()]
            grown = self._apply_one(stmt, value)
            if not isinstance(grown, list) or grown[:1] != value or \
                    (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and
                     _tail(stmt.value.func) not in ("append", "extend")):
                return self.UNSET
            return grown
        if isinstance(stmt, ast.AugAssign) and _key(stmt.target) == self.key and \
                isinstance(stmt.op, ast.Add):
            other = self._at(stmt.value)
            if isinstance(value, list) and isinstance(other, list | tuple):
                return [*value, *other]
            if (isinstance(value, str) and isinstance(other, str)) or \
                    (type(value) is int and type(other) is int):
                return value + other  # type: ignore[operator]
            return self.UNSET
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            return self.UNSET
        call = stmt.value
        func = call.func
        if not isinstance(func, ast.Attribute) or _key(func.value) != self.key or \
                func.attr not in _REPLAYED or call.keywords or \
                any(isinstance(a, ast.Starred) for a in call.args) or \
                not isinstance(value, list):
            return self.UNSET
        if sum(1 for c in self.changes if self._contains(stmt, c)) != 1:
            return self.UNSET  # another change inside its arguments
        args = [self._at(a) for a in call.args]
        items: list[object] = list(value)
        if func.attr == "append" and len(args) == 1:
            items.append(args[0])
        elif func.attr == "extend" and len(args) == 1 and isinstance(args[0], list | tuple | str):
            items.extend(args[0])
        elif func.attr == "insert" and len(args) == 2 and type(args[0]) is int:
            items.insert(args[0], args[1])
        elif func.attr == "remove" and len(args) == 1 and _known_item(args[0]):
            for index, item in enumerate(items):
                if not _known_item(item):
                    return self.UNSET  # it may be the one removed
                if item == args[0]:
                    del items[index]
                    break
            else:
                return self.UNSET  # ValueError
        else:
            return self.UNSET
        return items


def _known_item(value: object) -> bool:
    return isinstance(value, str | int) and not isinstance(value, Unresolved)


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement blocks of a compound statement."""
    out: list[list[ast.stmt]] = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            out.append(block)
    for handler in getattr(stmt, "handlers", []) or []:
        out.append(handler.body)
    for case in getattr(stmt, "cases", []) or []:
        out.append(case.body)
    return out


class _Str(str):
    """A string literal that knows its line."""

    line: int = 0


def _line(word: object, default: int) -> int:
    return word.line if isinstance(word, _Str | Unresolved) and word.line else default


class _Reader:
    """Values of expressions at one call, from the names around it."""

    def __init__(self, scopes: _Scopes, node: ast.expr, module: Module, backend: str = "",
                 exempt: frozenset[str] = frozenset()) -> None:
        self.scopes = scopes
        self.module = module
        self.node = node
        self.backend = backend
        self.exempt = exempt  # the launchers: they read what they are given
        self._chain: list[_Def] | None = None
        self.depth = 0

    @property
    def chain(self) -> list[_Def]:
        if self._chain is None:
            self._chain = self.scopes.chain(self.node)
        return self._chain

    def unresolved(self, expr: ast.expr) -> Unresolved:
        return Unresolved(self.module.segment(expr) or ast.unparse(expr), expr.lineno)

    def value(self, expr: ast.expr) -> object:
        """A Python value (str, int, bool, list) or an Unresolved."""
        self.depth += 1
        try:
            if self.depth > 32:
                return self.unresolved(expr)
            return self._value(expr)
        finally:
            self.depth -= 1

    def _value(self, expr: ast.expr) -> object:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            text = _Str(expr.value)
            text.line = expr.lineno
            return text
        if isinstance(expr, ast.Constant) and isinstance(expr.value, int | bool):
            return expr.value
        if isinstance(expr, ast.List | ast.Tuple):
            items: list[object] = []
            for item in expr.elts:
                if isinstance(item, ast.Starred):
                    inner = self.value(item.value)
                    items.extend(inner if isinstance(inner, list) else
                                 [self.unresolved(item).words()])
                else:
                    items.append(self.value(item))
            return items
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            left, right = self.value(expr.left), self.value(expr.right)
            if isinstance(left, list) and isinstance(right, list):
                return left + right
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            return self.unresolved(expr)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and \
                expr.func.id in ("str", "int") and len(expr.args) == 1 and not expr.keywords:
            inner = self.value(expr.args[0])
            if isinstance(inner, Unresolved | bool) or not isinstance(inner, str | int):
                return self.unresolved(expr)
            if expr.func.id == "str":
                return str(inner)
            return int(inner) if isinstance(inner, int) or re.fullmatch(r"\d{1,9}", inner) \
                else self.unresolved(expr)
        if isinstance(expr, ast.JoinedStr):
            out = []
            for part in expr.values:
                if isinstance(part, ast.Constant):
                    out.append(str(part.value))
                    continue
                assert isinstance(part, ast.FormattedValue)
                inner = self.value(part.value)
                if part.conversion != -1 or part.format_spec is not None or \
                        isinstance(inner, bool) or not isinstance(inner, str | int):
                    return self.unresolved(expr)
                out.append(str(inner))
            return "".join(out)
        if isinstance(expr, ast.Name):
            return self._name(expr)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and \
                expr.value.id in ("self", "cls"):
            cls = next((c for c in self.chain if isinstance(c, ast.ClassDef)), None)
            bound = self.scopes.attributes(cls).get(expr.attr) if cls is not None else None
            if bound is None or cls is None:
                return self.unresolved(expr)
            # an attribute is set in one method and used in another: a change of it anywhere
            # may come first (a subclass's test changes what its base holds, say)
            changed = self.scopes.all_changes(self.exempt).get("self." + expr.attr)
            if changed:
                return self._changed(changed[0])
            return self.value(bound)
        return self.unresolved(expr)

    def _changed(self, node: ast.AST) -> Unresolved:
        """What a change the reader does not replay leaves of a value: not known, named by
        the change."""
        text = self.module.segment(node) if isinstance(node, ast.expr | ast.stmt) else None
        return Unresolved(text or ast.unparse(node), getattr(node, "lineno", 0))

    def _name(self, expr: ast.Name) -> object:
        for scope in self.chain:
            if isinstance(scope, ast.ClassDef):
                continue  # a class body is not a scope of its methods
            names = self.scopes.bindings(scope)
            params = {a.arg for a in [*scope.args.posonlyargs, *scope.args.args,
                                      *scope.args.kwonlyargs]}
            if expr.id in names or expr.id in params:
                bound = names.get(expr.id)
                if bound is None:
                    return self.unresolved(expr)
                changes = _changes(scope, self.exempt).get(expr.id, [])
                return self._replayed(expr.id, bound, changes, scope.body)
        bound = self.scopes.module.get(expr.id)
        if bound is None:
            return self.unresolved(expr)
        changes = self.scopes.module_changes(expr.id, self.exempt)
        return self._replayed(expr.id, bound, changes, self.scopes.tree.body)

    def _replayed(self, key: str, bound: ast.expr, changes: list[ast.AST],
                  body: list[ast.stmt]) -> object:
        """The value of a name bound once to ``bound`` in ``body``, where the launch reads it,
        after the ``changes`` made to it on the way (see :class:`_Replay`)."""
        if not changes:
            return self.value(bound)
        replay = _Replay(self, key, bound, changes)
        replay.run(body)
        if replay.opaque is not None:
            return self._changed(replay.opaque)
        if not replay.values:
            return self._changed(changes[0])
        if len(replay.values) > 1:
            return _Paths(replay.values, self.unresolved(replay.forks[0]))
        return replay.values[0]


def _words(value: object, expr: ast.expr, reader: _Reader) -> list[str | Unresolved]:
    """A command line's words: list items, or a string split as a shell would."""
    if isinstance(value, Unresolved):
        return [value.words()]
    if isinstance(value, str):
        return list(value.split())
    if isinstance(value, list):
        out: list[str | Unresolved] = []
        for item in value:
            if isinstance(item, _Str) and not item.split()[1:]:
                out.append(item)  # one word: it keeps its line
            elif isinstance(item, str):
                out.extend(item.split())
            elif isinstance(item, int) and not isinstance(item, bool):
                out.append(str(item))
            elif isinstance(item, Unresolved):
                out.append(item)
            else:
                out.append(reader.unresolved(expr))
        return out
    return [reader.unresolved(expr)]


def _settings_object(server: Server, node: ast.Call, args: ast.expr | None,
                     reader: _Reader) -> None:
    """SGLang's ``ModelLaunchSettings(model_path, tp_size=1, extra_args=None, ...)``
    (python/sglang/test/test_utils.py): the server's arguments are ``extra_args``, with
    ``--tp tp_size`` added when ``tp_size > 1`` and ``--tp`` is not one of them."""
    if any(kw.arg is None for kw in node.keywords) or \
            any(isinstance(a, ast.Starred) for a in node.args):
        server.opaque.append(reader.unresolved(node))
        return
    words: list[str | Unresolved] = []
    line = node.lineno
    if args is not None:
        value = reader.value(args)
        words = _words(value.condition if isinstance(value, _Paths) else value, args, reader)
        line = args.lineno
    tp = next((kw.value for kw in node.keywords if kw.arg == "tp_size"), None)
    if tp is None and len(node.args) > 1:
        tp = node.args[1]
    if tp is not None:
        size = reader.value(tp)
        words = _with_tp(words, size if _known_size(size) else reader.unresolved(tp), tp.lineno)
    _apply_flags(server, words, line)


def _known_size(size: object) -> bool:
    return isinstance(size, int) and not isinstance(size, bool)


def _with_tp(words: list[str | Unresolved], size: object, line: int) -> list[str | Unresolved]:
    """``ModelLaunchSettings``' arguments with its ``tp_size`` (``size``: a number, or an
    Unresolved) added as SGLang adds it: only when they hold no ``--tp``, and only when it is
    above 1. An argument not known may hold one, so the size is then not known either."""
    if "--tp" in words:
        return words
    unknown = next((w for w in words if isinstance(w, Unresolved)), None)
    if unknown is not None:
        return words if size == 1 and _known_size(size) else \
            [*words, _at_line("--tp", line), unknown]
    if isinstance(size, Unresolved):
        return [*words, _at_line("--tp", line), size]
    if _known_size(size) and isinstance(size, int) and size > 1:
        return [*words, _at_line("--tp", line), _at_line(str(size), line)]
    return words


def _at_line(text: str, line: int) -> _Str:
    word = _Str(text)
    word.line = line
    return word


def _merge(server: Server, paths: _Paths, args: ast.expr, reader: _Reader) -> None:
    """The server's values over every value its arguments may have: a value they all agree
    on is known, any other is decided by the condition that told them apart."""
    each = []
    for value in paths.values:
        one = Server(server.path, server.line, server.form)
        _apply_flags(one, _words(value, args, reader), args.lineno)
        each.append(one)
    _merge_servers(server, each, paths.condition)


def _merge_servers(server: Server, each: list[Server], condition: Unresolved) -> None:
    for one in each:
        server.opaque.extend(o for o in one.opaque if o not in server.opaque)
        for symbol, line in one.lines.items():
            server.lines.setdefault(symbol, line)
    for symbol in dict.fromkeys(s for one in each for s in one.settings):
        values = [one.value(symbol) for one in each]
        server.settings[symbol] = values[0] if all(v == values[0] for v in values) \
            else condition


def _int(text: str) -> int | None:
    return int(text) if re.fullmatch(r"\d{1,9}", text) else None


def _apply_flags(server: Server, words: list[str | Unresolved], line: int) -> None:
    """Set the server's values from its command line (a later flag wins)."""
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if isinstance(word, Unresolved):
            server.opaque.append(word)
            for known in server.settings:  # the unknown word may set it again
                server.settings[known] = word
            continue
        if not word.startswith("--"):
            continue
        name, eq, inline = word.partition("=")
        symbol = SERVER_FLAGS.get(name)
        nxt = words[i] if i < len(words) else None
        if symbol is None:
            if not eq and isinstance(nxt, Unresolved) and not nxt.many:
                i += 1  # the value of a flag the rules do not read
            continue
        server.lines[symbol] = _line(word, line)
        if symbol in _BOOL:
            server.settings[symbol] = True
            continue
        if eq:
            text: str | Unresolved = inline
        elif isinstance(nxt, Unresolved) and nxt.many:
            server.settings[symbol] = nxt  # words not known follow: read next as such
            continue
        elif nxt is not None and not (isinstance(nxt, str) and nxt.startswith("--")):
            text = nxt
            i += 1
        else:
            continue
        server.lines[symbol] = _line(text, server.lines[symbol])
        if isinstance(text, Unresolved) or symbol in _TEXT:
            server.settings[symbol] = text
        else:
            number = _int(text)
            server.settings[symbol] = Unresolved(text, line) if number is None else number


def _keywords(server: Server, call: ast.Call, reader: _Reader) -> None:
    for kw in call.keywords:
        if kw.arg is None:
            server.opaque.append(reader.unresolved(kw.value))
            continue
        symbol = SERVER_KEYWORDS.get(kw.arg)
        if symbol is None:
            continue
        value = reader.value(kw.value)
        server.lines[symbol] = kw.value.lineno
        if isinstance(value, Unresolved):
            server.settings[symbol] = value
        elif symbol in _BOOL:
            server.settings[symbol] = value if isinstance(value, bool) else reader.unresolved(kw.value)
        elif symbol in _TEXT and isinstance(value, str):
            server.settings[symbol] = str(value)
        elif symbol not in _TEXT and isinstance(value, int) and not isinstance(value, bool):
            server.settings[symbol] = value
        else:
            server.settings[symbol] = reader.unresolved(kw.value)


def _tail(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _in_raises(scopes: _Scopes, node: ast.expr) -> bool:
    for current in scopes.ancestors(node):
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef):
            return False
        if isinstance(current, ast.With | ast.AsyncWith) and any(
                isinstance(item.context_expr, ast.Call) and
                _tail(item.context_expr.func) in ("assertRaises", "assertRaisesRegex", "raises")
                for item in current.items):
            return True
    return False


# ----- whether it runs in CI -------------------------------------------------------------------

def _truth(expr: ast.expr, backend: str) -> bool | None:
    """Whether a condition holds in a CI run on ``backend``, when that is known."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        inner = _truth(expr.operand, backend)
        return None if inner is None else not inner
    if isinstance(expr, ast.Call) and not expr.args and _tail(expr.func) in _IN_CI:
        wanted = _IN_CI[_tail(expr.func)]
        return wanted is None or wanted == backend
    return None


def skip(decorator: ast.expr, backend: str) -> tuple[bool, str | None]:
    """(skipped in CI, or the condition that decides it when not known)."""
    if not isinstance(decorator, ast.Call):
        return _tail(decorator) == "skip", None
    name = _tail(decorator.func)
    if name == "skip":
        return True, None
    if name in ("skipIf", "skipUnless", "skipif") and decorator.args:
        truth = _truth(decorator.args[0], backend)
        if truth is None:
            return False, ast.unparse(decorator.args[0])
        return truth == (name != "skipUnless"), None
    return False, None


def _exits(stmt: ast.stmt) -> bool:
    """Whether a block's statement ends the test there (return, skip)."""
    if isinstance(stmt, ast.Return | ast.Raise):
        return True
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
        _tail(stmt.value.func) in ("skipTest", "skip")


def _guard(scopes: _Scopes, node: ast.expr, backend: str) -> tuple[bool, str | None]:
    """Whether CI skips the launch at ``node``, or the unknown condition that decides it."""
    unknown = None
    for scope in scopes.chain(node):
        for decorator in scope.decorator_list:
            skipped, cond = skip(decorator, backend)
            if skipped:
                return True, None
            unknown = unknown or cond
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            for stmt in scope.body:
                if stmt.lineno >= getattr(node, "lineno", 0):
                    break
                if isinstance(stmt, ast.If) and stmt.body and _exits(stmt.body[0]) and \
                        _truth(stmt.test, backend) is True:
                    return True, None
    return False, unknown


# ----- finding the launches ------------------------------------------------------------------

def find(module: Module, backend: str, launchers: frozenset[str],
         keyword_forms: frozenset[str]) -> list[Server]:
    """Every server launch of a test module, in source order, that CI does not skip."""
    text = module.text
    command = LAUNCH_SERVER in text
    if not command and not any(name in text for name in (*launchers, *keyword_forms)):
        return []
    names = launchers | keyword_forms
    calls = [node for node in ast.walk(module.tree) if isinstance(node, ast.Call) and (
        _tail(node.func) in names or (command and node.args))]
    if not calls:
        return []
    scopes = _Scopes(module.tree)
    out: list[Server] = []
    for node in calls:
        server = _server(node, module, scopes, launchers, keyword_forms, backend)
        if server is None:
            continue
        skipped, cond = _guard(scopes, node, backend)
        if skipped:
            continue
        server.guard = cond
        out.append(server)
    out.sort(key=lambda s: s.line)
    return out


def _server(node: ast.Call, module: Module, scopes: _Scopes, launchers: frozenset[str],
            keyword_forms: frozenset[str], backend: str) -> Server | None:
    tail = _tail(node.func)
    reader = _Reader(scopes, node, module, backend, launchers | keyword_forms)
    if tail in launchers:
        server = Server(module.path, node.lineno, tail)
        keyword, position = _ARGUMENTS.get(tail, ("other_args", 4))
        args = next((kw.value for kw in node.keywords if kw.arg == keyword), None)
        if args is None and len(node.args) > position:
            args = node.args[position]
        if tail == "ModelLaunchSettings":
            _settings_object(server, node, args, reader)
            return server
        if any(kw.arg is None for kw in node.keywords) or \
                any(isinstance(a, ast.Starred) for a in node.args):
            server.opaque.append(reader.unresolved(node))
        if args is not None:
            value = reader.value(args)
            if isinstance(value, _Paths):
                _merge(server, value, args, reader)
            else:
                _apply_flags(server, _words(value, args, reader), args.lineno)
        return server
    if tail in keyword_forms:
        if _in_raises(scopes, node):
            return None  # a test of SGLang's own validation
        server = Server(module.path, node.lineno, tail, takes_gpus=tail != "ServerArgs")
        _keywords(server, node, reader)
        return server
    for arg in node.args[:1]:
        if not isinstance(arg, ast.List | ast.Tuple | ast.Constant | ast.JoinedStr | ast.Name |
                          ast.BinOp):
            continue
        words = _words(reader.value(arg), arg, reader)
        names = [w for w in words if isinstance(w, str)]
        if LAUNCH_SERVER not in names or "-m" not in names:
            continue
        server = Server(module.path, node.lineno, LAUNCH_SERVER)
        _apply_flags(server, words[names.index(LAUNCH_SERVER):], arg.lineno)
        return server
    return None


# ----- from the evaluator ------------------------------------------------------------------------

# functions a test runner calls itself: every way they are reached is the runner's
_RUNNER_CALLS = frozenset({"setUp", "setUpClass", "tearDown", "tearDownClass", "setup_method",
                           "setup_class", "setUpModule"})


def reached_directly(module: Module, lines: Collection[int]) -> set[int]:
    """Those of ``lines`` every way to which is a call the evaluator follows: the functions
    around the line (and those that call them, by name) are test functions, set-ups,
    fixtures or the module's top level, or are only ever called, never handed on
    (``executor.map(self._launch, sizes)``, a callback) or named in a string."""
    defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    called: set[int] = set()  # ids of the Name / Attribute nodes in a call's function position
    names: list[tuple[str, ast.AST]] = []
    texts: set[str] = set()
    for node in ast.walk(module.tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defs.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.Call):
            called.add(id(node.func))
        elif isinstance(node, ast.Name):
            names.append((node.id, node))
        elif isinstance(node, ast.Attribute):
            names.append((node.attr, node))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts.add(node.value)
    uses: dict[str, list[ast.AST]] = {}
    for name, node in names:
        if name in defs:
            uses.setdefault(name, []).append(node)
    return {line for line in lines if _reached(line, defs, uses, called, texts)}


def _reached(line: int, defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]],
             uses: dict[str, list[ast.AST]], called: set[int], texts: set[str]) -> bool:
    def enclosing(at: int) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        return [d for found in defs.values() for d in found
                if d.lineno <= at <= (d.end_lineno or d.lineno)]

    todo, seen = [line], set()
    while todo:
        at = todo.pop()
        for fn in enclosing(at):
            if fn.name in seen or fn.name.startswith("test") or fn.name in _RUNNER_CALLS or \
                    any("fixture" in ast.unparse(d) for d in fn.decorator_list):
                continue
            seen.add(fn.name)
            if len(seen) > 32 or fn.name in texts:
                return False
            for use in uses.get(fn.name, []):
                if id(use) not in called:
                    return False  # handed on: it may be called any way, any number of times
                todo.append(getattr(use, "lineno", 0))
    return True


def from_call(call: ExternalCall, path: str) -> Server:
    """The server a launcher call reached by the evaluator starts (see
    :mod:`bot.analysis.evaluate`), from the values it was given there: the same reading of
    its command line as :func:`find` makes of the syntax, on values the evaluator followed
    through loops, objects, copies and calls."""
    server = Server(path, call.line, call.tail)
    keyword, position = _ARGUMENTS.get(call.tail, ("other_args", 4))
    args = call.keywords.get(keyword)
    if args is None and len(call.args) > position:
        args = call.args[position]
    if call.partial:
        server.opaque.append(Unresolved(f"{call.name}(...)", call.line))
    words = [] if args is None else _value_words(args, path, call.line)
    if call.tail == "ModelLaunchSettings":
        size_value = call.keywords.get("tp_size", call.args[1] if len(call.args) > 1 else None)
        if size_value is not None:
            size = python(size_value)
            words = _with_tp(words, size if _known_size(size) else
                             Unresolved(_value_text(size_value), call.line), call.line)
    _apply_flags(server, words, call.line)
    if call.guards:
        server.guard = call.guards[0]
    return server


def from_command(call: ExternalCall, path: str, line: int) -> Server | None:
    """The server a call reached by the evaluator starts when it is handed the command line
    ``python -m sglang.launch_server ...`` (a repository's own wrapper around the server,
    followed from the test), anchored at ``line`` of the test ``path``; None for any other
    call. A command line that differs by a condition not known is one server whose values
    the ways disagree on are decided by that condition."""
    return _command_server(call.args[0], call, path, line) if call.args else None


def _command_server(value: Value, call: ExternalCall, path: str, line: int) -> Server | None:
    if type(value) is Alternatives:
        each = [_command_server(option, call, path, line) for option in value.options]
        if not each or any(one is None for one in each):
            return None
        server = Server(path, line, LAUNCH_SERVER)
        _merge_servers(server, [one for one in each if one is not None],
                       Unresolved(value.text, line))
    else:
        words = _value_words(value, path, line)
        names = [w for w in words if isinstance(w, str)]
        if LAUNCH_SERVER not in names or "-m" not in names:
            return None
        start = next(i for i, w in enumerate(words) if w == LAUNCH_SERVER)
        server = Server(path, line, LAUNCH_SERVER)
        if any(isinstance(w, Unresolved) and w.many for w in words[:start]):
            server.opaque.append(Unresolved(call.name, line, True))
        _apply_flags(server, words[start:], line)
    if call.guards:
        server.guard = call.guards[0]
    return server


def _value_text(value: Value) -> str:
    if isinstance(value, Unknown):
        return value.text
    if isinstance(value, Text):
        return "".join(p.text if isinstance(p, Chunk) else p.cond if isinstance(p, Choice)
                       else f"{{{p.text}}}" for p in value.parts)
    return "an argument"


def _value_line(value: Value, path: str, default: int) -> int:
    origin = origin_of(value)
    return origin.line if origin is not None and origin.path == path and origin.line else default


def _value_words(value: Value, path: str, line: int) -> list[str | Unresolved]:
    """A command line's words from an evaluated value: a list of words, or a string split
    as a shell would; anything not known is one Unresolved word."""
    if isinstance(value, Const) and value.value is None:
        return []
    listed = isinstance(value, ListV | TupleV)
    items = value.items if isinstance(value, ListV | TupleV) else [value]
    out: list[str | Unresolved] = []
    for item in items:
        at = _value_line(item, path, line)
        plain = item.plain if isinstance(item, Text) else None
        if plain is not None:
            out.extend(_at_line(word, at) for word in plain.split())
        elif isinstance(item, Const) and isinstance(item.value, int) and \
                not isinstance(item.value, bool):
            out.append(_at_line(str(item.value), at))
        else:
            # one item of a list is one word; anything else (the evaluator's `Many`, a
            # whole value not known) may be any number of them
            many = not listed or isinstance(item, Many)
            out.append(Unresolved(_value_text(item), at, many))
    return out
