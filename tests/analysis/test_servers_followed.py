"""Server launches the syntax leaves open, followed by the evaluator: test case classes run as
unittest runs them, a launch per model configuration of a loop, and nothing said known that
depends on the order the tests run in."""

from __future__ import annotations

import itertools
import sys
import tempfile
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from bot.analysis import launch, servers
from bot.analysis.evaluate import Interpreter
from bot.analysis.markers import Marker
from bot.analysis.snapshot import Snapshot
from bot.analysis.source import Module, parse_python
from bot.analysis.tree import FolderTree
from config.repo import defaults

SUITE_8 = "stage-c-test-large-8-gpu-amd"


def _outcome(root: Path, text: str, suite: str = SUITE_8) -> launch.LaunchOutcome:
    (root / "test").mkdir(parents=True, exist_ok=True)
    (root / "test/test_s.py").write_text(textwrap.dedent(text))
    marker = Marker("test/test_s.py", 1, "register_amd_ci", "rocm", 0, 60.0, suite, (), False,
                    None, None)
    return launch.analyze_launch(Snapshot(FolderTree(root), defaults()), marker)


def _sizes(outcome: launch.LaunchOutcome) -> list[tuple[int, object, object, object]]:
    return sorted((s.line, s.value("tp"), s.value("dp"), s.value("ep")) for s in outcome.servers)


CONFIGS = """
    import unittest
    from dataclasses import dataclass, field
    from typing import List

    @dataclass
    class ModelConfig:
        model_path: str
        tp_size: int = 8
        other_args: List[str] = field(default_factory=list)

    MODELS = [
        ModelConfig(model_path="a"),
        ModelConfig(model_path="b", tp_size=16, other_args=["--ep-size", "8"]),
    ]

    class TestEval(unittest.TestCase):
        @classmethod
        def setUpClass(cls):
            cls.models = MODELS

        def test_accuracy(self):
            for config in self.models:
                with self.subTest(model=config.model_path):
                    other_args = list(config.other_args)
                    other_args.extend(["--tp", str(config.tp_size)])
                    process = popen_launch_server(config.model_path, U, 60, other_args=other_args)
                    kill_process_tree(process.pid)

    if __name__ == "__main__":
        unittest.main()
"""


def test_each_configuration_of_a_loop_is_a_launch_of_its_own(tmp_path: Path) -> None:
    outcome = _outcome(tmp_path, CONFIGS)
    assert outcome.states == ("checked", "checked")
    assert _sizes(outcome) == [(27, 8, 1, 1), (27, 16, 1, 8)]
    [error] = [f for f in outcome.findings if f.rule == "PAR003"]
    assert "16" in error.message and error.line == 14  # where the size is set


def test_subclasses_each_launch_with_their_own_class_attributes(tmp_path: Path) -> None:
    outcome = _outcome(tmp_path, """
        class TestBase(CustomTestCase):
            other_launch_args = []

            @classmethod
            def setUpClass(cls):
                launch_args = ["--trust-remote-code"]
                launch_args.extend(cls.other_launch_args)
                cls.process = popen_launch_server(M, U, timeout=60, other_args=launch_args)

            def test_gsm8k(self):
                pass

        class TestTP2(TestBase):
            other_launch_args = ["--tp", "2"]

        class TestDP4(TestBase):
            other_launch_args = ["--dp", "4", "--tp", "2"]
    """)
    assert outcome.states == ("checked",) * 3
    assert _sizes(outcome) == [(9, 1, 1, 1), (9, 2, 1, 1), (9, 2, 4, 1)]


def test_a_base_class_deleted_from_the_module_is_not_run(tmp_path: Path) -> None:
    outcome = _outcome(tmp_path, """
        class Base(CustomTestCase):
            @classmethod
            def setUpClass(cls):
                cls.process = popen_launch_server(M, U, other_args=cls.extra)

            def test_x(self):
                pass

        class TestTP4(Base):
            extra = ["--tp", "4"]

        del Base
    """)
    assert outcome.states == ("checked",) and _sizes(outcome) == [(5, 4, 1, 1)]


