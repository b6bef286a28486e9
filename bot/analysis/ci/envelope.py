"""The envelope of a PR's ROCm runs: what the repository's own CI runs for it on AMD
(``repo-ci``), set beside what the PR affects, and what rocmbot dispatches of the rest.

`dispatch.mode: targeted` (the default) dispatches the affected tests and says how many of
them the repository's CI runs anyway; `complement` dispatches only those it does not run,
and falls back to `targeted` (saying so) when the CI's decision for one of them is unknown.
"""

from __future__ import annotations

from collections.abc import Collection

from bot.analysis.ci.index import CiIndex
from bot.analysis.report import RepoCi, Report, Skipped, TestEntry


def complement(report: Report, index: CiIndex, mode: str, entries: list[TestEntry],
               changed: Collection[str], labels: Collection[str] | None) -> None:
    """Fill the report's ``repo_ci``, ``dispatch_mode`` and, in `complement`, move what the
    repository's CI runs from ``selected`` to ``skipped``."""
    model = index.model
    assumed = None if labels is None else frozenset(labels)
    files = frozenset(changed)
    runs: dict[tuple[str, str], tuple[bool | None, str]] = {}
    for e in entries:
        if e.backend != "rocm" or e.disabled is not None or e.suite is None or e.change == "removed":
            continue
        found = model.repo_ci(e.suite, "rocm", assumed, files)
        job = f"`{found.job[1]}` in `{found.job[0]}`" if found.job else ""
        runs[(e.path, e.suite)] = (found.runs, job)
        report.ci_runs[(e.path, e.suite)] = (found.runs, found.why)
    selected = {(s.path, s.suite) for s in report.selected}
    report.repo_ci = RepoCi(
        runs=sum(r is True for r, _ in runs.values()),
        unknown=sum(r is None for r, _ in runs.values()),
        affected=sum(runs.get(k, (False, ""))[0] is True for k in selected),
        labels=tuple(sorted(model.ci_labels if assumed is None else assumed)),
    )
    if mode != "complement":
        report.dispatch_mode = "targeted"
        report.dispatch_reason = "`dispatch.mode: targeted`: every affected per-PR test is dispatched"
        return
    undecided = sorted(s.path for s in report.selected if runs.get((s.path, s.suite), (None, ""))[0] is None)
    if undecided:
        report.dispatch_mode = "targeted"
        report.dispatch_reason = (
            f"`dispatch.mode: complement`, but whether the repository's CI runs `{undecided[0]}`"
            + (f" and {len(undecided) - 1} more" if len(undecided) > 1 else "")
            + " cannot be decided statically: dispatching as `targeted`")
        return
    report.dispatch_mode = "complement"
    report.dispatch_reason = ("`dispatch.mode: complement`: the tests the repository's CI runs for "
                              "this PR are skipped")
    kept = []
    for s in report.selected:
        ran, job = runs.get((s.path, s.suite), (False, ""))
        if ran is True:
            report.skipped.append(Skipped(s.path, s.suite, "repo-ci", s.trigger, s.reason, job=job))
        else:
            kept.append(s)
    report.selected = kept
