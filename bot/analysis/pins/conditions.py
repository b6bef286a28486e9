"""Workflow `if:` conditions, compared: which of them are complementary, so that the steps or
jobs they guard are alternative install paths."""

from __future__ import annotations

import re

from bot.analysis.workflows import strip_expression

_OPPOSITE = {"is": "not", "not": "is", "eq": "ne", "ne": "eq"}


def _condition(text: str) -> tuple[str, ...]:
    """A canonical form of an `if:` condition, for telling complementary ones apart."""
    expr = re.sub(r"\s+", " ", strip_expression(text)).strip().replace('"', "'")
    while _wrapped(expr):
        expr = expr[1:-1].strip()
    negated = re.fullmatch(r"! ?(.+)", expr)
    if negated and _operand(negated.group(1)):
        inner = _condition(negated.group(1))
        return (_OPPOSITE[inner[0]], *inner[1:])
    compared = re.fullmatch(r"([^\s=!<>()]+) ?(==|!=) ?([^\s=!<>()]+)", expr)
    if compared:
        left, op, right = compared.groups()
        if right in ("true", "false") or left in ("true", "false"):
            subject, value = (left, right) if right in ("true", "false") else (right, left)
            return ("is" if (value == "true") == (op == "==") else "not", subject)
        return ("eq" if op == "==" else "ne", *sorted((left, right)))
    return ("is", expr)


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


def _wrapped(text: str) -> bool:
    return text.startswith("(") and text.endswith(")") and _balanced(text[1:-1])


def _operand(text: str) -> bool:
    """A name, a call or a parenthesised expression: what `!` applies to as a whole."""
    if text.startswith("!"):
        return _operand(text[1:].lstrip())
    if re.fullmatch(r"[\w.\-\[\]']+", text) or _wrapped(text):
        return True
    call = re.fullmatch(r"[\w.]+\((.*)\)", text)
    return call is not None and _balanced(call.group(1))


def complementary(a: str, b: str) -> bool:
    """Whether exactly one of two `if:` conditions holds, whatever the inputs."""
    x, y = _condition(a), _condition(b)
    return _OPPOSITE[x[0]] == y[0] and x[1:] == y[1:]
