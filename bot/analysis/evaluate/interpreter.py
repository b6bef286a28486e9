"""The interpreter: its entry points (a run of a test file, a call of one function), over
the parts that evaluate statements, expressions and modules."""

from __future__ import annotations

import ast
import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping
from enum import Enum
from typing import Final, Literal

from bot.analysis.evaluate.core import (
    Budget,
    Deferred,
    ExternalCall,
    Limits,
    ModuleState,
    Raise,
    RunResult,
    Signal,
    bind,
    iterate,
)
from bot.analysis.evaluate.expressions import ExpressionsMixin
from bot.analysis.evaluate.modules import ModulesMixin
from bot.analysis.evaluate.statements import StatementsMixin
from bot.analysis.source import Module
from bot.analysis.values import (
    ClassV,
    DictV,
    FuncV,
    Instance,
    Lazy,
    ListV,
    SetV,
    Text,
    TupleV,
    Unknown,
    Value,
)

log = logging.getLogger(__name__)


class _Failed(Enum):
    CALL = "a call that did not run to its end"


_FAILED: Final = _Failed.CALL
# of a decorator: whether CI skips what it decorates, or the condition not known that decides it
Skips = Callable[[ast.expr], tuple[bool, str | None]]


class Interpreter(StatementsMixin, ExpressionsMixin, ModulesMixin):
    """Evaluates modules of one repository revision for one platform.

    Module top levels are evaluated once and shared by every run; a run is one test file
    executed as ``__main__`` (see :meth:`run`). Its arguments are those of :class:`Core`.
    """

    # the tests a run with cases ran, and what each changed that another may read
    _units: list[tuple[object, str]]
    _changers: list[tuple[tuple[object, str], str]]

    def run(self, path: str, on_call: Callable[[ExternalCall], None] | None = None,
            tests: bool = True, cases: Skips | None = None) -> RunResult:
        """Execute ``path`` as ``__main__``; then, when it made no external call, its
        ``test_*`` functions (pytest style, with ``parametrize`` rows). Never raises.

        ``cases``: run its test functions whatever the module did, and its test case
        classes as unittest runs them (see :meth:`_call_cases`); the callable says of a
        decorator whether CI skips what it decorates, or the condition that decides it."""
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
                if cases is not None:
                    self._realize_all(state.globals)  # what a test changes is seen as such
                    self._units, self._changers = [], []
                    self._call_tests(state, watch=True)
                    self._call_cases(state, cases)
                    self.result.order = self._order()
                elif tests and not calls:
                    self._call_tests(state)
        except Budget:
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

    def release_run(self) -> None:
        """Say the values of the last run are no longer needed (``module_globals("__main__")``
        is then empty). Its file's functions and their scopes refer to each other; unless a
        loaded module may refer to them (:attr:`dirty`), the cycle is broken here, so they
        and the file's syntax tree go as soon as nothing else holds them."""
        state, self.main = self.main, None
        if state is not None and not self.dirty:
            state.globals.clear()
        elif state is not None:
            self._kept.append(state)  # emptied by release()

    def release(self) -> None:
        """Say the interpreter is done with: every module state is emptied. A module's
        functions refer to its scope and its scope to them, and the states to the
        interpreter that owns them, so a revision's values and syntax trees would otherwise
        be freed only when the cycle collector walks them all (a seventh of an audit's time
        on a real repository); emptied, they go as soon as nothing else holds them."""
        self.release_run()
        for state in [*self._modules.values(), *self._kept]:
            if state is not None:
                state.globals.clear()
                state.owner = None
        self._modules.clear()
        self._kept.clear()
        self._found.clear()
        self._shared.clear()

    def module_globals(self, path: str) -> dict[str, Value]:
        """The variables of a module evaluated so far (``"__main__"``: the last test run)."""
        if path == "__main__" or (self.main is not None and path == self.main.path):
            if self.main is None:
                return {}
            try:
                self._realize_all(self.main.globals)
            except (Budget, RecursionError):  # past the run's limit: what is left is unknown
                for name, value in list(self.main.globals.items()):
                    if type(value) is Deferred:
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
            self._function_results[key] = result
        return None if result is _FAILED else result

    def _call_function(self, path: str, name: str) -> Text | Literal[_Failed.CALL] | None:
        try:
            state = self._state(path, path)
            fn = state.globals.get(name) if state is not None else None
            if not isinstance(fn, FuncV):
                return None
            value = self._invoke(fn, [], {}, None)
        except (Budget, Signal, RecursionError):
            return _FAILED
        except Exception as exc:  # a bug here must not stop the analysis
            log.warning("evaluator error in %s: %r", path, exc, exc_info=True)
            return _FAILED
        if isinstance(value, Text):
            return value
        items = iterate(value) if isinstance(value, ListV | TupleV) else None
        if items is None or not all(isinstance(i, Text) for i in items):
            return None
        out = Text(())
        for item in items:
            assert isinstance(item, Text)
            out = out + item + Text.of(" ")
        return out

    def _call_tests(self, state: ModuleState, watch: bool = False) -> None:
        """The file's ``test*`` functions, as pytest runs them; ``watch``: noting what one
        changes that another may read (see :meth:`_call_cases`)."""
        tests = [v for n, v in state.globals.items() if n.startswith("test") and isinstance(v, FuncV)]
        if watch:  # the fixtures the tests ask for run before them (in any order)
            tests[:0] = [v for v in state.globals.values() if isinstance(v, FuncV) and
                         v.path == state.path and _is_fixture(v)]
        if tests:  # run as pytest runs them: how the file's own main ended does not count
            self.result.stopped = None
        for value in tests:
            for index, row in enumerate(self._parametrize_rows(value)):
                def test(value: FuncV = value, row: dict[str, Value] = row) -> None:
                    self._invoke(value, [], row, None)

                try:
                    if watch:
                        self._unit(state, test, (value, str(index)))
                    else:
                        test()
                except Raise as exc:  # (a function call lets no other signal out)
                    self._stopped(state, exc)

    def _call_cases(self, state: ModuleState, skips: Skips) -> None:
        """Each test case class the file defines (one with a ``TestCase`` among its bases),
        as unittest runs it: ``setUpClass`` once, then per ``test*`` method, in name order,
        a new instance, its ``setUp`` and the method. A class or method CI skips is not run;
        one skipped under a condition not known runs under that condition (a guard).

        Test runners differ in the order they take tests in (unittest by name, pytest as
        written, one test on its own when asked), so a test that changes what another one
        may read (the module's variables and what they hold, another class, a loaded module)
        makes every order's result possible: :attr:`RunResult.order` says so."""
        for value in list(state.globals.values()):
            if not (isinstance(value, ClassV) and value.path == state.path and _is_case(value)):
                continue
            guards = self._skipped(value, skips)
            if guards is not None:
                with self._under(guards):
                    self._run_case(state, value, skips)

    @contextlib.contextmanager
    def _under(self, guards: list[str]) -> Iterator[None]:
        """Run what the block runs under the conditions ``guards`` as well."""
        depth = len(self.guards)
        self.guards.extend(guards)
        try:
            yield
        finally:
            del self.guards[depth:]

    def _run_case(self, state: ModuleState, cls: ClassV, skips: Skips) -> None:
        setup_class = cls.lookup("setUpClass")
        if isinstance(setup_class, FuncV):
            try:
                self._unit(state, lambda: self._invoke(bind(setup_class, cls), [], {}, None),
                           (cls, "setUpClass"))
            except Raise:
                return  # unittest runs none of the class's tests
        names = sorted({n for c in cls.mro() for n in c.attrs if n.startswith("test")})
        for name in names:
            method = cls.lookup(name)
            if not isinstance(method, FuncV) or method.kind != "function":
                continue
            guards = self._skipped(method, skips)
            if guards is None:
                continue
            instance = Instance(cls, {})
            setup = cls.lookup("setUp")

            def test(method: FuncV = method, instance: Instance = instance,
                     setup: Value | None = setup) -> None:
                if isinstance(setup, FuncV):
                    self._invoke(bind(setup, instance), [], {}, None)
                self._invoke(bind(method, instance), [], {}, None)

            with self._under(guards), contextlib.suppress(Raise):  # the next test runs
                self._unit(state, test, (cls, name))

    def _unit(self, state: ModuleState, run: Callable[[], object], key: tuple[object, str]) -> None:
        """Run one test, or a class's set-up (``key``: the class or function, and the
        method's name), noting what it changes of what was there before it."""
        self._units.append(key)
        before = _reachable(state.globals)
        # (a name still to be read in is replaced when first read: the `global` statement
        # is what may rebind it)
        names = {n: v for n, v in state.globals.items() if not isinstance(v, Deferred | Lazy)}
        rebinds = self.global_statements
        changed: dict[int, object] = {}
        self._changing.append(changed)
        try:
            run()
        finally:
            self._changing.remove(changed)
            own = key[0] if key[1] == "setUpClass" else None  # its class is its to set up
            what = None
            if before is None:
                what = "more values than are followed"
            elif self.global_statements != rebinds:
                what = "a variable of the module (`global`)"
            elif any(k in self._shared for k in changed):
                what = "a loaded module's values"
            else:
                name = next((n for n, v in names.items() if state.globals.get(n) is not v), None)
                touched = next((o for k, o in changed.items() if k in before and o is not own),
                               None)
                if name is not None:
                    what = f"`{name}`"
                elif touched is not None:
                    kind = {ListV: "list", DictV: "dict", SetV: "set", ClassV: "class",
                            Instance: "object"}.get(type(touched), "value")
                    what = f"a {kind} the tests share"
            if what is not None:
                self._changers.append((key, what))

    def _order(self) -> str | None:
        """What a test changed that another test of the file may read, whichever of them
        runs first; a class's set-up always comes before its own tests."""
        for (owner, name), what in self._changers:
            for other in self._units:
                if other == (owner, name):
                    continue
                if name == "setUpClass" and other[0] is owner:
                    continue  # its own tests: they always run after it
                if other == (owner, "setUpClass"):
                    continue
                return what
        return None

    @staticmethod
    def _skipped(value: ClassV | FuncV, skips: Skips) -> list[str] | None:
        """None when CI skips ``value``; else the conditions not known under which it is
        skipped, as guards (``not (cond)``)."""
        node = value.node if isinstance(value, FuncV) else None
        decorators = node.decorator_list if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) \
            else (value.decorators if isinstance(value, ClassV) else [])
        guards: list[str] = []
        for decorator in decorators:
            skipped, cond = skips(decorator)
            if skipped:
                return None
            if cond is not None:
                guards.append(f"not ({cond})")
        return guards

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