def test_a_test_that_changes_what_another_reads_leaves_the_syntax_answer(tmp_path: Path) -> None:
    # unittest runs TestB first (by name), pytest TestZ... as written: which of them comes
    # first decides whether the launch of TestB sees `--tp 8`
    text = """
        ARGS = ["--tp", "2"]

        class TestZ(CustomTestCase):
            def test_grow(self):
                ARGS.extend(["--tp", "8"])
                popen_launch_server(M, U, other_args=["--tp", "1"])

        class TestB(CustomTestCase):
            def test_launch(self):
                popen_launch_server(M, U, other_args=ARGS)
    """
    outcome = _outcome(tmp_path, text)
    launched = [s for s in outcome.servers if s.line == 11]
    assert len(launched) == 1 and isinstance(launched[0].value("tp"), servers.Unresolved)
    module = parse_python("test/test_s.py", textwrap.dedent(text))
    assert isinstance(module, Module)
    interp = Interpreter(lambda p: module if p == "test/test_s.py" else None,
                         lambda p: p == "test/test_s.py", sinks=frozenset({"popen_launch_server"}))
    result = interp.run("test/test_s.py", lambda call: None, cases=lambda d: (False, None))
    assert result.order == "a list the tests share"


def test_a_single_test_may_change_its_own_class_state(tmp_path: Path) -> None:
    outcome = _outcome(tmp_path, """
        class TestPerf(CustomTestCase):
            @classmethod
            def setUpClass(cls):
                cls.batch_sizes = [1, 8]
                cls.config = {"other_args": ["--tp", "8"]}

            def test_bench(self):
                popen_launch_server(M, U, other_args=self.config["other_args"])
                run_bench(self.batch_sizes)
    """)
    assert outcome.states == ("checked",) and _sizes(outcome) == [(9, 8, 1, 1)]


def test_skipped_tests_are_not_run_and_an_unknown_skip_is_a_guard(tmp_path: Path) -> None:
    text = """
        import unittest

        class TestTP(CustomTestCase):
            def _launch(self, tp):
                popen_launch_server(M, U, other_args=["--tp", str(tp)])

            def test_small(self):
                self._launch(2)

            @unittest.skipIf(is_in_ci(), "too big for CI")
            def test_big(self):
                self._launch(16)

            @unittest.skip("broken")
            def test_broken(self):
                self._launch(32)
    """
    outcome = _outcome(tmp_path, text)
    assert outcome.states == ("checked",) and _sizes(outcome) == [(6, 2, 1, 1)]
    # under a condition CI does not decide, the big launch may run: not checked
    guarded = _outcome(tmp_path / "guarded", text.replace("is_in_ci()", "HAS_BIG_GPUS"))
    assert guarded.states == ("partial",)
    assert isinstance(guarded.servers[0].value("tp"), servers.Unresolved)


def test_launch_settings_objects_and_keyword_launchers_from_the_evaluator(tmp_path: Path) -> None:
    outcome = _outcome(tmp_path, """
        SIZES = [1, 4]
        ARGS = ["--trust-remote-code"]

        def test_settings():
            models = []
            for tp in SIZES:
                models.append(ModelLaunchSettings("m", tp_size=tp, extra_args=list(ARGS)))
            run(models)

        def test_bench():
            extra = list(ARGS)
            extra += ["--dp", "2"]
            run_bench_serving("m", 10, 1, extra)
    """)
    assert outcome.states == ("checked",) * 3
    assert _sizes(outcome) == [(8, 1, 1, 1), (8, 4, 1, 1), (14, 1, 2, 1)]


def test_a_run_out_of_steps_keeps_the_syntax_answer(tmp_path: Path) -> None:
    outcome = _outcome(tmp_path, """
        def test_spin():
            args = []
            while True:
                args.append("--x")
            popen_launch_server(M, U, other_args=args)
    """)
    assert outcome.states == ("unchecked",)


# ----- every order the tests may run in --------------------------------------------------------

