"""`analyze` (base..head) and `audit` (one revision): the analysis entry points.

Every GPU marker's launch is checked, a disabled one's too: its PAR findings are warnings
that say the test is disabled and would fail this way when re-enabled (PAR019 stays info).
In `analyze`, every finding is `new` or `unchanged` against the base, by
:func:`~bot.analysis.findings.fingerprint`; only new errors fail the PR.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from bot.analysis import launch, pins, pool
from bot.analysis.cienv import ci_environment
from bot.analysis.findings import Finding, Severity, finding, fingerprint, fingerprints
from bot.analysis.gcpause import paused
from bot.analysis.markers import Marker
from bot.analysis.notices import notices
from bot.analysis.report import (
    CHANGES,
    SELECTABLE,
    Cadence,
    Change,
    Held,
    Parked,
    ParkedProblem,
    Report,
    Selected,
    Skipped,
    Table,
    TestEntry,
    Tier,
)
from bot.analysis.snapshot import Derived, Snapshot
from bot.analysis.source import Shared
from bot.analysis.tree import GitTree, Tree, changed_paths, match
from config.repo import (
    CONFIG_PATHS,
    DEFAULT_KEYS,
    DEFAULT_SOURCE,
    LoadedConfig,
    RepoConfig,
    defaults,
    parse_config,
)

if TYPE_CHECKING:
    from bot.analysis.ci import CiIndex
    from bot.analysis.ci.cadence import SuiteCadence

GPU_BACKENDS = frozenset({"cuda", "rocm"})


def ci_index(snapshot: Snapshot) -> CiIndex:
    """The snapshot's model of its CI, loaded with its first use: a command that reads no
    workflow does not import it."""
    from bot.analysis.ci import ci_index as index

    return index(snapshot)


def read_config(tree: Tree) -> LoadedConfig:
    """The repository configuration at a revision, validated (never raises)."""
    for path in CONFIG_PATHS:
        data = tree.read(path)
        if data is None:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = "\0"  # not YAML either: parse_config reports it
        return parse_config(text, path)
    return LoadedConfig(defaults(), None, dict.fromkeys(DEFAULT_KEYS, DEFAULT_SOURCE))


def config_findings(loaded: LoadedConfig) -> list[Finding]:
    """CFG001 for each key of the configuration that failed validation."""
    return [
        finding(
            "CFG001", loaded.path, p.line,
            f"`{loaded.path}`: `{p.key}`: {p.message}; the default is used for it.",
        )
        for p in loaded.problems
    ]


def _config_findings(loaded: LoadedConfig, head: Tree, changes: set[str]) -> list[Finding]:
    """CFG001 of the policy the PR is judged by, and, when the PR changes the configuration
    file, of the file as the PR leaves it: its problems are the PR's, though the base's
    policy still judges it (a broken file would otherwise merge silently)."""
    out = config_findings(loaded)
    changed = [p for p in CONFIG_PATHS if p in changes]
    if not changed:
        return out
    proposed = read_config(head)
    if proposed.path is None:
        return out
    out.extend(
        finding(
            "CFG001", proposed.path, p.line,
            f"`{proposed.path}` as this PR leaves it: `{p.key}`: {p.message}; once merged, the "
            "default would be used for it (this PR is still judged by the base's policy).",
        )
        for p in proposed.problems
    )
    return out


@dataclass
class _Scope:
    """Why a test file is in a PR's scope."""

    direct: bool = False
    harness: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)  # every changed module it imports
    launch: dict[str, str] = field(default_factory=dict)  # changed file -> how the launch runs it
    environment: list[str] = field(default_factory=list)

    @property
    def tier(self) -> Tier | None:
        if self.direct:
            return "direct"
        if self.harness:
            return "harness"
        if self.launch:
            return "launch"
        if self.environment:
            return "environment"
        return None

    def trigger(self, path: str) -> str | None:
        """The changed file that put the test in scope, for its tier."""
        if self.direct:
            return path
        if self.harness:
            return self.harness[0]
        if self.launch:
            return next(iter(self.launch))
        if self.environment:
            return self.environment[0]
        return None


def _entry(marker: Marker, gpus: int | None, change: Change, reasons: list[str]) -> TestEntry:
    return TestEntry(
        path=marker.path, line=marker.line, func=marker.func, backend=marker.backend,
        suite=marker.suite, gpus=gpus, est_time=marker.est_time, disabled=marker.disabled,
        change=change, reasons=reasons, nightly=marker.is_nightly,
        registered=f"{marker.origin[0]}:{marker.origin[1]}" if marker.origin else None,
    )