_MAX_REACHED = 50_000


def _reachable(variables: dict[str, Value]) -> set[int] | None:
    """The ids of the values that can be changed in place reachable from ``variables``
    (None past :data:`_MAX_REACHED`)."""
    seen: set[int] = set()
    todo: list[object] = list(variables.values())
    while todo:
        value = todo.pop()
        if id(value) in seen:
            continue
        if isinstance(value, ListV | TupleV):
            todo.extend(value.items)
        elif isinstance(value, DictV):
            todo.extend(v for _, v in value.items.values())
        elif isinstance(value, SetV):
            todo.extend(value.items.values())
        elif isinstance(value, Instance):
            todo.extend(value.fields.values())
        elif isinstance(value, ClassV):
            todo.extend(value.attrs.values())
        elif isinstance(value, FuncV):
            todo.extend((*value.defaults, *value.kw_defaults.values()))
            if value.bound is not None:
                todo.append(value.bound)
            continue  # (a function is not changed in place)
        else:
            continue
        seen.add(id(value))
        if len(seen) > _MAX_REACHED:
            return None
    return seen


def _is_fixture(fn: FuncV) -> bool:
    """Whether pytest takes the function for a fixture (``@pytest.fixture``, with or
    without arguments)."""
    node = fn.node
    if isinstance(node, ast.Lambda):
        return False
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else \
            target.id if isinstance(target, ast.Name) else ""
        if name in ("fixture", "yield_fixture"):
            return True
    return False


def _is_case(cls: ClassV) -> bool:
    """Whether unittest would collect the class: ``TestCase`` (or a class whose name ends
    so, from outside the repository) among its bases, itself or inherited."""
    for known in cls.mro():
        for base in known.bases:
            if isinstance(base, Unknown) and base.text.rsplit(".", 1)[-1].endswith("TestCase"):
                return True
    return False


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

