"""The repository's own definitions of its marker functions.

A test imports its marker (``from sglang.test.ci.ci_register import register_amd_ci``);
the ``def`` there says what a call may pass: the parameters it takes by position, in
order, those it takes by name, and those without a default. How the suite is named comes
from the same module, evaluated statically (:mod:`bot.analysis.evaluate`) with the call's
literal arguments: the marker function's own result when it returns one, else a function
or method of the module named for the suite that reads the marker's parameters (SGLang's
``CIRegistry.effective_suite`` composes ``f"{stage}-test-{runner_config}"``). A marker whose
definition is not found is read with the built-in signature.
"""

from __future__ import annotations

import ast
import copy
import posixpath
from collections.abc import Callable, Iterator, Mapping, Sequence

from bot.analysis.evaluate import Interpreter, Limits
from bot.analysis.imports import import_statements
from bot.analysis.markers import BUILTIN, UNRESOLVED, Signature
from bot.analysis.source import Module, Sources, parse_python
from bot.analysis.values import NOT_PLAIN, python

MAX_STEPS = 20_000  # evaluator steps per suite composed
_RESULT = "__rocmbot_suite__"
_COMPOSER = "__rocmbot_suite_of__"

Function = ast.FunctionDef | ast.AsyncFunctionDef


class Definitions:
    """Marker definitions of one revision, each module resolved and each suite composed once."""

    def __init__(self, sources: Sources, roots: Sequence[str]) -> None:
        self.sources = sources
        self.roots = tuple(roots)
        self._modules: dict[tuple[object, ...], str | None] = {}
        self._signatures: dict[tuple[str, str], Signature | None] = {}
        self._suites: dict[tuple[object, ...], object] = {}
        self._synthetic: dict[str, Module] = {}
        self._interp: Interpreter | None = None

    def release(self) -> None:
        """Empty the interpreter that evaluates suite expressions (see
        :meth:`Interpreter.release`); a later lookup makes a new one."""
        interp, self._interp = self._interp, None
        if interp is not None:
            interp.release()

    def lookup(self, module: Module) -> Callable[[str], Signature]:
        """The signature of each marker function as ``module`` (a test) sees it."""
        return lambda func: self.signature(module, func)

    def signature(self, module: Module, func: str) -> Signature:
        """The definition of ``func`` the test module uses, or the built-in signature."""
        if _defined_here(module, func) is not None:
            return self._signature(module.path, func) or BUILTIN
        for stmt in import_statements(module):
            if not isinstance(stmt, ast.ImportFrom):
                continue
            for alias in stmt.names:
                if (alias.asname or alias.name) == func:
                    path = self._module_of(module.path, stmt)
                    found = self._signature(path, alias.name) if path else None
                    return found or BUILTIN
        return BUILTIN

    # ----- where a definition lives -----------------------------------------------------------

    def _module_of(self, importer: str, stmt: ast.ImportFrom) -> str | None:
        """The file ``stmt`` imports names from: under an import root, else (an absolute
        import) the one file anywhere whose path ends as the module's name says."""
        parts = stmt.module.split(".") if stmt.module else []
        if stmt.level:
            package = posixpath.dirname(importer).split("/") if "/" in importer else []
            up = stmt.level - 1
            if up > len(package):
                return None
            folder = "/".join([*package[: len(package) - up], *parts])
            key: tuple[object, ...] = ("relative", folder)
            if key not in self._modules:
                self._modules[key] = self._first(_files(folder))
            return self._modules[key]
        key = ("absolute", stmt.module)
        if key not in self._modules:
            base = "/".join(parts)
            found = self._first(f for root in self.roots
                                for f in _files(base if root == "." else f"{root}/{base}"))
            self._modules[key] = found or self._anywhere(base)
        return self._modules[key]

    def _first(self, paths: Iterator[str] | list[str]) -> str | None:
        return next((p for p in paths if self.sources.exists(p)), None)

    def _anywhere(self, base: str) -> str | None:
        """A module outside the import roots (SGLang's package lives under `python/`)."""
        tree = self.sources.tree
        found = [*tree.list(f"**/{base}.py"), *tree.list(f"**/{base}/__init__.py")]
        return min(found, key=lambda p: (p.count("/"), p)) if found else None

    def _signature(self, path: str, func: str) -> Signature | None:
        """The definition of ``func`` in the module at ``path``, following re-exports
        (`from .ci_register import register_amd_ci` in a package's `__init__.py`)."""
        key = (path, func)
        if key not in self._signatures:
            self._signatures[key] = None  # while it is read: an import cycle finds nothing
            self._signatures[key] = self._read(path, func)
        return self._signatures[key]

    def _read(self, path: str, func: str) -> Signature | None:
        module = self.sources.module(path)
        if not isinstance(module, Module):
            return None
        fn = _defined_here(module, func)
        if fn is not None:
            return self._from_def(module, fn)
        for stmt in import_statements(module):
            if isinstance(stmt, ast.ImportFrom) and any(
                (a.asname or a.name) == func for a in stmt.names
            ):
                name = next(a.name for a in stmt.names if (a.asname or a.name) == func)
                source = self._module_of(path, stmt)
                if source is not None and source != path:
                    return self._signature(source, name)
        return None

    # ----- what it accepts, and how it names the suite -----------------------------------------

    def _from_def(self, module: Module, fn: Function) -> Signature:
        args = fn.args
        ordered = [*args.posonlyargs, *args.args]
        first_default = len(ordered) - len(args.defaults)
        required = {a.arg for i, a in enumerate(ordered) if i < first_default}
        required |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None}
        params = [a.arg for a in (*ordered, *args.kwonlyargs)]
        plan = _plan(module, fn, params)
        compose = None
        if plan is not None:
            appended, reads = plan
            posonly = tuple(a.arg for a in args.posonlyargs)

            def compose(values: Mapping[str, object]) -> object:
                return self._compose(module, appended, posonly, reads, frozenset(params), values)
        return Signature(
            positional=tuple(a.arg for a in ordered),
            keywords=frozenset(a.arg for a in (*args.args, *args.kwonlyargs)),
            required=frozenset(required),
            var_positional=args.vararg is not None,
            var_keyword=args.kwarg is not None,
            where=f"{module.path}:{fn.lineno}",
            compose=compose,
        )

    def _compose(self, module: Module, appended: str, posonly: tuple[str, ...],
                 reads: frozenset[str], params: frozenset[str], values: Mapping[str, object]) -> object:
        """The suite for these arguments: those the composer reads, the positional-only ones
        (they cannot be left out before another), and any a `**kwargs` takes. Extra
        positional arguments (`*args`) are not passed on."""
        given = {k: v for k, v in values.items()
                 if k in reads or k in posonly or (k not in params and not k.startswith("*"))}
        key = (module.path, appended, tuple(sorted((k, repr(v)) for k, v in given.items())))
        if key not in self._suites:
            self._suites[key] = self._evaluate(module, appended, _arguments(posonly, given))
        return self._suites[key]

    def _evaluate(self, module: Module, appended: str, arguments: str) -> object:
        """Run the defining module with one more line that composes the suite."""
        path = posixpath.join(posixpath.dirname(module.path), f"__rocmbot_marker_{len(self._suites)}__.py")
        text = f"{module.text}\n\n{appended}\n{_RESULT} = {_COMPOSER}({arguments})\n"
        parsed = parse_python(path, text)
        if not isinstance(parsed, Module):  # pragma: no cover - both parts parsed already
            return UNRESOLVED
        self._synthetic[path] = parsed
        interp = self._interpreter()
        try:
            result = interp.run(path, tests=False)
            value = interp.module_globals("__main__").get(_RESULT)
        finally:
            interp.release_run()
            del self._synthetic[path]
        if result.exhausted or result.error or value is None:
            return UNRESOLVED
        plain = python(value)
        return UNRESOLVED if plain is NOT_PLAIN else plain

    def _interpreter(self) -> Interpreter:
        if self._interp is None:
            def load(path: str) -> Module | None:
                found = self._synthetic.get(path) or self.sources.module(path)
                return found if isinstance(found, Module) else None

            self._interp = Interpreter(
                load, lambda p: p in self._synthetic or self.sources.exists(p),
                self.roots, limits=Limits(max_steps=MAX_STEPS),
            )
        return self._interp


