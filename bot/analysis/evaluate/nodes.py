"""What is worked out once per syntax tree node and kept on the node itself.

A node's text, the value of a literal, a function's parameter names, whether it yields:
each depends only on the node (and the module it was parsed from), so it is kept as an
attribute of the node and goes away with the tree (a key by ``id()`` could be reused by a
later tree once this one is released). Every such attribute is set and read here, and only
here is anything set on a syntax tree node.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Protocol, cast

from bot.analysis.evaluate.literals import split_literal
from bot.analysis.values import Chunk, FuncV, Origin, OriginKind, Unknown, Value, with_origin

if TYPE_CHECKING:
    from bot.analysis.evaluate.core import Scope
    from bot.analysis.source import Module

_SEGMENT = "_rocmbot_segment"
_ORIGIN = "_rocmbot_origin"
_CONSTANT = "_rocmbot_constant"
_NAMED = "_rocmbot_named"
_CHUNK = "_rocmbot_chunk"
_PIECES = "_rocmbot_pieces"
_ASSIGNED = "_rocmbot_assigned"
_GENERATOR = "_rocmbot_generator"
_PARAMS = "_rocmbot_params"
_LINES = "_rocmbot_lines"  # on a module's tree: its lines, when they can be split simply
_YIELDS = "_rocmbot_yields"  # on a module's tree: whether "yield" is anywhere in its text
# line breaks other than \r and \n (str.splitlines() splits there, the parser does not)
_ODD_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_ASCII_ODD_BREAKS = "\x0b\x0c\x1c\x1d\x1e"


# ----- text and origin ----------------------------------------------------------------------

class Counts(Protocol):
    """Who asks for a node's text: what depends on the stack is counted there."""

    _limit_hits: int


def source_text(counts: Counts, node: ast.AST, scope: Scope) -> str:
    """The node's source text, on one line and cut at 200 characters ("<expression>": it
    cannot be found). A syntax tree is evaluated only within the module it was parsed from.
    (The interpreter's ``_segment``: a tree too deep to walk is a limit hit of ``counts``.)"""
    found: str | None = node.__dict__.get(_SEGMENT)
    if found is not None:
        return found
    module = scope.module.module
    text = _line_segment(node, module)
    if text is None:
        try:
            text = module.segment(node)[:200]
        except RecursionError:
            counts._limit_hits += 1  # depends on the stack: neither kept nor shared
            return "<expression>"
        except (ValueError, TypeError, AttributeError):
            return "<expression>"
    setattr(node, _SEGMENT, text)
    return text


def _odd_breaks(text: str) -> bool:
    """Whether ``str.splitlines`` would break ``text`` where Python does not."""
    if text.isascii():  # a few searches for single characters beat the regular expression
        return any(c in text for c in _ASCII_ODD_BREAKS)
    return _ODD_BREAKS.search(text) is not None


def _line_segment(node: ast.AST, module: Module) -> str | None:
    """``module.segment(node)[:200]`` for a node on one ASCII line, without splitting the
    whole file into lines of bytes (None: ask the module)."""
    line = getattr(node, "lineno", None)
    if line is None or getattr(node, "end_lineno", None) != line:
        return None
    col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    if col is None or end_col is None:
        return None
    tree = module.tree.__dict__
    lines = tree.get(_LINES)
    if lines is None:
        lines = [] if _odd_breaks(module.text) else module.text.splitlines(keepends=True)
        tree[_LINES] = lines
    if not 0 < line <= len(lines):
        return None
    text = cast(list[str], lines)[line - 1]
    if not text.isascii():  # columns count bytes
        return None
    return " ".join(text[col:end_col].split())[:200]


def node_origin(node: ast.AST, scope: Scope) -> Origin:
    """Where the literal ``node`` of the scope's module sits."""
    found: Origin | None = node.__dict__.get(_ORIGIN)
    if found is None:
        found = Origin(scope.module.path, getattr(node, "lineno", 0), None, "literal")
        setattr(node, _ORIGIN, found)
    return found


# ----- literal values -----------------------------------------------------------------------

class MakesConstants(Protocol):
    def _e_constant(self, node: ast.Constant, scope: Scope) -> Value:
        """The value of ``node``, made (and kept with :func:`keep_constant` if it can be)."""


def constant(maker: MakesConstants, node: ast.Constant, scope: Scope) -> Value:
    """The value of a constant: made once per node, as values never change (the dispatch
    entry of constants, so that a value kept costs no more than one call)."""
    found: Value | None = node.__dict__.get(_CONSTANT)
    if found is not None:
        return found
    return maker._e_constant(node, scope)


def keep_constant(node: ast.Constant, value: Value) -> Value:
    setattr(node, _CONSTANT, value)
    return value


def named_literal(node: ast.AST, value: Value, path: str, line: int, name: str,
                  kind: OriginKind) -> Value:
    """``with_origin(value, Origin(path, line, name, kind))``: a literal set by name (a
    keyword, a field, a constant). Kept on ``node`` for the value it was made from."""
    key = (value, kind)  # the literal's value is made once per node (see _e_constant)
    found: tuple[tuple[Value, OriginKind], Value] | None = node.__dict__.get(_NAMED)
    if found is not None and found[0][0] is value and found[0][1] == kind:
        return found[1]
    named = with_origin(value, Origin(path, line, name, kind))
    if not isinstance(value, Unknown):  # an unknown value is new each time
        setattr(node, _NAMED, (key, named))
    return named


