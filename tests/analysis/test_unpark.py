"""The patch that brings a parked test back: its marker call without `disabled=`."""

from __future__ import annotations

import ast

from bot.analysis.unpark import removal, unpark_patch

ONE_LINE = (
    "from tests.ci import register_rocm_ci\n"
    'register_rocm_ci(est_time=120, suite="stage-c-4-gpu-mi350", disabled="FIXME: flaky on MI350")\n'
    "CASE = 1\n"
)


def _applied(text: str, patch: str) -> str:
    """``text`` with a one-hunk patch applied (what `git apply` would make of it)."""
    lines = text.splitlines(keepends=True)
    hunk = patch.split("@@", 2)[2].split("\n", 1)[1]
    old = [h[1:] for h in hunk.splitlines(keepends=True) if h[:1] in (" ", "-")]
    new = [h[1:] for h in hunk.splitlines(keepends=True) if h[:1] in (" ", "+")]
    joined = "".join(lines)
    assert "".join(old) in joined
    return joined.replace("".join(old), "".join(new), 1)


def test_the_keyword_is_taken_out_of_a_one_line_marker() -> None:
    patch = unpark_patch("tests/e2e/test_x.py", ONE_LINE, 2)
    assert patch is not None
    assert patch.startswith("--- a/tests/e2e/test_x.py\n+++ b/tests/e2e/test_x.py\n@@ ")
    assert "\n-" + ONE_LINE.splitlines(keepends=True)[1] in patch
    assert '+register_rocm_ci(est_time=120, suite="stage-c-4-gpu-mi350")\n' in patch
    ast.parse(_applied(ONE_LINE, patch))


def test_a_keyword_on_a_line_of_its_own_goes_with_its_line_and_comment() -> None:
    text = ('register_rocm_ci(\n    est_time=120,\n    suite="stage-c",\n    disabled=(\n        "FIXME: a"\n'
            '        " long reason"\n    ),  # why\n)\n')
    patch = unpark_patch("t.py", text, 1)
    assert patch is not None
    after = _applied(text, patch)
    assert after == 'register_rocm_ci(\n    est_time=120,\n    suite="stage-c",\n)\n'


def test_the_first_keyword_goes_with_the_separator_after_it() -> None:
    patch = unpark_patch("t.py", 'register_rocm_ci(disabled="x", est_time=1, suite="s")\n', 1)
    assert patch is not None and '+register_rocm_ci(est_time=1, suite="s")\n' in patch


def test_sglangs_positional_reason_is_taken_out_when_it_is_the_last_argument() -> None:
    text = 'register_amd_ci(60, "stage-b-test-1-gpu-amd", False, "FIXME: hangs")\n'
    patch = unpark_patch("t.py", text, 1, "FIXME: hangs")
    assert patch is not None and '+register_amd_ci(60, "stage-b-test-1-gpu-amd", False)\n' in patch
    assert unpark_patch("t.py", text, 1) is None  # the reason unknown: not guessed


def test_no_patch_without_a_marker_call_on_the_line_or_a_disabled_argument() -> None:
    assert unpark_patch("t.py", ONE_LINE, 3) is None
    assert unpark_patch("t.py", 'register_rocm_ci(1, "s")\n', 1) is None
    assert unpark_patch("t.py", "def broken(:\n", 1) is None
    assert unpark_patch("t.py", 'x = register_rocm_ci(1, "s", disabled="x")\n', 1) is None  # not a statement


def test_a_file_without_a_final_newline_keeps_its_last_line_as_it_was() -> None:
    text = ONE_LINE.rstrip("\n")
    patch = unpark_patch("t.py", text.replace("CASE = 1", "").rstrip("\n"), 2)
    assert patch is not None and patch.endswith("\\ No newline at end of file\n")


def test_a_removal_is_the_run_of_lines_a_suggestion_replaces() -> None:
    one = removal("tests/e2e/test_x.py", ONE_LINE, 2)
    assert one is not None and (one.start, one.end) == (2, 2)
    assert one.lines == ('register_rocm_ci(est_time=120, suite="stage-c-4-gpu-mi350")',)
    assert one.patch == unpark_patch("tests/e2e/test_x.py", ONE_LINE, 2)
    text = 'x = 1\nregister_rocm_ci(\n    est_time=120,\n    disabled=(\n        "FIXME"\n    ),\n)\n'
    own = removal("t.py", text, 2)
    assert own is not None and (own.start, own.end, own.lines) == (4, 6, ())  # its lines go
    assert removal("t.py", "x = 1\n", 1) is None
