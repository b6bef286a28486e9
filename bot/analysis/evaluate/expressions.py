"""Expressions: names, attributes, items, literals, f-strings, containers, comprehensions.

Operators are evaluated by :class:`~bot.analysis.evaluate.operators.OperatorsMixin` and calls
by :class:`~bot.analysis.evaluate.calls.CallsMixin`; :meth:`ExpressionsMixin.eval` dispatches
on the node's type through the table at the end of this module. What cannot be decided is
:class:`~bot.analysis.values.Unknown`, carrying the expression's text.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any, cast

from bot.analysis.evaluate.calls import CallsMixin
from bot.analysis.evaluate.core import (
    MAX_ITEMS,
    PENDING,
    PENDING_ORIGIN,
    Budget,
    Deferred,
    Scope,
    bind,
    counted,
    iterate,
    reaches,
    scope_set,
    text_of,
)
from bot.analysis.evaluate.modelled import BUILTINS, METHODS, external
from bot.analysis.evaluate.nodes import chunk, constant, keep_constant, node_origin, pieces
from bot.analysis.evaluate.operators import OperatorsMixin
from bot.analysis.values import (
    NOT_PLAIN,
    Alternatives,
    Builtin,
    Choice,
    Chunk,
    ClassV,
    CliApp,
    Const,
    DictV,
    FuncV,
    Hole,
    Instance,
    Lazy,
    ListV,
    MatchV,
    ModuleV,
    Origin,
    Part,
    SetV,
    Text,
    TupleV,
    Unknown,
    Value,
    alternatives,
    key_of,
    merge,
    origin_of,
    python,
    truth,
)


class ExpressionsMixin(OperatorsMixin, CallsMixin):
    """Evaluates expressions."""

    def eval(self, node: ast.expr, scope: Scope) -> Value:
        self.steps += 1  # self._tick(), inlined
        if self.steps > self.limits.max_steps:
            raise Budget
        if self.edepth >= self.limits.max_expr_depth:
            self._limit_hits += 1
            return Unknown(self._segment(node, scope), node_origin(node, scope))
        handler = _EXPRESSIONS.get(type(node))
        if handler is None:
            return Unknown(self._segment(node, scope), node_origin(node, scope))
        self.edepth += 1
        try:
            return handler(self, node, scope)
        finally:
            self.edepth -= 1

    def _e_constant(self, node: ast.Constant, scope: Scope) -> Value:
        """A constant's value, when none is kept on it yet (see :func:`nodes.constant`)."""
        value = node.value
        origin = node_origin(node, scope)
        if isinstance(value, str):
            if node.end_lineno is not None and node.end_lineno > node.lineno:
                return self._pieces_text(node, scope)
            return keep_constant(node, Text.of(value, origin))
        if value is None or isinstance(value, bool | int | float):
            return keep_constant(node, Const(value, origin))
        return Unknown(self._segment(node, scope), origin)

    def _pieces_text(self, node: ast.Constant | ast.JoinedStr, scope: Scope) -> Value:
        parts: list[Part] = []
        for line, piece in pieces(node, scope.module.module):
            if isinstance(piece, ast.Constant):
                if not isinstance(piece.value, str):
                    return Unknown(self._segment(node, scope), node_origin(node, scope))
                parts.append(Chunk(piece.value, Origin(scope.module.path, line)))
            else:
                assert isinstance(piece, ast.JoinedStr)
                value = self._joined(piece, scope, line)
                if not isinstance(value, Text):
                    return value
                parts.extend(value.parts)
        return Text(tuple(p for p in parts if not (isinstance(p, Chunk) and not p.text)))

    def _e_joined(self, node: ast.JoinedStr, scope: Scope) -> Value:
        if node.end_lineno is not None and node.end_lineno > node.lineno:
            return self._pieces_text(node, scope)
        return self._joined(node, scope, node.lineno)

    def _joined(self, node: ast.JoinedStr, scope: Scope, line: int) -> Value:
        parts: list[Part] = []
        for item in node.values:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                if item.value:
                    parts.append(chunk(item, item.value, scope.module.path, line))
            elif isinstance(item, ast.FormattedValue):
                value = self.eval(item.value, scope)
                spec = ""
                if item.format_spec is not None:
                    spec_value = self.eval(item.format_spec, scope)
                    plain = spec_value.plain if isinstance(spec_value, Text) else None
                    if plain is None:
                        parts.append(Hole(self._segment(item.value, scope),
                                          Origin(scope.module.path, line)))
                        continue
                    spec = plain
                parts.extend(self._format(value, item.conversion, spec, item.value, scope, line))
        return Text(tuple(parts))

    def _format(self, value: Value, conversion: int, spec: str, node: ast.expr, scope: Scope,
                line: int) -> list[Part]:
        origin = origin_of(value) or Origin(scope.module.path, line)
        if isinstance(value, Text) and conversion == -1 and not spec:
            return list(value.parts)
        if type(value) is Alternatives:  # each option as it would be shown
            return [Choice(tuple(tuple(self._format(o, conversion, spec, node, scope, line))
                                 for o in value.options), value.text, value.origin)]
        plain = python(value)
        if plain is NOT_PLAIN or isinstance(value, ListV):
            if isinstance(value, Unknown):
                return [Hole(value.text, value.origin or origin, value.quiet, value.at_most)]
            return [Hole(self._segment(node, scope), origin)]
        try:
            shown: object = plain
            if conversion == ord("r"):
                shown = repr(plain)
            elif conversion == ord("a"):
                shown = ascii(plain)
            elif conversion == ord("s"):
                shown = str(plain)
            text = format(shown, spec)
        except (ValueError, TypeError, OverflowError):
            return [Hole(self._segment(node, scope), origin)]
        return [Chunk(text, origin)]

    def _e_name(self, node: ast.Name, scope: Scope) -> Value:
        return self._lookup(node.id, scope, node)

    def _lookup(self, name: str, scope: Scope, node: ast.AST) -> Value:
        current: Scope | None = scope
        if name in scope.globals_names:
            current = None
        while current is not None:
            if (not current.is_class or current is scope) and name in current.vars:
                value = current.vars[name]
                if type(value) is Deferred:
                    return self._realize(current.vars, name, value)
                if isinstance(value, Lazy):
                    if current.vars is current.module.globals:
                        return self._resolve_global(current.module, name, value)
                    if current.persistent and current.module.owner is not None:
                        self._dirty()  # a loaded module's closure or class changes
                    value = self._resolve(value)
                    current.vars[name] = value
                return value
            current = current.parent
        module_vars = scope.module.globals
        if name in module_vars:
            value = module_vars[name]
            if type(value) is Deferred:
                return self._realize(module_vars, name, value)
            if isinstance(value, Lazy):
                return self._resolve_global(scope.module, name, value)
            return value
        if name in BUILTINS:
            return Builtin(name)
        return Unknown(name, node_origin(node, scope))

    def _realize(self, variables: dict[str, Value], name: str, value: Deferred) -> Value:
        """A deferred literal container, evaluated now (as deep in expressions as where it
        was bound) and kept in its place."""
        edepth, self.edepth = self.edepth, 0
        try:
            found = self.eval(value.node, value.scope)
        finally:
            self.edepth = edepth
        if variables.get(name) is value:
            variables[name] = found
        return found

    def _realize_all(self, variables: dict[str, Value]) -> None:
        for name, value in list(variables.items()):
            if type(value) is Deferred:
                self._realize(variables, name, value)

    def _e_attribute(self, node: ast.Attribute, scope: Scope) -> Value:
        obj = self.eval(node.value, scope)
        if type(obj) is Instance and node.attr in obj.fields:
            return obj.fields[node.attr]
        return self._settle(self._getattr(obj, node.attr, PENDING, PENDING_ORIGIN), node, scope)

    def _settle(self, value: Value, node: ast.AST, scope: Scope) -> Value:
        """``value``, its text and origin worked out if they were left pending (an unknown
        result of :meth:`_getattr` or :meth:`_getitem` made without them)."""
        if type(value) is Unknown and value.text is PENDING:
            origin = value.origin
            if origin is PENDING_ORIGIN:
                origin = node_origin(node, scope)
            return Unknown(self._segment(node, scope), origin, value.quiet)
        return value

    def _getattr(self, obj: Value, attr: str, text: str, origin: Origin | None) -> Value:
        if isinstance(obj, Instance):
            if attr in obj.fields:
                return obj.fields[attr]
            found = obj.cls.lookup(attr)
            if isinstance(found, FuncV):
                if found.kind == "property":
                    return self._invoke(found, [obj], {}, None)
                if found.kind == "staticmethod":
                    return found
                bound = obj if found.kind == "function" else obj.cls
                return bind(found, bound)
            if found is not None:
                return found
            return Unknown(text, origin)
        if isinstance(obj, ClassV):
            found = obj.lookup(attr)
            if isinstance(found, FuncV) and found.kind == "classmethod":
                return bind(found, obj)
            return found if found is not None else Unknown(text, origin)
        if isinstance(obj, ModuleV):
            return self._module_attr(obj, attr, text)
        if isinstance(obj, Builtin):
            if obj.name.startswith("module:"):
                return external(f"{obj.name[7:]}.{attr}")
            if obj.name == "os.environ" and attr in ("get", "setdefault", "pop"):
                return Builtin(f"environ.{attr}")
            return Unknown(text, origin)
        if isinstance(obj, Text | ListV | DictV | SetV | TupleV):
            kind = {Text: "str", ListV: "list", DictV: "dict", SetV: "set", TupleV: "tuple"}[type(obj)]
            if f"{kind}.{attr}" in METHODS or kind in ("list", "dict", "set"):
                # (one not modelled forgets what its object held when called: it may change it)
                return Builtin(f"{kind}.{attr}", obj)
        if type(obj) is Alternatives:  # the attribute of each option, still a choice
            return alternatives([self._getattr(o, attr, text, origin) for o in obj.options],
                                obj.text, obj.origin)
        if isinstance(obj, CliApp) and attr in ("command", "callback"):
            return Builtin(f"cli.app.{attr}", obj)
        if isinstance(obj, MatchV) and attr in ("group", "groups", "groupdict"):
            return Builtin(f"match.{attr}", obj)
        if type(obj) is Unknown and obj.quiet:  # of a path: never command-line words
            return Unknown(text, origin, quiet=True)
        return Unknown(text, origin)

    def _e_subscript(self, node: ast.Subscript, scope: Scope) -> Value:
        obj = self.eval(node.value, scope)
        origin = node_origin(node, scope)
        if isinstance(node.slice, ast.Slice):
            text = self._segment(node, scope)
            lower = self.eval(node.slice.lower, scope) if node.slice.lower else Const(None)
            upper = self.eval(node.slice.upper, scope) if node.slice.upper else Const(None)
            step = self.eval(node.slice.step, scope) if node.slice.step else Const(None)
            bounds = [python(v) for v in (lower, upper, step)]
            if not all(b is None or (isinstance(b, int) and not isinstance(b, bool)) for b in bounds):
                return Unknown(text, origin)
            if bounds[2] == 0:
                return Unknown(text, origin)
            piece = slice(*cast(list[int | None], bounds))
            if isinstance(obj, ListV) and counted(obj.items):
                return ListV(obj.items[piece])
            if isinstance(obj, TupleV):
                return TupleV(obj.items[piece])
            if isinstance(obj, Text) and obj.plain is not None:
                return Text.of(obj.plain[piece], origin_of(obj))
            return Unknown(text, origin)
        index = self.eval(node.slice, scope)
        return self._settle(self._getitem(obj, index, PENDING, origin), node, scope)

    def _getitem(self, obj: Value, index: Value, text: str, origin: Origin | None) -> Value:
        if isinstance(obj, DictV):
            key = key_of(index)
            if key is not None and key in obj.items:
                return obj.items[key][1]
            return Unknown(text, origin)
        if isinstance(obj, Builtin) and obj.name == "os.environ":
            name = python(index)
            if isinstance(name, str):
                got = self._env(name, text, origin)
                return got
            return Unknown(text, origin)
        i = python(index)
        if not isinstance(i, int) or isinstance(i, bool):
            return Unknown(text, origin)
        if isinstance(obj, ListV | TupleV):
            if reaches(obj.items, i):
                return obj.items[i]
            return Unknown(text, origin)
        if isinstance(obj, Text) and obj.plain is not None and -len(obj.plain) <= i < len(obj.plain):
            return Text.of(obj.plain[i], origin_of(obj))
        return Unknown(text, origin)

    def _e_ifexp(self, node: ast.IfExp, scope: Scope) -> Value:
        test = truth(self.eval(node.test, scope))
        if test is True:
            return self.eval(node.body, scope)
        if test is False:
            return self.eval(node.orelse, scope)
        body = self.eval(node.body, scope)
        orelse = self.eval(node.orelse, scope)
        return merge(body, orelse, self._segment(node.test, scope), node_origin(node, scope))

    def _e_list(self, node: ast.List | ast.Tuple | ast.Set, scope: Scope) -> Value:
        items: list[Value] = []
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                inner = iterate(self.eval(elt.value, scope))
                if inner is None:
                    return Unknown(self._segment(node, scope), node_origin(node, scope))
                items.extend(inner)
            else:
                items.append(self.eval(elt, scope))
            if len(items) > MAX_ITEMS:
                return Unknown(self._segment(node, scope), node_origin(node, scope))
        if isinstance(node, ast.Tuple):
            return TupleV(tuple(items))
        if isinstance(node, ast.Set):
            return self._make_set(items, node, scope)
        return ListV(items)

    def _e_dict(self, node: ast.Dict, scope: Scope) -> Value:
        out = DictV({})
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            value = self.eval(value_node, scope)
            if key_node is None:
                if isinstance(value, DictV):
                    out.items.update(value.items)
                    out.complete = out.complete and value.complete
                else:
                    out.complete = False
                continue
            self._setitem(out, self.eval(key_node, scope), value)
        return out

    def _e_comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                         scope: Scope) -> Value:
        inner = Scope({}, scope, scope.module, persistent=self._loading > 0)
        results: list[Value] = []
        pairs: list[tuple[Value, Value]] = []
        if not self._comprehend(node, node.generators, 0, inner, results, pairs):
            return Unknown(self._segment(node, scope), node_origin(node, scope))
        if isinstance(node, ast.DictComp):
            out = DictV({})
            for k, v in pairs:
                self._setitem(out, k, v)
            return out
        if isinstance(node, ast.SetComp):
            return self._make_set(results, node, scope)
        return ListV(results)

    def _comprehend(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                    generators: list[ast.comprehension], index: int, scope: Scope,
                    results: list[Value], pairs: list[tuple[Value, Value]]) -> bool:
        if index == len(generators):
            if isinstance(node, ast.DictComp):
                pairs.append((self.eval(node.key, scope), self.eval(node.value, scope)))
            else:
                results.append(self.eval(node.elt, scope))
            return len(results) + len(pairs) <= MAX_ITEMS
        gen = generators[index]
        items = iterate(self.eval(gen.iter, scope))
        if items is None:
            return False
        for item in items:
            self._tick()
            self._assign(gen.target, item, scope, None)
            keep = True
            for cond in gen.ifs:
                t = truth(self.eval(cond, scope))
                if t is None:
                    return False
                keep = keep and t
            if keep and not self._comprehend(node, generators, index + 1, scope, results, pairs):
                return False
        return True

    def _e_namedexpr(self, node: ast.NamedExpr, scope: Scope) -> Value:
        value = self.eval(node.value, scope)
        scope_set(scope, node.target.id, value)
        return value

    def _e_lambda(self, node: ast.Lambda, scope: Scope) -> Value:
        return self._function(node, scope)

    def _e_yield(self, node: ast.Yield | ast.YieldFrom, scope: Scope) -> Value:
        value = self.eval(node.value, scope) if node.value is not None else Const(None)
        target = scope
        while target.yields is None and target.parent is not None:
            target = target.parent
        if target.yields is not None:
            if isinstance(node, ast.YieldFrom):
                items = iterate(value)
                if items is None:
                    target.yields.append(Unknown(text_of(value)))
                else:
                    target.yields.extend(items)
            else:
                target.yields.append(value)
            if self.guards:
                target.yields.append(Unknown("a value yielded under a condition"))
        return Unknown(self._segment(node, scope), node_origin(node, scope))


