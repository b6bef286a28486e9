"""The result of an analysis: tests with their change, the ROCm selection, and findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from bot.analysis.findings import Finding, Severity

if TYPE_CHECKING:
    from bot.analysis.pins.changes import PinChange

SCHEMA = 1

Change = Literal[
    "added", "removed", "enabled", "disabled", "reason", "suite",
    "parallelism", "modified", "affected", "unchanged",
]
# Precedence when several apply: the first listed names the entry.
CHANGES: tuple[Change, ...] = (
    "added", "removed", "enabled", "disabled", "reason", "suite",
    "parallelism", "modified", "affected", "unchanged",
)
SELECTABLE: frozenset[str] = frozenset({"added", "enabled", "suite", "parallelism", "modified", "affected"})
Tier = Literal["direct", "harness", "launch", "environment"]
# How much of a GPU marker's launch was checked (see LaunchState in bot.analysis.launch)
Launch = Literal["checked", "partial", "unchecked", "none"]
# Which CI runs a suite: a workflow run for pull requests, one run for pull requests that
# carry a label (`gate`), scheduled (nightly) runs, or nothing of this repository
Cadence = Literal["per-pr", "on-label", "nightly", "external"]


@dataclass(slots=True)
class TestEntry:
    """One marker of one test file (a file with a CUDA and a ROCm marker has two)."""

    __test__ = False  # not a pytest test class, whatever its name

    path: str
    line: int
    func: str
    backend: str
    suite: str | None
    gpus: int | None
    est_time: float | None
    disabled: str | None
    change: Change
    reasons: list[str] = field(default_factory=list)
    tier: Tier | None = None  # why the file is in scope, when it is
    nightly: bool = False  # run by the nightly CI only (`nightly=True`, or a `nightly-` suite)
    launch: Launch | None = None  # GPU markers at the head; null for CPU ones
    cadence: Cadence | None = None  # GPU markers; null for CPU ones
    gate: str | None = None  # the label an `on-label` cadence needs
    trigger: str | None = None  # the changed file that put the test in scope
    cadence_why: str = ""  # what in the repository's CI gave the cadence
    launch_diff: list[str] = field(default_factory=list)  # `analyze`: ``ep 4 -> 2``, per value
    registered: str | None = None  # `workflow:line` of a test a job matrix lists; None: a marker

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "backend": self.backend,
            "suite": self.suite,
            "gpus": self.gpus,
            "est_time": _number(self.est_time),
            "disabled": self.disabled,
            "change": self.change,
            "reasons": list(self.reasons),
            "launch": self.launch,
            "cadence": self.cadence,
            "gate": self.gate,
            "registered": self.registered,
        }


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the analysis saw and could not use, which is not a finding: a call that
    looks like a marker of a function it does not know, a test list it cannot read, a
    workflow it cannot evaluate, a file it cannot read, or what it looked for when it
    found no test. ``kind`` groups them; ``fix`` is the setting that makes it understood."""

    kind: str
    message: str
    path: str | None = None
    line: int | None = None
    fix: str | None = None

    def as_json(self) -> dict[str, object]:
        return {"kind": self.kind, "message": self.message, "path": self.path,
                "line": self.line, "fix": self.fix}


@dataclass(frozen=True, slots=True)
class ParkedProblem:
    """A launch problem of a parked test: the rule, its message and its fix."""

    rule: str
    message: str
    fix: str | None = None

    def as_json(self) -> dict[str, object]:
        return {"rule": self.rule, "message": self.message, "fix": self.fix}


@dataclass(slots=True)
class Parked:
    """A disabled (`disabled=...`) GPU marker: why it is parked, since when, whether its
    launch would run now, and whether it is a candidate to bring back: its launch checked and
    valid at the head and, in `analyze`, the PR changed something that reaches it.

    ``since``: (commit, ISO date) of the change that added the `disabled=` argument, where
    history is at hand (filled by the caller that has it); ``was``: in `analyze`, what the
    base's launch said and the values the PR changed (`PAR002: ep 4 -> 2`)."""

    path: str
    line: int
    disabled_line: int | None
    backend: str
    suite: str | None
    reason: str
    launch: Launch | None
    problems: list[ParkedProblem] = field(default_factory=list)
    candidate: bool = False
    why: str = ""
    since: tuple[str, str] | None = None
    was: str | None = None
    touched: bool = False  # `analyze`: the PR changed something that reaches it

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "backend": self.backend,
            "suite": self.suite,
            "reason": self.reason,
            "since": None if self.since is None else {"commit": self.since[0], "date": self.since[1]},
            "launch": {"state": self.launch, "findings": [p.as_json() for p in self.problems]},
            "candidate": self.candidate,
            "why": self.why,
        }


@dataclass(frozen=True, slots=True)
class Selected:
    """A ROCm run that `/run-amd` would dispatch."""

    path: str
    suite: str
    est_time: float | None
    tier: Tier
    gpus: int | None = None
    trigger: str | None = None  # the changed file that caused it
    reason: str = ""  # one sentence: why it runs

    def as_json(self) -> dict[str, object]:
        return {"path": self.path, "suite": self.suite, "est_time": _number(self.est_time),
                "tier": self.tier, "trigger": self.trigger, "reason": self.reason}

    @property
    def gpu_minutes(self) -> float | None:
        if self.est_time is None or self.gpus is None:
            return None
        return self.est_time / 60 * self.gpus


