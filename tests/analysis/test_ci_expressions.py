"""GitHub Actions expressions: GitHub's grammar, its loose coercions, and the three-valued
evaluation of `if:` conditions, `${{ }}` templates and the functions they call."""

from __future__ import annotations

import math
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.analysis.ci.expressions import (
    MAX_DEPTH,
    MAX_LENGTH,
    UNKNOWN,
    Context,
    Decision,
    ExpressionError,
    Unknown,
    Value,
    condition,
    evaluate,
    interpolate,
    parse,
    references,
    resolve,
    truth,
)

SCRIPT = Unknown(why="set by a script")
LABEL = Unknown(why="a label added later")
RUNNERS = Unknown(why="a list of runners")
LIST: list[Value] = [1.0, "two", None]
CIRCULAR: list[Value] = []
CIRCULAR.append(CIRCULAR)
DEEP: list[Value] = []
_inner = DEEP
for _ in range(5_000):
    _inner.append([])
    _inner = cast(list[Value], _inner[0])
VALUES: dict[str, Value] = {
    "github": {"event_name": "pull_request", "ref": "refs/heads/main", "event": {"pull_request": {
        "labels": [{"name": "run-ci-extra"}, {"name": "Docs"}], "number": 7.0}}},
    "inputs": {},
    "needs": {"changes": {"outputs": {"main": "true", "kernel": "false", "x": SCRIPT}, "result": "success"}},
    "matrix": {
        "list": LIST, "obj": {"a": 1.0, "B": "x"}, "n": 2.0, "nested": [[1.0, 2.0], {"k": "v"}, "s"],
        "t": Unknown(True, "a list of runners"), "f": Unknown(False, "an empty output"),
        "mixed": [{"name": "a"}, LABEL], "found": ["b", LABEL],
        # what a workflow or a caller may hand over that no function may raise on
        "circular": CIRCULAR, "deep": DEEP, "weird": cast(Any, {1: "one"}), "brackets": "[" * 100_000,
        "thing": cast(Any, object()),
    },
    "env": {"big": cast(Any, 10**400)},  # a YAML integer with no float
}
STATUS = {"success": True, "failure": False, "cancelled": False}
CONTEXT = Context(VALUES, STATUS)
SGLANG = (
    "always() && ((contains(format(',{0},', inputs.target_stage || inputs.target_stage_select), "
    "',stage-b,')) || (!(inputs.target_stage || inputs.target_stage_select) && "
    "((github.event_name == 'schedule') || (!failure() && !cancelled())) && "
    "((needs.check-changes.outputs.main_package == 'true') || "
    "(needs.check-changes.outputs.sgl_kernel == 'true'))))")


def _value(expression: str, context: Context = CONTEXT) -> Value:
    return evaluate(parse(expression), context)


def _same(actual: Value, expected: Value) -> bool:
    """Equal, NaN to NaN, and never a boolean to the number it equals."""
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(actual, float) and math.isnan(actual)
    return actual == expected and isinstance(actual, bool) == isinstance(expected, bool)


def _event(name: str, **github: Value) -> Context:
    return Context({**VALUES, "github": {"event_name": name, **github}}, STATUS)


