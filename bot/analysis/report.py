"""The result of an analysis: tests with their change, the ROCm selection, and findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from bot.analysis.findings import Finding, Severity

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
Tier = Literal["direct", "harness", "environment"]


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
        }


@dataclass(frozen=True, slots=True)
class Selected:
    """A ROCm run that `/run-amd` would dispatch."""

    path: str
    suite: str
    est_time: float | None
    tier: Tier
    gpus: int | None = None

    def as_json(self) -> dict[str, object]:
        return {"path": self.path, "suite": self.suite, "est_time": _number(self.est_time),
                "tier": self.tier}

    @property
    def gpu_minutes(self) -> float | None:
        if self.est_time is None or self.gpus is None:
            return None
        return self.est_time / 60 * self.gpus


@dataclass(frozen=True, slots=True)
class Table:
    """A small table for the summary (a launch grid, a pin matrix); cells are plain text."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str | None = None


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

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0

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
        out["tests"] = [t.as_json() for t in self.tests]
        out["selected"] = [s.as_json() for s in self.selected]
        out["findings"] = [
            {"rule": f.rule, "severity": f.severity.value, "path": f.path, "line": f.line,
             "message": f.message, "fix": f.fix, "test": f.test}
            for f in self.findings
        ]
        return out


def _number(value: float | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else value
