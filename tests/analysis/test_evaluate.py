"""The partial evaluator: what it decides, what it leaves unknown, and where values come from."""
# ruff: noqa: E501

from __future__ import annotations

import re
import textwrap

import pytest

from bot.analysis.evaluate import (
    ExternalCall,
    Interpreter,
    Limits,
    Stop,
    evaluate_source,
    split_literal,
)
from bot.analysis.source import Module, parse_python
from bot.analysis.values import (
    NOT_PLAIN,
    Alternatives,
    Choice,
    Chunk,
    Hole,
    Instance,
    Text,
    Unknown,
    Value,
    python,
)

UNKNOWN = "<unknown>"


def _interp(files: dict[str, str], env: dict[str, str | None] | None = None,
            limits: Limits | None = None, sinks: frozenset[str] = frozenset({"launch"}),
            quiet: frozenset[str] = frozenset({"wandb"})) -> Interpreter:
    parsed: dict[str, Module] = {}
    for path, text in files.items():
        module = parse_python(path, textwrap.dedent(text))
        assert isinstance(module, Module)
        parsed[path] = module
    return Interpreter(parsed.get, lambda p: p in parsed, (".",), env, sinks, quiet, limits)


def run(source: str, **files: str) -> tuple[Interpreter, list[ExternalCall]]:
    interp = _interp({"main.py": source, **{k.replace("_DOT_", "/") + ".py": v for k, v in files.items()}},
                     env={"MILES_PLATFORM": "rocm", "UNSET": None})
    calls: list[ExternalCall] = []
    result = interp.run("main.py", calls.append)
    assert result.error is None
    return interp, calls


def value(source: str, name: str = "RESULT", **files: str) -> object:
    interp, _ = run(source, **files)
    found = interp.module_globals("__main__").get(name)
    assert found is not None, f"{name} not set"
    if isinstance(found, Unknown):
        return UNKNOWN
    plain = python(found)
    return UNKNOWN if plain is NOT_PLAIN else plain


