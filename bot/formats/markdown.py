"""`--format markdown`: the body of the PR summary comment. PR text is always escaped.

The verdict comes first, then what needs a human (the new problems with their fixes, the
markers the PR changed, the ROCm runs), open; everything else is one click away in
`<details>` blocks. The comment keeps within a budget; the check run carries the full report.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bot.analysis.findings import Finding
from bot.analysis.report import Parked, Report, Selected, Table, TestEntry
from bot.formats.common import (
    ICON,
    MARKER_CHANGES,
    by_rule,
    changed_markers,
    gpu_minutes,
    infos,
    launches,
    minutes,
    new_problems,
    not_dispatched,
    plural,
    pre_existing_problems,
    short,
    shown_tables,
    twins,
    verdict,
    verdict_icon,
    where,
    why_not_run,
)
from bot.formats.escape import cell, code, code_block, html_prose, prose

MAX_ROWS = 100  # rows of a table or items of a list in the full report
SHORT_ROWS = 25  # ... and in the comment
SHORT_TABLES = 5  # launch and pin tables in the comment
SHORT_LIST = 10  # tests touched but not dispatched, listed in the comment
OPEN_FINDINGS = 20  # new problems shown with their details in the comment
COMMENT_LIMIT = 60_000  # GitHub refuses comments over 65,536 characters
CUT_COMMENT = ("\n…cut here to keep the comment short: the check run **rocmbot / analysis** "
               "(the Checks tab) has the full report.\n")
# the lines around the runs section (PR text never makes a line of its own: it is escaped,
# and kept on one line)
RUNS_START = "<!-- rocmbot:runs -->"
RUNS_END = "<!-- rocmbot:/runs -->"
CUT_FULL = "\n…cut here: `rocmbot analyze --format json` has the full report.\n"


@dataclass(frozen=True)
class Failure:
    """A test whose ROCm job failed, explained from its log (`bot.analysis.triage`): its class
    (None when the log was not available, ``unavailable`` saying why), the decisive lines, what
    decided the class, and the job's page."""

    path: str
    kind: str | None
    excerpt: tuple[str, ...] = ()
    explanation: str = ""
    rule: str | None = None
    pattern: str | None = None
    fix: str | None = None
    url: str | None = None
    unavailable: str | None = None


@dataclass(frozen=True)
class Run:
    """A ROCm run dispatched for the head, as the summary shows it."""

    suite: str
    tests: tuple[str, ...]
    status: str
    url: str | None = None
    failures: tuple[Failure, ...] = ()  # its tests that failed, explained (each test once a head)
    ready: tuple[str, ...] = ()  # parked tests it ran that passed: ready to re-enable
    head: str = ""  # the commit it ran


_SAFE_URL = re.compile(r"https?://[^\s()<>\[\]`]+")
RETRY = "`/run-amd retry` runs it again"
OPEN_FAILURES = 10  # failed tests shown with their excerpt in the comment; the rest in a line each


def safe_url(url: str | None) -> str | None:
    """A URL GitHub gave that can stand in a markdown link as it is; None otherwise."""
    return url if url and _SAFE_URL.fullmatch(url) else None


def failure_class(f: Failure) -> str:
    """The class of a failure in a few words."""
    if f.kind is None:
        return "log not available"
    if f.kind == "predicted":
        return f"predicted by {f.rule}" if f.rule else "predicted"
    if f.kind == "infrastructure":
        return f"infrastructure ({f.pattern})" if f.pattern else "infrastructure"
    return {"known": "known (seen before)"}.get(f.kind, f.kind)


def failure_lines(failures: Sequence[Failure], *, excerpts: int = OPEN_FAILURES) -> list[str]:
    """Each failed test in a list item: its class and why, a link to its job's log, for a
    predicted failure the finding's fix, for an infrastructure one the retry; the first
    ``excerpts`` with the log's decisive lines quoted inert."""
    out: list[str] = []
    for n, f in enumerate(failures):
        url = safe_url(f.url)
        log = f" ([log]({url}))" if url else ""
        if f.kind is None:
            out.append(f"- {code(f.path)}: log not available: {prose(f.unavailable or 'unknown')}{log}")
            continue
        why = f": {prose(f.explanation)}" if f.explanation else ""
        out.append(f"- {code(f.path)}: **{prose(failure_class(f))}**{why}{log}")
        if f.kind == "predicted" and f.fix:
            out.append(f"  - **Fix**: {prose(f.fix)}")
        if f.kind == "infrastructure":
            out.append(f"  - A retry may pass: {prose(RETRY)}.")
        if n < excerpts and f.excerpt:
            out.extend(code_block(f.excerpt, indent="  "))
    return out


