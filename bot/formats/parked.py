"""`rocmbot parked`: the parked (`disabled=`) tests of a repository, in text, markdown or JSON.

The tests a maintainer can bring back today come first (a launch checked and valid), then
those only a run can tell about, then those whose launch would fail, each with its fix.
"""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime

from bot.analysis.report import Parked, Report
from bot.formats.escape import cell, code, prose

WIDTH = 100


def age(p: Parked, now: datetime | None = None) -> str:
    """How long a test has been parked (`42 days`), or `?` when history does not say."""
    if p.since is None:
        return "?"
    try:
        when = datetime.fromisoformat(p.since[1])
    except ValueError:
        return "?"
    days = ((now or datetime.now(UTC)) - when).days
    return f"{max(days, 0)} day{'s' if days != 1 else ''}"


def verdict(p: Parked) -> str:
    """What a parked test's launch says: its first problem with the fix, `valid`, or how much of
    it could not be checked."""
    if p.problems:
        first = p.problems[0]
        return f"{first.rule}" + (f"; fix: {first.fix}" if first.fix else "")
    if p.candidate:
        return "valid"
    return {"partial": "partly checked", "unchecked": "not checked",
            "none": "no launch the rules model"}.get(p.launch or "", "not checked")


def _headline(report: Report) -> str:
    ready = sum(p.candidate for p in report.parked)
    failing = sum(bool(p.problems) for p in report.parked)
    where = report.head[:12] if report.head else "working tree"
    if not report.parked:
        return f"rocmbot parked {where}: no parked GPU test."
    return (f"rocmbot parked {where}: {len(report.parked)} parked GPU test"
            f"{'s' if len(report.parked) != 1 else ''}; {ready} with a valid launch (can come back "
            f"today: run them), {failing} whose launch would fail (fix first), "
            f"{len(report.parked) - ready - failing} only a run can tell.")


def render_text(report: Report, now: datetime | None = None) -> str:
    lines = [textwrap.fill(_headline(report), WIDTH, break_on_hyphens=False)]
    for p in report.parked:
        lines.append("")
        mark = "ready" if p.candidate else "fix" if p.problems else "run"
        lines.append(f"[{mark}] {p.path} ({p.backend}, {p.suite or '?'}), parked {age(p, now)}"
                     + (f" since {p.since[0][:12]}" if p.since else ""))
        lines.append(textwrap.fill(f"reason: {p.reason}", WIDTH, initial_indent="  ",
                                   subsequent_indent="    ", break_on_hyphens=False))
        lines.append(textwrap.fill(f"launch: {verdict(p)}", WIDTH, initial_indent="  ",
                                   subsequent_indent="    ", break_on_hyphens=False))
    return "\n".join(lines) + "\n"


def render_markdown(report: Report, now: datetime | None = None) -> str:
    lines = [f"**{prose(_headline(report))}**", ""]
    if report.parked:
        lines.append("| Test | Suite | Parked for | Reason | Launch | Can come back |")
        lines.append("| --- | --- | --- | --- | --- | --- |")
        for p in report.parked:
            lines.append("| " + " | ".join([
                code(p.path), code(p.suite or "?"), age(p, now), cell(p.reason), cell(verdict(p)),
                "yes" if p.candidate else "fix first" if p.problems else "a run can tell",
            ]) + " |")
    return "\n".join(lines) + "\n"


def render_json(report: Report) -> str:
    return json.dumps({"schema": 1, "head": report.head,
                       "parked": [p.as_json() for p in report.parked]}, indent=2) + "\n"
