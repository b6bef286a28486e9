"""What rocmbot says is known of a launch's arguments is what running the test would give.

Small programs build a server's argument list and a dict of keyword arguments with the ways
tests change them (appends, extends, inserts, ``+=``, removals, slices, deletions, aliases,
helpers, calls rocmbot cannot follow, loops, branches); each is run here, with plain ``exec``,
for every value of what rocmbot cannot know (two conditions and a list of words), and read by
rocmbot's server reader and its evaluator. Whenever either says a value is known, it is the
value every run gave."""

from __future__ import annotations

import itertools
import textwrap
from typing import Any

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from bot.analysis import engine as _engine  # noqa: F401 - registers the rules
from bot.analysis import servers
from bot.analysis.evaluate import Limits, evaluate_source
from bot.analysis.source import Module, parse_python
from bot.analysis.values import Const, ListV, Text, Value, python

WORDS = ["--tp", "--dp", "--ep", "--enable-dp-attention", "--x", "1", "2", "4", "8"]
KEYS = ["tp_size", "dp_size", "ep_size"]
LIMITS = Limits(max_steps=20_000, max_depth=8)

word = st.sampled_from(WORDS).map(repr)
words = st.lists(st.sampled_from(WORDS), max_size=3).map(repr)
key = st.sampled_from(KEYS).map(repr)
number = st.sampled_from([1, 2, 4, 8]).map(str)
index = st.integers(-3, 3).map(str)

SIMPLE: st.SearchStrategy[str] = st.one_of(
    st.builds("args.append({})".format, word),
    st.builds("args.extend({})".format, words),
    st.builds("args.insert({}, {})".format, index, word),
    st.builds("args += {}".format, words),
    st.builds("args.remove({})".format, word),
    st.builds("args[{}:{}] = {}".format, index, index, words),
    st.builds("args[{}] = {}".format, index, word),
    st.builds("del args[{}]".format, index),
    st.just("args.pop()"),
    st.just("args.extend(EXTRA)"),
    st.just("helper(args)"),
    st.just("mystery(args)"),
    st.builds("other = args\nother.append({})".format, word),
    st.builds("args = args + {}".format, words),
    st.builds("kw[{}] = {}".format, key, number),
    st.builds("kw.update({{{}: {}}})".format, key, number),
    st.builds("kw.update({}={})".format, st.sampled_from(KEYS), number),
    st.builds("kw.setdefault({}, {})".format, key, number),
    st.builds("kw.pop({}, None)".format, key),
    st.builds("del kw[{}]".format, key).map(lambda s: s),
    st.just("mystery(kw)"),
    st.just("kw.update(MORE)"),
)


def _block(inner: st.SearchStrategy[list[str]]) -> st.SearchStrategy[str]:
    def wrap(head: str, body: list[str]) -> str:
        return head + "\n" + textwrap.indent("\n".join(body) or "pass", "    ")
    heads = st.sampled_from(["if C0:", "if C1:", "if is_hip():", "for _ in range(2):",
                             "for w in EXTRA:", "with ctx():"])
    return st.builds(wrap, heads, inner)


STATEMENTS = st.recursive(SIMPLE.map(lambda s: [s]),
                          lambda inner: st.lists(st.one_of(SIMPLE, _block(inner.map(
                              lambda ls: [x for x in ls]))), min_size=1, max_size=4)
                          .map(lambda ls: [s for part in ls for s in
                                           (part if isinstance(part, list) else [part])]),
                          max_leaves=8)

PROGRAM = """\
def helper(a):
    a.append("--tp")
    a.append("8")

def test():
    args = {initial}
    kw = {{"tp_size": 2}}
{body}
    popen_launch_server(M, U, other_args=args)
    Engine(model_path=M, **kw)

test()
"""


def _program(initial: str, body: list[str]) -> str:
    return PROGRAM.format(initial=initial, body=textwrap.indent("\n".join(body), "    "))


def _runs(source: str) -> list[tuple[list[Any], dict[str, Any]]] | None:
    """What every run of the program launched (None: some run raised)."""
    out = []
    code = compile(source, "generated.py", "exec")
    for c0, c1, extra, more in itertools.product((True, False), (True, False),
                                                 ([], ["--tp", "4"]), ({}, {"tp_size": 16})):
        seen: dict[str, Any] = {}
        names: dict[str, Any] = {
            "C0": c0, "C1": c1, "EXTRA": list(extra), "MORE": dict(more), "M": "m", "U": "u",
            "is_hip": lambda: True, "mystery": _mystery, "ctx": _Ctx,
            "popen_launch_server": _Seen(seen, "args"), "Engine": _Seen(seen, "kw"),
        }
        try:
            exec(code, names)  # the test's own generated program
        except (ValueError, IndexError, KeyError, TypeError):
            return None
        out.append((seen["args"], seen["kw"]))
    return out


def _mystery(value: Any) -> None:
    """A call rocmbot cannot follow, which changes what it is given."""
    if isinstance(value, list):
        value.extend(["--tp", "16"])
    else:
        value["tp_size"] = 32


class _Seen:
    """A launch: notes a copy of what it was given."""

    def __init__(self, seen: dict[str, Any], name: str) -> None:
        self.seen = seen
        self.name = name

    def __call__(self, *args: Any, other_args: Any = None, **kw: Any) -> None:
        self.seen[self.name] = list(other_args) if self.name == "args" else dict(kw)


class _Ctx:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _known_list(value: Value) -> list[str] | None:
    if not isinstance(value, ListV):
        return None
    out = []
    for item in value.items:
        if type(item) is Text and item.plain is not None:
            out.append(item.plain)
        else:
            return None
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(WORDS), max_size=4).map(repr), STATEMENTS)
def test_what_rocmbot_knows_of_a_launch_is_what_running_it_gives(initial: str,
                                                                 body: list[str]) -> None:
    source = _program(initial, body)
    note(source)
    runs = _runs(source)
    if runs is None:
        return
    module = parse_python("test/test_g.py", source)
    assert isinstance(module, Module)
    # the server reader: a known size is every run's size
    found = servers.find(module, "rocm", frozenset({"popen_launch_server"}), frozenset())
    assert len(found) == 1, source
    for symbol in servers.SYMBOLS:
        said = found[0].value(symbol)
        if isinstance(said, servers.Unresolved):
            continue
        for args, _ in runs:
            one = servers.Server("t", 1, "x")
            servers._apply_flags(one, list(args), 1)
            assert one.value(symbol) == said, (symbol, source, args)
    # the evaluator: a list or a keyword it knows is every run's
    result, calls = evaluate_source(source, path="test/test_g.py", limits=LIMITS)
    assert result.error is None, source
    for call in calls:
        if call.tail == "popen_launch_server" and "other_args" in call.keywords:
            known = _known_list(call.keywords["other_args"])
            if known is not None:
                assert all(args == known for args, _ in runs), (source, known)
        if call.tail == "Engine":
            for name, value in call.keywords.items():
                plain = python(value) if isinstance(value, Const | Text) else None
                if name in KEYS and plain is not None:
                    assert all(kw.get(name) == plain for _, kw in runs), (source, name, plain)
            if not call.partial:
                assert all(set(kw) == set(call.keywords) for _, kw in runs), (source, call.keywords)
