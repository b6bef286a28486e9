from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from pydantic_sarif.model import StaticAnalysisResultsFormatSarifVersion210JsonSchema as SarifLog

from bot.analysis.engine import analyze
from bot.analysis.findings import Finding, Severity, finding
from bot.analysis.report import RepoCi, Report, Selected, Skipped, Table, TestEntry
from bot.analysis.tree import GitRepository
from bot.cli.demo import build_example
from bot.formats import FORMATS, github_actions, markdown, sarif, text
from bot.formats.escape import cell, code, html_prose, inline, prose

HOSTILE = "@octocat <img src=x onerror=alert(1)> [click](https://evil.example) `x` #12 **b** | c"


def _report(mode: str = "analyze") -> Report:
    entry = TestEntry(
        path="tests/test_@octocat.py",
        line=3,
        func="register_rocm_ci",
        backend="rocm",
        suite="stage-c-4-gpu-mi350",
        gpus=4,
        est_time=1600,
        disabled=None,
        change="enabled",
        reasons=[f"disabled marker removed; was: '{HOSTILE}'"],
        tier="direct",
        launch="partial",
        cadence="per-pr",
    )
    return Report(
        mode=mode,  # type: ignore[arg-type]
        base="a" * 40,
        head="b" * 40,
        tests=[entry],
        selected=[Selected(entry.path, "stage-c-4-gpu-mi350", 1600, "direct", 4)],
        findings=[
            finding(
                "REG001",
                "tests/test_@octocat.py",
                3,
                f"Suite `{HOSTILE}` is run by no CI job.",
                fix="add it",
                test="tests/x.py",
                details=("more, with @someone",),
                severity=Severity.WARNING,  # a rendering fixture: any rule, any severity
            ),
            finding("REG003", None, None, "no location"),
            finding("REG002", "a,b:c.py", 7, "100% wrong\nsecond line", severity=Severity.ERROR),
        ],
        tables=[Table("Launches of @team", ("TP", "PP"), (("2", "<b>2</b>"),), note="note @x")],
    )


def test_json_is_schema_1_with_exactly_the_documented_keys() -> None:
    doc = json.loads(FORMATS["json"](_report()))
    assert list(doc) == ["schema", "base", "head", "tests", "selected", "findings", "notices", "parked",
                         "held", "pin_changes", "skipped", "dispatch_mode", "dispatch_reason",
                         "repo_ci", "unreached"]
    assert doc["schema"] == 1
    assert list(doc["tests"][0]) == [
        "path",
        "backend",
        "suite",
        "gpus",
        "est_time",
        "disabled",
        "change",
        "reasons",
        "launch",
        "cadence",
        "gate",
        "registered",
    ]
    assert (doc["tests"][0]["launch"], doc["tests"][0]["cadence"]) == ("partial", "per-pr")
    assert doc["tests"][0]["est_time"] == 1600
    assert doc["selected"] == [
        {"path": "tests/test_@octocat.py", "suite": "stage-c-4-gpu-mi350", "est_time": 1600, "tier": "direct",
         "trigger": None, "reason": ""}
    ]
    assert list(doc["findings"][0]) == ["rule", "severity", "path", "line", "message", "fix", "test",
                                        "backend", "suite", "baseline"]
    audit_doc = json.loads(FORMATS["json"](_report("audit")))
    assert "base" not in audit_doc and audit_doc["head"] == "b" * 40
    assert "skipped" not in audit_doc and "repo_ci" not in audit_doc


def _outside_code(body: str) -> str:
    return re.sub(r"(`+).*?\1", "", body)


