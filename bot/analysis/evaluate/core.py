"""What every part of the interpreter shares: its records, scopes and module states, the
signals that carry control flow, and :class:`Core`, the state of one interpreter with the few
operations every part uses."""

from __future__ import annotations

import ast
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from bot.analysis.evaluate.nodes import node_origin, source_text
from bot.analysis.source import Module
from bot.analysis.values import (
    Builtin,
    Const,
    DictV,
    FuncV,
    Lazy,
    ListV,
    ModuleV,
    Origin,
    Part,
    SetV,
    Text,
    TupleV,
    Unknown,
    Value,
    key_of,
    merge,
    origin_of,
    python,
)

MAX_TEXT = 200_000
MAX_ITEMS = 20_000
MAX_INT_BITS = 1024
MAX_COMMAND_ROWS = 32  # runs of a command-line entry point with its options' choices


class Pending(StrEnum):
    """The text of an unknown result not worked out yet (see ExpressionsMixin._settle): one
    object, told apart from every text by identity."""

    TEXT = "<pending text>"


PENDING: Final = Pending.TEXT
PENDING_ORIGIN: Final = Origin(PENDING, -1)  # the origin of such a result, told apart alike


@dataclass(frozen=True, slots=True)
class Limits:
    max_steps: int = 100_000
    max_depth: int = 16  # nested calls of repository functions
    max_expr_depth: int = 80


@dataclass(frozen=True, slots=True)
class ExternalCall:
    """A call the evaluator did not follow, with what it was given."""

    name: str  # the callee as written (``U.execute_train``)
    tail: str  # its last name (``execute_train``)
    args: tuple[Value, ...]
    keywords: dict[str, Value]
    path: str
    line: int
    guards: tuple[str, ...]
    module: str  # path of the module whose code made the call
    named_sink: bool  # the callee's name is a configured launch function
    # the os.environ writes made before the call (what a launched process inherits)
    environ: tuple[tuple[str, str | Unknown | None], ...] = ()
    # the called function's file and `def` line, when it is one of the repository's
    definition: tuple[str, int] | None = None
    partial: bool = False  # a `*args` or `**kwargs` whose items are not known


class Signal(Exception):  # noqa: N818 - control flow, not an error
    pass


class Return(Signal):
    def __init__(self, value: Value) -> None:
        self.value = value


class Break(Signal):
    pass


class Continue(Signal):
    pass


class Raise(Signal):
    """An exception raised; ``where`` the statement and the undecided conditions it was
    raised under (none: raised on every path that reached it)."""

    def __init__(self, where: Stop) -> None:
        self.where = where


class Budget(Exception):  # noqa: N818 - control flow, not an error
    pass


class Scope:
    """Variables of a module, class body or function call."""

    __slots__ = ("globals_names", "is_class", "module", "parent", "pending", "persistent", "vars",
                 "yields")

    def __init__(self, variables: dict[str, Value], parent: Scope | None, module: ModuleState,
                 is_class: bool = False, persistent: bool = False) -> None:
        self.vars = variables
        self.parent = parent
        self.module = module
        self.is_class = is_class
        self.globals_names: set[str] = set()
        self.pending: list[tuple[Value, str]] = []  # returns taken under an undecided condition
        self.yields: list[Value] | None = None
        self.persistent = persistent  # made while a module's top level ran: module state


class ModuleState:
    __slots__ = ("_record", "dependent", "deps", "globals", "module", "name", "owner", "path",
                 "resolved", "status")

    def __init__(self, path: str, name: str, module: Module) -> None:
        self.path = path
        self.name = name
        self.module = module
        self.globals: dict[str, Value] = {}
        self.status = "new"
        # Whether what its top level left may depend on more than the repository: the
        # platform, the run that loaded it (its environment overrides, depth, budget).
        self.dependent = False
        # The interpreter whose later runs see these globals, once the top level has run.
        self.owner: Core | None = None
        self.deps: set[str] = set()  # the modules its state was made from
        self.resolved: set[str] = set()  # ``from m import x`` globals looked up after loading
        self._record: tuple[str, frozenset[str], frozenset[str]] | None = None

    def record(self) -> tuple[str, frozenset[str], frozenset[str]]:
        """What a :class:`Footprint` notes of the module (see :meth:`Interpreter.holds`)."""
        if self._record is None:
            self._record = (self.name, frozenset(self.resolved), frozenset(self.deps))
        return self._record


