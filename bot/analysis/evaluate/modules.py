"""Module loading, and what lets another platform's interpreter reuse a run.

Module top levels run once per interpreter and are shared by its runs. An interpreter keeps
track of what could make a run's result differ elsewhere: reads of the platform's variables,
modules whose top level depended on the run that loaded them, changes to a loaded module's
state (every mutable value a loaded module reaches is noted by ``id()``, kept alive so that
the number is not reused). A run that depended on none of it leaves a :class:`Footprint` of
the module state it read, and any interpreter of the revision that :meth:`ModulesMixin.holds`
it would give the same result.
"""

from __future__ import annotations

import ast
import logging
import posixpath
from collections.abc import Sequence

from bot.analysis.evaluate.core import Core, Footprint, ModuleState, Raise, Scope, Signal, scope_set
from bot.analysis.evaluate.modelled import external
from bot.analysis.source import Module
from bot.analysis.values import (
    Alternatives,
    Builtin,
    ClassV,
    DictV,
    FieldCall,
    FuncV,
    Instance,
    Lazy,
    ListV,
    ModuleV,
    SetV,
    Text,
    TupleV,
    Unknown,
    Value,
)

log = logging.getLogger(__name__)


class ModulesMixin(Core):
    """Finds, loads and imports the repository's modules, and tells what a run read of them."""

    # ----- loading ------------------------------------------------------------------------

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

    def _exec_module(self, state: ModuleState) -> None:
        state.status = "loading"
        state.globals.update({
            "__name__": Text.of(state.name), "__file__": Text.of(state.path),
        })
        scope = Scope(state.globals, None, state, persistent=self._loading > 0)
        try:
            self._block(state.module.tree.body, scope)
        except Raise as exc:
            self._stopped(state, exc)
        except Signal:
            pass
        finally:
            state.status = "done"

    def _stopped(self, state: ModuleState, exc: Raise) -> None:
        """The file being run (or one of its test functions) ended at a raise: what
        follows it, launches too, was never seen."""
        if state is self.main and self.result.stopped is None:
            self.result.stopped = exc.where

    # ----- finding and importing ----------------------------------------------------------

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
                    value: Value = found if found else external(alias.name)
                    scope_set(scope, alias.asname, value)
                else:
                    top = self._find(parts[:1], None) or self._folder(parts[0])
                    scope_set(scope, parts[0], top if top else external(parts[0]))
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
                scope_set(scope, bind, external(f"{node.module}.{alias.name}"))
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

    # ----- names of loaded modules --------------------------------------------------------

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

    # ----- sharing runs across interpreters -----------------------------------------------

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
