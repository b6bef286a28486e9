"""The summary comment as GitHub renders it (cmark-gfm, GitHub's own renderer): balanced HTML,
every `<details>` closed, the part a maintainer sees before the first one within its budget,
every finding's rule named; and the same body from `rocmbot analyze --format markdown`."""

from __future__ import annotations

from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm  # type: ignore[import-untyped]
import pytest
from cmarkgfm.cmark import Options  # type: ignore[import-untyped]

from bot.analysis.engine import analyze
from bot.analysis.findings import finding
from bot.analysis.report import Report, Selected, Table, TestEntry
from bot.analysis.tree import GitRepository
from bot.cli import main
from bot.cli.demo import build_example
from bot.formats import markdown, text
from bot.github.publish import (
    MAX_COMMENT,
    STATE_PREFIX,
    SUMMARY_MARKER,
    SummaryState,
    check_output,
    summary_body,
)
from tests.formats import big_pr, seed_pr

OPEN_BUDGET = 8_000  # what shows before the first `<details>`
VOID = frozenset({"br", "hr", "img", "input"})


class _Balance(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()


def check_rendered(body: str, report: Report, *, open_budget: int = OPEN_BUDGET,
                   longest: int = MAX_COMMENT) -> str:
    html: str = cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)
    balance = _Balance()
    balance.feed(html)
    balance.close()
    assert balance.errors == [] and balance.stack == [], (balance.errors, balance.stack)
    assert html.count("<details>") == html.count("</details>")
    assert len(body.split("<details>", 1)[0]) <= open_budget
    assert len(body) <= longest
    for f in report.findings:
        assert f.rule in html, f.rule
    return html


def _analysed(root: Path, base: str, head: str) -> Report:
    with GitRepository(root) as repo:
        return analyze(repo.tree(base), repo.tree(head))


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, Report]:
    root = tmp_path_factory.mktemp("big") / "repo"
    base, head = big_pr.build(root)
    return root, base, head, _analysed(root, base, head)


def test_the_demo_summary_renders_balanced_and_short(tmp_path: Path) -> None:
    base, head = build_example(tmp_path / "repo")
    report = _analysed(tmp_path / "repo", base, head)
    body, _ = summary_body(report, SummaryState(), [])
    html = check_rendered(body, report)
    first = body.splitlines()[1]
    assert first == "### ❌ 2 new errors"
    assert "<summary>Launch and pin tables (2)</summary>" in html  # each launch the PR changed
    assert html.index("Fix") < html.index("<details>")  # the fix is in view


def test_an_environment_pr_of_40_tests_stays_within_8000_characters(
        big: tuple[Path, str, str, Report]) -> None:
    *_, report = big
    body, _ = summary_body(report, SummaryState(), [])
    check_rendered(body, report)
    assert len(body) <= 8_000
    assert body.splitlines()[1].startswith("### ✅ no new problems · 8 ROCm tests will run, ~")
    # what the base had is counted in one line, listed in the check run
    assert "not this PR's: 2 findings (PIN001 \u00d72)" in body and "<summary>Already" not in body
    assert "<summary>32 more tests touched, not dispatched</summary>" in body
    assert "| rocm | nightly | environment: `.github/workflows/rocm-ci.yml` | 32 |" in body
    full = check_output(report)["summary"]
    assert len(full) > len(body)  # the check run says what each pre-existing finding is
    assert full.split("\n\n", 1)[0] == body.splitlines()[1]  # same verdict, same wording


