"""A safe partial evaluator over Python syntax trees.

It runs a test file the way Python would, as far as it can be decided without running
anything: literals, names, arithmetic, comparisons, f-strings, containers, dataclasses,
calls to functions defined in the repository, ``if``/``match``/loops. Nothing is executed,
imported or evaluated by Python itself. What cannot be decided becomes :class:`Unknown`
carrying the expression's source text; an undecidable condition evaluates both branches
and merges what they leave. Calls the evaluator cannot follow are reported to a callback
(that is where launches are found). Step and depth limits bound the work; the evaluator
never raises.

Module top levels run once per interpreter and are shared by its runs. An interpreter
keeps track of what could make a run's result differ elsewhere: reads of the platform's
variables, modules whose top level depended on the run that loaded them, changes to a
loaded module's state. A run that depended on none of it leaves a :class:`Footprint` of
the module state it read, and any interpreter of the revision that :meth:`Interpreter.holds`
it would give the same result. What depends only on a syntax tree node (its text, the
value of a literal) is worked out once and kept on the node.
"""

from __future__ import annotations

import ast
import contextlib
import logging
import math
import posixpath
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from bot.analysis.source import Module
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
    FieldCall,
    FieldSpec,
    FuncKind,
    FuncV,
    Hole,
    Instance,
    Lazy,
    ListV,
    MatchV,
    ModuleV,
    Origin,
    OriginKind,
    Part,
    SetV,
    Text,
    TupleV,
    Unknown,
    Value,
    alternatives,
    clone,
    equal,
    from_python,
    key_of,
    merge,
    origin_of,
    python,
    truth,
    with_origin,
)

log = logging.getLogger(__name__)

MAX_TEXT = 200_000
MAX_ITEMS = 20_000
MAX_INT_BITS = 1024
MAX_COMMAND_ROWS = 32  # runs of a command-line entry point with its options' choices

# The text and origin of an unknown result not worked out yet (see Interpreter._settle):
# made at run time, so no other string is ever this object.
_PENDING = "".join(["<pending", " text>"])
_PENDING_ORIGIN = Origin(_PENDING, -1)
_FAILED = object()  # a call that did not run to its end

# What is worked out once per syntax tree node is kept on the node itself, so it goes away
# with the tree (a key by id() could be reused by a later tree once this one is released).
_SEGMENT = "_rocmbot_segment"
_ASSIGNED = "_rocmbot_assigned"
_GENERATOR = "_rocmbot_generator"
_PIECES = "_rocmbot_pieces"
_ORIGIN = "_rocmbot_origin"
_CONSTANT = "_rocmbot_constant"
_NAMED = "_rocmbot_named"
_CHUNK = "_rocmbot_chunk"
_PARAMS = "_rocmbot_params"
_LINES = "_rocmbot_lines"  # on a module's tree: its lines, when they can be split simply
_YIELDS = "_rocmbot_yields"  # on a module's tree: whether "yield" is anywhere in its text
# line breaks other than \r and \n (str.splitlines() splits there, the parser does not)
_ODD_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_ASCII_ODD_BREAKS = "\x0b\x0c\x1c\x1d\x1e"


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


class _Signal(Exception):  # noqa: N818 - control flow, not an error
    pass


class _Return(_Signal):
    def __init__(self, value: Value) -> None:
        self.value = value


class _Break(_Signal):
    pass


class _Continue(_Signal):
    pass


class _Raise(_Signal):
    """An exception raised; ``where`` the statement and the undecided conditions it was
    raised under (none: raised on every path that reached it)."""

    def __init__(self, where: Stop) -> None:
        self.where = where


class _Budget(Exception):  # noqa: N818 - control flow, not an error
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
        self.owner: Interpreter | None = None
        self.deps: set[str] = set()  # the modules its state was made from
        self.resolved: set[str] = set()  # ``from m import x`` globals looked up after loading
        self._record: tuple[str, frozenset[str], frozenset[str]] | None = None

    def record(self) -> tuple[str, frozenset[str], frozenset[str]]:
        """What a :class:`Footprint` notes of the module (see :meth:`Interpreter.holds`)."""
        if self._record is None:
            self._record = (self.name, frozenset(self.resolved), frozenset(self.deps))
        return self._record


class _Deferred(Value):
    """A container of literals bound at the top level of the file being run (a table of
    expected metrics, say), evaluated when first read. Nothing it holds can depend on
    anything, so reading it later gives what reading it at once would have: a file whose
    launch never reads it does not pay for building it (see Interpreter._s_assign)."""

    __slots__ = ("node", "scope")

    def __init__(self, node: ast.expr, scope: Scope) -> None:
        self.node = node
        self.scope = scope


def _literal_display(node: ast.expr) -> bool:
    """A list, tuple, set or dict display of literals, nested or not."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(_is_literal(e) or _literal_display(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and (_is_literal(k) or _literal_display(k)) for k in node.keys) and \
            all(_is_literal(v) or _literal_display(v) for v in node.values)
    return False


class _Params:
    """A function's parameter names (worked out once per function node)."""

    __slots__ = ("every", "named", "positional")

    def __init__(self, spec: ast.arguments) -> None:
        self.positional = [a.arg for a in (*spec.posonlyargs, *spec.args)]
        keyword_only = [a.arg for a in spec.kwonlyargs]
        self.named = frozenset([*self.positional, *keyword_only])  # may be passed by name
        self.every = [*self.positional, *keyword_only]


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


# os.path functions whose result is a path (or a part of one); "join" is modelled apart.
_PATH_FUNCTIONS = ("dirname", "basename", "abspath", "realpath", "expanduser", "normpath",
                   "relpath", "expandvars")
# Modelled functions of the standard library, by dotted name.
_MODELLED = frozenset({
    "os.getenv", "os.environ", "os.path.join", "dataclasses.field", "dataclasses.replace",
    "argparse.Namespace", "types.SimpleNamespace", "re.search", "re.match", "re.fullmatch",
    "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", *(f"os.path.{n}" for n in _PATH_FUNCTIONS),
    "typer.Typer", "typer.Option", "typer.Argument", "click.command", "click.group",
    "click.option", "click.argument", "click.Choice", "typing.Literal", "typing.Annotated",
    "dataclasses.dataclass", "functools.cache", "functools.lru_cache", "functools.wraps",
    "math.ceil", "math.floor", "math.gcd", "math.lcm", "math.prod", "math.sqrt", "math.isqrt",
    "math.log2", "shlex.join", "pytest.mark.parametrize", "typing.cast",
})
_MODULES = frozenset({"os", "os.path", "math", "dataclasses", "functools", "shlex", "pytest",
                      "pytest.mark", "typing", "sys", "argparse", "types", "re", "pathlib",
                      "typer", "click"})
_BUILTINS = frozenset({
    "len", "str", "int", "float", "bool", "abs", "min", "max", "sum", "round", "range", "list",
    "tuple", "dict", "set", "sorted", "reversed", "enumerate", "zip", "isinstance", "print",
    "repr", "getattr", "hasattr", "any", "all", "divmod", "property", "staticmethod",
    "classmethod", "map", "filter",
})
_DECORATOR_KINDS: dict[str, FuncKind] = {
    "property": "property", "staticmethod": "staticmethod", "classmethod": "classmethod",
}


def _odd_breaks(text: str) -> bool:
    """Whether ``str.splitlines`` would break ``text`` where Python does not."""
    if text.isascii():  # a few searches for single characters beat the regular expression
        return any(c in text for c in _ASCII_ODD_BREAKS)
    return _ODD_BREAKS.search(text) is not None


def _line_segment(node: ast.AST, module: Module) -> str | None:
    """``module.segment(node)[:200]`` for a node on one ASCII line, without splitting the
    whole file into lines of bytes (None: ask the module)."""
    line = getattr(node, "lineno", None)
    if line is None or getattr(node, "end_lineno", None) != line:
        return None
    col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    if col is None or end_col is None:
        return None
    tree = module.tree.__dict__
    lines = tree.get(_LINES)
    if lines is None:
        lines = [] if _odd_breaks(module.text) else module.text.splitlines(keepends=True)
        tree[_LINES] = lines
    if not 0 < line <= len(lines):
        return None
    text = cast(list[str], lines)[line - 1]
    if not text.isascii():  # columns count bytes
        return None
    return " ".join(text[col:end_col].split())[:200]


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd) and \
        isinstance(node.operand, ast.Constant)


def _named(origin: Origin | None) -> Origin | None:
    if origin is None:
        return None
    if origin.kind in ("keyword", "field", "constant"):
        return origin
    return origin.via


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


def _shift(tree: ast.AST, line: int, col: int) -> None:
    """Move a re-parsed piece to where it sits in the file (line 1-based, col in bytes)."""
    for node in ast.walk(tree):
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            continue
        end = getattr(node, "end_lineno", None)
        if lineno == 1:
            setattr(node, "col_offset", getattr(node, "col_offset", 0) + col)  # noqa: B010
            end_col = getattr(node, "end_col_offset", None)
            if end == 1 and end_col is not None:
                setattr(node, "end_col_offset", end_col + col)  # noqa: B010
        setattr(node, "lineno", lineno + line - 1)  # noqa: B010
        if end is not None:
            setattr(node, "end_lineno", end + line - 1)  # noqa: B010


