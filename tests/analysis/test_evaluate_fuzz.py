"""The evaluator never raises and always terminates, whatever Python it is given."""

from __future__ import annotations

import ast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.analysis.evaluate import Limits, evaluate_source

NAMES = ["a", "b", "c", "x", "f", "g", "Case", "os", "U", "__name__"]
LIMITS = Limits(max_steps=5_000, max_depth=8)


def _name() -> st.SearchStrategy[ast.expr]:
    return st.sampled_from(NAMES).map(lambda n: ast.Name(n, ast.Load()))


LEAVES: st.SearchStrategy[ast.expr] = st.one_of(
    _name(),
    st.integers(-10**30, 10**30).map(ast.Constant),
    st.sampled_from([None, True, False, 0.5, "--tensor-model-parallel-size 2 ", "rocm", ""]).map(
        ast.Constant),
    st.text(max_size=8).map(ast.Constant),
)

BINOPS = [ast.Add(), ast.Sub(), ast.Mult(), ast.Div(), ast.FloorDiv(), ast.Mod(), ast.Pow(),
          ast.LShift(), ast.RShift(), ast.BitAnd(), ast.BitOr(), ast.BitXor(), ast.MatMult()]
CMPOPS = [ast.Eq(), ast.NotEq(), ast.Lt(), ast.LtE(), ast.Gt(), ast.GtE(), ast.In(), ast.NotIn(),
          ast.Is(), ast.IsNot()]


def _extend(inner: st.SearchStrategy[ast.expr]) -> st.SearchStrategy[ast.expr]:
    return st.one_of(
        st.builds(ast.BinOp, inner, st.sampled_from(BINOPS), inner),
        st.builds(ast.UnaryOp, st.sampled_from([ast.Not(), ast.USub(), ast.UAdd(), ast.Invert()]),
                  inner),
        st.builds(lambda left, o, r: ast.Compare(left, [o], [r]), inner, st.sampled_from(CMPOPS), inner),
        st.builds(lambda vs: ast.BoolOp(ast.And(), vs), st.lists(inner, min_size=2, max_size=3)),
        st.builds(lambda vs: ast.BoolOp(ast.Or(), vs), st.lists(inner, min_size=2, max_size=3)),
        st.builds(ast.IfExp, inner, inner, inner),
        st.builds(lambda f, a, k: ast.Call(f, a, [ast.keyword("k", k)]), inner,
                  st.lists(inner, max_size=2), inner),
        st.builds(lambda v, a: ast.Attribute(v, a, ast.Load()), inner,
                  st.sampled_from(["join", "split", "append", "get", "tp", "environ", "getenv"])),
        st.builds(lambda v, i: ast.Subscript(v, i, ast.Load()), inner, inner),
        st.builds(lambda vs: ast.List(vs, ast.Load()), st.lists(inner, max_size=3)),
        st.builds(lambda vs: ast.Tuple(vs, ast.Load()), st.lists(inner, max_size=3)),
        st.builds(ast.Dict, st.lists(inner, max_size=2),
                  st.lists(inner, max_size=2)).filter(lambda d: len(d.keys) == len(d.values)),
        st.builds(lambda v: ast.JoinedStr([ast.Constant("--x "), ast.FormattedValue(v, -1, None)]),
                  inner),
        st.builds(lambda t, it: ast.ListComp(t, [ast.comprehension(ast.Name("c", ast.Store()), it,
                                                                   [], 0)]), inner, inner),
        st.builds(lambda b: ast.Lambda(ast.arguments([], [ast.arg("a")], None, [], [], None, []), b),
                  inner),
    )


EXPRS = st.recursive(LEAVES, _extend, max_leaves=12)


def _target() -> st.SearchStrategy[ast.expr]:
    return st.sampled_from(NAMES[:6]).map(lambda n: ast.Name(n, ast.Store()))


