"""A failed ROCm job, explained: what rocmbot knew of the test when it dispatched it, its log
read and classified (`bot.analysis.triage`), and the result as the check and summary show it.

What the analysis of a head found is kept with the head's selection (:func:`head_findings`):
the PAR findings of each test's ROCm launch, the PIN findings of the image, the line of each
test's ROCm marker. When a job of a dispatched run fails, the tracker reads the end of its log
through the GitHub port and classifies it against those findings (:func:`explain`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.analysis import triage
from bot.analysis.findings import Finding, Severity, fingerprints
from bot.analysis.report import Report
from bot.store.dispatch import Explanation, HeadFindings, KnownFinding
from config.repo import FailureRule

FINDINGS_PER_TEST = 20  # kept of one test's launch findings (the first are the errors)
PINS_KEPT = 50


def head_findings(report: Report) -> HeadFindings:
    """What the analysis of a head found that a ROCm run of one of its tests may hit."""
    tests: dict[str, list[KnownFinding]] = {}
    pins: list[KnownFinding] = []
    keyed = zip(report.findings, fingerprints(report.findings), strict=True)
    for f, key in sorted(keyed, key=lambda pair: pair[0].sort_key()):
        known = KnownFinding(f.rule, f.severity.value, f.path, f.line, f.message, f.fix, f.test, key)
        if f.rule.startswith("PIN"):
            if len(pins) < PINS_KEPT:
                pins.append(known)
        elif f.rule.startswith("PAR") and f.backend in (None, "rocm") and (f.test or f.path):
            kept = tests.setdefault(f.test or f.path or "", [])
            if len(kept) < FINDINGS_PER_TEST:
                kept.append(known)
    markers = {t.path: t.line for t in report.tests if t.backend == "rocm"}
    return HeadFindings(tests, pins, markers)


def findings_of(known: Iterable[KnownFinding]) -> list[Finding]:
    """The kept findings as the analysis made them, for the classifier."""
    out = []
    for k in known:
        try:
            severity = Severity(k.severity)
        except ValueError:
            severity = Severity.ERROR
        out.append(Finding(k.rule, severity, k.path, k.line, k.message, k.fix, k.test))
    return out


def explain(job_id: int, log: bytes | None, known: Sequence[KnownFinding], failures: Sequence[FailureRule],
            seen: Iterable[str], *, unreadable: str | None = None) -> Explanation:
    """A failed job's log classified against what rocmbot knew of its test (``known``), the
    repository's failure patterns and the signatures of the test's earlier failures
    (``seen``); a log that is gone, unreadable, empty or not text is explained as such."""
    seen = tuple(sorted(set(seen)))
    if unreadable is not None:
        return Explanation(job_id, None, seen=seen, unavailable=unreadable)
    if log is None:
        return Explanation(job_id, None, seen=seen, unavailable="GitHub no longer has it (404 or 410)")
    try:
        text = triage.read_log(log)
    except triage.LogUnavailableError as exc:
        return Explanation(job_id, None, seen=seen, unavailable=str(exc))
    found = triage.classify(text, findings_of(known), rules=triage.patterns(failures), seen=seen)
    return Explanation(job_id, found.kind, found.excerpt, found.explanation, found.rule, found.pattern,
                       found.fix, found.signature, seen)
