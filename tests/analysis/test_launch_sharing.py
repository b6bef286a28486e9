"""What launch resolution keeps and shares between the markers of a revision: one evaluation
for a file's CUDA and ROCm markers when nothing the run read differs between the platforms,
and the caches of the evaluator. Whatever is shared, every marker resolves as it would alone."""
# ruff: noqa: E501

from __future__ import annotations

import ast
import gc
import random
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.analysis import launch
from bot.analysis.engine import audit
from bot.analysis.evaluate import ExternalCall, Interpreter, Limits, _line_segment
from bot.analysis.flags import Branches, Opaque, Token, Word, tokenize
from bot.analysis.report import Report
from bot.analysis.source import Module, parse_python
from bot.analysis.tree import FolderTree
from bot.analysis.values import (
    Builtin,
    Choice,
    Chunk,
    ClassV,
    Const,
    DictV,
    FuncV,
    Hole,
    Instance,
    ListV,
    Origin,
    Part,
    SetV,
    Text,
    TupleV,
    Unknown,
    python,
)
from tests.analysis.launch_fixtures import write
from tests.analysis.test_evaluate_fuzz import LIMITS, PROGRAMS, _source

WORKFLOW = "jobs:\n  t:\n    steps:\n      - run: run --suite stage-c-4-gpu-mi350 --suite stage-c-8-gpu-h200\n"

HARNESS = '''\
import os
from dataclasses import dataclass
{top}

MODEL_TYPE = "m1"
REGISTRY = []


@dataclass
class CaseConfig:
    tp: int = 1
    ep: int = 1


def ep_for_platform():
    return 2 if os.environ.get("MILES_PLATFORM") == "rocm" else 4


def execute(case):
    U.execute_train(
        train_args=(
            f"--tensor-model-parallel-size {{case.tp}} --expert-model-parallel-size {{case.ep}} "
            "--actor-num-nodes 1 --actor-num-gpus-per-node 4 --colocate "
        ),
        megatron_model_type=MODEL_TYPE,
    )
'''

TEST = '''\
import os
from tests.e2e.g._common import *

register_cuda_ci(100, "stage-c-8-gpu-h200"{cuda})
register_rocm_ci(100, "stage-c-4-gpu-mi350"{rocm})

if __name__ == "__main__":
    case = CaseConfig(tp=2, ep={ep})
{body}
    execute(case)
'''

BASE = {
    ".github/workflows/ci.yml": WORKFLOW,
    # the ROCm image says which platform it is (the platform variable is inferred from it)
    "docker/Dockerfile.rocm": "FROM rocm/base\nENV MILES_PLATFORM=rocm\n",
    "tests/__init__.py": "",
    "tests/e2e/__init__.py": "",
    "tests/e2e/g/__init__.py": "",
    "scripts/models/m1.py": "def model_args():\n    return '--num-layers 8 --num-attention-heads 8 '\n",
}


def _repo(tests: dict[str, str], top: str = "") -> dict[str, str]:
    return {**BASE, "tests/e2e/g/_common.py": HARNESS.format(top=top), **tests}


def _test(body: str = "", ep: int = 2, cuda: str = "", rocm: str = "") -> str:
    lines = "\n".join("    " + line for line in textwrap.dedent(body).splitlines())
    return TEST.format(body=lines, ep=ep, cuda=cuda, rocm=rocm)


def _ep(report: Report, path: str, backend: str) -> str:
    (table,) = [t for t in report.tables if f"`{path}` ({backend}," in t.title]
    (row,) = table.rows
    return row[3]


def _audit(tmp_path: Path, files: dict[str, str]) -> Report:
    return audit(FolderTree(write(tmp_path, files)))


