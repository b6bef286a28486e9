"""Values of the partial evaluator: what is known, where it was set, and what is not known.

Every value that can end up on a command line remembers its :class:`Origin` (the file and
line that set it, and the keyword, field or constant name a fix can name). Strings are
:class:`Text`: a sequence of chunks each with its own origin, holes for what could not be
decided, and choices between alternatives when an undecidable condition picked a branch.
"""

from __future__ import annotations

import ast
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

OriginKind = Literal["literal", "keyword", "field", "constant", "computed"]


class Origin(NamedTuple):
    """Where a value was set. ``name`` is what a fix can name (``ep_size``, ``NUM_GPUS``).

    Immutable and compared by value; a named tuple because values are made by the
    thousand and a tuple is made several times faster than a frozen dataclass."""

    path: str
    line: int
    name: str | None = None
    kind: OriginKind = "literal"
    via: Origin | None = None  # a computed value derived from this named origin


class Value:
    """Base of every evaluated value.

    Values never change once made. The small ones made by the ten thousand (constants,
    texts and their chunks, unknowns, tuples) are plain slotted dataclasses rather than
    frozen ones: a frozen dataclass sets each field through ``object.__setattr__`` and
    takes more than twice as long to make; ``unsafe_hash`` gives them the hash a frozen
    one would have.
    """

    __slots__ = ()


@dataclass(slots=True, eq=False)
class Unknown(Value):
    """A value the evaluator cannot decide; ``text`` is the expression's source."""

    text: str
    origin: Origin | None = None
    quiet: bool = False  # a call known not to carry launch flags
    # a number it cannot exceed, when one is known (`min(4, n)` is at most 4)
    at_most: int | None = field(default=None, kw_only=True)


@dataclass(slots=True, eq=False)
class Alternatives(Unknown):
    """One of several values, chosen by a condition that cannot be decided (``text``).

    Everything that does not look inside it treats it as unknown; what does (a command
    line, a join, an f-string, a method call) works on each option and keeps the choice,
    so nothing an undecided branch set is dropped or guessed."""

    options: tuple[Value, ...] = ()


MAX_OPTIONS = 8  # alternatives kept apart; more become a plain unknown


def alternatives(options: list[Value], cond: str, origin: Origin | None) -> Unknown:
    """The value of ``options`` chosen by ``cond``: alternatives while they are few."""
    flat: list[Value] = []
    for option in options:
        if isinstance(option, Alternatives) and option.text == cond:
            flat.extend(option.options)
        elif not any(option is o for o in flat):
            flat.append(option)
    if any(type(o) is Unknown for o in flat) or _leaves(flat) > MAX_OPTIONS:
        return Unknown(cond, origin)
    return Alternatives(cond, origin, False, tuple(flat))


def _leaves(options: list[Value] | tuple[Value, ...]) -> int:
    """How many values a choice (of choices) stands for."""
    return sum(_leaves(o.options) if isinstance(o, Alternatives) else 1 for o in options)


@dataclass(slots=True, unsafe_hash=True)
class Const(Value):
    """``None``, a bool, an int or a float."""

    value: bool | int | float | None
    origin: Origin | None = field(default=None, compare=False)


@dataclass(slots=True, unsafe_hash=True)
class Chunk:
    text: str
    origin: Origin | None = field(default=None, compare=False)


@dataclass(slots=True, unsafe_hash=True)
class Hole:
    """Text that cannot be decided (an unresolved expression inside a string)."""

    text: str
    origin: Origin | None = field(default=None, compare=False)
    quiet: bool = False
    at_most: int | None = None  # the unknown number's bound (see Unknown)


@dataclass(slots=True, unsafe_hash=True)
class Choice:
    """One of several texts, chosen by a condition that cannot be decided."""

    options: tuple[tuple[Part, ...], ...]
    cond: str
    origin: Origin | None = field(default=None, compare=False)


Part = Chunk | Hole | Choice


