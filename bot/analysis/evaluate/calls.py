"""Calls: of the repository's functions and classes, of modelled builtins, and of what the
evaluator cannot follow, which are reported (that is where launches are found)."""

from __future__ import annotations

import ast

from bot.analysis.evaluate.core import (
    MAX_COMMAND_ROWS,
    Break,
    Continue,
    Core,
    ExternalCall,
    Raise,
    Return,
    Scope,
    bind,
    choose,
    iterate,
)
from bot.analysis.evaluate.library import NAMESPACE, call_builtin, context_params
from bot.analysis.evaluate.literals import is_literal
from bot.analysis.evaluate.modelled import PURE
from bot.analysis.evaluate.nodes import is_generator, named_literal, node_origin, parameters_of
from bot.analysis.values import (
    Alternatives,
    Builtin,
    Choice,
    Chunk,
    ClassV,
    CliApp,
    Const,
    DictV,
    FuncV,
    Instance,
    ListV,
    Origin,
    SetV,
    Text,
    TupleV,
    Unknown,
    Value,
    merge,
    python,
)


class CallsMixin(Core):
    """Evaluates calls."""

    def _e_call(self, node: ast.Call, scope: Scope) -> Value:
        func = self.eval(node.func, scope)
        args: list[Value] = []
        keywords: dict[str, Value] = {}
        partial = False
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                inner = iterate(self.eval(arg.value, scope))
                if inner is None:
                    partial = True
                else:
                    args.extend(inner)
            else:
                args.append(self.eval(arg, scope))
        for kw in node.keywords:
            value = self.eval(kw.value, scope)
            if kw.arg is None:
                if isinstance(value, DictV) and value.complete:
                    for key_value, item in value.items.values():
                        key = python(key_value)
                        if isinstance(key, str):
                            keywords[key] = item
                else:
                    partial = True
                continue
            if is_literal(kw.value):
                value = named_literal(kw, value, scope.module.path, kw.value.lineno, kw.arg,
                                      "keyword")
            keywords[kw.arg] = value
        tail = node.func.attr if isinstance(node.func, ast.Attribute) else (
            node.func.id if isinstance(node.func, ast.Name) else "")
        if tail in self.quiet:
            self._escape([*args, *keywords.values()], self._segment(node, scope))
            return Unknown(self._call_text(node, scope), node_origin(node, scope), quiet=True)
        if tail in self.sinks and not isinstance(func, ClassV):
            self._external_call(node, scope, tail, args, keywords, True, func, partial)
            self._escape([*args, *keywords.values()], self._segment(node, scope))
            return Unknown(self._call_text(node, scope), node_origin(node, scope))
        if partial:
            return self._opaque(node, scope, tail, args, keywords, func, partial)
        return self._apply(func, args, keywords, node, scope, tail)

    def _call_text(self, node: ast.Call, scope: Scope) -> str:
        """The text of an unknown result of the call ``node`` (none when nothing uses it)."""
        return "" if node is self._discard else self._segment(node, scope)

    def _opaque(self, node: ast.Call, scope: Scope, tail: str, args: list[Value],
                keywords: dict[str, Value], func: Value | None = None,
                partial: bool = False) -> Value:
        self._external_call(node, scope, tail, args, keywords, False, func, partial)
        self._escape([*args, *keywords.values()], self._segment(node, scope))
        return Unknown(self._call_text(node, scope), node_origin(node, scope))

    def _external_call(self, node: ast.Call, scope: Scope, tail: str, args: list[Value],
                       keywords: dict[str, Value], named: bool, func: Value | None = None,
                       partial: bool = False) -> None:
        if self.on_call is None:
            return
        if not named and tail not in _RANK_SPAWNS and \
                not any(has_flag(v) or _names_script(v) for v in [*args, *keywords.values()]):
            return
        self.on_call(ExternalCall(  # what it was given then, not what later changes make of it
            name=self._segment(node.func, scope), tail=tail, args=tuple(_copy(a) for a in args),
            keywords={k: _copy(v) for k, v in keywords.items()}, path=scope.module.path,
            line=node.lineno,
            guards=tuple(self.guards), module=scope.module.path, named_sink=named,
            environ=tuple(self.env_overrides.items()),
            definition=(func.path, func.node.lineno)
            if isinstance(func, FuncV) and not isinstance(func.node, ast.Lambda) else None,
            partial=partial,
        ))

    def _apply(self, func: Value, args: list[Value], keywords: dict[str, Value], node: ast.Call,
               scope: Scope, tail: str) -> Value:
        if isinstance(func, FuncV):
            if isinstance(func.node, ast.AsyncFunctionDef):
                return Unknown(self._call_text(node, scope), node_origin(node, scope))
            if func.command and not args and not keywords:
                return self._run_commands([func], node)
            return self._invoke(func, args, keywords, node)
        if isinstance(func, CliApp):
            if func.default is not None:  # run without a command: the callback does the work
                return self._run_commands([func.default], node)
            return self._run_commands(func.commands, node)
        if isinstance(func, ClassV):
            return self._construct(func, args, keywords, node, scope)
        if isinstance(func, Builtin):
            origin = node_origin(node, scope)
            if func.name in PURE:
                for index, arg in enumerate(args):
                    if type(arg) is Alternatives:  # the call on each option, still a choice
                        return choose([self._apply(func, [*args[:index], o, *args[index + 1:]],
                                                   keywords, node, scope, tail)
                                       for o in arg.options], arg.text, arg.origin or origin)
            result = call_builtin(self, func, args, keywords, node, scope, None, origin)
            if result is not None:
                return result
            if func.name not in PURE:
                bound = [func.bound] if isinstance(func.bound, ListV | DictV | SetV) else []
                self._escape([*bound, *args, *keywords.values()], self._segment(node, scope))
            return Unknown(self._call_text(node, scope), origin)
        if isinstance(func, Instance):
            method = func.cls.lookup("__call__")
            if isinstance(method, FuncV):
                return self._invoke(bind(method, func), args, keywords, node)
        if type(func) is Unknown and func.quiet:  # a method of a path
            return Unknown(self._call_text(node, scope), node_origin(node, scope), quiet=True)
        if type(func) is Alternatives and \
                all(isinstance(o, FuncV | ClassV | Builtin) for o in func.options):
            # a method of a value an undecided branch chose (a list appended to in one):
            # each option's, the results still a choice
            return choose([self._apply(o, args, keywords, node, scope, tail) for o in func.options],
                          func.text, func.origin or node_origin(node, scope))
        return self._opaque(node, scope, tail, args, keywords)

    def _invoke(self, fn: FuncV, args: list[Value], keywords: dict[str, Value],
                node: ast.Call | None) -> Value:
        if self.depth >= self.limits.max_depth:
            self._limit_hits += 1
            return Unknown(f"{fn.name}(...)")
        closure = fn.closure
        assert isinstance(closure, Scope)
        self._executed.add(closure.module)
        scope = Scope({}, closure, closure.module, persistent=self._loading > 0)
        if fn.bound is not None:
            args = [fn.bound, *args]
        self._bind_params(fn, args, keywords, scope)
        if isinstance(fn.node, ast.Lambda):
            self.depth += 1
            try:
                return self.eval(fn.node.body, scope)
            finally:
                self.depth -= 1
        if is_generator(fn.node, closure.module.module):
            scope.yields = []
        self.depth += 1
        depth = len(self.guards)
        loops = self.loops
        self.loops = []
        result: Value = Const(None)
        try:
            self._block(fn.node.body, scope)
        except Return as ret:
            result = ret.value
        except (Break, Continue):
            pass
        except Raise:
            if not scope.pending:
                raise
            # raised only where an undecided condition did not return first: the call
            # goes on with what the returns gave, as a branch that raised is left out
            result = scope.pending.pop()[0]
        finally:
            self.depth -= 1
            del self.guards[depth:]
            self.loops = loops
        if scope.yields is not None:
            return ListV(scope.yields)
        origin = Origin(fn.path, fn.node.lineno, None, "computed")
        for value, cond in reversed(scope.pending):
            result = merge(value, result, cond, origin)
        return result

    def _run_commands(self, commands: list[FuncV], node: ast.Call) -> Value:
        """A command-line entry point run as CI runs it, without arguments: each command
        with every combination of its options' choices (``Literal``, ``click.Choice``)
        and the defaults of the others, as a loop over them would."""
        for fn in commands:
            for row in self._cli_rows(fn):
                self._tick()
                for name in context_params(fn):  # run as CI runs the file: no command named
                    row[name] = Instance(NAMESPACE, {"invoked_subcommand": Const(None)})
                self._invoke(fn, [], row, node)
        return Const(None)

    def _cli_rows(self, fn: FuncV) -> list[dict[str, Value]]:
        params = parameters_of(fn)
        spec = fn.node.args
        annotations = {a.arg: a.annotation for a in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)}
        defaults: dict[str, Value] = dict(zip(params.positional[len(params.positional) - len(fn.defaults):],
                                              fn.defaults, strict=True))
        defaults.update(fn.kw_defaults)
        choices: dict[str, Value | None] = {}
        for name, given, listed in fn.options:
            defaults[name] = given
            choices[name] = listed
        closure = fn.closure
        assert isinstance(closure, Scope)
        rows: list[dict[str, Value]] = [{}]
        for name in params.every:
            default = defaults.get(name)
            if isinstance(default, Builtin) and default.name == "cli.default":
                default = default.bound
            options = choices.get(name) or self._literal(annotations.get(name), closure)
            items = iterate(options) if options is not None else None
            values = items if items else ([default] if default is not None else [])
            if len(rows) * len(values) > MAX_COMMAND_ROWS:
                values = [Unknown(f"{name} (one of {len(values)} choices)")]
            rows = [{**row, name: v} for row in rows for v in values] if values else rows
        return rows

    def _literal(self, annotation: ast.expr | None, scope: Scope) -> Value | None:
        """The choices of a ``Literal[...]`` annotation (in ``Annotated[...]`` too)."""
        if not isinstance(annotation, ast.Subscript):
            return None
        kind = self.eval(annotation.value, scope)
        inner = annotation.slice
        if isinstance(kind, Builtin) and kind.name == "typing.Annotated":
            first = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else None
            return self._literal(first, scope)
        if not (isinstance(kind, Builtin) and kind.name == "typing.Literal"):
            return None
        return TupleV(tuple(self.eval(e, scope) for e in (
            inner.elts if isinstance(inner, ast.Tuple) else [inner])))

    def _bind_params(self, fn: FuncV, args: list[Value], keywords: dict[str, Value],
                     scope: Scope) -> None:
        spec = fn.node.args
        params = parameters_of(fn)
        positional = params.positional
        variables = scope.vars
        for name, value in zip(positional, args, strict=False):
            variables[name] = value
        extra = args[len(positional):]
        if spec.vararg is not None:
            variables[spec.vararg.arg] = TupleV(tuple(extra))
        kwargs: dict[str, Value] = {}
        for name, value in keywords.items():
            if name in params.named:
                variables[name] = value
            else:
                kwargs[name] = value
        if spec.kwarg is not None:
            out = DictV({})
            for name, value in kwargs.items():
                out.items[("s", name)] = (Text.of(name), value)
            variables[spec.kwarg.arg] = out
        defaults: dict[str, Value] | None = None
        for name in params.every:
            if name not in variables:
                if defaults is None:
                    defaults = dict(zip(positional[len(positional) - len(fn.defaults):],
                                        fn.defaults, strict=True))
                if name in defaults:
                    variables[name] = defaults[name]
                elif name in fn.kw_defaults:
                    variables[name] = fn.kw_defaults[name]
                else:
                    variables[name] = Unknown(f"{name} (not passed to {fn.name})")

    def _construct(self, cls: ClassV, args: list[Value], keywords: dict[str, Value],
                   node: ast.Call | None, scope: Scope) -> Value:
        instance = Instance(cls, {})
        init = cls.lookup("__init__")
        if init is None and not cls.complete and not any(c.dataclass for c in cls.mro()):
            # made by a class outside the repository (an Enum looked up by value, say):
            # what it gives is not known
            return Unknown(f"{cls.name}(...)")
        if any(c.dataclass for c in cls.mro()) and not isinstance(init, FuncV):
            specs = [s for s in cls.all_fields() if s.init]
            complete = cls.complete
            for spec, value in zip(specs, args, strict=False):
                if complete:
                    instance.fields[spec.name] = value
            for name, value in keywords.items():
                instance.fields[name] = value
            for spec in cls.all_fields():
                if spec.name in instance.fields:
                    continue
                if args and not complete:
                    instance.fields[spec.name] = Unknown(f"{cls.name}.{spec.name}")
                elif spec.default is not None:
                    instance.fields[spec.name] = spec.default
                elif spec.factory is not None:
                    instance.fields[spec.name] = self._call_value(spec.factory, scope, cls.name)
                else:
                    instance.fields[spec.name] = Unknown(f"{cls.name}.{spec.name} (not given)")
            post = cls.lookup("__post_init__")
            if isinstance(post, FuncV):
                self._invoke(bind(post, instance), [], {}, node)
            return instance
        if isinstance(init, FuncV):
            self._invoke(bind(init, instance), args, keywords, node)
        return instance

    def _call_value(self, factory: Value, scope: Scope, text: str) -> Value:
        if isinstance(factory, FuncV):
            return self._invoke(factory, [], {}, None)
        if isinstance(factory, Builtin) and factory.name in ("list", "dict", "set", "tuple"):
            return {"list": ListV([]), "dict": DictV({}), "set": SetV({}),
                    "tuple": TupleV(())}[factory.name]
        if isinstance(factory, ClassV):
            return self._construct(factory, [], {}, None, scope)
        return Unknown(f"{text} default")