LITERALS = [
    ("null", None), ("true", True), ("false", False), ("711", 711.0), ("-9.2", -9.2), ("0xff", 255.0),
    ("0o17", 15.0), ("-2.99e-2", -0.0299), (".5", 0.5), ("+3", 3.0), ("1.", 1.0), ("Infinity", math.inf),
    ("-Infinity", -math.inf), ("NaN", math.nan), ("'It''s open source!'", "It's open source!"), ("''", ""),
    ("''''", "'"), ("'a'  ", "a"), ("0x" + "f" * 300, math.inf),
]
ACCESS = [
    ("github.event_name", "pull_request"), ("GITHUB.Event_Name", "pull_request"),
    ("github['event_name']", "pull_request"), ("matrix.list[0]", 1.0), ("matrix.list[1.7]", "two"),
    ("matrix.list['1']", "two"), ("matrix.list[3]", None), ("matrix.list[-1]", None),
    ("matrix.list.length", None), ("matrix.list[matrix.list]", None), ("matrix.list[env.big]", None),
    ("matrix.obj.b", "x"), ("matrix.obj.missing", None), ("matrix.obj[matrix.list]", None),
    ("matrix.obj.a.b", None), ("github.nothing.deeper", None), ("matrix.nested[0][1]", 2.0),
    ("inputs.target_stage", None), ("matrix.weird.x", None), ("matrix.obj.true", None),
    ("github.event.pull_request.labels.*.name", ["run-ci-extra", "Docs"]),
    ("github.event.pull_request.labels[*].name", ["run-ci-extra", "Docs"]),
    ("matrix.obj.*", [1.0, "x"]), ("matrix.nested.*.*", [1.0, 2.0, "v"]), ("matrix.nested.*[1]", [2.0]),
    ("matrix.nested.*.k", ["v"]), ("matrix.n.*", []), ("github.nothing.*.name", []),
    ("(matrix.list)[0]", 1.0), ("fromJSON('[[5]]')[0][0]", 5.0),
]
OPERATORS = [
    ("!true", False), ("!0", True), ("!''", True), ("!NaN", True), ("!'x'", False), ("!matrix.list", False),
    ("!2 < 3", True), ("!(2 < 3)", False), ("3 > 2 == true", True), ("1 == 1 && 2 == 3", False),
    ("true || false && false", True), ("(true || false) && false", False),
    ("'a' && 'b'", "b"), ("'' && 'b'", ""), ("0 || 'x'", "x"), ("null || 0", 0.0),
    ("inputs.a || inputs.b", None),
    ("1 && 2 && 3", 3.0), ("1 || 2 || 3", 1.0), ("matrix.list && 1", 1.0),
]
COMPARISONS = [
    ("'ABC' == 'abc'", True), ("'abc' != 'ABC'", False), ("'a' < 'B'", True), ("'b' <= 'B'", True),
    ("'b' > 'A'", True), ("'a' >= 'b'", False), ("'2' > '10'", True), ("2 > 10", False), ("2 >= 2", True),
    ("1.5 <= 1", False), ("1 == '1'", True), ("'0x10' == 16", True), ("' 2 ' == 2", True), ("'' == 0", True),
    ("'abc' == 0", False), ("'abc' != 0", True), ("'Infinity' == Infinity", True), ("null == 0", True),
    ("null == false", True), ("null == ''", True), ("true == 1", True), ("true == '1'", True),
    ("false < true", True), ("true < false", False), ("true > false", True), ("null == null", True),
    ("null < null", False), ("null <= null", True), ("NaN == NaN", False), ("NaN != NaN", True),
    ("1 < NaN", False), ("matrix.list == matrix.list", True), ("matrix.list != matrix.list", False),
    ("matrix.list <= matrix.list", True), ("matrix.list < matrix.list", False),
    ("matrix.list == matrix.obj", False), ("matrix.obj == 'Object'", False), ("matrix.obj != 'x'", True),
    ("null == matrix.list", False), ("env.big > 1", True),
    ("github.event.pull_request.labels.*.name == github.event.pull_request.labels.*.name", False),
]
FUNCTIONS = [
    ("contains('Hello World', 'WORLD')", True), ("contains('abc', 'd')", False),
    ("contains(github.event.pull_request.labels.*.name, 'docs')", True),
    ("contains(matrix.list, 'TWO')", True), ("contains(matrix.list, 2)", False),
    ("contains(matrix.list, '1')", True), ("contains(matrix.list, null)", True),
    ("contains(matrix.obj, 'a')", False), ("contains('abc', matrix.list)", False), ("contains(123, 2)", True),
    ("contains(null, '')", True), ("contains(true, 'RU')", True), ("CONTAINS('a', 'A')", True),
    ("startsWith('Hello', 'he')", True), ("endsWith('Hello', 'LO')", True),
    ("endsWith('Hello', 'he')", False),
    ("startsWith(matrix.list, 'a')", False), ("startsWith(12.5, 12)", True), ("StartsWith('ab', 'A')", True),
    ("format('{0} {1}', 'a', 2)", "a 2"), ("format('{{0}} {0}', 'x')", "{0} x"), ("format('}}{{')", "}{"),
    ("format(',{0},', null)", ",,"), ("format('{1}{0}', 'a', 'b')", "ba"), ("format('{0}', 1.5)", "1.5"),
    ("format('{0}', true)", "true"), ("format('{0}', false)", "false"), ("format('{0}', 1e3)", "1000"),
    ("format('{0}', 0.30000000000000004)", "0.3"), ("format('{0}', NaN)", "NaN"),
    ("format('{0}', Infinity)", "Infinity"), ("format('{0}', -Infinity)", "-Infinity"),
    ("format('{0}', matrix.list)", "Array"), ("format('{0}', matrix.obj)", "Object"),
    ("format('{0}', env.big)", "1" + "0" * 400), ("format(3)", "3"),
    ("format('{0', 1)", Unknown(why="format string '{0' is invalid")),
    ("format('0}', 1)", Unknown(why="format string '0}' is invalid")),
    ("format('{x}', 1)", Unknown(why="format string '{x}' is invalid")),
    ("format('{}', 1)", Unknown(why="format string '{}' is invalid")),
    ("format('{1}', 'a')", Unknown(why="format string '{1}' needs more arguments")),
    ("format('{1000}', 'a')", Unknown(why="format string '{1000}' needs more arguments")),
    ("join(matrix.list)", "1,two,"), ("join(matrix.list, ' | ')", "1 | two | "), ("join('abc', '-')", "abc"),
    ("join(matrix.obj)", ""), ("join(matrix.list, matrix.list)", "1,two,"),
    ("join(github.event.pull_request.labels.*.name)", "run-ci-extra,Docs"),
    ("toJSON(matrix.obj)", '{\n  "a": 1,\n  "B": "x"\n}'), ("toJSON('x')", '"x"'), ("toJSON(null)", "null"),
    ("toJSON(1.5)", "1.5"), ("TOJSON(1)", "1"),
    ("toJSON(matrix.thing)", Unknown(why="Object of type object is not JSON serializable")),
    ("""fromJSON('{"a": [1, true]}')""", {"a": [1.0, True]}), ("fromJson(toJSON(matrix.list))", LIST),
    ("fromjson('3') == 3", True),
    ("fromJSON('not json')", Unknown(why="fromJSON of 'not json', which is not JSON")),
    ("fromJSON('')", Unknown(why="fromJSON of '', which is not JSON")),
    ("fromJSON(matrix.brackets)", Unknown(why=f"fromJSON of {'[' * 60!r}, which is not JSON")),
    ("success()", True), ("failure()", False), ("cancelled()", False), ("always()", True),
    ("hashFiles('**/x')", Unknown(why="hashFiles() reads the repository's files")),
    ("nosuch.x", Unknown(why="unknown context nosuch")),
]
THREE_VALUED = [
    ("needs.changes.outputs.x", SCRIPT), ("needs.changes.outputs.x == 'true'", SCRIPT),
    ("needs.changes.outputs.x && false", Unknown(False, SCRIPT.why)),
    ("needs.changes.outputs.x && ''", Unknown(False, SCRIPT.why)),
    ("needs.changes.outputs.x || true", Unknown(True, SCRIPT.why)),
    ("needs.changes.outputs.x || 'yes'", Unknown(True, SCRIPT.why)),
    ("needs.changes.outputs.x || false", SCRIPT), ("needs.changes.outputs.x && true", SCRIPT),
    ("needs.changes.outputs.x && matrix.f && 1", Unknown(False, SCRIPT.why)),
    ("false && needs.changes.outputs.x", False), ("true || needs.changes.outputs.x", True),
    ("true && needs.changes.outputs.x", SCRIPT), ("'' || needs.changes.outputs.x", SCRIPT),
    ("!needs.changes.outputs.x", SCRIPT), ("!matrix.t", False), ("!matrix.f", True),
    ("matrix.t && false", False), ("matrix.f || true", True),
    ("matrix.f && 1", Unknown(False, "an empty output")),
    ("needs.changes.outputs.x.deeper", SCRIPT), ("needs.changes.outputs.x.*", Unknown(True, SCRIPT.why)),
    ("matrix.list[needs.changes.outputs.x]", SCRIPT), ("matrix.mixed.*.name", Unknown(True, LABEL.why)),
    ("matrix.obj.*[needs.changes.outputs.x]", Unknown(True, SCRIPT.why)),
    ("needs.changes.outputs.x == matrix.t", SCRIPT), ("matrix.t == matrix.f", RUNNERS),
    ("contains(needs.changes.outputs.x, 'x')", SCRIPT), ("contains(matrix.t, 'x')", RUNNERS),
    ("contains(matrix.mixed, 'a')", LABEL), ("contains(matrix.found, 'B')", True),
    ("""contains(fromJSON('["a"]'), needs.changes.outputs.x)""", SCRIPT),
    ("contains(fromJSON('[]'), needs.changes.outputs.x)", False),
    ("contains(matrix.obj, needs.changes.outputs.x)", False),
    ("contains(format(',{0},', inputs.target_stage || inputs.target_stage_select), ',x,')", False),
    ("startsWith(needs.changes.outputs.x, 'a')", SCRIPT),
    ("startsWith(matrix.list, needs.changes.outputs.x)", False),
    ("format('x{0}', needs.changes.outputs.x)", Unknown(True, SCRIPT.why)),
    ("format('{0}', needs.changes.outputs.x)", SCRIPT), ("format(needs.changes.outputs.x, 1)", SCRIPT),
    ("format('{0}', 'a', needs.changes.outputs.x)", "a"),
    ("join(needs.changes.outputs.x)", SCRIPT), ("join(matrix.mixed)", LABEL),
    ("""join(fromJSON('["a"]'), needs.changes.outputs.x)""", "a"),
    ("""join(fromJSON('["a", "b"]'), needs.changes.outputs.x)""", SCRIPT),
    ("toJSON(matrix.mixed)", LABEL), ("fromJSON(needs.changes.outputs.x)", SCRIPT),
]