def _failures_block(runs: Sequence[Run], excerpts: int) -> list[str]:
    failed = [f for r in runs for f in r.failures]
    if not failed:
        return []
    head = f"**Failed ROCm tests, explained** ({len(failed)})"
    return ["", head, "", *failure_lines(failed, excerpts=excerpts)]


def _row(cells: list[str]) -> str:
    # GFM splits table cells on `|` even inside code spans, unless it is escaped.
    return "| " + " | ".join(re.sub(r"(?<!\\)\|", r"\\|", c) for c in cells) + " |"


def grid(header: list[str], rows: list[list[str]], limit: int = MAX_ROWS) -> list[str]:
    out = [_row(header), _row(["---"] * len(header))]
    out.extend(_row(r) for r in rows[:limit])
    if len(rows) > limit:
        out.append(f"\n…and {len(rows) - limit} more rows.")
    return out


def _details(summary: str, body: list[str]) -> str:
    # The `<summary>` line is an HTML block: markdown is not read there, so its text is
    # escaped as HTML; the body, after a blank line, is markdown again.
    return "\n".join([f"<details><summary>{html_prose(summary)}</summary>", "", *body, "", "</details>"])


def _finding(f: Finding, *, full: bool, alike: frozenset[int] = frozenset()) -> list[str]:
    test = f" (test {code(f.test)})" if f.test and f.test != f.path else ""
    if id(f) in alike and f.suite:
        test += f" (suite {code(f.suite)})"
    where_ = code(where(f)) if f.path else where(f)
    said = f": {prose(f.message)}"
    lines = [f"- {ICON[f.severity]} **{f.rule}** `{f.slug}` at {where_}{test}{said}"]
    if full:
        lines.extend(f"  - {prose(d)}" for d in f.details)
        if f.fix:
            lines.append(f"  - **Fix**: {prose(f.fix)}")
    return lines


def _change(t: TestEntry) -> str:
    state = " (disabled)" if t.disabled is not None and t.change not in ("disabled", "reason") else ""
    return "<br>".join([f"**{t.change}**{state}", *(prose(r) for r in t.reasons)])


def _table(table: Table, limit: int) -> list[str]:
    title = prose(table.title).strip()
    out = ["", f"**{title}**", ""] if title else [""]  # `****` would be a rule
    out.extend(grid([cell(h) for h in table.header], [[cell(c) for c in r] for r in table.rows], limit))
    if table.note:
        out.extend(["", prose(table.note)])
    return out


def runs_section(runs: Sequence[Run], rows: int = SHORT_ROWS, *, failures: bool = True,
                 excerpts: int = OPEN_FAILURES) -> str:
    """The runs dispatched for the head, with their status and their failed tests explained
    (``excerpts`` of them with the log's lines; none at all without ``failures``), between
    the lines that let a later dispatch or a run's end replace them
    (`bot.github.publish.with_runs`)."""
    lines = [RUNS_START, "", f"**ROCm runs for this head** ({len(runs)})", ""]
    lines.extend(grid(["Suite", "Tests", "Status"], [
        [code(r.suite), ", ".join(code(t) for t in r.tests),
         f"[{prose(r.status)}]({r.url})" if r.url and r.url.startswith("https://") else prose(r.status)]
        for r in runs], rows))
    ready = [ready_line(t, r.suite, r.head, r.url) for r in runs for t in r.ready]
    if ready:
        lines.extend(["", *(f"- {line}" for line in ready)])
    if failures:
        lines.extend(_failures_block(runs, excerpts))
    return "\n".join([*lines, "", RUNS_END])


def ready_line(test: str, suite: str, head: str, url: str | None) -> str:
    """A parked test whose run passed on the head: the summary's line, and the start of the
    suggestion that brings it back."""
    run = f" ([run]({found}))" if (found := safe_url(url)) else ""
    return (f"{code(test)} passed on {code(suite)} at {code(head[:12])}{run}: ready to re-enable "
            "(remove its `disabled=`)")


