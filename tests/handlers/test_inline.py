"""Where inline comments go and what the summary remembers, without GitHub: the lines a patch
changed, findings off the diff, fingerprints instead of blobs, runs with their status."""

from __future__ import annotations

from dataclasses import replace

from bot.analysis import par  # noqa: F401  (it catalogues the PAR rules)
from bot.analysis.findings import Finding, finding, fingerprints
from bot.analysis.report import Report, Selected
from bot.formats import markdown
from bot.github.publish import (
    MAX_COMMENT,
    SummaryState,
    diff_anchors,
    diff_lines,
    inline_comments,
    summary_body,
    with_runs,
)
from tests.formats.test_rendered import check_rendered

PATCH = """\
@@ -1,6 +1,5 @@
 a
-removed in the middle
 b
+added
 c
 d
@@ -20,4 +19,3 @@
 x
 y
-removed at the end"""


def _report(*found: Finding, head: str = "b" * 40) -> Report:
    return Report("analyze", "a" * 40, head, [], [], list(found))


def test_a_patch_shows_context_and_added_lines_and_changes_added_and_removed_ones() -> None:
    shown, changed = diff_anchors(PATCH)
    assert shown == diff_lines(PATCH) == {1, 2, 3, 4, 5, 19, 20}
    # `b` follows a removal, `added` is new, `y` precedes a removal at a hunk's end
    assert changed == [2, 3, 20]
    assert diff_anchors(None) == (set(), [])


def test_a_finding_off_the_diff_goes_on_the_nearest_changed_line_with_a_quote() -> None:
    f = replace(finding("PAR002", "t.py", 40, "W=4.", fix="`ep_size=2`", test="t.py"), baseline="new")
    (c,) = inline_comments(_report(f), {"t.py": PATCH}, [], lambda path, line: "    ep_size=`4`,")
    assert (c.path, c.line) == ("t.py", 20)
    assert "On `t.py:40`, which this diff does not show:" in c.body
    assert "````\n    ep_size=`4`,\n````" not in c.body and "```\n    ep_size=`4`,\n```" in c.body
    assert c.keys == tuple(fingerprints([f]))


def test_a_finding_in_a_file_the_pr_left_goes_on_its_test() -> None:
    f = replace(finding("PAR002", "harness.py", 3, "W=4.", test="t.py"), baseline="new")
    (c,) = inline_comments(_report(f), {"t.py": PATCH}, [])
    assert (c.path, c.line) == ("t.py", 3)  # the changed line nearest to line 3
    assert "```" not in c.body  # no line to quote: the place is named


def test_only_new_problems_not_posted_before_get_a_comment() -> None:
    new = replace(finding("PAR002", "t.py", 4, "W=4."), baseline="new")
    old = replace(finding("PAR002", "t.py", 3, "W=3."), baseline="unchanged")
    info = replace(finding("PAR019", "t.py", 5, "unresolved"), baseline="new")
    nowhere = replace(finding("PAR002", "other.py", 1, "W=1."), baseline="new")
    report = _report(new, old, info, nowhere)
    (c,) = inline_comments(report, {"t.py": PATCH}, [])
    assert (c.path, c.line) == ("t.py", 4)
    assert inline_comments(report, {"t.py": PATCH}, list(c.keys)) == []
    moved = replace(new, line=2)  # the same finding on another line: the same fingerprint
    assert inline_comments(_report(moved), {"t.py": PATCH}, list(c.keys)) == []


def test_a_finding_is_resolved_only_when_its_fingerprint_is_gone() -> None:
    cuda = replace(finding("PAR002", "t.py", 4, "W=4.", test="t.py"), baseline="new")
    first, _ = summary_body(_report(cuda, cuda), SummaryState(), [])
    # one of the two repeats remains, on another line: nothing is resolved
    second, _ = summary_body(_report(replace(cuda, line=9)), SummaryState.load(first), [])
    assert "Resolved since" not in second
    third, _ = summary_body(_report(head="c" * 40), SummaryState.load(second), [])
    assert "**Resolved since `bbbbbbbbbbbb`**: PAR002 at t.py:9\n" in third
    fourth, _ = summary_body(_report(head="d" * 40), SummaryState.load(third), [])
    assert "Resolved since" not in fourth


