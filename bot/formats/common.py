"""Wording shared by the human-readable formats."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from bot.analysis.findings import Finding, Severity
from bot.analysis.report import Report, Selected, Table, TestEntry

ICON = {Severity.ERROR: "❌", Severity.WARNING: "⚠️", Severity.INFO: "ℹ️"}  # noqa: RUF001
# Changes of a test's marker itself (the rest, `modified` and `affected`, touch its code or
# what it runs on)
MARKER_CHANGES = frozenset({"added", "removed", "enabled", "disabled", "reason", "suite", "parallelism"})


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# The order every human-readable format follows: the verdict, the new problems, the markers
# the PR changed, the ROCm runs; then what needs no action: findings the base already had,
# tests touched but not dispatched, the tables, the infos.

def new_problems(report: Report) -> list[Finding]:
    """Errors and warnings the PR brought (in `audit`, all of them), errors first."""
    return [f for f in report.findings if f.severity is not Severity.INFO and f.baseline != "unchanged"]


def pre_existing_problems(report: Report) -> list[Finding]:
    """Errors and warnings the base already had."""
    return [f for f in report.findings if f.severity is not Severity.INFO and f.baseline == "unchanged"]


def infos(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.severity is Severity.INFO]


def changed_markers(report: Report) -> list[TestEntry]:
    return [t for t in report.tests if t.change in MARKER_CHANGES]


def not_dispatched(report: Report) -> list[TestEntry]:
    """Tests the PR touches through their code, a harness or the environment that
    `/run-amd` will not run (CUDA ones, nightly or external suites, disabled ones)."""
    chosen = {(s.path, s.suite) for s in report.selected}
    return [t for t in report.tests if t.change in ("modified", "affected")
            and (t.backend != "rocm" or (t.path, t.suite) not in chosen)]


def why_not_run(t: TestEntry, labels: Collection[str] = ()) -> str:
    """Why `/run-amd` leaves a touched test out, in a word or two (``labels``: the PR's)."""
    if t.backend != "rocm":
        return t.backend
    if t.disabled is not None:
        return "disabled"
    if t.cadence == "on-label" and t.gate:
        return f"runs with label {t.gate}" if t.gate in labels else f"needs label {t.gate}"
    if t.cadence in ("nightly", "external"):
        return t.cadence
    return "not selected"


def by_rule(findings: Iterable[Finding]) -> str:
    """`PIN003 x9, PAR019 x3` (with a multiplication sign): how many findings of each rule,
    most first."""
    counts = Counter(f.rule for f in findings)
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{rule} \u00d7{n}" for rule, n in ordered)


def verdict(report: Report) -> str:
    """The first line of every format: what the PR introduced, and what would run
    ("no new problems · 4 ROCm tests will run, ~307 GPU-minutes", "1 new error")."""
    found = new_problems(report)
    errors = sum(f.severity is Severity.ERROR for f in found)
    warnings = len(found) - errors
    new = "" if report.mode == "audit" else "new "
    parts = [plural(n, new + word) for n, word in ((errors, "error"), (warnings, "warning")) if n]
    if not parts:
        parts = [f"no {new}problems"]
    if report.mode == "analyze" and not errors:
        n = len(report.selected)
        parts.append(f"{plural(n, 'ROCm test')} will run, ~{report.gpu_minutes():.0f} GPU-minutes"
                     if n else "no ROCm tests selected")
    return " · ".join(parts)


def verdict_icon(report: Report) -> str:
    found = new_problems(report)
    if any(f.severity is Severity.ERROR for f in found):
        return ICON[Severity.ERROR]
    return ICON[Severity.WARNING] if found else "✅"


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


def launch_changed(t: TestEntry) -> bool:
    """Whether the PR changed what a marker's launch is given (``ep 4 -> 2``)."""
    return t.change == "parallelism" or bool(t.launch_diff)


def shown_tables(report: Report) -> list[Table]:
    """The tables the comment shows: a launch grid only for a test whose launch the PR
    changed or that will run (the others are in the check run), every other table."""
    if report.mode != "analyze":
        return list(report.tables)
    wanted = {(s.path, s.suite) for s in report.selected}
    wanted |= {(t.path, t.suite or "") for t in report.tests if launch_changed(t)}
    return [t for t in report.tables if t.marker is None or t.marker in wanted]


def pre_existing(f: Finding) -> str:
    """What a finding's line says when the base already had it."""
    return " (already on the base)" if f.baseline == "unchanged" else ""


def twins(findings: Sequence[Finding]) -> frozenset[int]:
    """The findings (by ``id``) whose headline (rule, place, message) another one shares
    with another suite: a CUDA and a ROCm launch that fail alike. Their headline names
    the suite."""
    seen: dict[tuple[object, ...], set[str | None]] = {}
    for f in findings:
        seen.setdefault((f.rule, f.path, f.line, f.message), set()).add(f.suite)
    return frozenset(id(f) for f in findings
                     if f.suite is not None and len(seen[(f.rule, f.path, f.line, f.message)]) > 1)


def where(f: Finding) -> str:
    if not f.path:
        return "the repository"
    return f"{f.path}:{f.line}" if f.line else f.path


def minutes(seconds: float | None) -> str:
    return "?" if seconds is None else f"{seconds / 60:.0f} min"


def gpu_minutes(selected: Selected) -> str:
    value = selected.gpu_minutes
    return "?" if value is None else f"{value:.0f}"


def short(sha: str | None) -> str:
    return sha[:12] if sha else "working tree"
