"""Launch resolution and the PAR rules: does each test's parallel layout fit its runner?"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.analysis.findings import Finding
from bot.analysis.markers import Marker
from bot.analysis.report import Table
from bot.analysis.snapshot import Snapshot

__all__ = ["LaunchOutcome", "Table", "analyze_launch", "compare"]


@dataclass(frozen=True)
class LaunchOutcome:
    """What resolving one marker's launches gave.

    ``signature`` is a hashable summary of every resolved launch (None when nothing was
    resolved), ``files`` the repository files read beyond the test's imports (a model script,
    say), ``table`` the launch grid for the summary.
    """

    signature: tuple[tuple[tuple[str, object], ...], ...] | None = None
    findings: list[Finding] = field(default_factory=list)
    files: tuple[str, ...] = ()
    table: Table | None = None

    @classmethod
    def empty(cls) -> LaunchOutcome:
        return cls()


def analyze_launch(snapshot: Snapshot, marker: Marker) -> LaunchOutcome:
    """Resolve a marker's launches at one revision and check them."""
    del snapshot, marker
    return LaunchOutcome.empty()


def compare(base: LaunchOutcome, head: LaunchOutcome) -> list[str]:
    """Sentences saying how the resolved launches differ (``ep 4 -> 2``); empty if alike."""
    if base.signature == head.signature:
        return []
    return ["resolved launch changed"]
