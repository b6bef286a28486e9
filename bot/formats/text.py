"""`--format text`: for a terminal."""

from __future__ import annotations

from bot.analysis.report import Report, Table
from bot.formats.common import gpu_minutes, headline, launches, minutes, pre_existing, short


def _table(table: Table) -> list[str]:
    rows = [table.header, *table.rows]
    widths = [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(len(table.header))]
    out = [table.title]
    for n, row in enumerate(rows):
        out.append("  " + "  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip())
        if n == 0:
            out.append("  " + "  ".join("-" * w for w in widths))
    if table.note:
        out.append("  " + table.note)
    return out


def render(report: Report) -> str:
    lines: list[str] = []
    if report.mode == "analyze":
        lines.append(f"rocmbot analyze {short(report.base)}..{short(report.head)}: {headline(report)}")
        in_scope = [t for t in report.tests if t.change != "unchanged"]
        lines.append(f"{len(report.tests)} markers, {len(in_scope)} changed or affected")
    else:
        lines.append(f"rocmbot audit {short(report.head)}: {headline(report)}")
        in_scope = []
        lines.append(f"{len(report.tests)} markers")
    checked = launches(report)
    if checked:
        lines.append(checked)
    for t in in_scope:
        state = "disabled" if t.disabled is not None else "enabled"
        lines.append(f"  {t.change:<11} {t.backend:<4} {t.path} [{t.suite}, {state}]")
        for reason in t.reasons:
            lines.append(f"              - {reason}")
    if report.mode == "analyze":
        if report.selected:
            total = report.gpu_minutes()
            lines.append(f"ROCm runs to dispatch: {len(report.selected)} ({total:.0f} GPU-minutes)")
            for s in report.selected:
                lines.append(f"  {s.tier:<11} {s.path} [{s.suite}, {minutes(s.est_time)}, "
                             f"{gpu_minutes(s)} GPU-min]")
        else:
            lines.append("ROCm runs to dispatch: none")
    for table in report.tables:
        lines.append("")
        lines.extend(_table(table))
    if report.findings:
        lines.append("")
    for f in report.findings:
        where = f"{f.path}:{f.line}" if f.path and f.line else (f.path or "-")
        lines.append(f"{where}: {f.severity.value} {f.rule} [{f.slug}] {f.message}{pre_existing(f)}")
        lines.extend(f"    {d}" for d in f.details)
        if f.fix:
            lines.append(f"    fix: {f.fix}")
    return "\n".join(lines) + "\n"
