"""The shell script reader: words with their quoting and expansions, commands and their
structure, and a clear ScriptError (with its line) for what it cannot read."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.analysis.ci.script import (
    MARK,
    Arith,
    Case,
    DoubleBracket,
    FuncDef,
    Group,
    If,
    Lit,
    Loop,
    Op,
    Opaque,
    Redirected,
    ScriptError,
    Seq,
    Simple,
    Var,
    Word,
    parse_script,
    split_assignment,
    tokenize,
)


def commands(text: str) -> list[object]:
    """The first command of each pipeline of a script."""
    return [item.first.commands[0] for item in parse_script(text).items]


def only(text: str) -> object:
    found = commands(text)
    assert len(found) == 1
    return found[0]


def words(text: str) -> list[Word]:
    found = only(text)
    assert isinstance(found, Simple)
    return list(found.words)


def test_quoting_and_expansions_are_kept() -> None:
    a, b, c, d = words("""a'b c'"d $X ${Y}" $1 "$(date)"x `id` """)
    assert a.parts == (Lit("a", False), Lit("b cd ", True), Var("X", True), Lit(" ", True),
                       Var("Y", True))
    assert b.parts == (Opaque(False),)
    assert c.parts == (Opaque(True), Lit("x", False))
    assert d.parts == (Opaque(False),)
    assert a.plain is None and words("plain")[0].plain == "plain"
    (inner,) = words('"a`id`b"')
    assert inner.parts == (Lit("a", True), Opaque(True), Lit("b", True))


def test_escapes_outside_and_inside_double_quotes() -> None:
    (word,) = words('a\\ b"\\$x \\q \\\\"c\\\nd')
    assert word.parts == (Lit("a", False), Lit(" ", True), Lit("b", False),
                          Lit("$x \\q \\", True), Lit("cd", False))
    (tail,) = words("end\\")
    assert tail.parts == (Lit("end", False), Lit("\\", True))
    (joined,) = words('"a\\\nb"')
    assert joined.parts == (Lit("ab", True),)


def test_dollar_forms() -> None:
    found = words("""$ $"s" ${x:-y} ${#x} $((1+2)) $'a\\'b' $? "$" "$'x'" ${name}""")
    assert [w.parts for w in found] == [
        (Lit("$", False),), (Lit("$", False), Lit("s", True)), (Opaque(False),),
        (Opaque(False),), (Opaque(False),), (Opaque(True),), (Opaque(False),),
        (Lit("$", True),), (Lit("$'x'", True),), (Var("name", False),)]


def test_an_unknown_value_is_opaque_even_in_single_quotes() -> None:
    (word,) = words(f"'a{MARK}b'\"{MARK}\"{MARK}")
    assert word.parts == (Lit("a", True), Opaque(True), Lit("b", True), Opaque(True),
                          Opaque(False))


def test_tilde_process_substitution_and_arrays() -> None:
    home, value, plain, proc = words("~/x a=~/y b~c <(ls)")
    assert home.parts[0] == Opaque(False) and value.parts[1] == Opaque(False)
    assert plain.parts == (Lit("b~c", False),)
    assert proc.parts == (Opaque(False),)
    array = only("a=(1 2) b+=(3) c=x d+=y cmd")
    assert isinstance(array, Simple)
    assert [(a.name, a.value is None) for a in array.assigns] == [
        ("a", True), ("b", True), ("c", False), ("d", True)]


def test_split_assignment() -> None:
    word = words("x NAME=a'b'")[1]
    name, value = split_assignment(word) or ("", None)
    assert name == "NAME" and value is not None
    assert value.parts == (Lit("a", False), Lit("b", True)) and value.raw == "a'b'"
    assert split_assignment(words("'X=1'")[0]) is None
    assert split_assignment(words("1X=1")[0]) is None
    assert split_assignment(words("X")[0]) is None
    assert split_assignment(Word((), "", 0)) is None
    empty = split_assignment(words("x X=")[1])
    assert empty is not None and empty[1] is not None and empty[1].parts == ()


def test_operators_descriptors_and_comments() -> None:
    tokens = tokenize("a 2>&1 >>f # comment ; not a token\nb &>x 12345>y;c")
    texts = [t.text if isinstance(t, Op) else t.raw for t in tokens]
    assert texts == ["a", ">&", "1", ">>", "f", "\n", "b", "&>", "x", "12345", ">", "y", ";", "c"]
    fds = [t.fd for t in tokens if isinstance(t, Op)]
    assert fds == [2, None, None, None, None, None]
    assert tokenize("a \\\n b")[1].start == 5  # a line continuation between words


def test_heredocs() -> None:
    tokens = tokenize("cat <<EOF; cat <<-'END' x\n$A \\$b\nEOF\n\t$c\n\tEND\nnext")
    first, second = [t for t in tokens if isinstance(t, Op) and t.text.startswith("<<")]
    assert first.body == (Var("A", True), Lit(" $b\n", True)) and first.body_raw == "$A \\$b\n"
    assert second.body == (Lit("$c\n", True),)
    assert isinstance(tokens[-1], Word) and tokens[-1].raw == "next"
    unclosed = [t for t in tokenize("cat <<EOF\nnever closed") if isinstance(t, Op)]
    assert unclosed[0].body == (Lit("never closed\n", True),)
    at_end = [t for t in tokenize("cat <<EOF") if isinstance(t, Op)]
    assert at_end[0].body == ()
    digits = tokenize("cat <<1>x\nbody\n1\n")  # the delimiter `1` is not a descriptor
    assert [t.text if isinstance(t, Op) else t.raw for t in digits] == [
        "cat", "<<", "1", ">", "x", "\n"]
    assert isinstance(digits[1], Op) and digits[1].body == (Lit("body\n", True),)
    assert not isinstance(digits[3], Op) or digits[3].fd is None


def test_compound_commands() -> None:
    script = """\
if a; then b; elif c; then d; else e; fi
while x; do y; done
until x; do y; done
for v in 1 2; do y; done
for v
do y; done
for ((i = 0; i < 3; i++)); do y; done
select v in a b; do y; done
case $x in (a|b) y;; c) z;& d) w;;& *) ;; esac
{ a; b; } > out
( a )
(( x++ ))
[[ a == b && ( c < d ) || ! e ]]
f() { a; }
function g { b; }
function h () ( c )
"""
    found = commands(script)
    assert [type(c).__name__ for c in found] == [
        "If", "Loop", "Loop", "Loop", "Loop", "Loop", "Loop", "Case", "Redirected", "Group",
        "Arith", "DoubleBracket", "FuncDef", "FuncDef", "FuncDef"]
    if_, while_, until, for_, for_bare, for_arith, _, case, group, sub, _, test, *funcs = found
    assert isinstance(if_, If) and len(if_.arms) == 2 and if_.orelse is not None
    assert isinstance(while_, Loop) and not while_.until and while_.cond is not None
    assert isinstance(until, Loop) and until.until
    assert isinstance(for_, Loop) and for_.var == "v" and for_.cond is None
    assert isinstance(for_bare, Loop) and for_bare.var == "v"
    assert isinstance(for_arith, Loop) and for_arith.var is None
    assert isinstance(case, Case) and [a.end for a in case.arms] == [";;", ";&", ";;&", ";;"]
    assert [p.raw for p in case.arms[0].patterns] == ["a", "b"]
    assert isinstance(group, Redirected) and isinstance(group.command, Group)
    assert not group.command.subshell and group.redirects[0].target.raw == "out"
    assert isinstance(sub, Group) and sub.subshell
    assert isinstance(test, DoubleBracket)
    assert [i if isinstance(i, str) else i.raw for i in test.items] == [
        "a", "==", "b", "&&", "(", "c", "<", "d", ")", "||", "!", "e"]
    assert [f.name for f in funcs if isinstance(f, FuncDef)] == ["f", "g", "h"]
    last = commands("case x in\n a) b\nesac")[0]
    assert isinstance(last, Case) and last.arms[0].end == ""
    assert isinstance(only("(( 1 ))"), Arith)


def test_pipelines_and_lists() -> None:
    seq = parse_script("! time a | b |& c && d || e & f\n\n;g")
    first = seq.items[0]
    assert first.first.negate and len(first.first.commands) == 3
    assert [op for op, _ in first.rest] == ["&&", "||"]
    assert len(seq.items) == 3
    assert parse_script("") == Seq(())
    assert parse_script("a &&\n\n b").items[0].rest[0][0] == "&&"


def test_a_word_that_looks_reserved_is_an_argument() -> None:
    assert [w.raw for w in words("echo if then fi }")] == ["echo", "if", "then", "fi", "}"]


@pytest.mark.parametrize(("script", "message", "line"), [
    ("echo 'open", "a ' that no ' closes", 1),
    ('a\necho "open', 'a " that no " closes', 2),
    ("echo $(open", "a ( that no ) closes", 1),
    ("echo ${open", "a { that no } closes", 1),
    ("echo `open", "a ` that no ` closes", 1),
    ("echo $'open", "a $' that no ' closes", 1),
    ("echo $(a 'b)' \"c)\" \\) `d)`", "a ( that no ) closes", 1),
    ("if a; then b", "`fi` expected", 1),
    ("if a; b; fi", "`then` expected", 1),
    ("while a; b; done", "`do` expected", 1),
    ("{ a", "`}` expected", 1),
    ("( a", "`)` expected", 1),
    ("fi", "unexpected token", 1),
    ("a )", "unexpected token", 1),
    ("a |", "a command expected", 1),
    ("| a", "a command expected", 1),
    ("a >", "a word expected after `>`", 1),
    ("a > ;", "a word expected after `>`", 1),
    ("for 1 in x; do a; done", "a variable name expected after `for`", 1),
    ("for", "the script ends too early", 1),
    ("case ; in esac", "a word expected after `case`", 1),
    ("case x in a) b c) d;; esac", "`;;` or `esac` expected", 1),
    ("case x in ;; esac", "a pattern expected", 1),
    ("case x in a b) c;; esac", "`)` expected", 1),
    ("case x a) b;; esac", "`in` expected", 1),
    ("[[ a ; ]]", "`;` inside [[ ]]", 1),
    ("[[ a", "the script ends too early", 1),
    ("function ; { a; }", "a function name expected", 1),
    ("x=(1 2", "the script ends too early", 1),
    ("{ " * 60 + "a" + "; }" * 60, "nested too deeply", 1),
])
def test_what_cannot_be_read_is_a_script_error(script: str, message: str, line: int) -> None:
    with pytest.raises(ScriptError) as caught:
        parse_script(script)
    assert str(caught.value) == f"line {line}: {message}" and caught.value.line == line


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from([*"ab1 $'\"`\\(){}[]<>|&;#\n~=!*\t-", MARK]),
               max_size=80))
def test_reading_never_raises_anything_but_a_script_error(text: str) -> None:
    with contextlib.suppress(ScriptError):
        parse_script(text)