def _alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every marker evaluates its file itself (what sharing must always agree with)."""
    monkeypatch.setattr(launch, "_same_here", lambda evaluation, interp: False)


# ----- one evaluation per file, unless the platforms may differ ------------------------------

@pytest.mark.parametrize(("top", "body"), [
    ("", "case.ep = ep_for_platform()"),  # a harness function reads it when called
    ('PLATFORM_EP = 2 if os.environ.get("MILES_PLATFORM") == "rocm" else 4', "case.ep = PLATFORM_EP"),  # at load
    ("", 'case.ep = 2 if os.getenv("MILES_PLATFORM") == "rocm" else 4'),  # the test itself
    ("", 'case.ep = 2 if "MILES_PLATFORM" in os.environ else 4'),
])
def test_cuda_and_rocm_markers_of_a_file_with_a_platform_switch_still_differ(
    tmp_path: Path, top: str, body: str,
) -> None:
    files = _repo({
        "tests/e2e/g/test_a.py": _test(),  # loads the harness
        "tests/e2e/g/test_b.py": _test(body),
    }, top=top)
    report = _audit(tmp_path, files)
    assert _ep(report, "tests/e2e/g/test_b.py", "cuda") == "4"
    assert _ep(report, "tests/e2e/g/test_b.py", "rocm") == "2"


def test_a_file_that_reads_no_platform_variable_is_evaluated_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs: list[str] = []
    real = Interpreter.run

    def counted(self: Interpreter, path: str, *args: object, **kwargs: object) -> object:
        runs.append(path)
        return real(self, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Interpreter, "run", counted)
    files = _repo({f"tests/e2e/g/test_{n}.py": _test(ep=n % 2 + 1) for n in range(4)})
    report = _audit(tmp_path, files)
    # the first file loads the harness in each interpreter, so both run it; the rest once
    assert runs.count("tests/e2e/g/test_0.py") == 2
    assert [runs.count(f"tests/e2e/g/test_{n}.py") for n in (1, 2, 3)] == [1, 1, 1]
    for n in range(4):
        path = f"tests/e2e/g/test_{n}.py"
        assert _ep(report, path, "cuda") == _ep(report, path, "rocm") == str(n % 2 + 1)


def test_shared_runs_resolve_as_each_platform_would_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Markers disabled on one platform, module state changed by a run, imports looked up
    by one interpreter only, platform reads: sharing changes no finding, table or number."""
    for seed in range(12):
        files = _random_repo(seed)
        shared = _audit(tmp_path / f"shared{seed}", files)
        with monkeypatch.context() as patch:
            _alone(patch)
            alone = _audit(tmp_path / f"alone{seed}", files)
        assert shared == alone, seed


OPS = [
    "REGISTRY.append(1)",  # changes the harness's state: nothing is shared after this
    "case.ep = len(REGISTRY) % 2 + 1",
    "case.ep = ep_for_platform()",
    "case.tp = LATE",  # a lazily imported global, looked up by one interpreter first
    "case.tp = helpers.VALUE",
    'os.environ["MILES_PLATFORM"] = "rocm"',
    "",
    "",
]


def _random_repo(seed: int) -> dict[str, str]:
    rnd = random.Random(seed)
    top = rnd.choice(["", "from tests.e2e.shared.helpers import LATE\nfrom tests.e2e.shared import helpers",
                      'PLAT = os.environ.get("MILES_PLATFORM")'])
    if "LATE" not in top:
        top += "\nLATE = 1\nfrom tests.e2e.shared import helpers"
    tests = {}
    for n in range(10):
        body = rnd.choice(OPS) if rnd.random() < 0.4 else ""
        cuda = ', disabled="x"' if rnd.random() < 0.2 else ""
        rocm = ', disabled="x"' if rnd.random() < 0.2 else ""
        tests[f"tests/e2e/g/test_{n:02d}.py"] = _test(body, rnd.choice([1, 2]), cuda, rocm)
    return {
        **_repo(tests, top=top),
        "tests/e2e/shared/__init__.py": "",
        "tests/e2e/shared/helpers.py": "import os\nLATE = 2\nVALUE = 1 if os.environ.get('MILES_PLATFORM') else 2\n",
    }


# ----- the interpreter's record of what a run read -------------------------------------------

