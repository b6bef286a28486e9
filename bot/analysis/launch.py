"""Launch resolution and the PAR rules: does each test's parallel layout fit its runner?

For one marker, the test file is evaluated (see :mod:`bot.analysis.evaluate`) as its CI
would run it on the marker's platform; every training command it hands to a launcher
(``U.execute_train(train_args=...)``, or any call the evaluator cannot follow that is given
the trainer's flags) is one launch. The model script named by ``MODEL_TYPE`` adds its flags
first; later flags win. Each launch is checked by the PAR rules (:mod:`bot.analysis.par`).

A file's markers for different platforms share one evaluation when the run read nothing
that differs between them: no platform variable, no module whose top level read one, and
the modules it used are in the other platform's interpreter exactly as they were for the
run (:meth:`~bot.analysis.evaluate.Interpreter.holds`). Otherwise each platform evaluates
the file itself; either way every marker resolves as it would on its own.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from bot.analysis import par, ranks, servers
from bot.analysis.ci import suite_gpus
from bot.analysis.cienv import ci_environment
from bot.analysis.evaluate import ExternalCall, Footprint, Interpreter, Limits, RunResult
from bot.analysis.findings import Finding, finding
from bot.analysis.flags import (
    CANONICAL,
    FLAGS,
    LAUNCH_FLAGS,
    Opaque,
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
from bot.analysis.snapshot import Derived, Snapshot
from bot.analysis.source import Module
from bot.analysis.values import (
    Alternatives,
    Choice,
    Const,
    Hole,
    ListV,
    Text,
    TupleV,
    Unknown,
    Value,
    python,
)

if TYPE_CHECKING:
    from bot.analysis.runtime import LaunchCall

__all__ = ["LaunchOutcome", "LaunchState", "Table", "analyze_launch", "compare"]

log = logging.getLogger(__name__)

Signature = tuple[tuple[tuple[str, object], ...], ...]
# checked: every rule evaluated; partial: some skipped (a PAR019 each); unchecked: none
LaunchState = Literal["checked", "partial", "unchecked"]


@dataclass(frozen=True)
class LaunchOutcome:
    """What resolving one marker's launches gave.

    ``signature`` is a hashable summary of every resolved launch (None when nothing was
    resolved), ``files`` the repository files read beyond the test's imports (a model script,
    say), ``table`` the launch grid for the summary, ``launches`` the resolved launches,
    ``states`` how far each was checked and ``skipped`` the PAR rules that could not be
    evaluated on each (each with a PAR019; all of them for a launch an undecided condition
    guards), and ``stopped`` whether the evaluation ended before the end of the test (its step
    limit, an evaluator error, a raise under an undecided condition), so launches past that
    point are unknown. ``calls`` are the launch calls as :mod:`bot.analysis.runtime` reads
    the programs they start from, ``servers`` the server launches checked.
    """

    signature: Signature | None = None
    findings: list[Finding] = field(default_factory=list)
    files: tuple[str, ...] = ()
    table: Table | None = None
    launches: tuple[par.Launch, ...] = ()
    states: tuple[LaunchState, ...] = ()
    stopped: bool = False
    # True when neither the test nor a module it imports mentions a launch function or a
    # parallelism flag: the test was not evaluated, and has no launch
    no_launch: bool = False
    skipped: tuple[frozenset[str], ...] = ()
    calls: tuple[LaunchCall, ...] = ()
    servers: tuple[servers.Server, ...] = ()
    ranks: tuple[ranks.RankLaunch, ...] = ()  # the launches of ranks (torchrun, mp.spawn)

    @classmethod
    def empty(cls) -> LaunchOutcome:
        return cls()

    @property
    def state(self) -> LaunchState | None:
        """The marker's launches as a whole; None when none was found and the evaluation
        went to the end (the test starts no launch the rules model)."""
        if not self.states:
            return "unchecked" if self.stopped else None
        if all(s == "checked" for s in self.states) and not self.stopped:
            return "checked"
        if all(s == "unchecked" for s in self.states):
            return "unchecked"
        return "partial"


@dataclass(slots=True)
class _Raw:
    """One launch call as the evaluator saw it, and the model script it names."""

    path: str
    line: int
    guards: tuple[str, ...]
    tokens: list[Token]
    model_path: str | None  # the model script, when the call names one
    model_unknown: Unknown | None  # the model type, when it cannot be resolved
    model: Parsed  # the model script's flags as the evaluating interpreter read them
    model_files: tuple[str, ...]
    call: LaunchCall  # what the program it starts is read from
    environ: tuple[tuple[str, str | Unknown | None], ...] = ()  # what the launch inherits


@dataclass(slots=True)
class _Eval:
    """One evaluation of a test file, while another platform may still use it."""

    path: str
    interp: Interpreter
    footprint: Footprint | None  # what of the modules the run read, if nothing else counts
    result: RunResult
    raws: list[_Raw]
    resolved: list[_Resolved] = field(default_factory=list)  # as the evaluating one read them
    ranks: list[ranks.RankLaunch] = field(default_factory=list)
    rank_calls: list[LaunchCall] = field(default_factory=list)  # the programs they start


@dataclass(slots=True)
class _Resolved:
    """One launch of a run: the model's flags, then the command's (later wins)."""

    path: str
    line: int
    guards: tuple[str, ...]
    settings: dict[str, Setting]  # never changed: each launch checked gets a copy
    opaque: list[Opaque]
    model_files: tuple[str, ...]
    model_unknown: Unknown | None
    key: object  # what makes two launches of a file the same (see _key)
    call: LaunchCall
    # its _signature and table cells once a marker has checked it (the same for every
    # marker: they do not depend on the runner)
    signature: tuple[tuple[str, object], ...] | None = None
    cells: tuple[str, ...] | None = None


@dataclass(slots=True)
class _Run:
    result: RunResult
    launches: list[_Resolved]
    ranks: list[ranks.RankLaunch] = field(default_factory=list)
    rank_calls: list[LaunchCall] = field(default_factory=list)


class _Cache:
    """Per snapshot: one interpreter per platform (module top levels evaluated once), one
    run per test file and platform, and the model scripts' flags read."""

    def __init__(self) -> None:
        self.interpreters: dict[str, Interpreter] = {}
        # the server launchers' calls, reported rather than followed (see _followed)
        self.server_interpreters: dict[str, Interpreter] = {}
        self.runs: dict[tuple[str, str], _Run] = {}
        self.last: _Eval | None = None  # the latest evaluation, for the file's other markers
        # model script flags: per interpreter and script, the text they came from and the
        # flags parsed (from a shell script: per script)
        self.models: dict[tuple[int, str, object], tuple[Text, Parsed]] = {}
        self.scripts: dict[str, Parsed] = {}

    def release(self) -> None:
        """Empty the interpreters (see :meth:`Interpreter.release`)."""
        for interp in [*self.interpreters.values(), *self.server_interpreters.values()]:
            interp.release()
        self.interpreters.clear()
        self.server_interpreters.clear()
        self.runs.clear()
        self.last = None
        self.models.clear()