# calls that may start ranks without a flag in their arguments (`mp.spawn(fn, nprocs=4)`):
# reported whatever they are given, as are calls given a shell script to run (`bash x.sh`;
# see bot.analysis.ranks)
_RANK_SPAWNS = frozenset({"spawn", "start_processes"})


def _names_script(value: Value) -> bool:
    if isinstance(value, Text):
        return any(isinstance(p, Chunk) and ".sh" in p.text for p in value.parts)
    if isinstance(value, ListV | TupleV):
        return any(_names_script(v) for v in value.items)
    return False


def _copy(value: Value, depth: int = 0) -> Value:
    """``value`` with the lists and dicts it is made of copied (a later change of them in
    the run does not reach the copy)."""
    if depth > 8:
        return value
    if isinstance(value, ListV):
        return ListV([_copy(v, depth + 1) for v in value.items])
    if isinstance(value, TupleV):
        return TupleV(tuple(_copy(v, depth + 1) for v in value.items))
    if isinstance(value, DictV):
        return DictV({k: (key, _copy(v, depth + 1)) for k, (key, v) in value.items.items()},
                     value.complete)
    return value


def has_flag(value: Value) -> bool:
    if isinstance(value, Text):
        return any((isinstance(p, Chunk) and "--" in p.text) or isinstance(p, Choice)
                   for p in value.parts)
    if isinstance(value, ListV | TupleV):
        return any(has_flag(v) for v in value.items)
    if type(value) is Alternatives:
        return any(has_flag(v) for v in value.options)
    return False