def test_analyze_markdown_prints_the_comment_body(big: tuple[Path, str, str, Report],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root, base, head, report = big
    assert main(["analyze", "--repo", str(root), "--base", base, "--head", head, "--format", "markdown"]) == 0
    printed = capsys.readouterr().out
    body, _ = summary_body(report, SummaryState(), [])
    assert body == f"{SUMMARY_MARKER}\n{printed}\n{body.rsplit(chr(10), 2)[-2]}\n"
    assert body.rsplit("\n", 2)[-2].startswith(STATE_PREFIX)


def _huge() -> Report:
    """A report far past any comment: 400 tests, 300 new findings, 200 tables."""
    tests = [TestEntry(f"tests/t{n:03d}/test_{'x' * 60}.py", 3, "register_rocm_ci", "rocm",
                       f"nightly-c-{n % 8 + 1}-gpu-mi350", n % 8 + 1, 600, None, "affected",
                       ["`docker/Dockerfile.rocm` changed " * 4], "environment", cadence="nightly")
             for n in range(400)]
    found = [replace(finding("PAR002", t.path, 9, f"world_size {n} is not divisible " + "y" * 2500,
                             fix="`ep_size=2`", test=t.path, details=("d " * 80,)), baseline="new")
             for n, t in enumerate(tests[:300])]
    found += [replace(finding("PAR019", t.path, 9, "not resolved statically"), baseline="new") for t in tests]
    tables = [Table(f"Launches of `{t.path}`", ("TP", "PP"), (("2", "1"),) * 5) for t in tests[:200]]
    selected = [Selected(t.path, t.suite or "", 600, "environment", 4) for t in tests[:50]]
    return Report("analyze", "a" * 40, "b" * 40, tests, selected, found, tables)


def test_a_huge_report_is_cut_by_whole_sections_and_points_to_the_check_run() -> None:
    report = _huge()
    body, _ = summary_body(report, SummaryState(), [])
    assert len(body) <= 60_000
    assert "the check run **rocmbot / analysis** (the Checks tab) has the full report" in body
    check_rendered(body, report, open_budget=60_000)  # every rule named, if only in the cut line
    assert SummaryState.load(body).head == "b" * 40  # the state survives the cut
    full = check_output(report)["summary"]
    assert "rocmbot analyze --format json" in full
    check_rendered(full, report, open_budget=65_000, longest=65_000)


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Report:
    root = tmp_path_factory.mktemp("seed") / "repo"
    return _analysed(root, *seed_pr.build(root))


def test_the_seed_pr_summary_says_what_it_changed_within_8000_characters(seed: Report) -> None:
    body, _ = summary_body(seed, SummaryState(), [])
    check_rendered(body, seed)
    assert len(body) <= 8_000
    assert body.splitlines()[1].startswith("### ✅ no new problems · 4 ROCm tests will run")
    shown = body.split("<details>", 1)[0]
    # numba, its three places, and that they agree
    assert ("- `numba==0.65.1` pin **added**: `docker/Dockerfile.rocm:4`, `rocm-ci.yml` (steps "
            "`Install dependencies`, `Install (miles only)`) — consistent") in shown
    # the four re-enabled tests, the fixed grid, and their runs, before any <details>
    for n in seed_pr.REENABLED:
        assert f"- `{seed_pr.test_path(n)}` (rocm, `stage-c-4-gpu-mi350`): **enabled**" in shown
        assert f"| `{seed_pr.test_path(n)}` | `stage-c-4-gpu-mi350` | direct |" in shown
    assert "**enabled** (`ep 4 -> 2`); launch checked, valid" in shown
    # the images and workflows it changed, and whether they reach the PR's jobs
    assert "- `docker/Dockerfile.rocm` changed; the PR's ROCm jobs run `rocm/miles:ci`" in shown
    assert ("- `.github/workflows/rocm-ci.yml` changed: it reaches 36 ROCm tests, none of them "
            "run for this PR.") in shown
    # the base's 36 infos: counted in one line, none listed
    assert "not this PR's: 36 infos (REG001 \u00d736)" in body
    assert "suite-not-run" not in body and "REG001:" not in body  # nor kept in the state
    (change,) = seed.pin_changes
    assert (change.package, change.kind, change.consistent) == ("numba", "added", True)
    assert ("  numba==0.65.1 added: docker/Dockerfile.rocm:4, rocm-ci.yml (steps Install "
            "dependencies, Install (miles only)) - consistent") in text.render(seed)


def test_the_seed_pr_keeping_ep_4_holds_that_test(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    report = _analysed(root, *seed_pr.build(root, keep_ep=True))
    grid = seed_pr.test_path(seed_pr.GRID)
    assert grid not in {s.path for s in report.selected} and len(report.selected) == 3
    (held,) = report.held
    assert (held.test.path, held.rule) == (grid, "PAR002")
    body, _ = summary_body(report, SummaryState(), [])
    runs = body.split(markdown.RUNS_START)[1].split(markdown.RUNS_END)[0]
    assert grid not in runs
    assert "**Held**: 1 test has a new error (PAR002): fix it, or a maintainer can " \
           "`/run-amd --force`." in body
    said = " ".join(text.render(report).split())
    assert f"Held for a new error in their launch (PAR002): {grid};" in said


def test_a_pin_a_pr_adds_in_one_place_only_is_said_not_consistent(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    base, _ = seed_pr.build(root)
    # the workflow's pin taken back out of the second install step, and another version there
    workflow = root / ".github/workflows/rocm-ci.yml"
    text = workflow.read_text()
    workflow.write_text(text.replace('-e . "numba==0.65.1" ', '-e . "numba==0.64.0" '))
    big_pr._git(root, "commit", "-qam", "drift")
    head = big_pr._git(root, "rev-parse", "HEAD")
    report = _analysed(root, base, head)
    (change,) = report.pin_changes
    assert change.package == "numba" and not change.consistent and change.disagree == ("PIN001",)
    assert "— **not consistent** (PIN001: see the problems above)" in markdown.render(report)
    removed = _analysed(root, head, _removed(root))
    assert [(c.package, c.kind) for c in removed.pin_changes] == [("numba", "removed")]


def _removed(root: Path) -> str:
    """A commit on top that takes numba out of every place."""
    for path in ("docker/Dockerfile.rocm", ".github/workflows/rocm-ci.yml"):
        full = root / path
        full.write_text(full.read_text().replace('RUN pip install "numba==0.65.1"\n', "")
                        .replace('"numba==0.65.1" ', "").replace('"numba==0.64.0" ', ""))
    big_pr._git(root, "commit", "-qam", "no numba")
    return big_pr._git(root, "rev-parse", "HEAD")