def test_markdown_lets_no_mention_link_or_html_through() -> None:
    rendered = markdown.render(_report())
    body = _outside_code(rendered)
    assert "@octocat" not in body and "@someone" not in body and "@team" not in body
    assert "<img" not in body and "<b>" not in body
    assert "](https://" not in body and "https://" not in body
    assert body.startswith("### ❌ 1 new error · 2 new warnings\n")
    assert "| `tests/test_@octocat.py` |" in rendered
    full = markdown.render(_report(), full=True)  # the check run's: the markers table too
    row = next(line for line in full.splitlines() if line.startswith("| `tests/"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 7  # six cells, whatever the text held
    assert "about 107 GPU-minutes" in body
    assert "**Launches of @\u200bteam**" in body


@given(st.text(max_size=200))
def test_escaped_text_never_holds_raw_markup(value: str) -> None:
    # prose keeps `backticked` parts as code spans, where GitHub renders neither HTML nor
    # mentions: what matters is the text outside them
    for rendered in (inline(value), _outside_code(prose(value))):
        assert "<" not in rendered and ">" not in rendered
        assert "@" not in rendered.replace("@\u200b", "")
        assert "\n" not in rendered
    assert "\n" not in prose(value)
    span = code(value)
    assert "\n" not in span


def test_prose_keeps_markup_only_inside_code_spans() -> None:
    assert prose("`<`") == "`<`"
    assert prose("a `<b>` @x <i>") == "a `<b>` @\u200bx &lt;i&gt;"


def test_code_spans_hold_backticks() -> None:
    assert code("a`b") == "``a`b``"
    assert code("`x") == "`` `x ``"
    assert prose("use `x=1` now") == "use `x=1` now"


def test_html_prose_keeps_the_spaces_around_code_elements() -> None:
    assert html_prose("Launches of `tests/test_a.py` (rocm,  stage-a)") == (
        "Launches of <code>tests/test_a.py</code> (rocm, stage-a)")
    assert html_prose("  `a`  and `b` ") == "<code>a</code> and <code>b</code>"
    report = _report()
    report.tables = [Table("Dependency pins: `rocm` group (ROCm image)", ("package",), (("numba",),))]
    assert "<details><summary>Launch and pin tables (1)</summary>" in markdown.render(report)


def test_text_format_names_rules_and_fixes() -> None:
    out = text.render(_report())
    assert "ROCm runs to dispatch: 1 (107 GPU-minutes)" in out
    verbose = text.render(_report(), verbose=True)
    assert "  tests/test_@octocat.py\n    3: REG001 [suite-not-run] Suite" in verbose
    assert "        fix: add it" in verbose and "Launches of @team" in verbose
    audit_out = text.render(_report("audit"))
    assert audit_out.startswith("rocmbot audit bbbbbbbbbbbb: 1 error · 2 warnings. 1 marker.")


def test_text_puts_the_verdict_first_then_errors_and_warnings_and_counts_the_rest() -> None:
    report = _report()
    report.findings.append(finding("REG002", "a,b:c.py", 9, "again", severity=Severity.ERROR))
    old = replace(finding("REG003", "old.py", 2, "the base had it"), baseline="unchanged")
    note = replace(finding("REG001", "n.py", 1, "an info", severity=Severity.INFO), baseline="new")
    report.findings.extend([old, note])
    out = text.render(report)
    summary, head, counted = out.rstrip("\n").split("\n\n")
    assert summary.startswith(
        "rocmbot analyze aaaaaaaaaaaa..bbbbbbbbbbbb: 2 new errors · 2 new warnings. 1 marker, 1")
    assert " ".join(summary.split()).endswith("Run with -v to list the tests, the ROCm runs and the tables.")
    assert head.splitlines()[:4] == [
        "2 errors", "  a,b:c.py", "    7: REG002 [marker-not-literal] 100% wrong second line",
        "    9: REG002 [marker-not-literal] again"]
    assert head.index("2 warnings") > head.index("2 errors")
    assert "  (the repository)\n    REG003 [gpu-count-unknown] no location" in head
    assert "an info" not in out and "the base had it" not in out  # counted, not listed
    assert " ".join(counted.split()) == ("Not listed: 1 finding the base already had (REG003 \u00d71); "
                                         "1 info (REG001 \u00d71). Run with -v to list them.")
    assert "tests/test_@octocat.py [stage-c-4-gpu-mi350" not in out
    verbose = text.render(report, verbose=True)
    assert "the base had it (already on the base)" in verbose and "an info" in verbose
    assert "Not listed" not in verbose


def test_text_lists_the_tests_runs_and_tables_with_verbose() -> None:
    out = text.render(_report(), verbose=True)
    tests = out.index("Tests changed or affected:\n  enabled     rocm tests/test_@octocat.py [stage-c-4")
    runs = out.index("ROCm runs to dispatch:\n  direct      tests/test_@octocat.py [stage-c-4-gpu-mi350, 27")
    assert out.index("rocmbot analyze") < out.index("1 error") < tests < runs < out.index("Launches of @team")
    assert "Run with -v" not in out
    audit = text.render(_report("audit"), verbose=True)
    assert "Tests:\n  rocm tests/test_@octocat.py:3 [stage-c-4-gpu-mi350, enabled]" in audit


class _Launched(TestEntry):
    """A test entry with the `launch` state DESIGN.md gives it (and the report may not have yet)."""


def test_text_counts_launches_and_keeps_control_characters_out() -> None:
    report = _report()
    states = ["checked", "partial", "checked", "none"]
    report.tests = [_Launched(f"tests/t{i}.py", 1, "register_rocm_ci", "rocm", "s", 1, 1.0, None, "unchanged")
                    for i in range(len(states))]
    for entry, state in zip(report.tests, states, strict=True):
        object.__setattr__(entry, "launch", state)
    hostile = "a\x1b]0;title\x07 b\x9b"
    report.findings = [finding("REG002", "x\x1b[2J.py", 1, hostile, severity=Severity.ERROR)]
    out = text.render(report, color=False)
    assert ("Launches checked: 2 of 3 (1 partly); 1 GPU marker starts no launch the rules model."
            in " ".join(out.split()))
    assert "x?[2J.py" in out and "a?]0;title? b?" in out
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", out)
    coloured = text.render(report, color=True)
    assert "\x1b[1;31m1 error\x1b[0m" in coloured and "\x1b[1mx?[2J.py\x1b[0m" in coloured


def test_a_run_with_an_unknown_time_or_gpu_count_adds_no_gpu_minutes() -> None:
    report = _report()
    report.selected = [
        Selected("tests/test_a.py", "stage-a", 90.5, "direct", None),
        Selected("tests/test_b.py", "stage-b", None, "harness", 2),
        Selected("tests/test_c.py", "stage-c", 60.0, "direct", 2),
    ]
    assert [s.gpu_minutes for s in report.selected] == [None, None, 2.0]
    assert report.gpu_minutes() == 2.0
    out = text.render(report, verbose=True)
    assert "tests/test_b.py [stage-b, ?, ? GPU-min]" in out
    assert "tests/test_a.py [stage-a, 2 min, ? GPU-min]" in out
    doc = json.loads(FORMATS["json"](report))
    assert [s["est_time"] for s in doc["selected"]] == [90.5, None, 60]


def test_github_format_escapes_workflow_command_data() -> None:
    out = github_actions.render(_report())
    assert (
        "::error file=a%2Cb%3Ac.py,line=7,title=REG002 marker-not-literal::100%25 wrong%0Asecond line" in out
    )
    assert "::warning title=REG003 gpu-count-unknown::no location" in out
    assert out.splitlines()[-1].startswith("::notice title=rocmbot::1 errors, 2 warnings")


def test_sarif_is_2_1_0_with_rules_and_locations() -> None:
    doc = json.loads(sarif.render(_report()))
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["REG001", "REG002", "REG003"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert by_rule["REG002"]["level"] == "error"
    assert by_rule["REG002"]["locations"][0]["physicalLocation"]["region"] == {"startLine": 7}
    assert by_rule["REG003"]["level"] == "warning" and "locations" not in by_rule["REG003"]
    assert all(
        r["ruleIndex"] == [x["id"] for x in run["tool"]["driver"]["rules"]].index(r["ruleId"])
        for r in run["results"]
    )


def test_sarif_follows_the_2_1_0_schema_and_what_code_scanning_accepts(tmp_path: Path) -> None:
    base, head = build_example(tmp_path / "repo")
    with GitRepository(tmp_path / "repo") as repo:
        report = analyze(repo.tree(base), repo.tree(head))
    assert report.findings
    doc = json.loads(sarif.render(report))
    SarifLog.model_validate(doc)  # the schema's every object; unknown properties are refused
    SarifLog.model_validate(json.loads(sarif.render(_report())))
    # Code scanning refuses a whole upload when one result has no file to show it in.
    for result in doc["runs"][0]["results"]:
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == "tests/e2e/megatron/test_qwen35_moe.py"
        assert physical["region"]["startLine"] >= 1
    doc["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(ValidationError):
        SarifLog.model_validate(doc)


def test_sarif_fingerprints_tell_apart_findings_alike_and_keep_a_finding_that_moved() -> None:
    first = finding("PAR002", "t.py", 3, "W=4 is not divisible.", test="t.py", details=("cuda",))
    other = finding("PAR002", "t.py", 3, "W=4 is not divisible.", test="t.py", details=("rocm",))
    moved = finding("PAR002", "t.py", 9, "W=4 is not divisible.", test="t.py", details=("cuda",))
    pin = finding("PIN005", "r.txt", 2, "Pinned at `docker/Dockerfile.rocm:12` and line 4.")
    pin_moved = finding("PIN005", "r.txt", 5, "Pinned at `docker/Dockerfile.rocm:30` and line 9.")

    def prints(*findings: Finding) -> list[str]:
        doc = json.loads(sarif.render(Report("audit", None, "b" * 40, [], [], list(findings))))
        return [r["partialFingerprints"]["rocmbot/v3"] for r in doc["runs"][0]["results"]]

    a, b = prints(first, other)
    assert a != b and a.startswith("PAR002:") and b == f"{a}:2"
    assert prints(moved) == [a]  # the same finding on another line keeps its alert
    assert prints(pin) == prints(pin_moved)  # line numbers in the message do not count


def test_sarif_baseline_state_follows_the_finding() -> None:
    new = replace(finding("PAR002", "t.py", 3, "W=4.", test="t.py"), baseline="new")
    old = replace(finding("PIN005", "r.txt", 2, "Drift."), baseline="unchanged")
    doc = json.loads(sarif.render(Report("analyze", "a" * 40, "b" * 40, [], [], [new, old])))
    assert [r["baselineState"] for r in doc["runs"][0]["results"]] == ["new", "unchanged"]
    plain = finding("REG003", "t.py", 1, "x")
    doc = json.loads(sarif.render(Report("audit", None, "b" * 40, [], [], [plain])))
    assert "baselineState" not in doc["runs"][0]["results"][0]


def test_empty_report_renders_quietly() -> None:
    report = Report("analyze", "a" * 40, "b" * 40, [], [], [])
    assert "(head): 0 test markers touched of 0." in markdown.render(report)
    assert "ROCm runs `/run-amd` would dispatch**: none." in markdown.render(report)
    assert " ".join(text.render(report).split()) == (
        "rocmbot analyze aaaaaaaaaaaa..bbbbbbbbbbbb: no new problems · no ROCm tests selected. 0 markers, "
        "0 changed or affected. "
        "ROCm runs to dispatch: none.")
    assert markdown.render(report).startswith("### ✅ no new problems · no ROCm tests selected\n")


def test_table_cells_keep_code_spans_and_never_split_on_a_pipe() -> None:
    assert cell("==0.65.1 (via `docker/requirements.txt`)").endswith("(via `docker/requirements.txt`\\)")
    assert cell("`a|b` c|d") == "`a\\|b` c\\|d"
    assert cell("  ") == " "
    table = Table("t", ("spec",), (("x (via `r.txt`)",),), note="`?`: not determined statically")
    rendered = markdown.render(Report("audit", None, "b" * 40, [], [], [], [table]))
    assert "| x \\(via `r.txt`\\) |" in rendered
    assert "\n`?`: not determined statically" in rendered


def _gated(labels: tuple[str, ...], runs: bool) -> Report:
    """A PR touching a test whose suite the repository's CI runs only with `run-ci-extra`."""
    path, suite = "test/registered/test_extra.py", "extra-a-test-1-gpu-small-amd"
    entry = TestEntry(path, 3, "<module>", "rocm", suite, 1, 60, None, "modified",
                      tier="direct", cadence="on-label", gate="run-ci-extra")
    return Report(
        mode="analyze", base="a" * 40, head="b" * 40, tests=[entry], selected=[], findings=[],
        skipped=[Skipped(path, suite, "on-label", path, "the test file changed", gate="run-ci-extra")],
        dispatch_mode="targeted", repo_ci=RepoCi(int(runs), 0, 0, labels),
        ci_runs={(path, suite): (runs, "`extra-a` in `pr-amd-extra.yml`")},
    )


def test_the_summary_asks_for_a_gate_label_only_when_the_pr_lacks_it() -> None:
    lacking = markdown.render(_gated(("run-ci",), runs=False))
    assert "Add the `run-ci-extra` label to run 1 more affected test in the repository's own CI." in lacking
    assert "| needs label run-ci-extra |" in lacking
    carrying = markdown.render(_gated(("run-ci", "run-ci-extra"), runs=True))
    assert "Add the" not in carrying
    assert ("With the `run-ci-extra` label this PR carries, the repository's own CI runs 1 more "
            "affected test.") in carrying
    assert "The repository's own CI runs 1 AMD test for this PR (with `run-ci`, `run-ci-extra`)" in carrying
    assert "| runs with label run-ci-extra |" in carrying
    # carried, but its job does not run (another gate fails): neither asked for nor claimed
    blocked = markdown.render(_gated(("run-ci-extra",), runs=False))
    assert "Add the" not in blocked and "With the" not in blocked
