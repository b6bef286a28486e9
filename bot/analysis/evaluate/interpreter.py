"""The interpreter: its entry points (a run of a test file, a call of one function), over
the parts that evaluate statements, expressions and modules."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
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
    iterate,
)
from bot.analysis.evaluate.expressions import ExpressionsMixin
from bot.analysis.evaluate.modules import ModulesMixin
from bot.analysis.evaluate.statements import StatementsMixin
from bot.analysis.source import Module
from bot.analysis.values import FuncV, ListV, Text, TupleV, Unknown, Value

log = logging.getLogger(__name__)


class _Failed(Enum):
    CALL = "a call that did not run to its end"


_FAILED: Final = _Failed.CALL


class Interpreter(StatementsMixin, ExpressionsMixin, ModulesMixin):
    """Evaluates modules of one repository revision for one platform.

    Module top levels are evaluated once and shared by every run; a run is one test file
    executed as ``__main__`` (see :meth:`run`). Its arguments are those of :class:`Core`.
    """

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

    def _call_tests(self, state: ModuleState) -> None:
        tests = [v for n, v in state.globals.items() if n.startswith("test") and isinstance(v, FuncV)]
        if tests:  # run as pytest runs them: how the file's own main ended does not count
            self.result.stopped = None
        for value in tests:
            for row in self._parametrize_rows(value):
                try:
                    self._invoke(value, [], row, None)
                except Raise as exc:  # (a function call lets no other signal out)
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