CASES: list[tuple[str, object]] = [
    ("RESULT = 1 + 2 * 3 - 4 // 3 % 5", 6),
    ("RESULT = 2 ** 10 + (1 << 3) + (256 >> 2) + (6 & 3) + (4 | 1) + (5 ^ 1)", 1024 + 8 + 64 + 2 + 5 + 4),
    ("RESULT = 7 / 2", 3.5),
    ("RESULT = 1 / 0", UNKNOWN),
    ("RESULT = 2 ** 100000", UNKNOWN),
    ("RESULT = 1 << 100000", UNKNOWN),
    ("RESULT = 'ab' * 3 + 'c'", "abababc"),
    ("RESULT = 3 * 'x'", "xxx"),
    ("RESULT = [1] * 2 + [3]", [1, 1, 3]),
    ("RESULT = (1,) * 2 + (3,)", (1, 1, 3)),
    ("RESULT = 'x' * 10 ** 8", UNKNOWN),
    ("RESULT = '--tp %d --pp %s' % (2, 'a')", "--tp 2 --pp a"),
    ("RESULT = '%d' % 'a'", UNKNOWN),
    ("RESULT = 'a' - 1", UNKNOWN),
    ("RESULT = -(3) + +2 + ~0 + (not 0)", -3 + 2 - 1 + 1),
    ("RESULT = not X", UNKNOWN),
    ("RESULT = -'a'", UNKNOWN),
    ("RESULT = ~1.5", UNKNOWN),
    ("RESULT = 1 and 2", 2),
    ("RESULT = 0 or '' or 3", 3),
    ("RESULT = 0 and X", 0),
    ("RESULT = X and 1", UNKNOWN),
    ("RESULT = 1 < 2 <= 2 > 1 >= 1 != 0 == 0", True),
    ("RESULT = 1 < 2 > 3", False),
    ("RESULT = X < 2", UNKNOWN),
    ("RESULT = 'a' < 1", UNKNOWN),
    ("RESULT = 'ab' in 'cabd' and 'z' not in 'abc'", True),
    ("RESULT = 2 in [1, 2] and 3 not in (1, 2)", True),
    ("RESULT = X in [1, 2]", UNKNOWN),
    ("RESULT = 1 in [X]", UNKNOWN),
    ("RESULT = 'a' in {'a': 1} and 'b' in {'b'}", True),
    ("RESULT = X in {'a': 1}", UNKNOWN),
    ("RESULT = 'a' in X", UNKNOWN),
    ("RESULT = None is None and 1 is not None", True),
    ("RESULT = X is None", UNKNOWN),
    ("RESULT = 'a' is 'a'", UNKNOWN),
    ("RESULT = 1 is 1", UNKNOWN),
    ("RESULT = [] is []", False),
    ("RESULT = 1 if True else 2", 1),
    ("RESULT = 1 if 0 else 2", 2),
    ("RESULT = 1 if X else 1", 1),
    ("RESULT = 1 if X else 2", UNKNOWN),
    ("RESULT = [*[1, 2], 3]", [1, 2, 3]),
    ("RESULT = [*X]", UNKNOWN),
    ("RESULT = len({1, 2, 2})", 2),
    ("RESULT = {X}", UNKNOWN),
    ("RESULT = {'a': 1, **{'b': 2}}['b']", 2),
    ("d = {'a': 1, **X}\nRESULT = d['z']", UNKNOWN),
    ("RESULT = {X: 1}.get('a')", UNKNOWN),
    ("RESULT = [x * 2 for x in range(3) if x]", [2, 4]),
    ("RESULT = sorted({x for x in 'aba'})", ["a", "b"]),
    ("RESULT = {k: v for k, v in [('a', 1)]}['a']", 1),
    ("RESULT = [x for x in X]", UNKNOWN),
    ("RESULT = [x for x in [1] if X]", UNKNOWN),
    ("RESULT = list(x for x in range(2))", [0, 1]),
    ("RESULT = [x for x in range(30000)]", UNKNOWN),
    ("RESULT = (y := 3) + y", 6),
    ("RESULT = (lambda a, b=2: a + b)(1)", 3),
    ("RESULT = len('abc') + len([1]) + len((1, 2)) + len({'a': 1})", 7),
    ("RESULT = len(X)", UNKNOWN),
    ("RESULT = len({**X})", UNKNOWN),
    ("RESULT = str(4) + str('a') + str() + str(None)", "4aNone"),
    ("RESULT = str(X)", UNKNOWN),
    ("RESULT = str([1])", "[1]"),
    ("RESULT = str(Case())", UNKNOWN),
    ("RESULT = int('4') + int(2.5) + int() + float('1.5') + bool(0) + bool([1])", 4 + 2 + 0 + 1.5 + 0 + 1),
    ("RESULT = int('x')", UNKNOWN),
    ("RESULT = int(X)", UNKNOWN),
    ("RESULT = bool(X)", UNKNOWN),
    ("RESULT = int('1' * 200)", UNKNOWN),
    ("RESULT = min(3, 1) + max([1, 5]) + abs(-2) + sum([1, 2]) + round(2.6)", 1 + 5 + 2 + 3 + 3),
    ("RESULT = min(X)", UNKNOWN),
    ("RESULT = min('a', 'b')", UNKNOWN),
    ("RESULT = sum(X)", UNKNOWN),
    ("RESULT = sum(['a'])", UNKNOWN),
    ("RESULT = abs(X)", UNKNOWN),
    ("RESULT = divmod(7, 2)", (3, 1)),
    ("import math\nRESULT = math.ceil(1.5) + math.floor(1.5) + math.gcd(4, 6) + math.lcm(2, 3)", 2 + 1 + 2 + 6),
    ("import math\nRESULT = math.prod([2, 3]) + math.isqrt(10) + math.log2(8) + math.sqrt(4)", 6 + 3 + 3.0 + 2.0),
    ("import math\nRESULT = math.prod(X)", UNKNOWN),
    ("import math\nRESULT = math.prod(['a'])", UNKNOWN),
    ("import math\nRESULT = math.prod([10 ** 300, 10 ** 300])", UNKNOWN),
    ("import math\nRESULT = math.gcd(2 ** 1023, 1.5)", UNKNOWN),
    ("RESULT = list(range(3)) + list(range(1, 7, 3))", [0, 1, 2, 1, 4]),
    ("RESULT = range(X)", UNKNOWN),
    ("RESULT = range(10 ** 9)", UNKNOWN),
    ("RESULT = range()", UNKNOWN),
    ("RESULT = list() + list((1,)) + list(X or [])", UNKNOWN),
    ("RESULT = tuple([1]) + tuple()", (1,)),
    ("RESULT = len(set([1, 1])) + len(set())", 1),
    ("RESULT = dict(a=1)['a'] + dict([('b', 2)])['b'] + len(dict()) + dict({'c': 3}, d=4)['d']", 7),
    ("RESULT = dict([1])", UNKNOWN),
    ("RESULT = list(X)", UNKNOWN),
    ("RESULT = sorted([3, 1]) + list(reversed([1, 2]))", [1, 3, 2, 1]),
    ("RESULT = sorted([X])", UNKNOWN),
    ("RESULT = sorted(X)", UNKNOWN),
    ("RESULT = sorted([1], key=len)", UNKNOWN),
    ("RESULT = list(enumerate('ab', 1))", [(1, "a"), (2, "b")]),
    ("RESULT = enumerate(X)", UNKNOWN),
    ("RESULT = enumerate([1], X)", UNKNOWN),
    ("RESULT = list(zip([1, 2], 'ab'))", [(1, "a"), (2, "b")]),
    ("RESULT = zip(X)", UNKNOWN),
    ("RESULT = list(map(str, [1])) + list(map(lambda v: v + 1, [1])) + list(filter(None, [0, 2]))", ["1", 2, 2]),
    ("RESULT = list(filter(lambda v: v > 1, [1, 2]))", [2]),
    ("RESULT = map(X, [1])", UNKNOWN),
    ("RESULT = map(str)", UNKNOWN),
    ("RESULT = map(str, X)", UNKNOWN),
    ("RESULT = filter(lambda v: X, [1])", UNKNOWN),
    ("RESULT = isinstance(1, int) and isinstance('a', (str, int)) and not isinstance(1, str)", True),
    ("RESULT = isinstance({}, dict) and isinstance(set(), set)", True),
    ("RESULT = isinstance(X, int)", UNKNOWN),
    ("RESULT = isinstance(1, X)", UNKNOWN),
    ("class A: pass\nclass B(A): pass\nRESULT = isinstance(B(), A) and not isinstance(1, A)", True),
    ("class A: pass\nRESULT = isinstance(X, A)", UNKNOWN),
    ("RESULT = print('x')", None),
    ("RESULT = repr('a')", "'a'"),
    ("RESULT = repr(X)", UNKNOWN),
    ("RESULT = any([0, 1]) and all([1]) and not any([]) and not all([0])", True),
    ("RESULT = any([X])", UNKNOWN),
    ("RESULT = any(X)", UNKNOWN),
    ("RESULT = ' '.join(['a', 'b'])", "a b"),
    ("RESULT = ' '.join(X)", UNKNOWN),
    ("RESULT = ' '.join([1])", UNKNOWN),
    ("RESULT = ' '.join(['a' * 150000, 'b' * 150000])", UNKNOWN),
    ("RESULT = 'a b'.split() + 'a,b'.split(',')", ["a", "b", "a", "b"]),
    ("RESULT = ' a '.strip() + ' b'.lstrip() + 'c '.rstrip()", "abc"),
    ("RESULT = '  '.strip()", ""),
    ("RESULT = 'a-b'.replace('-', '_').upper().lower()", "a_b"),
    ("RESULT = 'abc'.startswith('a') and 'abc'.endswith('c')", True),
    ("RESULT = 'ab'.count(X)", UNKNOWN),
    ("RESULT = '{} {x} {0}'.format(1, x=2)", "1 2 1"),
    ("RESULT = '{a.b}'.format(a=X)", UNKNOWN),
    ("RESULT = '{:>3}'.format(1)", "  1"),
    ("RESULT = '{}'.format()", UNKNOWN),
    ("RESULT = '{5}'.format(1)", UNKNOWN),
    ("RESULT = '{z}'.format(1)", UNKNOWN),
    ("RESULT = '{'.format(1)", UNKNOWN),
    ("RESULT = X.format(1)", UNKNOWN),
    ("RESULT = 'ab'[0] + 'ab'[-1] + 'abc'[1:] + 'abc'[::2]", "abbcac"),
    ("RESULT = [1, 2, 3][1:] + [4][0:1]", [2, 3, 4]),
    ("RESULT = (1, 2)[::-1]", (2, 1)),
    ("RESULT = 'ab'[X]", UNKNOWN),
    ("RESULT = 'ab'[5]", UNKNOWN),
    ("RESULT = [1][5]", UNKNOWN),
    ("RESULT = [1][X:]", UNKNOWN),
    ("RESULT = [1][::0]", UNKNOWN),
    ("RESULT = X[1:]", UNKNOWN),
    ("RESULT = {'a': 1}['b']", UNKNOWN),
    ("RESULT = X[0]", UNKNOWN),
    ("a = [1, 2]\na[0] = 5\na[X] = 1\nRESULT = a", UNKNOWN),
    ("a = [1, 2]\na[0] = 5\nRESULT = a", [5, 2]),
    ("d = {}\nd['a'] = 1\nd.update({'b': 2}, c=3)\nRESULT = sorted(d.keys())", ["a", "b", "c"]),
    ("d = {'a': 1}\nRESULT = [d.get('a'), d.get('b'), d.get('b', 2), d.pop('a'), d.setdefault('c', 3)]", [1, None, 2, 1, 3]),
    ("d = {'a': 1}\nRESULT = d.copy()['a'] + len(list(d.items())) + sum(d.values())", 3),
    ("d = {}\nd[X] = 1\nRESULT = d.get('a')", UNKNOWN),
    ("d = {}\nd[X] = 1\nRESULT = d.items()", UNKNOWN),
    ("d = {}\nd.update(X)\nRESULT = 'a' in d", UNKNOWN),
    ("d = {}\nRESULT = d.setdefault(X)", UNKNOWN),
    ("d = {}\nRESULT = d.pop('a', 5)", 5),
    ("d = {}\nRESULT = d.pop('a')", UNKNOWN),
    ("d = {'a': 1, 'b': 2}\nd.pop(X)\nRESULT = d.get('b')", UNKNOWN),  # it may have removed it
    ("d = {'a': 1}\nd.clear()\nd['b'] = 2\nRESULT = sorted(d.keys())", ["b"]),
    ("d = {'a': 1}\nd.popitem()\nRESULT = d.get('a')", UNKNOWN),
    ("d = {'a': 1}\nd.clear(X)\nRESULT = d.get('a')", UNKNOWN),
    ("a = [1, 2]\na.remove(X)\nRESULT = a", UNKNOWN),
    ("a = [1, 2]\na.remove(1)\nRESULT = a", [2]),
    ("a = [X, 2]\na.remove(2)\nRESULT = a", UNKNOWN),  # X may be the 2 removed
    ("a = [1, 2]\na.remove(2, key=X)\nRESULT = a", UNKNOWN),
    ("a = [1]\na.extend(X)\nRESULT = a.index(5)", UNKNOWN),
    ("RESULT = ' '.join(['a', X])", UNKNOWN),
    ("RESULT = '{} {}'.format('a', X)", UNKNOWN),
    ("RESULT = ' a '.strip() + 'b '.rstrip()", "ab"),
    ("a = [1, 2]\ndel a[0]\nRESULT = a", [2]),
    ("a = [3, 1]\na.sort()\nRESULT = len(a)", UNKNOWN),
    ("a = [1, 2]\na[0:1] = [5, 6]\nRESULT = a", [5, 6, 2]),
    ("a = [1]\na.append(2)\na.extend([3])\na.insert(0, 0)\nRESULT = a + [a.pop(), a.index(1)] + a.copy()", [0, 1, 2, 3, 1, 0, 1, 2]),
    ("a = [1]\na.extend(X)\nRESULT = len(a)", UNKNOWN),  # X may hold any number of items
    ("a = [1]\na.extend([2, 3])\nRESULT = len(a)", 3),
    ("a = [1]\nRESULT = a.index(5)", UNKNOWN),
    ("RESULT = (1, 2).index(2)", 1),
    ("RESULT = (1, 2).index(5)", UNKNOWN),
    ("s = {1}\ns.add(2)\nRESULT = len(s)", 2),
    ("s = set()\nRESULT = s.add(X)", UNKNOWN),
    ("a, (b, *c), d = 1, (2, 3, 4), 5\nRESULT = [a, b, c, d]", [1, 2, [3, 4], 5]),
    ("a, b = X\nRESULT = a", UNKNOWN),
    ("a, b = 1, 2, 3\nRESULT = a", UNKNOWN),
    ("a, *b = 'xy'\nRESULT = [a, b]", ["x", ["y"]]),
    ("x = 1\nx += 2\nx *= 3\nRESULT = x", 9),
    ("a = [1]\nb = a\na += [2]\nRESULT = b", [1, 2]),
    ("a = [1]\na += X\nRESULT = len(a)", UNKNOWN),
    ("x = 1\ndel x\nRESULT = x", UNKNOWN),
    ("RESULT = undefined_name", UNKNOWN),
]


