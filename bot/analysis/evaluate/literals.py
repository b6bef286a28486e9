"""Literal syntax: constants, displays of them, and string literals written side by side."""

from __future__ import annotations

import ast
import re


def _literal_display(node: ast.expr) -> bool:
    """A list, tuple, set or dict display of literals, nested or not."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(is_literal(e) or _literal_display(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and (is_literal(k) or _literal_display(k)) for k in node.keys) and \
            all(is_literal(v) or _literal_display(v) for v in node.values)
    return False


def is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd) and \
        isinstance(node.operand, ast.Constant)


def split_literal(source: str) -> list[tuple[int, int, str]] | None:
    """The string literals of an implicit concatenation: (line offset, column, text).

    Columns are character offsets from the start of their line within ``source``. Returns
    None when ``source`` is anything else.
    """
    out: list[tuple[int, int, str]] = []
    i, n, line, line_start = 0, len(source), 0, 0
    while i < n:
        c = source[i]
        if c in " \t\f\r":
            i += 1
            continue
        if c == "\n":
            i += 1
            line += 1
            line_start = i
            continue
        if c == "\\" and source.startswith("\\\n", i):
            i += 2
            line += 1
            line_start = i
            continue
        if c == "#":
            end = source.find("\n", i)
            i = n if end == -1 else end
            continue
        prefix = re.match(r"[rRbBuUfF]{0,2}", source[i:i + 2])
        j = i + (len(prefix.group(0)) if prefix else 0)
        if j >= n or source[j] not in "'\"":
            return None
        quote = source[j] * 3 if source.startswith(source[j] * 3, j) else source[j]
        fmode = "f" in source[i:j].lower()
        k, depth = j + len(quote), 0
        while k < n:
            ch = source[k]
            if ch == "\\":
                k += 2
                continue
            if fmode and ch == "{":
                if depth == 0 and source.startswith("{{", k):
                    k += 2
                    continue
                depth += 1
            elif fmode and ch == "}" and depth:
                depth -= 1
            elif depth and ch in "'\"":
                close = source.find(ch, k + 1)
                if close == -1:
                    return None
                k = close
            elif not depth and source.startswith(quote, k):
                k += len(quote)
                break
            k += 1
        else:
            return None
        out.append((line, i - line_start, source[i:k]))
        newlines = source.count("\n", i, k)
        if newlines:
            line += newlines
            line_start = source.rfind("\n", i, k) + 1
        i = k
    return out
