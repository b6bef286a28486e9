"""The body of the "Parked ROCm tests" issue the re-enable sweep keeps: each parked ROCm test of
the default branch with its reason, what its launch says and what the last sweep made of it, and
a ready-made patch for each test that passed in two sweeps in a row.

The body starts with a hidden marker, by which the issue is found again when the ledger lost
track of it (an attempt that died between GitHub making it and the ledger recording it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.formats.escape import cell, code, prose

MARKER = "<!-- rocmbot:parked-tests -->"
TITLE = "Parked ROCm tests"
BODY_LIMIT = 60_000  # GitHub refuses a body over 65,536 characters
ROWS_LIMIT = 200
CADENCE = {"daily": "each day", "weekly": "each week"}


@dataclass(frozen=True)
class IssueRow:
    """One parked test as the issue shows it. ``result``: `dispatched`, `passed`, `failed` (or
    another conclusion of its run), or `not run: <why>`; ``url``: its job's or run's page;
    ``patch``: set when it passed in the last two sweeps, the diff that brings it back."""

    path: str
    suite: str
    reason: str
    launch: str
    result: str
    url: str | None = None
    patch: str | None = None


@dataclass(frozen=True)
class SweepFacts:
    """The sweep the table is of: the head it audited (of ``branch``), its period, the cadence
    and the budget it ran with."""

    head: str
    period: str
    cadence: str
    budget: float
    branch: str | None = None


_SAFE_URL = re.compile(r"https?://[^\s()<>\[\]]+")


def _link(url: str | None) -> str:
    return f" ([run]({url}))" if url and _SAFE_URL.fullmatch(url) else ""


def _fenced(text: str, language: str = "diff") -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}"


def _minutes(value: float) -> str:
    return f"{value:g} GPU-minute{'s' if value != 1 else ''}"


def render(rows: list[IssueRow], facts: SweepFacts) -> str:
    """The issue's body (markdown, under GitHub's size limit)."""
    where = f"{code(facts.branch)} at " if facts.branch else ""
    lines = [
        MARKER,
        f"The parked (`disabled=`) ROCm tests of {where}{code(facts.head[:12])}, and what the re-enable "
        f"sweep of {code(facts.period)} made of them. rocmbot runs those whose launch is valid "
        f"{CADENCE.get(facts.cadence, 'on its schedule')}, cheapest first within "
        f"{_minutes(facts.budget)} (`reenable` in `.github/rocmbot.yml`), and brings this table up to "
        "date as their runs end.",
        "",
    ]
    if not rows:
        lines.append("No parked ROCm test: nothing to bring back.")
        return "\n".join(lines) + "\n"
    lines.extend(["| Test | Suite | Reason | Launch | Last sweep |", "| --- | --- | --- | --- | --- |"])
    for row in rows[:ROWS_LIMIT]:
        lines.append("| " + " | ".join([
            code(row.path), code(row.suite), cell(row.reason), cell(row.launch),
            cell(row.result) + _link(row.url),
        ]) + " |")
    if len(rows) > ROWS_LIMIT:
        lines.append(f"\n…and {len(rows) - ROWS_LIMIT} more parked tests.")
    ready = [r for r in rows if r.patch]
    table = "\n".join(lines) + "\n"
    if not ready:
        return table
    parts = ["", "### Ready to come back", ""]
    for row in ready:
        parts.extend([
            f"{code(row.path)} passed on {code(row.suite)} in the last two sweeps. "
            + prose("This patch takes its `disabled=` out:"),
            "",
            _fenced(row.patch or ""),
            "",
        ])
    body = table + "\n".join(parts)
    if len(body) > BODY_LIMIT:  # the table is what the issue is for: the patches give way
        names = ", ".join(code(r.path) for r in ready)
        body = table + "\n### Ready to come back\n\n" + (
            f"{names} passed in the last two sweeps (their patches are too long to show here): "
            + prose("remove the `disabled=` argument of their ROCm markers.") + "\n")
    return body[:BODY_LIMIT]