WORDS = ["--tp", "--dp", "1", "2", "4", "8"]
word = st.sampled_from(WORDS).map(repr)
words = st.lists(st.sampled_from(WORDS), max_size=3).map(repr)
CHANGE: st.SearchStrategy[str] = st.one_of(
    st.builds("args.append({})".format, word),
    st.builds("args.extend({})".format, words),
    st.builds("args += {}".format, words),
    st.builds("args.insert(0, {})".format, word),
    st.just("helper(args)"),
    st.just("mystery(args)"),
    st.just("cls_args.append('--dp')\n        cls_args.append('4')"),
)
START = st.sampled_from(["SHARED", "list(SHARED)", "SHARED + []", "self.items",
                         "list(self.items)", "['--tp', '4']"])

ORDER_PROGRAM = """\
SHARED = {initial}

def helper(a):
    a.append("--tp")
    a.append("8")

class TestA(CustomTestCase):
    items = ["--dp", "2"]

    def test_a(self):
        cls_args = self.items
        args = {start_a}
        {body_a}
        popen_launch_server(M, U, other_args=args)

class TestB(TestA):
    def test_b(self):
        cls_args = self.items
        args = {start_b}
        {body_b}
        popen_launch_server(M, U, other_args=args)
"""


def _mystery(value: Any) -> None:
    value.extend(["--tp", "16"])


def _orders(source: str) -> list[dict[int, list[list[str]]]] | None:
    """Per order unittest or pytest may take the tests in: what each launch line was given,
    every time it was reached (None: a run raised)."""
    out = []
    code = compile(source, "generated.py", "exec")
    # TestB inherits test_a: three tests (TestA.test_a, TestB.test_a, TestB.test_b)
    tests = [("TestA", "test_a"), ("TestB", "test_a"), ("TestB", "test_b")]
    for order in itertools.permutations(tests):
        reached: dict[int, list[list[str]]] = {}
        names: dict[str, Any] = {"CustomTestCase": object, "M": "m", "U": "u",
                                 "mystery": _mystery}

        def launch_(*args: Any, other_args: Any = None,
                    reached: dict[int, list[list[str]]] = reached) -> None:
            reached.setdefault(sys._getframe(1).f_lineno, []).append(list(other_args))

        names["popen_launch_server"] = launch_
        try:
            exec(code, names)  # the test's own generated program
            for cls, method in order:
                getattr(names[cls](), method)()
        except (ValueError, IndexError, TypeError):
            return None
        out.append(reached)
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(WORDS), max_size=3).map(repr), START, START,
       st.lists(CHANGE, max_size=2), st.lists(CHANGE, max_size=2))
def test_a_launch_said_known_is_known_in_every_order_of_the_tests(
        initial: str, start_a: str, start_b: str, body_a: list[str], body_b: list[str]) -> None:
    source = ORDER_PROGRAM.format(initial=initial, start_a=start_a, start_b=start_b,
                                  body_a="\n        ".join(body_a) or "pass",
                                  body_b="\n        ".join(body_b) or "pass")
    note(source)
    orders = _orders(source)
    if orders is None:
        event("a run raised")
        return
    with tempfile.TemporaryDirectory() as folder:
        outcome = _outcome(Path(folder), source)
    event(f"launches said known: {sum(s == 'checked' for s in outcome.states)}")
    said = [(server.line, {s: server.value(s) for s in ("tp", "dp")}) for server in outcome.servers]

    def covers(sizes: Mapping[str, object], args: list[str]) -> bool:
        real = servers.Server("t", 1, "x")
        servers._apply_flags(real, list(args), 1)
        return all(isinstance(v, servers.Unresolved) or real.value(s) == v
                   for s, v in sizes.items())

    # every launch made in any order is one rocmbot said (or left open) ...
    for reached in orders:
        for line, made in reached.items():
            for args in made:
                assert any(at == line and covers(sizes, args) for at, sizes in said), \
                    (source, line, args, said)
    # ... and every one it said is made in some order
    for line, sizes in said:
        assert any(covers(sizes, args) for reached in orders for args in reached.get(line, [])), \
            (source, line, sizes)


