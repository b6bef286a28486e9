"""What GitHub receives about ROCm runs: the `rocmbot / rocm` checks and the command replies."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.analysis.unpark import Removal
from bot.formats.escape import code
from bot.formats.markdown import RETRY, Failure, failure_class, failure_lines, grid, safe_url
from bot.rocm.command_table import help_lines
from bot.store.dispatch import Dispatch, JobOutcome, SelectedTest, Selection
from config.repo import DispatchConfig

ROCM_CHECK = "rocmbot / rocm"
APPROVE_ACTION = "approve-rocm"

HELP = "\n".join(["**rocmbot commands** (the first line of a PR comment):", "", *help_lines()])


@dataclass
class Result:
    """What a request dispatched, and what was already running."""

    dispatched: list[Dispatch] = field(default_factory=list)
    already: list[Dispatch] = field(default_factory=list)


# A reply's body, marker included, stays under this; GitHub refuses a comment over 65,536
# characters (422), and a reply that cannot be written would fail its delivery over and over.
REPLY_LIMIT = 60_000
LIST_LIMIT = 20  # the items of a list a reply names, before "…and N more"
# Bidirectional overrides, isolates and marks (they can make quoted text read as something else),
# and control characters but new line and tab.
_UNSAFE = re.compile(r"[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CUT = "\n\n…(cut: the whole reply would be too long for a GitHub comment)"


def capped(items: Sequence[str], limit: int = LIST_LIMIT) -> list[str]:
    """The first ``limit`` items, then `…and N more` in place of the rest."""
    if len(items) <= limit:
        return list(items)
    return [*items[:limit], f"…and {len(items) - limit} more"]


def bounded(text: str, limit: int = REPLY_LIMIT) -> str:
    """A reply's text as it may be posted: without bidirectional or control characters (what a
    comment quoted back could carry), and cut to ``limit`` characters, at a line end when one
    is near."""
    text = _UNSAFE.sub("", text)
    if len(text) <= limit:
        return text
    cut = text[: limit - len(_CUT)]
    end = cut.rfind("\n")
    return (cut[:end] if end > len(cut) // 2 else cut) + _CUT


def minutes(value: float) -> str:
    return f"{value:.0f} GPU-minutes"


def digest(text: str) -> str:
    """A short digest of a text, for a marker or a key (not a secret)."""
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:12]


# sentences -----------------------------------------------------------------------------------


def who_may(config: DispatchConfig, *, approve: bool) -> str:
    """One sentence naming who may run (or approve)."""
    if approve:
        extra = [*config.maintainers, *config.maintainer_teams]
        base = "people with maintain or admin permission on this repository"
    else:
        extra = [*config.trusted_users, *config.trusted_teams, *config.maintainers, *config.maintainer_teams]
        base = "people with write, maintain or admin permission on this repository"
    if extra:
        return base + ", and " + ", ".join(f"`{e}`" for e in extra)
    return base


def moved(seen: str, head: str) -> str:
    """The reply to an approval that does not cover the PR's current head: the head it covers
    (``seen``; empty when rocmbot had seen no head of the PR before the approval's second) and
    the current one, which needs an approval of its own."""
    given = f"is for `{seen[:12]}`, the PR's head when it was given" if seen else (
        "was given before rocmbot saw the PR's head")
    return (
        f"this approval {given}; the head is now `{head[:12]}`, which needs its own approval: "
        "approve it with a new `/approve-amd` (nothing was dispatched)."
    )


def describe(result: Result) -> str:
    parts = []
    for d in result.dispatched:
        parts.append(
            f"{code(d.suite)}: {len(d.tests)} test{'s' if len(d.tests) != 1 else ''}, "
            f"about {minutes(d.gpu_minutes)} (dispatch `{d.dispatch_id}`)"
        )
    for d in result.already:
        parts.append(f"{code(d.suite)}: already running (dispatch `{d.dispatch_id}`)")
    return "; ".join(parts)


# the `rocmbot / rocm` check of a dispatch ------------------------------------------------------

_JOB_URL = re.compile(r"https?://[^\s()<>\[\]`]+")
_CONCLUSIONS = (
    "success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required", "stale",
)


def _word(found: JobOutcome) -> str:
    """A job's state in a word or two; one GitHub does not document reads as `other`."""
    if found.status != "completed":
        return "in progress" if found.status == "in_progress" else "queued"
    return (found.conclusion if found.conclusion in _CONCLUSIONS else "other").replace("_", " ")


def outcome_lines(paths: list[str], outcomes: dict[str, JobOutcome]) -> list[str]:
    """A table of each test's result, with a link to its job."""
    rows = []
    for path in paths:
        found = outcomes.get(path)
        if found is None:
            rows.append([code(path), "waiting", ""])
            continue
        result = _word(found)
        if found.job_url and _JOB_URL.fullmatch(found.job_url):
            result = f"[{result}]({found.job_url})"
        took = f"{found.seconds / 60:.0f} min" if found.seconds is not None else ""
        rows.append([code(path), result, took])
    return grid(["Test", "Result", "Time"], rows)


def tally(paths: list[str], outcomes: dict[str, JobOutcome]) -> str:
    """`3 passed, 1 failed` over the tests that finished."""
    counts: dict[str, int] = defaultdict(int)
    for path in paths:
        found = outcomes.get(path)
        if found is not None and found.status == "completed":
            word = _word(found)
            counts[{"success": "passed", "failure": "failed"}.get(word, word)] += 1
    return ", ".join(f"{n} {word}" for word, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


CHECK_SUMMARY_LIMIT = 60_000  # GitHub refuses a check run's summary over 65,535 characters
CHECK_EXCERPTS = 20  # failed tests whose log lines a dispatch's check quotes
_CUT_CHECK = "\n\n…(cut: too long for a check run; each job's log has the rest)"


def failure_of(found: JobOutcome | None) -> Failure | None:
    """A test's failed job, explained, as the check and the summary show it; None for any
    other outcome, or a failure whose log was not read yet."""
    if found is None or found.status != "completed" or found.conclusion != "failure":
        return None
    e = found.explained
    if e is None:
        return None
    return Failure(found.path, e.kind, e.excerpt, e.explanation, e.rule, e.pattern, e.fix, found.job_url,
                   e.unavailable)


def failure_annotation(failure: Failure, line: int | None) -> dict[str, Any]:
    """The annotation of a failed test on its ROCm marker's line (the file's first when it is
    not known): its class, why, the fix or the retry, and the log's decisive lines. Plain
    text, as GitHub shows an annotation."""
    said = (f"log not available: {failure.unavailable or 'unknown'}" if failure.kind is None
            else failure.explanation or failure_class(failure))
    parts = [said[:1].upper() + said[1:]]
    if failure.kind == "predicted" and failure.fix:
        parts.append(f"Fix: {failure.fix}")
    if failure.kind == "infrastructure":
        parts.append(f"A retry may pass: {RETRY.replace('`', '')}.")
    if safe_url(failure.url):
        parts.append(f"Log: {failure.url}")
    annotation: dict[str, Any] = {
        "path": failure.path,
        "start_line": line or 1,
        "end_line": line or 1,
        "annotation_level": "failure",
        "title": bounded(f"ROCm run failed: {failure_class(failure)}", 255),
        "message": bounded("\n".join(parts), 64_000),
    }
    if failure.excerpt:
        annotation["raw_details"] = bounded("\n".join(failure.excerpt), 64_000)
    return annotation


def _summary(lines: list[str], failed: list[Failure], after: list[str]) -> str:
    """A dispatch check's summary with its failed tests explained, fewer of them with their
    log's lines when that would be too long for GitHub, and cut as a last resort."""
    text = "\n".join([*lines, *after])
    for excerpts in (CHECK_EXCERPTS, 3, 0):
        block = ["", f"**Failed tests, explained** ({len(failed)})", "",
                 *failure_lines(failed, excerpts=excerpts)] if failed else []
        text = "\n".join([*lines, *block, *after])
        if len(text) <= CHECK_SUMMARY_LIMIT:
            return text
    cut = text[: CHECK_SUMMARY_LIMIT - len(_CUT_CHECK)]
    return cut[: cut.rfind("\n")] + _CUT_CHECK


def run_check(
    head: str,
    dispatch_id: str,
    suite: str,
    paths: list[str],
    gpu: float,
    status: str,
    *,
    conclusion: str | None = None,
    url: str | None = None,
    detail: str = "",
    outcomes: dict[str, JobOutcome] | None = None,
) -> dict[str, Any]:
    """A dispatch's check: its tests (with their results once known), its status and run."""
    lines = [f"Suite {code(suite)}, about {minutes(gpu)}; dispatch `{dispatch_id}`.", ""]
    if outcomes:
        lines.extend(outcome_lines(paths, outcomes))
    else:
        lines.extend(f"- {code(p)}" for p in paths)
    failed = [f for f in (failure_of((outcomes or {}).get(p)) for p in paths) if f is not None]
    after = ["", detail] if detail else []
    tests = f"{len(paths)} ROCm test{'s' if len(paths) != 1 else ''} on {suite}"
    title = f"{tests}: {conclusion or status.replace('_', ' ')}"
    counted = tally(paths, outcomes or {})
    if counted:
        title += f" ({counted})"
    payload: dict[str, Any] = {
        "name": ROCM_CHECK,
        "head_sha": head,
        "status": status,
        "external_id": dispatch_id,
        "output": {"title": title, "summary": _summary(lines, failed, after)},
    }
    if url:
        payload["details_url"] = url
    if conclusion is not None:
        payload["conclusion"] = conclusion
    return payload


def queued_check(record: Dispatch) -> dict[str, Any]:
    """The check a dispatch gets once GitHub accepted it: queued, or the state stored of its run
    when the check is made late (the workers' sweep making it for a run that moved on, or was
    cancelled, meanwhile), so that no later news is needed to show it."""
    done = record.status == "completed" and bool(record.conclusion)
    status = "completed" if done else "in_progress" if record.status == "in_progress" else "queued"
    return run_check(record.head_sha, record.dispatch_id, record.suite, record.tests, record.gpu_minutes,
                     status, conclusion=record.conclusion if done else None, url=record.run_url)


def run_check_update(record: Dispatch, outcomes: dict[str, JobOutcome]) -> dict[str, Any]:
    """The check brought up to date with its run and its tests (an update: no name, no head)."""
    payload = run_check(
        record.head_sha,
        record.dispatch_id,
        record.suite,
        record.tests,
        record.gpu_minutes,
        record.status,
        conclusion=record.conclusion if record.status == "completed" else None,
        url=record.run_url,
        detail=f"Workflow run: {record.run_url}" if record.run_url else "",
        outcomes=outcomes,
    )
    return {k: v for k, v in payload.items() if k not in ("head_sha", "name")}


CANCELLED_CHECK: dict[str, Any] = {
    "status": "completed",
    "conclusion": "cancelled",
    "output": {"title": "Cancelled", "summary": "Cancelled by rocmbot."},
}


# the checks of what was not dispatched -----------------------------------------------------------


def approval_check(head: str, tests: list[SelectedTest], reason: str, digest: str) -> dict[str, Any]:
    """A `rocmbot / rocm` check in action_required, with an approve button."""
    cost = sum(t.gpu_minutes for t in tests)
    lines = [f"Waiting for a maintainer: {reason}.", "", f"Estimated cost: about {minutes(cost)}.", ""]
    lines.extend(f"- {code(t.path)} on {code(t.suite)}" for t in tests)
    return {
        "name": ROCM_CHECK,
        "head_sha": head,
        "status": "completed",
        "conclusion": "action_required",
        "output": {
            "title": f"Approval needed: {len(tests)} ROCm tests, about {minutes(cost)}",
            "summary": "\n".join(lines),
        },
        "actions": [
            {
                "label": "Approve ROCm run",
                "identifier": APPROVE_ACTION,
                "description": f"Run {len(tests)} tests, about {cost:.0f} GPU-min"[:40],
            }
        ],
        "external_id": f"pending-{digest[:16]}",
    }


def approved_check(login: str) -> dict[str, Any]:
    """The approval check, once a maintainer released its runs."""
    return {
        "status": "completed",
        "conclusion": "success",
        "output": {
            "title": f"Approved by @{login}",
            "summary": f"Approved by @{login}; the runs are dispatched.",
        },
    }


def refusal_check(head: str, reason: str, rule: str | None) -> dict[str, Any]:
    """An automatic dispatch that could not happen, as a failed check."""
    return {
        "name": ROCM_CHECK,
        "head_sha": head,
        "status": "completed",
        "conclusion": "failure",
        "output": {"title": f"{rule or 'Not dispatched'}: ROCm runs not dispatched", "summary": reason},
        "external_id": f"refusal-{rule or 'none'}",
    }


# replies -------------------------------------------------------------------------------------------


def help_reply(config: DispatchConfig, selection: Selection | None) -> str:
    lines = [
        HELP,
        "",
        f"Runs may be started by {who_may(config, approve=False)}; "
        f"approvals and `--force` are for {who_may(config, approve=True)}.",
    ]
    if selection is None or not selection.tests:
        lines.append("\nThis head has no selected ROCm tests.")
    else:
        lines.append(
            f"\nThis head's selection: {len(selection.tests)} tests, about {minutes(selection.gpu_minutes)}:"
        )
        lines.extend(f"- {item}" for item in capped([f"{code(t.path)} on {code(t.suite)}"
                                                     for t in selection.tests]))
    return "\n".join(lines)


def unknown_reply(text: str, suggestion: str | None) -> str:
    return (
        f"{code(text[:80])} is not a rocmbot command; did you mean `{suggestion}`? "
        "`/run-amd help` lists them."
    )


NOTHING_IN_FLIGHT = "No ROCm run of this PR is in flight."


def held_reason(held: Sequence[SelectedTest]) -> str:
    """Why a plain `/run-amd` has nothing to run: every selected test is held."""
    paths = ", ".join(capped([f"`{t.path}`" for t in held]))
    return (f"{paths} {'is' if len(held) == 1 else 'are'} held: a new error in "
            f"{'its' if len(held) == 1 else 'their'} launch (see the summary) would fail the "
            "run after it takes the GPUs. Fix it, or a maintainer can `/run-amd --force`.")


def waiting_reply(reason: str, config: DispatchConfig) -> str:
    return (
        f"Waiting for a maintainer's approval: {reason}. "
        f"{who_may(config, approve=True).capitalize()} can approve with `/approve-amd` "
        "or the button on the `rocmbot / rocm` check."
    )


def refused_reply(reason: str) -> str:
    return f"Not dispatched: {reason}"


def reply_marker(comment_id: int, command_digest: str) -> str:
    """Hidden in the reply to one command, to find it again."""
    return f"<!-- rocmbot:reply {comment_id}:{command_digest} -->"


def answer_marker(head: str, answer_digest: str) -> str:
    """Hidden in the one reply of an answer on a head."""
    return f"<!-- rocmbot:answer {head[:12]}:{answer_digest} -->"


def review_reply_marker(review_id: int) -> str:
    return f"<!-- rocmbot:review-reply {review_id} -->"


def marked(text: str, marker: str) -> str:
    """A reply with its hidden marker: under ``REPLY_LIMIT`` whatever the text."""
    return f"{bounded(text, REPLY_LIMIT - len(marker) - 2)}\n\n{marker}"


def counted(text: str, commands: int, marker: str) -> str:
    """An answer that several commands on the same head received."""
    note = f"\n\n_The same answer to {commands} commands on this head._"
    return marked(bounded(text, REPLY_LIMIT - len(marker) - 2 - len(note)) + note, marker)


# a parked test ready to come back ---------------------------------------------------------


def unpark_marker(head: str, path: str) -> str:
    """Hidden in the one suggestion (or patch) that brings a parked test back on a head."""
    return f"<!-- rocmbot:unpark {head[:12]}:{digest(path)} -->"


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def suggestion(edit: Removal) -> str:
    """The review comment on the marker: GitHub's suggestion block that removes `disabled=`
    (an empty one deletes the lines)."""
    body = "".join(f"{line}\n" for line in edit.lines)
    fence = _fence(body)
    return f"Ready to come back: this removes `disabled=`.\n\n{fence}suggestion\n{body}{fence}"


def patch_comment(said: str, edit: Removal) -> str:
    """The comment that carries the patch when the marker is outside the PR's diff (where GitHub
    takes no review comment)."""
    fence = _fence(edit.patch)
    return (f"{said}. The marker is outside this PR's diff, so here is the patch:\n\n"
            f"{fence}diff\n{edit.patch}{fence}")