def _open_blocks(report: Report, runs: Sequence[Run] | None, resolved: Sequence[str],
                 since: str | None, rows: int, full: bool) -> list[str]:
    blocks: list[str] = []
    found = new_problems(report)
    if found:
        title = "New problems" if report.mode == "analyze" else "Problems"
        shown = found if full else found[:OPEN_FINDINGS]
        lines = [f"**{title}** ({len(found)})", ""]
        alike = twins(found)
        for f in shown:
            lines.extend(_finding(f, full=True, alike=alike))
        if len(found) > len(shown):
            lines.append(f"- …and {len(found) - len(shown)} more: see the check run.")
        blocks.append("\n".join(lines))
    if report.mode != "analyze":
        return blocks
    changes = _changes_block(report, rows)
    if changes:
        blocks.append(changes)
    parked = _parked_block(report, rows)
    if parked:
        blocks.append(parked)
    markers = changed_markers(report) if full else []
    if markers:
        lines = [f"**Markers this PR changed** ({len(markers)})", ""]
        lines.extend(grid(["Test", "Backend", "Suite", "GPUs", "Est.", "Change"], [
            [code(t.path), t.backend, code(t.suite or "?"), "?" if t.gpus is None else str(t.gpus),
             minutes(t.est_time), _change(t)] for t in markers], rows))
        blocks.append("\n".join(lines))
    if runs:
        blocks.append(runs_section(runs, rows))
    elif report.selected:
        lines = [f"**ROCm runs `/run-amd` would dispatch**: {len(report.selected)}, "
                 f"about {report.gpu_minutes():.0f} GPU-minutes", ""]
        lines.extend(grid(["Test", "Suite", "Why", "Est.", "GPU-min"], [
            [code(s.path), code(s.suite), _why(s), minutes(s.est_time), gpu_minutes(s)]
            for s in report.selected], rows))
        blocks.append("\n".join(lines))
    else:
        blocks.append("**ROCm runs `/run-amd` would dispatch**: none.")
    if not runs:
        blocks[-1] = f"{RUNS_START}\n\n{blocks[-1]}\n\n{RUNS_END}"
    if report.held:
        blocks.append(_held(report, rows))
    envelope = _envelope(report)  # after the runs section, which a dispatch replaces
    if envelope:
        blocks.append("\n".join(envelope).strip("\n"))
    if resolved:
        blocks.append(f"**Resolved since {code(since[:12]) if since else 'the last push'}**: "
                      + "; ".join(prose(r) for r in resolved[:rows]))
    return blocks


def parked_line(p: Parked) -> str:
    """One parked test the PR touches, and the next step: a ROCm run when its launch is
    valid now, else the fix its launch needs."""
    head = f"{code(p.path)} is parked ({prose(_quote(p.reason))})"
    if p.candidate:
        was = f" (was {code(p.was)})" if p.was else ""
        step = (" Comment `/run-amd disabled` to try it on ROCm." if p.backend == "rocm" else
                f" It runs on {p.backend}, not on ROCm runners: its own CI can try it.")
        return f"{head}; its launch is valid now{was}.{step}"
    if p.problems:
        first = p.problems[0]
        fix = f" Fix: {prose(first.fix)}." if first.fix else ""
        message = prose(_cut(first.message, 200))
        return f"{head}; its launch would still fail: **{first.rule}** {message}.{fix}"
    return f"{head}; {prose(p.why)}"


def _quote(text: str) -> str:
    return "'" + _cut(text, 80) + "'"


def _parked_block(report: Report, rows: int) -> str | None:
    """The parked (`disabled=`) tests the PR touches, one line each with the next step."""
    touched = [p for p in report.parked if p.touched]
    if not touched:
        return None
    lines = [f"- {parked_line(p)}" for p in touched[:rows]]
    if len(touched) > rows:
        lines.append(f"- …and {len(touched) - rows} more: see the check run.")
    return "\n".join([f"**Parked tests this PR touches** ({len(touched)})", "", *lines])


