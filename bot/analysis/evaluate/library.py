"""The modelled builtins and functions of the standard library (their methods are in
:mod:`bot.analysis.evaluate.methods`), and the table that finds each by name."""

from __future__ import annotations

import ast
import math
import posixpath
import re
from collections.abc import Callable
from typing import cast

from bot.analysis.evaluate.core import MAX_INT_BITS, MAX_ITEMS, Scope, counted, iterate
from bot.analysis.evaluate.methods import (
    b_dict_method,
    b_list_method,
    b_match,
    b_set_method,
    b_shlex_join,
    b_str_method,
)
from bot.analysis.evaluate.modelled import METHODS, PATH_FUNCTIONS, BuiltinCall, Host, plain_args
from bot.analysis.evaluate.operators import arith
from bot.analysis.values import (
    NOT_PLAIN,
    Builtin,
    Chunk,
    ClassV,
    CliApp,
    Const,
    DictV,
    FieldCall,
    FuncV,
    Hole,
    Instance,
    Lazy,
    ListV,
    MatchV,
    Origin,
    Part,
    SetV,
    Text,
    TupleV,
    Unknown,
    Value,
    from_python,
    origin_of,
    python,
    truth,
)


def call_builtin(host: Host, func: Builtin, args: list[Value], keywords: dict[str, Value],
                 node: ast.Call, scope: Scope, text: str | None, origin: Origin) -> Value | None:
    """A modelled builtin's result (None: not modelled); ``text`` (the call's source) is
    worked out only when a result needs it."""
    handler = BUILTIN_CALLS.get(func.name)
    if handler is None:
        return None
    call = BuiltinCall(host, func, args, keywords, node, scope, text, origin)
    try:
        return handler(call)
    except (ValueError, TypeError, OverflowError, ZeroDivisionError, IndexError, KeyError,
            AttributeError):
        return Unknown(call.text, origin)


def _b_len(call: BuiltinCall) -> Value:
    (value,) = call.args
    if isinstance(value, Text):
        return Const(len(value.plain), call.computed()) if value.plain is not None else call.unknown()
    if isinstance(value, ListV | TupleV) and not counted(value.items):
        return call.unknown()
    if isinstance(value, ListV | TupleV | SetV):
        return Const(len(value.items), call.computed())
    if isinstance(value, DictV) and value.complete:
        return Const(len(value.items), call.computed())
    return call.unknown()


def _b_str(call: BuiltinCall) -> Value:
    if not call.args:
        return Text.of("")
    (value,) = call.args
    if isinstance(value, Text):
        return value
    if isinstance(value, Const):
        return Text.of(str(value.value), value.origin or call.origin)
    if isinstance(value, Unknown):
        return Text((Hole(value.text, value.origin or call.origin, value.quiet, value.at_most),))
    plain = python(value)
    return call.unknown() if plain is NOT_PLAIN else Text.of(str(plain), call.origin)


def _b_number(call: BuiltinCall) -> Value:
    kind = {"int": int, "float": float, "bool": bool}[call.func.name]
    if not call.args:
        return Const(kind(), call.origin)
    value = call.args[0]
    if kind is bool:
        t = truth(value)
        return call.unknown() if t is None else Const(t, origin_of(value) or call.origin)
    plain = python(value)
    if plain is NOT_PLAIN or len(call.args) > 1 or plain is None:
        return call.unknown()
    if isinstance(plain, str) and len(plain) > 100:
        return call.unknown()
    result = kind(plain)
    origin = origin_of(value) or call.origin
    return Const(result, origin)


def _b_minmax(call: BuiltinCall) -> Value:
    items = call.args
    if len(items) == 1:
        inner = iterate(items[0])
        if inner is None:
            return call.unknown()
        items = inner
    plain = [python(v) for v in items]
    if not plain or any(p is NOT_PLAIN or not isinstance(p, int | float) for p in plain):
        known = [p for p in plain if type(p) is int]
        if call.func.name == "min" and known:  # at most its smallest known number
            return Unknown(call.text, call.origin, at_most=min(known))
        return call.unknown()
    pick = min if call.func.name == "min" else max
    chosen = pick(plain)  # type: ignore[type-var]
    return items[plain.index(chosen)]