@pytest.mark.parametrize(("source", "expected"), CASES, ids=[c[0][:60] for c in CASES])
def test_expression_value(source: str, expected: object) -> None:
    assert value("class Case: pass\n" + source) == expected


FLOW: list[tuple[str, object]] = [
    # if / else, undecided conditions merge what both branches leave
    ("if 1:\n    RESULT = 1\nelse:\n    RESULT = 2", 1),
    ("if 0:\n    RESULT = 1\nelse:\n    RESULT = 2", 2),
    ("RESULT = 1\nif X:\n    RESULT = 1", 1),
    ("RESULT = 1\nif X:\n    RESULT = 2", UNKNOWN),
    ("if X:\n    RESULT = 2", UNKNOWN),
    ("a = [1]\nif X:\n    a.append(2)\nRESULT = a", UNKNOWN),
    ("a = [1]\nif X:\n    a[0] = 1\nRESULT = a", [1]),
    ("d = {'a': 1}\nif X:\n    d['a'] = 1\nRESULT = d['a']", 1),
    ("t = (1,)\nif X:\n    t = (1,)\nRESULT = t", (1,)),
    # functions: returns under undecided conditions are merged
    ("def f(a):\n    if a:\n        return 1\n    return 2\nRESULT = f(X)", UNKNOWN),
    ("def f(a):\n    if a:\n        return 1\n    return 1\nRESULT = f(X)", 1),
    ("def f(a):\n    if a:\n        return 1\n    else:\n        return 1\nRESULT = f(X)", 1),
    ("def f(a):\n    if a:\n        raise ValueError\n    return 3\nRESULT = f(X)", 3),
    ("def f():\n    pass\nRESULT = f()", None),
    ("def f(*args, k=1, **kw):\n    return [len(args), k, kw['z']]\nRESULT = f(1, 2, k=3, z=4)", [2, 3, 4]),
    ("def f(a, b=2, *, c=3):\n    return a + b + c\nRESULT = f(1)", 6),
    ("def f(a):\n    return a\nRESULT = f()", UNKNOWN),
    ("def f(a, b):\n    return a + b\nRESULT = f(*[1, 2])", 3),
    ("def f(a, b):\n    return a + b\nRESULT = f(**{'a': 1, 'b': 2})", 3),
    ("def f(a):\n    return a\nRESULT = f(*X)", UNKNOWN),
    ("def f(**kw):\n    return kw\nRESULT = f(**X)", UNKNOWN),
    ("def f(n):\n    return f(n + 1)\nRESULT = f(0)", UNKNOWN),
    ("async def f():\n    return 1\nRESULT = f()", UNKNOWN),
    ("def gen():\n    yield 1\n    yield from [2, 3]\nRESULT = list(gen())", [1, 2, 3]),
    ("def gen():\n    yield from X\nRESULT = list(gen())", UNKNOWN),
    ("def gen():\n    if X:\n        yield 1\nRESULT = list(gen())", UNKNOWN),
    ("def outer():\n    v = 2\n    def inner():\n        return v\n    return inner()\nRESULT = outer()", 2),
    ("G = 1\ndef f():\n    global G\n    G = 5\nf()\nRESULT = G", 5),
    ("def f():\n    nonlocal_value = 1\n    return nonlocal_value\nRESULT = f()", 1),
    # loops
    ("RESULT = 0\nfor i in range(5):\n    if i == 1:\n        continue\n    if i == 3:\n        break\n    RESULT += i\nelse:\n    RESULT = -1", 2),
    ("RESULT = 0\nfor i in [1]:\n    RESULT += i\nelse:\n    RESULT += 10", 11),
    ("RESULT = 0\nfor k in {'a': 1}:\n    RESULT = k", "a"),
    ("RESULT = 0\nfor k in {'a'}:\n    RESULT = k", "a"),
    ("RESULT = 0\nfor i in X:\n    RESULT = 1", UNKNOWN),
    ("RESULT = 0\nfor i in [1, 2]:\n    if X:\n        break\n    RESULT = i", UNKNOWN),
    ("RESULT = 0\nfor i in [1, 2]:\n    if X:\n        continue\nRESULT = 5", 5),
    ("RESULT = 0\nwhile RESULT < 3:\n    RESULT += 1", 3),
    ("RESULT = 0\nwhile True:\n    RESULT += 1\n    if RESULT == 2:\n        continue\n    if RESULT > 3:\n        break\nelse:\n    RESULT = -1", 4),
    ("RESULT = 0\nwhile RESULT < 1:\n    RESULT += 1\nelse:\n    RESULT = 7", 7),
    ("RESULT = 0\nwhile X:\n    RESULT = 1", UNKNOWN),
    ("RESULT = 0\nwhile RESULT < 5:\n    RESULT += 1\n    if X:\n        break", UNKNOWN),
    # match
    ("match 2:\n    case 1:\n        RESULT = 'one'\n    case 2 | 3:\n        RESULT = 'two'", "two"),
    ("match None:\n    case None:\n        RESULT = 'none'", "none"),
    ("match 5:\n    case 1:\n        RESULT = 1\n    case other:\n        RESULT = other", 5),
    ("match 5:\n    case n if n > 3:\n        RESULT = 'big'\n    case _:\n        RESULT = 'small'", "big"),
    ("match 1:\n    case n if n > 3:\n        RESULT = 'big'\n    case _:\n        RESULT = 'small'", "small"),
    ("RESULT = 0\nmatch 9:\n    case 1:\n        RESULT = 1", 0),
    ("match X:\n    case 1:\n        RESULT = 1\n    case _:\n        RESULT = 1", 1),
    ("RESULT = 0\nmatch X:\n    case 1:\n        RESULT = 1", UNKNOWN),
    ("RESULT = 0\nmatch X:\n    case 1 | 2:\n        RESULT = 1", UNKNOWN),
    ("RESULT = 0\nmatch [1]:\n    case [a]:\n        RESULT = a", UNKNOWN),
    ("match 3:\n    case (1 as one) | one:\n        RESULT = one", 3),
    ("match 1:\n    case 2 as two:\n        RESULT = 2\n    case _:\n        RESULT = 'other'", "other"),
    ("match 1:\n    case n if X:\n        RESULT = 2\n    case _:\n        RESULT = 2", 2),
    # try / with / assert / raise
    ("try:\n    RESULT = 1\nexcept ValueError:\n    RESULT = 2\nelse:\n    RESULT += 1\nfinally:\n    RESULT += 10", 12),
    ("try:\n    raise ValueError\nexcept ValueError as e:\n    RESULT = 2", 2),
    ("RESULT = 1\ntry:\n    raise ValueError\nfinally:\n    RESULT = 3", 3),
    ("with open('x') as f:\n    RESULT = f", UNKNOWN),
    ("with X:\n    RESULT = 1", 1),
    ("RESULT = 1\nassert True\nassert X\nRESULT = 2", 2),
    ("RESULT = 1\nassert False\nRESULT = 2", 1),
    ("RESULT = 1\nif X:\n    raise ValueError\nelse:\n    raise KeyError\nRESULT = 2", 1),
    ("RESULT = 1\nfor i in [1]:\n    if X:\n        break\n    else:\n        continue", 1),
]


