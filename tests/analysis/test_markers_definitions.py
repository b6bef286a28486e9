"""Markers read as the repository defines them: its own signature and suite composition."""

from __future__ import annotations

from pathlib import Path

from bot.analysis.definitions import Definitions
from bot.analysis.markers import BUILTIN, Marker
from bot.analysis.snapshot import Snapshot
from bot.analysis.source import Module
from bot.analysis.tree import FolderTree
from config.repo import defaults

# SGLang's layout: the package lives under `python/`, which is no import root by default;
# the marker functions return nothing and a dataclass property composes the suite.
SGLANG_REGISTER = '''
from dataclasses import dataclass
from typing import Optional


@dataclass
class CIRegistry:
    est_time: float
    stage: Optional[str] = None
    runner_config: Optional[str] = None
    suite: Optional[str] = None

    @property
    def effective_suite(self) -> Optional[str]:
        if self.stage is not None and self.runner_config is not None:
            return f"{self.stage}-test-{self.runner_config}"
        return self.suite


def register_amd_ci(
    est_time: float,
    suite: Optional[str] = None,
    nightly: bool = False,
    disabled: Optional[str] = None,
    *,
    stage: Optional[str] = None,
    runner_config: Optional[str] = None,
):
    return None
'''

SGLANG_IMPORT = "from sglang.test.ci.ci_register import register_amd_ci\n"


def _snapshot(root: Path, files: dict[str, str]) -> Snapshot:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return Snapshot(FolderTree(root), defaults())


def _read(root: Path, files: dict[str, str], test: str = "test/test_a.py") -> tuple[list[Marker], list[str]]:
    markers, problems = _snapshot(root, files).markers(test)
    return markers, [p.message for p in problems]


def _defined_in(root: Path, module: str, definition: str, markers: str) -> tuple[list[str | None], list[str]]:
    """The suites of a test's markers, and what each REG002 says before its colon, where the
    marker is defined in ``module`` (a dotted name under the repository root)."""
    found, problems = _read(root, {
        module.replace(".", "/") + ".py": definition,
        "tests/test_a.py": f"from {module} import register_rocm_ci\n{markers}",
    }, "tests/test_a.py")
    return [m.suite for m in found], [p.split(":")[0] for p in problems]


def _sglang(root: Path, markers: str) -> tuple[list[Marker], list[str]]:
    """The markers of one test of an SGLang-like repository."""
    return _read(root, {"python/sglang/test/ci/ci_register.py": SGLANG_REGISTER,
                        "test/test_a.py": SGLANG_IMPORT + markers})


def test_sglang_positional_suite_and_stage_forms_compose_as_its_collector_does(tmp_path: Path) -> None:
    markers, problems = _sglang(
        tmp_path,
        'register_amd_ci(300, "stage-b-test-1-gpu-small-amd", False, "flaky")\n'
        'register_amd_ci(est_time=60, suite="extra-a-test-1-gpu-large-amd")\n'
        'register_amd_ci(est_time=90, stage="stage-b", runner_config="1-gpu-small-amd")\n'
        'register_amd_ci(est_time=90, stage="stage-b", runner_config="2-gpu-large-amd",\n'
        '                disabled="hangs")\n',
    )
    assert problems == []
    assert [m.suite for m in markers] == [
        "stage-b-test-1-gpu-small-amd", "extra-a-test-1-gpu-large-amd",
        "stage-b-test-1-gpu-small-amd", "stage-b-test-2-gpu-large-amd",
    ]
    assert markers[0].disabled == "flaky" and markers[3].disabled == "hangs"
    assert markers[3].disabled_line == 6


def test_reg002_names_only_what_the_definition_rejects(tmp_path: Path) -> None:
    markers, problems = _sglang(
        tmp_path,
        'register_amd_ci(est_time=60, stage="stage-b", owner="me")\n'
        'register_amd_ci(60, "s", False, None, "extra")\n'
        'register_amd_ci(stage="stage-b", runner_config="1-gpu")\n'
        'register_amd_ci(60, stage=STAGE, runner_config="1-gpu")\n',
    )
    because = ": its definition at `python/sglang/test/ci/ci_register.py:20` would reject the call."
    assert problems == [
        "`register_amd_ci` has an unknown keyword `owner`" + because,
        "`register_amd_ci` takes at most 4 positional arguments" + because,
        "`register_amd_ci` has no `est_time`" + because,
        "`register_amd_ci` argument `stage` is `STAGE`, not a literal: the CI collector reads "
        "markers without running the file, so every argument must be a literal.",
    ]
    # a stage without its runner config: the definition's own composition gives no suite; a
    # call without a required argument is not composed, nor one whose stage is not a literal
    assert [m.suite for m in markers] == [None, "s", None, None]


