"""The patch that brings a parked test back: its marker call without the `disabled=` argument.

Text in, a unified diff out: the marker call on a line of a test file is found in the syntax
tree, its `disabled` argument (the keyword, or the reason given as the last positional argument,
as SGLang's `register_amd_ci` takes it) is cut out with the separator before it, and a line
that held nothing else goes whole. The result must parse and its call must have lost only that
argument; otherwise there is no patch, and a person edits the file.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass

KEYWORD = "disabled"


def _call_at(tree: ast.Module, line: int) -> ast.Call | None:
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and stmt.value.lineno == line:
            return stmt.value
    return None


Argument = ast.expr | ast.keyword


def _argument(call: ast.Call, reason: str | None) -> Argument | None:
    """The argument that parks the test: the `disabled=` keyword, or the reason as the last
    positional argument when the call has no keyword after it."""
    for keyword in call.keywords:
        if keyword.arg == KEYWORD:
            return keyword
    if call.args and not call.keywords and reason is not None:
        last = call.args[-1]
        if isinstance(last, ast.Constant) and last.value == reason and len(call.args) > 2:
            return last
    return None


def _offsets(source: bytes) -> list[int]:
    """The byte offset each line starts at (1-based lines: index 0 is unused)."""
    starts = [0, 0]
    for index, byte in enumerate(source):
        if byte == 0x0A:
            starts.append(index + 1)
    return starts


def _cut(source: bytes, call: ast.Call, node: Argument) -> bytes:
    """``source`` without ``node``, one argument of ``call``, and its separator."""
    starts = _offsets(source)

    def at(line: int, col: int) -> int:
        return starts[line] + col

    arguments: list[Argument] = sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))
    index = arguments.index(node)
    start = at(node.lineno, node.col_offset)
    end = at(node.end_lineno or node.lineno, node.end_col_offset or 0)
    line_start, line_end = starts[node.lineno], source.find(b"\n", end)
    line_end = len(source) if line_end < 0 else line_end
    before, after = source[line_start:start], source[end:line_end].strip()
    after = after[1:].strip() if after.startswith(b",") else after
    if not before.strip() and (not after or after.startswith(b"#")):  # alone on its lines (a
        return source[:line_start] + source[min(len(source), line_end + 1):]  # comment goes with it)
    if index > 0:  # from the end of the argument before it
        previous = arguments[index - 1]
        start = at(previous.end_lineno or previous.lineno, previous.end_col_offset or 0)
        return source[:start] + source[end:]
    if index + 1 < len(arguments):  # the first argument: up to the next one
        following = arguments[index + 1]
        return source[:start] + source[at(following.lineno, following.col_offset):]
    return source[:start] + source[end:]


def _arguments(call: ast.Call) -> list[str]:
    return [ast.dump(a) for a in call.args] + [ast.dump(k) for k in call.keywords]


def unparked(text: str, line: int, reason: str | None = None) -> str | None:
    """``text`` with the `disabled` argument of the marker call on ``line`` removed
    (``reason``: the disabled reason, to know it when it is given positionally); None when
    there is no such call or argument, or the edit would not leave the call as it was
    otherwise."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    call = _call_at(tree, line)
    node = _argument(call, reason) if call is not None else None
    if call is None or node is None:
        return None
    changed = _cut(text.encode("utf-8"), call, node).decode("utf-8")
    try:
        after = _call_at(ast.parse(changed), line)
    except (SyntaxError, ValueError):  # a layout the cut does not know: a person edits it
        return None
    wanted = [a for a in _arguments(call) if a != ast.dump(node)]
    if after is None or _arguments(after) != wanted:
        return None
    return changed


def unpark_patch(path: str, text: str, line: int, reason: str | None = None) -> str | None:
    """A unified diff of ``path`` that removes the `disabled` argument of the marker call on
    ``line`` (see :func:`unparked`); None when there is none to remove."""
    changed = unparked(text, line, reason)
    if changed is None:
        return None
    diff = difflib.unified_diff(text.splitlines(keepends=True), changed.splitlines(keepends=True),
                                f"a/{path}", f"b/{path}")
    return "".join(d if d.endswith("\n") else d + "\n\\ No newline at end of file\n" for d in diff)


@dataclass(frozen=True)
class Removal:
    """The edit that brings a parked test back, as a review suggestion takes it: lines
    ``start``..``end`` of the file (1-based, inclusive) become ``lines`` (none: they go), and
    the whole of it as a unified diff (``patch``)."""

    start: int
    end: int
    lines: tuple[str, ...]
    patch: str


def removal(path: str, text: str, line: int, reason: str | None = None) -> Removal | None:
    """The `disabled` argument of the marker call on ``line`` removed, as one replaced run of
    lines; None when there is none to remove."""
    changed = unparked(text, line, reason)
    if changed is None:
        return None
    old, new = text.splitlines(keepends=True), changed.splitlines(keepends=True)
    edits = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
             if op[0] != "equal"]
    first, last = edits[0], edits[-1]  # the cut is one run of lines: nothing between is equal
    start, end = first[1], last[2]
    patch = unpark_patch(path, text, line, reason)
    assert patch is not None
    return Removal(start + 1, end, tuple(line_.rstrip("\n") for line_ in new[first[3]:last[4]]), patch)
