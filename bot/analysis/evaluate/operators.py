"""Operators: arithmetic, unary and boolean operators, comparisons and membership."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any, cast

from bot.analysis.evaluate.core import MAX_INT_BITS, MAX_ITEMS, MAX_TEXT, Core, Scope, choose, named_origin
from bot.analysis.evaluate.literals import is_literal
from bot.analysis.evaluate.nodes import node_origin
from bot.analysis.values import (
    NOT_PLAIN,
    Alternatives,
    Builtin,
    Const,
    DictV,
    ListV,
    Origin,
    SetV,
    Text,
    TupleV,
    Unknown,
    Value,
    equal,
    key_of,
    origin_of,
    python,
    truth,
)


class OperatorsMixin(Core):
    """Evaluates operators (the values of their operands worked out first)."""

    def _e_binop(self, node: ast.BinOp, scope: Scope) -> Value:
        left = self.eval(node.left, scope)
        right = self.eval(node.right, scope)
        return self._binop(node.op, left, right, node, scope)

    def _binop(self, op: ast.operator, a: Value, b: Value, node: ast.AST, scope: Scope) -> Value:
        if type(a) is Text and type(b) is Text and type(op) is ast.Add and \
                len(a) + len(b) <= MAX_TEXT:
            return a + b
        named = named_origin(origin_of(a)) or named_origin(origin_of(b))
        origin = Origin(scope.module.path, getattr(node, "lineno", 0), None, "computed", named)
        if type(a) is Alternatives:
            return choose([self._binop(op, o, b, node, scope) for o in a.options], a.text,
                          a.origin or origin)
        if type(b) is Alternatives:
            return choose([self._binop(op, a, o, node, scope) for o in b.options], b.text,
                          b.origin or origin)
        if isinstance(a, Unknown):
            return Unknown(a.text if a.quiet else self._segment(node, scope), a.origin or origin, a.quiet)
        if isinstance(b, Unknown):
            return Unknown(self._segment(node, scope), b.origin or origin)
        if isinstance(op, ast.Add):
            if isinstance(a, Text) and isinstance(b, Text):
                return a + b if len(a) + len(b) <= MAX_TEXT else Unknown(self._segment(node, scope), origin)
            if isinstance(a, ListV) and isinstance(b, ListV):
                return ListV(a.items + b.items) if len(a.items) + len(b.items) <= MAX_ITEMS \
                    else Unknown(self._segment(node, scope), origin)
            if isinstance(a, TupleV) and isinstance(b, TupleV):
                return TupleV(a.items + b.items) if len(a.items) + len(b.items) <= MAX_ITEMS \
                    else Unknown(self._segment(node, scope), origin)
        if isinstance(op, ast.Mult):
            seq, count = (a, b) if isinstance(b, Const) else (b, a)
            n = python(count) if isinstance(count, Const) else None
            if isinstance(n, int) and isinstance(seq, Text | ListV | TupleV):
                size = len(seq) if isinstance(seq, Text) else len(seq.items)
                if max(n, 0) * size > (MAX_TEXT if isinstance(seq, Text) else MAX_ITEMS):
                    return Unknown(self._segment(node, scope), origin)
                if isinstance(seq, Text):
                    return Text(seq.parts * max(n, 0))
                if isinstance(seq, ListV):
                    return ListV(seq.items * max(n, 0))
                return TupleV(seq.items * max(n, 0))
        if isinstance(op, ast.Mod) and isinstance(a, Text):
            template = a.plain
            args = python(b)
            if template is None or args is NOT_PLAIN:
                return Unknown(self._segment(node, scope), origin)
            try:
                result = template % (tuple(args) if isinstance(args, list | tuple) else args)
            except (TypeError, ValueError, KeyError, OverflowError):
                return Unknown(self._segment(node, scope), origin)
            if len(result) > MAX_TEXT:
                return Unknown(self._segment(node, scope), origin)
            return Text.of(result, origin)
        x, y = python(a), python(b)
        if not (isinstance(a, Const) and isinstance(b, Const)):
            return Unknown(self._segment(node, scope), origin)
        number = arith(op, x, y)
        if number is NOT_PLAIN:
            return Unknown(self._segment(node, scope), origin)
        return Const(cast(int | float | bool, number), origin)

    def _e_unaryop(self, node: ast.UnaryOp, scope: Scope) -> Value:
        value = self.eval(node.operand, scope)
        origin = origin_of(value) if is_literal(node) else Origin(
            scope.module.path, node.lineno, None, "computed", named_origin(origin_of(value)))
        if isinstance(node.op, ast.Not):
            t = truth(value)
            return Unknown(self._segment(node, scope), origin) if t is None else Const(not t, origin)
        x = python(value)
        if not isinstance(value, Const) or not isinstance(x, int | float):
            return Unknown(self._segment(node, scope), origin)
        if isinstance(node.op, ast.USub):
            return Const(-x, origin)
        if isinstance(node.op, ast.UAdd):
            return Const(+x, origin)
        if isinstance(x, int):
            return Const(~x, origin)
        return Unknown(self._segment(node, scope), origin)

    def _e_boolop(self, node: ast.BoolOp, scope: Scope) -> Value:
        is_and = isinstance(node.op, ast.And)
        result: Value = Const(None)
        for index, sub in enumerate(node.values):
            result = self.eval(sub, scope)
            if index == len(node.values) - 1:
                return result
            t = truth(result)
            if t is None:
                return Unknown(self._segment(node, scope), node_origin(node, scope))
            if t is not is_and:
                return result
        return result  # pragma: no cover - a BoolOp has at least two values

    def _e_compare(self, node: ast.Compare, scope: Scope) -> Value:
        left = self.eval(node.left, scope)
        decided = True
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.eval(right_node, scope)
            result = self._compare(op, left, right)
            if result is False:
                return Const(False, node_origin(node, scope))
            if result is None:
                decided = False
            left = right
        if not decided:
            return Unknown(self._segment(node, scope), node_origin(node, scope))
        return Const(True, node_origin(node, scope))

    def _compare(self, op: ast.cmpop, a: Value, b: Value) -> bool | None:
        if isinstance(op, ast.Eq):
            return equal(a, b)
        if isinstance(op, ast.NotEq):
            e = equal(a, b)
            return None if e is None else not e
        if isinstance(op, ast.Is | ast.IsNot):
            same = identical(a, b)
            if same is None:
                return None
            return same if isinstance(op, ast.Is) else not same
        if isinstance(op, ast.In | ast.NotIn):
            inside = self._contains(b, a)
            if inside is None:
                return None
            return inside if isinstance(op, ast.In) else not inside
        x, y = python(a), python(b)
        if x is NOT_PLAIN or y is NOT_PLAIN or isinstance(a, Unknown) or isinstance(b, Unknown):
            return None
        try:
            if isinstance(op, ast.Lt):
                return bool(x < y)  # type: ignore[operator]
            if isinstance(op, ast.LtE):
                return bool(x <= y)  # type: ignore[operator]
            if isinstance(op, ast.Gt):
                return bool(x > y)  # type: ignore[operator]
            return bool(x >= y)  # type: ignore[operator]
        except TypeError:
            return None

    def _contains(self, container: Value, item: Value) -> bool | None:
        if isinstance(container, Text):
            hay, needle = container.plain, python(item)
            if hay is None or not isinstance(needle, str):
                return None
            return needle in hay
        if isinstance(container, ListV | TupleV):
            results = [equal(item, v) for v in container.items]
            if True in results:
                return True
            return None if None in results else False
        if isinstance(container, DictV | SetV):
            key = key_of(item)
            if key is None:
                return None
            if key in container.items:
                return True
            return False if not isinstance(container, DictV) or container.complete else None
        if isinstance(container, Builtin) and container.name == "os.environ":
            name = python(item)
            if not isinstance(name, str):
                return None
            got = self._env(name, name, None)
            return None if isinstance(got, Unknown) else isinstance(got, Text)
        return None


def identical(a: Value, b: Value) -> bool | None:
    if isinstance(a, Unknown) or isinstance(b, Unknown):
        return None
    if isinstance(a, Const) and isinstance(b, Const):
        if a.value is None or b.value is None or isinstance(a.value, bool) or isinstance(b.value, bool):
            return a.value is b.value
        return None
    if isinstance(a, Const) or isinstance(b, Const):
        return False
    if isinstance(a, Text) or isinstance(b, Text):
        return None
    return a is b


def arith(op: ast.operator, x: Any, y: Any) -> object:
    """A numeric operation on plain values, refusing what would be too big or slow."""
    if isinstance(x, str) or isinstance(y, str) or x is None or y is None:
        return NOT_PLAIN
    try:
        if isinstance(op, ast.Pow):
            if isinstance(y, int) and isinstance(x, int) and (
                    y < 0 or y * max(abs(x).bit_length(), 1) > MAX_INT_BITS):
                return NOT_PLAIN
            result = x ** y
        elif isinstance(op, ast.LShift):
            if y > MAX_INT_BITS:
                return NOT_PLAIN
            result = x << y
        else:
            result = OPS[type(op)](x, y)
    except (ArithmeticError, TypeError, ValueError, KeyError):
        return NOT_PLAIN
    if isinstance(result, complex):
        return NOT_PLAIN
    if isinstance(result, int) and result.bit_length() > MAX_INT_BITS:
        return NOT_PLAIN
    return result


OPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: lambda x, y: x + y,
    ast.Sub: lambda x, y: x - y,
    ast.Mult: lambda x, y: x * y if not (isinstance(x, int) and isinstance(y, int)) or
    x.bit_length() + y.bit_length() <= MAX_INT_BITS else NOT_PLAIN,
    ast.Div: lambda x, y: x / y,
    ast.FloorDiv: lambda x, y: x // y,
    ast.Mod: lambda x, y: x % y,
    ast.RShift: lambda x, y: x >> y,
    ast.BitAnd: lambda x, y: x & y,
    ast.BitOr: lambda x, y: x | y,
    ast.BitXor: lambda x, y: x ^ y,
}