class Interpreter:
    """Evaluates modules of one repository revision for one platform.

    Module top levels are evaluated once and shared by every run; a run is one test file
    executed as ``__main__`` (see :meth:`run`).
    """

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
        self._limit_hits = 0
        self._override_reads = 0
        self._loading = 0  # top levels running
        self._touched: set[str] = set()  # modules used since the current top level started
        self._executed: set[ModuleState] = set()  # modules whose functions the run called
        self.footprint: Footprint | None = None
        self._function_results: dict[tuple[str, str, object], Text | None] = {}
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

    # ----- entry points -------------------------------------------------------------------

    def run(self, path: str, on_call: Callable[[ExternalCall], None] | None = None,
            tests: bool = True) -> RunResult:
        """Execute ``path`` as ``__main__``; then, when it made no external call, its
        ``test_*`` functions (pytest style, with ``parametrize`` rows). Never raises."""
        self._reset()
        calls: list[ExternalCall] = []

        def record(call: ExternalCall) -> None:
            calls.append(call)
            if on_call is not None:
                on_call(call)

        self.on_call = record
        self.footprint = None
        module = self._module_file(path)
        version, hits = self.version, self._limit_hits
        try:
            if module is not None:
                state = ModuleState(path, "__main__", module)
                self.main = state
                self._exec_module(state)
                if tests and not calls:
                    self._call_tests(state)
        except _Budget:
            self.result.exhausted = True
        except RecursionError:
            self.result.exhausted = True
        except Exception as exc:  # a bug here must not stop the analysis
            log.warning("evaluator error in %s: %r", path, exc, exc_info=True)
            self.result.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.on_call = None
        self.result.steps = self.steps
        if not (self.result.exhausted or self.result.error or self.dependent or self.dirty) \
                and version == self.version and hits == self._limit_hits:
            self.footprint = self._footprint()
        self._executed = set()
        return self.result

    def _footprint(self) -> Footprint | None:
        """What of the modules' state the run just ended read: every module it used, whose
        function it called, or that went into making one of those."""
        out: dict[str, tuple[str, frozenset[str], frozenset[str]] | None] = {}
        todo = [*self.result.modules,
                *(m.path for m in self._executed if m is not self.main)]
        while todo:
            path = todo.pop()
            if path in out:
                continue
            state = self._modules.get(path)
            if state is None:
                out[path] = None  # no such module (nothing else is ever recorded as None)
                continue
            if state.status != "done" or state.dependent:
                return None
            out[path] = state.record()
            todo.extend(state.deps)
        return Footprint(out)

    def holds(self, footprint: Footprint) -> bool:
        """Whether this interpreter's modules are, as far as ``footprint`` goes, in the state
        it records: then a run that left it (in an interpreter of the same revision, maybe
        another platform) gives the same result here, step for step."""
        if self.dirty:
            return False
        for path, record in footprint.modules.items():
            state = self._modules.get(path)
            if state is None:
                if record is not None:
                    return False
                continue
            if record is None or state.status != "done" or state.dependent or \
                    record != state.record():
                return False
        return True

    def release_run(self) -> None:
        """Say the values of the last run are no longer needed (``module_globals("__main__")``
        is then empty). Its file's functions and their scopes refer to each other; unless a
        loaded module may refer to them (:attr:`dirty`), the cycle is broken here, so they
        and the file's syntax tree go as soon as nothing else holds them."""
        state, self.main = self.main, None
        if state is not None and not self.dirty:
            state.globals.clear()

    def module_globals(self, path: str) -> dict[str, Value]:
        """The variables of a module evaluated so far (``"__main__"``: the last test run)."""
        if path == "__main__" or (self.main is not None and path == self.main.path):
            if self.main is None:
                return {}
            try:
                self._realize_all(self.main.globals)
            except (_Budget, RecursionError):  # past the run's limit: what is left is unknown
                for name, value in list(self.main.globals.items()):
                    if type(value) is _Deferred:
                        self.main.globals[name] = Unknown(name)
            return self.main.globals
        state = self._modules.get(path)
        return state.globals if state is not None else {}

    def call_function(self, path: str, name: str,
                      environ: tuple[tuple[str, str | Unknown | None], ...] = ()) -> Text | None:
        """The text returned by ``name()`` of the module at ``path`` (a model script's flags),
        or None when there is no such function or its result is not text.

        The result depends only on the state of the modules it reads, which no longer
        changes once they are loaded unless something changes it in place
        (:attr:`dirty`): while nothing did, a call that ran to its end is not run again.
        ``environ``: the environment writes of the process that calls it."""
        self._reset()
        self.env_overrides = dict(environ)
        key = (path, name, environ)
        if not self.dirty and key in self._function_results:
            return self._function_results[key]
        hits = self._limit_hits
        result = self._call_function(path, name)
        if result is not _FAILED and not self.dirty and hits == self._limit_hits:
            self._function_results[key] = cast(Text | None, result)
        return None if result is _FAILED else cast(Text | None, result)

    def _call_function(self, path: str, name: str) -> object:  # Text, None or _FAILED
        try:
            state = self._state(path, path)
            fn = state.globals.get(name) if state is not None else None
            if not isinstance(fn, FuncV):
                return None
            value = self._invoke(fn, [], {}, None)
        except (_Budget, _Signal, RecursionError):
            return _FAILED
        except Exception as exc:  # a bug here must not stop the analysis
            log.warning("evaluator error in %s: %r", path, exc, exc_info=True)
            return _FAILED
        if isinstance(value, Text):
            return value
        items = self._iterate(value) if isinstance(value, ListV | TupleV) else None
        if items is None or not all(isinstance(i, Text) for i in items):
            return None
        out = Text(())
        for item in items:
            assert isinstance(item, Text)
            out = out + item + Text.of(" ")
        return out

    def _call_tests(self, state: ModuleState) -> None:
        tests = [v for n, v in state.globals.items() if n.startswith("test") and isinstance(v, FuncV)]
        if tests:  # run as pytest runs them: how the file's own main ended does not count
            self.result.stopped = None
        for value in tests:
            for row in self._parametrize_rows(value):
                try:
                    self._invoke(value, [], row, None)
                except _Raise as exc:  # (a function call lets no other signal out)
                    self._stopped(state, exc)

    def _parametrize_rows(self, fn: FuncV) -> list[dict[str, Value]]:
        rows: list[dict[str, Value]] = [{}]
        for names, values in fn.parametrize:
            items = values.items if isinstance(values, ListV | TupleV) else None
            if items is None:
                return [{n: Unknown(f"{n} (parametrized)") for n in names}]
            new_rows: list[dict[str, Value]] = []
            for row in rows:
                for item in items[:64]:
                    if len(names) == 1:
                        new_rows.append({**row, names[0]: item})
                    elif isinstance(item, ListV | TupleV) and len(item.items) == len(names):
                        new_rows.append({**row, **dict(zip(names, item.items, strict=True))})
                    else:
                        new_rows.append({**row, **{n: Unknown(n) for n in names}})
            rows = new_rows
        return rows

    # ----- modules ------------------------------------------------------------------------

    def _module_file(self, path: str) -> Module | None:
        try:
            return self._load(path)
        except Exception:  # a reader failure is an unreadable file, not a crash
            log.warning("cannot read %s", path, exc_info=True)
            return None

    def _state(self, path: str, name: str) -> ModuleState | None:
        """The module at ``path``, its top level evaluated (once per interpreter)."""
        self.result.modules.add(path)
        self._touched.add(path)
        if path not in self._modules:
            module = self._module_file(path)
            self._modules[path] = None if module is None else ModuleState(path, name, module)
        state = self._modules[path]
        if state is not None:
            if state.status == "new":
                self._load_module(state)
            elif state.dependent or state.status == "loading":  # a partial module, too
                self.dependent = True
        return state

    def _load_module(self, state: ModuleState) -> None:
        saved = (self.guards, self.loops, self.depth, self.dependent, self._touched)
        marks = (self._limit_hits, self._override_reads)
        self.guards, self.loops = [], []
        self.dependent = False
        self._touched = set()
        self._loading += 1
        completed = False
        try:
            self._exec_module(state)
            completed = True
        finally:
            self._loading -= 1
            self.guards, self.loops = saved[0], saved[1]
            self.depth = saved[2]
            dependent = self.dependent or not completed or \
                marks != (self._limit_hits, self._override_reads)
            state.dependent = dependent
            state.deps = self._touched
            state._record = None
            self.dependent = saved[3] or dependent
            self._touched = saved[4]
            self._touched |= state.deps
            self.version += 1
            self._share(state)

    def _share(self, state: ModuleState) -> None:
        """Note every mutable value a module's globals reach: a later change to one is a
        change of module state (see :meth:`_changed`)."""
        state.owner = self
        shared = self._shared
        seen: set[int] = set()
        stack: list[object] = list(state.globals.values())
        while stack:
            value = stack.pop()
            if isinstance(value, ListV | DictV | SetV | Instance | ClassV):
                if id(value) in shared:
                    continue
                shared[id(value)] = value
                if isinstance(value, ListV):
                    stack.extend(value.items)
                elif isinstance(value, DictV):
                    for pair in value.items.values():
                        stack.extend(pair)
                elif isinstance(value, SetV):
                    stack.extend(value.items.values())
                elif isinstance(value, Instance):
                    stack.append(value.cls)
                    stack.extend(value.fields.values())
                else:
                    stack.extend(value.attrs.values())
                    stack.extend(value.bases)
                    for spec in value.fields:
                        stack.extend((spec.default, spec.factory))
            elif isinstance(value, TupleV | FuncV | Scope | Builtin | FieldCall | Alternatives):
                if id(value) in seen:  # each once: shared tuples could make the walk exponential
                    continue
                seen.add(id(value))
                if isinstance(value, TupleV):
                    stack.extend(value.items)
                elif isinstance(value, Alternatives):
                    stack.extend(value.options)
                elif isinstance(value, Builtin | FieldCall):
                    stack.extend((value.bound,) if isinstance(value, Builtin) else
                                 (value.default, value.factory))
                elif isinstance(value, Scope):
                    if value.parent is not None:  # a module's own globals are walked at its load
                        stack.extend(value.vars.values())
                        stack.append(value.parent)
                else:
                    stack.extend(value.defaults)
                    stack.extend(value.kw_defaults.values())
                    stack.extend((value.bound, value.closure))
                    stack.extend(rows for _, rows in value.parametrize)

    def _changed(self, value: object) -> None:
        """``value`` is about to be changed in place."""
        if id(value) in self._shared:
            self._dirty()

    def _dirty(self) -> None:
        if not self.dirty:
            self.dirty = True
            self.version += 1

    def _exec_module(self, state: ModuleState) -> None:
        state.status = "loading"
        state.globals.update({
            "__name__": Text.of(state.name), "__file__": Text.of(state.path),
        })
        scope = Scope(state.globals, None, state, persistent=self._loading > 0)
        try:
            self._block(state.module.tree.body, scope)
        except _Raise as exc:
            self._stopped(state, exc)
        except _Signal:
            pass
        finally:
            state.status = "done"

    def _stopped(self, state: ModuleState, exc: _Raise) -> None:
        """The file being run (or one of its test functions) ended at a raise: what
        follows it, launches too, was never seen."""
        if state is self.main and self.result.stopped is None:
            self.result.stopped = exc.where

    def _with_root(self, root: str, path: str) -> str:
        return path if root == "." else f"{root}/{path}"

    def _find(self, parts: Sequence[str], base: str | None) -> ModuleV | None:
        """The repository module of dotted ``parts`` (relative to folder ``base`` if given)."""
        key = (tuple(parts), base)
        if key not in self._found:
            self._found[key] = self._find_module(parts, base)
        found = self._found[key]
        # a new value each time, as `is` tells values apart
        return None if found is None else ModuleV(found.name, found.path, found.folder)

    def _find_module(self, parts: Sequence[str], base: str | None) -> ModuleV | None:
        roots = [base] if base is not None else [self._with_root(r, "") .rstrip("/") for r in self.roots]
        for root in roots:
            folder = "/".join(p for p in [root if root not in (".", "") else "", *parts] if p)
            for candidate in (f"{folder}.py", f"{folder}/__init__.py"):
                if self._exists(candidate):
                    return ModuleV(".".join(parts), candidate, folder)
        return None

    def _package(self, path: str, level: int) -> str | None:
        parts = posixpath.dirname(path).split("/") if "/" in path else []
        up = level - 1
        if up > len(parts):
            return None
        return "/".join(parts[: len(parts) - up]) if up else "/".join(parts)

    def _import(self, node: ast.Import | ast.ImportFrom, scope: Scope) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if alias.asname:
                    found = self._find(parts, None)
                    value: Value = found if found else self._external(alias.name)
                    scope_set(scope, alias.asname, value)
                else:
                    top = self._find(parts[:1], None) or self._folder(parts[0])
                    scope_set(scope, parts[0], top if top else self._external(parts[0]))
            return
        if node.level:
            package = self._package(scope.module.path, node.level)
            if package is None:
                for alias in node.names:
                    scope_set(scope, alias.asname or alias.name, Unknown(alias.name))
                return
            parts = node.module.split(".") if node.module else []
            base_module = self._find(parts, package) if parts else self._folder_at(package)
            folder: str | None = "/".join(p for p in [package, *parts] if p)
        else:
            parts = (node.module or "").split(".")
            base_module = self._find(parts, None)
            folder = base_module.folder if base_module else None
            if base_module is None:
                for root in self.roots:
                    guess = "/".join(p for p in [root if root != "." else "", *parts] if p)
                    if any(self._exists(f"{guess}/{a.name}.py") or
                           self._exists(f"{guess}/{a.name}/__init__.py") for a in node.names):
                        folder = guess
                        break
        dotted = ("." * node.level) + (node.module or "")
        for alias in node.names:
            if alias.name == "*":
                if base_module is not None and base_module.path is not None:
                    state = self._state(base_module.path, base_module.name)
                    if state is not None:
                        for k, v in state.globals.items():
                            if not k.startswith("_"):
                                scope_set(scope, k, v)
                continue
            bind = alias.asname or alias.name
            sub = self._find([alias.name], folder) if folder is not None else None
            if sub is not None:
                scope_set(scope, bind, sub)
            elif base_module is not None and base_module.path is not None:
                scope_set(scope, bind, Lazy(base_module.path, alias.name, f"{dotted}.{alias.name}"))
            elif not node.level and base_module is None and folder is None:
                scope_set(scope, bind, self._external(f"{node.module}.{alias.name}"))
            else:
                scope_set(scope, bind, Unknown(f"{dotted}.{alias.name}"))

    def _folder(self, name: str) -> ModuleV | None:
        """A top-level folder without ``__init__.py`` that holds Python files (namespace)."""
        for root in self.roots:
            folder = self._with_root(root, name)
            return ModuleV(name, None, folder) if self._namespace(folder) else None
        return None  # pragma: no cover - roots is never empty

    def _folder_at(self, folder: str) -> ModuleV | None:
        init = f"{folder}/__init__.py" if folder else "__init__.py"
        return ModuleV(folder.replace("/", "."), init if self._exists(init) else None, folder)

    def _namespace(self, folder: str) -> bool:
        return self._exists(f"{folder}/__init__.py")

    def _external(self, dotted: str) -> Value:
        if dotted in _MODELLED:
            return Builtin(dotted)
        if dotted in _MODULES:
            return Builtin(f"module:{dotted}")
        return Unknown(dotted)

    def _resolve(self, value: Lazy) -> Value:
        """A ``from m import name`` binding, looked up now."""
        seen: set[Lazy] = set()
        current: Value = value
        while isinstance(current, Lazy):
            if current in seen:
                return Unknown(value.text)
            seen.add(current)
            state = self._state(current.module, current.module)
            found = state.globals.get(current.name) if state is not None else None
            if found is None:
                return Unknown(current.text)
            current = found
        return current

    def _module_attr(self, mod: ModuleV, attr: str, text: str) -> Value:
        if mod.path is not None:
            state = self._state(mod.path, mod.name)
            if state is not None and attr in state.globals:
                found = state.globals[attr]
                if isinstance(found, Lazy):
                    found = self._resolve_global(state, attr, found)
                return found
        sub = self._find([attr], mod.folder)
        if sub is not None:
            return sub
        return Unknown(text)

    # ----- statements ---------------------------------------------------------------------

    def _tick(self, amount: int = 1) -> None:
        self.steps += amount
        if self.steps > self.limits.max_steps:
            raise _Budget

    def _block(self, body: Sequence[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            self._stmt(stmt, scope)

    def _stmt(self, node: ast.stmt, scope: Scope) -> None:
        self.steps += 1  # self._tick(), inlined
        if self.steps > self.limits.max_steps:
            raise _Budget
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

    def _call_text(self, node: ast.Call, scope: Scope) -> str:
        """The text of an unknown result of the call ``node`` (none when nothing uses it)."""
        return "" if node is self._discard else self._segment(node, scope)

    def _s_assign(self, node: ast.Assign, scope: Scope) -> None:
        target = node.targets[0]
        if len(node.targets) == 1 and type(target) is ast.Name and scope.module is self.main and \
                scope.vars is scope.module.globals and not self.guards and \
                _literal_display(node.value):
            scope_set(scope, target.id, _Deferred(node.value, scope))
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
            items = self._iterate(value)
            if items is None:
                current.items.append(Unknown(self._segment(node.value, scope)))
            else:
                current.items.extend(items)
            return
        result = self._binop(node.op, current, value, node, scope)
        self._assign(target, result, scope, None)

    def _assign(self, target: ast.expr, value: Value, scope: Scope, source: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            if source is not None and _is_literal(source):
                value = self._named_literal(target, value, scope.module.path, source.lineno,
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
        elif isinstance(target, ast.Subscript):
            obj = self.eval(target.value, scope)
            index = self.eval(target.slice, scope)
            self._setitem(obj, index, value)
        elif isinstance(target, ast.Tuple | ast.List):
            self._unpack(target.elts, value, scope)
        elif isinstance(target, ast.Starred):
            self._assign(target.value, value, scope, None)

    def _named_literal(self, node: ast.AST, value: Value, path: str, line: int, name: str,
                       kind: OriginKind) -> Value:
        """``with_origin(value, Origin(path, line, name, kind))``: a literal set by name (a
        keyword, a field, a constant). Kept on ``node`` for the value it was made from."""
        key = (value, kind)  # the literal's value is made once per node (see _e_constant)
        found = node.__dict__.get(_NAMED)
        if found is not None and found[0][0] is value and found[0][1] == kind:
            return cast(Value, found[1])
        named = with_origin(value, Origin(path, line, name, kind))
        if not isinstance(value, Unknown):  # an unknown value is new each time
            setattr(node, _NAMED, (key, named))
        return named

    def _setitem(self, obj: Value, index: Value, value: Value) -> None:
        self._changed(obj)
        if isinstance(obj, DictV):
            key = key_of(index)
            if key is None:
                obj.complete = False
            else:
                obj.items[key] = (index, value)
        elif isinstance(obj, ListV):
            i = python(index)
            if isinstance(i, int) and not isinstance(i, bool) and -len(obj.items) <= i < len(obj.items):
                obj.items[i] = value
            else:
                obj.items[:] = [Unknown("list after an unknown store")] * len(obj.items)
        elif isinstance(obj, Builtin) and obj.name == "os.environ":
            name = python(index)
            if isinstance(name, str):
                text = python(value)
                self.env_overrides[name] = text if isinstance(text, str) else \
                    Unknown(f"os.environ[{name!r}]", origin_of(value))

    def _unpack(self, targets: list[ast.expr], value: Value, scope: Scope) -> None:
        items = self._iterate(value)
        star = [i for i, t in enumerate(targets) if isinstance(t, ast.Starred)]
        if items is None or (not star and len(items) != len(targets)) or \
                (star and len(items) < len(targets) - 1):
            for t in targets:
                self._assign(t, Unknown(_text_of(value)), scope, None)
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

    def _s_global(self, node: ast.Global | ast.Nonlocal, scope: Scope) -> None:
        if isinstance(node, ast.Global):
            scope.globals_names.update(node.names)

    def _s_pass(self, node: ast.stmt, scope: Scope) -> None:
        del node, scope

    def _s_return(self, node: ast.Return, scope: Scope) -> None:
        value = self.eval(node.value, scope) if node.value is not None else Const(None)
        raise _Return(value)

    def _s_break(self, node: ast.Break, scope: Scope) -> None:
        raise _Break

    def _s_continue(self, node: ast.Continue, scope: Scope) -> None:
        raise _Continue

    def _s_raise(self, node: ast.Raise, scope: Scope) -> None:
        if node.exc is not None:
            self.eval(node.exc, scope)
        raise self._raising(node, scope)

    def _s_assert(self, node: ast.Assert, scope: Scope) -> None:
        if truth(self.eval(node.test, scope)) is False:
            raise self._raising(node, scope)

    def _raising(self, node: ast.stmt, scope: Scope) -> _Raise:
        return _Raise(Stop(self._segment(node, scope), scope.module.path, node.lineno,
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
        outcomes: list[tuple[dict[str, Value], _Signal | None, str]] = []
        written: list[dict[str, str | Unknown | None]] = []
        for index, body in enumerate(bodies):
            self.env_overrides = dict(environ)
            if index:
                memo = {}
                live.clear()
                live.update({k: clone(v, memo) for k, v in saved.items()})
            depth = len(self.guards)
            self.guards.append(conds[index])
            signal: _Signal | None = None
            try:
                self._block(body, scope)
            except _Signal as exc:
                # kept without its traceback: frames holding the signal that holds them
                # would be garbage only the cycle collector frees
                signal = exc.with_traceback(None)
            finally:
                del self.guards[depth:]
            outcomes.append((dict(live), signal, conds[index]))
            written.append(self.env_overrides)
        origin = Origin(scope.module.path, node.lineno, None, "computed")
        normal = [o for o in outcomes if o[1] is None]
        raised = [o for o in outcomes if isinstance(o[1], _Raise)]
        other = [o for o in outcomes if o[1] is not None and not isinstance(o[1], _Raise)]
        survivors = normal or other or raised
        self.env_overrides = _merge_environ(
            [w for w, o in zip(written, outcomes, strict=True) if any(o is s for s in survivors)],
            conds[0])
        state, _, cond = survivors[0]
        for variables, _, _ in survivors[1:]:
            state = _merge_vars(state, variables, cond, origin)
        live.clear()
        live.update(state)
        if normal:
            for _, signal, cond in other:
                self._taken(signal, cond, scope)
            return
        if not other:  # every branch raised: as certain as the conditions that led here
            stop = cast(_Raise, raised[0][1]).where
            raise _Raise(Stop(stop.text, stop.path, stop.line, tuple(self.guards)))
        kinds = {type(o[1]) for o in other}
        first = other[0][1]
        assert first is not None
        if isinstance(first, _Return) and kinds == {_Return}:
            value = first.value
            for _, signal, _ in other[1:]:
                assert isinstance(signal, _Return)
                value = merge(value, signal.value, other[0][2], origin)
            raise _Return(value)
        raise first

    def _taken(self, signal: _Signal | None, cond: str, scope: Scope) -> None:
        """A branch left early under an undecided condition: what follows is guarded."""
        if isinstance(signal, _Return):
            scope.pending.append((signal.value, cond))
        elif isinstance(signal, _Break) and self.loops:
            self.loops[-1].append(cond)
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
        items = self._iterate(iterable)
        if items is None:
            text = f"for {self._segment(node.target, scope)} in {self._segment(node.iter, scope)}"
            self._unknown_loop(node, scope, text,
                               lambda: self._assign(node.target, Unknown(_text_of(iterable)),
                                                    scope, None))
            return
        self.loops.append([])
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
                except _Continue:
                    continue
                except _Break:
                    broke = True
                    break
        finally:
            del self.guards[depth:]
            conditional = self.loops.pop()
        if conditional:
            self._havoc(node, scope, "the loop may stop early")
        if not broke:
            self._block(node.orelse, scope)

    def _unknown_loop(self, node: ast.For | ast.AsyncFor | ast.While, scope: Scope, text: str,
                      bind: Callable[[], None] | None) -> None:
        depth = len(self.guards)
        self.guards.append(text)
        self.loops.append([])
        try:
            if bind is not None:
                bind()
                self._block(node.body, scope)
        except _Signal:
            pass
        finally:
            del self.guards[depth:]
            self.loops.pop()
        self._havoc(node, scope, text)

    def _havoc(self, node: ast.stmt, scope: Scope, text: str) -> None:
        """Forget what a loop that ran an unknown number of times assigned or mutated."""
        names = node.__dict__.get(_ASSIGNED)
        if names is None:
            found: set[str] = set()
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    found.add(sub.id)
                elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                        isinstance(sub.func.value, ast.Name):
                    found.add(sub.func.value.id)
                elif isinstance(sub, ast.AugAssign | ast.Assign):
                    targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                    for t in targets:
                        base = t
                        while isinstance(base, ast.Attribute | ast.Subscript):
                            base = base.value
                        if isinstance(base, ast.Name):
                            found.add(base.id)
            names = frozenset(found)
            setattr(node, _ASSIGNED, names)
        origin = Origin(scope.module.path, node.lineno, None, "computed")
        for name in names:
            if name in scope.vars and isinstance(scope.vars[name], FuncV | ClassV | ModuleV):
                continue
            scope_set(scope, name, Unknown(text, origin))

    def _s_while(self, node: ast.While, scope: Scope) -> None:
        self.loops.append([])
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
                except _Continue:
                    continue
                except _Break:
                    broke = True
                    break
        finally:
            del self.guards[depth:]
            conditional = self.loops.pop()
        if conditional:
            self._havoc(node, scope, "the loop may stop early")
        if not broke:
            self._block(node.orelse, scope)

    def _s_try(self, node: ast.Try, scope: Scope) -> None:
        try:
            self._block(node.body, scope)
        except _Raise:
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
                self._assign(item.optional_vars, Unknown(_text_of(value)), scope, None)
        self._block(node.body, scope)

    def _s_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
        fn = self._function(node, scope)
        decorated: Value = fn
        for dec_node in reversed(node.decorator_list):
            dec = self.eval(dec_node, scope)
            if isinstance(dec, Builtin) and dec.name in _DECORATOR_KINDS:
                fn.kind = _DECORATOR_KINDS[dec.name]
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
            elif isinstance(dec, Builtin) and dec.name in _CLI_DECORATORS:
                decorated = _cli_decorate(fn, dec, decorated)
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
        cls = ClassV(node.name, scope.module.path, {}, bases, is_dataclass)
        body = Scope(cls.attrs, scope, scope.module, is_class=True, persistent=self._loading > 0)
        with contextlib.suppress(_Signal):
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

    # ----- expressions --------------------------------------------------------------------

    def eval(self, node: ast.expr, scope: Scope) -> Value:
        self.steps += 1  # self._tick(), inlined
        if self.steps > self.limits.max_steps:
            raise _Budget
        if self.edepth >= self.limits.max_expr_depth:
            self._limit_hits += 1
            return Unknown(self._segment(node, scope), self._origin(node, scope))
        handler = _EXPRESSIONS.get(type(node))
        if handler is None:
            return Unknown(self._segment(node, scope), self._origin(node, scope))
        self.edepth += 1
        try:
            return handler(self, node, scope)
        finally:
            self.edepth -= 1

    def _origin(self, node: ast.AST, scope: Scope) -> Origin:
        found = node.__dict__.get(_ORIGIN)
        if found is None:
            found = Origin(scope.module.path, getattr(node, "lineno", 0), None, "literal")
            setattr(node, _ORIGIN, found)
        return cast(Origin, found)

    def _segment(self, node: ast.AST, scope: Scope) -> str:
        # A node's text depends only on the node and its module, so it is kept on the node
        # (a syntax tree is evaluated only within the module it was parsed from).
        found = node.__dict__.get(_SEGMENT)
        if found is not None:
            return cast(str, found)
        text = _line_segment(node, scope.module.module)
        if text is not None:
            setattr(node, _SEGMENT, text)
            return text
        try:
            text = scope.module.module.segment(node)[:200]
        except RecursionError:
            self._limit_hits += 1  # depends on the stack: neither kept nor shared
            return "<expression>"
        except (ValueError, TypeError, AttributeError):
            return "<expression>"
        setattr(node, _SEGMENT, text)
        return text

    def _e_constant(self, node: ast.Constant, scope: Scope) -> Value:
        found = node.__dict__.get(_CONSTANT)  # values never change: made once per node
        if found is not None:
            return cast(Value, found)
        value = node.value
        origin = self._origin(node, scope)
        if isinstance(value, str):
            if node.end_lineno is not None and node.end_lineno > node.lineno:
                return self._pieces_text(node, scope)
            found = Text.of(value, origin)
        elif value is None or isinstance(value, bool | int | float):
            found = Const(value, origin)
        else:
            return Unknown(self._segment(node, scope), origin)
        setattr(node, _CONSTANT, found)
        return found

    def _pieces_text(self, node: ast.Constant | ast.JoinedStr, scope: Scope) -> Value:
        pieces = node.__dict__.get(_PIECES)
        if pieces is None:
            pieces = self._split(node, scope)
            setattr(node, _PIECES, pieces)
        parts: list[Part] = []
        for line, piece in pieces:
            if isinstance(piece, ast.Constant):
                if not isinstance(piece.value, str):
                    return Unknown(self._segment(node, scope), self._origin(node, scope))
                parts.append(Chunk(piece.value, Origin(scope.module.path, line)))
            else:
                assert isinstance(piece, ast.JoinedStr)
                value = self._joined(piece, scope, line)
                if not isinstance(value, Text):
                    return value
                parts.extend(value.parts)
        return Text(tuple(p for p in parts if not (isinstance(p, Chunk) and not p.text)))

    def _split(self, node: ast.Constant | ast.JoinedStr, scope: Scope) -> list[tuple[int, ast.expr]]:
        whole: list[tuple[int, ast.expr]] = [(node.lineno, node)]
        source = scope.module.module.source_segment(node)
        if source is None:
            return whole
        found = split_literal(source)
        if found is None or len(found) < 2:
            return whole
        out: list[tuple[int, ast.expr]] = []
        lines = source.split("\n")
        for offset, col, text in found:
            try:
                piece = ast.parse(text, mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return whole
            if not isinstance(piece, ast.Constant | ast.JoinedStr):
                return whole
            prefix = lines[offset][:col]
            byte_col = len(prefix.encode()) + (node.col_offset if offset == 0 else 0)
            _shift(piece, node.lineno + offset, byte_col)
            out.append((node.lineno + offset, piece))
        if isinstance(node, ast.Constant):
            joined = "".join(p.value for _, p in out if isinstance(p, ast.Constant)
                             and isinstance(p.value, str))
            if joined != node.value or any(not isinstance(p, ast.Constant) for _, p in out):
                return whole
        return out

    def _e_joined(self, node: ast.JoinedStr, scope: Scope) -> Value:
        if node.end_lineno is not None and node.end_lineno > node.lineno:
            return self._pieces_text(node, scope)
        return self._joined(node, scope, node.lineno)

    def _joined(self, node: ast.JoinedStr, scope: Scope, line: int) -> Value:
        parts: list[Part] = []
        for item in node.values:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                if item.value:
                    found = item.__dict__.get(_CHUNK)  # (line, chunk): made once per node
                    if found is None or found[0] != line:
                        found = (line, Chunk(item.value, Origin(scope.module.path, line)))
                        setattr(item, _CHUNK, found)
                    parts.append(found[1])
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
                return [Hole(value.text, value.origin or origin, value.quiet)]
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
                if type(value) is _Deferred:
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
            if type(value) is _Deferred:
                return self._realize(module_vars, name, value)
            if isinstance(value, Lazy):
                return self._resolve_global(scope.module, name, value)
            return value
        if name in _BUILTINS:
            return Builtin(name)
        return Unknown(name, self._origin(node, scope))

    def _realize(self, variables: dict[str, Value], name: str, value: _Deferred) -> Value:
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
            if type(value) is _Deferred:
                self._realize(variables, name, value)

    def _resolve_global(self, state: ModuleState, name: str, value: Lazy) -> Value:
        """A module's ``from m import name`` global, looked up now and kept."""
        if state.owner is None:  # its top level is running (or it is the run's own file)
            found = self._resolve(value)
        else:
            saved = self._touched
            self._touched = set()
            try:
                found = self._resolve(value)
            finally:
                state.deps |= self._touched  # the module's state now holds what these hold
                saved |= self._touched
                self._touched = saved
                state.resolved.add(name)
                state._record = None
                self.version += 1
        state.globals[name] = found
        return found

    def _e_attribute(self, node: ast.Attribute, scope: Scope) -> Value:
        obj = self.eval(node.value, scope)
        if type(obj) is Instance and node.attr in obj.fields:
            return obj.fields[node.attr]
        return self._settle(self._getattr(obj, node.attr, _PENDING, _PENDING_ORIGIN), node, scope)

    def _settle(self, value: Value, node: ast.AST, scope: Scope) -> Value:
        """``value``, its text and origin worked out if they were left pending (an unknown
        result of :meth:`_getattr` or :meth:`_getitem` made without them)."""
        if type(value) is Unknown and value.text is _PENDING:
            origin = value.origin
            if origin is _PENDING_ORIGIN:
                origin = self._origin(node, scope)
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
                return _bind(found, bound)
            if found is not None:
                return found
            return Unknown(text, origin)
        if isinstance(obj, ClassV):
            found = obj.lookup(attr)
            if isinstance(found, FuncV) and found.kind == "classmethod":
                return _bind(found, obj)
            return found if found is not None else Unknown(text, origin)
        if isinstance(obj, ModuleV):
            return self._module_attr(obj, attr, text)
        if isinstance(obj, Builtin):
            if obj.name.startswith("module:"):
                return self._external(f"{obj.name[7:]}.{attr}")
            if obj.name == "os.environ" and attr in ("get", "setdefault", "pop"):
                return Builtin(f"environ.{attr}")
            return Unknown(text, origin)
        if isinstance(obj, Text | ListV | DictV | SetV | TupleV):
            kind = {Text: "str", ListV: "list", DictV: "dict", SetV: "set", TupleV: "tuple"}[type(obj)]
            if f"{kind}.{attr}" in _METHODS:
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
        origin = self._origin(node, scope)
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
            if isinstance(obj, ListV):
                return ListV(obj.items[piece])
            if isinstance(obj, TupleV):
                return TupleV(obj.items[piece])
            if isinstance(obj, Text) and obj.plain is not None:
                return Text.of(obj.plain[piece], origin_of(obj))
            return Unknown(text, origin)
        index = self.eval(node.slice, scope)
        return self._settle(self._getitem(obj, index, _PENDING, origin), node, scope)

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
            if -len(obj.items) <= i < len(obj.items):
                return obj.items[i]
            return Unknown(text, origin)
        if isinstance(obj, Text) and obj.plain is not None and -len(obj.plain) <= i < len(obj.plain):
            return Text.of(obj.plain[i], origin_of(obj))
        return Unknown(text, origin)

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

    def _e_binop(self, node: ast.BinOp, scope: Scope) -> Value:
        left = self.eval(node.left, scope)
        right = self.eval(node.right, scope)
        return self._binop(node.op, left, right, node, scope)

    def _binop(self, op: ast.operator, a: Value, b: Value, node: ast.AST, scope: Scope) -> Value:
        if type(a) is Text and type(b) is Text and type(op) is ast.Add and \
                len(a) + len(b) <= MAX_TEXT:
            return a + b
        named = _named(origin_of(a)) or _named(origin_of(b))
        origin = Origin(scope.module.path, getattr(node, "lineno", 0), None, "computed", named)
        if type(a) is Alternatives:
            return _choose([self._binop(op, o, b, node, scope) for o in a.options], a.text,
                           a.origin or origin)
        if type(b) is Alternatives:
            return _choose([self._binop(op, a, o, node, scope) for o in b.options], b.text,
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
        number = _arith(op, x, y)
        if number is NOT_PLAIN:
            return Unknown(self._segment(node, scope), origin)
        return Const(cast(int | float | bool, number), origin)

    def _e_unaryop(self, node: ast.UnaryOp, scope: Scope) -> Value:
        value = self.eval(node.operand, scope)
        origin = origin_of(value) if _is_literal(node) else Origin(
            scope.module.path, node.lineno, None, "computed", _named(origin_of(value)))
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
                return Unknown(self._segment(node, scope), self._origin(node, scope))
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
                return Const(False, self._origin(node, scope))
            if result is None:
                decided = False
            left = right
        if not decided:
            return Unknown(self._segment(node, scope), self._origin(node, scope))
        return Const(True, self._origin(node, scope))

    def _compare(self, op: ast.cmpop, a: Value, b: Value) -> bool | None:
        if isinstance(op, ast.Eq):
            return equal(a, b)
        if isinstance(op, ast.NotEq):
            e = equal(a, b)
            return None if e is None else not e
        if isinstance(op, ast.Is | ast.IsNot):
            same = _identical(a, b)
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

    def _e_ifexp(self, node: ast.IfExp, scope: Scope) -> Value:
        test = truth(self.eval(node.test, scope))
        if test is True:
            return self.eval(node.body, scope)
        if test is False:
            return self.eval(node.orelse, scope)
        body = self.eval(node.body, scope)
        orelse = self.eval(node.orelse, scope)
        return merge(body, orelse, self._segment(node.test, scope), self._origin(node, scope))

    def _e_list(self, node: ast.List | ast.Tuple | ast.Set, scope: Scope) -> Value:
        items: list[Value] = []
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                inner = self._iterate(self.eval(elt.value, scope))
                if inner is None:
                    return Unknown(self._segment(node, scope), self._origin(node, scope))
                items.extend(inner)
            else:
                items.append(self.eval(elt, scope))
            if len(items) > MAX_ITEMS:
                return Unknown(self._segment(node, scope), self._origin(node, scope))
        if isinstance(node, ast.Tuple):
            return TupleV(tuple(items))
        if isinstance(node, ast.Set):
            return self._make_set(items, node, scope)
        return ListV(items)

    def _make_set(self, items: list[Value], node: ast.AST, scope: Scope) -> Value:
        out: dict[Hashable, Value] = {}
        for item in items:
            key = key_of(item)
            if key is None:
                return Unknown(self._segment(node, scope), self._origin(node, scope))
            out.setdefault(key, item)
        return SetV(out)

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
            return Unknown(self._segment(node, scope), self._origin(node, scope))
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
        items = self._iterate(self.eval(gen.iter, scope))
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
                items = self._iterate(value)
                if items is None:
                    target.yields.append(Unknown(_text_of(value)))
                else:
                    target.yields.extend(items)
            else:
                target.yields.append(value)
            if self.guards:
                target.yields.append(Unknown("a value yielded under a condition"))
        return Unknown(self._segment(node, scope), self._origin(node, scope))

    # ----- calls --------------------------------------------------------------------------

    def _e_call(self, node: ast.Call, scope: Scope) -> Value:
        func = self.eval(node.func, scope)
        args: list[Value] = []
        keywords: dict[str, Value] = {}
        partial = False
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                inner = self._iterate(self.eval(arg.value, scope))
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
            if _is_literal(kw.value):
                value = self._named_literal(kw, value, scope.module.path, kw.value.lineno, kw.arg,
                                            "keyword")
            keywords[kw.arg] = value
        tail = node.func.attr if isinstance(node.func, ast.Attribute) else (
            node.func.id if isinstance(node.func, ast.Name) else "")
        if tail in self.quiet:
            return Unknown(self._call_text(node, scope), self._origin(node, scope), quiet=True)
        if tail in self.sinks and not isinstance(func, ClassV):
            self._external_call(node, scope, tail, args, keywords, True)
            return Unknown(self._call_text(node, scope), self._origin(node, scope))
        if partial:
            return self._opaque(node, scope, tail, args, keywords)
        return self._apply(func, args, keywords, node, scope, tail)

    def _opaque(self, node: ast.Call, scope: Scope, tail: str, args: list[Value],
                keywords: dict[str, Value]) -> Value:
        self._external_call(node, scope, tail, args, keywords, False)
        return Unknown(self._call_text(node, scope), self._origin(node, scope))

    def _external_call(self, node: ast.Call, scope: Scope, tail: str, args: list[Value],
                       keywords: dict[str, Value], named: bool) -> None:
        if self.on_call is None:
            return
        if not named and not any(_has_flag(v) for v in [*args, *keywords.values()]):
            return
        self.on_call(ExternalCall(
            name=self._segment(node.func, scope), tail=tail, args=tuple(args),
            keywords=dict(keywords), path=scope.module.path, line=node.lineno,
            guards=tuple(self.guards), module=scope.module.path, named_sink=named,
            environ=tuple(self.env_overrides.items()),
        ))

    def _apply(self, func: Value, args: list[Value], keywords: dict[str, Value], node: ast.Call,
               scope: Scope, tail: str) -> Value:
        if isinstance(func, FuncV):
            if isinstance(func.node, ast.AsyncFunctionDef):
                return Unknown(self._call_text(node, scope), self._origin(node, scope))
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
            origin = self._origin(node, scope)
            if func.name in _PURE:
                for index, arg in enumerate(args):
                    if type(arg) is Alternatives:  # the call on each option, still a choice
                        return _choose([self._apply(func, [*args[:index], o, *args[index + 1:]],
                                                    keywords, node, scope, tail)
                                        for o in arg.options], arg.text, arg.origin or origin)
            result = self._builtin(func, args, keywords, node, scope, None, origin)
            if result is not None:
                return result
            return Unknown(self._call_text(node, scope), origin)
        if isinstance(func, Instance):
            method = func.cls.lookup("__call__")
            if isinstance(method, FuncV):
                return self._invoke(_bind(method, func), args, keywords, node)
        if type(func) is Unknown and func.quiet:  # a method of a path
            return Unknown(self._call_text(node, scope), self._origin(node, scope), quiet=True)
        if type(func) is Alternatives and \
                all(isinstance(o, FuncV | ClassV | Builtin) for o in func.options):
            # a method of a value an undecided branch chose (a list appended to in one):
            # each option's, the results still a choice
            return _choose([self._apply(o, args, keywords, node, scope, tail) for o in func.options],
                           func.text, func.origin or self._origin(node, scope))
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
        if self._is_generator(fn.node, closure.module.module):
            scope.yields = []
        self.depth += 1
        depth = len(self.guards)
        loops = self.loops
        self.loops = []
        result: Value = Const(None)
        try:
            self._block(fn.node.body, scope)
        except _Return as ret:
            result = ret.value
        except (_Break, _Continue):
            pass
        except _Raise:
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
                for name in _contexts(fn):  # run as CI runs the file: no command named
                    row[name] = Instance(_NAMESPACE, {"invoked_subcommand": Const(None)})
                self._invoke(fn, [], row, node)
        return Const(None)

    def _cli_rows(self, fn: FuncV) -> list[dict[str, Value]]:
        params = _params(fn)
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
            items = self._iterate(options) if options is not None else None
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

    def _is_generator(self, node: ast.FunctionDef | ast.AsyncFunctionDef, module: Module) -> bool:
        found = node.__dict__.get(_GENERATOR)
        if found is None:
            found = False
            yields = module.tree.__dict__.get(_YIELDS)
            if yields is None:
                yields = module.tree.__dict__[_YIELDS] = "yield" in module.text
            if not yields:  # no yield anywhere in the file's source
                setattr(node, _GENERATOR, False)
                return False
            stack: list[ast.AST] = list(node.body)
            while stack:
                sub = stack.pop()
                if isinstance(sub, ast.Yield | ast.YieldFrom):
                    found = True
                    break
                if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                    continue
                stack.extend(ast.iter_child_nodes(sub))
            setattr(node, _GENERATOR, found)
        return cast(bool, found)

    def _bind_params(self, fn: FuncV, args: list[Value], keywords: dict[str, Value],
                     scope: Scope) -> None:
        spec = fn.node.args
        params = _params(fn)
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
                self._invoke(_bind(post, instance), [], {}, node)
            return instance
        if isinstance(init, FuncV):
            self._invoke(_bind(init, instance), args, keywords, node)
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

    def _iterate(self, value: Value) -> list[Value] | None:
        if isinstance(value, ListV | TupleV):
            return list(value.items)
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

    # ----- modelled builtins --------------------------------------------------------------

    def _builtin(self, func: Builtin, args: list[Value], keywords: dict[str, Value],
                 node: ast.Call, scope: Scope, text: str | None, origin: Origin) -> Value | None:
        """A modelled builtin's result (None: not modelled); ``text`` (the call's source) is
        worked out only when a result needs it."""
        handler = _BUILTIN_CALLS.get(func.name)
        if handler is None:
            return None
        call = _Call(self, func, args, keywords, node, scope, text, origin)
        try:
            return handler(call)
        except (ValueError, TypeError, OverflowError, ZeroDivisionError, IndexError, KeyError,
                AttributeError):
            return Unknown(call.text, origin)


class _Call:
    """One call of a modelled builtin."""

    __slots__ = ("_text", "args", "func", "interp", "keywords", "node", "origin", "scope")

    def __init__(self, interp: Interpreter, func: Builtin, args: list[Value],
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
        named = next((_named(origin_of(a)) for a in self.args if _named(origin_of(a))), None)
        return Origin(self.origin.path, self.origin.line, None, "computed", named)

    def plain(self, value: Value) -> object:
        return python(value)


def scope_set(scope: Scope, name: str, value: Value) -> None:
    if name in scope.globals_names:
        if scope.module.owner is not None:  # a loaded module's globals changed
            scope.module.owner._dirty()
        scope.module.globals[name] = value
    else:
        scope.vars[name] = value


def _bind(fn: FuncV, bound: Value) -> FuncV:
    return FuncV(fn.name, fn.path, fn.node, fn.defaults, fn.kw_defaults, fn.closure, fn.kind,
                 bound, fn.parametrize)


def _text_of(value: Value) -> str:
    if isinstance(value, Unknown):
        return value.text
    return type(value).__name__


def _identical(a: Value, b: Value) -> bool | None:
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


def _has_flag(value: Value) -> bool:
    if isinstance(value, Text):
        return any((isinstance(p, Chunk) and "--" in p.text) or isinstance(p, Choice)
                   for p in value.parts)
    if isinstance(value, ListV | TupleV):
        return any(_has_flag(v) for v in value.items)
    if type(value) is Alternatives:
        return any(_has_flag(v) for v in value.options)
    return False


def _choose(results: list[Value], cond: str, origin: Origin) -> Value:
    """One value for the results of each option of an undecided choice."""
    out = results[0]
    for other in results[1:]:
        out = merge(out, other, cond, origin)
    return out


def _merge_environ(written: list[dict[str, str | Unknown | None]],
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


def _merge_vars(a: dict[str, Value], b: dict[str, Value], cond: str,
                origin: Origin) -> dict[str, Value]:
    out: dict[str, Value] = {}
    for name in dict.fromkeys([*a, *b]):
        if name in a and name in b:
            out[name] = merge(a[name], b[name], cond, origin)
        else:
            out[name] = Unknown(f"{name} (set only when {cond})", origin)
    return out


def _arith(op: ast.operator, x: Any, y: Any) -> object:
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
            result = _OPS[type(op)](x, y)
    except (ArithmeticError, TypeError, ValueError, KeyError):
        return NOT_PLAIN
    if isinstance(result, complex):
        return NOT_PLAIN
    if isinstance(result, int) and result.bit_length() > MAX_INT_BITS:
        return NOT_PLAIN
    return result


_OPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
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


# ----- builtin implementations ---------------------------------------------------------------

def _plain_args(call: _Call) -> list[object] | None:
    out = [python(a) for a in call.args]
    return None if any(o is NOT_PLAIN for o in out) else out


def _b_len(call: _Call) -> Value:
    (value,) = call.args
    if isinstance(value, Text):
        return Const(len(value.plain), call.computed()) if value.plain is not None else call.unknown()
    if isinstance(value, ListV | TupleV | SetV):
        return Const(len(value.items), call.computed())
    if isinstance(value, DictV) and value.complete:
        return Const(len(value.items), call.computed())
    return call.unknown()


def _b_str(call: _Call) -> Value:
    if not call.args:
        return Text.of("")
    (value,) = call.args
    if isinstance(value, Text):
        return value
    if isinstance(value, Const):
        return Text.of(str(value.value), value.origin or call.origin)
    if isinstance(value, Unknown):
        return Text((Hole(value.text, value.origin or call.origin, value.quiet),))
    plain = python(value)
    return call.unknown() if plain is NOT_PLAIN else Text.of(str(plain), call.origin)


def _b_number(call: _Call) -> Value:
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


def _b_minmax(call: _Call) -> Value:
    items = call.args
    if len(items) == 1:
        inner = call.interp._iterate(items[0])
        if inner is None:
            return call.unknown()
        items = inner
    plain = [python(v) for v in items]
    if not plain or any(p is NOT_PLAIN or not isinstance(p, int | float) for p in plain):
        return call.unknown()
    pick = min if call.func.name == "min" else max
    chosen = pick(plain)  # type: ignore[type-var]
    return items[plain.index(chosen)]


def _b_numeric(call: _Call) -> Value:
    plain = _plain_args(call)
    if plain is None:
        return call.unknown()
    name = call.func.name
    if name == "sum":
        inner = call.interp._iterate(call.args[0])
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
            inner = call.interp._iterate(call.args[0])
            values = [python(v) for v in inner] if inner is not None else None
            if values is None or any(not isinstance(v, int | float) for v in values):
                return call.unknown()
            product = _arith(ast.Mult(), 1, 1)
            for v in values:
                product = _arith(ast.Mult(), product, v)
                if product is NOT_PLAIN:
                    return call.unknown()
            result = product
        else:
            result = fn(*plain)
    return from_python(result, call.computed())


def _b_range(call: _Call) -> Value:
    plain = _plain_args(call)
    if plain is None or not plain or len(plain) > 3 or \
            not all(isinstance(p, int) and not isinstance(p, bool) for p in plain):
        return call.unknown()
    span = range(*cast(list[int], plain))
    if len(span) > MAX_ITEMS:
        return call.unknown()
    origin = call.computed()
    return ListV([Const(i, origin) for i in span])


def _b_container(call: _Call) -> Value:
    name = call.func.name
    if not call.args:
        return {"list": ListV([]), "tuple": TupleV(()), "set": SetV({}), "dict": DictV({})}[name] \
            if not call.keywords or name != "dict" else _dict_keywords(call)
    items = call.interp._iterate(call.args[0])
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
            pair = call.interp._iterate(item)
            if pair is None or len(pair) != 2:
                return call.unknown()
            call.interp._setitem(out, pair[0], pair[1])
    for key, value in call.keywords.items():
        out.items[("s", key)] = (Text.of(key), value)
    return out


def _dict_keywords(call: _Call) -> Value:
    out = DictV({})
    for key, value in call.keywords.items():
        out.items[("s", key)] = (Text.of(key), value)
    return out


def _b_sorted(call: _Call) -> Value:
    items = call.interp._iterate(call.args[0])
    if items is None or call.keywords:
        return call.unknown()
    if call.func.name == "reversed":
        return ListV(list(reversed(items)))
    plain = [python(v) for v in items]
    if any(p is NOT_PLAIN for p in plain):
        return call.unknown()
    order = sorted(range(len(items)), key=lambda i: plain[i])  # type: ignore[arg-type,return-value]
    return ListV([items[i] for i in order])


def _b_enumerate(call: _Call) -> Value:
    items = call.interp._iterate(call.args[0])
    if items is None:
        return call.unknown()
    start = python(call.args[1]) if len(call.args) > 1 else 0
    if not isinstance(start, int):
        return call.unknown()
    origin = call.computed()
    return ListV([TupleV((Const(i + start, origin), v)) for i, v in enumerate(items)])


def _b_zip(call: _Call) -> Value:
    columns = [call.interp._iterate(a) for a in call.args]
    if any(c is None for c in columns):
        return call.unknown()
    rows = zip(*[c for c in columns if c is not None], strict=False)
    return ListV([TupleV(tuple(r)) for r in rows])


def _b_map_filter(call: _Call) -> Value:
    if len(call.args) != 2:
        return call.unknown()
    fn, iterable = call.args
    items = call.interp._iterate(iterable)
    if items is None:
        return call.unknown()
    out: list[Value] = []
    for item in items:
        if isinstance(fn, FuncV):
            result = call.interp._invoke(fn, [item], {}, None)
        elif isinstance(fn, Builtin) and fn.name in _BUILTIN_CALLS:
            result = call.interp._builtin(fn, [item], {}, call.node, call.scope, call._text,
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


def _b_isinstance(call: _Call) -> Value:
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


def _b_print(call: _Call) -> Value:
    return Const(None)


def _b_repr(call: _Call) -> Value:
    plain = python(call.args[0])
    return call.unknown() if plain is NOT_PLAIN else Text.of(repr(plain), call.origin)


def _b_getattr(call: _Call) -> Value:
    name = python(call.args[1])
    if not isinstance(name, str):
        return call.unknown()
    found = call.interp._getattr(call.args[0], name, call.text, call.origin)
    if isinstance(found, Unknown) and len(call.args) > 2 and isinstance(call.args[0], Instance):
        return call.args[2] if found.text == call.text else found
    if call.func.name == "hasattr":
        return call.unknown() if isinstance(found, Unknown) else Const(True, call.origin)
    return found


def _b_anyall(call: _Call) -> Value:
    items = call.interp._iterate(call.args[0])
    if items is None:
        return call.unknown()
    results = [truth(v) for v in items]
    want = call.func.name == "any"
    if want in results:
        return Const(want, call.origin)
    if None in results:
        return call.unknown()
    return Const(not want, call.origin)


def _b_decorator(call: _Call) -> Value:
    if call.func.name in ("dataclasses.dataclass",) and not call.args:
        return Builtin("dataclasses.dataclass")
    if call.args and isinstance(call.args[0], FuncV | ClassV):
        return call.args[0]
    return Builtin("identity")


def _b_identity(call: _Call) -> Value:
    return call.args[0] if call.args else call.unknown()


def _b_field(call: _Call) -> Value:
    init = call.keywords.get("init")
    return FieldCall(call.keywords.get("default"), call.keywords.get("default_factory"),
                     truth(init) is not False if init is not None else True)


def _b_replace(call: _Call) -> Value:
    obj = call.args[0]
    if not isinstance(obj, Instance):
        return call.unknown()
    keywords = {**obj.fields, **call.keywords}
    specs = {s.name for s in obj.cls.all_fields() if s.init}
    keywords = {k: v for k, v in keywords.items() if k in specs}
    return call.interp._construct(obj.cls, [], keywords, call.node, call.scope)


def _b_getenv(call: _Call) -> Value:
    name = python(call.args[0])
    if not isinstance(name, str):
        return call.unknown()
    found = call.interp._env(name, call.text, call.origin)
    if isinstance(found, Const) and found.value is None and len(call.args) > 1:
        return call.args[1]
    if isinstance(found, Const) and found.value is None and "default" in call.keywords:
        return call.keywords["default"]
    return found


def _b_environ(call: _Call) -> Value:
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


def _b_cli(call: _Call) -> Value:
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


_CLI_DECORATORS = frozenset({"cli.register", "cli.register_default", "cli.command", "cli.group",
                             "cli.option"})


def _contexts(fn: FuncV) -> list[str]:
    """The parameters of a command that receive its context (``ctx: typer.Context``)."""
    spec = fn.node.args
    return [a.arg for a in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)
            if (isinstance(a.annotation, ast.Attribute) and a.annotation.attr == "Context") or
            (isinstance(a.annotation, ast.Name) and a.annotation.id == "Context")]


def _params(fn: FuncV) -> _Params:
    """A function's parameter names (worked out once per function node)."""
    params = fn.node.__dict__.get(_PARAMS)
    if params is None:
        params = _Params(fn.node.args)
        setattr(fn.node, _PARAMS, params)
    return cast(_Params, params)


def _cli_decorate(fn: FuncV, dec: Builtin, decorated: Value) -> Value:
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


def _b_namespace(call: _Call) -> Value:
    """``argparse.Namespace(**kw)``, ``types.SimpleNamespace(**kw)``: an object whose
    attributes are the keywords."""
    if call.args:
        return call.unknown()
    return Instance(_NAMESPACE, dict(call.keywords))


_NAMESPACE = ClassV("Namespace", "<stdlib>", {}, ())


def _b_re(call: _Call) -> Value:
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


def _b_match(call: _Call) -> Value:
    match = call.func.bound
    assert isinstance(match, MatchV)
    method = call.func.name.split(".")[1]
    if method == "groups":
        return TupleV(match.groups[1:])
    if method == "groupdict":
        out = DictV({})
        for name, number in match.names.items():
            out.items[("s", name)] = (Text.of(name), match.groups[number])
        return out
    picked: list[Value] = []
    for arg in call.args or [Const(0)]:
        key = python(arg)
        index = match.names.get(key) if isinstance(key, str) else key
        if not isinstance(index, int) or isinstance(index, bool) or \
                not 0 <= index < len(match.groups):
            return call.unknown()
        picked.append(match.groups[index])
    return picked[0] if len(picked) == 1 else TupleV(tuple(picked))


def _b_path(call: _Call) -> Value:
    """A path (``pathlib.Path(...)``, ``os.path.*``): the string when it is known and plain
    (``dirname``, ``basename``, ``normpath``), else a path that is not known, which never
    holds command-line flags (a quiet unknown)."""
    name = call.func.name.rsplit(".", 1)[1]
    plain = [python(a) for a in call.args]
    if name in ("dirname", "basename", "normpath") and len(plain) == 1 and \
            isinstance(plain[0], str):
        return Text.of(getattr(posixpath, name)(plain[0]), call.computed())
    return Unknown(call.text, call.origin, quiet=True)


def _b_path_join(call: _Call) -> Value:
    parts: list[Part] = []
    for index, arg in enumerate(call.args):
        if not isinstance(arg, Text):
            return Unknown(call.text, call.origin, quiet=True)
        if index:
            parts.append(Chunk("/", call.origin))
        parts.extend(arg.parts)
    return Text(tuple(parts))


def _join(separator: Text, items: list[Value], call: _Call) -> Value:
    parts: list[Part] = []
    for index, item in enumerate(items):
        if index and separator.parts:
            parts.extend(separator.parts)
        if isinstance(item, Text):
            parts.extend(item.parts)
        elif isinstance(item, Unknown):
            parts.append(Hole(item.text, item.origin or call.origin, item.quiet))
        else:
            return call.unknown()
    if sum(len(p.text) for p in parts if not isinstance(p, Choice)) > MAX_TEXT:
        return call.unknown()
    return Text(tuple(parts))


def _b_str_method(call: _Call) -> Value:
    text = call.func.bound
    assert isinstance(text, Text)
    method = call.func.name.split(".")[1]
    if method == "join":
        items = call.interp._iterate(call.args[0])
        if items is None:
            return call.unknown()
        return _join(text, items, call)
    if method == "format":
        return _str_format(text, call)
    if method in ("strip", "lstrip", "rstrip") and not call.args:
        return _strip(text, method)
    plain = text.plain
    args = _plain_args(call)
    if plain is None or args is None:
        return call.unknown()
    origin = origin_of(text)
    if method == "split" and not call.keywords:
        pieces = plain.split(*args) if args and args[0] is not None else plain.split()  # type: ignore[arg-type]
        found: list[Value] = [Text.of(p, origin) for p in pieces[:MAX_ITEMS]]
        return ListV(found)
    result = getattr(plain, method)(*args)
    if isinstance(result, str) and len(result) > MAX_TEXT:
        return call.unknown()
    return from_python(result, origin)


def _strip(text: Text, method: str) -> Value:
    parts = list(text.parts)
    if method in ("strip", "lstrip"):
        while parts and isinstance(parts[0], Chunk) and not parts[0].text.strip():
            parts.pop(0)
        if parts and isinstance(parts[0], Chunk):
            parts[0] = Chunk(parts[0].text.lstrip(), parts[0].origin)
    if method in ("strip", "rstrip"):
        while parts and isinstance(parts[-1], Chunk) and not parts[-1].text.strip():
            parts.pop()
        if parts and isinstance(parts[-1], Chunk):
            parts[-1] = Chunk(parts[-1].text.rstrip(), parts[-1].origin)
    return Text(tuple(parts))


def _str_format(template: Text, call: _Call) -> Value:
    import string

    plain = template.plain
    if plain is None:
        return call.unknown()
    parts: list[Part] = []
    auto = 0
    origin = origin_of(template)
    try:
        parsed = list(string.Formatter().parse(plain))
    except ValueError:
        return call.unknown()
    for literal, name, spec, conversion in parsed:
        if literal:
            parts.append(Chunk(literal, origin))
        if name is None:
            continue
        head, _, rest = name.partition(".")
        value: Value
        if head == "":
            if auto >= len(call.args):
                return call.unknown()
            value = call.args[auto]
            auto += 1
        elif head.isdigit():
            if int(head) >= len(call.args):
                return call.unknown()
            value = call.args[int(head)]
        elif head in call.keywords:
            value = call.keywords[head]
        else:
            return call.unknown()
        for attr in rest.split(".") if rest else []:
            value = call.interp._getattr(value, attr, call.text, call.origin)
        conv = ord(conversion) if conversion else -1
        parts.extend(call.interp._format(value, conv, spec or "", call.node, call.scope,
                                         call.origin.line))
    return Text(tuple(parts))


def _b_list_method(call: _Call) -> Value:
    target = call.func.bound
    method = call.func.name.split(".")[1]
    if isinstance(target, ListV) and method in ("append", "extend", "insert", "pop"):
        call.interp._changed(target)
    if isinstance(target, ListV):
        if method == "append" and len(target.items) < MAX_ITEMS:
            target.items.append(call.args[0])
            return Const(None)
        if method == "extend":
            items = call.interp._iterate(call.args[0])
            if items is None:
                target.items.append(Unknown(_text_of(call.args[0])))
            else:
                target.items.extend(items[:MAX_ITEMS])
            return Const(None)
        if method == "insert":
            where = python(call.args[0])
            if isinstance(where, int):
                target.items.insert(where, call.args[1])
                return Const(None)
        if method == "copy":
            return ListV(list(target.items))
        if method == "pop" and target.items:
            where = python(call.args[0]) if call.args else -1
            if isinstance(where, int):
                return target.items.pop(where)
        if method == "index":
            for i, item in enumerate(target.items):
                if equal(item, call.args[0]):
                    return Const(i, call.origin)
    if isinstance(target, TupleV) and method == "index":
        for i, item in enumerate(target.items):
            if equal(item, call.args[0]):
                return Const(i, call.origin)
    return call.unknown()


def _b_dict_method(call: _Call) -> Value:
    target = call.func.bound
    assert isinstance(target, DictV)
    method = call.func.name.split(".")[1]
    if method in ("update", "setdefault", "pop"):
        call.interp._changed(target)
    if method == "get":
        key = key_of(call.args[0])
        if key is not None and key in target.items:
            return target.items[key][1]
        if key is not None and target.complete:
            return call.args[1] if len(call.args) > 1 else Const(None)
        return call.unknown()
    if method in ("items", "keys", "values"):
        if not target.complete:
            return call.unknown()
        if method == "items":
            return ListV([TupleV((k, v)) for k, v in target.items.values()])
        return ListV([p[0 if method == "keys" else 1] for p in target.items.values()])
    if method == "update":
        if call.args:
            other = call.args[0]
            if isinstance(other, DictV):
                target.items.update(other.items)
                target.complete = target.complete and other.complete
            else:
                target.complete = False
        for name, value in call.keywords.items():
            target.items[("s", name)] = (Text.of(name), value)
        return Const(None)
    if method == "copy":
        return DictV(dict(target.items), target.complete)
    if method == "setdefault":
        key = key_of(call.args[0])
        if key is None:
            target.complete = False
            return call.unknown()
        if key not in target.items:
            target.items[key] = (call.args[0], call.args[1] if len(call.args) > 1 else Const(None))
        return target.items[key][1]
    if method == "pop":
        key = key_of(call.args[0])
        if key is not None and key in target.items:
            return target.items.pop(key)[1]
        if len(call.args) > 1 and key is not None and target.complete:
            return call.args[1]
    return call.unknown()


def _b_set_method(call: _Call) -> Value:
    target = call.func.bound
    assert isinstance(target, SetV)
    call.interp._changed(target)
    key = key_of(call.args[0])
    if key is None:
        return call.unknown()
    target.items.setdefault(key, call.args[0])
    return Const(None)


def _b_parametrize(call: _Call) -> Value:
    if len(call.args) < 2:
        return call.unknown()
    return Builtin("parametrize", TupleV((call.args[0], call.args[1])))


def _b_shlex_join(call: _Call) -> Value:
    items = call.interp._iterate(call.args[0])
    if items is None:
        return call.unknown()
    return _join(Text.of(" "), items, call)


def _b_cast(call: _Call) -> Value:
    return call.args[1]


_METHODS = frozenset({
    "str.join", "str.split", "str.strip", "str.lstrip", "str.rstrip", "str.replace",
    "str.format", "str.startswith", "str.endswith", "str.lower", "str.upper", "str.count",
    "str.removeprefix", "str.removesuffix", "list.append", "list.extend", "list.insert",
    "list.copy", "list.pop", "list.index", "tuple.index", "dict.get", "dict.items",
    "dict.keys", "dict.values", "dict.update", "dict.copy", "dict.setdefault", "dict.pop",
    "set.add",
})

# Modelled calls without side effects: given alternatives, each option's result is kept.
_PURE = frozenset({
    "len", "str", "int", "float", "bool", "repr", "os.path.join", "shlex.join", "list", "tuple",
    *(name for name in _METHODS if name.startswith("str.")),
})

_BUILTIN_CALLS: dict[str, Callable[[_Call], Value]] = {
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
    "pytest.mark.parametrize": _b_parametrize, "shlex.join": _b_shlex_join,
    "typing.cast": _b_cast, "argparse.Namespace": _b_namespace,
    **{n: _b_cli for n in ("typer.Typer", "typer.Option", "typer.Argument", "click.command",
                           "click.group", "click.option", "click.argument", "click.Choice",
                           "cli.app.command", "cli.app.callback")},
    "types.SimpleNamespace": _b_namespace, "re.search": _b_re, "re.match": _b_re,
    "re.fullmatch": _b_re, "match.group": _b_match, "match.groups": _b_match,
    "match.groupdict": _b_match, "pathlib.Path": _b_path, "pathlib.PurePath": _b_path,
    "pathlib.PosixPath": _b_path, **{f"os.path.{n}": _b_path for n in _PATH_FUNCTIONS},
    **{name: _b_str_method for name in _METHODS if name.startswith("str.")},
    **{name: _b_list_method for name in _METHODS if name.startswith(("list.", "tuple."))},
    **{name: _b_dict_method for name in _METHODS if name.startswith("dict.")},
    "set.add": _b_set_method,
}

_STATEMENTS: dict[type[ast.stmt], Callable[[Interpreter, Any, Scope], None]] = {
    ast.Expr: Interpreter._s_expr,
    ast.Assign: Interpreter._s_assign,
    ast.AnnAssign: Interpreter._s_annassign,
    ast.AugAssign: Interpreter._s_augassign,
    ast.Delete: Interpreter._s_delete,
    ast.Global: Interpreter._s_global,
    ast.Nonlocal: Interpreter._s_global,
    ast.Pass: Interpreter._s_pass,
    ast.Return: Interpreter._s_return,
    ast.Break: Interpreter._s_break,
    ast.Continue: Interpreter._s_continue,
    ast.Raise: Interpreter._s_raise,
    ast.Assert: Interpreter._s_assert,
    ast.Import: Interpreter._s_import,
    ast.ImportFrom: Interpreter._s_import,
    ast.If: Interpreter._s_if,
    ast.Match: Interpreter._s_match,
    ast.For: Interpreter._s_for,
    ast.While: Interpreter._s_while,
    ast.Try: Interpreter._s_try,
    ast.With: Interpreter._s_with,
    ast.FunctionDef: Interpreter._s_function,
    ast.AsyncFunctionDef: Interpreter._s_function,
    ast.ClassDef: Interpreter._s_class,
}

_EXPRESSIONS: dict[type[ast.expr], Callable[[Interpreter, Any, Scope], Value]] = {
    ast.Constant: Interpreter._e_constant,
    ast.JoinedStr: Interpreter._e_joined,
    ast.Name: Interpreter._e_name,
    ast.Attribute: Interpreter._e_attribute,
    ast.Subscript: Interpreter._e_subscript,
    ast.BinOp: Interpreter._e_binop,
    ast.UnaryOp: Interpreter._e_unaryop,
    ast.BoolOp: Interpreter._e_boolop,
    ast.Compare: Interpreter._e_compare,
    ast.IfExp: Interpreter._e_ifexp,
    ast.List: Interpreter._e_list,
    ast.Tuple: Interpreter._e_list,
    ast.Set: Interpreter._e_list,
    ast.Dict: Interpreter._e_dict,
    ast.ListComp: Interpreter._e_comprehension,
    ast.SetComp: Interpreter._e_comprehension,
    ast.GeneratorExp: Interpreter._e_comprehension,
    ast.DictComp: Interpreter._e_comprehension,
    ast.NamedExpr: Interpreter._e_namedexpr,
    ast.Lambda: Interpreter._e_lambda,
    ast.Yield: Interpreter._e_yield,
    ast.YieldFrom: Interpreter._e_yield,
    ast.Call: Interpreter._e_call,
}


def evaluate_source(text: str, path: str = "main.py", limits: Limits | None = None,
                    env: Mapping[str, str | Unknown | None] | None = None,
                    ) -> tuple[RunResult, list[ExternalCall]]:
    """Run one file of source text on its own (for tests and tools); never raises."""
    from bot.analysis.source import parse_python

    parsed = parse_python(path, text)
    calls: list[ExternalCall] = []
    if not isinstance(parsed, Module):
        return RunResult(error=None), calls
    interp = Interpreter(lambda p: parsed if p == path else None, lambda p: p == path,
                         env=env, limits=limits)
    result = interp.run(path, calls.append)
    return result, calls