@dataclass(slots=True, unsafe_hash=True)
class Text(Value):
    """A string: chunks with origins, holes and choices."""

    parts: tuple[Part, ...]
    # its length, counted once: a string built a character at a time by a loop is measured at
    # every step, and counting its parts each time made that loop quadratic
    size: int = field(default=-1, compare=False, hash=False, repr=False)

    @classmethod
    def of(cls, text: str, origin: Origin | None = None) -> Text:
        return cls((Chunk(text, origin),) if text else (), len(text))

    @property
    def plain(self) -> str | None:
        """The string, or None when part of it is not known."""
        out = []
        for part in self.parts:
            if not isinstance(part, Chunk):
                return None
            out.append(part.text)
        return "".join(out)

    def __len__(self) -> int:
        if self.size < 0:
            self.size = sum(len(p.text) for p in self.parts if not isinstance(p, Choice))
        return self.size

    def __add__(self, other: Text) -> Text:
        return Text(self.parts + other.parts, len(self) + len(other))


@dataclass(eq=False, slots=True)
class ListV(Value):
    items: list[Value]


@dataclass(slots=True, unsafe_hash=True)
class TupleV(Value):
    items: tuple[Value, ...]


@dataclass(eq=False, slots=True)
class DictV(Value):
    """A dict whose keys are known; ``complete`` is False once an unknown key was stored."""

    items: dict[Hashable, tuple[Value, Value]]
    complete: bool = True


@dataclass(eq=False, slots=True)
class SetV(Value):
    items: dict[Hashable, Value]


@dataclass(eq=False, slots=True)
class FieldSpec:
    name: str
    default: Value | None
    factory: Value | None
    init: bool = True


@dataclass(eq=False, slots=True)
class ClassV(Value):
    name: str
    path: str
    attrs: dict[str, Value]
    bases: tuple[Value, ...]
    dataclass: bool = False
    fields: list[FieldSpec] = field(default_factory=list)
    decorators: tuple[ast.expr, ...] = ()  # of its ``class`` statement

    def mro(self) -> list[ClassV]:
        out: list[ClassV] = [self]
        for base in self.bases:
            if isinstance(base, ClassV):
                out.extend(c for c in base.mro() if c not in out)
        return out

    def lookup(self, name: str) -> Value | None:
        for cls in self.mro():
            if name in cls.attrs:
                return cls.attrs[name]
        return None

    @property
    def complete(self) -> bool:
        """Whether every base class is known (so the field order is)."""
        return all(isinstance(b, ClassV) and b.complete for b in self.bases)

    def all_fields(self) -> list[FieldSpec]:
        out: dict[str, FieldSpec] = {}
        for cls in reversed(self.mro()):
            if cls.dataclass:
                for spec in cls.fields:
                    out[spec.name] = spec
        return list(out.values())


@dataclass(eq=False, slots=True)
class Instance(Value):
    cls: ClassV
    fields: dict[str, Value]


@dataclass(eq=False, slots=True)
class FieldCall(Value):
    """The result of ``dataclasses.field(...)`` in a class body."""

    default: Value | None
    factory: Value | None
    init: bool = True


FuncKind = Literal["function", "property", "staticmethod", "classmethod"]


@dataclass(eq=False, slots=True)
class FuncV(Value):
    name: str
    path: str
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    defaults: tuple[Value, ...]
    kw_defaults: dict[str, Value]
    closure: object  # the defining scope (evaluate.Scope)
    kind: FuncKind = "function"
    bound: Value | None = None
    parametrize: tuple[tuple[tuple[str, ...], Value], ...] = ()
    # a command-line entry point (click): its options (parameter, default, choices or None)
    command: bool = False
    options: tuple[tuple[str, Value, Value | None], ...] = ()


@dataclass(eq=False, slots=True)
class CliApp(Value):
    """A command-line application (``typer.Typer()``, a ``click`` group): its commands."""

    commands: list[FuncV]
    default: FuncV | None = None  # the callback run when no command is named


@dataclass(eq=False, slots=True)
class ModuleV(Value):
    """A repository module (or package folder), loaded when first used."""

    name: str
    path: str | None  # the file, or None for a folder without ``__init__.py``
    folder: str  # where its submodules live


@dataclass(slots=True, unsafe_hash=True)
class Lazy(Value):
    """``from module import name``: resolved when first used."""

    module: str
    name: str
    text: str


@dataclass(eq=False, slots=True)
class MatchV(Value):
    """A regular expression match of known text: its groups (0 the whole match)."""

    groups: tuple[Value, ...]
    names: dict[str, int]