def _describe(run: _Analysis, entry: TestEntry, marker: Marker, outcome: launch.LaunchOutcome) -> None:
    """A GPU marker's cadence and how much of its launch was checked (with why, when the
    test starts no launch the rules model)."""
    if marker.backend not in GPU_BACKENDS:
        return
    cadence = run.cadence(marker)
    if cadence is not None:
        entry.cadence, entry.gate, entry.cadence_why = cadence.cadence, cadence.gate, cadence.why
    state = outcome.state
    if state is not None:
        entry.launch = state
        return
    if not run.head.config.launch.enabled:
        entry.launch = "unchecked"
        entry.reasons.append("launch not checked: launch checking is off (`launch.enabled`)")
        return
    entry.launch = "none"
    entry.reasons.append(_no_launch(run, marker.path))


# what a test that starts no modelled launch runs instead, by a word of its code (and a
# piece of text every match holds: looking for it first skips most files at once)
_OTHER_LAUNCHES = (
    ("torch", re.compile(r"\btorchrun\b|torch\.distributed\.(?:run|launch)\b"),
     "it names `torchrun`, but no launch of it was found in the test's run (one started by "
     "a program the test runs is not followed)"),
    ("launch_server", re.compile(r"\b\w*launch_server\w*\b"),
     "a server test: it starts a server (`launch_server`), whose flags the rules do not model"),
)


def _no_launch(run: _Analysis, path: str) -> str:
    loaded, _ = run.head.graph.closure(path)
    for file in dict.fromkeys([path, *sorted(loaded)]):
        text = run.head.sources.text(file)
        if not isinstance(text, str):
            continue
        for needle, pattern, why in _OTHER_LAUNCHES:
            if needle in text and pattern.search(text):
                return f"launch: none, {why}"
    return "launch: none, a plain test: it starts no training launch"


DISABLED_PREFIX = "This test is disabled, and would fail this way when re-enabled: "


def _as_disabled(marker: Marker, outcome: launch.LaunchOutcome) -> launch.LaunchOutcome:
    """A disabled marker's launch findings: its PAR problems become warnings that say the
    test is disabled (they block nothing), keeping the upstream message and the fix."""
    if marker.enabled or not outcome.findings:
        return outcome
    found = [
        replace(f, severity=Severity.WARNING, message=DISABLED_PREFIX + f.message)
        if f.severity is not Severity.INFO else f
        for f in outcome.findings
    ]
    return replace(outcome, findings=found)


def _cannot_run(outcome: launch.LaunchOutcome) -> str | None:
    """The first problem of a launch that fails (for "disabled with a launch that cannot
    run"), or None."""
    for f in outcome.findings:
        if f.severity is not Severity.INFO:
            return f.message
    return None


def _quote(text: str) -> str:
    return "'" + text.replace("'", "\\'") + "'"


def _seconds(value: float | None) -> str:
    return "none" if value is None else f"{value:g} s"


def compare_markers(base: Marker, head: Marker) -> list[tuple[Change, str]]:
    """What changed in a marker itself, as (change kind, sentence) pairs."""
    out: list[tuple[Change, str]] = []
    if base.disabled is not None and head.disabled is None:
        out.append(("enabled", f"disabled marker removed; was: {_quote(base.disabled)}"))
    elif base.disabled is None and head.disabled is not None:
        out.append(("disabled", f"disabled: {_quote(head.disabled)}"))
    elif base.disabled != head.disabled and base.disabled is not None and head.disabled is not None:
        out.append(("reason", f"disabled reason changed from {_quote(base.disabled)} to "
                              f"{_quote(head.disabled)}"))
    if base.suite != head.suite:
        out.append(("suite", f"suite changed from {base.suite} to {head.suite}"))
    if base.est_time != head.est_time:
        out.append(("modified", f"estimated time changed from {_seconds(base.est_time)} to "
                                f"{_seconds(head.est_time)}"))
    if base.labels != head.labels:
        out.append(("modified", f"labels changed from {list(base.labels)} to {list(head.labels)}"))
    if base.nightly != head.nightly:
        out.append(("modified", f"nightly changed from {base.nightly} to {head.nightly}"))
    if base.gpus != head.gpus:
        out.append(("modified", f"GPUs changed from {base.gpus} to {head.gpus}"))
    return out


def _first(kinds: Collection[Change]) -> Change:
    return next(c for c in CHANGES if c in kinds)


def _scope(run: _Analysis, path: str, markers: list[Marker]) -> _Scope:
    scope = _Scope()
    changed = run.changed
    assert changed is not None  # only an analysis between two revisions classifies changes
    scope.direct = path in changed
    if not scope.direct:
        loaded, candidates = run.head.graph.closure(path)
        scope.imports = sorted(p for p in changed if p in candidates)  # the change is the smaller
        scope.harness = [p for p in scope.imports
                         if _support(run.head.config, p) or _launcher(run.head, p)]
        del loaded
    if any(m.backend == "rocm" for m in markers):  # the globs are in run.environment already
        scope.environment = sorted(p for p in changed if p in run.environment)
        fanout = run.head.config.select_fanout
        if fanout and not scope.direct:
            for p in sorted(changed):
                glob = next((g for g in fanout if match(g, p)), None)
                if glob is not None:
                    scope.launch.setdefault(p, f"`{p}` matches `select_fanout: {glob}`")
    return scope