def _files(base: str) -> list[str]:
    return [f"{base}.py", f"{base}/__init__.py"] if base else []


def _defined_here(module: Module, func: str) -> Function | None:
    for stmt in module.tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == func:
            return stmt
    return None


def _own_nodes(fn: Function) -> Iterator[ast.AST]:
    """The nodes of a function's body, not of the functions and classes nested in it."""
    nested = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
    stack: list[ast.AST] = [stmt for stmt in fn.body if not isinstance(stmt, nested)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, nested))


def _returns_value(fn: Function) -> bool:
    return any(
        isinstance(node, ast.Return) and node.value is not None
        and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        for node in _own_nodes(fn)
    )


def _plan(module: Module, fn: Function, params: list[str]) -> tuple[str, frozenset[str]] | None:
    """The code that composes the suite, as a function ``__rocmbot_suite_of__`` taking the
    marker's parameters, and the parameters it reads; None when the suite is just the
    ``suite`` argument."""
    known = set(params)
    if _returns_value(fn):
        reads = {n.id for n in _own_nodes(fn) if isinstance(n, ast.Name) and n.id in known}
        signature = ast.unparse(_optional(fn.args))
        call = f"def {_COMPOSER}({signature}):\n    return {fn.name}({_forward(fn.args)})"
        return call, frozenset(reads)
    for owner, candidate in _suite_functions(module):
        this = _self_name(candidate) if owner else None
        body = _Unself(this, known).visit_body(candidate.body)
        reads = {n.id for stmt in body for n in ast.walk(stmt)
                 if isinstance(n, ast.Name) and n.id in known}
        if reads - {"suite"}:
            composer = ast.FunctionDef(
                name=_COMPOSER, args=_optional(fn.args), body=body, decorator_list=[], returns=None,
            )
            return ast.unparse(ast.fix_missing_locations(composer)), frozenset(reads)
    return None


