"""Module loading and sharing runs across interpreters: what a run read of the modules'
state, and what makes that state change under a later run."""

from __future__ import annotations

import textwrap

import pytest

from bot.analysis.evaluate import Footprint, Interpreter
from bot.analysis.source import Module, parse_python
from bot.analysis.values import Unknown, python


def _interp(files: dict[str, str], env: dict[str, str | None] | None = None,
            platform: frozenset[str] = frozenset(), unreadable: frozenset[str] = frozenset(),
            ) -> Interpreter:
    parsed: dict[str, Module] = {}
    for path, text in files.items():
        module = parse_python(path, textwrap.dedent(text))
        assert isinstance(module, Module)
        parsed[path] = module
    return Interpreter(lambda p: None if p in unreadable else parsed.get(p),
                       lambda p: p in parsed, env=env, platform=platform)


def _footprint(interp: Interpreter, path: str = "main.py") -> Footprint | None:
    """The footprint of a run of ``path`` (after the one that loaded its modules: loading
    changes the interpreter's module state, so that run leaves none)."""
    for _ in range(2):
        result = interp.run(path)
        assert result.error is None and not result.exhausted
    return interp.footprint


# ----- loading -------------------------------------------------------------------------------

def test_a_module_in_a_folder_without_init_is_imported_from_its_folder() -> None:
    interp = _interp({"main.py": "from tools import helper\nfrom tools.none import x\nR = helper.X\n",
                      "tools/helper.py": "X = 1\n"})
    interp.run("main.py")
    variables = interp.module_globals("__main__")
    assert python(variables["R"]) == 1
    assert isinstance(variables["x"], Unknown)


def test_a_from_import_is_looked_up_when_first_read_and_then_kept() -> None:
    interp = _interp({"main.py": "from mod import LATER\n", "mod.py": "LATER = 1\n"})
    interp.run("main.py")
    assert "mod.py" not in interp.run("main.py").modules  # bound, never read
    interp = _interp({"main.py": "from mod import LATER\nR = LATER\n", "mod.py": "LATER = 1\n"})
    assert "mod.py" in interp.run("main.py").modules
    assert python(interp.module_globals("__main__")["R"]) == 1


# ----- what makes a run's result differ elsewhere ------------------------------------------

def test_a_run_of_repository_modules_only_leaves_a_footprint_of_them() -> None:
    interp = _interp({"main.py": "import helpers\nR = helpers.FLAGS\n", "helpers.py": "FLAGS = ['--a']\n"})
    footprint = _footprint(interp)
    assert footprint is not None
    assert set(footprint.modules) == {"helpers.py"}
    assert interp.holds(footprint)


@pytest.mark.parametrize("change", [
    "helpers.FLAGS.append('--b')",  # a list a loaded module holds
    "helpers.FLAGS += ['--b']",
    "helpers.FLAGS[0] = '--b'",
    "helpers.TABLE['k'] = 2",  # a dict
    "helpers.CONFIG.size = 2",  # an instance
    "helpers.Config.size = 2",  # a class
    "helpers.remember(1)",  # a default of a function
    "helpers.bump()",  # a global, through the module's own function
])
def test_changing_a_loaded_modules_state_makes_the_interpreter_dirty(change: str) -> None:
    helpers = """\
        from dataclasses import dataclass

        @dataclass
        class Config:
            size: int = 1

        FLAGS = ['--a']
        TABLE = {'k': 1}
        CONFIG = Config()
        COUNT = 0

        def remember(x, seen=[]):
            seen.append(x)

        def bump():
            global COUNT
            COUNT = 1
        """
    interp = _interp({"main.py": f"import helpers\n{change}\n", "helpers.py": helpers})
    version = interp.version
    assert _footprint(interp) is None
    assert interp.dirty
    assert interp.version > version
    assert not interp.holds(Footprint({}))


def test_what_a_run_makes_itself_is_not_module_state() -> None:
    interp = _interp({"main.py": "import helpers\nX = list(helpers.FLAGS)\nX.append('--b')\n",
                      "helpers.py": "FLAGS = ['--a']\n"})
    assert _footprint(interp) is not None
    assert not interp.dirty


def test_a_module_whose_top_level_read_the_platform_makes_every_run_using_it_dependent() -> None:
    files = {"main.py": "import helpers\nR = helpers.GPU\n",
             "helpers.py": "import os\nGPU = os.environ.get('MILES_PLATFORM')\n"}
    interp = _interp(files, env={"MILES_PLATFORM": "rocm"}, platform=frozenset({"MILES_PLATFORM"}))
    assert _footprint(interp) is None  # loaded already, still dependent
    assert python(interp.module_globals("__main__")["R"]) == "rocm"
    elsewhere = _interp(files, env={"MILES_PLATFORM": "rocm"})  # not a platform variable there
    assert _footprint(elsewhere) is not None


def test_a_loaded_modules_import_first_read_by_a_run_is_recorded_with_what_it_came_from() -> None:
    interp = _interp({"main.py": "import helpers\nR = helpers.sizes()\n",
                      "helpers.py": "from consts import SIZES\ndef sizes():\n    return SIZES\n",
                      "consts.py": "SIZES = [1, 2]\n"})
    interp.run("main.py")
    assert interp.footprint is None  # the module's state changed while the run read it
    footprint = _footprint(interp)
    assert footprint is not None
    name, resolved, deps = footprint.modules["helpers.py"]  # type: ignore[misc]
    assert (name, resolved, deps) == ("helpers", frozenset({"SIZES"}), frozenset({"consts.py"}))
    assert "consts.py" in footprint.modules
    assert python(interp.module_globals("__main__")["R"]) == [1, 2]


def test_a_footprint_notes_a_module_that_cannot_be_read_and_holds_only_where_it_cannot() -> None:
    files = {"main.py": "import mod\nR = mod.A\n", "mod.py": "A = 1\n"}
    missing = _interp(files, unreadable=frozenset({"mod.py"}))
    footprint = _footprint(missing)
    assert footprint is not None and footprint.modules == {"mod.py": None}
    assert missing.holds(footprint)
    present = _interp(files)
    assert _footprint(present) is not None
    assert not present.holds(footprint)
    assert not present.holds(Footprint({"other.py": ("other", frozenset(), frozenset())}))


def test_another_interpreter_holds_a_footprint_once_it_loaded_the_same_modules() -> None:
    files = {"main.py": "import helpers\nR = helpers.FLAGS\n",
             "other.py": "import helpers\nN = len(helpers.FLAGS)\n",  # the same module, read alike
             "helpers.py": "FLAGS = ['--a']\n"}
    footprint = _footprint(_interp(files, env={"MILES_PLATFORM": "cuda"}))
    assert footprint is not None
    rocm = _interp(files, env={"MILES_PLATFORM": "rocm"})
    assert not rocm.holds(footprint)
    assert _footprint(rocm, "other.py") is not None
    assert rocm.holds(footprint)