def _support(config: RepoConfig, path: str) -> bool:
    """Whether a changed module a test imports affects it by itself: a test-support module
    (under the test roots, or a `harness:` glob), or any module with `select_imports`."""
    return config.select_imports or any(
        root == "." or path.startswith(f"{root}/") for root in config.test_roots
    ) or any(match(g, path) for g in config.harness)


def _launcher(snapshot: Snapshot, path: str) -> bool:
    """Whether a module defines a launch function (``launch.sinks``, ``launch.servers``):
    the harness that runs every launch it is given (miles' ``command_utils.execute_train``).
    Asked for each test that imports a changed module: answered once per module."""
    found = snapshot.derived(_LAUNCHERS)
    if path not in found:
        names = [*snapshot.config.launch.sinks, *snapshot.config.launch.servers]
        text = snapshot.sources.text(path)
        found[path] = isinstance(text, str) and bool(names) and re.search(
            r"^\s*(?:async\s+)?def\s+(?:" + "|".join(map(re.escape, names)) + r")\s*\(", text,
            re.MULTILINE) is not None
    return found[path]


_LAUNCHERS: Derived[dict[str, bool]] = Derived(lambda snapshot: {})


def _launch_scope(run: _Analysis, scope: _Scope, marker: Marker, outcome: launch.LaunchOutcome) -> None:
    """The changed files a test's launches run (tier `launch`): the programs they start
    (`train.py`, `python -m sglang.launch_server`) and what those import. When a launch runs
    a program not known statically, the repository's own CI decides for it, and says so."""
    from bot.analysis import runtime  # only an analysis between two revisions follows launches

    assert run.changed is not None
    # what a launch runs is code of the repository's: a change to tests and data alone
    # reaches no launch that way, and reads nothing more
    code = sorted(p for p in run.changed if p.endswith(".py") and p not in run.head.test_paths())
    if not code:
        return
    reached = runtime.launched_by(run.head, outcome, marker.path, code)
    for changed, entry in reached.items():
        if changed == entry.path:
            sentence = f"`{changed}`, which this test launches ({entry.how})"
        else:
            sentence = f"`{changed}`, imported by `{entry.path}`, which this test launches ({entry.how})"
        scope.launch.setdefault(changed, sentence)
    if reached or marker.suite is None:
        return
    unknown = runtime.unknown_launches(run.head, outcome, marker.path)
    if not unknown:
        return
    ci = ci_index(run.head).model.repo_ci(marker.suite, marker.backend, run.labels, frozenset(run.changed))
    if ci.runs is True:
        scope.launch.setdefault(code[0], (
            f"its launch runs a program not known statically ({unknown[0]}); the repository's own "
            f"CI runs it for this change ({ci.why})"))


def _contributed(outcome: launch.LaunchOutcome) -> set[str]:
    """The files that gave a launch its values: where each launch call is, where its flags
    and unresolved words come from, and the files it read beyond the test's imports."""
    out = set(outcome.files)
    for item in outcome.launches:
        out.add(item.path)
        out.update(s.origin.path for s in item.settings.values() if s.origin is not None)
        out.update(o.origin.path for o in item.opaque if o.origin is not None)
    return out