@dataclass(slots=True, unsafe_hash=True)
class Builtin(Value):
    """A function or module the evaluator models (``len``, ``os.getenv``, ``str.join``)."""

    name: str
    bound: Value | None = None


def with_origin(value: Value, origin: Origin) -> Value:
    """The same value, now said to be set at ``origin`` (a keyword, a field, a constant)."""
    if isinstance(value, Const):
        return Const(value.value, origin)
    if isinstance(value, Unknown):
        return Unknown(value.text, origin if value.origin is None else value.origin, value.quiet)
    return value


def origin_of(value: Value) -> Origin | None:
    if isinstance(value, Const | Unknown):
        return value.origin
    if isinstance(value, Text) and value.parts:
        return value.parts[0].origin
    return None


def key_of(value: Value) -> Hashable | None:
    """A Python key for a known value (dict keys, set members), or None."""
    if isinstance(value, Const):
        return ("c", value.value)
    if isinstance(value, Text):
        plain = value.plain
        return None if plain is None else ("s", plain)
    if isinstance(value, TupleV):
        keys = [key_of(v) for v in value.items]
        return None if any(k is None for k in keys) else ("t", tuple(keys))
    return None


def python(value: Value) -> object:
    """The plain Python value of a known scalar, string or tuple; ``NOT_PLAIN`` otherwise."""
    if isinstance(value, Const):
        return value.value
    if isinstance(value, Text):
        plain = value.plain
        return NOT_PLAIN if plain is None else plain
    if isinstance(value, TupleV | ListV):
        items = [python(v) for v in value.items]
        if any(i is NOT_PLAIN for i in items):
            return NOT_PLAIN
        return tuple(items) if isinstance(value, TupleV) else items
    return NOT_PLAIN


NOT_PLAIN = object()


def from_python(obj: object, origin: Origin | None) -> Value:
    """A value for a plain Python result."""
    if obj is None or isinstance(obj, bool | int | float):
        return Const(obj, origin)
    if isinstance(obj, str):
        return Text.of(obj, origin)
    if isinstance(obj, tuple):
        return TupleV(tuple(from_python(o, origin) for o in obj))
    if isinstance(obj, list):
        return ListV([from_python(o, origin) for o in obj])
    return Unknown(repr(obj)[:80], origin)


def truth(value: Value) -> bool | None:
    """Python truthiness, or None when it cannot be decided."""
    if isinstance(value, Const):
        return bool(value.value)
    if isinstance(value, Text):
        plain = value.plain
        if plain is not None:
            return bool(plain)
        return True if any(isinstance(p, Chunk) and p.text for p in value.parts) else None
    if isinstance(value, ListV | TupleV):
        return bool(value.items)
    if isinstance(value, DictV):
        return True if value.items else (False if value.complete else None)
    if isinstance(value, SetV):
        return bool(value.items)
    if isinstance(value, Instance):
        has_len = value.cls.lookup("__bool__") or value.cls.lookup("__len__")
        return None if has_len else True
    if isinstance(value, Unknown | Lazy):
        return None
    return True


def equal(a: Value, b: Value) -> bool | None:
    """``a == b``, or None when it cannot be decided."""
    if a is b:
        return True
    if isinstance(a, Unknown | Lazy) or isinstance(b, Unknown | Lazy):
        return None
    pa, pb = python(a), python(b)
    if pa is not NOT_PLAIN and pb is not NOT_PLAIN:
        return pa == pb
    if isinstance(a, Const | Text) and isinstance(b, Const | Text):
        # at least one is a text with unknown parts: a string never equals a number or None
        return None if isinstance(a, Text) and isinstance(b, Text) else False
    if isinstance(a, ListV | TupleV) and isinstance(b, ListV | TupleV):
        if type(a) is not type(b) or len(a.items) != len(b.items):
            return False
        return _all_equal(list(zip(a.items, b.items, strict=True)))
    if isinstance(a, Instance) and isinstance(b, Instance) and a.cls is b.cls and a.cls.dataclass:
        if a.fields.keys() != b.fields.keys():
            return None
        return _all_equal([(a.fields[k], b.fields[k]) for k in a.fields])
    if (isinstance(a, Instance) and a.cls.lookup("__eq__")) or \
            (isinstance(b, Instance) and b.cls.lookup("__eq__")):
        return None
    return False