def _interpreter(files: dict[str, str], platform: str | None, limits: Limits | None = None) -> Interpreter:
    parsed: dict[str, Module] = {}
    for path, text in files.items():
        module = parse_python(path, textwrap.dedent(text))
        assert isinstance(module, Module)
        parsed[path] = module
    return Interpreter(parsed.get, lambda p: p in parsed, (".",), {"MILES_PLATFORM": platform},
                       frozenset({"launch"}), frozenset(), limits or Limits(), frozenset({"MILES_PLATFORM"}))


FILES = {
    "lib.py": "from other import X\nITEMS = []\ndef flags():\n    return '--tp 2'\n",
    "other.py": "X = 3\n",
    "plat.py": "import os\nP = os.environ.get('MILES_PLATFORM')\n",
    "load.py": "import lib\nlaunch(lib.flags())\n",
    "use.py": "import lib\nlaunch(lib.flags())\n",
    "lazy.py": "import lib\nlaunch(lib.flags(), lib.X)\n",
    "change.py": "import lib\nlib.ITEMS.append(1)\n",
    "platform.py": "import os\nlaunch(os.environ.get('MILES_PLATFORM'))\n",
    "platform_module.py": "import plat\nlaunch(plat.P)\n",
    "model.py": "import lib\ndef model_args():\n    return '--layers %d' % len(lib.ITEMS)\n",
}


def test_a_run_that_loads_a_module_or_reads_the_platform_leaves_no_footprint() -> None:
    cuda = _interpreter(FILES, None)
    cuda.run("load.py")
    assert cuda.footprint is None  # it loaded lib.py
    cuda.run("use.py")
    assert cuda.footprint is not None
    assert set(cuda.footprint.modules) == {"lib.py"}
    cuda.run("platform.py")
    assert cuda.footprint is None
    cuda.run("platform_module.py")
    assert cuda.footprint is None  # loaded plat.py, which read it
    cuda.run("platform_module.py")
    assert cuda.footprint is None  # plat.py's globals depend on the platform


def test_another_interpreter_holds_a_footprint_only_with_the_same_modules_alike() -> None:
    cuda, rocm = _interpreter(FILES, None), _interpreter(FILES, "rocm")
    cuda.run("load.py")
    cuda.run("use.py")
    footprint = cuda.footprint
    assert footprint is not None
    assert not rocm.holds(footprint)  # lib.py not loaded there
    rocm.run("load.py")
    assert rocm.holds(footprint)
    cuda.run("lazy.py")  # looks up lib's `from other import X`: lib now holds other's X
    assert cuda.footprint is None
    cuda.run("lazy.py")
    lazy = cuda.footprint
    assert lazy is not None and set(lazy.modules) == {"lib.py", "other.py"}
    assert not rocm.holds(lazy)  # rocm has not looked it up yet: its run would use other.py
    rocm.run("lazy.py")
    assert rocm.holds(lazy) and rocm.holds(footprint) is False  # lib.py's record changed
    rocm.run("change.py")
    assert rocm.dirty and not rocm.holds(lazy)


def test_loading_a_module_of_deeply_shared_values_takes_no_time() -> None:
    files = {"big.py": "a = (1, [2])\nfor _ in range(60):\n    a = (a, a)\nD = {'k': a}\n",
             "main.py": "import big\nlaunch(big.D)\n"}
    interp = _interpreter(files, None)
    interp.run("main.py")  # the values reachable from big.py are noted once each
    interp.run("main.py")
    assert interp.footprint is not None and set(interp.footprint.modules) == {"big.py"}


def _dump(value: object, depth: int = 0) -> object:
    """A comparable picture of a value (no addresses)."""
    if depth > 8:
        return "..."
    if isinstance(value, ListV | TupleV):
        return (type(value).__name__, tuple(_dump(v, depth + 1) for v in value.items))
    if isinstance(value, DictV):
        return ("DictV", value.complete, tuple((k, _dump(v, depth + 1)) for k, (_, v) in value.items.items()))
    if isinstance(value, Instance):
        return ("Instance", value.cls.name, tuple((k, _dump(v, depth + 1)) for k, v in value.fields.items()))
    if isinstance(value, FuncV | ClassV):
        return (type(value).__name__, value.name, value.path)
    if isinstance(value, Text):
        return ("Text", tuple((repr(p), repr(p.origin)) for p in value.parts))
    return (type(value).__name__, repr(value) if isinstance(value, Const | Unknown | SetV | Builtin) else "")