def _b_numeric(call: BuiltinCall) -> Value:
    plain = plain_args(call)
    if plain is None:
        return call.unknown()
    name = call.func.name
    if name == "sum":
        inner = iterate(call.args[0])
        values = [python(v) for v in inner] if inner is not None else None
        if values is None or any(not isinstance(v, int | float) for v in values):
            return call.unknown()
        result: object = sum(values)  # type: ignore[arg-type]
    elif name == "abs":
        result = abs(plain[0])  # type: ignore[arg-type]
    elif name == "round":
        result = round(*plain)  # type: ignore[call-overload]
    elif name == "divmod":
        x, y = cast(list[int], plain)
        return from_python(divmod(x, y), call.computed())
    else:
        fn = getattr(math, name.split(".")[1])
        if name in ("math.gcd", "math.lcm") and any(
                not isinstance(p, int) or abs(p).bit_length() > MAX_INT_BITS for p in plain):
            return call.unknown()
        if name == "math.prod":
            inner = iterate(call.args[0])
            values = [python(v) for v in inner] if inner is not None else None
            if values is None or any(not isinstance(v, int | float) for v in values):
                return call.unknown()
            product = arith(ast.Mult(), 1, 1)
            for v in values:
                product = arith(ast.Mult(), product, v)
                if product is NOT_PLAIN:
                    return call.unknown()
            result = product
        else:
            result = fn(*plain)
    return from_python(result, call.computed())


def _b_range(call: BuiltinCall) -> Value:
    plain = plain_args(call)
    if plain is None or not plain or len(plain) > 3 or \
            not all(isinstance(p, int) and not isinstance(p, bool) for p in plain):
        return call.unknown()
    span = range(*cast(list[int], plain))
    if len(span) > MAX_ITEMS:
        return call.unknown()
    origin = call.computed()
    return ListV([Const(i, origin) for i in span])


def _b_container(call: BuiltinCall) -> Value:
    name = call.func.name
    if not call.args:
        return {"list": ListV([]), "tuple": TupleV(()), "set": SetV({}), "dict": DictV({})}[name] \
            if not call.keywords or name != "dict" else _dict_keywords(call)
    items = iterate(call.args[0])
    if items is None:
        return call.unknown()
    if name == "list":
        return ListV(items)
    if name == "tuple":
        return TupleV(tuple(items))
    if name == "set":
        return call.interp._make_set(items, call.node, call.scope)
    if isinstance(call.args[0], DictV):
        out = DictV(dict(call.args[0].items), call.args[0].complete)
    else:
        out = DictV({})
        for item in items:
            pair = iterate(item)
            if pair is None or len(pair) != 2:
                return call.unknown()
            call.interp._setitem(out, pair[0], pair[1])
    for key, value in call.keywords.items():
        out.items[("s", key)] = (Text.of(key), value)
    return out


def _dict_keywords(call: BuiltinCall) -> Value:
    out = DictV({})
    for key, value in call.keywords.items():
        out.items[("s", key)] = (Text.of(key), value)
    return out


def _b_sorted(call: BuiltinCall) -> Value:
    items = iterate(call.args[0])
    if items is None or call.keywords:
        return call.unknown()
    if call.func.name == "reversed":
        return ListV(list(reversed(items)))
    plain = [python(v) for v in items]
    if any(p is NOT_PLAIN for p in plain):
        return call.unknown()
    order = sorted(range(len(items)), key=lambda i: plain[i])  # type: ignore[arg-type,return-value]
    return ListV([items[i] for i in order])


def _b_enumerate(call: BuiltinCall) -> Value:
    items = iterate(call.args[0])
    if items is None:
        return call.unknown()
    start = python(call.args[1]) if len(call.args) > 1 else 0
    if not isinstance(start, int):
        return call.unknown()
    origin = call.computed()
    return ListV([TupleV((Const(i + start, origin), v)) for i, v in enumerate(items)])


def _b_zip(call: BuiltinCall) -> Value:
    columns = [iterate(a) for a in call.args]
    if any(c is None for c in columns):
        return call.unknown()
    rows = zip(*[c for c in columns if c is not None], strict=False)
    return ListV([TupleV(tuple(r)) for r in rows])


def _b_map_filter(call: BuiltinCall) -> Value:
    if len(call.args) != 2:
        return call.unknown()
    fn, iterable = call.args
    items = iterate(iterable)
    if items is None:
        return call.unknown()
    out: list[Value] = []
    for item in items:
        if isinstance(fn, FuncV):
            result = call.interp._invoke(fn, [item], {}, None)
        elif isinstance(fn, Builtin) and fn.name in BUILTIN_CALLS:
            result = call_builtin(call.interp, fn, [item], {}, call.node, call.scope, call._text,
                                  call.origin) or call.unknown()
        elif isinstance(fn, Const) and fn.value is None and call.func.name == "filter":
            result = item
        else:
            return call.unknown()
        if call.func.name == "map":
            out.append(result)
        else:
            t = truth(result)
            if t is None:
                return call.unknown()
            if t:
                out.append(item)
    return ListV(out)