CUSTOM_REGISTER = '''
_SUFFIX = {"rocm": "-rocm"}


def _name(stage, runner, backend):
    return f"{stage}-{runner}{_SUFFIX[backend]}"


def register_rocm_ci(est_time, runner, /, *, stage="stage-b", disabled=None):
    return _name(stage, runner, "rocm")
'''


def test_a_definition_that_returns_its_suite_composes_it_with_its_own_suffix(tmp_path: Path) -> None:
    suites, problems = _defined_in(
        tmp_path, "tests.ci.register", CUSTOM_REGISTER,
        'register_rocm_ci(600, "4-gpu-mi350", stage="stage-c")\n'
        'register_rocm_ci(600, "8-gpu-mi350")\n'
        'register_rocm_ci(600, runner="8-gpu-mi350")\n',
    )
    assert suites == ["stage-c-4-gpu-mi350-rocm", "stage-b-8-gpu-mi350-rocm", None]
    assert problems == ["`register_rocm_ci` has an unknown keyword `runner`"]


MILES_REGISTER = '''
def register_rocm_ci(est_time: float, suite: str, *, labels: list[str], nightly: bool = False,
                     disabled: str | None = None):
    """Marker (parsed; a no-op at run time)."""
    return None
'''


def test_keyword_only_and_required_parameters_come_from_the_definition(tmp_path: Path) -> None:
    suites, problems = _defined_in(
        tmp_path, "tests.ci.ci_register", MILES_REGISTER,
        'register_rocm_ci(1600, "stage-c-4-gpu-mi350", labels=["moe"])\n'
        'register_rocm_ci(1600, "stage-c-4-gpu-mi350", True, labels=["moe"])\n'
        'register_rocm_ci(1600, "stage-c-4-gpu-mi350")\n',
    )
    assert suites == ["stage-c-4-gpu-mi350"] * 3
    assert problems == [
        "`register_rocm_ci` takes at most 2 positional arguments", "`register_rocm_ci` has no `labels`",
    ]


def test_without_a_definition_the_built_in_signature_is_used(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, {
        "tests/broken.py": "def register_rocm_ci(:\n",
        "tests/test_a.py": "from tests.missing import register_rocm_ci\n"
                           "from tests.broken import register_cuda_ci\n"
                           "from ...outside import register_cpu_ci\n"
                           "from . import helpers\n"
                           "import os\n"
                           'register_rocm_ci(1, "stage-a-1-gpu-x", owner="me")\n'
                           'register_cuda_ci(1, "stage-a-1-gpu-x", False, None)\n'
                           'register_cpu_ci(1, "stage-a-cpu")\n'
                           'register_amd_ci(1, "stage-a-1-gpu-x")\n',
    })
    module = snap.sources.module("tests/test_a.py")
    assert isinstance(module, Module)
    lookup = snap.definitions.lookup(module)
    assert all(lookup(f) is BUILTIN for f in
               ("register_rocm_ci", "register_cuda_ci", "register_cpu_ci", "register_amd_ci"))
    markers, problems = snap.markers("tests/test_a.py")
    assert [m.suite for m in markers] == [
        "stage-a-1-gpu-x", "stage-a-1-gpu-x", "stage-a-cpu", "stage-a-1-gpu-x"]
    assert [p.line for p in problems] == [6]


def test_a_definition_in_the_test_itself_or_re_exported_by_a_package_is_found(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, {
        "tests/ci/__init__.py": "from .impl import register_rocm_ci as register_rocm_ci\n"
                                "from .loop import register_cuda_ci\n",
        "tests/ci/impl.py": "def register_rocm_ci(est_time, suite, *, owner=None):\n    pass\n",
        "tests/ci/loop.py": "from .loop import register_cuda_ci\n",
        "tests/test_a.py": "from .ci import register_rocm_ci, register_cuda_ci\n"
                           'register_rocm_ci(1, "stage-a-1-gpu-x", owner="me")\n'
                           'register_cuda_ci(1, "stage-a-1-gpu-x", owner="me")\n',
        "tests/test_b.py": "def register_rocm_ci(est_time, suite, nightly, *rest, **extra):\n    pass\n"
                           'register_rocm_ci(1, "stage-a-1-gpu-x", False, "more", "args", owner="me")\n',
    })
    markers, problems = snap.markers("tests/test_a.py")
    assert [p.message.split(":")[0] for p in problems] == [
        "`register_cuda_ci` has an unknown keyword `owner`"]
    markers, problems = snap.markers("tests/test_b.py")
    assert problems == [] and markers[0].suite == "stage-a-1-gpu-x"


