"""Pure builders of what a PR shows: check-run output, the sticky summary, inline comments."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.analysis.findings import Finding, Severity, fingerprints
from bot.analysis.report import Report
from bot.formats import markdown
from bot.formats.common import plural, verdict, where
from bot.formats.escape import code, prose

CHECK_NAME = "rocmbot / analysis"
SUMMARY_MARKER = "<!-- rocmbot:summary -->"
ANNOTATIONS_PER_REQUEST = 50  # GitHub's limit for one check-run create or update
MAX_COMMENT = 60_000  # GitHub refuses bodies over 65,536 characters
MAX_CHECK_TEXT = 65_000
STATE_PREFIX = "<!-- rocmbot:state "
STATE_FINDINGS = 100
STATE_DESCRIPTION = 120
STATE_SUFFIX = " -->"
_SHA = re.compile(r"[0-9a-f]{7,64}")
_FINGERPRINT = re.compile(r"[A-Z]+[0-9]+:[0-9a-f]{32}(:[0-9]+)?")  # findings.fingerprints
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")

Conclusion = Literal["success", "neutral", "failure"]


def diff_lines(patch: str | None) -> set[int]:
    """Lines of the new file that a PR diff shows (added or context): where GitHub accepts an
    inline comment on the RIGHT side."""
    return diff_anchors(patch)[0]


def diff_anchors(patch: str | None) -> tuple[set[int], list[int]]:
    """The lines a PR diff shows on the new side, and the lines the PR changed among them:
    added lines, and for lines only removed (a `disabled=` argument on a line of its own) the
    shown line right after the removal (or right before it, at the end of a hunk)."""
    shown: set[int] = set()
    changed: list[int] = []
    if not patch:
        return shown, changed
    new_line = 0
    removed = False
    for text in patch.splitlines():
        hunk = _HUNK.match(text)
        if hunk:
            if removed and new_line - 1 in shown:
                changed.append(new_line - 1)
            new_line, removed = int(hunk.group(1)), False
            continue
        if not new_line or text.startswith("\\"):
            continue
        if text.startswith("-"):
            removed = True
            continue
        shown.add(new_line)
        if text.startswith("+") or removed:
            changed.append(new_line)
        removed = False
        new_line += 1
    if removed and new_line - 1 in shown:
        changed.append(new_line - 1)
    return shown, sorted(set(changed))


def conclusion(report: Report) -> Conclusion:
    """`failure` only for errors the PR brought (`new`); errors its base already had, and
    warnings, make it `neutral`."""
    if report.new_errors:
        return "failure"
    if report.errors or any(f.severity is Severity.WARNING for f in report.findings):
        return "neutral"
    return "success"


def finding_keys(report: Report) -> dict[str, Finding]:
    """Each finding by its fingerprint (rule, file, test and message, line numbers left out):
    what identifies it across pushes, whatever else changes in its file."""
    return dict(zip(fingerprints(report.findings), report.findings, strict=True))


def _same(key: str) -> str:
    """A key without the `:2` a second finding of one fingerprint gets."""
    return ":".join(key.split(":")[:2])


_LEVEL = {Severity.ERROR: "failure", Severity.WARNING: "warning", Severity.INFO: "notice"}


def check_annotations(report: Report) -> list[dict[str, Any]]:
    """One check-run annotation per finding that has a file (others are in the summary)."""
    out = []
    for f in report.findings:
        if not f.path:
            continue
        line = f.line or 1
        details = "\n".join([*f.details, *([f"Fix: {f.fix}"] if f.fix else [])])
        item: dict[str, Any] = {
            "path": f.path,
            "start_line": line,
            "end_line": line,
            "annotation_level": _LEVEL[f.severity],
            "title": f"{f.rule} {f.slug}"[:255],
            "message": f.message[:64_000],
        }
        if details:
            item["raw_details"] = details[:64_000]
        out.append(item)
    return out


def batches(
    items: Sequence[dict[str, Any]], size: int = ANNOTATIONS_PER_REQUEST
) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def check_output(report: Report) -> dict[str, str]:
    """Title and summary of the check run (annotations go separately, in batches): the
    verdict, and the full report in the summary's order and wording."""
    title = verdict(report)
    old = len(report.errors) - len(report.new_errors)
    if old:
        title += f" ({plural(old, 'error')} already on the base)"
    return {"title": title[:255], "summary": markdown.render(report, full=True, limit=MAX_CHECK_TEXT)}


@dataclass
class SummaryState:
    """What the sticky comment remembers between pushes (stored in the comment, as JSON)."""

    head: str | None = None
    findings: dict[str, str] = field(default_factory=dict)  # key -> one-line description
    posted: list[str] = field(default_factory=list)  # inline comment keys already posted

    def dump(self) -> str:
        """The state as JSON that cannot end the HTML comment holding it: the descriptions
        carry PR paths, and a path holding `-->` would otherwise close the comment and put
        the rest of it, as markdown and HTML, into the rendered page."""
        text = json.dumps(
            {"head": self.head, "findings": self.findings, "posted": self.posted[-500:]},
            separators=(",", ":"),
        )
        return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")

    def comment(self) -> str:
        return f"{STATE_PREFIX}{self.dump()}{STATE_SUFFIX}"

    @classmethod
    def load(cls, body: str | None) -> SummaryState:
        """The state from the last line of a summary comment (only there: a PR path shown in
        a code span above it could spell a state of its own)."""
        if not body:
            return cls()
        last = body.rstrip("\n").rsplit("\n", 1)[-1]
        if not (last.startswith(STATE_PREFIX) and last.endswith(STATE_SUFFIX)):
            return cls()
        try:
            data = json.loads(last[len(STATE_PREFIX) : -len(STATE_SUFFIX)])
        except ValueError:
            return cls()
        if not isinstance(data, dict):
            return cls()
        findings = data.get("findings")
        posted = data.get("posted")
        head = data.get("head")
        return cls(
            head=head if isinstance(head, str) and _SHA.fullmatch(head) else None,
            findings={str(k): str(v) for k, v in findings.items()} if isinstance(findings, dict) else {},
            posted=[str(p) for p in posted] if isinstance(posted, list) else [],
        )


