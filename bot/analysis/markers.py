"""CI registration markers (`register_rocm_ci(...)`), read from the syntax tree of a test."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from bot.analysis.findings import Finding, finding
from bot.analysis.source import Module

# The built-in marker signature, used when the repository's own definition is not found:
# sglang passes `disabled` as the 4th positional.
POSITIONAL = ("est_time", "suite", "nightly", "disabled")
KEYWORDS = frozenset({"est_time", "suite", "labels", "nightly", "disabled"})
NIGHTLY_PREFIX = "nightly-"


@dataclass(frozen=True, slots=True)
class Marker:
    """One registration of a test file in a CI suite."""

    path: str
    line: int
    func: str
    backend: str
    index: int  # occurrence of this function in the file, 0 for the first
    est_time: float | None
    suite: str | None
    labels: tuple[str, ...]
    nightly: bool
    disabled: str | None
    disabled_line: int | None  # the line of `disabled=...`, for inline comments
    # a test a workflow's job matrix lists (see :mod:`bot.analysis.ci.matrix`): its GPUs,
    # from the matrix entry, and the workflow and line of the entry
    gpus: int | None = None
    origin: tuple[str, int] | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        """What pairs a marker at the base with the same marker at the head."""
        return (self.path, self.func, self.index)

    @property
    def enabled(self) -> bool:
        return self.disabled is None

    @property
    def is_nightly(self) -> bool:
        return self.nightly or (self.suite or "").startswith(NIGHTLY_PREFIX)


UNRESOLVED = object()  # what a suite composer gives when the evaluator cannot decide it
Composer = Callable[[Mapping[str, object]], object]  # the arguments -> the suite (str, None)


@dataclass(frozen=True)
class Signature:
    """What a marker function accepts and how it names the suite: read from the repository's
    own ``def`` of it (see :mod:`bot.analysis.definitions`), or the built-in one."""

    positional: tuple[str, ...]  # the parameters a call may pass by position, in order
    keywords: frozenset[str]  # the parameters a call may pass by name
    required: frozenset[str]  # the parameters without a default
    var_positional: bool = False  # `*args`
    var_keyword: bool = False  # `**kwargs`
    where: str | None = None  # `path:line` of the definition; None for the built-in one
    compose: Composer | None = None  # None: the suite is the `suite` argument

    def suite(self, values: Mapping[str, object], given: Collection[str]) -> str | None:
        """The suite a call with these (literal) arguments registers the test in; ``given``
        names every argument the call passes (literal or not). A call that leaves out a
        required argument is not composed: Python would reject it."""
        if self.compose is None:
            found = values.get("suite")
        elif self.required.issubset(given):
            found = self.compose(values)
        else:
            found = None
        return found if isinstance(found, str) else None


BUILTIN = Signature(POSITIONAL, KEYWORDS, frozenset({"est_time", "suite"}))


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def find_markers(
    module: Module, names: Mapping[str, str],
    signature: Callable[[str], Signature] | None = None,
) -> tuple[list[Marker], list[Finding]]:
    """Every top-level marker call of a module, and REG002 for each argument it cannot use.

    ``signature`` gives each marker function's signature (the repository's definition);
    without it every marker is read with the built-in one.
    """
    markers: list[Marker] = []
    problems: list[Finding] = []
    seen: dict[str, int] = {}
    for stmt in module.tree.body:
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            continue
        call = stmt.value
        func = _called_name(call)
        if func is None or func not in names:
            continue
        index = seen.get(func, 0)
        seen[func] = index + 1
        accepts = signature(func) if signature is not None else BUILTIN
        marker, errors = _read_marker(module, call, func, names[func], index, accepts)
        markers.append(marker)
        problems.extend(errors)
    return markers, problems


def _read_marker(
    module: Module, call: ast.Call, func: str, backend: str, index: int, accepts: Signature,
) -> tuple[Marker, list[Finding]]:
    values: dict[str, object] = {}
    lines: dict[str, int] = {}
    errors: list[Finding] = []
    rejects = (f"its definition at `{accepts.where}` would reject the call" if accepts.where else
               "the built-in marker signature rejects it (the repository's own definition of "
               "the function was not found)")

    def reject(node: ast.AST, why: str, literal: bool = True) -> None:
        line = getattr(node, "lineno", call.lineno)
        because = ("the CI collector reads markers without running the file, so every argument "
                   "must be a literal" if literal else rejects)
        errors.append(finding("REG002", module.path, line, f"`{func}` {why}: {because}."))

    given = {accepts.positional[i] for i in range(min(len(call.args), len(accepts.positional)))}
    given.update(k.arg for k in call.keywords if k.arg in accepts.keywords or (
        k.arg is not None and accepts.var_keyword))
    for position, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            reject(arg, f"unpacks `{module.segment(arg)}`")
        elif position < len(accepts.positional):
            _take(module, accepts.positional[position], arg, values, lines, reject)
        elif accepts.var_positional:
            _take(module, f"*{position}", arg, values, lines, reject)
        else:
            reject(arg, f"takes at most {len(accepts.positional)} positional arguments", False)
    for keyword in call.keywords:
        if keyword.arg is None:
            reject(keyword.value, f"unpacks `**{module.segment(keyword.value)}`")
        elif keyword.arg not in accepts.keywords and not accepts.var_keyword:
            reject(keyword, f"has an unknown keyword `{keyword.arg}`", False)
        elif keyword.arg in values:
            reject(keyword, f"gets `{keyword.arg}` twice", False)
        else:
            _take(module, keyword.arg, keyword.value, values, lines, reject)
    for required in sorted(accepts.required, key=_order(accepts)):
        if required not in values and not any(f"`{required}`" in e.message for e in errors):
            reject(call, f"has no `{required}`", False)

    est = values.get("est_time")
    labels = values.get("labels")
    disabled = values.get("disabled")
    marker = Marker(
        path=module.path,
        line=call.lineno,
        func=func,
        backend=backend,
        index=index,
        est_time=float(est) if isinstance(est, int | float) and not isinstance(est, bool) else None,
        suite=accepts.suite(values, given),
        labels=tuple(labels) if isinstance(labels, list | tuple) else (),
        nightly=values.get("nightly") is True,
        disabled=disabled if isinstance(disabled, str) else None,
        disabled_line=lines.get("disabled"),
    )
    return marker, errors


def _order(accepts: Signature) -> Callable[[str], tuple[int, str]]:
    """Parameters in the definition's order (messages come out as the signature reads)."""
    position = {name: i for i, name in enumerate(accepts.positional)}
    return lambda name: (position.get(name, len(position)), name)