def _held(report: Report, rows: int) -> str:
    """The tests held back from the runs: each with the new error that would fail it."""
    rules = sorted({h.rule for h in report.held})
    lines = [f"**Held**: {plural(len(report.held), 'test')} "
             f"ha{'s' if len(report.held) == 1 else 've'} a new error ({', '.join(rules)}): "
             "fix it, or a maintainer can `/run-amd --force`.", ""]
    lines.extend(f"- {code(h.test.path)} {code(h.test.suite)}: **{h.rule}** {prose(h.message)}"
                 for h in report.held[:rows])
    if len(report.held) > rows:
        lines.append(f"- …and {len(report.held) - rows} more.")
    return "\n".join(lines)


def _launch_verdict(report: Report, t: TestEntry) -> str:
    """A marker's launch in a few words: checked and valid, or its new errors."""
    errors = sorted({f.rule for f in report.findings if f.test == t.path and f.baseline == "new"
                     and f.severity.value in ("error", "warning")
                     and f.suite in (t.suite, None)})
    state = {"checked": "checked", "partial": "partly checked", "unchecked": "not checked",
             "none": "no launch the rules model"}.get(t.launch or "", "")
    if errors:
        return f"launch {state}: {', '.join(errors)}" if state else ", ".join(errors)
    if t.launch in ("checked", "partial"):
        return f"launch {state}, valid"
    return f"launch {state}" if state else ""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _environment_lines(report: Report) -> list[str]:
    """A changed workflow or image file that reaches the PR's ROCm tests: how many, and how
    many of those run."""
    reached: dict[str, list[TestEntry]] = {}
    for t in report.tests:
        if t.backend == "rocm" and t.tier == "environment" and t.trigger and t.change != "unchanged":
            reached.setdefault(t.trigger, []).append(t)
    chosen = {(s.path, s.suite) for s in report.selected}
    out = []
    for path, tests in sorted(reached.items()):
        if path in report.unreached:
            continue
        runs = sum((t.path, t.suite) in chosen for t in tests)
        out.append(f"- {code(path)} changed: it reaches {plural(len(tests), 'ROCm test')}, "
                   + (f"{runs} of them in the runs below" if runs else "none of them run for this PR")
                   + ".")
    return out


def _changes_block(report: Report, rows: int) -> str | None:
    """What this PR changes, one line each: its markers (with their launch), the launches
    whose values it changed, the pins it added, changed or removed (and whether every place
    of the package agrees), the images and workflows it changed (and whether they reach the
    PR's jobs)."""
    lines: list[str] = []
    for t in report.tests:
        launch = t.launch_diff
        if t.change not in MARKER_CHANGES and not launch:
            continue
        what: str = t.change if t.change in MARKER_CHANGES else "launch changed"
        if t.change == "suite":
            what = "moved"  # its reason says from which suite
        values = f" ({', '.join(code(v) for v in launch)})" if launch else ""
        verdict_ = _launch_verdict(report, t) if t.backend in ("rocm", "cuda") else ""
        said = [r for r in t.reasons if r not in launch]
        why = f" — {prose(_cut('; '.join(said), 200))}" if said and t.change in MARKER_CHANGES else ""
        lines.append(f"- {code(t.path)} ({t.backend}, {code(t.suite or '?')}): **{what}**{values}"
                     + (f"; {verdict_}" if verdict_ else "") + why)
    for change in report.pin_changes:
        places = ", ".join(change.places) or "nowhere now"
        if change.kind == "removed":
            lines.append(f"- {code(change.requirement)} pin **removed** from {places}")
            continue
        agree = "consistent" if change.consistent else \
            f"**not consistent** ({', '.join(change.disagree)}: see the problems above)"
        lines.append(f"- {code(change.requirement)} pin **{change.kind}**: {places} — {agree}")
    for _, why in sorted(report.unreached.items()):
        lines.append(f"- {prose(why)}.")
    lines.extend(_environment_lines(report))
    if not lines:
        return None
    shown = lines[:rows]
    if len(lines) > rows:
        shown.append(f"- …and {len(lines) - rows} more: see the check run.")
    return "\n".join([f"**What this PR changes** ({len(lines)})", "", *shown])


def _through(t: TestEntry) -> str:
    """How a test was touched: its tier, with the changed file when that is not the test."""
    tier = t.tier or "direct"
    return f"{tier}: {code(t.trigger)}" if t.trigger and t.trigger != t.path and tier != "direct" \
        else tier