def _statements(inner: st.SearchStrategy[list[ast.stmt]]) -> st.SearchStrategy[list[ast.stmt]]:
    one = st.one_of(
        st.builds(lambda t, v: ast.Assign([t], v, lineno=1), _target(), EXPRS),
        st.builds(lambda t, v: ast.AugAssign(t, ast.Add(), v), _target(), EXPRS),
        st.builds(ast.Expr, EXPRS),
        st.builds(ast.If, EXPRS, inner, inner),
        st.builds(lambda t, it, b: ast.For(t, it, b, [], lineno=1), _target(), EXPRS, inner),
        st.builds(lambda c, b: ast.While(c, b, []), EXPRS, inner),
        st.builds(ast.Return, EXPRS),
        st.just(ast.Break()), st.just(ast.Continue()), st.just(ast.Pass()),
        st.builds(lambda v: ast.Raise(v, None), EXPRS),
        st.builds(lambda b: ast.Try(b, [ast.ExceptHandler(None, "e", [ast.Pass()])], [], []), inner),
        st.builds(lambda n, b: ast.FunctionDef(n, ast.arguments([], [ast.arg("a")], None, [], [],
                                                                None, [ast.Constant(1)]),
                                               b or [ast.Pass()], [], None, lineno=1),
                  st.sampled_from(["f", "g"]), inner),
        st.builds(lambda b: ast.ClassDef("Case", [], [], b or [ast.Pass()],
                                         [ast.Name("dataclass", ast.Load())]), inner),
        st.builds(lambda s, c: ast.Match(s, [ast.match_case(ast.MatchValue(ast.Constant(1)), None,
                                                            c or [ast.Pass()]),
                                             ast.match_case(ast.MatchAs(None, None), None,
                                                            [ast.Pass()])]), EXPRS, inner),
    )
    return st.lists(one, min_size=1, max_size=6)


PROGRAMS: st.SearchStrategy[list[ast.stmt]] = st.recursive(st.just([]), _statements, max_leaves=30)

PRELUDE = """\
import os
from dataclasses import dataclass, field
"""


def _source(body: list[ast.stmt]) -> str | None:
    module = ast.Module(body=body, type_ignores=[])
    ast.fix_missing_locations(module)
    try:
        return PRELUDE + ast.unparse(module)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return None


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROGRAMS)
def test_evaluator_never_raises_and_terminates_on_generated_programs(body: list[ast.stmt]) -> None:
    source = _source(body)
    if source is None:
        return
    result, _ = evaluate_source(source, limits=LIMITS, env={"MILES_PLATFORM": "rocm"})
    assert result.error is None, (result.error, source)
    assert result.steps <= LIMITS.max_steps + 1  # bounded work; a hang is pytest-timeout's


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_evaluator_never_raises_on_arbitrary_text(text: str) -> None:
    result, _ = evaluate_source(text, limits=LIMITS)
    assert result.error is None


ADVERSARIAL = [
    "while True:\n    pass\n",
    "def f(n):\n    return f(n + 1)\nf(0)\n",
    "x = 2 ** 10 ** 9\ny = 1 << 10 ** 9\nz = 'a' * 10 ** 9\nw = [0] * 10 ** 9\n",
    "x = " + " + ".join(["1"] * 3000) + "\n",
    "x = (" * 150 + "1" + ")" * 150 + "\n",
    "for i in range(10 ** 9):\n    pass\n",
    "a = []\nwhile len(a) < 10 ** 9:\n    a.append(a)\n",
    "def g():\n    yield from g()\nlist(g())\n",
    "class A:\n    def __init__(self):\n        A()\nA()\n",
    "x = [[[[[[[[[[1]]]]]]]]]] * 10 ** 6\n",
    "import os\nwhile os.environ.get('X'):\n    y = 1\n",
    "x = 10 ** 400\ny = f'{x}'\nz = str(x) * 1000\n",
    "s = 'ab ' * 50000\nt = s.split()\nu = ' '.join(t * 10)\n",
    "d = {}\nfor i in range(100000):\n    d[i] = i\n",
]


def test_evaluator_stops_on_adversarial_programs() -> None:
    for source in ADVERSARIAL:
        result, _ = evaluate_source(source, limits=Limits(max_steps=20_000))
        assert result.error is None, (result.error, source)
        assert result.steps <= 20_000 + 1, source
