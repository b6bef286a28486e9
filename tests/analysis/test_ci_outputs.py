"""Step outputs: what a `run:` script leaves in `$GITHUB_OUTPUT`, decided where its branches
can be decided."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.analysis.ci import outputs
from bot.analysis.ci.outputs import MAX_SCRIPT, StepOutputs, interpolate, step_outputs

# pr-test-amd-rocm720.yml, steps `run-mode` and `set-continue-on-error`, as SGLang writes them
RUN_MODE = """\
if [[ "${{ inputs.run_all_tests }}" == "true" || "${{ github.event_name }}" == "schedule" ]]; then
  echo "run_all_tests=true" >> $GITHUB_OUTPUT
  echo "Run mode: ALL TESTS (run_all_tests=${{ inputs.run_all_tests }}, event=${{ github.event_name }})"
else
  echo "run_all_tests=false" >> $GITHUB_OUTPUT
  echo "Run mode: FILTERED (triggered by ${{ github.event_name }})"
fi
"""
CONTINUE_ON_ERROR = """\
if [[ "${{ steps.run-mode.outputs.run_all_tests }}" == "true" \\
   || "${{ inputs.continue_on_error }}" == "true" \\
   || "$BYPASS_FASTFAIL_LABEL" == "true" ]]; then
  echo "continue_on_error=true" >> $GITHUB_OUTPUT
  echo "Continue-on-error: ENABLED (run_all_tests=${{ steps.run-mode.outputs.run_all_tests }}, \
input=${{ inputs.continue_on_error }}, bypass-fastfail=$BYPASS_FASTFAIL_LABEL)"
else
  echo "continue_on_error=false" >> $GITHUB_OUTPUT
  echo "Continue-on-error: DISABLED"
fi
"""


def run(script: str, env: Mapping[str, str | None] | None = None, /,
        **values: str | None) -> StepOutputs:
    """The step's outputs, with `${{ a.b }}` given by ``a_b=...`` (unknown when not given)."""
    return step_outputs(script, lambda e: values.get(e.replace(".", "_").replace("-", "_")),
                        env=env)


def test_run_mode_follows_the_event() -> None:
    assert run(RUN_MODE, inputs_run_all_tests="", github_event_name="pull_request") == {
        "run_all_tests": "false"}
    assert run(RUN_MODE, inputs_run_all_tests="", github_event_name="schedule") == {
        "run_all_tests": "true"}
    assert run(RUN_MODE, inputs_run_all_tests="") == {"run_all_tests": None}
    assert run(RUN_MODE, inputs_run_all_tests="true") == {"run_all_tests": "true"}  # `||` decides


def test_continue_on_error_needs_the_steps_env() -> None:
    known = {"steps_run_mode_outputs_run_all_tests": "false", "inputs_continue_on_error": ""}
    assert run(CONTINUE_ON_ERROR, **known) == {"continue_on_error": None}  # $BYPASS_... unknown
    assert run(CONTINUE_ON_ERROR, {"BYPASS_FASTFAIL_LABEL": "false"}, **known) == {
        "continue_on_error": "false"}
    assert run(CONTINUE_ON_ERROR, {"BYPASS_FASTFAIL_LABEL": "true"}, **known) == {
        "continue_on_error": "true"}
    assert run(CONTINUE_ON_ERROR, {"BYPASS_FASTFAIL_LABEL": None}, **known) == {
        "continue_on_error": None}
    assert run(CONTINUE_ON_ERROR, steps_run_mode_outputs_run_all_tests="true") == {
        "continue_on_error": "true"}


