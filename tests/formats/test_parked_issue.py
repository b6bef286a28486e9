"""The body of the "Parked ROCm tests" issue: a marked table of the parked tests, and the patches of
those that passed in two sweeps in a row."""

from __future__ import annotations

from bot.formats.parked_issue import MARKER, IssueRow, SweepFacts, render

JOB = "https://github.com/octo/miles/actions/runs/5/job/7"


FACTS = SweepFacts("a1b2c3d4e5f6a7b8", "2026-W19", "weekly", 600.0, "main")


def test_the_issue_is_a_marked_table_of_the_parked_tests_with_the_patches_after_it() -> None:
    rows = [
        IssueRow("tests/a.py", "stage-c-4-gpu-mi350", "FIXME: | pipes and @someone", "valid", "passed",
                 JOB, "--- a/tests/a.py\n+++ b/tests/a.py\n"),
        IssueRow("tests/b.py", "stage-c-4-gpu-mi350", "FIXME: hangs", "PAR002; fix: `ep_size=2`",
                 "not run: its launch would fail: PAR002"),
        IssueRow("tests/c.py", "stage-c-8-gpu-mi350", "FIXME", "valid", "dispatched", "javascript:alert(1)"),
    ]
    body = render(rows, FACTS)
    assert body.startswith(MARKER + "\n")
    assert "`main` at `a1b2c3d4e5f6`" in body and "`2026-W19`" in body and "each week" in body
    assert "600 GPU-minutes" in body
    lines = body.splitlines()
    table = [line for line in lines if line.startswith("| `tests/")]
    assert len(table) == 3
    assert "passed ([run](https://github.com/octo/miles/actions/runs/5/job/7))" in table[0]
    assert "\\|" in table[0] and "@someone" not in table[0]  # a cell's pipe escaped, no mention
    assert table[1].endswith("| not run: its launch would fail: PAR002 |")
    assert "javascript" not in table[2] and table[2].endswith("| dispatched |")  # only http(s) links
    ready = body.split("### Ready to come back", 1)[1]
    assert "`tests/a.py` passed on `stage-c-4-gpu-mi350` in the last two sweeps" in ready
    assert "```diff\n--- a/tests/a.py\n+++ b/tests/a.py\n```" in ready and "tests/b.py" not in ready


def test_an_issue_without_ready_tests_has_no_patch_section_and_an_empty_one_says_so() -> None:
    row = IssueRow("tests/b.py", "s", "r", "valid", "failed")
    assert "Ready to come back" not in render([row], FACTS)
    assert "No parked ROCm test" in render([], FACTS)


def test_an_issue_too_long_for_github_keeps_its_table_and_names_the_ready_tests() -> None:
    patch = "--- a/t.py\n+++ b/t.py\n" + "+x\n" * 4000
    rows = [IssueRow(f"tests/t{n}.py", "s", "r", "valid", "passed", None, patch) for n in range(10)]
    body = render(rows, FACTS)
    assert len(body) <= 60_000 and body.count("| `tests/t") == 10
    assert "too long to show here" in body and "```diff" not in body