@pytest.mark.parametrize(("expression", "expected"), LITERALS + ACCESS + OPERATORS + COMPARISONS + FUNCTIONS
                         + THREE_VALUED, ids=lambda v: v if isinstance(v, str) and len(v) < 60 else None)
def test_an_expression_has_the_value_github_gives_it(expression: str, expected: Value) -> None:
    actual = _value(expression)
    assert _same(actual, expected), actual


def test_a_value_json_cannot_write_is_unknown() -> None:
    assert isinstance(_value("toJSON(matrix.deep)"), Unknown)
    assert isinstance(_value("toJSON(matrix.circular)"), Unknown)


@pytest.mark.parametrize(("value", "expected"), [
    (None, False), (False, False), (True, True), (0.0, False), (-0.0, False), (math.nan, False), (0.5, True),
    (3, True), ("", False), ("0", True), ([], True), ({}, True), (UNKNOWN, None), (Unknown(True), True),
    (Unknown(False), False)])
def test_truthiness_follows_github(value: Value, expected: bool | None) -> None:
    assert truth(value) is expected


def test_the_status_functions_read_how_earlier_work_ended_and_always_is_true_unless_told() -> None:
    unknown = Context(VALUES, {})
    assert _value("success()", unknown) == Unknown(why="success() depends on how earlier work ends")
    assert _value("always()", unknown) is True
    assert _value("failure() || cancelled()", Context(VALUES, {"failure": True, "cancelled": False})) is True
    assert _value("always()", Context(VALUES, {"always": False})) is False