@pytest.mark.parametrize("line", [
    'echo "a=1" >> $GITHUB_OUTPUT',
    'echo "a=1" >> "$GITHUB_OUTPUT"',
    'echo "a=1" >>$GITHUB_OUTPUT',
    "echo 'a=1' >> ${GITHUB_OUTPUT}",
    'echo a=1 >> "${GITHUB_OUTPUT}"',
    'echo a=1 1>> $GITHUB_OUTPUT',
    '>> $GITHUB_OUTPUT echo a=1',
    'echo a=1 > $GITHUB_OUTPUT',
    'echo a=1 &>> $GITHUB_OUTPUT',
    "printf 'a=%s\\n' 1 >> $GITHUB_OUTPUT",
    "printf '%s=%s\\n' a 1 >> $GITHUB_OUTPUT",
    "printf -- 'a=1\\n' >> $GITHUB_OUTPUT",
    "printf 'a=%b\\n' 1 >> $GITHUB_OUTPUT",
    "printf '%s\\n' a=1 >> $GITHUB_OUTPUT",
    'echo -n "a=" >> $GITHUB_OUTPUT; echo 1 >> $GITHUB_OUTPUT',
    'echo a=1 | tee -a $GITHUB_OUTPUT',
    'echo a=1 | tee "$GITHUB_OUTPUT" > /dev/null',
    'cat >> $GITHUB_OUTPUT <<EOF\na=1\nEOF',
    "cat <<-'EOF' >> $GITHUB_OUTPUT\n\ta=1\n\tEOF",
    'cat - <<< "a=1" >> $GITHUB_OUTPUT',
    '{\n  echo "a=1"\n} >> $GITHUB_OUTPUT',
    'OUT="$GITHUB_OUTPUT"\necho a=1 >> $OUT',
    'x=1\necho "a=$x" >> $GITHUB_OUTPUT',
    'x=1\necho "a=${x}" >> $GITHUB_OUTPUT',
    'export x=1\necho a=$x >> $GITHUB_OUTPUT',
    'echo a=${{ v }} >> $GITHUB_OUTPUT',
])
def test_write_forms(line: str) -> None:
    result = run(line, v="1")
    assert result == {"a": "1"} and result.complete


def test_echo_joins_its_words_and_reads_its_flags() -> None:
    script = """\
echo -ne "e=2\\n" >> $GITHUB_OUTPUT
echo a=x   y "z  w" >> $GITHUB_OUTPUT
echo -e "b=1" >> $GITHUB_OUTPUT
echo -n -E c=1 >> $GITHUB_OUTPUT
echo " d" >> $GITHUB_OUTPUT
"""
    result = run(script)
    assert result == {"a": "x y z  w", "b": "1", "c": "1 d"} and not result.complete


def test_printf_formats() -> None:
    script = """\
printf '%s=%s\\n' a 1 b 2 >> $GITHUB_OUTPUT
printf 'pct=100%%\\n' >> $GITHUB_OUTPUT
printf 'tab=\\t%s\\n' >> $GITHUB_OUTPUT
printf 'q=\\"x\\"\\n' "$UNSET" >> $GITHUB_OUTPUT
"""
    assert run(script) == {"a": "1", "b": "2", "pct": "100%", "tab": "\t", "q": '"x"'}


def test_every_line_is_read_as_github_reads_the_file() -> None:
    script = """\
echo "a=1" >> $GITHUB_OUTPUT
echo "" >> $GITHUB_OUTPUT
echo "no equals sign" >> $GITHUB_OUTPUT
echo "=nameless" >> $GITHUB_OUTPUT
echo "b=x=y" >> $GITHUB_OUTPUT
echo "a=2" >> $GITHUB_OUTPUT
echo "c=with <<" >> $GITHUB_OUTPUT
{
  echo "body<<EOF"
  echo "line 1"
  echo "line 2"
  echo "EOF"
} >> $GITHUB_OUTPUT
echo "d<<X=Y" >> $GITHUB_OUTPUT
echo "v" >> $GITHUB_OUTPUT
echo "X=Y" >> $GITHUB_OUTPUT
printf 'e=last line, no newline' >> $GITHUB_OUTPUT
"""
    assert run(script) == {"a": "2", "b": "x=y", "c": "with <<", "body": "line 1\nline 2",
                           "d": "v", "e": "last line, no newline"}


def test_a_line_whose_name_is_not_known_leaves_later_lines_known() -> None:
    result = run('echo a=1 >> $GITHUB_OUTPUT\ncat >> $GITHUB_OUTPUT <<EOF\nb=1\n$X=1\nc=1\nEOF')
    assert result == {"a": None, "b": None, "c": "1"} and not result.complete