def _run_picture(interp: Interpreter, path: str) -> object:
    calls: list[ExternalCall] = []
    result = interp.run(path, calls.append)
    return (result.exhausted, result.error, result.steps, sorted(result.modules),
            [(c.name, c.line, c.guards, c.module, c.named_sink, tuple(_dump(a) for a in c.args),
              tuple((k, _dump(v)) for k, v in c.keywords.items())) for c in calls])


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROGRAMS, PROGRAMS)
def test_a_run_gives_its_result_in_every_interpreter_that_holds_its_footprint(
    module: list[ast.stmt], main: list[ast.stmt],
) -> None:
    lib, test = _source(module), _source(main)
    if lib is None or test is None:
        return
    files = {"lib.py": lib, "main.py": "from lib import *\nimport lib\n" + test}
    if not all(isinstance(parse_python(p, t), Module) for p, t in files.items()):
        return
    cuda, rocm = _interpreter(files, None, LIMITS), _interpreter(files, "rocm", LIMITS)
    cuda.run("main.py")
    expected = _run_picture(cuda, "main.py")
    footprint = cuda.footprint
    rocm.run("main.py")
    if footprint is not None and rocm.holds(footprint):
        assert _run_picture(rocm, "main.py") == expected


def test_a_functions_result_is_kept_until_module_state_changes() -> None:
    interp = _interpreter(FILES, None)
    first = interp.call_function("model.py", "model_args")
    assert isinstance(first, Text) and first.plain == "--layers 0"
    assert interp.call_function("model.py", "model_args") is first
    interp.run("change.py")  # ITEMS changed in place
    again = interp.call_function("model.py", "model_args")
    assert isinstance(again, Text) and again.plain == "--layers 1"


def test_a_released_run_leaves_no_garbage_for_the_cycle_collector() -> None:
    source = "def f():\n    return g()\n\ndef g():\n    return f\n\nclass C:\n    def m(self):\n        return C\n\nif x:\n    raise E\nlaunch(f(), C().m())\n"
    interp = _interpreter({"main.py": source}, None)
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        interp.run("main.py")
        assert interp.main is not None and "f" in interp.module_globals("__main__")
        interp.release_run()
        assert gc.collect() == 0  # everything the run made went by reference counting
    finally:
        if enabled:
            gc.enable()
    assert interp.module_globals("__main__") == {}


def test_a_released_interpreter_leaves_no_garbage_for_the_cycle_collector() -> None:
    files = {
        "lib.py": "HOOKS = []\ndef flags():\n    return '--tp 2'\n",
        # a run that hands its own function to a loaded module: the run's state is kept
        # (the module may call it later) until the interpreter itself is released
        "main.py": "import lib\ndef hook():\n    return hook\nlib.HOOKS.append(hook)\n"
                   "launch(lib.flags())\n",
        "other.py": "import lib\ndef f():\n    return f\nlaunch(lib.flags(), f())\n",
    }
    interp = _interpreter(files, None)
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for path in ("main.py", "other.py", "main.py"):
            interp.run(path)
            interp.release_run()
        assert interp.dirty
        interp.release()
        assert gc.collect() == 0  # modules, runs, scopes and trees went by reference counting
    finally:
        if enabled:
            gc.enable()
    assert interp.module_globals("lib.py") == {}


def test_values_of_the_last_run_stay_readable_until_released() -> None:
    interp = _interpreter({"main.py": "X = 1\n"}, None)
    interp.run("main.py")
    assert python(interp.module_globals("__main__")["X"]) == 1


# ----- shortcuts that must give what the long way gives --------------------------------------

