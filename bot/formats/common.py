"""Wording shared by the human-readable formats."""

from __future__ import annotations

from bot.analysis.findings import Finding, Severity
from bot.analysis.report import Report, Selected

ICON = {Severity.ERROR: "❌", Severity.WARNING: "⚠️", Severity.INFO: "ℹ️"}  # noqa: RUF001


def headline(report: Report) -> str:
    counts = report.counts()
    parts = [f"{counts[s.value]} {s.value}{'s' if counts[s.value] != 1 else ''}"
             for s in Severity if counts[s.value]]
    return ", ".join(parts) if parts else "no findings"


def launches(report: Report) -> str | None:
    """How many GPU markers' launches were checked: "launches checked: 96 of 104 (5 partly,
    3 not at all); 12 GPU markers start no launch the rules model"."""
    counts = report.launch_counts()
    found = counts["checked"] + counts["partial"] + counts["unchecked"]
    if not found and not counts["none"]:
        return None
    text = f"launches checked: {counts['checked']} of {found}"
    rest = [f"{counts['partial']} partly"] if counts["partial"] else []
    rest += [f"{counts['unchecked']} not at all"] if counts["unchecked"] else []
    if rest:
        text += f" ({', '.join(rest)})"
    if counts["none"]:
        n = counts["none"]
        text += f"; {n} GPU marker{'s' if n != 1 else ''} start{'s' if n == 1 else ''} no launch " \
                "the rules model"
    return text


def pre_existing(f: Finding) -> str:
    """What a finding's line says when the base already had it."""
    return " (already on the base)" if f.baseline == "unchanged" else ""


def minutes(seconds: float | None) -> str:
    return "?" if seconds is None else f"{seconds / 60:.0f} min"


def gpu_minutes(selected: Selected) -> str:
    value = selected.gpu_minutes
    return "?" if value is None else f"{value:.0f}"


def short(sha: str | None) -> str:
    return sha[:12] if sha else "working tree"
