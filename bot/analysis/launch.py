"""Launch resolution and the PAR rules: does each test's parallel layout fit its runner?

For one marker, the test file is evaluated (see :mod:`bot.analysis.evaluate`) as its CI
would run it on the marker's platform; every training command it hands to a launcher
(``U.execute_train(train_args=...)``, or any call the evaluator cannot follow that is given
the trainer's flags) is one launch. The model script named by ``MODEL_TYPE`` adds its flags
first; later flags win. Each launch is checked by the PAR rules (:mod:`bot.analysis.par`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from weakref import WeakKeyDictionary

from bot.analysis import par
from bot.analysis.evaluate import ExternalCall, Interpreter, Limits, RunResult
from bot.analysis.findings import Finding, finding
from bot.analysis.flags import (
    CANONICAL,
    LAUNCH_FLAGS,
    Parsed,
    Setting,
    Token,
    has_flag,
    parse,
    shell_text,
    text_tokens,
)
from bot.analysis.markers import Marker
from bot.analysis.report import Table
from bot.analysis.snapshot import Snapshot
from bot.analysis.source import Module
from bot.analysis.values import Const, ListV, Text, TupleV, Unknown, Value, python

__all__ = ["LaunchOutcome", "Table", "analyze_launch", "compare"]

log = logging.getLogger(__name__)

Signature = tuple[tuple[tuple[str, object], ...], ...]


@dataclass(frozen=True)
class LaunchOutcome:
    """What resolving one marker's launches gave.

    ``signature`` is a hashable summary of every resolved launch (None when nothing was
    resolved), ``files`` the repository files read beyond the test's imports (a model script,
    say), ``table`` the launch grid for the summary, ``launches`` the resolved launches.
    """

    signature: Signature | None = None
    findings: list[Finding] = field(default_factory=list)
    files: tuple[str, ...] = ()
    table: Table | None = None
    launches: tuple[par.Launch, ...] = ()

    @classmethod
    def empty(cls) -> LaunchOutcome:
        return cls()


@dataclass(slots=True)
class _Raw:
    """One launch call as the evaluator saw it."""

    call: ExternalCall
    tokens: list[Token]
    model_tokens: list[Token]
    model_files: tuple[str, ...]
    model_unknown: Unknown | None


@dataclass(slots=True)
class _Run:
    result: RunResult
    launches: list[_Raw]


class _Cache:
    """Per snapshot: one interpreter per platform (module top levels evaluated once) and one
    run per test file and platform."""

    def __init__(self) -> None:
        self.interpreters: dict[str, Interpreter] = {}
        self.runs: dict[tuple[str, str], _Run] = {}


_CACHES: WeakKeyDictionary[Snapshot, _Cache] = WeakKeyDictionary()


def _cache(snapshot: Snapshot) -> _Cache:
    found = _CACHES.get(snapshot)
    if found is None:
        found = _Cache()
        _CACHES[snapshot] = found
    return found


def _interpreter(snapshot: Snapshot, backend: str) -> Interpreter:
    cache = _cache(snapshot)
    if backend not in cache.interpreters:
        settings = snapshot.config.launch
        env: dict[str, str | None] = dict(settings.env)
        for name, values in settings.platform_env.items():
            env[name] = values.get(backend)  # type: ignore[call-overload]

        def load(path: str) -> Module | None:
            module = snapshot.sources.module(path)
            return module if isinstance(module, Module) else None

        cache.interpreters[backend] = Interpreter(
            load, snapshot.sources.exists, snapshot.config.python_roots, env,
            frozenset(settings.sinks), frozenset(settings.quiet_calls),
            Limits(settings.max_steps, settings.max_depth),
        )
    return cache.interpreters[backend]


def _command(call: ExternalCall) -> Text:
    parts: list[Value] = list(call.args) + [v for k, v in call.keywords.items()]
    out = Text(())
    for value in parts:
        for text in _texts(value):
            out = out + text + Text.of(" ")
    return out


def _texts(value: Value) -> list[Text]:
    if isinstance(value, Text):
        return [value]
    if isinstance(value, ListV | TupleV):
        return [t for item in value.items for t in _texts(item)]
    return []


def _run(snapshot: Snapshot, path: str, backend: str) -> _Run:
    cache = _cache(snapshot)
    key = (path, backend)
    if key in cache.runs:
        return cache.runs[key]
    interp = _interpreter(snapshot, backend)
    calls: list[ExternalCall] = []
    result = interp.run(path, calls.append)
    launches: list[_Raw] = []
    for call in calls:
        tokens = text_tokens(_command(call))
        wanted = None if call.named_sink else LAUNCH_FLAGS
        if not has_flag(tokens, wanted):
            continue
        model_tokens, files, unknown = _model(snapshot, interp, call)
        launches.append(_Raw(call, tokens, model_tokens, files, unknown))
    run = _Run(result, launches)
    cache.runs[key] = run
    return run


def _model_type(interp: Interpreter, snapshot: Snapshot, call: ExternalCall) -> Value | None:
    settings = snapshot.config.launch
    for name in settings.model_type_keywords:
        if name in call.keywords:
            return call.keywords[name]
    for module_path in dict.fromkeys([call.module, "__main__"]):
        variables = interp.module_globals(module_path)
        for name in settings.model_type_names:
            if name in variables:
                return variables[name]
    return None


def _model(snapshot: Snapshot, interp: Interpreter,
           call: ExternalCall) -> tuple[list[Token], tuple[str, ...], Unknown | None]:
    value = _model_type(interp, snapshot, call)
    if value is None or (isinstance(value, Const) and value.value is None):
        return [], (), None
    name = python(value)
    if not isinstance(name, str):
        text = value.text if isinstance(value, Unknown) else "the model type"
        origin = value.origin if isinstance(value, Unknown) else None
        return [], (), Unknown(text, origin)
    if not name or ".." in name or name.startswith("/"):
        return [], (), None
    settings = snapshot.config.launch
    path = settings.model_script.replace("{MODEL_TYPE}", name)
    if path.endswith(".py"):
        flags = interp.call_function(path, settings.model_function)
        if flags is None:
            return [], (path,), None
        return text_tokens(flags), (path,), None
    script = snapshot.sources.text(path)
    if not isinstance(script, str):
        return [], (path,), None
    return text_tokens(shell_text(script, path)), (path,), None


def analyze_launch(snapshot: Snapshot, marker: Marker,
                   base: LaunchOutcome | None = None) -> LaunchOutcome:
    """Resolve a marker's launches at one revision and check them (never raises).

    With ``base`` (the same marker's outcome at the PR's base), fixes prefer the parameters
    the PR changed.
    """
    try:
        return _analyze(snapshot, marker, base)
    except Exception:  # a bug in the checker must not stop the rest of the analysis
        log.warning("launch resolution failed for %s", marker.path, exc_info=True)
        return LaunchOutcome.empty()


def _analyze(snapshot: Snapshot, marker: Marker, base: LaunchOutcome | None) -> LaunchOutcome:
    settings = snapshot.config.launch
    if not settings.enabled or not isinstance(snapshot.sources.module(marker.path), Module):
        return LaunchOutcome.empty()
    run = _run(snapshot, marker.path, marker.backend)
    gpus = snapshot.config.suite_gpus(marker.suite) if marker.suite else None
    launches: list[par.Launch] = []
    unknown_models: list[Unknown | None] = []
    seen: set[object] = set()
    for raw in run.launches:
        parsed = parse(raw.tokens, parse(raw.model_tokens))
        launch = par.Launch(
            test=marker.path, path=raw.call.path, line=raw.call.line, settings=parsed.settings,
            opaque=parsed.opaque, gpus=gpus, guards=raw.call.guards, flavor=settings.flavor,
            nodes_default=settings.actor_num_nodes, gpus_default=settings.actor_num_gpus_per_node,
            engine_default=settings.rollout_num_gpus_per_engine,
        )
        key = _key(parsed, raw.call.guards)
        if key in seen:
            continue
        seen.add(key)
        launches.append(launch)
        unknown_models.append(raw.model_unknown)
    for index, launch in enumerate(launches):
        if len(launches) > 1:
            launch.label = f"launch {index + 1} of {len(launches)}"
    findings: list[Finding] = []
    rows: list[tuple[str, ...]] = []
    for index, (launch, model_unknown) in enumerate(zip(launches, unknown_models, strict=True)):
        before = base.launches[index] if base is not None and index < len(base.launches) else None
        verdict, found = _check(launch, model_unknown, marker, _changed(before, launch))
        findings.extend(found)
        rows.append(_row(launch, verdict))
    if run.result.exhausted or run.result.error:
        why = (f"the evaluation stopped at its limit of {settings.max_steps} steps"
               if run.result.exhausted else "the evaluator could not follow the code")
        findings.append(finding(
            "PAR019", marker.path, marker.line,
            f"The launches of `{marker.path}` could not be resolved completely: {why}; "
            "launches past that point were not checked.", test=marker.path,
        ))
    closure, _ = snapshot.graph.closure(marker.path)
    read = set(run.result.modules)
    for raw in run.launches:
        read.update(raw.model_files)
    files = tuple(sorted(read - set(closure) - {marker.path}))
    table = None
    if launches:
        table = Table(
            title=f"Launches of `{marker.path}` ({marker.backend}, {marker.suite})",
            header=("TP", "PP", "CP", "EP", "ETP", "DP", "W", "runner GPUs", "rollout engines",
                    "verdict"),
            rows=tuple(rows),
            note="`?`: not determined statically (see PAR019)." if any(
                "?" in " ".join(r) for r in rows) else None,
        )
    signature = tuple(_signature(launch) for launch in launches) if launches else None
    return LaunchOutcome(signature, findings, files, table, tuple(launches))


def _key(parsed: Parsed, guards: tuple[str, ...]) -> object:
    items = []
    for symbol, setting in sorted(parsed.settings.items()):
        value = setting.value
        items.append((symbol, value.text if isinstance(value, Unknown) else value))
    return (tuple(items), tuple(o.text for o in parsed.opaque), guards)


def _changed(before: par.Launch | None, after: par.Launch) -> tuple[str, ...]:
    """The flags whose value differs between a launch at the base and at the head."""
    if before is None:
        return ()
    symbols = dict.fromkeys([*before.settings, *after.settings])
    return tuple(s for s in symbols if _plain(before.settings.get(s)) != _plain(after.settings.get(s)))


def _plain(setting: Setting | None) -> object:
    if setting is None:
        return None
    return setting.value.text if isinstance(setting.value, Unknown) else setting.value


def _check(launch: par.Launch, model_unknown: Unknown | None, marker: Marker,
           prefer: tuple[str, ...] = ()) -> tuple[str, list[Finding]]:
    numbers = par.describe(launch)
    where = f" ({launch.label})" if launch.label else ""
    context = f"Launch of `{marker.path}`{where}: {numbers}."
    if launch.guards:
        guard = launch.guards[0]
        return "not checked", [finding(
            "PAR019", launch.path, launch.line,
            f"Whether this launch runs depends on `{guard}`, which cannot be resolved "
            "statically; its parallel layout was not checked.",
            test=marker.path, details=(context,),
        )]
    if model_unknown is not None:
        for symbol in ("layers", "heads", "experts"):
            if symbol not in launch.settings:
                launch.settings[symbol] = Setting(model_unknown, model_unknown.origin,
                                                  CANONICAL[symbol])
    outcome = par.evaluate(launch)
    found: list[Finding] = []
    for violation in outcome.violations:
        others = [v for v in outcome.violations if v is not violation]
        fixes = par.fixes(launch, [violation, *others], prefer=prefer)
        anchor = _anchor(launch, violation, fixes)
        details = (context, violation.reason, violation.when)
        found.append(finding(
            violation.rule, anchor[0], anchor[1], violation.message,
            fix=" or ".join(f.text for f in fixes) or None, test=marker.path,
            details=details, severity=violation.severity,
        ))
    for unknown, rules, flags in outcome.needs.values():
        origin = unknown.origin
        shown = ", ".join(f"`{f}`" for f in flags)
        found.append(finding(
            "PAR019", origin.path if origin else launch.path,
            origin.line if origin else launch.line,
            f"`{unknown.text}` cannot be resolved statically, so {shown} "
            f"{'is' if len(flags) == 1 else 'are'} not known; {', '.join(rules)} not checked.",
            test=marker.path, details=(context,),
        ))
    errors = sorted({v.rule for v in outcome.violations})
    if errors:
        verdict = " ".join(errors)
    elif outcome.needs:
        verdict = "partly unresolved"
    else:
        verdict = "ok"
    return verdict, found


def _anchor(launch: par.Launch, violation: par.Violation,
            fixes: list[par.Fix]) -> tuple[str, int]:
    for fix in fixes:
        if fix.origin is not None:
            return fix.origin.path, fix.origin.line
        break
    for symbol in violation.symbols:
        setting = launch.settings.get(symbol)
        if setting is not None and setting.origin is not None:
            return setting.origin.path, setting.origin.line
    return launch.path, launch.line


def _cell(fn: object) -> str:
    assert callable(fn)
    try:
        value = fn()
    except par.Need:
        return "?"
    return "-" if value is None else str(value)


def _row(launch: par.Launch, verdict: str) -> tuple[str, ...]:
    view = par.View(launch)

    def dp() -> int | None:
        total = view.get("tp") * view.get("pp") * view.get("cp")
        return view.world // total if total and view.world % total == 0 else None

    def engines() -> str | None:
        r = view.rollout()
        g = view.get("engine_gpus")
        if r is None or g < 1:
            return None
        return f"{r // g} x {g} GPUs"

    return (
        _cell(lambda: view.get("tp")), _cell(lambda: view.get("pp")), _cell(lambda: view.get("cp")),
        _cell(lambda: view.get("ep")), _cell(lambda: view.get("etp")), _cell(dp),
        _cell(lambda: view.world), "-" if launch.gpus is None else str(launch.gpus),
        _cell(engines), verdict,
    )


# name shown in change reasons -> how to read it
_SIGNATURE: tuple[tuple[str, str], ...] = (
    ("tp", "tp"), ("pp", "pp"), ("cp", "cp"), ("ep", "ep"), ("etp", "etp"),
    ("actor nodes", "nodes"), ("gpus per node", "gpus_per_node"), ("colocate", "colocate"),
    ("rollout gpus", "rollout"), ("gpus per engine", "engine_gpus"),
    ("sglang ep", "sglang_ep"), ("sglang dp", "sglang_dp"), ("sglang pp", "sglang_pp"),
    ("dp attention", "dp_attention"), ("backend", "backend"), ("dp replicate", "dp_replicate"),
    ("layers", "layers"), ("heads", "heads"),
    ("query groups", "query_groups"), ("experts", "experts"),
)


def _signature(launch: par.Launch) -> tuple[tuple[str, object], ...]:
    view = par.View(launch)
    readers: dict[str, Callable[[], object]] = {
        "colocate": lambda: view.flag("colocate"),
        "dp_attention": lambda: view.flag("dp_attention"),
        "rollout": view.rollout,
        "backend": lambda: view.raw("backend") or "megatron",
        "dp_replicate": lambda: view.number("dp_replicate", 1),
        "layers": lambda: view.model("layers"),
        "heads": lambda: view.model("heads"),
        "query_groups": lambda: view.model("query_groups"),
        "experts": lambda: view.model("experts"),
    }
    out: list[tuple[str, object]] = []
    for label, symbol in _SIGNATURE:
        reader = readers.get(symbol) or partial(view.get, symbol)
        try:
            value = reader()
        except par.Need as need:
            value = f"? ({need.unknown.text})"
        out.append((label, value))
    if launch.guards:
        out.append(("runs when", " and ".join(launch.guards)))
    return tuple(out)


def _show(value: object) -> str:
    if value is None:
        return "unset"
    if value is True:
        return "on"
    if value is False:
        return "off"
    return str(value)


def compare(base: LaunchOutcome, head: LaunchOutcome) -> list[str]:
    """Sentences saying how the resolved launches differ (``ep 4 -> 2``); empty if alike."""
    if base.signature is None or head.signature is None or base.signature == head.signature:
        return []  # nothing resolved on one side: no launch to compare
    out: list[str] = []
    if len(base.signature) != len(head.signature):
        out.append(f"launches {len(base.signature)} -> {len(head.signature)}")
    many = max(len(base.signature), len(head.signature)) > 1
    for index, (a, b) in enumerate(zip(base.signature, head.signature, strict=False)):
        before, after = dict(a), dict(b)
        prefix = f"launch {index + 1}: " if many else ""
        for key in dict.fromkeys([*before, *after]):
            if before.get(key) != after.get(key):
                out.append(f"{prefix}{key} {_show(before.get(key))} -> {_show(after.get(key))}")
    return out