_CACHE: Derived[_Cache] = Derived(lambda snapshot: _Cache(), _Cache.release)


def _cache(snapshot: Snapshot) -> _Cache:
    return snapshot.derived(_CACHE)


class _Mentions:
    """Per snapshot: which files mention a launch function or a parallelism flag. A flag
    is the whole word: ``--num-layers-at-start-in-bf16`` (a conversion tool's option) is
    not ``--num-layers``."""

    def __init__(self, snapshot: Snapshot) -> None:
        sinks = "|".join(re.escape(w) for w in sorted(snapshot.config.launch.sinks, key=len, reverse=True))
        flags = "|".join(re.escape(w) for w in sorted(FLAGS, key=len, reverse=True))
        self.pattern = re.compile(f"(?:{flags})(?![\\w-])" + (f"|{sinks}" if sinks else "")
                                  + f"|{ranks.MENTIONS}")  # a launch of ranks
        self.files: dict[str, bool] = {}


_MENTIONS: Derived[_Mentions] = Derived(_Mentions)


def _may_launch(snapshot: Snapshot, path: str) -> bool:
    """Whether a test could start a launch: its text, or that of a module it imports,
    mentions a launch function (``launch.sinks``), a parallelism flag or a launcher of
    ranks (:data:`bot.analysis.ranks.MENTIONS`). A test with
    neither is not evaluated at all. A file that cannot be read may: it is evaluated."""
    mentions = snapshot.derived(_MENTIONS)
    closure, _ = snapshot.graph.closure(path)
    for file in (path, *closure):
        found = mentions.files.get(file)
        if found is None:
            text = snapshot.sources.text(file)
            found = not isinstance(text, str) or mentions.pattern.search(text) is not None
            mentions.files[file] = found
        if found:
            return True
    return False