def _why(s: Selected) -> str:
    """A selection's tier, with the changed file that caused it when that is not the test."""
    if s.tier == "direct" or not s.trigger:
        return s.tier
    return f"{s.tier}: {code(s.trigger)}"


def _envelope(report: Report) -> list[str]:
    """One or two lines: what the repository's own CI runs for the PR beside rocmbot, and
    the affected tests left out, with how to get them."""
    out: list[str] = []
    ci = report.repo_ci
    if ci is not None and (ci.runs or ci.unknown):
        labels = f" (with {', '.join(code(x) for x in ci.labels)})" if ci.labels else ""
        line = f"The repository's own CI runs {plural(ci.runs, 'AMD test')} for this PR{labels}"
        if ci.unknown:
            line += f", perhaps {ci.unknown} more (conditions it cannot decide statically)"
        if report.dispatch_mode == "complement":
            line += f"; rocmbot runs {len(report.selected)} more that it does not."
        elif ci.affected:
            line += (f"; {ci.affected} of the runs above are among them "
                     "(`dispatch.mode: complement` would skip those).")
        else:
            line += "."
        out.extend(["", line])
    if report.dispatch_reason and report.dispatch_mode == "targeted" and "cannot" in report.dispatch_reason:
        out.extend(["", prose(report.dispatch_reason) + "."])
    # a gate label the PR carries is not asked for; what its CI then runs is said
    carried = set(ci.labels) if ci is not None else set()
    gated = [(k, k.gate) for k in report.skipped if k.why == "on-label" and k.gate]
    for label, n in sorted(Counter(gate for _, gate in gated if gate not in carried).items()):
        out.extend(["", f"Add the {code(label)} label to run {plural(n, 'more affected test')} "
                    "in the repository's own CI."])
    running = Counter(gate for k, gate in gated if gate in carried
                      and report.ci_runs.get((k.path, k.suite), (None, ""))[0] is True)
    for label, n in sorted(running.items()):
        out.extend(["", f"With the {code(label)} label this PR carries, the repository's own CI runs "
                    f"{plural(n, 'more affected test')}."])
    ran = sum(k.why == "repo-ci" for k in report.skipped)
    if ran:
        out.extend(["", f"Skipped {plural(ran, 'affected test')} the repository's own CI runs for this PR."])
    return out