class Deferred(Value):
    """A container of literals bound at the top level of the file being run (a table of
    expected metrics, say), evaluated when first read. Nothing it holds can depend on
    anything, so reading it later gives what reading it at once would have: a file whose
    launch never reads it does not pay for building it (see StatementsMixin._s_assign)."""

    __slots__ = ("node", "scope")

    def __init__(self, node: ast.expr, scope: Scope) -> None:
        self.node = node
        self.scope = scope


@dataclass(frozen=True, slots=True)
class Footprint:
    """The part of an interpreter's module state a run read: per module path, its name, the
    globals it had looked up since loading and the modules its state was made from (None:
    no such module). See :meth:`Interpreter.holds`."""

    modules: Mapping[str, tuple[str, frozenset[str], frozenset[str]] | None]


@dataclass(frozen=True, slots=True)
class Stop:
    """A ``raise`` (or failed ``assert``) that ended a run, and the conditions that cannot
    be decided under which it was reached (none: on every path)."""

    text: str
    path: str
    line: int
    guards: tuple[str, ...]


@dataclass(slots=True)
class RunResult:
    """What one run of a test file left: how far it got, and the modules it read."""

    modules: set[str] = field(default_factory=set)
    exhausted: bool = False
    error: str | None = None
    steps: int = 0
    stopped: Stop | None = None  # the first raise that ended the run or a test function
    # what one test changed that another may read, when the order tests run in may
    # change their launches (see Interpreter.run with cases)
    order: str | None = None


class Many(Unknown):
    """An item of a list that stands for any number of items not known (what an extend by
    an unknown iterable, or a change not followed, left): no index, length or loop over the
    list reaches past it."""

    __slots__ = ()


def reaches(items: Sequence[Value], index: int) -> bool:
    """Whether ``items[index]`` is the item it names in every list ``items`` may stand for."""
    if not -len(items) <= index < len(items):
        return False
    span = items[:index + 1] if index >= 0 else items[index:]
    return not any(isinstance(item, Many) for item in span)


def counted(items: Sequence[Value]) -> bool:
    """Whether the items are all the list holds (none stands for many)."""
    return not any(isinstance(item, Many) for item in items)


def scope_set(scope: Scope, name: str, value: Value) -> None:
    """Bind ``name`` in ``scope`` (in its module's globals when the scope declared it global)."""
    if name in scope.globals_names:
        if scope.module.owner is not None:  # a loaded module's globals changed
            scope.module.owner._dirty()
        scope.module.globals[name] = value
    else:
        scope.vars[name] = value


def bind(fn: FuncV, bound: Value) -> FuncV:
    """``fn`` as a method of ``bound`` (its first argument)."""
    return FuncV(fn.name, fn.path, fn.node, fn.defaults, fn.kw_defaults, fn.closure, fn.kind,
                 bound, fn.parametrize)


def text_of(value: Value) -> str:
    """What an unknown value made from ``value`` says it was."""
    if isinstance(value, Unknown):
        return value.text
    return type(value).__name__


def named_origin(origin: Origin | None) -> Origin | None:
    """The name (a keyword, a field, a constant) a value was set by, if it was."""
    if origin is None:
        return None
    if origin.kind in ("keyword", "field", "constant"):
        return origin
    return origin.via


def iterate(value: Value) -> list[Value] | None:
    """The items a loop over ``value`` goes through (None: not known)."""
    if isinstance(value, ListV | TupleV):
        return list(value.items) if counted(value.items) else None
    if isinstance(value, DictV):
        return [k for k, _ in value.items.values()] if value.complete else None
    if isinstance(value, SetV):
        return list(value.items.values())
    if isinstance(value, Text):
        plain = value.plain
        if plain is None:
            return None
        origin = origin_of(value)
        return [Text.of(c, origin) for c in plain]
    return None


def choose(results: list[Value], cond: str, origin: Origin) -> Value:
    """One value for the results of each option of an undecided choice."""
    out = results[0]
    for other in results[1:]:
        out = merge(out, other, cond, origin)
    return out