def _classify(
    run: _Analysis, path: str, base_markers: list[Marker], head_markers: list[Marker],
) -> list[TestEntry]:
    scope = _scope(run, path, head_markers or base_markers)
    base_by_key = {m.key: m for m in base_markers}
    head_by_key = {m.key: m for m in head_markers}
    entries: list[TestEntry] = []
    launch_findings: list[Finding] = []
    # a marker that changed (a job matrix entry's GPUs, say) checks its launches anew
    registration_changed = False
    for key in [*head_by_key, *(k for k in base_by_key if k not in head_by_key)]:
        h = head_by_key.get(key)
        b = base_by_key.get(key)
        if h is None:
            assert b is not None
            what = "test file removed" if path not in run.head.test_paths() else "marker removed"
            entries.append(_entry(b, _gpus(run.head, b), "removed", [what]))
            continue
        kinds: list[Change] = []
        reasons: list[str] = []
        if b is None:
            kinds.append("added")
            reasons.append("new test file" if path not in run.base_paths else "marker added")
        else:
            for kind, sentence in compare_markers(b, h):
                kinds.append(kind)
                reasons.append(sentence)
                registration_changed = registration_changed or b.gpus != h.gpus
        outcome = run.raw_launch(h)
        extra = sorted(p for p in _contributed(outcome) if run.changed and p in run.changed
                       and p != path)
        if extra:
            scope.harness = sorted({*scope.harness, *extra})
        if h.backend == "rocm" and not (scope.direct or scope.harness):
            _launch_scope(run, scope, h, outcome)
        differences: list[str] = []
        if b is not None and scope.tier in ("direct", "harness"):
            before = run.base_launch(b)
            differences = launch.compare(before, outcome)
            if differences:
                kinds.append("parallelism")
                reasons.extend(differences)
                if outcome.findings:  # let the fixes prefer what the PR changed
                    outcome = launch.analyze_launch(run.head, h, base=before)
        if "disabled" in kinds and (problem := _cannot_run(outcome)) is not None:
            reasons.append(f"disabled with a launch that cannot run: {problem}")
        raw = outcome
        was = None
        if differences:
            before_rules = sorted({f.rule for f in before.findings if f.severity is not Severity.INFO})
            was = (", ".join(before_rules) + ": " if before_rules else "") + ", ".join(differences)
        outcome = _as_disabled(h, outcome)
        if scope.direct and b is not None and not kinds:
            kinds.append("modified")
            reasons.append("test file changed")
        if not scope.direct and scope.harness and not kinds:
            kinds.append("affected")
            shown = ", ".join(f"`{p}`" for p in scope.harness[:3])
            more = f" and {len(scope.harness) - 3} more" if len(scope.harness) > 3 else ""
            reasons.append(f"imports {shown}{more}, which changed")
        if scope.launch and not kinds:
            kinds.append("affected")
            reasons.append(next(iter(scope.launch.values())))
        if h.backend == "rocm" and scope.environment and not kinds:
            kinds.append("affected")
            shown = ", ".join(f"`{p}`" for p in scope.environment[:3])
            reasons.append(f"the ROCm environment changed: {shown}")
        change = _first(kinds) if kinds else "unchanged"
        entry = _entry(h, _gpus(run.head, h), change, reasons)
        entry.launch_diff = list(differences)
        entry.tier = scope.tier
        entry.trigger = scope.trigger(path)
        _describe(run, entry, h, outcome)
        run.park(h, entry, raw, was)
        entries.append(entry)
        launch_findings.extend(outcome.findings)
        if change != "unchanged":
            run.findings.extend(run.marker_findings(h))
            run.findings.extend(outcome.findings)
            run.tables_for(h, outcome)
    if not (scope.direct or scope.harness or scope.imports or registration_changed):
        # nothing its launches read changed
        run.same_at_base[path] = launch_findings
    return entries


def _select(run: _Analysis, entries: list[TestEntry]) -> tuple[list[Selected], list[Skipped]]:
    """The ROCm runs for a PR: the affected tests of per-PR suites (nightly and external
    ones only when the configuration selects them), and the affected ones left out, each
    with why."""
    config = run.head.config
    wanted: set[Cadence | None] = {"per-pr"}
    if config.select_nightly:
        wanted.add("nightly")
    if config.select_external:
        wanted.add("external")
    out: list[Selected] = []
    skipped: list[Skipped] = []
    for e in entries:
        if e.backend != "rocm" or e.disabled is not None or e.suite is None or e.tier is None:
            continue
        if e.change not in SELECTABLE:
            continue
        reason = e.reasons[0] if e.reasons else ""
        suite = config.suites.get(e.suite)
        if e.cadence not in wanted or (suite is not None and not suite.per_pr):
            why = str(e.cadence) if e.cadence in ("on-label", "nightly", "external") else "not per-PR"
            skipped.append(Skipped(e.path, e.suite, why, e.trigger, reason, gate=e.gate))
            continue
        out.append(Selected(e.path, e.suite, e.est_time, e.tier, e.gpus, e.trigger, reason))
    return out, skipped