_EXPECTED: dict[str, tuple[str, tuple[type, ...]]] = {
    "est_time": ("a number", (int, float)),
    "suite": ("a string", (str,)),
    "nightly": ("True or False", (bool,)),
    "disabled": ("a reason string or None", (str, type(None))),
    "labels": ("a list of strings or None", (list, tuple, type(None))),
}


def _finite(value: float) -> bool:
    """A number a float can hold: `1e999` is infinite and `10**400` does not convert."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _take(module: Module, name: str, node: ast.expr, values: dict[str, object],
          lines: dict[str, int], reject: object) -> None:
    assert callable(reject)
    try:
        value = node.value if isinstance(node, ast.Constant) else ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        reject(node, f"argument `{name}` is `{module.segment(node)}`, not a literal")
        return
    if name not in _EXPECTED:  # a parameter of the repository's own: any literal
        values[name] = value
        lines[name] = node.lineno
        return
    what, types = _EXPECTED[name]
    bad_bool = name == "est_time" and isinstance(value, bool)
    bad_labels = name == "labels" and isinstance(value, list | tuple) and not all(
        isinstance(v, str) for v in value
    )
    if not isinstance(value, types) or bad_bool or bad_labels:
        reject(node, f"argument `{name}` must be {what}, not `{module.segment(node)}`")
        return
    if name == "est_time" and isinstance(value, int | float) and not _finite(value):
        reject(node, f"argument `est_time` must be a finite number of seconds, not `{module.segment(node)}`")
        return
    values[name] = value
    lines[name] = node.lineno