def test_hash_files_asks_the_files_when_it_can() -> None:
    context = Context(VALUES, STATUS, files=lambda patterns: "hash of " + " ".join(patterns))
    assert _value("hashFiles('**/a', 'b')", context) == "hash of **/a b"
    assert _value("hashFiles('**/a', needs.changes.outputs.x)", context) == SCRIPT


# -- the conditions rocmbot decides -------------------------------------------------------------


def _changes(main: Value, kernel: Value) -> Context:
    needs: Value = {"check-changes": {"outputs": {"main_package": main, "sgl_kernel": kernel}}}
    return Context({**VALUES, "needs": needs}, STATUS)


def test_sglang_stage_b_runs_for_a_pull_request_that_changes_the_main_package() -> None:
    assert condition(SGLANG, _changes("true", "false"), job=True) == Decision(True)


def test_sglang_stage_b_does_not_run_for_a_pull_request_that_changes_neither_package() -> None:
    assert condition(SGLANG, _changes("false", "false"), job=True) == Decision(False)


def test_sglang_stage_b_is_undecided_while_the_changed_packages_are_not_known() -> None:
    decision = condition(SGLANG, _changes(SCRIPT, Unknown(why="the kernel changes")), job=True)
    assert decision == Decision(None, (), "set by a script")


def test_sglang_stage_b_runs_when_dispatched_for_its_stage() -> None:
    context = Context({**_changes("false", "false").values, "inputs": {"target_stage": "stage-b"}}, STATUS)
    assert condition(SGLANG, context, job=True) == Decision(True)
    other = Context({**_changes("true", "true").values, "inputs": {"target_stage": "stage-c"}}, STATUS)
    assert condition(SGLANG, other, job=True) == Decision(False)