def _b_isinstance(call: BuiltinCall) -> Value:
    value, kinds = call.args
    options = kinds.items if isinstance(kinds, TupleV) else (kinds,)
    result: bool = False
    for option in options:
        if isinstance(option, ClassV):
            if isinstance(value, Instance):
                if option in value.cls.mro():
                    result = True
            elif isinstance(value, Unknown):
                return call.unknown()
        elif isinstance(option, Builtin) and option.name in ("str", "int", "float", "bool",
                                                             "list", "tuple", "dict", "set"):
            if isinstance(value, Unknown | Instance | Lazy):
                return call.unknown()
            plain = python(value)
            py_type = {"str": str, "int": int, "float": float, "bool": bool, "list": list,
                       "tuple": tuple, "dict": dict, "set": set}[option.name]
            if option.name in ("dict", "set"):
                result = result or isinstance(value, DictV if option.name == "dict" else SetV)
            elif plain is not NOT_PLAIN and isinstance(plain, py_type):
                result = True
        else:
            return call.unknown()
    return Const(result, call.origin)


def _b_print(call: BuiltinCall) -> Value:
    return Const(None)


def _b_repr(call: BuiltinCall) -> Value:
    plain = python(call.args[0])
    return call.unknown() if plain is NOT_PLAIN else Text.of(repr(plain), call.origin)


def _b_getattr(call: BuiltinCall) -> Value:
    name = python(call.args[1])
    if not isinstance(name, str):
        return call.unknown()
    found = call.interp._getattr(call.args[0], name, call.text, call.origin)
    if isinstance(found, Unknown) and len(call.args) > 2 and isinstance(call.args[0], Instance):
        return call.args[2] if found.text == call.text else found
    if call.func.name == "hasattr":
        return call.unknown() if isinstance(found, Unknown) else Const(True, call.origin)
    return found


def _b_anyall(call: BuiltinCall) -> Value:
    items = iterate(call.args[0])
    if items is None:
        return call.unknown()
    results = [truth(v) for v in items]
    want = call.func.name == "any"
    if want in results:
        return Const(want, call.origin)
    if None in results:
        return call.unknown()
    return Const(not want, call.origin)


def _b_decorator(call: BuiltinCall) -> Value:
    if call.func.name in ("dataclasses.dataclass",) and not call.args:
        return Builtin("dataclasses.dataclass")
    if call.args and isinstance(call.args[0], FuncV | ClassV):
        return call.args[0]
    return Builtin("identity")


def _b_identity(call: BuiltinCall) -> Value:
    return call.args[0] if call.args else call.unknown()


def _b_field(call: BuiltinCall) -> Value:
    init = call.keywords.get("init")
    return FieldCall(call.keywords.get("default"), call.keywords.get("default_factory"),
                     truth(init) is not False if init is not None else True)


def _b_replace(call: BuiltinCall) -> Value:
    obj = call.args[0]
    if not isinstance(obj, Instance):
        return call.unknown()
    keywords = {**obj.fields, **call.keywords}
    specs = {s.name for s in obj.cls.all_fields() if s.init}
    keywords = {k: v for k, v in keywords.items() if k in specs}
    return call.interp._construct(obj.cls, [], keywords, call.node, call.scope)


def _b_getenv(call: BuiltinCall) -> Value:
    name = python(call.args[0])
    if not isinstance(name, str):
        return call.unknown()
    found = call.interp._env(name, call.text, call.origin)
    if isinstance(found, Const) and found.value is None and len(call.args) > 1:
        return call.args[1]
    if isinstance(found, Const) and found.value is None and "default" in call.keywords:
        return call.keywords["default"]
    return found


def _b_environ(call: BuiltinCall) -> Value:
    method = call.func.name.split(".")[1]
    name = python(call.args[0]) if call.args else None
    if not isinstance(name, str):
        return call.unknown()
    current = call.interp._env(name, call.text, call.origin)
    default: Value = call.args[1] if len(call.args) > 1 else Const(None)
    if method == "setdefault":
        if isinstance(current, Const):
            text = python(default)
            if isinstance(text, str):
                call.interp.env_overrides[name] = text
            return default
        return current
    if method == "pop":
        call.interp.env_overrides[name] = None
    if isinstance(current, Const) and current.value is None:
        return default
    return current


