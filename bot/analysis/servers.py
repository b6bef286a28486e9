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
sums, and names bound once in the function, the class or the module. Anything else is not
known: the rules that need it are not evaluated (PAR019). A launch the test skips in CI
(``if is_in_ci(): return`` before it, ``@unittest.skipIf(is_in_ci(), ...)`` around it, or
``@unittest.skip``) is not checked at all.

The GPUs a server takes are ``tp x pp``, times ``dp`` without DP attention (its data
parallel controller starts ``dp`` schedulers of ``tp x pp`` GPUs each; with DP attention
``dp`` splits the ``tp`` GPUs), over ``nnodes`` nodes.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

from bot.analysis.source import Module

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
    """A value the test's syntax does not decide."""

    text: str
    line: int


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

    @cached_property
    def module(self) -> dict[str, ast.expr | None]:
        return _bindings(self.tree.body)

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
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
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


class _Str(str):
    """A string literal that knows its line."""

    line: int = 0


def _line(word: object, default: int) -> int:
    return word.line if isinstance(word, _Str | Unresolved) and word.line else default


class _Reader:
    """Values of expressions at one call, from the names around it."""

    def __init__(self, scopes: _Scopes, node: ast.expr, module: Module) -> None:
        self.scopes = scopes
        self.module = module
        self.node = node
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
                    items.extend(inner if isinstance(inner, list) else [self.unresolved(item)])
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
            return self.value(bound) if bound is not None else self.unresolved(expr)
        return self.unresolved(expr)

    def _name(self, expr: ast.Name) -> object:
        for scope in self.chain:
            if isinstance(scope, ast.ClassDef):
                continue  # a class body is not a scope of its methods
            names = self.scopes.bindings(scope)
            params = {a.arg for a in [*scope.args.posonlyargs, *scope.args.args,
                                      *scope.args.kwonlyargs]}
            if expr.id in names or expr.id in params:
                bound = names.get(expr.id)
                return self.value(bound) if bound is not None else self.unresolved(expr)
        bound = self.scopes.module.get(expr.id)
        return self.value(bound) if bound is not None else self.unresolved(expr)


def _words(value: object, expr: ast.expr, reader: _Reader) -> list[str | Unresolved]:
    """A command line's words: list items, or a string split as a shell would."""
    if isinstance(value, Unresolved):
        return [value]
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
            continue
        if not word.startswith("--"):
            continue
        name, eq, inline = word.partition("=")
        symbol = SERVER_FLAGS.get(name)
        nxt = words[i] if i < len(words) else None
        if symbol is None:
            if not eq and isinstance(nxt, Unresolved):
                i += 1  # the value of a flag the rules do not read
            continue
        server.lines[symbol] = _line(word, line)
        if symbol in _BOOL:
            server.settings[symbol] = True
            continue
        if eq:
            text: str | Unresolved = inline
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


def _skip(decorator: ast.expr, backend: str) -> tuple[bool, str | None]:
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
            skipped, cond = _skip(decorator, backend)
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
        server = _server(node, module, scopes, launchers, keyword_forms)
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
            keyword_forms: frozenset[str]) -> Server | None:
    tail = _tail(node.func)
    reader = _Reader(scopes, node, module)
    if tail in launchers:
        server = Server(module.path, node.lineno, tail)
        args = next((kw.value for kw in node.keywords if kw.arg == "other_args"), None)
        if args is None and len(node.args) > 4:
            args = node.args[4]
        if any(kw.arg is None for kw in node.keywords) or \
                any(isinstance(a, ast.Starred) for a in node.args):
            server.opaque.append(reader.unresolved(node))
        if args is not None:
            _apply_flags(server, _words(reader.value(args), args, reader), args.lineno)
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
