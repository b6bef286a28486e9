"""Wording shared by the human-readable formats."""

from __future__ import annotations

from bot.analysis.findings import Severity
from bot.analysis.report import Report, Selected

ICON = {Severity.ERROR: "❌", Severity.WARNING: "⚠️", Severity.INFO: "ℹ️"}  # noqa: RUF001


def headline(report: Report) -> str:
    counts = report.counts()
    parts = [f"{counts[s.value]} {s.value}{'s' if counts[s.value] != 1 else ''}"
             for s in Severity if counts[s.value]]
    return ", ".join(parts) if parts else "no findings"


def minutes(seconds: float | None) -> str:
    return "?" if seconds is None else f"{seconds / 60:.0f} min"


def gpu_minutes(selected: Selected) -> str:
    value = selected.gpu_minutes
    return "?" if value is None else f"{value:.0f}"


def short(sha: str | None) -> str:
    return sha[:12] if sha else "working tree"