def _b_cli(call: BuiltinCall) -> Value:
    """typer and click: applications, commands, options and their choices."""
    name = call.func.name
    if name == "typer.Typer":
        return CliApp([])
    if name in ("typer.Option", "typer.Argument"):
        default = call.args[0] if call.args else call.keywords.get("default", Unknown("..."))
        return Builtin("cli.default", default)
    if name == "click.Choice":
        return Builtin("cli.choices", call.args[0] if call.args else call.unknown())
    if name in ("click.option", "click.argument"):
        words = [python(a) for a in call.args]
        names = [w for w in words if isinstance(w, str)]
        plain = [w for w in names if not w.startswith("-")]
        longest = max(names, key=len) if names else ""
        param = plain[0] if plain else longest.lstrip("-").replace("-", "_")
        flag = call.keywords.get("is_flag")
        default = call.keywords.get("default", Const(False) if flag is not None and truth(flag)
                                    else Const(None) if name == "click.option"
                                    else Unknown(f"{param} (a required argument)"))
        kind = call.keywords.get("type")
        choices = kind.bound if isinstance(kind, Builtin) and kind.name == "cli.choices" else None
        return Builtin("cli.option", TupleV((Text.of(param), default, choices or Const(None))))
    if name == "cli.app.command":
        assert isinstance(call.func.bound, CliApp)
        return Builtin("cli.register", call.func.bound)
    if name == "cli.app.callback" and truth(call.keywords.get("invoke_without_command", Const(False))):
        return Builtin("cli.register_default", call.func.bound)
    if name == "click.group":
        return Builtin("cli.group")
    if name == "click.command":
        return Builtin("cli.command")
    return Builtin("identity")  # an application's callback: not a command


CLI_DECORATORS = frozenset({"cli.register", "cli.register_default", "cli.command", "cli.group",
                            "cli.option"})


def context_params(fn: FuncV) -> list[str]:
    """The parameters of a command that receive its context (``ctx: typer.Context``)."""
    spec = fn.node.args
    return [a.arg for a in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)
            if (isinstance(a.annotation, ast.Attribute) and a.annotation.attr == "Context") or
            (isinstance(a.annotation, ast.Name) and a.annotation.id == "Context")]


def cli_decorate(fn: FuncV, dec: Builtin, decorated: Value) -> Value:
    """``fn`` (what its decorators made of it so far) under a typer or click decorator."""
    if dec.name == "cli.register":
        assert isinstance(dec.bound, CliApp)
        dec.bound.commands.append(fn)
    elif dec.name == "cli.register_default":
        assert isinstance(dec.bound, CliApp)
        dec.bound.default = fn
    elif dec.name == "cli.command":
        fn.command = True
    elif dec.name == "cli.group":
        return CliApp([])
    else:
        assert isinstance(dec.bound, TupleV)  # cli.option
        param, default, choices = dec.bound.items
        fn.options = ((str(python(param)), default,
                       None if isinstance(choices, Const) else choices), *fn.options)
    return decorated


def _b_namespace(call: BuiltinCall) -> Value:
    """``argparse.Namespace(**kw)``, ``types.SimpleNamespace(**kw)``: an object whose
    attributes are the keywords."""
    if call.args:
        return call.unknown()
    return Instance(NAMESPACE, dict(call.keywords))


NAMESPACE = ClassV("Namespace", "<stdlib>", {}, ())


def _b_re(call: BuiltinCall) -> Value:
    """``re.search``/``match``/``fullmatch`` of a known pattern on a known string."""
    pattern, string = (python(a) for a in call.args[:2]) if len(call.args) >= 2 else (None, None)
    if not isinstance(pattern, str) or not isinstance(string, str) or len(call.args) > 2 or \
            call.keywords or not _safe_pattern(pattern, string):
        return call.unknown()
    try:
        compiled = re.compile(pattern)
    except re.error:
        return call.unknown()
    found = getattr(compiled, call.func.name.split(".")[1])(string)
    if found is None:
        return Const(None, call.origin)
    origin = call.computed()
    groups = tuple(Const(None, origin) if g is None else Text.of(g, origin)
                   for g in (found.group(0), *found.groups()))
    return MatchV(groups, dict(compiled.groupindex))


