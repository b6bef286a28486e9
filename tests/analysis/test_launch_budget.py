"""The evaluator's budget goes only to tests that could start a launch."""

from __future__ import annotations

from pathlib import Path

from bot.analysis import launch
from bot.analysis.markers import Marker
from bot.analysis.snapshot import Snapshot
from bot.analysis.tree import FolderTree
from config.repo import defaults

LOOP = "while True:\n    pass\n"


def _outcome(root: Path, files: dict[str, str | bytes]) -> tuple[launch.LaunchOutcome, Snapshot]:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        data = text.encode() if isinstance(text, str) else text
        (root / path).write_bytes(data)
    snap = Snapshot(FolderTree(root), defaults())
    marker = Marker("tests/test_a.py", 1, "register_rocm_ci", "rocm", 0, 60.0, "stage-c-4-gpu-mi350",
                    (), False, None, None)
    return launch.analyze_launch(snap, marker), snap


def test_a_test_that_mentions_no_launch_nor_flag_is_not_evaluated(tmp_path: Path) -> None:
    outcome, snap = _outcome(tmp_path, {
        "tests/helpers.py": "def helper():\n    return 1\n",
        "tests/test_a.py": "from tests.helpers import helper\n" + LOOP,
    })
    assert outcome.no_launch and outcome.findings == [] and outcome.launches == ()
    assert launch._cache(snap).interpreters == {}  # no evaluator was even made


def test_a_longer_option_that_starts_like_a_flag_is_no_mention(tmp_path: Path) -> None:
    # a conversion tool's options: neither is --num-layers nor --colocate
    tool = ('"""usage: convert [--num-layers-at-start-in-bf16 N]"""\n'
            'OPTS = ["--num-layers_total", "--colocate-weights"]\n')
    outcome, _ = _outcome(tmp_path, {
        "tools/convert.py": tool,
        "tests/test_a.py": "from tools.convert import OPTS\n" + LOOP,
    })
    assert outcome.no_launch and outcome.findings == []


def test_a_mention_in_the_test_or_an_imported_module_gets_it_evaluated(tmp_path: Path) -> None:
    cases: list[dict[str, str | bytes]] = [
        {"tests/test_a.py": LOOP + 'cmd = "--tensor-model-parallel-size 2"\n'},
        {"tests/test_a.py": LOOP + 'cmd = "--num-layers=4"\n'},
        {"tests/test_a.py": LOOP + "cmd = ['--colocate']\n"},
        {"tests/harness.py": "def run(args):\n    execute_train(args)\n",
         "tests/test_a.py": "from tests.harness import run\n" + LOOP},
        {"tests/harness.py": b"\xff\xfe not text",
         "tests/test_a.py": "from tests.harness import run\n" + LOOP},
    ]
    for files in cases:
        outcome, _ = _outcome(tmp_path / str(len(files)) / str(id(files)), files)
        assert not outcome.no_launch
        assert [f.rule for f in outcome.findings] == ["PAR019"]  # the loop spent the budget


def test_what_each_file_mentions_is_read_once_per_snapshot(tmp_path: Path) -> None:
    _, snap = _outcome(tmp_path, {"tests/helpers.py": "x = 1\n",
                                  "tests/test_a.py": "import tests.helpers\n"})
    mentions = snap.derived(launch._MENTIONS)
    assert mentions.files == {"tests/test_a.py": False, "tests/helpers.py": False}