@pytest.mark.parametrize(("source", "expected"), FLOW, ids=[c[0][:60] for c in FLOW])
def test_control_flow(source: str, expected: object) -> None:
    assert value(source) == expected


CLASSES: list[tuple[str, object]] = [
    ("@dataclass\nclass C:\n    a: int\n    b: int = 2\n    c: list = field(default_factory=list)\n"
     "    d: int = field(default=4)\n    e: ClassVar[int] = 9\nx = C(1)\nRESULT = [x.a, x.b, x.c, x.d, C.e]", [1, 2, [], 4, 9]),
    ("@dataclass\nclass C:\n    a: int\nRESULT = C().a", UNKNOWN),
    ("@dataclass(frozen=True)\nclass C:\n    a: int = 1\n    def __post_init__(self):\n"
     "        self.b = self.a * 2\nRESULT = C(a=3).b", 6),
    ("@dataclass\nclass B:\n    a: int = 1\n@dataclass\nclass C(B):\n    b: int = 2\nRESULT = [C(5, 6).a, C(5, 6).b]", [5, 6]),
    ("@dataclass\nclass C(X):\n    b: int = 2\nRESULT = C(5).b", UNKNOWN),
    ("@dataclass\nclass C(X):\n    b: int\nRESULT = C().b", UNKNOWN),
    ("@dataclass\nclass C:\n    a: int = 1\nRESULT = replace(C(), a=4).a", 4),
    ("RESULT = replace(X, a=1)", UNKNOWN),
    ("@dataclass\nclass C:\n    a: list = field(default_factory=lambda: [1])\n"
     "    b: dict = field(default_factory=dict)\n    c: tuple = field(default_factory=tuple)\n"
     "    d: set = field(default_factory=set)\nRESULT = C().a", [1]),
    ("@dataclass\nclass D:\n    z: int = 3\n@dataclass\nclass C:\n    d: D = field(default_factory=D)\n"
     "    e: int = field(default_factory=X)\nRESULT = C().d.z", 3),
    ("@dataclass\nclass C:\n    e: int = field(default_factory=X)\nRESULT = C().e", UNKNOWN),
    ("class C:\n    K = 3\n    def __init__(self, a):\n        self.a = a\n    def m(self):\n        return self.a + self.K\n"
     "    @property\n    def p(self):\n        return self.a * 10\n    @staticmethod\n    def s(v):\n        return v\n"
     "    @classmethod\n    def k(cls):\n        return cls.K\nc = C(1)\nRESULT = [c.m(), c.p, c.s(2), C.k(), c.k(), C.s(4), C.K]", [4, 10, 2, 3, 3, 4, 3]),
    ("class C:\n    pass\nRESULT = C().missing", UNKNOWN),
    ("class C:\n    pass\nRESULT = C.missing", UNKNOWN),
    ("class C:\n    def __call__(self, v):\n        return v + 1\nRESULT = C()(1)", 2),
    ("class C:\n    pass\nc = C()\nc.x = 3\nC.y = 4\nRESULT = c.x + c.y", 7),
    ("class C:\n    def __len__(self):\n        return 0\nRESULT = 1 if C() else 2", UNKNOWN),
    ("class C:\n    pass\nRESULT = 1 if C() else 2", 1),
    ("@dataclass\nclass C:\n    a: int = 1\nRESULT = C() == C() and C(1) != C(2)", True),
    ("@dataclass\nclass C:\n    a: int = 1\nRESULT = C(X) == C(1)", UNKNOWN),
    ("class C:\n    def __eq__(self, o):\n        return True\nRESULT = C() == 1", UNKNOWN),
    ("class C:\n    pass\nRESULT = C() == 1", False),
    ("@dataclass\nclass C:\n    a: int = 1\nx = C()\nif X:\n    x = C(1)\nRESULT = x.a", 1),
    ("@dataclass\nclass C:\n    a: int = 1\nx = C()\nif X:\n    x.b = 2\nRESULT = x.b", UNKNOWN),
    ("@dataclass\nclass C:\n    a: int = 1\nRESULT = getattr(C(), 'a') + getattr(C(), 'b', 5)", 6),
    ("RESULT = hasattr(X, 'a')", UNKNOWN),
    ("@dataclass\nclass C:\n    a: int = 1\nRESULT = hasattr(C(), 'a')", True),
    ("RESULT = getattr(1, X)", UNKNOWN),
    ("import functools\n@functools.cache\ndef f():\n    return 1\nRESULT = f()", 1),
    ("from functools import lru_cache\n@lru_cache(maxsize=2)\ndef f():\n    return 1\nRESULT = f()", 1),
    ("import typing\nRESULT = typing.cast(int, 3)", 3),
]


@pytest.mark.parametrize(("source", "expected"), CLASSES, ids=[c[0][:60] for c in CLASSES])
def test_classes(source: str, expected: object) -> None:
    prelude = "from dataclasses import dataclass, field, replace\nfrom typing import ClassVar\n"
    assert value(prelude + source) == expected


# ----- environment and platform ------------------------------------------------------------

