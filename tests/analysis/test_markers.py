from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.analysis.markers import find_markers
from bot.analysis.source import Module, Unreadable, parse_python
from config.repo import defaults

NAMES = defaults().markers


def _parse(text: str) -> Module:
    module = parse_python("tests/test_x.py", text)
    assert isinstance(module, Module)
    return module


def test_reads_every_argument_style() -> None:
    module = _parse(
        'import os\n'
        'register_cuda_ci(1500, "stage-c-8-gpu-h200")\n'
        'register_rocm_ci(1600, "stage-c-4-gpu-mi350", labels=["moe"], nightly=True,\n'
        '                 disabled="FIXME: flaky")\n'
        'register_amd_ci(300, "stage-b-1-gpu-mi350", False, "sglang positional reason")\n'
        'ci.register_cpu_ci(est_time=60.5, suite="stage-a-cpu", disabled=None)\n'
        'def f():\n    register_rocm_ci(1, "inside-a-function")\n'
        'x = register_rocm_ci(1, "assigned, not a marker")\n'
    )
    markers, problems = find_markers(module, NAMES)
    assert problems == []
    cuda, rocm, amd, cpu = markers
    assert (cuda.backend, cuda.est_time, cuda.suite, cuda.enabled, cuda.line) == (
        "cuda", 1500.0, "stage-c-8-gpu-h200", True, 2)
    assert rocm.labels == ("moe",) and rocm.nightly and rocm.is_nightly
    assert rocm.disabled == "FIXME: flaky" and rocm.disabled_line == 4
    assert amd.backend == "rocm" and amd.disabled == "sglang positional reason"
    assert amd.key == ("tests/test_x.py", "register_amd_ci", 0)
    assert cpu.backend == "cpu" and cpu.est_time == 60.5 and cpu.enabled


def test_two_markers_of_one_function_are_told_apart_by_index() -> None:
    markers, _ = find_markers(_parse(
        'register_rocm_ci(1, "stage-a-1-gpu-x")\nregister_rocm_ci(2, "nightly-1-gpu-x")\n'
    ), NAMES)
    assert [m.index for m in markers] == [0, 1]
    assert markers[1].is_nightly and not markers[0].is_nightly


def test_calls_of_computed_functions_are_not_markers() -> None:
    markers, problems = find_markers(_parse(
        'registry["rocm"](1, "stage-a")\nmake()(1, "stage-a")\nregister_rocm_ci(1, "stage-b")\n'
    ), NAMES)
    assert [m.suite for m in markers] == ["stage-b"]
    assert problems == []


def test_an_est_time_no_float_can_hold_is_reg002() -> None:
    huge = "1" + "0" * 400
    markers, problems = find_markers(_parse(
        f'register_rocm_ci(1e999, "stage-a")\nregister_rocm_ci({huge}, "stage-a")\n'
    ), NAMES)
    assert [(p.rule, p.line) for p in problems] == [("REG002", 1), ("REG002", 2)]
    assert "`est_time` must be a finite number of seconds, not `1e999`" in problems[0].message
    assert all(m.est_time is None and m.suite == "stage-a" for m in markers)


def test_non_literals_and_unknown_keywords_are_reg002() -> None:
    markers, problems = find_markers(_parse(
        'register_rocm_ci(EST, SUITE)\n'
        'register_rocm_ci(1, "s", owner="x")\n'
        'register_rocm_ci(*args)\n'
        'register_rocm_ci(1, "s", **kw)\n'
        'register_rocm_ci(1, "s", suite="t")\n'
        'register_rocm_ci(1, "s", False, None, 5)\n'
        'register_rocm_ci(True, 5, nightly="yes", disabled=3, labels=[1])\n'
        'register_rocm_ci()\n'
    ), NAMES)
    assert all(p.rule == "REG002" for p in problems)
    messages = [p.message for p in problems]
    assert any("argument `est_time` is `EST`, not a literal" in m for m in messages)
    assert any("unknown keyword `owner`" in m for m in messages)
    assert any("unpacks `*args`" in m for m in messages)
    assert any("unpacks `**kw`" in m for m in messages)
    assert any("gets `suite` twice" in m for m in messages)
    assert any("at most 4 positional" in m for m in messages)
    assert any("`est_time` must be a number, not `True`" in m for m in messages)
    assert any("`suite` must be a string" in m for m in messages)
    assert any("`labels` must be a list of strings" in m for m in messages)
    assert any("has no `est_time`" in m for m in messages)
    assert len(markers) == 8
    assert markers[0].suite is None and markers[0].est_time is None


@given(st.text(max_size=400))
def test_marker_parsing_never_raises_on_arbitrary_text(text: str) -> None:
    module = parse_python("tests/test_fuzz.py", text)
    if isinstance(module, Module):
        find_markers(module, NAMES)
    else:
        assert module.finding().rule == "REG004"


@given(st.lists(st.sampled_from([
    "register_rocm_ci(", ")", "1600", ", ", '"stage-c-4-gpu-mi350"', "disabled=", "None",
    "labels=[", "]", "*", "**", "x", "\n", "'r'", "nightly=True", "(", "lambda: 0", "f'{x}'",
]), max_size=30))
def test_marker_parsing_never_raises_on_marker_like_text(parts: list[str]) -> None:
    module = parse_python("tests/test_fuzz.py", "".join(parts))
    if isinstance(module, Module):
        markers, problems = find_markers(module, NAMES)
        assert all(p.rule == "REG002" for p in problems)
        assert all(m.func == "register_rocm_ci" for m in markers)


def test_unparsable_source_is_reg004_with_line_and_message() -> None:
    bad = parse_python("t.py", "x = 1\ndef f(:\n")
    assert isinstance(bad, Unreadable)
    f = bad.finding()
    assert (f.rule, f.path, f.line) == ("REG004", "t.py", 2)
    assert "does not parse" in f.message
    nul = parse_python("t.py", "x = '\0'")
    assert isinstance(nul, Unreadable) and nul.line is None
    deep = parse_python("t.py", "(" * 5000 + ")" * 5000)
    assert isinstance(deep, Unreadable)