class Core:
    """The state of one interpreter (see :class:`~bot.analysis.evaluate.Interpreter`, which
    adds its parts to it) and the operations every part uses."""

    def __init__(
        self,
        load: Callable[[str], Module | None],
        exists: Callable[[str], bool],
        roots: Sequence[str] = (".",),
        env: Mapping[str, str | Unknown | None] | None = None,
        sinks: frozenset[str] = frozenset(),
        quiet: frozenset[str] = frozenset(),
        limits: Limits | None = None,
        platform: frozenset[str] = frozenset(),
        closed: bool = False,
    ) -> None:
        """``env``: environment variables with a known value (None: unset; an Unknown: set,
        to what cannot be known); ``closed``: every other variable is unset (the CI
        environment is known). ``platform``: the variables whose value may differ between
        the platforms' interpreters (see :attr:`dependent`)."""
        self._load = load
        self._exists = exists
        self.roots = tuple(roots)
        self.env = dict(env or {})
        self.closed = closed
        self.sinks = sinks
        self.quiet = quiet
        self.limits = limits or Limits()
        self.on_call: Callable[[ExternalCall], None] | None = None
        self._modules: dict[str, ModuleState | None] = {}
        self._found: dict[tuple[tuple[str, ...], str | None], ModuleV | None] = {}
        self._discard: ast.expr | None = None  # an expression statement's value, not used
        self.main: ModuleState | None = None
        self.platform = platform
        # What another interpreter of the same revision needs to know to tell whether a run
        # here would give the same there (see bot.analysis.launch): the modules loaded,
        # whether their state was changed after loading, a version that moves with both.
        self.dirty = False
        self.version = 0
        self._shared: dict[int, object] = {}  # id -> mutable value reachable from a module
        self._kept: list[ModuleState] = []  # runs' states a loaded module may still refer to
        self._limit_hits = 0
        self._override_reads = 0
        self._loading = 0  # top levels running
        self._touched: set[str] = set()  # modules used since the current top level started
        self._executed: set[ModuleState] = set()  # modules whose functions the run called
        self.footprint: Footprint | None = None
        self._function_results: dict[tuple[str, str, object], Text | None] = {}
        # the values changed in place while the loops being run ran (see _forget_changes)
        self._changing: list[dict[int, object]] = []
        self.global_statements = 0  # `global` statements run (a function may rebind a name)
        self._reset()

    def _reset(self) -> None:
        self.steps = 0
        self.depth = 0
        self.edepth = 0
        self.guards: list[str] = []
        self.loops: list[list[str]] = []
        # os.environ writes of this run, in program order (None: removed; an Unknown: a
        # value that cannot be known, or one only an undecided branch wrote)
        self.env_overrides: dict[str, str | Unknown | None] = {}
        self.result = RunResult()
        # whether this run (or top level) read a platform variable or used a module whose
        # top level did (so another platform could see a different result)
        self.dependent = False
        self._touched = set()
        self._executed = set()

    def _tick(self, amount: int = 1) -> None:
        self.steps += amount
        if self.steps > self.limits.max_steps:
            # a fork charges one step per variable at once; the count reported stops at the
            # first step over the budget, as it does when steps are charged one at a time
            self.steps = self.limits.max_steps + 1
            raise Budget

    _segment = source_text  # the text of a node (kept on the node, see nodes.py)

    def _changed(self, value: object) -> None:
        """``value`` is about to be changed in place."""
        if id(value) in self._shared:
            self._dirty()
        for changed in self._changing:
            changed[id(value)] = value

    def _forget_changes(self, changed: dict[int, object], text: str) -> None:
        """What a loop run an unknown number of times changed in place (``changed``, noted
        while its body ran once) is not known after it."""
        self._escape([v for v in changed.values() if isinstance(v, ListV | DictV)], text)

    def _dirty(self) -> None:
        if not self.dirty:
            self.dirty = True
            self.version += 1

    def _setitem(self, obj: Value, index: Value, value: Value) -> None:
        self._changed(obj)
        if isinstance(obj, DictV):
            key = key_of(index)
            if key is None:  # it may be any of the keys known
                obj.complete = False
                for k, (key_value, _) in obj.items.items():
                    obj.items[k] = (key_value, Unknown("dict after an unknown store"))
            else:
                obj.items[key] = (index, value)
        elif isinstance(obj, ListV):
            i = python(index)
            if isinstance(i, int) and not isinstance(i, bool) and reaches(obj.items, i):
                obj.items[i] = value
            elif not counted(obj.items):
                obj.items[:] = [Many("list after an unknown store")]
            else:
                obj.items[:] = [Unknown("list after an unknown store")] * len(obj.items)
        elif isinstance(obj, Builtin) and obj.name == "os.environ":
            name = python(index)
            if isinstance(name, str):
                text = python(value)
                self.env_overrides[name] = text if isinstance(text, str) else \
                    Unknown(f"os.environ[{name!r}]", origin_of(value))

    def _escape(self, values: Sequence[Value], text: str) -> None:
        """Values handed to a call the evaluator does not follow: the call may change the
        lists and dicts among them (and those they hold), so what they held is forgotten
        (a list holds one unknown item, named by the call; a dict no known key)."""
        seen: set[int] = set()
        todo = list(values)
        while todo:
            value = todo.pop()
            if id(value) in seen or len(seen) > MAX_ITEMS or id(value) in self._shared:
                continue  # (a loaded module's values are taken as its code leaves them)
            seen.add(id(value))
            if isinstance(value, ListV):
                todo.extend(value.items)
                self._changed(value)
                value.items[:] = [Many(text)]
            elif isinstance(value, DictV):
                todo.extend(v for _, v in value.items.values())
                self._changed(value)
                value.items.clear()
                value.complete = False
            elif isinstance(value, TupleV):
                todo.extend(value.items)

    def _delitem(self, obj: Value, index: Value, text: str) -> None:
        """``del obj[index]``: made when known, else what ``obj`` held is forgotten."""
        if isinstance(obj, ListV):
            self._changed(obj)
            i = python(index)
            if type(i) is int and reaches(obj.items, i):
                del obj.items[i]
            else:
                obj.items[:] = [Many(f"del {text}")]
        elif isinstance(obj, DictV):
            self._changed(obj)
            key = key_of(index)
            if key is not None and (key in obj.items or obj.complete):
                obj.items.pop(key, None)
            else:
                obj.items.clear()
                obj.complete = False

    def _set_slice(self, obj: ListV, piece: ast.Slice, value: Value, scope: Scope) -> None:
        """``obj[a:b] = value``: made when the bounds, the list and the items are known, else
        what the list held is forgotten."""
        bounds = [python(self.eval(b, scope)) if b is not None else None
                  for b in (piece.lower, piece.upper, piece.step)]
        items = iterate(value)
        if items is not None and bounds[2] is None and counted(obj.items) and \
                all(b is None or type(b) is int for b in bounds):
            obj.items[bounds[0]:bounds[1]] = items  # type: ignore[index]
        else:
            obj.items[:] = [Many(self._segment(piece, scope) or "a slice")]

    def _make_set(self, items: list[Value], node: ast.AST, scope: Scope) -> Value:
        out: dict[Hashable, Value] = {}
        for item in items:
            key = key_of(item)
            if key is None:
                return Unknown(self._segment(node, scope), node_origin(node, scope))
            out.setdefault(key, item)
        return SetV(out)

    def _env(self, name: str, text: str, origin: Origin | None) -> Value:
        if name in self.platform:
            self.dependent = True
        if name in self.env_overrides:
            self._override_reads += 1
            value = self.env_overrides[name]
        elif name in self.env:
            value = self.env[name]
        elif self.closed:
            value = None  # set by nothing that runs in CI: unset
        else:
            return Unknown(text, origin)
        if isinstance(value, Unknown):
            return Unknown(text, origin)
        return Const(None, origin) if value is None else Text.of(value, origin)

    if TYPE_CHECKING:  # pragma: no cover - what the parts (see Interpreter) call of each other
        # statements
        def _block(self, body: Sequence[ast.stmt], scope: Scope) -> None: ...
        def _assign(self, target: ast.expr, value: Value, scope: Scope,
                    source: ast.expr | None) -> None: ...
        def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                      scope: Scope) -> FuncV: ...
        # expressions
        def eval(self, node: ast.expr, scope: Scope) -> Value: ...
        def _lookup(self, name: str, scope: Scope, node: ast.AST) -> Value: ...
        def _realize_all(self, variables: dict[str, Value]) -> None: ...
        def _getattr(self, obj: Value, attr: str, text: str, origin: Origin | None) -> Value: ...
        def _format(self, value: Value, conversion: int, spec: str, node: ast.expr,
                    scope: Scope, line: int) -> list[Part]: ...
        def _binop(self, op: ast.operator, a: Value, b: Value, node: ast.AST,
                   scope: Scope) -> Value: ...
        # modules
        def _import(self, node: ast.Import | ast.ImportFrom, scope: Scope) -> None: ...
        def _resolve(self, value: Lazy) -> Value: ...
        def _resolve_global(self, state: ModuleState, name: str, value: Lazy) -> Value: ...
        def _module_attr(self, mod: ModuleV, attr: str, text: str) -> Value: ...