def test_a_suite_the_evaluator_cannot_decide_is_left_unknown(tmp_path: Path) -> None:
    markers, problems = _read(tmp_path, {
        "tests/ci.py": "import os\n\n"
                       "def register_rocm_ci(est_time, runner):\n"
                       "    return os.environ['PREFIX'] + runner\n"
                       "def register_cuda_ci(est_time, runner):\n"
                       "    while True:\n        runner += 'x'\n    return runner\n",
        "tests/test_a.py": "from tests.ci import register_rocm_ci, register_cuda_ci\n"
                           'register_rocm_ci(1, "4-gpu")\nregister_cuda_ci(1, "4-gpu")\n',
    }, "tests/test_a.py")
    assert problems == [] and [m.suite for m in markers] == [None, None]


def test_suite_composers_may_be_functions_or_static_methods(tmp_path: Path) -> None:
    markers, _ = _read(tmp_path, {
        "tests/ci.py": "class Other:\n    pass\n\n"
                       "class Names:\n"
                       "    @staticmethod\n"
                       "    def suite(stage, runner):\n        return 'unused'\n"
                       "    def suite_name(self):\n        return self.suite + '!'\n\n"
                       "def suite_of(stage, runner):\n    return stage + '/' + runner\n\n"
                       "def register_rocm_ci(est_time, *, stage, runner):\n    pass\n",
        "tests/test_a.py": "from tests.ci import register_rocm_ci\n"
                           'register_rocm_ci(1, stage="a", runner="b")\n',
    }, "tests/test_a.py")
    assert [m.suite for m in markers] == ["a/b"]


def test_each_suite_is_composed_once_per_distinct_argument(tmp_path: Path) -> None:
    lines = "".join(f'register_amd_ci(est_time={t}, stage="stage-b", runner_config="1-gpu")\n'
                    for t in range(20))
    snap = _snapshot(tmp_path, {
        "python/sglang/test/ci/ci_register.py": SGLANG_REGISTER,
        "test/test_a.py": SGLANG_IMPORT + lines,
    })
    markers, _ = snap.markers("test/test_a.py")
    assert {m.suite for m in markers} == {"stage-b-test-1-gpu"}
    assert len(snap.definitions._suites) == 1


def test_definitions_are_resolved_once_per_module(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, {
        "python/sglang/test/ci/ci_register.py": SGLANG_REGISTER,
        "test/test_a.py": SGLANG_IMPORT + 'register_amd_ci(1, "s")\n',
        "test/test_b.py": SGLANG_IMPORT + 'register_amd_ci(1, "s")\n',
    })
    definitions = snap.definitions
    assert isinstance(definitions, Definitions)
    snap.markers("test/test_a.py")
    snap.markers("test/test_b.py")
    assert definitions._modules == {
        ("absolute", "sglang.test.ci.ci_register"): "python/sglang/test/ci/ci_register.py"}


def test_composers_read_through_nested_code_and_forward_every_kind_of_parameter(tmp_path: Path) -> None:
    markers, problems = _read(tmp_path, {
        "tests/ci.py": "import os\n\n"
                       "def register_cuda_ci(est_time, *extra, tier='a', **more):\n"
                       "    def unused():\n        return tier\n"
                       "    return f'stage-{tier}-{len(extra)}-{len(more)}'\n\n"
                       "class Names:\n"
                       "    KIND = 'x'\n"
                       "    def suite_default(self):\n        return self.suite\n"
                       "    def suite_none():\n        return None\n"
                       "    def suite_name(self):\n"
                       "        return self.stage + '/'.join(['', self.runner]) + self.suffix.lower()\n\n"
                       "def register_rocm_ci(est_time, runner='r', /, *, stage, suffix='-ROCM',\n"
                       "                     suite=None):\n"
                       "    pass\n",
        "tests/test_a.py": "from tests.ci import register_rocm_ci, register_cuda_ci\n"
                           'register_rocm_ci(1, "4-gpu", stage="b")\n'
                           'register_rocm_ci(1, stage="c")\n'
                           'register_cuda_ci(1, 2, 3, tier="b", owner="me")\n',
    }, "tests/test_a.py")
    assert problems == []
    assert [m.suite for m in markers] == ["b/4-gpu-rocm", "c/r-rocm", "stage-b-0-1"]  # no *args


def test_re_exports_are_followed_to_the_definition(tmp_path: Path) -> None:
    files = {f"tests/ci/r{i}.py": f"from .r{i + 1} import register_rocm_ci\n" for i in range(6)}
    files["tests/ci/r6.py"] = "def register_rocm_ci(est_time, suite, *, owner=None):\n    pass\n"
    files["tests/test_a.py"] = ("from tests.ci.r0 import register_rocm_ci\n"
                                'register_rocm_ci(1, "stage-a-1-gpu-x", owner="me")\n')
    files["tests/test_b.py"] = ("from tests.ci.r3 import register_rocm_ci\n"
                                'register_rocm_ci(1, "stage-a-1-gpu-x", owner="me")\n')
    snap = _snapshot(tmp_path, files)
    assert snap.markers("tests/test_a.py")[1] == snap.markers("tests/test_b.py")[1] == []