def chunk(item: ast.Constant, text: str, path: str, line: int) -> Chunk:
    """The text ``item`` of an f-string on ``line`` (kept per node and line)."""
    found: tuple[int, Chunk] | None = item.__dict__.get(_CHUNK)
    if found is None or found[0] != line:
        found = (line, Chunk(text, Origin(path, line)))
        setattr(item, _CHUNK, found)
    return found[1]


def pieces(node: ast.Constant | ast.JoinedStr, module: Module) -> list[tuple[int, ast.expr]]:
    """The literals of an implicit concatenation spread over lines, each with its line,
    re-parsed where they sit in the file (just ``node`` when it cannot be split)."""
    found: list[tuple[int, ast.expr]] | None = node.__dict__.get(_PIECES)
    if found is None:
        found = _split(node, module)
        setattr(node, _PIECES, found)
    return found


def _split(node: ast.Constant | ast.JoinedStr, module: Module) -> list[tuple[int, ast.expr]]:
    whole: list[tuple[int, ast.expr]] = [(node.lineno, node)]
    source = module.source_segment(node)
    if source is None:
        return whole
    found = split_literal(source)
    if found is None or len(found) < 2:
        return whole
    out: list[tuple[int, ast.expr]] = []
    lines = source.split("\n")
    for offset, col, text in found:
        try:
            piece = ast.parse(text, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return whole
        if not isinstance(piece, ast.Constant | ast.JoinedStr):
            return whole
        prefix = lines[offset][:col]
        byte_col = len(prefix.encode()) + (node.col_offset if offset == 0 else 0)
        _shift(piece, node.lineno + offset, byte_col)
        out.append((node.lineno + offset, piece))
    if isinstance(node, ast.Constant):
        joined = "".join(p.value for _, p in out if isinstance(p, ast.Constant)
                         and isinstance(p.value, str))
        if joined != node.value or any(not isinstance(p, ast.Constant) for _, p in out):
            return whole
    return out


def _shift(tree: ast.AST, line: int, col: int) -> None:
    """Move a re-parsed piece to where it sits in the file (line 1-based, col in bytes)."""
    for node in ast.walk(tree):
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            continue
        end = getattr(node, "end_lineno", None)
        if lineno == 1:
            setattr(node, "col_offset", getattr(node, "col_offset", 0) + col)  # noqa: B010
            end_col = getattr(node, "end_col_offset", None)
            if end == 1 and end_col is not None:
                setattr(node, "end_col_offset", end_col + col)  # noqa: B010
        setattr(node, "lineno", lineno + line - 1)  # noqa: B010
        if end is not None:
            setattr(node, "end_lineno", end + line - 1)  # noqa: B010


# ----- statements and functions -------------------------------------------------------------

def assigned_names(node: ast.stmt) -> frozenset[str]:
    """The names a statement (a loop) may assign or change in place."""
    names: frozenset[str] | None = node.__dict__.get(_ASSIGNED)
    if names is None:
        found: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                found.add(sub.id)
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                    isinstance(sub.func.value, ast.Name):
                found.add(sub.func.value.id)
            elif isinstance(sub, ast.AugAssign | ast.Assign):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                for t in targets:
                    base = t
                    while isinstance(base, ast.Attribute | ast.Subscript):
                        base = base.value
                    if isinstance(base, ast.Name):
                        found.add(base.id)
        names = frozenset(found)
        setattr(node, _ASSIGNED, names)
    return names


def is_generator(node: ast.FunctionDef | ast.AsyncFunctionDef, module: Module) -> bool:
    found: bool | None = node.__dict__.get(_GENERATOR)
    if found is None:
        found = False
        yields = module.tree.__dict__.get(_YIELDS)
        if yields is None:
            yields = module.tree.__dict__[_YIELDS] = "yield" in module.text
        if not yields:  # no yield anywhere in the file's source
            setattr(node, _GENERATOR, False)
            return False
        stack: list[ast.AST] = list(node.body)
        while stack:
            sub = stack.pop()
            if isinstance(sub, ast.Yield | ast.YieldFrom):
                found = True
                break
            if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                continue
            stack.extend(ast.iter_child_nodes(sub))
        setattr(node, _GENERATOR, found)
    return found


class Parameters:
    """A function's parameter names."""

    __slots__ = ("every", "named", "positional")

    def __init__(self, spec: ast.arguments) -> None:
        self.positional = [a.arg for a in (*spec.posonlyargs, *spec.args)]
        keyword_only = [a.arg for a in spec.kwonlyargs]
        self.named = frozenset([*self.positional, *keyword_only])  # may be passed by name
        self.every = [*self.positional, *keyword_only]


def parameters_of(fn: FuncV) -> Parameters:
    """A function's parameter names (worked out once per function node)."""
    params: Parameters | None = fn.node.__dict__.get(_PARAMS)
    if params is None:
        params = Parameters(fn.node.args)
        setattr(fn.node, _PARAMS, params)
    return params
