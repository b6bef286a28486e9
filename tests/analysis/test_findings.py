"""The rule catalogue: an id, once given, keeps naming the one rule that declares it."""

from __future__ import annotations

import pytest

from bot.analysis import findings
from bot.analysis.findings import RULES, Rule, Severity, rule


def test_a_rule_id_cannot_be_declared_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    original = RULES["REG001"]
    catalogue = {"REG001": original}
    monkeypatch.setattr(findings, "RULES", catalogue)
    declare = rule("REG001", original.slug, original.severity, original.summary)
    with pytest.raises(ValueError, match=f"rule id REG001 already names {original.slug} "
                                         r"\(in bot\.analysis\.findings\)"):
        declare(type("Again", (), {"__doc__": original.doc}))
    assert catalogue == {"REG001": original}


def test_a_rule_is_declared_with_its_docstring_and_module(monkeypatch: pytest.MonkeyPatch) -> None:
    catalogue: dict[str, Rule] = {}
    monkeypatch.setattr(findings, "RULES", catalogue)

    @rule("TST001", "a-test-rule", Severity.INFO, "A rule for this test.")
    def checks() -> None:
        """
        ## What it does
        Nothing.
        """

    assert catalogue == {"TST001": Rule("TST001", "a-test-rule", Severity.INFO, "A rule for this test.",
                                        "## What it does\nNothing.", __name__)}


def test_a_rule_without_documentation_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    catalogue: dict[str, Rule] = {}
    monkeypatch.setattr(findings, "RULES", catalogue)
    with pytest.raises(ValueError, match=r"rule TST002 has no documentation: \S*\.Bare has no docstring"):
        @rule("TST002", "undocumented", Severity.INFO, "A rule without docs.")
        class Bare:
            pass
    assert catalogue == {}