def _optional(args: ast.arguments) -> ast.arguments:
    """A copy of a signature where every parameter has a default (None where it had none):
    the composer is called with only the arguments it reads."""
    out = copy.deepcopy(args)
    ordered = len(out.posonlyargs) + len(out.args)
    out.defaults = [ast.Constant(None)] * (ordered - len(out.defaults)) + out.defaults
    out.kw_defaults = [d if d is not None else ast.Constant(None) for d in out.kw_defaults]
    return out


def _forward(args: ast.arguments) -> str:
    """Arguments that pass a function's own parameters on to another of the same signature."""
    out = [a.arg for a in args.posonlyargs]
    out += [f"{a.arg}={a.arg}" for a in (*args.args, *args.kwonlyargs)]
    if args.vararg is not None:
        out.insert(len(args.posonlyargs), f"*{args.vararg.arg}")
    if args.kwarg is not None:
        out.append(f"**{args.kwarg.arg}")
    return ", ".join(out)


def _suite_functions(module: Module) -> Iterator[tuple[bool, Function]]:
    """Functions and methods of a module whose name says they give a suite, in order;
    whether each is a method."""
    for stmt in module.tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and "suite" in stmt.name:
            yield False, stmt
        elif isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and "suite" in item.name:
                    yield True, item


def _self_name(fn: Function) -> str | None:
    names = [d.id for d in fn.decorator_list if isinstance(d, ast.Name)]
    if "staticmethod" in names:
        return None
    ordered = [*fn.args.posonlyargs, *fn.args.args]
    return ordered[0].arg if ordered else None


class _Unself(ast.NodeTransformer):
    """``self.stage`` -> ``stage`` for the marker's parameters, on a copy of a method body."""

    def __init__(self, this: str | None, params: set[str]) -> None:
        self.this = this
        self.params = params

    def visit_body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        return [self.visit(copy.deepcopy(stmt)) for stmt in body]

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == self.this and node.attr in self.params:
            return ast.copy_location(ast.Name(id=node.attr, ctx=node.ctx), node)
        return self.generic_visit(node)


def _arguments(posonly: tuple[str, ...], given: Mapping[str, object]) -> str:
    """A call's arguments as source: positional-only ones in order (up to the first not
    given), the others by name. The values are literals, so ``repr`` writes them back."""
    out: list[str] = []
    for name in posonly:
        if name not in given:
            break
        out.append(repr(given[name]))
    out += [f"{k}={v!r}" for k, v in given.items() if k not in posonly]
    return ", ".join(out)