def _interpreter(snapshot: Snapshot, backend: str, servers: bool = False) -> Interpreter:
    """The platform's interpreter; ``servers``: the one that reports the calls of the SGLang
    server launchers (``launch.servers``) instead of the launch functions."""
    cache = _cache(snapshot)
    kept = cache.server_interpreters if servers else cache.interpreters
    if backend not in kept:
        settings = snapshot.config.launch
        environment = ci_environment(snapshot)

        sources = snapshot.sources  # not the snapshot: the cache is kept only as long as it is

        def load(path: str) -> Module | None:
            module = sources.module(path)
            return module if isinstance(module, Module) else None

        kept[backend] = Interpreter(
            load, sources.exists, snapshot.config.python_roots,
            environment.values.get(backend, {}),
            frozenset(settings.servers if servers else settings.sinks),
            frozenset(settings.quiet_calls),
            Limits(settings.max_steps, settings.max_depth), environment.differing,
            environment.closed.get(backend, False),
        )
    return kept[backend]


def _command(call: ExternalCall) -> Text:
    """The words of a launch call: its positional arguments and keywords, in order. An
    unknown positional argument or ``*args`` keyword of a launch function is a word that
    cannot be known (other unknown keywords are taken for settings of the call)."""
    parts: list[tuple[Value, bool]] = [(v, call.named_sink) for v in call.args]
    parts.extend((v, call.named_sink and k.endswith("args")) for k, v in call.keywords.items())
    out = Text(())
    for value, words in parts:
        for text in _texts(value, words):
            out = out + text + Text.of(" ")
    return out


def _texts(value: Value, item: bool) -> list[Text]:
    """The words a call's argument puts on the command line. Alternatives stay a choice;
    an unknown item of a list of words is a word that cannot be known (``item``), never
    dropped (an unknown argument of its own is not taken for words)."""
    if isinstance(value, Text):
        return [value]
    if isinstance(value, ListV | TupleV):
        return [t for entry in value.items for t in _texts(entry, True)]
    if isinstance(value, Alternatives):
        options = []
        for option in value.options:
            words = Text(())
            for text in _texts(option, item):
                words = words + text + Text.of(" ")
            options.append(words.parts)
        return [Text((Choice(tuple(options), value.text, value.origin),))]
    if item and isinstance(value, Unknown) and not value.quiet:
        return [Text((Hole(value.text, value.origin),))]
    return []