class _Analysis:
    """State shared by one analysis: snapshots, the changed set, launches, suites run."""

    def __init__(self, head: Snapshot, base: Snapshot | None, changed: set[str] | None) -> None:
        self.head = head
        self.base = base
        self.changed = changed
        self.findings: list[Finding] = []
        self.base_paths: set[str] = set(base.test_paths()) if base else set()
        self.environment: set[str] = set()
        self.tables: list[Table] = []
        self.labels: frozenset[str] | None = None  # the PR's labels, when known
        # test files whose launches read nothing the change touched: their launch findings,
        # the same at the base
        self.same_at_base: dict[str, list[Finding]] = {}
        self.parked: list[Parked] = []

    def park(self, marker: Marker, entry: TestEntry, raw: launch.LaunchOutcome,
             was: str | None = None) -> None:
        """Note a disabled GPU marker (see :class:`~bot.analysis.report.Parked`); ``raw`` is
        its launch checked as if enabled. In `analyze` (``changed`` known), a candidate must
        also be touched by the change."""
        if marker.disabled is None or marker.backend not in GPU_BACKENDS:
            return
        problems = [ParkedProblem(f.rule, f.message, f.fix) for f in raw.findings
                    if f.severity is not Severity.INFO]
        valid = entry.launch == "checked" and not problems
        touched = entry.change != "unchanged"
        if problems:
            why = f"its launch would fail: {problems[0].rule}"
            if problems[0].fix:
                why += f" (fix: {problems[0].fix})"
        elif valid:
            why = "its launch is checked and valid on its runner"
        elif entry.launch == "none":
            why = "it starts no launch the rules model, so only a run can tell"
        else:
            why = f"its launch is {entry.launch or 'not'} checked, so only a run can tell"
        analyze = self.changed is not None
        if analyze and valid:
            why += "; this PR touches it" if touched else "; this PR does not touch it"
        self.parked.append(Parked(
            path=marker.path, line=marker.line, disabled_line=marker.disabled_line,
            backend=marker.backend, suite=marker.suite, reason=marker.disabled,
            launch=entry.launch, problems=problems,
            candidate=valid and (touched or not analyze), why=why + ".", was=was,
            touched=touched))

    def cadence(self, marker: Marker) -> SuiteCadence | None:
        """Which CI runs a marker's test: the configured cadence of its suite, else what
        the workflows say (null for a marker without a suite)."""
        if marker.suite is None:
            return None
        suite = self.head.config.suites.get(marker.suite)
        if suite is not None and suite.cadence is not None:
            from bot.analysis.ci.cadence import SuiteCadence

            return SuiteCadence(suite.cadence, None, (), "`.github/rocmbot.yml` says so")
        return ci_index(self.head).cadence(marker.suite, marker.nightly, marker.backend)

    def marker_findings(self, marker: Marker) -> list[Finding]:
        out: list[Finding] = []
        if marker.suite is None:
            return out
        from bot.analysis.ci.cadence import NO_JOB

        cadence = ci_index(self.head).model.cadence(marker.suite, marker.backend)
        if marker.suite not in self.head.config.suites and cadence.cadence == "external":
            out.append(finding(
                "REG001", marker.path, marker.line,
                f"No workflow of this repository runs suite `{marker.suite}`"
                + (f" on {marker.backend} ({cadence.why})" if cadence.why != NO_JOB else "")
                + "; if another "
                "repository's CI runs it, list it under `suites:` with `cadence: external` "
                "to silence this.",
                fix=f"`suites: {{{marker.suite}: {{cadence: external}}}}` in "
                "`.github/rocmbot.yml`, or a suite a workflow of this repository runs",
                test=marker.path,
            ))
        if marker.backend in GPU_BACKENDS and _gpus(self.head, marker) is None:
            # one per marker here; `_dedupe` folds them into one per suite
            out.append(finding(
                "REG003", marker.path, marker.line,
                f"Suite `{marker.suite}` does not say how many GPUs its runner has, so the "
                "launches of its tests cannot be checked against it.",
                fix=f"name it `...-N-gpu-...`, or set `suites: {{{marker.suite}: {{gpus: N}}}}`",
                test=marker.path,
            ))
        return out

    def raw_launch(self, marker: Marker) -> launch.LaunchOutcome:
        """A GPU marker's launches checked as if it were enabled."""
        if marker.backend in GPU_BACKENDS:
            return launch.analyze_launch(self.head, marker)
        return launch.LaunchOutcome.empty()

    def launch_of(self, marker: Marker) -> launch.LaunchOutcome:
        """A GPU marker's launches and their findings (a disabled one's as warnings)."""
        return _as_disabled(marker, self.raw_launch(marker))

    def base_launch(self, marker: Marker) -> launch.LaunchOutcome:
        if self.base is None or marker.backend not in GPU_BACKENDS:
            return launch.LaunchOutcome.empty()
        return launch.analyze_launch(self.base, marker)

    def tables_for(self, marker: Marker, outcome: launch.LaunchOutcome) -> None:
        if outcome.table is not None:
            self.tables.append(outcome.table)


def analyze(
    base: Tree,
    head: Tree,
    *,
    loaded: LoadedConfig | None = None,
    changed: Collection[str] | None = None,
    full: bool = True,
    labels: Collection[str] | None = None,
) -> Report:
    """What a PR from ``base`` to ``head`` changes; the policy is read from ``base``.

    With ``full=False`` (for trees that cost a request per read), a change that touches only
    test files and files no test can load is analysed from those test files alone: the
    unchanged tests, which it cannot affect, are neither read nor listed.
    """
    with paused():  # the snapshots are gone before the collector resumes
        return _analyze_trees(base, head, loaded, changed, full, labels)


