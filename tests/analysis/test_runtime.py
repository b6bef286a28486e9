"""What a test's launches run: entry points, their reach, and the changed files they name."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bot.analysis import launch
from bot.analysis.evaluate import ExternalCall
from bot.analysis.flags import Branches, Opaque, Word
from bot.analysis.runtime import (
    EntryPoint,
    LaunchCall,
    Strings,
    _definition,
    _fill,
    _Param,
    _programs,
    _strings,
    entry_points,
    launch_call,
    launched_by,
    runtime_reach,
    unknown_launches,
)
from bot.analysis.snapshot import Snapshot
from bot.analysis.tree import FolderTree
from bot.analysis.values import Alternatives, Choice, Chunk, Const, Hole, Text, Unknown
from config.repo import defaults, parse_config

# miles' shape: a harness runs the trainer as a process
COMMAND_UTILS = '''\
"""Run commands."""
import os
import subprocess

repo_base_dir = os.path.dirname(__file__)


def exec_command(cmd):
    subprocess.run(cmd, shell=True, check=True)


def execute_train(
    train_args: str,
    num_gpus_per_node: int,
    megatron_model_type: str | None,
    train_script: str = "train.py",
    extra_env_vars=None,
):
    """Start `python3 whatever.py` under Ray."""
    if not os.path.isabs(train_script):
        train_script = f"{repo_base_dir}/{train_script}"
    exec_command("pkill -9 sglang; sleep 3; ray stop --force; true; ")
    exec_command(
        f"export PYTHONUNBUFFERED=1 && ray job submit --address=http://127.0.0.1:8265 "
        f"-- python3 {train_script} "
        f"{train_args}"
    )
'''

MILES = {
    "miles/__init__.py": "",
    "miles/utils/__init__.py": "",
    "miles/utils/command_utils.py": COMMAND_UTILS,
    "miles/utils/arguments.py": "from miles.backends import megatron\n",
    "miles/backends/__init__.py": "",
    "miles/backends/megatron.py": "import miles.utils.arguments\n",  # a cycle
    "miles/ray/rollout.py": "import miles.utils.arguments\n",
    "train.py": "from miles.utils.arguments import parse\nimport miles.ray.rollout\n",
    "train_async.py": "from miles.utils import arguments\n",
    "tests/__init__.py": "",
}


def _test(call: str, head: str = "") -> str:
    """A miles-shaped end-to-end test whose launch is ``call``."""
    return (
        "import os\nimport subprocess\nimport sys\n"
        "from miles.utils.command_utils import execute_train\n"
        f"{head}\n"
        'register_rocm_ci(900, "stage-c-8-gpu-mi350")\n\n\n'
        "def test_run():\n"
        f"{textwrap.indent(call, '    ')}\n\n\n"
        'if __name__ == "__main__":\n'
        "    test_run()\n"
    )


TRAIN = 'execute_train(train_args="--actor-num-nodes 1 --colocate", num_gpus_per_node=8,\n' \
        "              megatron_model_type=None{more})"


def _snapshot(root: Path, files: dict[str, str], config: str = "") -> Snapshot:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    loaded = parse_config(config, ".github/rocmbot.yml").config if config else defaults()
    return Snapshot(FolderTree(root), loaded)


def _outcome(snapshot: Snapshot, path: str) -> launch.LaunchOutcome:
    markers, _ = snapshot.markers(path)
    (marker,) = markers
    return launch.analyze_launch(snapshot, marker)


def _run(tmp_path: Path, test: str, files: dict[str, str] | None = None, config: str = "",
         ) -> tuple[Snapshot, launch.LaunchOutcome]:
    snapshot = _snapshot(tmp_path, {**MILES, **(files or {}), "tests/test_e2e.py": test}, config)
    return snapshot, _outcome(snapshot, "tests/test_e2e.py")


# ----- training launches ---------------------------------------------------------------------

def test_a_library_module_the_trainer_imports_is_launched_by_the_harness(tmp_path: Path) -> None:
    snapshot, outcome = _run(tmp_path, _test(TRAIN.format(more="")))
    train = EntryPoint("train.py", "launched by `execute_train`")
    assert entry_points(snapshot, outcome, "tests/test_e2e.py") == (train,)
    assert unknown_launches(snapshot, outcome, "tests/test_e2e.py") == ()
    changed = {"miles/utils/arguments.py", "miles/backends/megatron.py", "train.py",
               "miles/ray/__init__.py", "train_async.py", "README.md"}
    assert launched_by(snapshot, outcome, "tests/test_e2e.py", changed) == {
        "miles/utils/arguments.py": train,
        "miles/backends/megatron.py": train,  # through the import cycle
        "train.py": train,
        "miles/ray/__init__.py": train,  # a file added there would be loaded first
    }
    # the test itself imports none of it: only its launch reaches the library
    loaded, _ = snapshot.graph.closure("tests/test_e2e.py")
    assert "miles/utils/arguments.py" not in loaded


def test_the_train_script_the_call_names_wins_over_the_default(tmp_path: Path) -> None:
    snapshot, outcome = _run(tmp_path, _test(TRAIN.format(more=', train_script="train_async.py"')))
    assert entry_points(snapshot, outcome, "tests/test_e2e.py") == (
        EntryPoint("train_async.py", "launched by `execute_train`"),)
    assert launched_by(snapshot, outcome, "tests/test_e2e.py", ["miles/ray/rollout.py"]) == {}


def test_a_train_script_an_undecided_condition_chooses_gives_both(tmp_path: Path) -> None:
    call = TRAIN.format(more=', train_script="train_async.py" if os.environ["ASYNC"] else "train.py"')
    snapshot, outcome = _run(tmp_path, _test(call))
    assert [e.path for e in entry_points(snapshot, outcome, "tests/test_e2e.py")] == [
        "train_async.py", "train.py"]


def test_a_train_script_built_at_run_time_gives_no_entry_point_and_says_so(tmp_path: Path) -> None:
    snapshot, outcome = _run(tmp_path, _test(TRAIN.format(more=', train_script=os.environ["S"]')))
    assert entry_points(snapshot, outcome, "tests/test_e2e.py") == ()
    assert launched_by(snapshot, outcome, "tests/test_e2e.py", ["train.py"]) == {}
    assert unknown_launches(snapshot, outcome, "tests/test_e2e.py") == (
        "launched by `execute_train` starts a program built at run time",)


def test_keywords_the_call_cannot_list_may_set_the_train_script(tmp_path: Path) -> None:
    call = "execute_train(train_args='--colocate', num_gpus_per_node=8, **os.environ.opts)"
    snapshot, outcome = _run(tmp_path, _test(call))
    assert entry_points(snapshot, outcome, "tests/test_e2e.py") == ()
    assert unknown_launches(snapshot, outcome, "tests/test_e2e.py") == (
        "launched by `execute_train` starts a program built at run time",)


def test_positional_arguments_bind_to_a_methods_parameters(tmp_path: Path) -> None:
    runner = (
        "class Runner:\n"
        "    def execute_train(self, train_args, train_script='train.py'):\n"
        "        run([sys.executable, '-u', train_script, *train_args.split()])\n"
    )
    call = "Runner().execute_train('--colocate --actor-num-nodes 1', 'train_async.py')"
    snapshot, outcome = _run(tmp_path, _test(call, "from tests.runner import Runner"),
                             {"tests/runner.py": runner})
    assert entry_points(snapshot, outcome, "tests/test_e2e.py") == (
        EntryPoint("train_async.py", "launched by `execute_train`"),)


@pytest.mark.parametrize(("definition", "why"), [
    # the launch function is not in the repository
    ("from outside import execute_train", "launched by `execute_train`, which is not defined in "
     "the files the test loads"),
    ("execute_train = lambda **kw: None", "launched by `execute_train`, which is not defined in "
     "the files the test loads"),
    # its code starts nothing it names
    ("def execute_train(**kw):\n    submit(kw)", "launched by `execute_train`, whose code names no "
     "program it starts"),
    ("def execute_train(**kw):\n    run(f'python3 {kw!r}')", "launched by `execute_train` starts "
     "a program built at run time"),
    ("def execute_train(script='x.py', **kw):\n    run(f'python3 {script}')",
     "launched by `execute_train`: `x.py` is not a file of the repository (from its root)"),
])
def test_a_launch_whose_program_is_not_known_says_why(tmp_path: Path, definition: str,
                                                       why: str) -> None:
    test = _test(TRAIN.format(more=""), definition).replace(
        "from miles.utils.command_utils import execute_train\n", "")
    snapshot, outcome = _run(tmp_path, test)
    assert entry_points(snapshot, outcome, "tests/test_e2e.py") == ()
    assert unknown_launches(snapshot, outcome, "tests/test_e2e.py") == (why,)


def test_a_launch_function_defined_by_a_module_the_test_loads_is_found_by_name(
        tmp_path: Path) -> None:
    harness = "def execute_train(train_args, train_script='train.py'):\n" \
              "    run(['python3', train_script] + train_args.split())\n"
    test = _test("U.execute_train(train_args='--colocate', num_gpus_per_node=8)",
                 "from tests import harness\nU = harness.make()")
    snapshot, outcome = _run(tmp_path, test, {"tests/harness.py": harness})
    assert entry_points(snapshot, outcome, "tests/test_e2e.py") == (
        EntryPoint("train.py", "launched by `execute_train`"),)


@pytest.mark.parametrize(("call", "expected"), [
    ('subprocess.run(["python3", "-u", "train.py", "--colocate"])', "`python3 train.py`"),
    ('subprocess.run([sys.executable, "train.py", "--colocate"])', "`python3 train.py`"),
    ('subprocess.run("cd /w && torchrun --nproc_per_node 8 train_async.py --colocate", shell=True)',
     "`torchrun train_async.py`"),
    ('subprocess.run(["python", "-m", "torch.distributed.run", "--standalone", "--nnodes=1", '
     '"train.py", "--colocate"])', "`python -m torch.distributed.run train.py`"),
    ('subprocess.run(["bash", "-c", f"cd {os.environ[\'W\']} && python3 train.py --colocate"])',
     "`python3 train.py`"),
])
def test_a_command_line_names_the_program_it_starts(tmp_path: Path, call: str, expected: str) -> None:
    snapshot, outcome = _run(tmp_path, _test(call))
    (entry,) = entry_points(snapshot, outcome, "tests/test_e2e.py")
    assert entry.how == expected and entry.path in ("train.py", "train_async.py")
    assert entry.module is None


def test_a_module_run_with_python_m_loads_its_packages_first(tmp_path: Path) -> None:
    snapshot, outcome = _run(tmp_path, _test('subprocess.run(["python3", "-m", "miles.ray.main", '
                                             '"--colocate"])'),
                             {"miles/ray/__init__.py": "import miles.ray.rollout\n",
                              "miles/ray/main.py": ""})
    (entry,) = entry_points(snapshot, outcome, "tests/test_e2e.py")
    assert entry == EntryPoint("miles/ray/main.py", "`python3 -m miles.ray.main`", "miles.ray.main")
    files, candidates = runtime_reach(snapshot, entry)
    assert files[:3] == ("miles/__init__.py", "miles/ray/__init__.py", "miles/ray/main.py")
    assert "miles/utils/arguments.py" in files and "miles/ray/main/__main__.py" in candidates
    assert runtime_reach(snapshot, entry) is runtime_reach(snapshot, entry)


@pytest.mark.parametrize(("call", "why"), [
    ('subprocess.run([os.environ["PY"], "train.py", "--colocate"])',
     "`run` is given a command line that names no program it starts"),
    ('subprocess.run(["python3", os.environ["SCRIPT"], "--colocate"])',
     "`python3` starts a program built at run time"),
    ('subprocess.run(["python3", "-c", "import train", "--colocate"])',
     "`python3 -c` runs code given on its command line"),
    ('subprocess.run(["python3", "tools/gone.py", "--colocate"])',
     "`python3 tools/gone.py`: `tools/gone.py` is not a file of the repository (from its root)"),
    ('subprocess.run(["torchrun", "--no-python", "bash", "--colocate"])',
     "`torchrun --no-python` runs a program that is not Python, which is not followed"),
])
def test_a_command_line_whose_program_is_not_known_says_why(tmp_path: Path, call: str,
                                                            why: str) -> None:
    snapshot, outcome = _run(tmp_path, _test(call))
    assert entry_points(snapshot, outcome, "tests/test_e2e.py") == ()
    assert unknown_launches(snapshot, outcome, "tests/test_e2e.py") == (why,)


@pytest.mark.parametrize("call", [
    'subprocess.run(["python3", "/opt/train.py", "--colocate"])',  # outside the repository
    'subprocess.run(["python3", "../train.py", "--colocate"])',
    'subprocess.run(["python3", "-m", "pytest", "--colocate"])',  # an installed module
    'subprocess.run(["python3", "-m", "no-such.name", "--colocate"])',  # not a module name
    'subprocess.run(["ray", "job", "submit", "--colocate"])',  # a program of the system
])
def test_a_program_outside_the_repository_runs_none_of_its_files(tmp_path: Path, call: str) -> None:
    snapshot, outcome = _run(tmp_path, _test(call))
    assert entry_points(snapshot, outcome, "tests/test_e2e.py") == ()
    assert unknown_launches(snapshot, outcome, "tests/test_e2e.py") == ()


def test_a_launch_function_reached_through_unknown_arguments_is_read_from_its_definition(
        tmp_path: Path) -> None:
    harness = "def start(*args, train_script='train.py'):\n    run(['python3', train_script])\n"
    test = _test("start(*os.environ['ARGS'], '--colocate')", "from tests.harness import start")
    snapshot, outcome = _run(tmp_path, test, {"tests/harness.py": harness})
    assert entry_points(snapshot, outcome, "tests/test_e2e.py") == ()
    assert unknown_launches(snapshot, outcome, "tests/test_e2e.py") == (
        "launched by `start` starts a program built at run time",)


def test_a_stopped_evaluation_leaves_later_launches_unknown(tmp_path: Path) -> None:
    snapshot, outcome = _run(tmp_path, _test(TRAIN.format(more="")))
    stopped = launch.LaunchOutcome(stopped=True, calls=outcome.calls)
    assert unknown_launches(snapshot, stopped, "tests/test_e2e.py") == (
        "the evaluation of the test stopped before its end: a launch past that point is not "
        "known",)
    assert entry_points(snapshot, stopped, "tests/test_e2e.py") == (
        EntryPoint("train.py", "launched by `execute_train`"),)


# ----- server launches -----------------------------------------------------------------------

TEST_UTILS = '''\
"""Test helpers."""
import subprocess


def popen_launch_server(model, base_url, timeout, other_args=None, pd=False):
    """Launch `python3 -m pkg.launch_server` and wait."""
    if pd:
        command = ["python3", "-m", "pkg.launch_pd_server", "--model-path", model]
    else:
        command = ["python3", "-m", "pkg.launch_server", "--model-path", model, *other_args]
    print("python3 is required")
    return subprocess.Popen(command)
'''

SERVER_TEST = '''\
import unittest
from pkg.test.test_utils import popen_launch_server

register_amd_ci(est_time=300, suite="stage-b-test-2-gpu-amd")


class TestServer(unittest.TestCase):
    def test_it(self):
        popen_launch_server("m", "http://127.0.0.1:2000", 60, other_args=["--tp", "2"])
'''

PKG = {
    "python/pkg/__init__.py": "",
    "python/pkg/launch_server.py": "from pkg.srt import server_args\n",
    "python/pkg/srt/__init__.py": "",
    "python/pkg/srt/server_args.py": "from pkg.srt import engine\n",
    "python/pkg/srt/engine.py": "import pkg.srt.server_args\n",
    "python/pkg/test/__init__.py": "",
    "python/pkg/test/test_utils.py": TEST_UTILS,
}


def test_a_server_launcher_runs_the_module_it_names_through_the_python_roots(
        tmp_path: Path) -> None:
    snapshot = _snapshot(tmp_path, {**PKG, "test/test_server.py": SERVER_TEST},
                         "python_roots: [python]\n")
    outcome = _outcome(snapshot, "test/test_server.py")
    server = EntryPoint("python/pkg/launch_server.py", "launched by `popen_launch_server`",
                        "pkg.launch_server")
    assert entry_points(snapshot, outcome, "test/test_server.py") == (server,)
    assert launched_by(snapshot, outcome, "test/test_server.py",
                       ["python/pkg/srt/engine.py", "python/pkg/__init__.py"]) == {
        "python/pkg/srt/engine.py": server, "python/pkg/__init__.py": server}


def test_a_console_script_of_the_repository_is_its_module(tmp_path: Path) -> None:
    utils = TEST_UTILS.replace('["python3", "-m", "pkg.launch_server",', '["pkg", "serve",')
    pyproject = '[project]\nname = "pkg"\n[project.scripts]\npkg = "pkg.cli:main"\n' \
                'other = ":main"\nnumber = 3\n'
    files = {**PKG, "python/pkg/test/test_utils.py": utils, "python/pyproject.toml": pyproject,
             "python/pkg/cli/__init__.py": "", "python/pkg/cli.py": "import pkg.launch_server\n",
             "pyproject.toml": "not = toml = at all", "test/test_server.py": SERVER_TEST}
    snapshot = _snapshot(tmp_path, files, "python_roots: [python]\n")
    outcome = _outcome(snapshot, "test/test_server.py")
    (entry,) = entry_points(snapshot, outcome, "test/test_server.py")
    assert entry == EntryPoint("python/pkg/cli.py", "launched by `popen_launch_server`", "pkg.cli")
    files_, _ = runtime_reach(snapshot, entry)
    assert files_[:2] == ("python/pkg/__init__.py", "python/pkg/cli.py")
    assert "python/pkg/srt/engine.py" in files_


def test_a_server_started_with_python_m_in_the_test_names_its_module(tmp_path: Path) -> None:
    test = SERVER_TEST.replace(
        'popen_launch_server("m", "http://127.0.0.1:2000", 60, other_args=["--tp", "2"])',
        'subprocess.Popen(["python3", "-m", "sglang.launch_server", "--tp", "2"])')
    files = {"python/sglang/__init__.py": "", "python/sglang/launch_server/__main__.py": "",
             "python/sglang/launch_server/__init__.py": "import sglang.srt\n",
             "python/sglang/srt.py": "", "test/test_server.py": test}
    snapshot = _snapshot(tmp_path, files, "python_roots: [src, python]\n")
    outcome = _outcome(snapshot, "test/test_server.py")
    (entry,) = entry_points(snapshot, outcome, "test/test_server.py")
    assert entry == EntryPoint("python/sglang/launch_server/__main__.py",
                               "`python -m sglang.launch_server`", "sglang.launch_server")
    loaded, candidates = runtime_reach(snapshot, entry)
    assert loaded == ("python/sglang/__init__.py", "python/sglang/launch_server/__init__.py",
                      "python/sglang/launch_server/__main__.py", "python/sglang/srt.py")
    assert "src/sglang/launch_server.py" in candidates  # it would have run instead


def test_a_server_running_in_the_tests_process_starts_no_program(tmp_path: Path) -> None:
    test = SERVER_TEST.replace(
        'popen_launch_server("m", "http://127.0.0.1:2000", 60, other_args=["--tp", "2"])',
        'Engine(model_path="m", tp_size=2)')
    snapshot = _snapshot(tmp_path, {**PKG, "test/test_server.py": test}, "python_roots: [python]\n")
    outcome = _outcome(snapshot, "test/test_server.py")
    assert outcome.servers and entry_points(snapshot, outcome, "test/test_server.py") == ()
    assert unknown_launches(snapshot, outcome, "test/test_server.py") == ()


# ----- command lines, words and values -------------------------------------------------------

def _words(line: str) -> list[Strings]:
    return [None if w == "?" else tuple(w.split("|")) for w in line.split()]


@pytest.mark.parametrize(("line", "expected"), [
    ("python3 train.py --tp 2", [("script", ("train.py",), "python3")]),
    ("/usr/bin/python3.11 -u -X dev -W ignore x.py", [("script", ("x.py",), "/usr/bin/python3.11")]),
    ("python -mpkg.main", [("module", ("pkg.main",), "python -m")]),
    ("python -m", [("unknown", None, "python -m")]),
    ("python -c", [("unknown", None, "python -c")]),
    ("python", []),
    ("python -", []),
    ("python is required", []),
    ("'python3 a.py'", [("script", ("a.py",), "python3")]),
    ("CUDA=1 nohup python3 a.py ; env X=1 python3 b.py && c arg", [
        ("script", ("a.py",), "python3"), ("script", ("b.py",), "python3"),
        ("command", ("c",), "")]),
    ("pkill -9 python; true; ray job submit --x=1 -- python3 t.py", [
        ("command", ("pkill",), ""), ("command", ("true;",), ""), ("command", ("ray",), ""),
        ("script", ("t.py",), "python3")]),
    ("? python3 a.py", []),
    ("sh -c ? && sh -c", [("command", ("sh",), "")]),
    ("python3 a.py|b.py", [("script", ("a.py", "b.py"), "python3")]),
    ("python3 a.py|-b", []),
    ("torchrun --nproc-per-node=8 --nnodes 2 --standalone -m pkg.train", [
        ("module", ("pkg.train",), "torchrun -m")]),
    ("torchrun --nproc_per_node ? x.py", [("script", ("x.py",), "torchrun")]),
    ("torchrun --standalone", []),
    ("torchrun ?", [("unknown", None, "torchrun")]),
])
def test_a_command_line_starts_the_programs_at_its_heads(
        line: str, expected: list[tuple[str, Strings, str]]) -> None:
    found = _programs(_words(line))
    assert [(p.kind, p.names, p.prefix) for p in found] == expected


def test_a_shell_given_a_command_line_starts_its_programs() -> None:
    found = _programs([("bash",), ("-c",), ("python3 a.py && torchrun b.py", "python3 c.py")])
    assert [(p.kind, p.names, p.prefix) for p in found] == [
        ("script", ("a.py",), "python3"), ("script", ("b.py",), "torchrun"),
        ("script", ("c.py",), "python3")]


def test_a_launch_call_keeps_plain_strings_of_its_arguments() -> None:
    text = Text((Chunk("a"), Choice(((Chunk("b"),), (Chunk("c"),)), "x"), Chunk(".py")))
    call = ExternalCall("U.go", "go", (text, Const(1)), {"k": Text.of("v")}, "t.py", 3, (),
                        "t.py", True, definition=("h.py", 1), partial=True)
    found = launch_call(call, [Word("python3", (None,) * 7), Opaque("sys.executable", None),
                               Opaque("x", None), Branches((), "c", None)])
    assert found == LaunchCall("go", True, ("h.py", 1), (("ab.py", "ac.py"), None),
                               (("k", ("v",)),), (("python3",), ("python3",), None, None), True)


@pytest.mark.parametrize(("value", "expected"), [
    (Text.of("x"), ("x",)),
    (Text((Chunk("a"), Hole("h"))), None),
    (Text((Choice(((Hole("h"),), (Chunk("b"),)), "x"),)), None),
    (Alternatives("c", None, False, (Text.of("a"), Text.of("b"), Text.of("a"))), ("a", "b")),
    (Alternatives("c", None, False, (Text.of("a"), Unknown("u"))), None),
    (Text(tuple(Choice(((Chunk("a"),), (Chunk("b"),)), "x") for _ in range(4))), None),
    (Alternatives("c", None, False, tuple(Text.of(str(n)) for n in range(9))), None),
    (Const(None), None),
])
def test_the_strings_a_value_may_be(value: Text | Unknown | Const, expected: Strings) -> None:
    assert _strings(value) == expected


DEFINITIONS = '''\
def many(a, *args, name="x", **kw):
    """python3 docstring.py"""
    run(f"python3 {name}{name}{name}.py ")
    run(f"python3 --opt={kw} {a!r}.py")
    run([f"python3", f"{a}", "-m", f"{name}.main"])
    run([f"{a}-{name}"])
'''


def test_command_lines_of_a_definition_stand_for_its_parameters(tmp_path: Path) -> None:
    test = _test("many('--colocate', *os.environ['A'], name='n')", "from tests.defs import many")
    snapshot, outcome = _run(tmp_path, test, {"tests/defs.py": DEFINITIONS})
    (call,) = outcome.calls
    assert call.definition == ("tests/defs.py", 1) and call.partial and not call.named
    # `name` is given; `{a!r}` is not the text of `a`; `-m n.main` is not the repository's;
    # `--colocate-n` is no program
    assert unknown_launches(snapshot, outcome, "tests/test_e2e.py") == (
        "launched by `many`: `nnn.py` is not a file of the repository (from its root)",
        "launched by `many` starts a program built at run time",
    )


def test_a_word_with_too_many_possible_values_is_not_known() -> None:
    param = _Param("p")
    assert _fill(("a", param), {"p": ("1", "2")}) == ("a1", "a2")
    assert _fill((param, param, param), {"p": ("1", "2", "3")}) is None
    assert _fill(None, {}) is None


def test_a_definition_that_cannot_be_read_names_no_program(tmp_path: Path) -> None:
    snapshot = _snapshot(tmp_path, {"broken.py": "def (:\n", "fine.py": "x = 1\n"})
    assert _definition(snapshot, "broken.py", 1) is None
    assert _definition(snapshot, "fine.py", 1) is None  # no function there
    call = LaunchCall("go", True, ("broken.py", 1), (), (), (), False)
    outcome = launch.LaunchOutcome(calls=(call,))
    assert unknown_launches(snapshot, outcome, "fine.py") == (
        "launched by `go`, whose code names no program it starts",)