SOURCES = [
    "x = f(a, b)  # comment\ny = 'text' + x\n",
    "x = 'é' + f(a)\ny = g(b)\n",  # columns count bytes on a non-ASCII line
    "x = 1\r\ny = f(x)\r\nz = [x,\r\n     y]\n",
    "x = 1\n\x0cy = f(x)\ns = 'a\x0cb'\nt = f(s)\n",  # a form feed is not a line break for the parser
    "s = 'a\u2028b'\nt = f(s)\n",
    "s = '''a\x85b\nc'''\nt = g(s)\n",
    "if a:\n\tb = c(d,   e)\nelse:\n    b = {'k': [1, 2]}\n",
]


@pytest.mark.parametrize("source", SOURCES)
def test_one_line_segments_are_the_modules(source: str) -> None:
    module = parse_python("m.py", source)
    assert isinstance(module, Module)
    for node in ast.walk(module.tree):
        if not hasattr(node, "lineno"):
            continue
        found = _line_segment(node, module)
        if found is not None:
            assert found == module.segment(node)[:200], ast.dump(node)


def _reference_tokenize(parts: Sequence[Part]) -> list[Token]:
    """The tokenizer as first written, a character at a time (the specification)."""
    out: list[Token] = []
    chars: list[str] = []
    origins: list[Origin | None] = []
    holes: list[Hole] = []

    def flush() -> None:
        if holes:
            quiet = all(h.quiet for h in holes) and not chars
            out.append(Opaque(" ".join(h.text for h in holes), holes[0].origin, quiet))
        elif chars:
            out.append(Word("".join(chars), tuple(origins)))
        chars.clear()
        origins.clear()
        holes.clear()

    def blank_start(parts: Sequence[Part]) -> bool:
        first = parts[0] if parts else None
        if isinstance(first, Choice):  # blank whichever option is taken (an empty one: what follows)
            return all(blank_start(o) if o else blank_start(parts[1:]) for o in first.options)
        return first is None or (isinstance(first, Chunk) and (not first.text or first.text[0].isspace()))

    def blank_end(parts: Sequence[Part]) -> bool:
        last = parts[-1] if parts else None
        return last is None or (isinstance(last, Chunk) and (not last.text or last.text[-1].isspace()))

    for index, part in enumerate(parts):
        if isinstance(part, Chunk):
            for ch in part.text:
                if ch.isspace():
                    flush()
                else:
                    chars.append(ch)
                    origins.append(part.origin)
        elif isinstance(part, Hole):
            holes.append(part)
        else:
            left = (not chars and not holes) or all(blank_start(o) for o in part.options)
            right = blank_start(parts[index + 1:]) or all(blank_end(o) for o in part.options)
            if left and right:
                flush()
                out.append(Branches(tuple(tuple(_reference_tokenize(o)) for o in part.options),
                                    part.cond, part.origin))
            else:
                holes.append(Hole(part.cond, part.origin))
    flush()
    return out


ORIGINS = st.sampled_from([None, Origin("a.py", 1), Origin("a.py", 2, "tp", "keyword")])
TEXTS = st.text(alphabet=st.sampled_from(["a", "-", "=", "1", " ", "\t", "\n", "\x1c", "\x85", "\u00a0", "\u3000", "é"]),
                max_size=8)
CHUNKS = st.builds(Chunk, TEXTS, ORIGINS)
HOLES = st.builds(Hole, st.sampled_from(["x", "a b"]), ORIGINS, st.booleans())
PARTS: st.SearchStrategy[Part] = st.recursive(
    st.one_of(CHUNKS, CHUNKS, HOLES),
    lambda inner: st.builds(
        Choice, st.lists(st.lists(inner, max_size=3).map(tuple), min_size=1, max_size=3).map(tuple),
        st.just("c"), ORIGINS),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(PARTS, max_size=8))
def test_tokenize_splits_as_a_character_at_a_time_does(parts: list[Part]) -> None:
    assert tokenize(parts) == _reference_tokenize(parts)