def _all_equal(pairs: list[tuple[Value, Value]]) -> bool | None:
    results = [equal(x, y) for x, y in pairs]
    if False in results:
        return False
    return None if None in results else True


def merge_text(a: Text, b: Text, cond: str, origin: Origin | None) -> Text:
    """One text for two alternatives: their common prefix and suffix, and a choice between."""
    pa, pb = a.parts, b.parts
    start = 0
    while start < len(pa) and start < len(pb) and pa[start] == pb[start]:
        start += 1
    end = 0
    while (end < len(pa) - start and end < len(pb) - start
           and pa[len(pa) - 1 - end] == pb[len(pb) - 1 - end]):
        end += 1
    middle = Choice((pa[start:len(pa) - end], pb[start:len(pb) - end]), cond, origin)
    return Text((*pa[:start], middle, *pa[len(pa) - end:]))


def merge(a: Value, b: Value, cond: str, origin: Origin | None) -> Value:
    """The value of a variable that is ``a`` or ``b`` depending on an undecidable ``cond``."""
    if a is b:
        return a
    if isinstance(a, Text) and isinstance(b, Text):
        if a.parts == b.parts:
            return a
        return merge_text(a, b, cond, origin)
    if isinstance(a, Const) and isinstance(b, Const) and type(a.value) is type(b.value) \
            and a.value == b.value:
        return a
    if isinstance(a, ListV) and isinstance(b, ListV) and len(a.items) == len(b.items):
        return ListV([merge(x, y, cond, origin) for x, y in zip(a.items, b.items, strict=True)])
    if isinstance(a, TupleV) and isinstance(b, TupleV) and len(a.items) == len(b.items):
        return TupleV(tuple(merge(x, y, cond, origin) for x, y in zip(a.items, b.items, strict=True)))
    if isinstance(a, Instance) and isinstance(b, Instance) and a.cls is b.cls:
        names = dict.fromkeys([*a.fields, *b.fields])
        return Instance(a.cls, {
            n: merge(a.fields[n], b.fields[n], cond, origin) if n in a.fields and n in b.fields
            else Unknown(cond, origin)
            for n in names
        })
    if isinstance(a, DictV) and isinstance(b, DictV) and a.items.keys() == b.items.keys():
        return DictV({k: (a.items[k][0], merge(a.items[k][1], b.items[k][1], cond, origin))
                      for k in a.items}, a.complete and b.complete)
    if _carries(a) and _carries(b):
        return alternatives([a, b], cond, origin)
    return Unknown(cond, origin)


def _carries(value: Value) -> bool:
    """Whether a value may hold command-line words (so an undecided choice keeps it)."""
    return isinstance(value, Text | ListV | TupleV | Alternatives) or \
        (isinstance(value, Const) and value.value is None)


def clone(value: Value, memo: dict[int, Value]) -> Value:
    """A copy of the mutable parts of a value (for evaluating two branches apart)."""
    if type(value) is Alternatives:
        return Alternatives(value.text, value.origin, value.quiet,
                            tuple(clone(o, memo) for o in value.options))
    if isinstance(value, ListV | DictV | SetV | Instance | TupleV):
        if id(value) in memo:
            return memo[id(value)]
        if isinstance(value, ListV):
            out_list = ListV([])
            memo[id(value)] = out_list
            out_list.items = [clone(v, memo) for v in value.items]
            return out_list
        if isinstance(value, DictV):
            out_dict = DictV({}, value.complete)
            memo[id(value)] = out_dict
            out_dict.items = {k: (kv, clone(v, memo)) for k, (kv, v) in value.items.items()}
            return out_dict
        if isinstance(value, SetV):
            out_set = SetV(dict(value.items))
            memo[id(value)] = out_set
            return out_set
        if isinstance(value, TupleV):
            out_tuple = TupleV(tuple(clone(v, memo) for v in value.items))
            memo[id(value)] = out_tuple
            return out_tuple
        out = Instance(value.cls, {})
        memo[id(value)] = out
        out.fields = {k: clone(v, memo) for k, v in value.fields.items()}
        return out
    return value