@pytest.mark.parametrize(("event", "runs"), [("schedule", False), ("pull_request", True)])
def test_a_job_not_for_schedules_runs_for_every_other_event(event: str, runs: bool) -> None:
    assert condition("github.event_name != 'schedule'", _event(event), job=True) == Decision(runs)


def test_a_label_gated_job_runs_only_when_the_pull_request_has_the_label() -> None:
    gate = "contains(github.event.pull_request.labels.*.name, 'run-ci-extra')"
    labelled = _event("pull_request", event={"pull_request": {"labels": [{"name": "Run-CI-Extra"}]}})
    unlabelled = _event("pull_request", event={"pull_request": {"labels": [{"name": "docs"}]}})
    assert condition(gate, labelled, job=True) == Decision(True)
    assert condition(gate, unlabelled, job=True) == Decision(False)
    assert condition(gate, _event("push", event={}), job=True) == Decision(False)
    unknown = _event("pull_request", event={"pull_request": {"labels": LABEL}})
    assert condition(gate, unknown, job=True) == Decision(None, (), "a label added later")


def test_an_if_without_a_status_function_runs_only_after_success() -> None:
    failed = Context(VALUES, {"success": False, "failure": True, "cancelled": False})
    assert condition("true", failed, job=True) == Decision(False)
    assert condition("always()", failed, job=True) == Decision(True)
    assert condition("failure() && true", failed, job=False) == Decision(True)
    assert condition("!cancelled()", failed, job=True) == Decision(True)
    assert condition("${{ github.event_name == 'push' }}", CONTEXT, job=True) == Decision(False)


def test_an_if_missing_or_written_as_a_yaml_boolean_decides_as_github_does() -> None:
    assert condition(None, CONTEXT, job=True) == Decision(True)
    assert condition(False, CONTEXT, job=True) == Decision(False)
    assert condition(True, CONTEXT, job=False) == Decision(True)


def test_text_around_an_expression_makes_the_if_a_string_that_is_true_unless_empty() -> None:
    note = "text around ${{ }} makes the if: a string, true unless empty"
    assert condition("${{ false }} && true", CONTEXT, job=True) == Decision(True, (note,))
    assert condition("x ${{ needs.changes.outputs.x }}", CONTEXT, job=False) == Decision(True, (note,))
    assert condition("${{ needs.changes.outputs.x }}${{ '' }}", CONTEXT, job=False) == Decision(
        None, (note,), "set by a script")
    assert condition("${{ always() }} ", Context(VALUES, {"success": False}), job=True).value is True


def test_an_if_that_does_not_parse_is_undecided_and_says_where() -> None:
    assert condition("success() &&", CONTEXT, job=True) == Decision(
        None, ("the if: does not parse: unexpected end of expression at column 13",))
    assert condition("x ${{ 1", CONTEXT, job=True) == Decision(
        None, ("the if: does not parse: ${{ without a closing }} at column 3",))


def test_an_if_reading_what_github_does_not_offer_there_is_undecided() -> None:
    assert condition("matrix.x == 1", CONTEXT, job=True) == Decision(
        None, ("GitHub rejects the workflow: matrix in a job's if:",))
    assert condition("secrets.TOKEN != '' && env.A", CONTEXT, job=False) == Decision(
        None, ("GitHub rejects the workflow: secrets in a step's if:",))
    assert condition("hashFiles('x') != ''", CONTEXT, job=True) == Decision(
        None, ("GitHub rejects the workflow: hashFiles() in a job's if:",))
    assert condition("matrix.n == 2 && env.big > 1", CONTEXT, job=False) == Decision(True)


def test_an_undecided_if_says_why_even_when_its_value_does_not() -> None:
    assert condition("vars.X", Context({"vars": UNKNOWN}, STATUS), job=True) == Decision(
        None, (), "it reads a value not known before the run")
    assert condition("matrix.f", CONTEXT, job=False) == Decision(False)


# -- templates ----------------------------------------------------------------------------------


def test_interpolate_replaces_each_expression_by_its_string() -> None:
    runner = "linux-${{ format('{0}', inputs.runner_arch || 'mi300') }}-1gpu-sglang"
    assert interpolate(runner, CONTEXT) == "linux-mi300-1gpu-sglang"
    assert interpolate("{x} ${{ 1 }}/${{ matrix.n }} ${{ true }}", CONTEXT) == "{x} 1/2 true"
    assert interpolate("${{ 'a}}b' }}", CONTEXT) == "a}}b"
    assert interpolate("${{ 'it''s' }}}", CONTEXT) == "it's}"
    assert interpolate("plain {text}", CONTEXT) == "plain {text}"