def test_a_heredoc_value_not_known_and_one_left_open() -> None:
    script = 'echo "t<<EOF" >> $GITHUB_OUTPUT\necho "$TITLE" >> $GITHUB_OUTPUT\n' \
             'echo EOF >> $GITHUB_OUTPUT\necho "u<<END" >> $GITHUB_OUTPUT\necho x >> $GITHUB_OUTPUT'
    assert run(script) == {"t": None}  # `u` is never closed: GitHub rejects it


def test_a_heredoc_whose_delimiter_is_not_known_loses_the_file() -> None:
    result = run('echo a=1 >> $GITHUB_OUTPUT\necho "b<<$D" >> $GITHUB_OUTPUT\n'
                 'echo c=1 >> $GITHUB_OUTPUT')
    assert result == {} and not result.complete


def test_values_that_are_not_known() -> None:
    script = """\
echo "sha=$(git rev-parse HEAD)" >> $GITHUB_OUTPUT
echo "version=${VERSION}" >> $GITHUB_OUTPUT
echo "tag=v$VERSION" >> $GITHUB_OUTPUT
echo "default=${X:-none}" >> $GITHUB_OUTPUT
echo "expr=${{ not.known }}" >> $GITHUB_OUTPUT
echo "quoted='${{ not.known }}'" >> $GITHUB_OUTPUT
echo "path=$GITHUB_OUTPUT" >> $GITHUB_OUTPUT
echo "arg=$1" >> $GITHUB_OUTPUT
echo "home=~" >> $GITHUB_OUTPUT
echo home2=~ >> $GITHUB_OUTPUT
"""
    result = run(script)
    assert result == dict.fromkeys(
        ["sha", "version", "tag", "default", "expr", "quoted", "path", "arg", "home2"]) | {
        "home": "~"}  # quoted, `~` is a letter; after `=` bash makes it the home folder
    assert result.complete


def test_environment_values_and_word_splitting() -> None:
    env = {"ONE": "1", "TWO": "a b", "EMPTY": "", "GLOB": "a*", "NONE": None}
    script = """\
echo glob=$GLOB >> $GITHUB_OUTPUT
echo "one=$ONE" >> $GITHUB_OUTPUT
echo two=$TWO >> $GITHUB_OUTPUT
echo "two_quoted=$TWO" >> $GITHUB_OUTPUT
echo empty=$EMPTY >> $GITHUB_OUTPUT
echo "glob_quoted=$GLOB" >> $GITHUB_OUTPUT
echo "none=$NONE" >> $GITHUB_OUTPUT
echo "[x]=1" >> $GITHUB_OUTPUT
echo [y=1 >> $GITHUB_OUTPUT
"""
    result = run(script, env)
    assert result == {"one": "1", "two": None, "two_quoted": "a b", "empty": None,
                      "glob_quoted": "a*", "none": None, "[x]": "1", "[y": "1"}
    assert not result.complete  # `glob=a*` names files: what it writes is not known


def test_branches_merge_what_they_write() -> None:
    script = """\
if some_command; then
  echo "same=1" >> $GITHUB_OUTPUT
  echo "differs=a" >> $GITHUB_OUTPUT
  echo "one_side=x" >> $GITHUB_OUTPUT
else
  echo "same=1" >> $GITHUB_OUTPUT
  echo "differs=b" >> $GITHUB_OUTPUT
fi
"""
    assert run(script) == {"same": "1", "differs": None, "one_side": None}


def test_elif_else_and_nesting() -> None:
    script = """\
if [ "${{ e }}" = "push" ]; then
  echo "m=push" >> $GITHUB_OUTPUT
elif [ "${{ e }}" = "schedule" ]; then
  if [[ -n "${{ label }}" ]]; then
    echo "m=labelled" >> $GITHUB_OUTPUT
  else
    echo "m=nightly" >> $GITHUB_OUTPUT
  fi
else
  echo "m=other" >> $GITHUB_OUTPUT
fi
"""
    assert run(script, e="push") == {"m": "push"}
    assert run(script, e="schedule", label="") == {"m": "nightly"}
    assert run(script, e="schedule", label="x") == {"m": "labelled"}
    assert run(script, e="schedule") == {"m": None}
    assert run(script, e="pull_request") == {"m": "other"}
    assert run(script) == {"m": None}
    assert run("if false; then echo m=1 >> $GITHUB_OUTPUT; fi") == {}