WRAPPER = """
    import subprocess
    import sys

    def start_sglang_server(*, model_path, extra_args=None, deterministic=True):
        cmd = [sys.executable, "-m", "sglang.launch_server", "--model-path", model_path]
        if extra_args:
            cmd.extend(extra_args)
        if deterministic and not has_backend(cmd):
            cmd.extend(["--attention-backend", "triton"])
        return subprocess.Popen(cmd)
"""


def _wrapped(root: Path, test: str, suite: str = SUITE_8) -> launch.LaunchOutcome:
    (root / "test/utils").mkdir(parents=True, exist_ok=True)
    (root / "test/utils/__init__.py").write_text("")
    (root / "test/__init__.py").write_text("")
    (root / "test/utils/server.py").write_text(textwrap.dedent(WRAPPER))
    return _outcome(root, test, suite)


def test_a_repository_wrapper_started_from_a_fixture_is_a_server_launch(tmp_path: Path) -> None:
    outcome = _wrapped(tmp_path, """
        import pytest
        from test.utils.server import start_sglang_server

        @pytest.fixture(scope="module")
        def server():
            proc = start_sglang_server(model_path="m", extra_args=["--tp", "16", "--dp", "1"])
            yield proc
            proc.kill()

        def test_chat(server):
            assert server
    """)
    assert outcome.states == ("checked",) and _sizes(outcome) == [(1, 16, 1, 1)]
    [error] = [f for f in outcome.findings if f.rule == "PAR003"]
    assert error.line == 7  # the size, in the test
    plain = _wrapped(tmp_path / "plain", """
        from test.utils.server import start_sglang_server
        def test_default():
            start_sglang_server(model_path="m")
    """)
    assert plain.states == ("checked",) and _sizes(plain) == [(1, 1, 1, 1)]


def test_a_wrapped_launch_whose_tests_share_changes_is_not_known(tmp_path: Path) -> None:
    outcome = _wrapped(tmp_path, """
        from test.utils.server import start_sglang_server
        EXTRA = ["--tp", "2"]
        def test_a():
            start_sglang_server(model_path="m", extra_args=EXTRA)
        def test_b():
            EXTRA.extend(["--tp", "16"])
    """)
    assert outcome.states == ("unchecked",)
    [unknown] = [f for f in outcome.findings if f.rule == "PAR019"]
    assert "the order of its tests (one changes a list the tests share)" in unknown.message


def test_a_test_that_rebinds_a_module_variable_makes_the_order_matter() -> None:
    text = textwrap.dedent("""
        from somewhere import ARGS
        def test_a():
            popen_launch_server(M, U, other_args=ARGS)
        def test_b():
            global ARGS
            ARGS = ["--tp", "16"]
    """)
    module = parse_python("t.py", text)
    assert isinstance(module, Module)
    interp = Interpreter(lambda p: module if p == "t.py" else None, lambda p: p == "t.py",
                         sinks=frozenset({"popen_launch_server"}))
    result = interp.run("t.py", lambda call: None, cases=lambda d: (False, None))
    assert result.order == "a variable of the module (`global`)"


HELPERS = """
    class TestTP(CustomTestCase):
        def _launch(self, tp):
            popen_launch_server(M, U, other_args=["--tp", str(tp)])

        def _helper(self, tp):
            self._launch(tp)

        def test_small(self):
            self._helper(2)
"""


def test_a_launch_in_a_function_handed_on_keeps_the_syntax_answer(tmp_path: Path) -> None:
    # the pool calls `_launch` with 16 as well: only the direct call is followed
    for n, handed in enumerate(("pool.map(self._launch, [16])", "getattr(self, '_launch')(16)",
                                "self._later(self._launch)")):
        outcome = _outcome(tmp_path / str(n), HELPERS + f"""
        def test_pool(self):
            {handed}
""")
        assert outcome.states == ("partial",), handed
        assert isinstance(outcome.servers[0].value("tp"), servers.Unresolved), handed
    direct = _outcome(tmp_path / "direct", HELPERS)
    assert direct.states == ("checked",) and _sizes(direct) == [(4, 2, 1, 1)]