def test_interpolate_is_unknown_when_a_part_is_or_does_not_parse() -> None:
    assert interpolate("gpu-${{ needs.changes.outputs.x }}", CONTEXT) == Unknown(True, "set by a script")
    assert interpolate("x ${{ 1 +", CONTEXT) == Unknown(why="${{ without a closing }} at column 3")
    assert interpolate("ab ${{ 'x }}", CONTEXT) == Unknown(why="${{ without a closing }} at column 4")
    assert interpolate("ab ${{ a ]}}", CONTEXT) == Unknown(why="unexpected ']' at column 10")


def test_resolve_keeps_the_type_of_a_whole_expression() -> None:
    assert resolve("${{ fromJSON('[\"a\", \"b\"]') }}", CONTEXT) == ["a", "b"]
    assert resolve(" ${{ matrix.list }} ", CONTEXT) is LIST
    assert resolve("x-${{ matrix.list }}", CONTEXT) == "x-Array"
    assert resolve("plain", CONTEXT) == "plain"
    assert resolve("${{ 1 2 }}", CONTEXT) == Unknown(why="unexpected '2' at column 7")


# -- parsing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "message", "position"), [
    ("", "unexpected end of expression", 0), ("1 2", "unexpected '2'", 2),
    ("(1", "unexpected end of expression", 2), ("a.(", "unexpected '('", 2), ("a.1", "unexpected '1'", 2),
    ("a[1", "unexpected end of expression", 3), ("a[*", "unexpected end of expression", 3),
    ("a[*)", "unexpected ')'", 3), ("'a'[0]", "unexpected '['", 3), (")", "unexpected ')'", 0),
    ("foo(1)", "unknown function foo", 0), ("contains(1)", "contains() given 1 arguments", 0),
    ("success(1)", "success() given 1 arguments", 0), ("contains(1,)", "unexpected ')'", 11),
    ('"x"', "unexpected '\"x\"'", 0), ("a = b", "unexpected '='", 2), ("a & b", "unexpected '&'", 2),
    ("a | b", "unexpected '|'", 2), ("$x", "unexpected '$x'", 0), ("'abc", "unterminated string", 0),
    ("1.2.3", "unexpected '1.2.3'", 0), ("-", "unexpected '-'", 0), ("null.x", "unexpected '.x'", 4),
    ("${{ 1 }} x", "text after the closing }}", 8), ("${{ 1", "${{ without a closing }}", 0),
    ("  ${{ a ] }}", "unexpected ']'", 8),
    ("x" * (MAX_LENGTH + 1), f"longer than {MAX_LENGTH} characters", 0),
])
def test_what_github_rejects_is_an_expression_error_that_says_where(
        text: str, message: str, position: int) -> None:
    with pytest.raises(ExpressionError) as raised:
        parse(text)
    assert (raised.value.message, raised.value.position) == (message, position)
    assert str(raised.value) == f"{message} at column {position + 1}"


@pytest.mark.parametrize("text", [
    "(" * 10_000 + "1" + ")" * 10_000, "!" * 10_000 + "true", "a" + ".b" * 5_000, "1" + " == 1" * 3_000,
    "a" + "[a" * 3_000 + "]" * 3_000, "(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1),
    "!" * (MAX_DEPTH + 1) + "true", "a" + ".b" * MAX_DEPTH])
def test_nesting_deeper_than_github_allows_is_an_expression_error(text: str) -> None:
    with pytest.raises(ExpressionError, match=f"nested deeper than {MAX_DEPTH}"):
        parse(text)
    assert condition(text, CONTEXT, job=False).value is None


def test_nesting_as_deep_as_github_allows_parses() -> None:
    assert _value("(" * (MAX_DEPTH - 1) + "1" + ")" * (MAX_DEPTH - 1)) == 1.0
    assert _value("github" + ".x" * (MAX_DEPTH - 1)) is None


def test_an_expression_in_dollar_braces_is_the_bare_expression() -> None:
    assert parse("  ${{ github.event_name == 'x' }}\n") == parse("github.event_name == 'x'")
    assert parse("a.true") != parse("a")