@pytest.mark.parametrize(("test", "decided"), [
    ('[[ "a" == "a" ]]', True),
    ('[[ "a" = "b" ]]', False),
    ('[[ a != b ]]', True),
    ("[[ -z '' ]]", True),
    ('[[ -n "" ]]', False),
    ('[[ "x" ]]', True),
    ('[[ "" ]]', False),
    ('[[ ! a == a ]]', False),
    ('[[ ( a == b || a == a ) && b == b ]]', True),
    ('[[ a == b ]] || [[ c == c ]]', True),
    ('[[ a == a ]] && [ b = c ]', False),
    ('! [ a = a ]', False),
    ('[[ a == a\n ]]', True),
    ('[[ 2 -lt 10 ]]', True),
    ('[[ 2 -ge 10 ]]', False),
    ('[ 010 -eq 10 ]', True),
    ('[[ 010 -eq 10 ]]', None),  # arithmetic: 010 is octal
    ('[[ abc == a* ]]', None),  # a pattern
    ('[[ abc == "a*" ]]', False),  # quoted: a string
    ('[[ abc == * ]]', True),
    ('[[ abc =~ ^a ]]', None),
    ('[[ a < b ]]', None),
    ('[[ -f /etc/passwd ]]', None),
    ('[[ a == $UNSET ]]', None),
    ('[[ -z $UNSET ]]', None),
    ('[[ a == a && $UNSET == x ]]', None),
    ('[[ a == b && $UNSET == x ]]', False),
    ('[[ a == a || $UNSET == x ]]', True),
    ('[[ ( a == a ]]', None),  # malformed
    ('[[ a && ]]', None),
    ('[[ 1 -eq x ]]', None),
    ('[[ ' + '! ' * 60 + 'a ]]', None),  # nested too deeply
    ('[ a = a ]', True),
    ('[ a == b ]', False),
    ('[ a != b ]', True),
    ('[ -z "" ]', True),
    ('[ -n "" ]', False),
    ('[ -n ]', True),  # one argument: is it empty?
    ('[ ! ]', True),
    ('[ ! a = a ]', False),
    ('[ a = a -a b = c ]', False),
    ('[ a = b -o b = b ]', True),
    ('[ \\( a = a \\) ]', True),
    ('[ ]', False),
    ('[ a = a', False),  # no `]`: an error
    ('[ a = a "$UNSET"', None),  # the last word may be `]`
    ('[ -d /tmp ]', None),
    ('[ "$UNSET" = a ]', None),
    ('[ $TWO = a ]', None),  # splits into an unknown number of words
    ('test a = a', True),
    ('test -z x', False),
    ('true', True),
    (':', True),
    ('false', False),
    ('grep -q x file', None),
    ('(( 1 > 0 ))', None),
    ('x=1', True),
    ('x=$(false)', None),
])
def test_conditions(test: str, decided: bool | None) -> None:
    script = f"if {test}; then echo c=yes >> $GITHUB_OUTPUT; else echo c=no >> $GITHUB_OUTPUT; fi"
    expected = {True: "yes", False: "no", None: None}[decided]
    assert run(script, {"TWO": "a b"}) == {"c": expected}


def test_and_or_lists_write_on_the_way_they_take() -> None:
    script = '[[ "${{ e }}" == "push" ]] && echo "p=1" >> $GITHUB_OUTPUT || echo "p=0" >> $GITHUB_OUTPUT'
    assert run(script, e="push") == {"p": "1"}
    assert run(script, e="pull_request") == {"p": "0"}
    assert run(script) == {"p": None}
    assert run("false && echo a=1 >> $GITHUB_OUTPUT\ntrue || echo b=1 >> $GITHUB_OUTPUT") == {}


def test_variables_assigned_in_the_script() -> None:
    script = """\
MODE=fast
if [ "${{ e }}" = "schedule" ]; then MODE=full; fi
echo "mode=$MODE" >> $GITHUB_OUTPUT
KIND=x
if [ "$MODE" = fast ]; then KIND=y; fi
echo "kind=$KIND" >> $GITHUB_OUTPUT
"""
    assert run(script, e="push") == {"mode": "fast", "kind": "y"}
    assert run(script, e="schedule") == {"mode": "full", "kind": "x"}
    assert run(script) == {"mode": None, "kind": None}