def test_the_summary_shows_dispatched_runs_with_their_status_instead_of_the_selection() -> None:
    runs = [markdown.Run("stage-c-4-gpu-mi350", ("tests/a.py", "tests/b.py"), "success",
                         "https://github.com/octo/miles/actions/runs/7"),
            markdown.Run("stage-c-8-gpu-mi350", ("tests/c.py",), "queued", "javascript:alert(1)")]
    body = markdown.render(_report(), runs=runs)
    assert "**ROCm runs for this head** (2)" in body
    assert "| `stage-c-4-gpu-mi350` | `tests/a.py`, `tests/b.py` | [success](https://github.com/" in body
    assert "| `stage-c-8-gpu-mi350` | `tests/c.py` | queued |" in body  # only https links
    assert "would dispatch" not in body


def test_a_dispatch_replaces_the_runs_section_of_the_posted_summary() -> None:
    fake = "tests/\n<!-- rocmbot:runs -->\n.py"  # PR text spelling the section's line
    report = replace(_report(), tests=[], selected=[Selected(fake, "stage-c-4-gpu-mi350", 600, "direct", 4)])
    body, state = summary_body(report, SummaryState(), ["k"])
    assert "would dispatch**: 1" in body
    runs = [markdown.Run("stage-c-4-gpu-mi350", (fake,), "in_progress",
                         "https://github.com/octo/miles/actions/runs/9")]
    after = with_runs(body, runs)
    assert "would dispatch" not in after and "**ROCm runs for this head** (1)" in after
    assert "[in\\_progress](https://github.com/octo/miles/actions/runs/9)" in after
    assert SummaryState.load(after) == state  # the state line is kept
    assert with_runs(with_runs(after, runs), runs) == after  # replaced, never added
    check_rendered(after, report)
    assert with_runs("no section here", runs) == "no section here"


def test_findings_of_one_line_make_one_comment_with_each_rule_and_fix() -> None:
    # TP 2 -> 3 in a harness breaks four rules at the line that sets it
    context = "Launch of `t.py`: TP3 PP1, W=4 on a 4-GPU runner."
    found = [replace(finding(rule, "t.py", 3, f"{rule} says so.", fix=f"`tp={n}`", test="t.py",
                             details=(context, f"only {rule}")), baseline="new")
             for n, rule in enumerate(["PAR001", "PAR002", "PAR010", "PAR011"])]
    other = replace(finding("PAR003", "t.py", 2, "Too many ranks.", test="t.py"), baseline="new")
    comments = inline_comments(_report(*found, other), {"t.py": PATCH}, [])
    assert sorted((c.path, c.line) for c in comments) == [("t.py", 2), ("t.py", 3)]
    (one,) = [c for c in comments if c.line == 3]
    assert one.keys == tuple(fingerprints(found))  # each finding is remembered as posted
    for n, rule in enumerate(["PAR001", "PAR002", "PAR010", "PAR011"]):
        assert f"**{rule}**" in one.body and f"{rule} says so." in one.body
        assert f"**Fix**: `tp={n}`" in one.body and f"only {rule}" in one.body
    assert one.body.count(context.replace("`", "")) <= 1 and one.body.count("TP3 PP1") == 1
    # posted once: none of them comes back
    assert inline_comments(_report(*found, other), {"t.py": PATCH}, [*one.keys]) == [
        c for c in comments if c.line == 2]


def test_a_runs_section_too_long_for_the_comment_drops_the_log_lines_first() -> None:
    selected = [Selected("t.py", "stage-c-4-gpu-mi350", 600, "direct", 4)]
    body, _ = summary_body(replace(_report(), tests=[], selected=selected), SummaryState(), [])
    failures = tuple(markdown.Failure(f"tests/test_{n}.py", "new", ("x" * 299,) * 8, "why")
                     for n in range(40))
    runs = [markdown.Run("stage-c-4-gpu-mi350", tuple(f.path for f in failures), "failure", None, failures)]
    full = with_runs(body, runs)
    assert full.count("```") == 2 * markdown.OPEN_FAILURES and "(40)" in full

    def padded(size: int) -> str:  # the same summary with more above its runs section
        return body.replace(f"\n{markdown.RUNS_START}\n", f"\n{'x' * size}\n\n{markdown.RUNS_START}\n", 1)

    shorter = with_runs(padded(MAX_COMMENT - len(full) + 100), runs)
    assert "```" not in shorter and "- `tests/test_39.py`: **new**" in shorter and len(shorter) <= MAX_COMMENT
    bare = with_runs(body, [replace(runs[0], failures=())])
    crowded = padded(MAX_COMMENT - len(bare) - 10)  # room for the runs, not for their failures
    assert with_runs(crowded, runs) != crowded and "Failed ROCm tests" not in with_runs(crowded, runs)
    assert "**ROCm runs for this head** (1)" in with_runs(crowded, runs)