def _analyze_trees(base: Tree, head: Tree, loaded: LoadedConfig | None,
                   changed: Collection[str] | None, full: bool,
                   labels: Collection[str] | None) -> Report:
    loaded = loaded or read_config(base)
    # two revisions of one git repository: what the change did not touch is read once
    shared = Shared() if isinstance(base, GitTree) and isinstance(head, GitTree) and \
        base.repo is head.repo else None
    head_snap = Snapshot(head, loaded.config, shared)
    base_snap = Snapshot(base, loaded.config, shared)
    try:
        return _analyze(head_snap, base_snap, loaded, changed, full, labels)
    finally:
        head_snap.release()
        base_snap.release()


def _analyze(head_snap: Snapshot, base_snap: Snapshot, loaded: LoadedConfig,
             changed: Collection[str] | None, full: bool, labels: Collection[str] | None) -> Report:
    base, head = base_snap.tree, head_snap.tree
    changes = set(changed) if changed is not None else changed_paths(base, head)
    if not full and not _reaches_other_tests(head_snap, changes):
        head_snap.limit_tests(changes)
        base_snap.limit_tests(changes)
    run = _Analysis(head_snap, base_snap, changes)
    run.labels = None if labels is None else frozenset(labels)
    touched = _touches_pins(head_snap, changes)
    pin = pins.analyze_pins(head_snap, changes) if touched else pins.PinOutcome()
    # workflows count by the events they run on (ci_index), whatever their pin group
    run.environment = {p for p in pin.environment if not p.startswith(".github/")}
    run.environment.update(ci_index(head_snap).environment(changes))
    unreached = ci_index(head_snap).unreached_images(changes)
    run.environment -= set(unreached)
    entries: list[TestEntry] = []
    reported: list[str] = []  # the test files whose findings are in the report
    head_snap.sources.prefetch(head_snap.test_paths())
    base_snap.sources.prefetch(sorted(changes & run.base_paths))
    for path in sorted(set(head_snap.test_paths()) | run.base_paths):
        at_head = path in head_snap.test_paths()
        head_markers, head_problems = head_snap.markers(path) if at_head else ([], [])
        if path in changes or _listed_by(head_snap, base_snap, path) & changes:
            base_markers = base_snap.markers(path)[0] if path in run.base_paths else []
        else:
            base_markers = head_markers
        before = len(run.findings)
        file_entries = _classify(run, path, base_markers, head_markers)
        if any(e.change not in ("unchanged", "removed") for e in file_entries) or (
            path in changes and at_head
        ):
            run.findings.extend(head_problems)
            run.findings.extend(_harness_problems(run, path))
        if len(run.findings) > before:
            reported.append(path)
        entries.extend(file_entries)
        head_snap.sources.release(path)
        base_snap.sources.release(path)
    run.findings.extend(_config_findings(loaded, head, changes))
    run.findings.extend(pin.findings)
    ci_changed = any(p.startswith(".github/workflows/") or p.endswith("run_suite.py") for p in changes)
    if ci_changed:
        run.findings.extend(ci_problems(head_snap))
    findings = _dedupe(run.findings)
    at_base = _base_findings(base_snap, loaded, reported, changes if pin.findings else None,
                             run.same_at_base, ci_changed)
    selected, skipped = _select(run, entries)
    report = Report(
        mode="analyze",
        base=base.rev,
        head=head.rev,
        tests=entries,
        selected=selected,
        findings=_judge(findings, at_base),
        tables=[*run.tables, *pin.tables],
        config_path=loaded.path,
        skipped=skipped,
        unreached=unreached,
        notices=notices(head_snap, entries, findings),
        parked=_ranked(run.parked),
    )
    from bot.analysis.ci.envelope import complement

    report.selected, report.held = _hold(report.selected, report.findings)
    complement(report, ci_index(head_snap), head_snap.config.dispatch.mode, entries, changes, labels)
    if touched:
        report.pin_changes = pins.changes_between(base_snap, head_snap, changes)
    return report


def _ranked(parked: list[Parked]) -> list[Parked]:
    """Parked tests, those a maintainer can bring back today first (candidates, then the
    ones whose launch only a run can tell, then those whose launch fails), by path."""
    def rank(p: Parked) -> tuple[int, str, int]:
        return (0 if p.candidate else 2 if p.problems else 1, p.path, p.line)

    return sorted(parked, key=rank)


def _listed_by(head: Snapshot, base: Snapshot, path: str) -> set[str]:
    """The workflows whose job matrices list a test file, at the head or the base: a change
    to one may change the file's tests without touching the file."""
    out: set[str] = set()
    for snap in (head, base):
        out.update(m.origin[0] for m in snap.matrix_markers().get(path, ()) if m.origin)
    return out