def test_declarations_and_readers() -> None:
    script = """\
export A=1 B
readonly C=2
local D=3 E
declare -i F=4
declare G
typeset H=$(date)
I=1; read I
J=1; unset J
M=1; N+=1; O=(1 2)
P=1; printf -v P '%s' 2
printf -v
echo "a=$A c=$C d=$D j=$J m=$M" >> $GITHUB_OUTPUT
echo "v=$F$G$H$I$N$O$P" >> $GITHUB_OUTPUT
K=1; eval "K=2"
echo "k=$K c=$C" >> $GITHUB_OUTPUT
L=1; source ./env.sh
echo "l=$L" >> $GITHUB_OUTPUT
"""
    before_eval = script.split("K=1; eval", maxsplit=1)[0]
    assert run(before_eval) == {"a": "1 c=2 d=3 j= m=1", "v": None}
    # what eval and source run may write to the file: every output so far is unknown after it
    assert run(script) == {"a": None, "v": None, "k": None, "l": None}


def test_loops_leave_what_they_write_unknown() -> None:
    script = """\
for s in a b; do
  echo "suite=$s" >> $GITHUB_OUTPUT
  echo "seen=1" >> $GITHUB_OUTPUT
done
N=0
while read -r line; do
  N=1
done < list.txt
echo "n=$N" >> $GITHUB_OUTPUT
until false; do
  break
done
while false; do echo "never=1" >> $GITHUB_OUTPUT; done
for ((i = 0; i < 3; i++)); do M=x; done
echo "m=$M" >> $GITHUB_OUTPUT
"""
    assert run(script) == {"suite": None, "seen": None, "n": None, "m": None}


def test_break_and_continue() -> None:
    script = """\
for x in a b; do
  if [ "$x" = b ]; then
    continue
  fi
  echo "found=1" >> $GITHUB_OUTPUT
  break
done
while true; do
  echo "w=1" >> $GITHUB_OUTPUT
  break
done
"""
    assert run(script) == {"found": None, "w": "1"}
    assert run("while true; do :; done\necho a=1 >> $GITHUB_OUTPUT") == {}  # never ends
    assert run("break\ncontinue\necho a=1 >> $GITHUB_OUTPUT") == {"a": "1"}  # outside a loop


def test_case() -> None:
    script = """\
case "${{ e }}" in
  push) echo "k=push" >> $GITHUB_OUTPUT ;;
  schedule|workflow_dispatch)
    echo "k=nightly" >> $GITHUB_OUTPUT
    ;;
  pull_*) echo "k=pr" >> $GITHUB_OUTPUT ;;
  *) echo "k=other" >> $GITHUB_OUTPUT ;;
esac
"""
    assert run(script, e="push") == {"k": "push"}
    assert run(script, e="workflow_dispatch") == {"k": "nightly"}
    assert run(script, e="release") == {"k": None}  # `pull_*` is a pattern: not decided
    assert run(script) == {"k": None}
    assert run('case x in\n(y) echo k=1 >> $GITHUB_OUTPUT;;\nesac') == {}
    assert run('case x in x) echo k=1 >> $GITHUB_OUTPUT;; y) echo k=2 >> $GITHUB_OUTPUT\nesac') \
        == {"k": "1"}


def test_exits_end_the_script_and_failures_are_dropped() -> None:
    script = """\
if [ -z "${{ v }}" ]; then
  echo "::error::missing"
  exit 1
fi
echo "v=${{ v }}" >> $GITHUB_OUTPUT
if [ "${{ v }}" = early ]; then
  echo "stage=early" >> $GITHUB_OUTPUT
  exit 0
fi
echo "stage=late" >> $GITHUB_OUTPUT
"""
    assert run(script, v="x") == {"v": "x", "stage": "late"}
    assert run(script, v="early") == {"v": "early", "stage": "early"}
    assert run(script) == {"v": None, "stage": None}
    assert run(script, v="") == {}  # every way fails: nothing a later step could read
    assert run("echo a=1 >> $GITHUB_OUTPUT\nexit\necho a=2 >> $GITHUB_OUTPUT") == {"a": "1"}
    assert run("echo a=1 >> $GITHUB_OUTPUT\nexit 256\necho a=2 >> $GITHUB_OUTPUT") == {"a": "1"}
    assert run("echo a=1 >> $GITHUB_OUTPUT\nexit $CODE\necho a=2 >> $GITHUB_OUTPUT") == {
        "a": "1"}  # whatever the code, the script ends there
    assert run("if x; then echo a=1 >> $GITHUB_OUTPUT; exit $CODE; fi\necho a=2 >> "
               "$GITHUB_OUTPUT") == {"a": None}
    assert run("(exit 0)\necho a=1 >> $GITHUB_OUTPUT") == {"a": "1"}  # ends the subshell only


