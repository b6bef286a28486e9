"""The rule catalogue: an id, once given, keeps naming the same rule."""

from __future__ import annotations

import pytest

from bot.analysis.findings import RULES, Severity, rule


def test_a_rule_id_cannot_be_reused_for_another_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    original = RULES["REG001"]
    monkeypatch.setitem(RULES, "REG001", original)
    with pytest.raises(ValueError, match=f"rule id REG001 already names {original.slug}"):
        rule("REG001", "something-else", Severity.INFO, "another rule")
    assert RULES["REG001"] is original
    again = rule("REG001", original.slug, original.severity, original.summary, original.doc)
    assert RULES["REG001"] is again and again == original