def _hold(selected: list[Selected], findings: list[Finding]) -> tuple[list[Selected], list[Held]]:
    """The selection without the tests whose launch has an error the PR introduced (on that
    marker's suite, or one found alike on all its markers): those are held, each with the
    first such error."""
    errors: dict[tuple[str, str | None], Finding] = {}
    for f in findings:
        if f.severity is Severity.ERROR and f.baseline == "new" and f.test:
            errors.setdefault((f.test, f.suite), f)
    keep: list[Selected] = []
    held: list[Held] = []
    for s in selected:
        error = errors.get((s.path, s.suite)) or errors.get((s.path, None))
        if error is None:
            keep.append(s)
        else:
            held.append(Held(s, error.rule, fingerprint(error), error.message))
    return keep, held


def _base_findings(base: Snapshot, loaded: LoadedConfig, tests: list[str], pins_of: set[str] | None,
                   same: dict[str, list[Finding]], ci: bool = False) -> list[Finding]:
    """What the base reports about what the head reports: the given test files' findings
    (markers, launches, harnesses), and, when the head has pin findings (``pins_of`` is the
    change), the base's pin findings anchored as the head's are, at the first place the
    change touches, so that a finding the change only moved keeps its fingerprint. Only
    those: a finding of the head is compared with the base's about the same things. A
    file whose launches read nothing the change touched has the head's launch findings
    (``same``): they are not worked out again."""
    run = _Analysis(base, None, None)
    for path in tests:
        markers, problems = base.markers(path)
        run.findings.extend(problems)
        run.findings.extend(_harness_problems(run, path))
        for m in markers:
            run.findings.extend(run.marker_findings(m))
            if path not in same:
                run.findings.extend(run.launch_of(m).findings)
        run.findings.extend(same.get(path, []))
        base.sources.release(path)
    run.findings.extend(config_findings(loaded))
    if pins_of is not None:
        run.findings.extend(pins.analyze_pins(base, pins_of).findings)
    if ci:
        run.findings.extend(ci_problems(base))
    return _dedupe(run.findings)


def _judge(findings: list[Finding], at_base: list[Finding]) -> list[Finding]:
    """Each finding marked `unchanged` when the base has it too (by fingerprint), else `new`."""
    known = set(fingerprints(at_base))
    return [replace(f, baseline="unchanged" if key in known else "new")
            for f, key in zip(findings, fingerprints(findings), strict=True)]


_PIN_FILE = re.compile(r"(^|/)(Dockerfile[^/]*|[^/]*\.dockerfile|[^/]*\.ya?ml|[^/]*\.txt|[^/]*\.in)$",
                       re.IGNORECASE)


def _touches_pins(snap: Snapshot, changes: set[str]) -> bool:
    """Whether any changed file could belong to a pin group (a Dockerfile, a workflow or
    requirements file, or a configured group's file); if none does, no pin finding can be
    reported and no environment changed.

    A requirements file joins a group by being installed (`pip install -r docker/rocm.lock`),
    whatever its name: a changed file the names do not tell about, unless it is Python
    source, is looked for among the groups' files."""
    globs = [g for group in snap.config.pins.groups.values()
             for g in (*group.dockerfiles, *group.workflows, *group.requirements)]
    if any(_PIN_FILE.search(p) or any(match(g, p) for g in globs) for p in changes):
        return True
    others = {p for p in changes if not p.endswith((".py", ".pyi"))}
    return bool(others) and not others.isdisjoint(pins.group_files(snap))


def _reaches_other_tests(snap: Snapshot, changes: set[str]) -> bool:
    """Whether a change could affect a test file it does not touch: through a Python module
    or package file, the ROCm environment, or the policy itself."""
    config = snap.config
    for path in changes:
        if snap.is_test(path):
            continue
        if path.endswith((".py", ".pyi")) or any(match(g, path) for g in config.environment):
            return True
        if path in CONFIG_PATHS or _PIN_FILE.search(path):
            return True
    return _touches_pins(snap, changes) or bool(ci_index(snap).environment(changes))


def audit(tree: Tree, *, loaded: LoadedConfig | None = None, jobs: int = 1) -> Report:
    """Everything wrong at one revision, whatever changed.

    With ``jobs`` above 1, a large revision's test files are split over that many
    processes (see :mod:`bot.analysis.pool`); the report is the same.
    """
    with paused():  # the snapshot is gone before the collector resumes
        return _audit_tree(tree, loaded, jobs)


def _audit_tree(tree: Tree, loaded: LoadedConfig | None, jobs: int) -> Report:
    loaded = loaded or read_config(tree)
    snap = Snapshot(tree, loaded.config)
    try:
        return _audit(snap, loaded, jobs)
    finally:
        snap.release()


@dataclass
class _Part:
    """What auditing a run of test files gave, in file order."""

    entries: list[TestEntry]
    findings: list[Finding]
    tables: list[Table]
    parked: list[Parked]