def is_summary(body: str | None) -> bool:
    """A summary comment starts with the marker (quoting one elsewhere does not make one)."""
    return bool(body) and (body or "").startswith(SUMMARY_MARKER)


def summary_body(
    report: Report,
    previous: SummaryState,
    posted: Sequence[str],
    runs: Sequence[markdown.Run] | None = None,
) -> tuple[str, SummaryState]:
    """The sticky comment for this head: the marker, the markdown report (with what the last
    push had that no finding of this head still has, and the runs dispatched), the state."""
    # infos are no problem: none is reported resolved, so the state does not keep them
    keys = {k: f for k, f in finding_keys(report).items() if f.severity is not Severity.INFO}
    # what the state remembers is bounded: a report past STATE_FINDINGS lists as resolved only
    # the first ones
    now = {k: f"{f.rule} at {where(f)}"[:STATE_DESCRIPTION] for k, f in list(keys.items())[:STATE_FINDINGS]}
    remaining = {_same(k) for k in now}
    resolved = list(dict.fromkeys(desc for key, desc in previous.findings.items()
                                  if _FINGERPRINT.fullmatch(key) and _same(key) not in remaining))
    state = SummaryState(
        head=report.head, findings=now, posted=list(dict.fromkeys([*previous.posted, *posted]))
    )
    tail = state.comment()
    limit = MAX_COMMENT - len(SUMMARY_MARKER) - len(tail) - 3
    text = markdown.render(report, runs=runs, resolved=resolved, since=previous.head, limit=limit)
    return f"{SUMMARY_MARKER}\n{text}\n{tail}\n", state


def with_runs(body: str, runs: Sequence[markdown.Run]) -> str:
    """A summary body with its runs section showing ``runs`` (a dispatch, a run that ended),
    without analysing again; the body as it was when it has no such section or would grow past
    the limit."""
    start = body.find(f"\n{markdown.RUNS_START}\n")
    end = body.find(f"\n{markdown.RUNS_END}\n", start + 1)
    if start < 0 or end < 0 or not runs:
        return body
    # the failed tests' log lines go first when the comment would grow too long, then the
    # failed tests themselves (the dispatch's check has them all)
    for failures, excerpts in ((True, markdown.OPEN_FAILURES), (True, 0), (False, 0)):
        section = markdown.runs_section(runs, failures=failures, excerpts=excerpts)
        changed = body[: start + 1] + section + body[end + 1 + len(markdown.RUNS_END):]
        if len(changed) <= MAX_COMMENT:
            return changed
    return body


def is_relevant(report: Report) -> bool:
    """Whether a PR deserves a summary comment (it touches tests or has findings)."""
    return bool(report.findings) or any(t.change != "unchanged" for t in report.tests)


@dataclass(frozen=True)
class Inline:
    path: str
    line: int
    body: str
    keys: tuple[str, ...]  # the fingerprints of the findings it carries


def _quote(text: str) -> list[str]:
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return [f"{fence}\n{text}\n{fence}"]


def inline_comments(
    report: Report,
    patches: Mapping[str, str | None],
    posted: Sequence[str],
    source: Callable[[str, int], str | None] = lambda path, line: None,
) -> list[Inline]:
    """Review comments for the findings the PR brought, on a line of the diff, never for a
    finding (by fingerprint) commented on before. A finding whose line the diff does not show
    goes on the nearest line the PR changed in its file (or its test's), quoting the
    offending line (``source``: a line of the head) with its place; the rest stay in the
    summary."""
    seen = set(posted)
    anchors = {path: diff_anchors(patch) for path, patch in patches.items()}
    out: list[Inline] = []
    at: dict[tuple[str, int | None, str, int], int] = {}  # a finding's place -> its comment
    for key, f in finding_keys(report).items():
        if f.severity is Severity.INFO or f.baseline == "unchanged" or not f.path or key in seen:
            continue
        shown, _ = anchors.get(f.path, (set(), []))
        lines = [f"**{f.rule}** `{f.slug}`: {prose(f.message)}"]
        if f.line and f.line in shown:
            path, line = f.path, f.line
        else:
            files = dict.fromkeys([f.path, f.test or f.path])
            found = [(p, n) for p in files for n in anchors.get(p, (set(), []))[1]]
            if not found:
                continue
            path, line = min(found, key=lambda pn: (pn[0] != f.path, abs(pn[1] - (f.line or 0))))
            lines.append(f"On {code(where(f))}, which this diff does not show:")
            text = source(f.path, f.line) if f.line else None
            if text is not None:
                lines.extend(_quote(text))
        seen.add(key)
        lines.extend(prose(d) for d in f.details)
        if f.fix:
            lines.append(f"**Fix**: {prose(f.fix)}")
        # findings of one place share their cause (a TP size a harness sets breaks four
        # rules; a test's CUDA and ROCm launches fail alike): one comment, each rule with
        # its message and fix, what they say alike said once
        origin = (f.path, f.line, path, line)
        earlier = at.get(origin)
        if earlier is None:
            at[origin] = len(out)
            out.append(Inline(path, line, "\n\n".join(lines), (key,)))
            continue
        c = out[earlier]
        extra = [part for part in lines if part not in c.body.split("\n\n")]
        out[earlier] = Inline(path, line, "\n\n".join([c.body, *extra]), (*c.keys, key))
    return out