def _run(snapshot: Snapshot, path: str, backend: str) -> _Run:
    cache = _cache(snapshot)
    key = (path, backend)
    if key in cache.runs:
        return cache.runs[key]
    interp = _interpreter(snapshot, backend)
    evaluation = cache.last
    if evaluation is None or evaluation.path != path or not _same_here(evaluation, interp):
        evaluation = _evaluate(snapshot, interp, path)
        cache.last = evaluation
    launches: list[_Resolved] = []
    mine = evaluation.interp is interp
    for index, raw in enumerate(evaluation.raws):
        # another platform reads the model script itself, as its run would have
        model, files = (raw.model, raw.model_files) if mine else \
            _model_flags(snapshot, interp, raw.model_path, raw.environ)
        if not mine and files == raw.model_files and _same_flags(model, raw.model):
            launches.append(evaluation.resolved[index])  # the same flags: the same launch
            continue
        parsed = parse(raw.tokens, Parsed(dict(model.settings), list(model.opaque)))
        launches.append(_Resolved(raw.path, raw.line, raw.guards, parsed.settings, parsed.opaque,
                                  files, raw.model_unknown, _key(parsed, raw.guards), raw.call))
    if mine:
        evaluation.resolved = launches
    run = _Run(evaluation.result, launches, evaluation.ranks, evaluation.rank_calls)
    cache.runs[key] = run
    return run


def _same_flags(a: Parsed, b: Parsed) -> bool:
    """Whether two parses are the same, origins included (an unknown value is only ever
    the same as itself)."""
    return a is b or (a.opaque == b.opaque and a.settings.keys() == b.settings.keys() and all(
        _same_setting(setting, b.settings[symbol]) for symbol, setting in a.settings.items()))


def _same_setting(a: Setting, b: Setting) -> bool:
    return a is b or (a.flag == b.flag and a.origin == b.origin and type(a.value) is type(b.value)
                      and a.value == b.value)


def _same_here(evaluation: _Eval, interp: Interpreter) -> bool:
    """Whether running the file in ``interp`` would give what it gave in the evaluation's
    interpreter. It does when the run depended on nothing that differs between platforms
    (it read no platform variable, used no module whose top level did, and loaded or
    changed none) and the modules it read are in ``interp`` as they were for the run:
    then every step it takes is the same (see Interpreter.holds)."""
    return evaluation.footprint is not None and evaluation.interp is not interp and \
        interp.holds(evaluation.footprint)


def _evaluate(snapshot: Snapshot, interp: Interpreter, path: str) -> _Eval:
    calls: list[ExternalCall] = []
    result = interp.run(path, calls.append)
    footprint = interp.footprint
    from bot.analysis import clis, runtime  # read with the first launch

    raws: list[_Raw] = []
    rank_launches: list[ranks.RankLaunch] = []
    rank_calls: list[LaunchCall] = []
    for call in calls:
        tokens = text_tokens(_command(call))
        argv = ranks.exec_tokens(call)  # os.execvp(file, argv): the words are argv's
        found = ranks.from_call(snapshot, call, tokens if argv is None else
                                text_tokens(_command(argv))) or clis.from_call(snapshot, call, tokens)
        if found:
            rank_launches.extend(found)
            if call.tail not in ranks.SPAWNS:
                rank_calls.append(runtime.launch_call(
                    call, tokens if argv is None else text_tokens(_command(argv))))
        wanted = None if call.named_sink else LAUNCH_FLAGS
        if not has_flag(tokens, wanted) and not (call.named_sink and _unknown_words(tokens)):
            continue
        model_path, unknown = _model_script(snapshot, interp, call)
        model, files = _model_flags(snapshot, interp, model_path, call.environ)
        raws.append(_Raw(call.path, call.line, call.guards, tokens, model_path, unknown, model,
                         files, runtime.launch_call(call, tokens), call.environ))
    interp.release_run()
    return _Eval(path, interp, footprint, result, raws, ranks=rank_launches,
                 rank_calls=rank_calls)


def _unknown_words(tokens: list[Token]) -> bool:
    """Whether a command has words that cannot be known (a launch function given only
    those is a launch whose flags are not known, never no launch at all)."""
    return any(isinstance(t, Opaque) and not t.quiet for t in tokens)


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