def _audit(snap: Snapshot, loaded: LoadedConfig, jobs: int) -> Report:
    tree = snap.tree
    paths = snap.test_paths()
    processes = pool.usable(tree, jobs, len(paths))
    if processes > 1:
        # what every process reads, worked out once here before the fork: the workflows
        # (which suites run, when) and the CI environment of the launches
        ci_index(snap).warm()
        if snap.config.launch.enabled:
            ci_environment(snap)
    # processes take the files a few at a time (their cost is uneven); this one checks the
    # pins first, while the others start on the files
    found: list[pins.PinOutcome] = []
    chunks = pool.split(paths, min(len(paths), pool.MAX_PARTS)) if processes > 1 else [paths]
    parts = pool.fork_map(lambda chunk: _audit_files(snap, chunk), chunks, processes,
                          meanwhile=lambda: found.append(pins.analyze_pins(snap, None)))
    (pin,) = found
    tests = [e for part in parts for e in part.entries]
    findings = _dedupe([*(f for part in parts for f in part.findings), *config_findings(loaded),
                        *pin.findings, *ci_problems(snap)])
    return Report(
        mode="audit",
        base=None,
        head=tree.rev,
        tests=tests,
        selected=[],
        findings=findings,
        tables=[*(t for part in parts for t in part.tables), *pin.tables],
        config_path=loaded.path,
        notices=notices(snap, tests, findings),
        parked=_ranked([p for part in parts for p in part.parked]),
    )


def _audit_files(snap: Snapshot, paths: list[str]) -> _Part:
    run = _Analysis(snap, None, None)
    entries: list[TestEntry] = []
    snap.sources.prefetch(paths)
    for path in paths:
        markers, problems = snap.markers(path)
        run.findings.extend(problems)
        run.findings.extend(_harness_problems(run, path))
        for m in markers:
            entry = _entry(m, _gpus(snap, m), "unchanged", [])
            entries.append(entry)
            run.findings.extend(run.marker_findings(m))
            raw = run.raw_launch(m)
            outcome = _as_disabled(m, raw)
            _describe(run, entry, m, outcome)
            run.findings.extend(outcome.findings)
            run.tables_for(m, outcome)
            run.park(m, entry, raw)
        snap.sources.release(path)
    return _Part(entries, run.findings, run.tables, run.parked)


def _gpus(snap: Snapshot, marker: Marker) -> int | None:
    """The GPUs of a marker's test: a job matrix entry's own count, else the runner of the
    marker's suite (see :func:`bot.analysis.ci.suite_gpus`)."""
    if marker.gpus is not None:
        return marker.gpus
    from bot.analysis.ci import suite_gpus

    return suite_gpus(snap, marker.suite, marker.backend)


def ci_problems(snap: Snapshot) -> list[Finding]:
    """REG005 for each condition of the repository's CI that could not be evaluated."""
    return [finding("REG005", path, line, message) for path, line, message in ci_index(snap).problems()]


def _harness_problems(run: _Analysis, path: str) -> list[Finding]:
    loaded, _ = run.head.graph.closure(path)
    return [u.finding() for u in run.head.graph.unreadable(loaded)]


_SHOWN_TESTS = 20  # tests a per-suite finding lists by name


def _one_per_suite(findings: list[Finding]) -> list[Finding]:
    """REG003 once per suite (its message names the suite): at the first of its markers,
    with its tests listed."""
    suites: dict[str, list[Finding]] = {}
    out: list[Finding] = []
    for f in findings:
        if f.rule == "REG003":
            suites.setdefault(f.message, []).append(f)
        else:
            out.append(f)
    for found in suites.values():
        found.sort(key=Finding.sort_key)
        tests = list(dict.fromkeys(f"`{f.path}:{f.line}`" for f in found))
        shown = ", ".join(tests[:_SHOWN_TESTS])
        more = f" and {len(tests) - _SHOWN_TESTS} more" if len(tests) > _SHOWN_TESTS else ""
        first = found[0]
        out.append(replace(first, details=(
            f"{len(tests)} test{'s' if len(tests) != 1 else ''} of the suite: {shown}{more}.",)))
    return out


def _dedupe(findings: list[Finding]) -> list[Finding]:
    """One finding of each; one found alike on two markers (a CUDA and a ROCm launch that
    fail the same way) names the backend and suite they share, if any."""
    seen: dict[tuple[object, ...], int] = {}
    out: list[Finding] = []
    for f in sorted(_one_per_suite(findings), key=Finding.sort_key):
        key = (f.rule, f.path, f.line, f.message, f.test, f.details, f.fix)
        at = seen.get(key)
        if at is None:
            seen[key] = len(out)
            out.append(f)
        elif (out[at].backend, out[at].suite) != (f.backend, f.suite):
            kept = out[at]
            out[at] = replace(kept, backend=kept.backend if kept.backend == f.backend else None,
                              suite=kept.suite if kept.suite == f.suite else None)
    return out