def test_functions_are_run_where_called() -> None:
    script = """\
set_out() {
  echo "$1=$2" >> $GITHUB_OUTPUT
  echo "f=called" >> $GITHUB_OUTPUT
}
function check {
  if [ "${{ e }}" = push ]; then
    return 0
  fi
  return 1
}
function quiet() { return; }
set_out
if check; then
  echo "pushed=yes" >> $GITHUB_OUTPUT
else
  echo "pushed=no" >> $GITHUB_OUTPUT
fi
quiet
echo "after=1" >> $GITHUB_OUTPUT
"""
    assert run(script, e="push") == {"pushed": "yes", "f": "called", "after": "1"} and \
        not run(script, e="push").complete  # `$1=$2`: a name not known
    assert run(script, e="pr")["pushed"] == "no"
    assert run("f() { echo a=1 >> $GITHUB_OUTPUT; }\nunset -f f\nf") == {}
    assert run("f() { echo a=1; }\nf >> $GITHUB_OUTPUT\nf > /dev/null") == {"a": "1"}
    assert run("return 0\necho a=1 >> $GITHUB_OUTPUT") == {"a": "1"}  # outside a function


def test_a_function_defined_again_the_same_way_is_one_function() -> None:
    assert run("g() { f() { echo a=1 >> $GITHUB_OUTPUT; }; }\ng\ng\nf") == {"a": "1"}


def test_a_function_defined_twice_runs_either_body() -> None:
    script = "if x; then f() { echo a=1 >> $GITHUB_OUTPUT; }\nelse f() { echo a=2 >> " \
             "$GITHUB_OUTPUT; }\nfi\nf\nf() { echo a=1 >> $GITHUB_OUTPUT; }"
    assert run(script) == {"a": None}


def test_subshells_and_pipelines_keep_writes_not_variables() -> None:
    script = """\
X=1
(X=2; echo "sub=$X" >> $GITHUB_OUTPUT)
echo "x=$X" >> $GITHUB_OUTPUT
echo hi | Y=2
echo "y=$Y" >> $GITHUB_OUTPUT
echo "p=1" | cat >> $GITHUB_OUTPUT
echo q=1 | tee -a $GITHUB_OUTPUT | grep q
"""
    result = run(script)
    assert result == {"sub": "2", "x": "1", "y": None, "p": "1", "q": "1"} and result.complete
    assert run('{ echo "r=1"; } | tee -a $GITHUB_OUTPUT') == {}
    assert run("exit 0 | true\necho a=1 >> $GITHUB_OUTPUT") == {"a": "1"}
    assert run("while true; do :; done | cat\necho a=1 >> $GITHUB_OUTPUT") == {}


def test_stdout_sent_elsewhere_is_not_written() -> None:
    script = """\
echo "a=1" >> $GITHUB_OUTPUT >&2
echo "b=1" > /dev/null
echo "c=1" 2>> $GITHUB_OUTPUT
echo "d=1" >> $GITHUB_OUTPUT 2>&1
{ echo "e=1"; } >> /tmp/x
echo "f=1" >> $GITHUB_OUTPUT >&-
"""
    assert run(script) == {"d": "1"}


