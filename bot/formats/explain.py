"""`rocmbot explain`: for one test, the chain from a PR's changed files to its ROCm decision."""

from __future__ import annotations

from bot.analysis.report import Report, TestEntry

_TIERS = {
    "direct": "the test file itself changed",
    "harness": "a module it imports changed",
    "launch": "a module its launch runs changed",
    "environment": "the ROCm environment its jobs run in changed",
}


def matching(report: Report, test: str) -> list[TestEntry]:
    """The report's markers of a test named by its path or the end of it."""
    exact = [t for t in report.tests if t.path == test]
    return exact or [t for t in report.tests if t.path.endswith("/" + test.lstrip("/"))]


def explain(report: Report, entry: TestEntry) -> str:
    """A few lines: what changed for the test, what its CI does, and what rocmbot does."""
    lines = [f"{entry.path} ({entry.backend}, suite `{entry.suite}`)"]
    if entry.disabled is not None:
        lines.append(f"  parked: disabled={entry.disabled!r}")
    if entry.tier is None:
        lines.append("  reached: no; nothing this change touched reaches it")
    else:
        lines.append(f"  reached: {entry.tier}: {_TIERS[entry.tier]} (`{entry.trigger}`)")
    lines.extend(f"  - {reason}" for reason in entry.reasons)
    lines.append(f"  change: {entry.change}; launch: {entry.launch}")
    if entry.cadence is not None:
        gate = f" (label `{entry.gate}`)" if entry.gate else ""
        lines.append(f"  cadence: {entry.cadence}{gate}: {entry.cadence_why}")
    found = report.ci_runs.get((entry.path, entry.suite or ""))
    if found is not None:
        verdict = {True: "runs it", False: "does not run it", None: "may run it (undecided)"}[found[0]]
        lines.append(f"  the repository's CI {verdict} for this PR: {found[1]}")
    lines.append("  rocmbot: " + _decision(report, entry))
    return "\n".join(lines) + "\n"


def _decision(report: Report, entry: TestEntry) -> str:
    for s in report.selected:
        if (s.path, s.suite) == (entry.path, entry.suite):
            return f"dispatches it ({s.tier}: {s.reason or s.trigger})"
    for k in report.skipped:
        if (k.path, k.suite) == (entry.path, entry.suite):
            detail = k.job or (f"label `{k.gate}`" if k.gate else "")
            return f"skips it: {k.why}" + (f" ({detail})" if detail else "")
    if entry.backend != "rocm":
        return "not a ROCm test: nothing to dispatch"
    if entry.disabled is not None:
        return "not dispatched: the test is disabled (`/run-amd disabled` is for parked tests)"
    if entry.tier is None:
        return "not dispatched: the change does not reach it"
    return f"not dispatched: its change is `{entry.change}`"
