"""`--format markdown`: the body of the PR summary comment. PR text is always escaped."""

from __future__ import annotations

import re

from bot.analysis.findings import Severity
from bot.analysis.report import Report, Table, TestEntry
from bot.formats.common import ICON, gpu_minutes, headline, launches, minutes, pre_existing, short
from bot.formats.escape import cell, code, html_prose, prose

MAX_ROWS = 100  # a comment holds 65,536 characters; long lists are cut with a count


def _row(cells: list[str]) -> str:
    # GFM splits table cells on `|` even inside code spans, unless it is escaped.
    return "| " + " | ".join(re.sub(r"(?<!\\)\|", r"\\|", c) for c in cells) + " |"


def grid(header: list[str], rows: list[list[str]]) -> list[str]:
    out = [_row(header), _row(["---"] * len(header))]
    out.extend(_row(r) for r in rows[:MAX_ROWS])
    if len(rows) > MAX_ROWS:
        out.append(f"\n…and {len(rows) - MAX_ROWS} more rows.")
    return out


def _test_row(t: TestEntry) -> list[str]:
    state = " (disabled)" if t.disabled is not None and t.change not in ("disabled", "reason") else ""
    return [
        code(t.path),
        t.backend,
        code(t.suite or "?"),
        "?" if t.gpus is None else str(t.gpus),
        minutes(t.est_time),
        f"**{t.change}**{state}",
        "<br>".join(prose(r) for r in t.reasons) or " ",
    ]


def _extra_table(table: Table) -> list[str]:
    # The `<details>` line is an HTML block: markdown is not read there, so the title is
    # escaped as HTML, not as markdown.
    out = ["", f"<details><summary>{html_prose(table.title)}</summary>", ""]
    out.extend(grid([cell(h) for h in table.header], [[cell(c) for c in r] for r in table.rows]))
    if table.note:
        out.extend(["", prose(table.note)])
    out.extend(["", "</details>"])
    return out


def render(report: Report) -> str:
    errors = bool(report.new_errors)  # the base's errors do not fail the PR
    warn = bool(report.errors) or any(f.severity is Severity.WARNING for f in report.findings)
    icon = "❌" if errors else ("⚠️" if warn else "✅")
    lines = [f"### {icon} rocmbot: {headline(report)}", ""]
    if report.mode == "analyze":
        lines.append(f"Compared `{short(report.base)}` (base) with `{short(report.head)}` (head).")
        in_scope = [t for t in report.tests if t.change != "unchanged"]
        lines.append("")
        if in_scope:
            lines.append(f"**Tests this PR touches** ({len(in_scope)} of {len(report.tests)} markers)")
            lines.append("")
            lines.extend(grid(["Test", "Backend", "Suite", "GPUs", "Est.", "Change", "Why"],
                                [_test_row(t) for t in in_scope]))
        else:
            lines.append(f"No registered test is touched ({len(report.tests)} markers checked).")
        lines.append("")
        if report.selected:
            lines.append(f"**ROCm runs `/run-amd` would dispatch**: {len(report.selected)}, "
                         f"about {report.gpu_minutes():.0f} GPU-minutes")
            lines.append("")
            lines.extend(grid(
                ["Test", "Suite", "Tier", "Est.", "GPU-min"],
                [[code(s.path), code(s.suite), s.tier, minutes(s.est_time), gpu_minutes(s)]
                 for s in report.selected],
            ))
        else:
            lines.append("**ROCm runs `/run-amd` would dispatch**: none.")
    else:
        lines.append(f"Audited `{short(report.head)}`: {len(report.tests)} markers.")
    checked = launches(report)
    if checked:
        lines.extend(["", checked[0].upper() + checked[1:] + "."])
    if report.findings:
        lines.extend(["", "**Findings**", ""])
        for f in report.findings[:MAX_ROWS]:
            where = code(f"{f.path}:{f.line}" if f.line else f.path) if f.path else "the repository"
            test = f" (test {code(f.test)})" if f.test and f.test != f.path else ""
            lines.append(f"- {ICON[f.severity]} **{f.rule}** `{f.slug}` at {where}{test}: "
                         f"{prose(f.message)}{pre_existing(f)}")
            lines.extend(f"  - {prose(d)}" for d in f.details)
            if f.fix:
                lines.append(f"  - Fix: {prose(f.fix)}")
        if len(report.findings) > MAX_ROWS:
            lines.append(f"- …and {len(report.findings) - MAX_ROWS} more findings.")
    for table in report.tables:
        lines.extend(_extra_table(table))
    return "\n".join(lines) + "\n"