def test_programs_that_write_the_file_make_it_incomplete() -> None:
    before = 'echo "a=1" >> $GITHUB_OUTPUT\n'
    after = '\necho "z=1" >> $GITHUB_OUTPUT'
    for writer in [
        'python3 scripts/ci/runner_configs.py >> "$GITHUB_OUTPUT"',
        'python3 x.py --out $GITHUB_OUTPUT',
        'python3 - <<EOF\nimport os\nopen(os.environ["GITHUB_OUTPUT"], "a")\nEOF',
        'GITHUB_OUTPUT=$GITHUB_OUTPUT make',
        'cat values.txt >> $GITHUB_OUTPUT',
        'echo "$NAME=1" >> $GITHUB_OUTPUT',
        'echo files=* >> $GITHUB_OUTPUT',
        'echo -e "x=\\t" >> $GITHUB_OUTPUT',
        "printf '%d\\n' 1 >> $GITHUB_OUTPUT",
        "printf 'x=\\q' >> $GITHUB_OUTPUT",
        "printf '%b\\n' 'x=\\n' >> $GITHUB_OUTPUT",
        'printf "$FMT" >> $GITHUB_OUTPUT',
        'printf "%s\\n" $WORDS >> $GITHUB_OUTPUT',
        'echo x=1 >> "$GITHUB_OUTPUT$SUFFIX"',
        'X=1 >> "$GITHUB_OUTPUT$SUFFIX"',
        'x | tee -a $GITHUB_OUTPUT',
        'x | tee -a "$GITHUB_OUTPUT$S"',
        '$CMD >> $GITHUB_OUTPUT',
        'eval "echo a=2 >> $GITHUB_OUTPUT"',
        'run 2>> $GITHUB_OUTPUT',
    ]:
        result = run(before + writer + after)
        assert result == {"a": None, "z": "1"} and not result.complete, writer


def test_emptying_the_file() -> None:
    assert run('echo a=1 >> $GITHUB_OUTPUT\n: > $GITHUB_OUTPUT\necho b=1 >> $GITHUB_OUTPUT') \
        == {"b": "1"}
    assert run('echo a=1 >> $GITHUB_OUTPUT\necho b=1 | tee $GITHUB_OUTPUT') == {"b": "1"}
    assert run('python x.py >> $GITHUB_OUTPUT\n> $GITHUB_OUTPUT').complete


def test_a_redirected_file_other_than_the_outputs() -> None:
    script = 'GITHUB_OUTPUT=/tmp/mine\necho a=1 >> $GITHUB_OUTPUT\necho b=1 >> "$GITHUB_OUTPUT.x"'
    assert run(script) == {}
    lost = run('echo a=1 >> $GITHUB_OUTPUT\nGITHUB_OUTPUT=$(mktemp)\necho b=1 >> $GITHUB_OUTPUT')
    assert lost == {"a": None} and not lost.complete  # the file it names is not known


def test_branches_that_leave_the_file_in_different_shapes_lose_it() -> None:
    script = 'if x; then echo "v<<EOF" >> $GITHUB_OUTPUT; fi\necho EOF >> $GITHUB_OUTPUT'
    result = run(script)
    assert result == {} and not result.complete
    inside = 'echo "v<<EOF" >> $GITHUB_OUTPUT\ncat notes.txt >> $GITHUB_OUTPUT\n' \
             'echo EOF >> $GITHUB_OUTPUT\necho "w<<EOF" >> $GITHUB_OUTPUT\n' \
             'echo -n "$X" >> $GITHUB_OUTPUT\necho EOF >> $GITHUB_OUTPUT'
    assert run(inside) == {"v": None}  # the unknown text is inside the value
    assert run('python x.py >> $GITHUB_OUTPUT\necho "v<<$D" >> $GITHUB_OUTPUT\n'
               'python x.py >> $GITHUB_OUTPUT') == {}


