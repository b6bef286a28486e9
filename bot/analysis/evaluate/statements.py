"""Statements: what each kind does to the scope it runs in.

An undecidable condition runs both branches, each on its own copy of the variables, and
merges what they leave (see :meth:`StatementsMixin._fork`); a loop over what cannot be
known runs its body once under that condition and forgets what it assigned.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable, Sequence
from typing import Any, cast

import bot.analysis.evaluate as package
from bot.analysis.evaluate.core import (
    Break,
    Budget,
    Continue,
    Core,
    Deferred,
    Many,
    Raise,
    Return,
    Scope,
    Signal,
    Stop,
    iterate,
    scope_set,
    text_of,
)
from bot.analysis.evaluate.library import CLI_DECORATORS, cli_decorate
from bot.analysis.evaluate.literals import is_literal
from bot.analysis.evaluate.nodes import assigned_names, named_literal
from bot.analysis.values import (
    Builtin,
    ClassV,
    Const,
    FieldCall,
    FieldSpec,
    FuncKind,
    FuncV,
    Instance,
    ListV,
    ModuleV,
    Origin,
    TupleV,
    Unknown,
    Value,
    clone,
    equal,
    merge,
    python,
    truth,
)

DECORATOR_KINDS: dict[str, FuncKind] = {
    "property": "property", "staticmethod": "staticmethod", "classmethod": "classmethod",
}


class StatementsMixin(Core):
    """Runs statements (see the table of each kind's method at the end of the module)."""

    def _block(self, body: Sequence[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            self._stmt(stmt, scope)

    def _stmt(self, node: ast.stmt, scope: Scope) -> None:
        self.steps += 1  # self._tick(), inlined
        if self.steps > self.limits.max_steps:
            raise Budget
        handler = _STATEMENTS.get(type(node))
        if handler is not None:
            handler(self, node, scope)

    def _s_expr(self, node: ast.Expr, scope: Scope) -> None:
        if type(node.value) is not ast.Call:
            self.eval(node.value, scope)
            return
        saved = self._discard
        self._discard = node.value  # the call's own result is not used
        try:
            self.eval(node.value, scope)
        finally:
            self._discard = saved

    def _s_assign(self, node: ast.Assign, scope: Scope) -> None:
        # (_literal_display is read from the package, where a test replaces it)
        target = node.targets[0]
        if len(node.targets) == 1 and type(target) is ast.Name and scope.module is self.main and \
                scope.vars is scope.module.globals and not self.guards and \
                package._literal_display(node.value):
            scope_set(scope, target.id, Deferred(node.value, scope))
            return
        value = self.eval(node.value, scope)
        for target in node.targets:
            self._assign(target, value, scope, node.value)

    def _s_annassign(self, node: ast.AnnAssign, scope: Scope) -> None:
        if node.value is None:
            return
        value = self.eval(node.value, scope)
        self._assign(node.target, value, scope, node.value)

    def _s_augassign(self, node: ast.AugAssign, scope: Scope) -> None:
        target = node.target
        current: Value
        if isinstance(target, ast.Name):
            current = self._lookup(target.id, scope, target)
        else:
            current = self.eval(target, scope)
        value = self.eval(node.value, scope)
        if isinstance(current, ListV) and isinstance(node.op, ast.Add):
            self._changed(current)
            items = iterate(value)
            if items is None:
                current.items.append(Many(self._segment(node.value, scope)))
            else:
                current.items.extend(items)
            return
        result = self._binop(node.op, current, value, node, scope)
        self._assign(target, result, scope, None)

    def _assign(self, target: ast.expr, value: Value, scope: Scope, source: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            if source is not None and is_literal(source):
                value = named_literal(target, value, scope.module.path, source.lineno,
                                      target.id, "field" if scope.is_class else "constant")
            scope_set(scope, target.id, value)
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value, scope)
            if isinstance(obj, Instance):
                self._changed(obj)
                obj.fields[target.attr] = value
            elif isinstance(obj, ClassV):
                self._changed(obj)
                obj.attrs[target.attr] = value
        elif isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Slice):
            obj = self.eval(target.value, scope)
            if isinstance(obj, ListV):
                self._changed(obj)
                self._set_slice(obj, target.slice, value, scope)
        elif isinstance(target, ast.Subscript):
            obj = self.eval(target.value, scope)
            index = self.eval(target.slice, scope)
            self._setitem(obj, index, value)
        elif isinstance(target, ast.Tuple | ast.List):
            self._unpack(target.elts, value, scope)
        elif isinstance(target, ast.Starred):
            self._assign(target.value, value, scope, None)

    def _unpack(self, targets: list[ast.expr], value: Value, scope: Scope) -> None:
        items = iterate(value)
        star = [i for i, t in enumerate(targets) if isinstance(t, ast.Starred)]
        if items is None or (not star and len(items) != len(targets)) or \
                (star and len(items) < len(targets) - 1):
            for t in targets:
                self._assign(t, Unknown(text_of(value)), scope, None)
            return
        if star:
            s = star[0]
            after = len(targets) - s - 1
            head, middle = items[:s], items[s:len(items) - after]
            tail = items[len(items) - after:]
            for t, v in zip(targets[:s], head, strict=True):
                self._assign(t, v, scope, None)
            self._assign(targets[s], ListV(list(middle)), scope, None)
            for t, v in zip(targets[s + 1:], tail, strict=True):
                self._assign(t, v, scope, None)
            return
        for t, v in zip(targets, items, strict=True):
            self._assign(t, v, scope, None)

    def _s_delete(self, node: ast.Delete, scope: Scope) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                scope.vars.pop(target.id, None)
            elif isinstance(target, ast.Subscript):
                self._delitem(self.eval(target.value, scope), self.eval(target.slice, scope),
                              self._segment(target, scope))

    def _s_global(self, node: ast.Global | ast.Nonlocal, scope: Scope) -> None:
        if isinstance(node, ast.Global):
            scope.globals_names.update(node.names)
            self.global_statements += 1

    def _s_pass(self, node: ast.stmt, scope: Scope) -> None:
        del node, scope

    def _s_return(self, node: ast.Return, scope: Scope) -> None:
        value = self.eval(node.value, scope) if node.value is not None else Const(None)
        raise Return(value)

    def _s_break(self, node: ast.Break, scope: Scope) -> None:
        raise Break

    def _s_continue(self, node: ast.Continue, scope: Scope) -> None:
        raise Continue

    def _s_raise(self, node: ast.Raise, scope: Scope) -> None:
        if node.exc is not None:
            self.eval(node.exc, scope)
        raise self._raising(node, scope)

    def _s_assert(self, node: ast.Assert, scope: Scope) -> None:
        if truth(self.eval(node.test, scope)) is False:
            raise self._raising(node, scope)

    def _raising(self, node: ast.stmt, scope: Scope) -> Raise:
        return Raise(Stop(self._segment(node, scope), scope.module.path, node.lineno,
                           tuple(self.guards)))

    def _s_import(self, node: ast.Import | ast.ImportFrom, scope: Scope) -> None:
        self._import(node, scope)

    def _s_if(self, node: ast.If, scope: Scope) -> None:
        test = truth(self.eval(node.test, scope))
        if test is True:
            self._block(node.body, scope)
        elif test is False:
            self._block(node.orelse, scope)
        else:
            cond = self._segment(node.test, scope)
            self._fork(scope, [node.body, node.orelse], [cond, f"not ({cond})"], node)

    def _fork(self, scope: Scope, bodies: list[list[ast.stmt]], conds: list[str],
              node: ast.stmt) -> None:
        """Run each body on its own copy of the variables and merge what they leave."""
        live = scope.vars
        self._realize_all(live)  # each branch gets its own copy, made before it starts
        memo: dict[int, Value] = {}
        self._tick(len(live))
        saved = {k: clone(v, memo) for k, v in live.items()}
        environ = self.env_overrides
        outcomes: list[tuple[dict[str, Value], Signal | None, str]] = []
        written: list[dict[str, str | Unknown | None]] = []
        for index, body in enumerate(bodies):
            self.env_overrides = dict(environ)
            if index:
                memo = {}
                live.clear()
                live.update({k: clone(v, memo) for k, v in saved.items()})
            depth = len(self.guards)
            self.guards.append(conds[index])
            signal: Signal | None = None
            try:
                self._block(body, scope)
            except Signal as exc:
                # kept without its traceback: frames holding the signal that holds them
                # would be garbage only the cycle collector frees
                signal = exc.with_traceback(None)
            finally:
                del self.guards[depth:]
            outcomes.append((dict(live), signal, conds[index]))
            written.append(self.env_overrides)
        origin = Origin(scope.module.path, node.lineno, None, "computed")
        normal = [o for o in outcomes if o[1] is None]
        raised = [o for o in outcomes if isinstance(o[1], Raise)]
        other = [o for o in outcomes if o[1] is not None and not isinstance(o[1], Raise)]
        survivors = normal or other or raised
        self.env_overrides = merge_environ(
            [w for w, o in zip(written, outcomes, strict=True) if any(o is s for s in survivors)],
            conds[0])
        state, _, cond = survivors[0]
        for variables, _, _ in survivors[1:]:
            state = merge_vars(state, variables, cond, origin)
        live.clear()
        live.update(state)
        if normal:
            for _, signal, cond in other:
                self._taken(signal, cond, scope)
            return
        if not other:  # every branch raised: as certain as the conditions that led here
            stop = cast(Raise, raised[0][1]).where
            raise Raise(Stop(stop.text, stop.path, stop.line, tuple(self.guards)))
        kinds = {type(o[1]) for o in other}
        first = other[0][1]
        assert first is not None
        if isinstance(first, Return) and kinds == {Return}:
            value = first.value
            for _, signal, _ in other[1:]:
                assert isinstance(signal, Return)
                value = merge(value, signal.value, other[0][2], origin)
            raise Return(value)
        raise first

    def _taken(self, signal: Signal | None, cond: str, scope: Scope) -> None:
        """A branch left early under an undecided condition: what follows is guarded."""
        if isinstance(signal, Return):
            scope.pending.append((signal.value, cond))
        elif isinstance(signal, Break) and self.loops and cond not in self.loops[-1]:
            self.loops[-1].append(cond)  # (each iteration may add it again: once is enough)
        self.guards.append(f"not ({cond})")

    def _s_match(self, node: ast.Match, scope: Scope) -> None:
        subject = self.eval(node.subject, scope)
        undecided: list[ast.match_case] = []
        exhaustive = False
        for case in node.cases:
            hit = self._pattern(case.pattern, subject, scope)
            if hit is False:
                continue
            if hit is True and case.guard is not None:
                g = truth(self.eval(case.guard, scope))
                hit = g
            if hit is True and not undecided:
                self._block(case.body, scope)
                return
            if hit is False:
                continue
            undecided.append(case)
            if hit is True:
                exhaustive = True
                break
        if not undecided:
            return
        text = self._segment(node.subject, scope)
        bodies = [c.body for c in undecided] + ([] if exhaustive else [[]])
        conds = [f"{text} matches case {i + 1}" for i in range(len(undecided))] + \
            ([] if exhaustive else [f"{text} matches no case"])
        self._fork(scope, bodies, conds, node)

    def _pattern(self, pattern: ast.pattern, subject: Value, scope: Scope) -> bool | None:
        if isinstance(pattern, ast.MatchValue):
            return equal(subject, self.eval(pattern.value, scope))
        if isinstance(pattern, ast.MatchSingleton):
            return equal(subject, Const(pattern.value))
        if isinstance(pattern, ast.MatchAs):
            hit = self._pattern(pattern.pattern, subject, scope) if pattern.pattern else True
            if hit is not False and pattern.name:
                scope_set(scope, pattern.name, subject)
            return hit
        if isinstance(pattern, ast.MatchOr):
            results = [self._pattern(p, subject, scope) for p in pattern.patterns]
            if True in results:
                return True
            return False if all(r is False for r in results) else None
        return None

    def _s_for(self, node: ast.For | ast.AsyncFor, scope: Scope) -> None:
        iterable = self.eval(node.iter, scope)
        items = iterate(iterable)
        if items is None:
            text = f"for {self._segment(node.target, scope)} in {self._segment(node.iter, scope)}"
            self._unknown_loop(node, scope, text,
                               lambda: self._assign(node.target, Unknown(text_of(iterable)),
                                                    scope, None))
            return
        self.loops.append([])
        self._changing.append({})
        depth = len(self.guards)
        broke = False
        try:
            for item in items:
                self._tick()
                del self.guards[depth:]
                self.guards.extend(f"not ({c})" for c in self.loops[-1])
                self._assign(node.target, item, scope, None)
                try:
                    self._block(node.body, scope)
                except Continue:
                    continue
                except Break:
                    broke = True
                    break
        finally:
            del self.guards[depth:]
            conditional = self.loops.pop()
            changed = self._changing.pop()
        if conditional:
            self._forget_changes(changed, "the loop may stop early")
            self._havoc(node, scope, "the loop may stop early")
        if not broke:
            self._block(node.orelse, scope)

    def _unknown_loop(self, node: ast.For | ast.AsyncFor | ast.While, scope: Scope, text: str,
                      bind: Callable[[], None] | None) -> None:
        depth = len(self.guards)
        self.guards.append(text)
        self.loops.append([])
        self._changing.append({})
        try:
            if bind is not None:
                bind()
                self._block(node.body, scope)
        except Signal:
            pass
        finally:
            del self.guards[depth:]
            self.loops.pop()
            changed = self._changing.pop()
        self._forget_changes(changed, text)
        self._havoc(node, scope, text)

    def _havoc(self, node: ast.stmt, scope: Scope, text: str) -> None:
        """Forget what a loop that ran an unknown number of times assigned or mutated."""
        origin = Origin(scope.module.path, node.lineno, None, "computed")
        for name in assigned_names(node):
            if name in scope.vars and isinstance(scope.vars[name], FuncV | ClassV | ModuleV):
                continue
            scope_set(scope, name, Unknown(text, origin))

    def _s_while(self, node: ast.While, scope: Scope) -> None:
        self.loops.append([])
        self._changing.append({})
        depth = len(self.guards)
        broke = False
        try:
            while True:
                self._tick()
                test = truth(self.eval(node.test, scope))
                if test is False:
                    break
                if test is None:
                    del self.guards[depth:]
                    self.loops.pop()
                    self.loops.append([])
                    self._unknown_loop(node, scope, f"while {self._segment(node.test, scope)}", None)
                    return
                del self.guards[depth:]
                self.guards.extend(f"not ({c})" for c in self.loops[-1])
                try:
                    self._block(node.body, scope)
                except Continue:
                    continue
                except Break:
                    broke = True
                    break
        finally:
            del self.guards[depth:]
            conditional = self.loops.pop()
            changed = self._changing.pop()
        if conditional:
            self._forget_changes(changed, "the loop may stop early")
            self._havoc(node, scope, "the loop may stop early")
        if not broke:
            self._block(node.orelse, scope)

    def _s_try(self, node: ast.Try, scope: Scope) -> None:
        try:
            self._block(node.body, scope)
        except Raise:
            if node.handlers:
                handler = node.handlers[0]
                if handler.name:
                    scope_set(scope, handler.name, Unknown(handler.name))
                self._block(handler.body, scope)
            else:
                self._block(node.finalbody, scope)
                raise
        else:
            self._block(node.orelse, scope)
        self._block(node.finalbody, scope)

    def _s_with(self, node: ast.With | ast.AsyncWith, scope: Scope) -> None:
        for item in node.items:
            value = self.eval(item.context_expr, scope)
            if item.optional_vars is not None:
                self._assign(item.optional_vars, Unknown(text_of(value)), scope, None)
        self._block(node.body, scope)

    def _s_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
        fn = self._function(node, scope)
        decorated: Value = fn
        for dec_node in reversed(node.decorator_list):
            dec = self.eval(dec_node, scope)
            if isinstance(dec, Builtin) and dec.name in DECORATOR_KINDS:
                fn.kind = DECORATOR_KINDS[dec.name]
            elif isinstance(dec, Builtin) and dec.name == "parametrize":
                assert isinstance(dec.bound, TupleV)
                names_value, rows = dec.bound.items
                names = python(names_value)
                if isinstance(names, str):
                    split = tuple(n.strip() for n in names.split(",") if n.strip())
                elif isinstance(names, list | tuple) and all(isinstance(n, str) for n in names):
                    split = tuple(str(n) for n in names)
                else:
                    split = ()
                if split:
                    fn.parametrize = ((split, rows), *fn.parametrize)
            elif isinstance(dec, Builtin) and dec.name in CLI_DECORATORS:
                decorated = cli_decorate(fn, dec, decorated)
        scope_set(scope, node.name, decorated)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                  scope: Scope) -> FuncV:
        args = node.args
        defaults = tuple(self.eval(d, scope) for d in args.defaults)
        kw_defaults = {
            a.arg: self.eval(d, scope) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
            if d is not None
        }
        closure = scope.parent if scope.is_class and scope.parent is not None else scope
        if scope.is_class and scope.parent is None:
            closure = Scope(scope.module.globals, None, scope.module, persistent=scope.persistent)
        name = node.name if not isinstance(node, ast.Lambda) else "<lambda>"
        return FuncV(name, scope.module.path, node, defaults, kw_defaults, closure)

    def _s_class(self, node: ast.ClassDef, scope: Scope) -> None:
        bases = tuple(self.eval(b, scope) for b in node.bases)
        decorators = [self.eval(d, scope) for d in node.decorator_list]
        is_dataclass = any(isinstance(d, Builtin) and d.name == "dataclasses.dataclass"
                           for d in decorators)
        cls = ClassV(node.name, scope.module.path, {}, bases, is_dataclass,
                     decorators=tuple(node.decorator_list))
        body = Scope(cls.attrs, scope, scope.module, is_class=True, persistent=self._loading > 0)
        with contextlib.suppress(Signal):
            self._block(node.body, body)
        if is_dataclass:
            for stmt in node.body:
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                if "ClassVar" in self._segment(stmt.annotation, scope):
                    continue
                name = stmt.target.id
                value = cls.attrs.get(name) if stmt.value is not None else None
                if isinstance(value, FieldCall):
                    cls.fields.append(FieldSpec(name, value.default, value.factory, value.init))
                    if value.default is not None:
                        cls.attrs[name] = value.default
                    else:
                        cls.attrs.pop(name, None)
                else:
                    cls.fields.append(FieldSpec(name, value, None))
        scope_set(scope, node.name, cls)


def merge_environ(written: list[dict[str, str | Unknown | None]],
                  cond: str) -> dict[str, str | Unknown | None]:
    """The environment after an undecided branch: a variable the branches left differently
    is not known."""
    out = dict(written[0])
    for other in written[1:]:
        for name in dict.fromkeys([*out, *other]):
            a, b = out.get(name, _ABSENT), other.get(name, _ABSENT)
            if a is not b and (isinstance(a, Unknown) or isinstance(b, Unknown) or a != b):
                out[name] = Unknown(f"{name} (set only when {cond})")
    return out


_ABSENT = object()


def merge_vars(a: dict[str, Value], b: dict[str, Value], cond: str,
               origin: Origin) -> dict[str, Value]:
    out: dict[str, Value] = {}
    for name in dict.fromkeys([*a, *b]):
        if name in a and name in b:
            out[name] = merge(a[name], b[name], cond, origin)
        else:
            out[name] = Unknown(f"{name} (set only when {cond})", origin)
    return out


_STATEMENTS: dict[type[ast.stmt], Callable[[StatementsMixin, Any, Scope], None]] = {
    ast.Expr: StatementsMixin._s_expr,
    ast.Assign: StatementsMixin._s_assign,
    ast.AnnAssign: StatementsMixin._s_annassign,
    ast.AugAssign: StatementsMixin._s_augassign,
    ast.Delete: StatementsMixin._s_delete,
    ast.Global: StatementsMixin._s_global,
    ast.Nonlocal: StatementsMixin._s_global,
    ast.Pass: StatementsMixin._s_pass,
    ast.Return: StatementsMixin._s_return,
    ast.Break: StatementsMixin._s_break,
    ast.Continue: StatementsMixin._s_continue,
    ast.Raise: StatementsMixin._s_raise,
    ast.Assert: StatementsMixin._s_assert,
    ast.Import: StatementsMixin._s_import,
    ast.ImportFrom: StatementsMixin._s_import,
    ast.If: StatementsMixin._s_if,
    ast.Match: StatementsMixin._s_match,
    ast.For: StatementsMixin._s_for,
    ast.While: StatementsMixin._s_while,
    ast.Try: StatementsMixin._s_try,
    ast.With: StatementsMixin._s_with,
    ast.FunctionDef: StatementsMixin._s_function,
    ast.AsyncFunctionDef: StatementsMixin._s_function,
    ast.ClassDef: StatementsMixin._s_class,
}
