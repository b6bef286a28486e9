"""`--format text`: for a terminal. Findings first, by severity and file; then one paragraph on
the tests and launches. The per-test listing, the runs and the tables come with ``verbose``."""

from __future__ import annotations

import re
import textwrap

from bot.analysis.findings import Finding, Severity
from bot.analysis.report import Report, Table, TestEntry
from bot.formats.common import (
    by_rule,
    gpu_minutes,
    launches,
    minutes,
    plural,
    pre_existing,
    short,
    twins,
    verdict,
)

WIDTH = 100
_COLOURS = {Severity.ERROR: "1;31", Severity.WARNING: "1;33", Severity.INFO: "1;36"}
_BOLD = "1"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """One line with no control character: text from a PR cannot move the cursor or colour
    the terminal (an escape sequence in a file name, say)."""
    return _CONTROL.sub("?", " ".join(str(text).split()))


class _Paint:
    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, sgr: str) -> str:
        return f"\x1b[{sgr}m{text}\x1b[0m" if self.on and text else text


def _table(table: Table) -> list[str]:
    rows = [tuple(plain(c) for c in r) for r in (table.header, *table.rows)]
    widths = [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(len(table.header))]
    out = [plain(table.title)]
    for n, row in enumerate(rows):
        out.append("  " + "  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip())
        if n == 0:
            out.append("  " + "  ".join("-" * w for w in widths))
    if table.note:
        out.append("  " + plain(table.note))
    return out


def _findings(findings: list[Finding], paint: _Paint) -> list[str]:
    lines: list[str] = []
    alike = twins(findings)
    for severity in Severity:
        mine = [f for f in findings if f.severity is severity]
        if not mine:
            continue
        noun = severity.value + ("s" if len(mine) != 1 else "")
        lines.append(paint(f"{len(mine)} {noun}", _COLOURS[severity]))
        files: dict[str, list[Finding]] = {}
        for f in mine:
            files.setdefault(plain(f.path) if f.path else "(the repository)", []).append(f)
        for path, group in files.items():
            lines.append("  " + paint(path, _BOLD))
            for f in group:
                where = f"{f.line}: " if f.line else ""
                suite = f" ({plain(f.suite)})" if id(f) in alike and f.suite else ""
                lines.append(f"    {where}{paint(f.rule, _COLOURS[severity])} [{f.slug}]{suite} "
                             f"{plain(f.message)}{pre_existing(f)}")
                lines.extend(f"        {plain(d)}" for d in f.details)
                if f.fix:
                    lines.append(f"        fix: {plain(f.fix)}")
    return lines


_NOTICES = 3  # notices listed without -v


def _test_line(t: TestEntry, analyze: bool) -> list[str]:
    state = "disabled" if t.disabled is not None else "enabled"
    if analyze:
        lines = [f"  {t.change:<11} {t.backend:<4} {plain(t.path)} [{plain(str(t.suite))}, {state}]"]
        lines.extend(f"              - {plain(reason)}" for reason in t.reasons)
        return lines
    where = f" (listed at {plain(t.registered)})" if t.registered else f":{t.line}"
    return [f"  {t.backend:<4} {plain(t.path)}{where} [{plain(str(t.suite))}, {state}]"]


def _details(report: Report, in_scope: list[TestEntry]) -> list[str]:
    """What ``verbose`` adds: the tests, the ROCm runs, the tables."""
    analyze = report.mode == "analyze"
    lines: list[str] = []
    if in_scope:
        lines.append("Tests changed or affected:" if analyze else "Tests:")
        for t in in_scope:
            lines.extend(_test_line(t, analyze))
    if report.selected:
        lines.append("ROCm runs to dispatch:")
        lines.extend(f"  {s.tier:<11} {plain(s.path)} [{plain(s.suite)}, {minutes(s.est_time)}, "
                     f"{gpu_minutes(s)} GPU-min]" for s in report.selected)
    for table in report.tables:
        if lines:
            lines.append("")
        lines.extend(_table(table))
    return lines


def _summary(report: Report, in_scope: list[TestEntry], hidden: bool) -> str:
    markers = f"{len(report.tests)} marker{'s' if len(report.tests) != 1 else ''}"
    from_matrices = sum(t.registered is not None for t in report.tests)
    if from_matrices:
        markers += f" ({from_matrices} listed by job matrices)"
    if not report.tests and any(n.kind == "no-tests" for n in report.notices):
        markers += " (what was looked for: see the notices)"
    if report.mode == "analyze":
        text = (f"rocmbot analyze {short(report.base)}..{short(report.head)}: {verdict(report)}. "
                f"{markers}, {len(in_scope)} changed or affected.")
        if report.selected:
            text += (f" ROCm runs to dispatch: {len(report.selected)} "
                     f"({report.gpu_minutes():.0f} GPU-minutes).")
        else:
            text += " ROCm runs to dispatch: none."
        if report.held:
            rules = ", ".join(sorted({h.rule for h in report.held}))
            text += (f" Held for a new error in their launch ({rules}): "
                     + ", ".join(plain(h.test.path) for h in report.held[:5])
                     + (f" and {len(report.held) - 5} more" if len(report.held) > 5 else "")
                     + "; `/run-amd --force` runs them.")
    else:
        text = f"rocmbot audit {short(report.head)}: {verdict(report)}. {markers}."
    checked = launches(report)
    if checked:
        text += f" {checked[0].upper()}{checked[1:]}."
    if hidden:
        extra = [part for part, shown in (("the ROCm runs", report.selected), ("the tables", report.tables))
                 if shown]
        parts = ["the tests", *extra]
        listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        text += f" Run with -v to list {listed}."
    return textwrap.fill(text, WIDTH, break_on_hyphens=False, break_long_words=False)


def render(report: Report, *, verbose: bool = False, color: bool = False) -> str:
    """The verdict and what it rests on first, then the errors and warnings (in `analyze`, the
    ones the change brought) in full; the infos and what the base already had are counted by
    rule, listed with ``verbose``, as are the tests, the ROCm runs and the tables."""
    paint = _Paint(color)
    in_scope = ([t for t in report.tests if t.change != "unchanged"] if report.mode == "analyze"
                else list(report.tests))
    details = _details(report, in_scope)
    lines = [_summary(report, in_scope, bool(details) and not verbose)]
    old = [f for f in report.findings if f.baseline == "unchanged"]
    notes = [f for f in report.findings if f.severity is Severity.INFO and f.baseline != "unchanged"]
    shown = report.findings if verbose else \
        [f for f in report.findings if f.severity is not Severity.INFO and f.baseline != "unchanged"]
    if shown:
        lines.extend(["", *_findings(shown, paint)])
    counted = [] if verbose else [
        text for text, found in ((f"{plural(len(old), 'finding')} the base already had "
                                  f"({by_rule(old)})", old),
                                 (f"{plural(len(notes), 'info')} ({by_rule(notes)})", notes))
        if found]
    if counted:
        lines.extend(["", textwrap.fill("Not listed: " + "; ".join(counted) + ". Run with -v to "
                                        "list them.", WIDTH, break_on_hyphens=False,
                                        break_long_words=False)])
    if report.notices:
        shown_notices = report.notices if verbose else report.notices[:_NOTICES]
        lines.extend(["", f"Not understood ({plural(len(report.notices), 'notice')}):"])
        for n in shown_notices:
            where = f" ({plain(f'{n.path}:{n.line}' if n.line else n.path)})" if n.path else ""
            lines.append(textwrap.fill(f"- {plain(n.message)}{where}", WIDTH, subsequent_indent="  ",
                                       break_on_hyphens=False, break_long_words=False))
            if n.fix:
                lines.append(textwrap.fill(f"fix: {plain(n.fix)}", WIDTH, initial_indent="    ",
                                           subsequent_indent="    ", break_on_hyphens=False,
                                           break_long_words=False))
        if len(report.notices) > len(shown_notices):
            lines.append(f"- and {len(report.notices) - len(shown_notices)} more; -v lists them")
    if report.pin_changes:
        lines.extend(["", "Pins this change touched:"])
        for change in report.pin_changes:
            agree = "consistent" if change.consistent else \
                f"not consistent ({', '.join(change.disagree)})"
            where = ", ".join(p.replace("`", "") for p in change.places) or "nowhere now"
            lines.append(f"  {plain(change.requirement)} {change.kind}: {plain(where)} - {agree}")
    if verbose and details:
        lines.extend(["", *details])
    return "\n".join(lines) + "\n"