def _model_script(snapshot: Snapshot, interp: Interpreter,
                  call: ExternalCall) -> tuple[str | None, Unknown | None]:
    """The model script a launch call names (``MODEL_TYPE``), or why it cannot be known."""
    value = _model_type(interp, snapshot, call)
    if value is None or (isinstance(value, Const) and value.value is None):
        return None, None
    name = python(value)
    if not isinstance(name, str):
        text = value.text if isinstance(value, Unknown) else "the model type"
        origin = value.origin if isinstance(value, Unknown) else None
        return None, Unknown(text, origin)
    if not name or ".." in name or name.startswith("/"):
        return None, None
    return snapshot.config.launch.model_script.replace("{MODEL_TYPE}", name), None


_NO_FLAGS = Parsed({}, [])


def _model_flags(snapshot: Snapshot, interp: Interpreter, path: str | None,
                 environ: tuple[tuple[str, str | Unknown | None], ...] = ()
                 ) -> tuple[Parsed, tuple[str, ...]]:
    """The flags of a model script as ``interp`` reads them in a process that inherits the
    launch's ``environ`` writes (never changed by callers), and the files read."""
    if path is None:
        return _NO_FLAGS, ()
    cache = _cache(snapshot)
    settings = snapshot.config.launch
    if path.endswith(".py"):
        flags = interp.call_function(path, settings.model_function, environ)
        if flags is None:
            return _NO_FLAGS, (path,)
        found = cache.models.get((id(interp), path, environ))
        if found is None or found[0] is not flags:  # the same text: the same flags
            found = (flags, parse(text_tokens(flags)))
            cache.models[(id(interp), path, environ)] = found
        return found[1], (path,)
    if path not in cache.scripts:
        script = snapshot.sources.text(path)
        cache.scripts[path] = parse(text_tokens(shell_text(script, path))) \
            if isinstance(script, str) else _NO_FLAGS
    return cache.scripts[path], (path,)


def flavor_of(snapshot: Snapshot) -> str:
    """Whose launcher the launches run: the configured flavor, else slime when the
    repository holds the `slime` package (its launcher reads `--rollout-num-gpus` when
    colocated, and splits an engine's GPUs over SGLang's pipeline stages), else miles."""
    configured = snapshot.config.launch.flavor
    if configured is not None:
        return configured
    return "slime" if snapshot.tree.blob_id("slime/__init__.py") is not None else "miles"


def analyze_launch(snapshot: Snapshot, marker: Marker,
                   base: LaunchOutcome | None = None) -> LaunchOutcome:
    """Resolve a marker's launches at one revision and check them (never raises).

    With ``base`` (the same marker's outcome at the PR's base), fixes prefer the parameters
    the PR changed.
    """
    try:
        outcome = _with_servers(snapshot, marker, _analyze(snapshot, marker, base))
        if not outcome.findings:
            return outcome
        return replace(outcome, findings=[replace(f, backend=marker.backend, suite=marker.suite)
                                          for f in outcome.findings])
    except Exception:  # a bug in the checker must not stop the rest of the analysis
        log.warning("launch resolution failed for %s", marker.path, exc_info=True)
        return LaunchOutcome(stopped=True)


