"""Rule vectors: each `tests/vectors/<RULE>/<case>/` is a small repository whose expected
findings are marked inline with `# [RULE]` at the end of the line they anchor to, and whose
findings' messages are in `<case>.expected` next to it (one finding a line: rule, severity,
place, message). `ROCMBOT_REGENERATE_VECTORS=1` writes those files from what the analysis
says (review the diff); without it a missing or different file fails the test."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from bot.analysis.engine import audit
from bot.analysis.findings import RULES
from bot.analysis.tree import FolderTree

VECTORS = Path(__file__).parent.parent / "vectors"
# Rules checked outside `audit`, covered by their own tests: CFG002 is checked before a dispatch.
NOT_AUDITED = frozenset({"CFG002"})
REGENERATE = os.environ.get("ROCMBOT_REGENERATE_VECTORS") == "1"
MARK = re.compile(r"#\s*\[((?:[A-Z]{3}\d{3})(?:\s*,\s*[A-Z]{3}\d{3})*)\]\s*$")


def _cases() -> list[Path]:
    return sorted(p for p in VECTORS.glob("*/*") if p.is_dir())


def expected_marks(case: Path) -> set[tuple[str, str, int]]:
    """(rule, path, line) for every inline `# [RULE]` mark in a case's files."""
    out: set[tuple[str, str, int]] = set()
    for file in sorted(case.rglob("*")):
        if not file.is_file():
            continue
        rel = file.relative_to(case).as_posix()
        for number, line in enumerate(file.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            found = MARK.search(line)
            if found:
                out.update((r.strip(), rel, number) for r in found.group(1).split(","))
    return out


@pytest.mark.parametrize("case", _cases(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_vector_findings_match_inline_marks(case: Path) -> None:
    rule = case.parent.name
    assert rule in RULES, f"vector folder {rule} names no catalogued rule"
    expected = expected_marks(case)
    if case.name.startswith("bad"):
        assert any(r == rule for r, _, _ in expected), f"{case} is a bad case without a [{rule}] mark"
    else:
        assert case.name.startswith("good"), f"{case}: name cases good* or bad*"
        assert not any(r == rule for r, _, _ in expected)
    checked = {rule} | {r for r, _, _ in expected}
    report = audit(FolderTree(case))
    actual = {(f.rule, f.path or "", f.line or 0) for f in report.findings if f.rule in checked}
    assert actual == expected, "\n".join(
        f"{f.rule} {f.path}:{f.line} {f.message}" for f in report.findings
    )
    messages = "".join(sorted(f"{f.rule} {f.severity.value} {f.path or ''}:{f.line or 0} {f.message}\n"
                              for f in report.findings if f.rule in checked))
    snapshot = case.parent / f"{case.name}.expected"
    if REGENERATE:
        snapshot.write_text(messages, encoding="utf-8")
    assert snapshot.is_file(), f"{snapshot} is missing: run with ROCMBOT_REGENERATE_VECTORS=1"
    assert snapshot.read_text(encoding="utf-8") == messages


def test_every_rule_has_a_bad_and_a_good_vector() -> None:
    have = {(p.parent.name, p.name[:3] == "bad") for p in _cases()}
    missing = [
        f"{rule} ({'bad' if bad else 'good'})"
        for rule in RULES if rule not in NOT_AUDITED for bad in (True, False) if (rule, bad) not in have
    ]
    assert not missing, "rules without vectors: " + ", ".join(missing)
