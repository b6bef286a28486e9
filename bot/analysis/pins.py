"""Dependency pins across Dockerfiles, workflow install paths and requirements (PIN rules)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from bot.analysis.findings import Finding
from bot.analysis.report import Table
from bot.analysis.snapshot import Snapshot


@dataclass(frozen=True)
class PinOutcome:
    """Pin findings to report, the ROCm group's files (the environment tier), and matrices."""

    findings: list[Finding] = field(default_factory=list)
    environment: frozenset[str] = frozenset()
    tables: list[Table] = field(default_factory=list)


def analyze_pins(snapshot: Snapshot, changed: Collection[str] | None) -> PinOutcome:
    """Check the pin groups at one revision; with ``changed``, only findings touching it."""
    del snapshot, changed
    return PinOutcome()
