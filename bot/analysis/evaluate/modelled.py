"""What is modelled of Python's builtins and standard library, and what a modelled call may
ask of the interpreter running it (:class:`Host`)."""

from __future__ import annotations

import ast
from typing import Protocol

from bot.analysis.evaluate.core import Scope, named_origin
from bot.analysis.values import (
    NOT_PLAIN,
    Builtin,
    ClassV,
    FuncV,
    Origin,
    Part,
    Unknown,
    Value,
    origin_of,
    python,
)

# os.path functions whose result is a path (or a part of one); "join" is modelled apart.
PATH_FUNCTIONS = ("dirname", "basename", "abspath", "realpath", "expanduser", "normpath",
                  "relpath", "expandvars")
# Modelled functions of the standard library, by dotted name.
MODELLED = frozenset({
    "os.getenv", "os.environ", "os.path.join", "dataclasses.field", "dataclasses.replace",
    "argparse.Namespace", "types.SimpleNamespace", "re.search", "re.match", "re.fullmatch",
    "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", *(f"os.path.{n}" for n in PATH_FUNCTIONS),
    "typer.Typer", "typer.Option", "typer.Argument", "click.command", "click.group",
    "click.option", "click.argument", "click.Choice", "typing.Literal", "typing.Annotated",
    "dataclasses.dataclass", "functools.cache", "functools.lru_cache", "functools.wraps",
    "math.ceil", "math.floor", "math.gcd", "math.lcm", "math.prod", "math.sqrt", "math.isqrt",
    "math.log2", "shlex.join", "pytest.mark.parametrize", "typing.cast",
})
MODULES = frozenset({"os", "os.path", "math", "dataclasses", "functools", "shlex", "pytest",
                     "pytest.mark", "typing", "sys", "argparse", "types", "re", "pathlib",
                     "typer", "click"})
BUILTINS = frozenset({
    "len", "str", "int", "float", "bool", "abs", "min", "max", "sum", "round", "range", "list",
    "tuple", "dict", "set", "sorted", "reversed", "enumerate", "zip", "isinstance", "print",
    "repr", "getattr", "hasattr", "any", "all", "divmod", "property", "staticmethod",
    "classmethod", "map", "filter",
})

METHODS = frozenset({
    "str.join", "str.split", "str.strip", "str.lstrip", "str.rstrip", "str.replace",
    "str.format", "str.startswith", "str.endswith", "str.lower", "str.upper", "str.count",
    "str.removeprefix", "str.removesuffix", "list.append", "list.extend", "list.insert",
    "list.copy", "list.pop", "list.index", "tuple.index", "dict.get", "dict.items",
    "dict.keys", "dict.values", "dict.update", "dict.copy", "dict.setdefault", "dict.pop",
    "set.add", "list.remove", "list.clear", "list.sort", "list.reverse", "dict.popitem",
    "dict.clear",
})

# Modelled calls without side effects: given alternatives, each option's result is kept.
PURE = frozenset({
    "len", "str", "int", "float", "bool", "repr", "os.path.join", "shlex.join", "list", "tuple",
    *(name for name in METHODS if name.startswith("str.")),
})


def external(dotted: str) -> Value:
    """What the name ``dotted`` of a module outside the repository is."""
    if dotted in MODELLED:
        return Builtin(dotted)
    if dotted in MODULES:
        return Builtin(f"module:{dotted}")
    return Unknown(dotted)


class Host(Protocol):
    """The interpreter, as far as a modelled call uses it."""

    env_overrides: dict[str, str | Unknown | None]  # the run's os.environ writes

    def _segment(self, node: ast.AST, scope: Scope) -> str:
        """The source text of ``node``."""

    def _env(self, name: str, text: str, origin: Origin | None) -> Value:
        """The environment variable ``name`` as the run sees it."""

    def _changed(self, value: object) -> None:
        """``value`` is about to be changed in place."""

    def _setitem(self, obj: Value, index: Value, value: Value) -> None:
        """``obj[index] = value``."""

    def _make_set(self, items: list[Value], node: ast.AST, scope: Scope) -> Value:
        """A set of ``items``."""

    def _getattr(self, obj: Value, attr: str, text: str, origin: Origin | None) -> Value:
        """``obj.attr``."""

    def _format(self, value: Value, conversion: int, spec: str, node: ast.expr, scope: Scope,
                line: int) -> list[Part]:
        """``value`` as an f-string shows it."""

    def _invoke(self, fn: FuncV, args: list[Value], keywords: dict[str, Value],
                node: ast.Call | None) -> Value:
        """The result of a call of the repository's function ``fn``."""

    def _construct(self, cls: ClassV, args: list[Value], keywords: dict[str, Value],
                   node: ast.Call | None, scope: Scope) -> Value:
        """An instance of the repository's class ``cls``."""


class BuiltinCall:
    """One call of a modelled builtin."""

    __slots__ = ("_text", "args", "func", "interp", "keywords", "node", "origin", "scope")

    def __init__(self, interp: Host, func: Builtin, args: list[Value],
                 keywords: dict[str, Value], node: ast.Call, scope: Scope, text: str | None,
                 origin: Origin) -> None:
        self.interp = interp
        self.func = func
        self.args = args
        self.keywords = keywords
        self.node = node
        self.scope = scope
        self._text = text
        self.origin = origin

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.interp._segment(self.node, self.scope)
        return self._text

    def unknown(self) -> Unknown:
        return Unknown(self.text, self.origin)

    def computed(self) -> Origin:
        named = next((named_origin(origin_of(a)) for a in self.args if named_origin(origin_of(a))), None)
        return Origin(self.origin.path, self.origin.line, None, "computed", named)

    def plain(self, value: Value) -> object:
        return python(value)


def plain_args(call: BuiltinCall) -> list[object] | None:
    out = [python(a) for a in call.args]
    return None if any(o is NOT_PLAIN for o in out) else out