@dataclass(frozen=True, slots=True)
class Held:
    """A test the PR's analysis would run on ROCm but holds: its launch has an error the PR
    introduced (``rule``, ``finding`` its fingerprint), so the run would fail after taking
    its GPUs. `/run-amd --force` runs it anyway."""

    test: Selected
    rule: str
    finding: str
    message: str

    def as_json(self) -> dict[str, object]:
        return {"path": self.test.path, "suite": self.test.suite, "rule": self.rule,
                "finding": self.finding, "message": self.message}


@dataclass(frozen=True, slots=True)
class Skipped:
    """An affected ROCm test rocmbot does not dispatch, and why: `repo-ci` (the repository's
    own CI runs it for this PR: ``job``), `on-label` (its CI runs it with the label
    ``gate``), `nightly` or `external` (no CI of this repository runs it for PRs)."""

    path: str
    suite: str
    why: str
    trigger: str | None = None
    reason: str = ""
    job: str | None = None
    gate: str | None = None

    def as_json(self) -> dict[str, object]:
        return {"path": self.path, "suite": self.suite, "why": self.why, "job": self.job,
                "gate": self.gate, "trigger": self.trigger, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class RepoCi:
    """What the repository's own CI runs on AMD for the PR: ``runs`` tests for sure,
    ``unknown`` perhaps (a condition it could not decide), ``affected`` of them in the
    affected set; ``labels`` the labels assumed on the PR."""

    runs: int
    unknown: int
    affected: int
    labels: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        return {"runs": self.runs, "unknown": self.unknown, "affected": self.affected,
                "labels": list(self.labels)}


@dataclass(frozen=True, slots=True)
class Table:
    """A small table for the summary (a launch grid, a pin matrix); cells are plain text."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str | None = None
    marker: tuple[str, str] | None = None  # a launch grid's test and suite


@dataclass(slots=True)
class Report:
    """Everything one `analyze` or `audit` found."""

    mode: Literal["analyze", "audit"]
    base: str | None
    head: str | None
    tests: list[TestEntry]
    selected: list[Selected]
    findings: list[Finding]
    tables: list[Table] = field(default_factory=list)
    config_path: str | None = None
    skipped: list[Skipped] = field(default_factory=list)
    dispatch_mode: str | None = None  # `targeted` or `complement` (analyze only)
    dispatch_reason: str = ""
    repo_ci: RepoCi | None = None
    # changed files that select no test, though they look like the environment: why, per file
    unreached: dict[str, str] = field(default_factory=dict)
    # per (test path, suite): whether the repository's CI runs it for this PR, and which job
    ci_runs: dict[tuple[str, str], tuple[bool | None, str]] = field(default_factory=dict)
    held: list[Held] = field(default_factory=list)  # selected, but with a new error (analyze)
    pin_changes: list[PinChange] = field(default_factory=list)  # the pins the PR touched
    notices: list[Notice] = field(default_factory=list)  # what was seen and not understood
    parked: list[Parked] = field(default_factory=list)  # the disabled GPU markers

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def new_errors(self) -> list[Finding]:
        """The errors a PR is answerable for: in `analyze`, those its base did not have
        already; in `audit`, every one."""
        return [f for f in self.errors if f.baseline != "unchanged"]

    @property
    def exit_code(self) -> int:
        return 1 if self.new_errors else 0

    def launch_counts(self) -> dict[str, int]:
        """GPU markers by launch state (``checked``, ``partial``, ``unchecked``, ``none``)."""
        out = dict.fromkeys(("checked", "partial", "unchecked", "none"), 0)
        for t in self.tests:
            if t.launch is not None:
                out[t.launch] += 1
        return out

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.value] += 1
        return out

    def gpu_minutes(self) -> float:
        return sum(s.gpu_minutes or 0.0 for s in self.selected)

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"schema": SCHEMA}
        if self.mode == "analyze":
            out["base"] = self.base
        out["head"] = self.head
        tests = []
        for t in self.tests:
            item = t.as_json()
            ran = self.ci_runs.get((t.path, t.suite or ""))
            if ran is not None:  # `analyze`: whether the repository's own CI runs it for the PR
                item["repo_ci"] = ran[0]
            tests.append(item)
        out["tests"] = tests
        out["selected"] = [s.as_json() for s in self.selected]
        out["findings"] = [
            {"rule": f.rule, "severity": f.severity.value, "path": f.path, "line": f.line,
             "message": f.message, "fix": f.fix, "test": f.test, "backend": f.backend,
             "suite": f.suite, "baseline": f.baseline}
            for f in self.findings
        ]
        out["notices"] = [n.as_json() for n in self.notices]
        out["parked"] = [p.as_json() for p in self.parked]
        if self.mode == "analyze":
            out["held"] = [h.as_json() for h in self.held]
            out["pin_changes"] = [p.as_json() for p in self.pin_changes]
            out["skipped"] = [s.as_json() for s in self.skipped]
            out["dispatch_mode"] = self.dispatch_mode
            out["dispatch_reason"] = self.dispatch_reason
            out["repo_ci"] = self.repo_ci.as_json() if self.repo_ci is not None else None
            out["unreached"] = [{"path": p, "why": w} for p, w in sorted(self.unreached.items())]
        return out


def _number(value: float | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else value