# -- references ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "paths"), [
    (SGLANG, {"inputs.target_stage", "inputs.target_stage_select", "github.event_name",
              "needs.check-changes.outputs.main_package", "needs.check-changes.outputs.sgl_kernel"}),
    ("contains(github.event.pull_request.labels.*.name, 'x')", {"github.event.pull_request.labels.*.name"}),
    ("needs[matrix.job].result", {"needs.*.result", "matrix.job"}), ("matrix.list[0]", {"matrix.list[0]"}),
    ("a[true] || a[null]", {"a.*"}), ("fromJSON(x).y", {"x"}), ("github", {"github"}), ("1", set()),
])
def test_references_names_the_context_paths_an_expression_reads(text: str, paths: set[str]) -> None:
    assert references(parse(text)) == paths


# -- properties ---------------------------------------------------------------------------------

VOCABULARY = [
    "(", ")", "[", "]", ".", "*", ",", "!", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "'a'", "''",
    "'{0}'", "null", "true", "1", "0x1f", "-2e3", "NaN", "github", "event_name", "matrix", "list", "needs",
    "changes", "outputs", "x", "contains", "format", "join", "toJSON", "fromJSON", "success", "always",
    "hashFiles", "foo", "${{", "}}", "'", "=", "&", "|", "\"", "$", "{", "}", "\n"]
TEXT = st.one_of(st.text(max_size=80), st.lists(st.sampled_from(VOCABULARY), max_size=30).map(" ".join),
                 st.lists(st.sampled_from(VOCABULARY), max_size=30).map("".join))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_any_text_raises_nothing_but_an_expression_error_and_only_from_parse(text: str) -> None:
    try:
        node = parse(text)
    except ExpressionError:
        pass
    else:
        evaluate(node, CONTEXT)
        evaluate(node, Context({}, {}))
        references(node)
    for job in (True, False):
        assert isinstance(condition(text, CONTEXT, job=job), Decision)
    assert isinstance(interpolate(text, CONTEXT), str | Unknown)
    assert isinstance(interpolate("${{ " + text + " }}", CONTEXT), str | Unknown)
    resolve("${{ " + text + " }}", CONTEXT)


LEAVES = st.one_of(
    st.sampled_from([
        "null", "true", "false", "0", "1", "-2.5", "0xff", "NaN", "Infinity", "''", "'a'", "'It''s'", "'1'",
        "github.event_name", "inputs.a", "matrix.list", "matrix.obj", "matrix.list[0]", "matrix.obj.a",
        "matrix.nested", "github.event.pull_request.labels.*.name", "matrix.nested.*.*", "success()",
        "failure()", "cancelled()", "always()", "hashFiles('**/x')"]),
    st.integers(-5, 5).map(str),
    st.text(alphabet="ab'{} ", max_size=4).map(lambda s: "'" + s.replace("'", "''") + "'"),
)


FUNCTIONS_OF_TWO = st.sampled_from(["contains", "startsWith", "endsWith", "join"])
TEMPLATES = st.sampled_from(["'{0}'", "'{1}-{0}'", "'{{x}}'", "''"])


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "&&", "||"])
    return st.one_of(
        inner.map(lambda a: f"!({a})"),
        st.builds(lambda a, op, b: f"({a}) {op} ({b})", inner, binary, inner),
        st.builds(lambda f, a, b: f"{f}({a}, {b})", FUNCTIONS_OF_TWO, inner, inner),
        st.builds(lambda t, a, b: f"format({t}, {a}, {b})", TEMPLATES, inner, inner),
        inner.map(lambda a: f"toJSON({a})"), inner.map(lambda a: f"fromJSON(toJSON({a}))"),
        inner.map(lambda a: f"join({a})"), inner.map(lambda a: f"({a}).*"),
        st.builds(lambda a, b: f"({a})[{b}]", inner, inner),
    )


WELL_FORMED = st.recursive(LEAVES, _extend, max_leaves=12)
KNOWN = Context({"github": VALUES["github"], "inputs": {}, "matrix": {
    "list": LIST, "obj": {"a": 1.0, "B": "x"}, "nested": [[1.0, 2.0], {"k": "v"}, "s"]}},
    STATUS, files=lambda patterns: "0" * 64)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(WELL_FORMED)
def test_a_well_formed_expression_over_known_values_is_known(text: str) -> None:
    assert not isinstance(_value(text, KNOWN), Unknown), text
    assert condition(text, KNOWN, job=False).value is not None