_EXPRESSIONS: dict[type[ast.expr], Callable[[ExpressionsMixin, Any, Scope], Value]] = {
    ast.Constant: constant,  # what is kept on the node, else ExpressionsMixin._e_constant
    ast.JoinedStr: ExpressionsMixin._e_joined,
    ast.Name: ExpressionsMixin._e_name,
    ast.Attribute: ExpressionsMixin._e_attribute,
    ast.Subscript: ExpressionsMixin._e_subscript,
    ast.BinOp: OperatorsMixin._e_binop,
    ast.UnaryOp: OperatorsMixin._e_unaryop,
    ast.BoolOp: OperatorsMixin._e_boolop,
    ast.Compare: OperatorsMixin._e_compare,
    ast.IfExp: ExpressionsMixin._e_ifexp,
    ast.List: ExpressionsMixin._e_list,
    ast.Tuple: ExpressionsMixin._e_list,
    ast.Set: ExpressionsMixin._e_list,
    ast.Dict: ExpressionsMixin._e_dict,
    ast.ListComp: ExpressionsMixin._e_comprehension,
    ast.SetComp: ExpressionsMixin._e_comprehension,
    ast.GeneratorExp: ExpressionsMixin._e_comprehension,
    ast.DictComp: ExpressionsMixin._e_comprehension,
    ast.NamedExpr: ExpressionsMixin._e_namedexpr,
    ast.Lambda: ExpressionsMixin._e_lambda,
    ast.Yield: ExpressionsMixin._e_yield,
    ast.YieldFrom: ExpressionsMixin._e_yield,
    ast.Call: CallsMixin._e_call,
}