ENV: list[tuple[str, object]] = [
    ("import os\nRESULT = os.getenv('MILES_PLATFORM') == 'rocm'", True),
    ("import os\nRESULT = os.getenv('UNSET')", None),
    ("import os\nRESULT = os.getenv('UNSET', 'd') + os.getenv('UNSET', default='e')", "de"),
    ("import os\nRESULT = os.getenv('OTHER')", UNKNOWN),
    ("import os\nRESULT = os.getenv(X)", UNKNOWN),
    ("import os\nRESULT = os.environ['MILES_PLATFORM']", "rocm"),
    ("import os\nRESULT = os.environ[X]", UNKNOWN),
    ("import os\nRESULT = os.environ.get('MILES_PLATFORM', 'x')", "rocm"),
    ("import os\nRESULT = os.environ.get('UNSET', 'x')", "x"),
    ("import os\nRESULT = os.environ.get(X)", UNKNOWN),
    ("import os\nRESULT = 'MILES_PLATFORM' in os.environ and 'UNSET' not in os.environ", True),
    ("import os\nRESULT = 'OTHER' in os.environ", UNKNOWN),
    ("import os\nRESULT = X in os.environ", UNKNOWN),
    ("import os\nos.environ['OTHER'] = 'v'\nRESULT = os.environ['OTHER']", "v"),
    ("import os\nos.environ['OTHER'] = 'v'\nos.environ['OTHER'] = X\nRESULT = os.getenv('OTHER')", UNKNOWN),
    ("import os\nos.environ[X] = 'v'\nRESULT = 1", 1),
    ("import os\nos.environ.setdefault('UNSET', 'v')\nRESULT = os.environ['UNSET']", "v"),
    ("import os\nRESULT = os.environ.setdefault('MILES_PLATFORM', 'v')", "rocm"),
    ("import os\nRESULT = os.environ.setdefault('UNSET', X)", UNKNOWN),
    ("import os\nos.environ.pop('MILES_PLATFORM', None)\nRESULT = os.getenv('MILES_PLATFORM')", None),
    ("from os import environ, getenv\nRESULT = getenv('MILES_PLATFORM') + environ['MILES_PLATFORM']", "rocmrocm"),
    ("import os\nRESULT = os.environ.copy()", UNKNOWN),
    ("import os\nRESULT = os.path.join('a', 'b')", "a/b"),
    ("import os\nRESULT = os.path.join('a', X)", UNKNOWN),
    ("import os.path\nRESULT = os.path.exists('a')", UNKNOWN),
    ("import sys\nRESULT = sys.argv", UNKNOWN),
    ("import shlex\nRESULT = shlex.join(['a', 'b'])", "a b"),
    ("import shlex\nRESULT = shlex.join(X)", UNKNOWN),
    ("import torch\nRESULT = torch.cuda.device_count()", UNKNOWN),
    ("from torch import cuda\nRESULT = cuda", UNKNOWN),
]


@pytest.mark.parametrize(("source", "expected"), ENV, ids=[c[0][:60] for c in ENV])
def test_environment(source: str, expected: object) -> None:
    assert value(source) == expected


# ----- repository imports ------------------------------------------------------------------

def test_imports_resolve_to_repository_modules() -> None:
    source = """\
import pkg.sub
import pkg.sub as alias
import nothere.thing as gone
from pkg import sub, CONST, missing
from pkg.sub import VALUE as V
from pkg.sub import *
from .sibling import S
from . import sibling
from .. import far
from ..nowhere import y
import namespace
RESULT = [pkg.sub.VALUE, alias.VALUE, sub.VALUE, CONST, V, STAR, S, sibling.S, namespace.inner.N]
M = missing
"""
    interp, _ = run(
        source,
        pkg_DOT___init__="CONST = 1\n",
        pkg_DOT_sub="VALUE = 2\nSTAR = 3\n_PRIVATE = 4\n",
        sibling="S = 5\n",
        namespace_DOT_inner="N = 6\n",
        namespace_DOT___init__="",
    )
    variables = interp.module_globals("__main__")
    assert python(variables["RESULT"]) == [2, 2, 2, 1, 2, 3, 5, 5, 6]
    assert isinstance(variables["gone"], Unknown)
    assert isinstance(variables["M"], Unknown)
    assert isinstance(variables["far"], Unknown)
    assert isinstance(variables["y"], Unknown)
    assert "_PRIVATE" not in variables


def test_relative_import_in_a_package() -> None:
    interp = _interp({"a/b/main.py": "from . import c\nfrom .c import X\nfrom ... import z\nRESULT = c.X + X\n",
                      "a/b/c.py": "X = 2\n"})
    interp.run("a/b/main.py")
    assert python(interp.module_globals("__main__")["RESULT"]) == 4
    assert isinstance(interp.module_globals("__main__")["z"], Unknown)


def test_circular_imports_and_missing_attributes_are_unknown() -> None:
    assert value("import cyc\nRESULT = cyc.LATE", cyc="import main\nfrom main import RESULT\nLATE = 1\n") == 1
    assert value("import mod\nRESULT = mod.nothing", mod="X = 1\n") == UNKNOWN
    assert value("from mod import X\nRESULT = X", mod="from other import X\n",
                 other="from mod import X\n") == UNKNOWN


def test_module_level_code_runs_once_per_interpreter() -> None:
    interp = _interp({"main.py": "import mod\nRESULT = mod.COUNT\n", "mod.py": "COUNT = 1\n"})
    interp.run("main.py")
    state = interp._modules["mod.py"]
    assert state is not None
    state.globals["COUNT"] = python_const(7)
    interp.run("main.py")
    assert python(interp.module_globals("__main__")["RESULT"]) == 7
    assert python(interp.module_globals("mod.py")["COUNT"]) == 7
    assert interp.module_globals("nothing.py") == {}


def python_const(n: int) -> Value:
    from bot.analysis.values import Const

    return Const(n)


def test_unreadable_module_is_unknown() -> None:
    def load(path: str) -> Module | None:
        if path == "broken.py":
            raise OSError("boom")
        if path != "main.py":
            return None
        module = parse_python(path, "import broken\nRESULT = broken.X\n")
        return module if isinstance(module, Module) else None

    interp = Interpreter(load, lambda p: p in ("main.py", "broken.py"))
    result = interp.run("main.py")
    assert result.error is None
    assert isinstance(interp.module_globals("__main__")["RESULT"], Unknown)


# ----- strings and where their pieces come from ---------------------------------------------

def test_f_string_pieces_keep_their_origins() -> None:
    source = """\
TP = 2


def build(ep):
    return (
        f"--tensor-model-parallel-size {TP} "
        "--pipeline-model-parallel-size 1 "
        f"--expert-model-parallel-size {ep} "
        f"--x {ep!r:>3} {ep!s} {ep!a} {[1]} {Case()} {1.5:.1f} {'a':{W}}"
    )


RESULT = build(ep=4)
"""
    interp, _ = run("class Case: pass\nW = 3\n" + source)
    result = interp.module_globals("__main__")["RESULT"]
    assert isinstance(result, Text)
    pieces = [(p.text, p.origin.line if p.origin else None, p.origin.name if p.origin else None)
              for p in result.parts if not isinstance(p, Choice)]
    assert ("2", 3, "TP") in pieces
    assert ("--pipeline-model-parallel-size 1 ", 9, None) in pieces
    assert ("4", 15, "ep") in pieces
    assert ("  4", 15, "ep") in pieces
    assert any(isinstance(p, Hole) for p in result.parts)


def test_multiline_implicit_concatenation_keeps_each_line() -> None:
    source = 'RESULT = (\n    "a "  # one\n    f"b{1} "\n    \'c\'\n)\nPLAIN = (\n    "x "\n    "y"\n)\n'
    interp, _ = run(source)
    result = interp.module_globals("__main__")["RESULT"]
    assert isinstance(result, Text)
    assert [(p.text, p.origin.line) for p in result.parts if isinstance(p, Chunk) and p.origin] == [
        ("a ", 2), ("b", 3), ("1", 3), (" ", 3), ("c", 4)]
    plain = interp.module_globals("__main__")["PLAIN"]
    assert isinstance(plain, Text)
    assert [(p.text, p.origin.line) for p in plain.parts if isinstance(p, Chunk) and p.origin] == [
        ("x ", 7), ("y", 8)]


def test_split_literal() -> None:
    assert split_literal('"a" \'b\'') == [(0, 0, '"a"'), (0, 4, "'b'")]
    assert split_literal('"a"\n  # c\n  f"{x["k"]}"') == [(0, 0, '"a"'), (2, 2, 'f"{x["k"]}"')]
    assert split_literal('"""a\nb""" "c"') == [(0, 0, '"""a\nb"""'), (1, 5, '"c"')]
    assert split_literal('"a" \\\n "b"') == [(0, 0, '"a"'), (1, 1, '"b"')]
    assert split_literal('"a\\"b" f"{{x}}"') == [(0, 0, '"a\\"b"'), (0, 7, 'f"{{x}}"')]
    assert split_literal("x") is None
    assert split_literal('"abc') is None
    assert split_literal('f"{x["k}"') is None


