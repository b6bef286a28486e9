"""Pure builders of what a PR shows: check-run output, the sticky summary, inline comments."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.analysis.findings import Finding, Severity
from bot.analysis.report import Report
from bot.formats import markdown
from bot.formats.escape import code, prose

CHECK_NAME = "rocmbot / analysis"
SUMMARY_MARKER = "<!-- rocmbot:summary -->"
ANNOTATIONS_PER_REQUEST = 50  # GitHub's limit for one check-run create or update
MAX_COMMENT = 65_000  # GitHub refuses bodies over 65,536 characters
MAX_CHECK_TEXT = 65_000
STATE_PREFIX = "<!-- rocmbot:state "
STATE_SUFFIX = " -->"
_SHA = re.compile(r"[0-9a-f]{7,64}")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")

Conclusion = Literal["success", "neutral", "failure"]


def diff_lines(patch: str | None) -> set[int]:
    """Lines of the new file that a PR diff shows (added or context): where GitHub accepts an
    inline comment on the RIGHT side."""
    lines: set[int] = set()
    if not patch:
        return lines
    new_line = 0
    for text in patch.splitlines():
        hunk = _HUNK.match(text)
        if hunk:
            new_line = int(hunk.group(1))
            continue
        if not new_line or text.startswith("\\"):
            continue
        if text.startswith("-"):
            continue
        lines.add(new_line)
        new_line += 1
    return lines


def conclusion(report: Report) -> Conclusion:
    """`failure` only for errors the PR brought (`new`); errors its base already had, and
    warnings, make it `neutral`."""
    if report.new_errors:
        return "failure"
    if report.errors or any(f.severity is Severity.WARNING for f in report.findings):
        return "neutral"
    return "success"


def finding_key(f: Finding, blob: str | None) -> str:
    """What identifies a finding across pushes: rule, place, message, and the file's content."""
    raw = f"{f.rule}|{f.path}|{f.line}|{f.test}|{f.message}|{blob or ''}"
    return hashlib.sha1(raw.encode(), usedforsecurity=False).hexdigest()[:16]


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


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 80].rsplit("\n", 1)[0] + "\n\n…cut: the full report is in the check run.\n"


def check_output(report: Report) -> dict[str, str]:
    """Title and summary of the check run (annotations go separately, in batches)."""
    counts = report.counts()
    new = len(report.new_errors)
    old = len(report.errors) - new
    if new:
        title = f"{new} error{'s' if new != 1 else ''}: runs would fail on the runner"
        if old:
            title += f" ({old} more already on the base)"
    elif old:
        title = f"{old} error{'s' if old != 1 else ''} already on the base, none new"
    elif counts["warning"]:
        title = f"{counts['warning']} warning{'s' if counts['warning'] != 1 else ''}"
    else:
        title = "No problems found"
    selected = len(report.selected)
    title += f"; {selected} ROCm run{'s' if selected != 1 else ''} selected"
    return {"title": title[:255], "summary": _cut(markdown.render(report), MAX_CHECK_TEXT)}


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
    report: Report, previous: SummaryState, keys: Mapping[str, Finding], posted: Sequence[str]
) -> tuple[str, SummaryState]:
    """The sticky comment for this head: the report, and what the last push had that is gone."""
    now = {
        k: f"{f.rule} at {f.path}:{f.line}" if f.line else f"{f.rule} at {f.path}" for k, f in keys.items()
    }
    resolved = [desc for key, desc in previous.findings.items() if key not in now]
    state = SummaryState(
        head=report.head, findings=now, posted=list(dict.fromkeys([*previous.posted, *posted]))
    )
    parts = [SUMMARY_MARKER, markdown.render(report).rstrip()]
    if resolved:
        since = code(previous.head[:12]) if previous.head else "the last push"
        parts.append("")
        parts.append(f"**Resolved since {since}**: " + "; ".join(prose(r) for r in resolved[:50]))
    parts.append("")
    parts.append(state.comment())
    body = "\n".join(parts) + "\n"
    if len(body) > MAX_COMMENT:
        tail = f"\n{state.comment()}\n"
        body = _cut("\n".join(parts[:2]), MAX_COMMENT - len(tail)) + tail
    return body, state


def is_relevant(report: Report) -> bool:
    """Whether a PR deserves a summary comment (it touches tests or has findings)."""
    return bool(report.findings) or any(t.change != "unchanged" for t in report.tests)


@dataclass(frozen=True)
class Inline:
    path: str
    line: int
    body: str
    key: str


def inline_comments(
    report: Report, diff: Mapping[str, set[int]], blobs: Mapping[str, str | None], posted: Sequence[str]
) -> list[Inline]:
    """Review comments for findings anchored on a diff line, not posted before for the same
    file content; the rest stay in the summary."""
    seen = set(posted)
    out: list[Inline] = []
    for f in report.findings:
        if f.severity is Severity.INFO or not f.path or not f.line or f.line not in diff.get(f.path, set()):
            continue
        key = finding_key(f, blobs.get(f.path))
        if key in seen:
            continue
        seen.add(key)
        lines = [f"**{f.rule}** `{f.slug}`: {prose(f.message)}"]
        lines.extend(prose(d) for d in f.details)
        if f.fix:
            lines.append(f"**Fix**: {prose(f.fix)}")
        out.append(Inline(f.path, f.line, "\n\n".join(lines), key))
    return out