def _collapsed_blocks(report: Report, rows: int, full: bool) -> list[str]:
    blocks: list[str] = []
    old = pre_existing_problems(report)
    old_infos = [f for f in infos(report) if f.baseline == "unchanged"]
    if (old or old_infos) and not full:
        # what the base had is counted, not listed: the check run lists it
        parts = [f"{plural(n, word)} ({by_rule(found)})" for n, word, found in (
            (len(old), "finding", old),
            (len(old_infos), "info", old_infos)) if found]
        blocks.append(f"Already on the base (`{short(report.base)}`), not this PR's: "
                      + " · ".join(parts) + "; the check run lists them.")
    elif old:
        body = [f"{len(old)} found at the base (`{short(report.base)}`) as well: {by_rule(old)}.", ""]
        alike = twins(old)
        for f in old[:rows]:
            body.extend(_finding(f, full=False, alike=alike))
        if len(old) > rows:
            body.append(f"- …and {len(old) - rows} more.")
        blocks.append(_details(f"Already on the base: {plural(len(old), 'finding')} ({by_rule(old)})", body))
    quiet = not_dispatched(report)
    if quiet:
        carried = report.repo_ci.labels if report.repo_ci is not None else ()
        groups = Counter((t.backend, why_not_run(t, carried), _through(t)) for t in quiet)
        body = grid(["Backend", "Not run because", "Touched through", "Tests"], [
            [b, why, tier, str(n)] for (b, why, tier), n in sorted(groups.items(), key=lambda kv: -kv[1])])
        body.append("")
        listed = rows if full else SHORT_LIST
        for t in quiet[:listed]:
            reason = (": " + (prose(t.reasons[0]) if t.reasons else t.change)) if full else ""
            body.append(f"- {code(t.path)} {code(t.suite or '?')}{reason}")
        if len(quiet) > listed:
            body.append(f"- …and {len(quiet) - listed} more" + ("." if full else ", in the check run."))
        blocks.append(_details(f"{plural(len(quiet), 'more test')} touched, not dispatched", body))
    tables = report.tables if full else shown_tables(report)
    if tables:
        shown = rows if full else SHORT_TABLES
        body = [launches_line(report) or ""]
        for table in tables[:shown]:
            body.extend(_table(table, rows))
        left = len(report.tables) - min(shown, len(tables))
        if left:
            body.extend(["", f"…and {plural(left, 'more table')}"
                         + ("." if full else ", in the check run.")])
        blocks.append(_details(f"Launch and pin tables ({len(tables)} of {len(report.tables)})"
                               if len(tables) < len(report.tables) else
                               f"Launch and pin tables ({len(tables)})", body))
    if report.notices:
        body = []
        for n in report.notices[:rows]:
            where = f" ({code(f'{n.path}:{n.line}' if n.line else n.path)})" if n.path else ""
            fix = f" Fix: {prose(n.fix)}" if n.fix else ""
            body.append(f"- {prose(n.message)}{where}.{fix}")
        if len(report.notices) > rows:
            body.append(f"- …and {len(report.notices) - rows} more.")
        blocks.append(_details(f"Not understood: {plural(len(report.notices), 'notice')} "
                               f"({_kinds(report)})", body))
    notes = infos(report)
    if not full and report.mode == "analyze":
        notes = [f for f in notes if f.baseline != "unchanged"]  # the base's are counted
    if notes:
        body = []
        alike = twins(notes)
        for f in notes[:rows]:
            body.extend(_finding(f, full=True, alike=alike))
        if len(notes) > rows:
            body.append(f"- …and {len(notes) - rows} more.")
        blocks.append(_details(f"{plural(len(notes), 'info')} ({by_rule(notes)})", body))
    if report.findings:
        blocks.append(_details("Silence or configure", [
            "Each finding names its rule; the Rules table of rocmbot's README explains it. "
            "Checks and selection are configured in `.github/rocmbot.yml` on the default branch: "
            "`suites:` (GPU counts, "
            "`cadence: external` for suites another CI runs), `pins: {ignore: [...]}`, "
            "`exclude:` for files that are not tests, `select_nightly` / `select_external`.",
        ]))
    return blocks


def _kinds(report: Report) -> str:
    counts = Counter(n.kind for n in report.notices)
    return ", ".join(f"{kind} \u00d7{n}" if n > 1 else kind for kind, n in counts.most_common())


def launches_line(report: Report) -> str | None:
    checked = launches(report)
    return checked[0].upper() + checked[1:] + "." if checked else None


def render(
    report: Report,
    *,
    runs: Sequence[Run] | None = None,
    resolved: Sequence[str] = (),
    since: str | None = None,
    full: bool = False,
    limit: int = COMMENT_LIMIT,
) -> str:
    """The summary: the comment's body (``full``: the check run's, with every list whole).
    Blocks that would pass ``limit`` are left out for a line that says where the rest is."""
    rows = MAX_ROWS if full else SHORT_ROWS
    head = [f"### {verdict_icon(report)} {verdict(report)}", ""]
    if report.mode == "analyze":
        touched = sum(t.change != "unchanged" for t in report.tests)
        head.append(f"rocmbot compared `{short(report.base)}` (base) with `{short(report.head)}` (head): "
                    f"{plural(touched, 'test marker')} touched of {len(report.tests)}.")
    else:
        head.append(f"rocmbot audited `{short(report.head)}`: {plural(len(report.tests), 'test marker')}.")
    checked = launches_line(report)
    if checked:
        head[-1] += f" {checked}"
    text = "\n".join(head)
    cut = CUT_FULL if full else CUT_COMMENT
    blocks = _open_blocks(report, runs, resolved, since, rows, full)
    blocks += _collapsed_blocks(report, rows, full)
    for n, block in enumerate(blocks):
        if len(text) + len(block) + 2 + len(cut) > limit:
            left = plural(len(blocks) - n, "more section")
            if report.findings:
                left += f"; all findings: {by_rule(report.findings)}"
            return text + "\n" + cut.replace("cut here", f"cut here ({left})")
        text += "\n\n" + block
    return text + "\n"