def _analyze(snapshot: Snapshot, marker: Marker, base: LaunchOutcome | None) -> LaunchOutcome:
    settings = snapshot.config.launch
    if not settings.enabled or not isinstance(snapshot.sources.module(marker.path), Module):
        return LaunchOutcome.empty()
    if not _may_launch(snapshot, marker.path):
        return LaunchOutcome(no_launch=True)
    run = _run(snapshot, marker.path, marker.backend)
    gpus = marker.gpus if marker.gpus is not None else suite_gpus(snapshot, marker.suite,
                                                                     marker.backend)
    launches: list[par.Launch] = []
    unknown_models: list[Unknown | None] = []
    used: list[_Resolved] = []
    seen: set[object] = set()
    for resolved in run.launches:
        if resolved.key in seen:
            continue
        seen.add(resolved.key)
        used.append(resolved)
        launches.append(par.Launch(
            test=marker.path, path=resolved.path, line=resolved.line,
            settings=dict(resolved.settings), opaque=list(resolved.opaque), gpus=gpus,
            guards=resolved.guards, flavor=flavor_of(snapshot),
            nodes_default=settings.actor_num_nodes, gpus_default=settings.actor_num_gpus_per_node,
            engine_default=settings.rollout_num_gpus_per_engine,
        ))
        unknown_models.append(resolved.model_unknown)
    for index, launch in enumerate(launches):
        if len(launches) > 1:
            launch.label = f"launch {index + 1} of {len(launches)}"
    findings: list[Finding] = []
    rows: list[tuple[str, ...]] = []
    states: list[LaunchState] = []
    skipped: list[frozenset[str]] = []
    for index, (launch, model_unknown) in enumerate(zip(launches, unknown_models, strict=True)):
        before = base.launches[index] if base is not None and index < len(base.launches) else None
        verdict, found, missed = _check(launch, model_unknown, marker, _changed(before, launch))
        findings.extend(found)
        skipped.append(missed)
        states.append("checked" if not missed else
                      "unchecked" if len(missed) >= len(par.CHECKS) else "partial")
        resolved = used[index]
        if resolved.cells is None:
            resolved.cells = _cells(launch)
        rows.append(_row(launch, verdict, resolved.cells))
    if run.result.exhausted or run.result.error:
        why = (f"the evaluation stopped at its limit of {settings.max_steps} steps"
               if run.result.exhausted else "the evaluator could not follow the code")
        findings.append(finding(
            "PAR019", marker.path, marker.line,
            f"The launches of `{marker.path}` could not be resolved completely: {why}; "
            "launches past that point were not checked.", test=marker.path,
        ))
    stop = run.result.stopped
    if stop is not None and stop.guards:
        findings.append(finding(
            "PAR019", stop.path, stop.line,
            f"The run of `{marker.path}` ends at `{stop.text}` when `{stop.guards[0]}`, which "
            "cannot be resolved statically; launches past that point were not checked.",
            test=marker.path,
        ))
    elif stop is not None and not launches and not run.ranks:
        findings.append(finding(
            "PAR019", stop.path, stop.line,
            f"The run of `{marker.path}` ends at `{stop.text}` before it starts any launch, "
            "as far as it can be followed statically; its launches were not checked.",
            test=marker.path,
        ))
    closure, _ = snapshot.graph.closure(marker.path)
    read = set(run.result.modules)
    for resolved in run.launches:
        read.update(resolved.model_files)
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
            marker=(marker.path, marker.suite or ""),
        )
    for resolved, launch in zip(used, launches, strict=True):
        if resolved.signature is None:
            resolved.signature = _signature(launch)
    signature = tuple(r.signature for r in used if r.signature is not None) if launches else None
    stopped = bool(run.result.exhausted or run.result.error or
                   (stop is not None and (stop.guards or (not launches and not run.ranks))))
    for rank_launch in dict.fromkeys(run.ranks):
        checked = ranks.check(rank_launch, marker.path, gpus)
        findings.extend(checked.findings)
        states.append("checked" if checked.state == "checked" else "unchecked")
        signature = (*(signature or ()), checked.signature)
    return LaunchOutcome(signature, findings, files, table, tuple(launches), tuple(states),
                         stopped, skipped=tuple(skipped),
                         calls=tuple(dict.fromkeys([*(r.call for r in run.launches),
                                                    *run.rank_calls])),
                         ranks=tuple(dict.fromkeys(run.ranks)))


# per snapshot: the server launches of a test file on a backend
_SERVERS: Derived[dict[tuple[str, str], list[servers.Server]]] = Derived(lambda snapshot: {})