@pytest.mark.parametrize("script", [
    "exec >> $GITHUB_OUTPUT\necho a=1",
    "exec 3>> $GITHUB_OUTPUT\necho a=1 >&3",
    "trap 'echo a=1 >> $GITHUB_OUTPUT' EXIT",
    "case x in x) echo a=1 >> $GITHUB_OUTPUT;& y) ;; esac",
    "while true; do while true; do break 2; done; done",
    "if [ 'unclosed ]; then echo a=1 >> $GITHUB_OUTPUT; fi",
    "f() { f; }\nf",
    "x" * (MAX_SCRIPT + 1),
    "echo ${{ big }}",
    "{ " * 60 + "true" + "; }" * 60,
    # calls stack up the nesting each function has: bounded as run, not only as read
    "".join(f"f{k}() {{ " + "{ " * 45 + f"f{k + 1}" + "; }" * 45 + " }\n" for k in range(1, 8))
    + "f8() { echo a=2 >> $GITHUB_OUTPUT; }\nf1",
    # each pass of the loop learns one variable less: it does not settle in MAX_PASSES
    "v0=0 v1=0 v2=0 v3=0 v4=0 v5=0 v6=0 v7=0 v8=0 v9=0\nwhile x; do\n"
    + "".join(f"v{i}=$v{i + 1}\n" for i in range(9)) + "v9=1\ndone",
])
def test_scripts_too_costly_or_strange_leave_everything_unknown(script: str) -> None:
    result = run("echo a=1 >> $GITHUB_OUTPUT\n" + script, big="x" * MAX_SCRIPT)
    assert result == {} and not result.complete


def test_a_program_may_write_the_file_it_inherits_an_inert_one_does_not() -> None:
    assert run("python -m tests.ci.ci_policy") == {}
    assert not outputs.step_outputs("python -m tests.ci.ci_policy", lambda _: None).complete
    assert run("echo a=1 >> $GITHUB_OUTPUT\nbash scripts/x.sh") == {"a": None}
    assert run("git fetch origin\necho a=1 >> $GITHUB_OUTPUT\ngrep -q x y") == {"a": "1"}


def test_exec_ends_the_script_and_trap_without_the_file_is_ignored() -> None:
    # the program exec starts inherits the file and may write `a` again
    assert run("echo a=1 >> $GITHUB_OUTPUT\nexec ./run.sh\necho a=2 >> $GITHUB_OUTPUT") == {
        "a": None}
    assert run("exec 2>&1\ntrap 'rm -f x' EXIT\necho a=1 >> $GITHUB_OUTPUT") == {"a": "1"}


def test_a_budget_bounds_the_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outputs, "MAX_STEPS", 10)
    result = run("echo a=1 >> $GITHUB_OUTPUT\n" + "true\n" * 20)
    assert result == {} and not result.complete


def test_interpolate_puts_in_each_expression() -> None:
    seen: list[str] = []

    def value(text: str) -> str | None:
        seen.append(text)
        return None if text == "x" else text.upper()

    assert interpolate("a ${{ x }} b ${{y}} c ${{ format('}}{0}', 'q') }} ${{ open",
                       value) == "a \ue000 b Y c FORMAT('}}{0}', 'Q') ${{ open"
    assert seen == ["x", "y", "format('}}{0}', 'q')"]
    assert interpolate("${{ 'never closed }}", value) == "${{ 'never closed }}"


def test_step_outputs_is_a_dict() -> None:
    result = run(RUN_MODE, inputs_run_all_tests="true")
    assert isinstance(result, dict) and result.complete and StepOutputs() == {}


_PIECES = st.sampled_from([
    "if ", "then ", "elif ", "else ", "fi", "; ", "\n", "[[ ", " ]]", "[ ", " ]", "==", "!=",
    " = ", "-z ", "-n ", "||", "&&", "|", '"', "'", "$", "${{ a }}", "${{ b }}", "x", "a=1",
    "echo ", "printf ", "'%s\\n' ", "%s", "%b", "\\n", ">>", ">", "$GITHUB_OUTPUT", "<<EOF\n",
    "EOF", "<<", "name<<EOF", "case ", " in ", ")", "(", ";;", "esac", "for ", "do ", "done",
    "while ", "{ ", " }", "f() ", "return ", "exit ", "break", "$(", "`", "\\", "#", "*",
    "tee -a ", "cat ", "export ", "X=", "$X", "2>&1", "&", "!", "((", "))", "-eq", "-a", "1",
    "2", "<<-", "<<<", "<(", "${", "}", "~", "exec ", "trap ", "eval ", "read ", "unset ",
])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES | st.text(max_size=3), max_size=60),
       st.sampled_from([None, "", "true", "a b", "${{ a }}", "'", "\n"]))
def test_random_scripts_never_raise(pieces: list[str], value: str | None) -> None:
    result = step_outputs("".join(pieces), lambda e: value, env={"X": value})
    assert isinstance(result, StepOutputs)
    assert all(v is None or isinstance(v, str) for v in result.values())