def test_multiline_string_oddities_fall_back_to_the_whole_node() -> None:
    for source in ['RESULT = """a\nb"""\n', 'RESULT = (f"{1}"\n f"{2}")\n',
                   'RESULT = ("a"  # )\n "b")\n']:
        interp, _ = run(source)
        assert interp.module_globals("__main__")["RESULT"] is not None
    assert value('RESULT = (f"{1}"\n f"{2}")\n') == "12"


def test_format_spec_that_is_unknown_makes_a_hole() -> None:
    interp, _ = run("RESULT = f'{1:{X}}'\nBAD = f'{1:q}'\n")
    result = interp.module_globals("__main__")["RESULT"]
    assert isinstance(result, Text) and isinstance(result.parts[0], Hole)
    bad = interp.module_globals("__main__")["BAD"]
    assert isinstance(bad, Text) and isinstance(bad.parts[0], Hole)


def test_bytes_and_complex_literals_are_unknown() -> None:
    assert value("RESULT = b'x'") == UNKNOWN
    assert value("RESULT = 1j") == UNKNOWN


# ----- calls the evaluator does not follow ----------------------------------------------------

def test_external_calls_with_flags_are_reported() -> None:
    source = """\
import os
U = make()
U.run_job("--actor-num-nodes 1 ", ["--colocate"], k=f"{X}")
U.quiet_one("no flags here")
launch(train_args="whatever", megatron_model_type="m")
Case = int
wandb()
W = wandb() + "x"
if os.environ.get("GATE"):
    U.run_job("--tp 2")
U.run_job(*X, "--a")
U.run_job(**X)
"""
    _, calls = run(source)
    assert [(c.tail, c.line, c.named_sink, c.guards) for c in calls] == [
        ("run_job", 3, False, ()),
        ("launch", 5, True, ()),
        ("run_job", 10, False, ('os.environ.get("GATE")',)),
        ("run_job", 11, False, ()),
    ]
    assert calls[0].name == "U.run_job"
    assert calls[1].keywords["megatron_model_type"] == Text.of("m")


def test_quiet_calls_give_quiet_unknowns() -> None:
    interp, _ = run("RESULT = wandb() + ' x'\nT = f'{wandb()}'\n")
    result = interp.module_globals("__main__")["RESULT"]
    assert isinstance(result, Unknown) and result.quiet
    text = interp.module_globals("__main__")["T"]
    assert isinstance(text, Text) and isinstance(text.parts[0], Hole) and text.parts[0].quiet


def test_pytest_functions_run_when_main_launches_nothing() -> None:
    source = """\
import pytest


@pytest.mark.parametrize("tp,pp", [(1, 2), (2, 1), 3])
@pytest.mark.parametrize(["ep"], [4])
def test_a(tp, pp, ep):
    launch(f"--tp {tp} --pp {pp} --ep {ep}")


@pytest.mark.parametrize("x", X)
def test_b(x):
    launch(f"--x {x}")


@pytest.mark.parametrize(X, [1])
@pytest.mark.parametrize("z")
def test_c(z):
    launch("--c")
    raise ValueError


def helper():
    launch("--not-a-test")
"""
    _, calls = run(source)
    texts = [python(c.args[0]) for c in calls]
    assert texts == ["--tp 1 --pp 2 --ep 4", "--tp 2 --pp 1 --ep 4", NOT_PLAIN, NOT_PLAIN, "--c"]


def test_tests_are_not_called_when_main_launches() -> None:
    interp = _interp({"main.py": "launch('--a')\ndef test_x():\n    launch('--b')\n"})
    calls: list[ExternalCall] = []
    interp.run("main.py", calls.append)
    assert len(calls) == 1
    interp.run("main.py", calls.append, tests=False)
    assert len(calls) == 2


def test_call_function_returns_text_of_a_model_script() -> None:
    files = {
        "m1.py": "def model_args():\n    return '--num-layers 4 '\n",
        "m2.py": "def model_args():\n    return ['--a 1', '--b 2']\n",
        "m3.py": "def model_args():\n    return [1]\n",
        "m4.py": "model_args = 3\n",
        "m5.py": "def model_args():\n    raise ValueError\n",
        "m6.py": "def model_args():\n    while True:\n        pass\n",
    }
    interp = _interp(files, limits=Limits(max_steps=2000))
    assert python(interp.call_function("m1.py", "model_args") or Text(())) == "--num-layers 4 "
    assert python(interp.call_function("m2.py", "model_args") or Text(())) == "--a 1 --b 2 "
    for path in ("m3.py", "m4.py", "m5.py", "m6.py", "absent.py"):
        assert interp.call_function(path, "model_args") is None