def _with_servers(snapshot: Snapshot, marker: Marker, outcome: LaunchOutcome) -> LaunchOutcome:
    """The outcome with the marker's SGLang server launches added (see
    :mod:`bot.analysis.servers`)."""
    settings = snapshot.config.launch
    module = snapshot.sources.module(marker.path)
    if not settings.enabled or not isinstance(module, Module):
        return outcome
    known = snapshot.derived(_SERVERS)
    key = (marker.path, marker.backend)
    found = known.get(key)
    gpus = marker.gpus if marker.gpus is not None else suite_gpus(snapshot, marker.suite,
                                                                     marker.backend)
    if found is None:
        found = servers.find(module, marker.backend, frozenset(settings.servers),
                             frozenset(settings.server_keywords))
        found = _followed(snapshot, marker, found, gpus)
        if not found and _wraps_servers(snapshot, marker.path):
            found = _wrapped(snapshot, marker)
        known[key] = found
    if not found:
        return outcome
    checked = [par.server.check(server, marker.path, gpus) for server in found]
    states: list[LaunchState] = [c.state for c in checked]  # type: ignore[misc]
    signature = (*(outcome.signature or ()), *(c.signature for c in checked))
    return replace(outcome, signature=signature,
                   findings=[*outcome.findings, *(f for c in checked for f in c.findings)],
                   states=(*outcome.states, *states), no_launch=False, servers=tuple(found))


def _run_cases(snapshot: Snapshot, marker: Marker) -> tuple[RunResult, list[ExternalCall]]:
    """The test file run with its fixtures, test functions and test case classes by the
    interpreter that reports the server launchers' calls (see :meth:`Interpreter.run`)."""
    interp = _interpreter(snapshot, marker.backend, servers=True)
    calls: list[ExternalCall] = []
    result = interp.run(marker.path, calls.append,
                        cases=lambda decorator: servers.skip(decorator, marker.backend))
    interp.release_run()
    return result, calls


# per snapshot: which files mention ``sglang.launch_server``
_WRAPPERS: Derived[dict[str, bool]] = Derived(lambda snapshot: {})


def _wraps_servers(snapshot: Snapshot, path: str) -> bool:
    """Whether a module the test imports (not the test itself) writes the server's command
    line ``sglang.launch_server``: a wrapper of the repository's own that may start one."""
    mentions = snapshot.derived(_WRAPPERS)
    closure, _ = snapshot.graph.closure(path)
    for file in closure:
        if file == path:
            continue
        found = mentions.get(file)
        if found is None:
            text = snapshot.sources.text(file)
            found = isinstance(text, str) and servers.LAUNCH_SERVER in text
            mentions[file] = found
        if found:
            return True
    return False


def _wrapped(snapshot: Snapshot, marker: Marker) -> list[servers.Server]:
    """The servers a test starts through a wrapper of the repository (a fixture calling
    ``start_sglang_server(extra_args=[...])``, which builds ``python -m sglang.launch_server
    ...``): every command line of the server a call reached by the evaluator was handed,
    anchored at the marker. A run that ran out of steps, failed or whose tests change what
    another reads gives a launch not known, never none."""
    result, calls = _run_cases(snapshot, marker)
    found = [s for s in (servers.from_command(c, marker.path, marker.line) for c in calls)
             if s is not None]
    if found and (result.exhausted or result.error or result.order):
        why = "the test's evaluation, which did not end" if result.exhausted or result.error \
            else f"the order of its tests (one changes {result.order})"
        unknown = servers.Server(marker.path, marker.line, servers.LAUNCH_SERVER)
        unknown.opaque.append(servers.Unresolved(why, marker.line, True))
        return [unknown]
    unique = {(s.guard, tuple(sorted(s.settings.items(), key=str)), tuple(s.opaque)): s
              for s in found}
    return list(unique.values())