# a quantified group holding a quantifier (exponential backtracking) is not run
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[*+}](?:[^()\\]|\\.)*\)\s*[*+{]")


def _safe_pattern(pattern: str, string: str) -> bool:
    return len(pattern) <= 200 and len(string) <= 1000 and "(?" not in pattern.replace(
        "(?:", "").replace("(?P<", "") and _NESTED_QUANTIFIER.search(pattern) is None


def _b_path(call: BuiltinCall) -> Value:
    """A path (``pathlib.Path(...)``, ``os.path.*``): the string when it is known and plain
    (``dirname``, ``basename``, ``normpath``), else a path that is not known, which never
    holds command-line flags (a quiet unknown)."""
    name = call.func.name.rsplit(".", 1)[1]
    plain = [python(a) for a in call.args]
    if name in ("dirname", "basename", "normpath") and len(plain) == 1 and \
            isinstance(plain[0], str):
        return Text.of(getattr(posixpath, name)(plain[0]), call.computed())
    return Unknown(call.text, call.origin, quiet=True)


def _b_path_join(call: BuiltinCall) -> Value:
    parts: list[Part] = []
    for index, arg in enumerate(call.args):
        if not isinstance(arg, Text):
            return Unknown(call.text, call.origin, quiet=True)
        if index:
            parts.append(Chunk("/", call.origin))
        parts.extend(arg.parts)
    return Text(tuple(parts))


def _b_parametrize(call: BuiltinCall) -> Value:
    if len(call.args) < 2:
        return call.unknown()
    return Builtin("parametrize", TupleV((call.args[0], call.args[1])))


def _b_cast(call: BuiltinCall) -> Value:
    return call.args[1]


BUILTIN_CALLS: dict[str, Callable[[BuiltinCall], Value]] = {
    "len": _b_len, "str": _b_str, "int": _b_number, "float": _b_number, "bool": _b_number,
    "min": _b_minmax, "max": _b_minmax, "abs": _b_numeric, "sum": _b_numeric,
    "round": _b_numeric, "divmod": _b_numeric, "math.ceil": _b_numeric,
    "math.floor": _b_numeric, "math.gcd": _b_numeric, "math.lcm": _b_numeric,
    "math.prod": _b_numeric, "math.sqrt": _b_numeric, "math.isqrt": _b_numeric,
    "math.log2": _b_numeric, "range": _b_range, "list": _b_container, "tuple": _b_container,
    "set": _b_container, "dict": _b_container, "sorted": _b_sorted, "reversed": _b_sorted,
    "enumerate": _b_enumerate, "zip": _b_zip, "map": _b_map_filter, "filter": _b_map_filter,
    "isinstance": _b_isinstance, "print": _b_print, "repr": _b_repr, "getattr": _b_getattr,
    "hasattr": _b_getattr, "any": _b_anyall, "all": _b_anyall,
    "dataclasses.dataclass": _b_decorator, "functools.cache": _b_decorator,
    "functools.lru_cache": _b_decorator, "functools.wraps": _b_decorator,
    "identity": _b_identity, "dataclasses.field": _b_field, "dataclasses.replace": _b_replace,
    "os.getenv": _b_getenv, "environ.get": _b_environ, "environ.setdefault": _b_environ,
    "environ.pop": _b_environ, "os.path.join": _b_path_join,
    "pytest.mark.parametrize": _b_parametrize, "shlex.join": b_shlex_join,
    "typing.cast": _b_cast, "argparse.Namespace": _b_namespace,
    **{n: _b_cli for n in ("typer.Typer", "typer.Option", "typer.Argument", "click.command",
                           "click.group", "click.option", "click.argument", "click.Choice",
                           "cli.app.command", "cli.app.callback")},
    "types.SimpleNamespace": _b_namespace, "re.search": _b_re, "re.match": _b_re,
    "re.fullmatch": _b_re, "match.group": b_match, "match.groups": b_match,
    "match.groupdict": b_match, "pathlib.Path": _b_path, "pathlib.PurePath": _b_path,
    "pathlib.PosixPath": _b_path, **{f"os.path.{n}": _b_path for n in PATH_FUNCTIONS},
    **{name: b_str_method for name in METHODS if name.startswith("str.")},
    **{name: b_list_method for name in METHODS if name.startswith(("list.", "tuple."))},
    **{name: b_dict_method for name in METHODS if name.startswith("dict.")},
    "set.add": b_set_method,
}