def test_call_function_survives_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    interp = _interp({"m.py": "def model_args():\n    return 1\n"})

    def boom(*args: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(interp, "_invoke", boom)
    assert interp.call_function("m.py", "model_args") is None
    monkeypatch.setattr(interp, "_exec_module", boom)
    result = interp.run("m.py")
    assert result.error == "RuntimeError: bug"


# ----- limits ---------------------------------------------------------------------------------

def test_step_limit_stops_the_run() -> None:
    result, _ = evaluate_source("while True:\n    pass\n", limits=Limits(max_steps=1000))
    assert result.exhausted and result.steps > 1000


def test_depth_limits_give_unknowns() -> None:
    interp = _interp({"main.py": "def f(n):\n    return f(n)\nRESULT = f(1)\nDEEP = " +
                      "(" * 100 + "1" + ")" * 100 + "\nL = (lambda: f(1))()\n"},
                     limits=Limits(max_depth=3, max_expr_depth=20))
    interp.run("main.py")
    variables = interp.module_globals("__main__")
    assert isinstance(variables["RESULT"], Unknown)
    assert isinstance(variables["L"], Unknown)


def test_recursion_error_is_exhaustion(monkeypatch: pytest.MonkeyPatch) -> None:
    interp = _interp({"main.py": "x = 1\n"})

    def deep(*args: object) -> None:
        raise RecursionError

    monkeypatch.setattr(interp, "_exec_module", deep)
    assert interp.run("main.py").exhausted


def test_evaluate_source_of_unparsable_text() -> None:
    result, calls = evaluate_source("def (")
    assert result.error is None and calls == []


def test_instances_are_instances() -> None:
    interp, _ = run("from dataclasses import dataclass\n@dataclass\nclass C:\n    a: int = 1\nRESULT = C()\n")
    assert isinstance(interp.module_globals("__main__")["RESULT"], Instance)



DEFERRED = '''
import os

TABLE = {"loss": (0.0, 12.0), "sizes": [2, 4, {"nested": -1}]}
ALIAS = TABLE["sizes"]
ALIAS.append(8)
SIZES = (1, 2)
UNREAD = [[0.5], {"k": (1, -2, 3)}, {7, 8}, ("a" "b",)]
LATER = [1, 2]
if os.environ.get("SOMETIMES"):
    SIZES = (4, 8)
    LATER.append(3)
RESULT = (len(TABLE["sizes"]), TABLE["sizes"][-1], TABLE["loss"][1], f"--tp {TABLE['sizes'][0]}")


def use():
    global LATER
    LATER = LATER + [9]
    return LATER


AFTER = use()
'''


@pytest.mark.parametrize("source", [DEFERRED, *(source for source, _ in CASES)])
def test_top_level_literal_containers_read_later_give_what_reading_them_at_once_would(
        source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.analysis import evaluate

    def state() -> tuple[str, ...]:
        interp, calls = run(source)
        seen = repr(sorted(interp.module_globals("__main__").items())), repr(calls)
        return tuple(re.sub(r" at 0x[0-9a-f]+", "", text) for text in seen)  # syntax tree ids

    deferred = state()
    monkeypatch.setattr(evaluate, "_literal_display", lambda node: False)
    assert deferred == state()


def test_a_literal_container_no_launch_reads_costs_no_steps() -> None:
    table = "TABLE = {" + ", ".join(f'"k{n}": ({n}, {n + 1})' for n in range(50)) + "}\n"
    read, _ = run(table + "RESULT = len(TABLE)\n")
    unread, _ = run(table + "RESULT = 50\n")
    assert python(read.module_globals("__main__")["RESULT"]) == 50
    assert unread.result.steps < read.result.steps - 100


def test_a_literal_container_keeps_the_line_it_was_set_on() -> None:
    interp, _ = run("import os\nSIZES = [2, 4]\nRESULT = f'--tensor-model-parallel-size {SIZES[1]}'\n")
    result = interp.module_globals("__main__")["RESULT"]
    assert isinstance(result, Text)
    assert [(p.text, p.origin.line if p.origin else None) for p in result.parts
            if isinstance(p, Chunk)] == [("--tensor-model-parallel-size ", 3), ("4", 2)]
    assert len(result.parts) == 2


# ----- undecided branches keep what they set ------------------------------------------------

def _flags_of(call: ExternalCall) -> list[str]:
    """Each way the call's first argument can read: the options of its choices spelled out."""
    value = call.args[0] if call.args else next(iter(call.keywords.values()))
    assert isinstance(value, Text)

    def spell(parts: tuple[object, ...]) -> list[str]:
        out = [""]
        for part in parts:
            if isinstance(part, Chunk):
                out = [o + part.text for o in out]
            elif isinstance(part, Choice):
                out = [o + s for o in out for opt in part.options for s in spell(opt)]
            else:
                assert isinstance(part, Hole)
                out = [o + "<?>" for o in out]
        return out

    return sorted(" ".join(s.split()) for s in spell(value.parts))


UNDECIDED: list[tuple[str, list[str]]] = [
    ("args = ['--a 1']\nif X:\n    args.append('--b 2')\nlaunch(' '.join(args))", ["--a 1", "--a 1 --b 2"]),
    ("args = ['--a 1']\nif X:\n    args += ['--b', '2']\nelse:\n    args.extend(['--c'])\nargs.append('--d')\nlaunch(' '.join(args))",
     ["--a 1 --b 2 --d", "--a 1 --c --d"]),
    ("extra = '--b 2' if X else None\nlaunch(f'--a 1 {extra}')", ["--a 1 --b 2", "--a 1 None"]),
    ("extra = '--b' if X else ''\nlaunch('--a ' + extra)", ["--a", "--a --b"]),
    ("extra = ['--b'] if X else []\nlaunch('--a ' + ' '.join(extra).strip())", ["--a", "--a --b"]),
    ("import os\nif X:\n    os.environ['N'] = '2'\nlaunch(f\"--a {os.environ.get('N', '1')}\")", ["--a <?>"]),
]


@pytest.mark.parametrize(("source", "expected"), UNDECIDED, ids=[c[0][:50] for c in UNDECIDED])
def test_what_an_undecided_branch_sets_stays_a_choice(source: str, expected: list[str]) -> None:
    _, calls = run(source)
    (call,) = calls
    assert _flags_of(call) == expected


def test_alternatives_are_unknown_to_everything_that_does_not_look_inside() -> None:
    source = "A = [1] if X else [1, 2]\nRESULT = len(A) == 1\nN = 2 if X else 3\nB = A[0]\n"
    assert value(source) == UNKNOWN
    assert value(source, "N") == UNKNOWN
    assert value(source, "B") == UNKNOWN


def test_many_alternatives_become_a_plain_unknown() -> None:
    source = "T = ''\n" + "".join(f"if X{i}:\n    T = T + 'a{i}'\n" for i in range(12)) + "launch(T)\n"
    interp, _ = run(source)
    found = interp.module_globals("__main__")["T"]
    assert isinstance(found, Text)  # texts merge into choices, however many
    lists = "L = []\n" + "".join(f"if X{i}:\n    L.append('a')\n" for i in range(12))
    interp, _ = run(lists)
    found = interp.module_globals("__main__")["L"]
    assert type(found) is Unknown


def test_a_raise_under_an_undecided_condition_that_ends_the_run_is_reported() -> None:
    source = "for a in (1, 2):\n    if X:\n        continue\n    raise RuntimeError('no')\nlaunch('--a 1')\n"
    interp = _interp({"main.py": source})
    result = interp.run("main.py")
    assert result.stopped == Stop("raise RuntimeError('no')", "main.py", 4, ("not (X)",))


def test_a_function_that_returned_under_an_undecided_condition_and_raised_otherwise_returns() -> None:
    source = "def f():\n    if X:\n        return '--a 1'\n    raise RuntimeError('no')\nlaunch(f())\n"
    _, calls = run(source)
    assert [c.args[0] for c in calls] == [Text.of("--a 1")]


def test_a_raise_every_path_reaches_is_a_stop_under_no_condition() -> None:
    interp = _interp({"main.py": "raise SystemExit(0)\n"})
    assert interp.run("main.py").stopped == Stop("raise SystemExit(0)", "main.py", 1, ())
    interp = _interp({"main.py": "def test_a():\n    if X:\n        assert False\n    else:\n        raise ValueError\n"})
    assert interp.run("main.py").stopped == Stop("assert False", "main.py", 3, ())
    interp = _interp({"main.py": "def test_a():\n    if X:\n        raise ValueError\n"})
    assert interp.run("main.py").stopped is None
    interp = _interp({"main.py": "def test_a():\n    for a in (1,):\n        if X:\n            continue\n        if Y:\n            assert False\n        else:\n            raise ValueError\n"})
    result = interp.run("main.py")
    assert result.stopped is not None and result.stopped.guards == ("not (X)",)


def test_environment_writes_are_in_program_order_and_reach_the_launch() -> None:
    _, calls = run("import os\nos.environ['N'] = '4'\nlaunch('--a')\nos.environ['N'] = '8'\nlaunch('--b')\n"
                   "os.environ['N'] = X\nlaunch('--c')\n")
    assert [c.environ[0][1] for c in calls[:2]] == ["4", "8"]
    assert isinstance(calls[2].environ[0][1], Unknown)


def test_choices_of_one_condition_stay_one_choice() -> None:
    source = ("x = None\nmatch X:\n    case 1:\n        x = ['--a']\n    case 2:\n        pass\n"
              "    case 3:\n        pass\nlaunch(x)\n")
    _, calls = run(source)
    (call,) = calls
    found = call.args[0]
    assert isinstance(found, Alternatives) and len(found.options) == 2


def test_a_loaded_module_holding_a_choice_notes_its_lists_as_module_state() -> None:
    interp = _interp({"main.py": "import lib\nlib.FLAGS.append('--c')\n",
                      "lib.py": "FLAGS = ['--a'] + (['--b'] if X else [])\n"})
    interp.run("main.py")
    assert interp.dirty


def test_a_closed_environment_leaves_what_nothing_sets_unset() -> None:
    module = parse_python("main.py", "import os\nA = os.environ.get('NOPE', '7')\nB = os.getenv('NOPE') or 48\n"
                          "C = os.getenv('SET')\nD = os.getenv('ODD', 'x')\nE = 'NOPE' in os.environ\n")
    assert isinstance(module, Module)
    interp = Interpreter({"main.py": module}.get, lambda p: p == "main.py",
                         env={"SET": "1", "ODD": Unknown("$ODD")}, closed=True)
    interp.run("main.py")
    found = {k: python(v) for k, v in interp.module_globals("__main__").items() if k in "ABCDE"}
    assert found == {"A": "7", "B": 48, "C": "1", "D": NOT_PLAIN, "E": False}


STDLIB: list[tuple[str, object]] = [
    ("import argparse\nkw = {'tp': 2}\nc = dict(kw)\nc['tp'] = 4\nRESULT = argparse.Namespace(ep=1, **c).tp", 4),
    ("import argparse\nRESULT = argparse.Namespace(ep=1).pp", UNKNOWN),
    ("import argparse\nRESULT = argparse.Namespace(X)", UNKNOWN),
    ("from types import SimpleNamespace\nns = SimpleNamespace(a=1)\nns.a = 3\nRESULT = ns.a", 3),
    ("import re\nm = re.search(r'(\\d+)layer', 'GLM-5_4layer')\nRESULT = m.group(1)", "4"),
    ("import re\nRESULT = re.search(r'(\\d+)layer', 'GLM-5_4layer').group()", "4layer"),
    ("import re\nRESULT = re.search(r'(\\d)-(\\d)', 'a1-2').group(1, 2)", ("1", "2")),
    ("import re\nRESULT = re.search(r'(\\d)(x)?', '1').groups()", ("1", None)),
    ("import re\nRESULT = re.match(r'(?P<n>\\d+)-gpu', '8-gpu').groupdict()['n']", "8"),
    ("import re\nRESULT = re.match(r'x', 'abc') is None", True),
    ("import re\nif (m := re.fullmatch(r'(?P<n>\\d+)', '12')) is not None:\n    RESULT = int(m.group('n'))", 12),
    ("import re\nRESULT = re.search(r'(\\d)', '1').group(5)", UNKNOWN),
    ("import re\nRESULT = re.search(r'(\\d)', '1').group('x')", UNKNOWN),
    ("import re\nRESULT = re.search(r'(', '1')", UNKNOWN),
    ("import re\nRESULT = re.search(r'(a+)+$', 'aaaa')", UNKNOWN),
    ("import re\nRESULT = re.search(r'(?=a)', 'a')", UNKNOWN),
    ("import re\nRESULT = re.search(r'a', 'a', re.I)", UNKNOWN),
    ("import re\nRESULT = re.search(X, 'a')", UNKNOWN),
    ("import os\nRESULT = os.path.basename('/a/b.py') + os.path.dirname('/a/b.py')", "b.py/a"),
    ("import os\nRESULT = os.path.normpath('a//b/../c')", "a/c"),
]


@pytest.mark.parametrize(("source", "expected"), STDLIB, ids=[c[0][:60] for c in STDLIB])
def test_standard_library_models(source: str, expected: object) -> None:
    assert value(source) == expected


@pytest.mark.parametrize("source", [
    "from pathlib import Path\nRESULT = Path(X) / 'sub'",
    "from pathlib import Path\nRESULT = Path(X).resolve().parent",
    "import os\nRESULT = os.path.join(X, 'a')",
    "import os\nRESULT = os.path.abspath(X)",
    "import os\nRESULT = str(os.path.expanduser('~'))",
])
def test_a_path_that_is_not_known_is_never_taken_for_flags(source: str) -> None:
    interp, _ = run(source)
    found = interp.module_globals("__main__")["RESULT"]
    if isinstance(found, Text):
        assert all(isinstance(p, Hole) and p.quiet for p in found.parts)
    else:
        assert isinstance(found, Unknown) and found.quiet


CLI_SOURCE = '''\
from typing import Annotated, Literal

import click
import typer

app = typer.Typer()


@app.command()
def train(num_gpus: int = 4, mode: Literal["a", "b"] = "a", tp: int = typer.Option(2, "--tp"),
          pp: Annotated[Literal[1, 2], typer.Option()] = 1, req: str = typer.Argument(...),
          when: Annotated[int, "x"] = 3, kind: list[int] = None):
    launch(f"--gpus {num_gpus} --mode {mode} --tp {tp} --pp {pp} --req {req} --w {when}")


@app.callback()
def main():
    pass


@click.group()
def cli():
    pass


@cli.command()
@click.option("--ep", default=2, type=click.Choice([2, 4]))
@click.option("--fast", is_flag=True)
@click.option("-n", "--num-nodes", "nodes", default=1)
def go(ep, fast, nodes):
    launch(f"--ep {ep} --fast {fast} --nodes {nodes}")


@click.command()
@click.argument("name")
def solo(name):
    launch(f"--solo {name}")


if __name__ == "__main__":
    app()
    cli()
    solo()
    solo("given")
'''


def test_command_line_entry_points_run_each_command_with_each_choice() -> None:
    _, calls = run(CLI_SOURCE)
    spelled = [" ".join(_flags_of(c)) for c in calls]
    assert spelled == [
        "--gpus 4 --mode a --tp 2 --pp 1 --req <?> --w 3",
        "--gpus 4 --mode a --tp 2 --pp 2 --req <?> --w 3",
        "--gpus 4 --mode b --tp 2 --pp 1 --req <?> --w 3",
        "--gpus 4 --mode b --tp 2 --pp 2 --req <?> --w 3",
        "--ep 2 --fast False --nodes 1",
        "--ep 4 --fast False --nodes 1",
        "--solo <?>",
        "--solo given",
    ]


def test_too_many_choices_leave_the_option_unknown() -> None:
    choices = ", ".join(f'"{i}"' for i in range(40))
    source = (f"import typer\nfrom typing import Literal\napp = typer.Typer()\n\n@app.command()\n"
              f"def f(x: Literal[{choices}] = '0'):\n    launch(f'--x {{x}}')\n\napp()\n")
    _, calls = run(source)
    assert [_flags_of(c) for c in calls] == [["--x <?>"]]


def test_an_instance_of_a_class_outside_the_repository_is_not_known() -> None:
    source = "from enum import Enum\nclass P(Enum):\n    A = 'a'\nRESULT = P('a')\nclass D:\n    pass\nE = D()\n"
    assert value(source) == UNKNOWN
    interp, _ = run(source)
    assert isinstance(interp.module_globals("__main__")["E"], Instance)


def test_a_main_that_hands_over_to_pytest_is_no_stop_when_the_tests_run() -> None:
    interp = _interp({"main.py": "import pytest\ndef test_a():\n    pass\nraise SystemExit(pytest.main([]))\n"})
    assert interp.run("main.py").stopped is None


def test_an_application_run_without_a_command_runs_its_default_callback() -> None:
    source = """\
import typer
from typer import Context

app = typer.Typer()
MODES = {"a": "--tp 1", "b": "--tp 2"}


@app.command()
def run(mode: str = typer.Option(...)):
    launch(MODES[mode])


@app.callback(invoke_without_command=True)
def default(ctx: typer.Context, other: Context = None) -> None:
    if ctx.invoked_subcommand is not None:
        return
    for mode in MODES:
        run(mode=mode)


@app.callback()
def ignored():
    launch("--never")


app()
"""
    _, calls = run(source)
    assert [_flags_of(c) for c in calls] == [["--tp 1"], ["--tp 2"]]


def test_a_fork_over_many_variables_reports_at_most_one_step_over_the_budget() -> None:
    """A fork charges a step per live variable at once; the steps reported still stop at the
    first one over the budget, as for steps charged one at a time."""
    names = "\n".join(f"v{i} = {i}" for i in range(40))
    source = f"import os\n{names}\nwhile True:\n    if os.environ.get('X'):\n        v0 = 1\n"
    result, _ = evaluate_source(source, limits=Limits(max_steps=1_000))
    assert result.steps == 1_001