def _followed(snapshot: Snapshot, marker: Marker, found: list[servers.Server],
              gpus: int | None) -> list[servers.Server]:
    """The server launches, each one the syntax leaves not fully known replaced by what
    the evaluator makes of its call (one server per way it is reached: a loop over model
    configurations gives each its own), when that is known further in every one of them
    and every way to it is a call the evaluator follows (:func:`servers.reached_directly`).

    The test file is run with its test functions and test case classes (see
    :meth:`Interpreter.run`); a run that ran out of steps or failed keeps the syntax's
    answer, as does a launch the run never reached and a file whose tests change what
    another may read (what each launch is given may then depend on their order)."""
    launchers = frozenset(snapshot.config.launch.servers)
    module = snapshot.sources.module(marker.path)
    open_ = [s for s in found if s.form in launchers and _unknowns(s)]
    if not open_ or not isinstance(module, Module):
        return found
    direct = servers.reached_directly(module, {s.line for s in open_})
    doubtful = [s for s in open_ if s.line in direct]
    if not doubtful:
        return found
    result, calls = _run_cases(snapshot, marker)
    if result.exhausted or result.error or result.order:
        return found
    reached: dict[int, list[servers.Server]] = {}
    for call in calls:
        if call.path == marker.path and call.named_sink and call.tail in launchers:
            reached.setdefault(call.line, []).append(servers.from_call(call, marker.path))
    out: list[servers.Server] = []
    for server in found:
        followed = reached.get(server.line) if server in doubtful else None
        if followed and max(_unknowns(f) for f in followed) < _unknowns(server):
            unique = {par.server.check(f, marker.path, gpus).signature: f for f in followed}
            out.extend(replace(f, guard=server.guard or f.guard) for f in unique.values())
            continue
        out.append(server)
    return out


def _unknowns(server: servers.Server) -> int:
    """How much of a server launch is not known: its sizes not known, all of them under a
    condition not known."""
    if server.guard is not None:
        return len(servers.SYMBOLS) + 1
    return sum(isinstance(server.value(s), servers.Unresolved) for s in servers.SYMBOLS)


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
           prefer: tuple[str, ...] = ()) -> tuple[str, list[Finding], frozenset[str]]:
    """A launch's verdict, its findings and the rules that could not be evaluated."""
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
        )], frozenset(par.CHECKS)
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
    return verdict, found, frozenset(r for _, rules, _ in outcome.needs.values() for r in rules)


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


def _row(launch: par.Launch, verdict: str, cells: tuple[str, ...]) -> tuple[str, ...]:
    """A launch's row of the table, from its :func:`_cells`."""
    return (*cells[:7], "-" if launch.gpus is None else str(launch.gpus), cells[7], verdict)


def _cells(launch: par.Launch) -> tuple[str, ...]:
    """TP, PP, CP, EP, ETP, DP, W and the rollout engines of a launch."""
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
        _cell(lambda: view.world), _cell(engines),
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
    out: list[tuple[str, object]] = []
    for label, symbol in _SIGNATURE:
        reader = _READERS.get(symbol)
        try:
            value = reader(view) if reader is not None else view.get(symbol)
        except par.Need as need:
            value = f"? ({need.unknown.text})"
        out.append((label, value))
    if launch.guards:
        out.append(("runs when", " and ".join(launch.guards)))
    return tuple(out)


# how a signature reads a symbol that is not a plain number (see _signature)
_READERS: dict[str, Callable[[par.View], object]] = {
    "colocate": lambda view: view.flag("colocate"),
    "dp_attention": lambda view: view.flag("dp_attention"),
    "rollout": lambda view: view.rollout(),
    "backend": lambda view: view.raw("backend") or "megatron",
    "dp_replicate": lambda view: view.number("dp_replicate", 1),
    "layers": lambda view: view.model("layers"),
    "heads": lambda view: view.model("heads"),
    "query_groups": lambda view: view.model("query_groups"),
    "experts": lambda view: view.model("experts"),
}


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

