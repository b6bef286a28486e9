"""Launches of ranks (`torchrun`, `python -m torch.distributed.run`, `mp.spawn`) and PAR003."""

from __future__ import annotations

from pathlib import Path

from bot.analysis.engine import audit
from bot.analysis.findings import Finding, Severity
from bot.analysis.report import Report
from bot.analysis.tree import FolderTree
from tests.analysis.launch_fixtures import BASE, write

MARK = 'register_rocm_ci(600, "stage-c-8-gpu-mi350")\n'
PATH = "tests/test_r.py"


def _audit(tmp_path: Path, text: str, extra: dict[str, str] | None = None) -> Report:
    return audit(FolderTree(write(tmp_path, {**BASE, PATH: text, **(extra or {})})))


def _launch(report: Report) -> str | None:
    (entry,) = [t for t in report.tests if t.path == PATH]
    return entry.launch


def _rules(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.rule in ("PAR003", "PAR019")]


def test_torchrun_of_16_ranks_on_an_8_gpu_runner_is_par003(tmp_path: Path) -> None:
    report = _audit(tmp_path, "import subprocess\nimport sys\n" + MARK + (
        "def test_parity():\n"
        "    subprocess.run([sys.executable, '-m', 'torch.distributed.run', '--standalone',\n"
        "                    '--nnodes=1', '--nproc-per-node=16', 'tests/worker.py'], check=True)\n"
    ))
    (found,) = _rules(report)
    assert (found.rule, found.severity, found.path, found.line) == (
        "PAR003", Severity.ERROR, PATH, 6)
    assert "16 ranks per node" in found.message and "has 8 GPUs" in found.message
    assert _launch(report) == "checked"


def test_torchrun_that_fits_is_checked_and_names_its_script(tmp_path: Path) -> None:
    report = _audit(tmp_path, "import subprocess\n" + MARK + (
        "N = 4\n"
        "def test_parity():\n"
        "    subprocess.check_call(f'torchrun --nproc_per_node {N} tests/worker.py --x 1',\n"
        "                          shell=True)\n"
    ), {"tests/worker.py": "print(1)\n"})
    assert _rules(report) == []
    assert _launch(report) == "checked"


def test_os_system_and_execvp_forms(tmp_path: Path) -> None:
    text = "import os\n" + MARK + (
        "if __name__ == '__main__':\n"
        "    if 'RANK' not in os.environ:\n"
        "        os.execvp('torchrun', ['torchrun', '--nproc_per_node=16', __file__])\n"
    )
    (found,) = _rules(_audit(tmp_path / "a", text))
    assert (found.rule, found.line) == ("PAR003", 5)
    text = "import os\n" + MARK + (
        "def test_x():\n"
        "    os.system('python3 -m torch.distributed.launch --nproc_per_node 9 w.py')\n"
    )
    (found,) = _rules(_audit(tmp_path / "b", text))
    assert (found.rule, found.line) == ("PAR003", 4)


def test_mp_spawn_counts_nprocs(tmp_path: Path) -> None:
    text = "import torch.multiprocessing as mp\n" + MARK + (
        "W = 16\n"
        "def _worker(rank, world):\n"
        "    pass\n"
        "def test_multi_gpu():\n"
        "    mp.spawn(_worker, args=(W,), nprocs=W, join=True)\n"
    )
    report = _audit(tmp_path / "a", text)
    (found,) = _rules(report)
    assert (found.rule, found.line) == ("PAR003", 3)  # where the count is written
    ok = _audit(tmp_path / "b", text.replace("W = 16", "W = 8"))
    assert _rules(ok) == [] and _launch(ok) == "checked"
    positional = _audit(tmp_path / "c", text.replace("nprocs=W, ", "").replace(
        "args=(W,)", "(W,), W"))
    assert [f.rule for f in _rules(positional)] == ["PAR003"]


def test_another_spawn_is_no_launch(tmp_path: Path) -> None:
    report = _audit(tmp_path, "import pexpect\n" + MARK + (
        "def test_shell():\n"
        "    pexpect.spawn('bash', timeout=16)\n"
    ))
    assert _rules(report) == [] and _launch(report) == "none"


def test_a_count_not_known_is_unchecked_with_par019(tmp_path: Path) -> None:
    text = "import os\nimport torch.multiprocessing as mp\n" + MARK + (
        "def test_multi_gpu():\n"
        "    mp.spawn(print, nprocs=int(os.environ['WORLD']))\n"
    )
    report = _audit(tmp_path, text)
    (found,) = _rules(report)
    assert found.rule == "PAR019" and "os.environ" in found.message
    assert _launch(report) == "unchecked"


def test_arguments_of_an_unexpected_type_are_unchecked(tmp_path: Path) -> None:
    text = "import torch.multiprocessing as mp\n" + MARK + (
        "def test_multi_gpu():\n"
        "    mp.spawn(print, nprocs=[8, 8])\n"
    )
    report = _audit(tmp_path / "a", text)
    (found,) = _rules(report)
    assert (found.rule, found.line) == ("PAR019", 4) and "is a list, not a whole number" in found.message
    assert _launch(report) == "unchecked"
    text = "import subprocess\n" + MARK + (
        "def test_x():\n"
        "    subprocess.run(['torchrun', '--nproc-per-node', 'many', 'w.py'])\n"
    )
    report = _audit(tmp_path / "b", text)
    (found,) = _rules(report)
    assert found.rule == "PAR019" and "`many`" in found.message
    assert _launch(report) == "unchecked"


def test_a_repository_helper_is_followed(tmp_path: Path) -> None:
    helper = (
        "import subprocess\n"
        "def run_distributed(script, gpus=2):\n"
        "    subprocess.run(['torchrun', f'--nproc-per-node={gpus}', script])\n"
    )
    text = "from miles.utils.dist_helper import run_distributed\n" + MARK + (
        "def test_x():\n"
        "    run_distributed('tests/w.py', gpus=12)\n"
    )
    report = _audit(tmp_path, text, {"miles/utils/dist_helper.py": helper})
    (found,) = _rules(report)
    assert found.rule == "PAR003" and "12 ranks" in found.message


def test_a_count_inside_a_word_not_known_is_never_taken_for_one(tmp_path: Path) -> None:
    for name, line in (("a", "    subprocess.run(['torchrun', f'--nproc-per-node={n}', 'w.py'])\n"),
                       ("b", "    subprocess.run(f'torchrun {n} w.py --x 1', shell=True)\n")):
        report = _audit(tmp_path / name, "import os\nimport subprocess\n" + MARK + (
            "def test_x():\n"
            "    n = os.environ['DIST']\n" + line))
        (found,) = _rules(report)
        assert found.rule == "PAR019" and "os.environ['DIST']" in found.message, name
        assert _launch(report) == "unchecked", name


def test_min_of_a_known_count_bounds_it(tmp_path: Path) -> None:
    text = "import json\nimport subprocess\n" + MARK + (
        "def test_x():\n"
        "    layers = json.load(open('config.json'))['num_hidden_layers']\n"
        "    n = min(GPUS, layers)\n"
        "    subprocess.run(f'torchrun --nproc-per-node {n} w.py', shell=True)\n"
    )
    ok = _audit(tmp_path / "a", text.replace("def test_x", "GPUS = 8\ndef test_x"))
    assert _rules(ok) == [] and _launch(ok) == "checked"
    over = _audit(tmp_path / "b", text.replace("def test_x", "GPUS = 16\ndef test_x"))
    (found,) = _rules(over)  # at most 16 on 8 GPUs: not known to fail
    assert found.rule == "PAR019" and _launch(over) == "unchecked"


# ----- repository tools whose parsers define parallel flags ----------------------------------

TOOL_ARGPARSE = (
    "import argparse\n"
    "def main():\n"
    "    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--tensor-parallel', dest='tp', type=int, default=1)\n"
    "    parser.add_argument('--pp', type=int, default=2)\n"
    "    parser.add_argument('--seq-length', type=int, default=128)\n"
    "    parser.parse_args()\n"
)
TOOL_LOOP = (
    "import argparse\n"
    "_NAMES = ('tp', 'pp', 'cp')\n"
    "def parse(text):\n"
    "    parser = argparse.ArgumentParser()\n"
    "    for name in _NAMES:\n"
    "        parser.add_argument(f'--{name}', type=int)\n"
    "    return parser.parse_args(text.split())\n"
)
TOOL_TYPER = (
    "from typing import Annotated\n"
    "import typer\n"
    "app = typer.Typer()\n"
    "@app.command()\n"
    "def run(nproc: Annotated[int, typer.Option(help='ranks')] = 1) -> None:\n"
    "    pass\n"
)


def _tool(tmp_path: Path, tool: str, command: str) -> Report:
    return _audit(tmp_path, "import subprocess\n" + MARK + (
        "def test_tool():\n"
        f"    subprocess.run({command!r}, shell=True, check=True)\n"
    ), {"miles/tools/__init__.py": "", "miles/tools/bench/__init__.py": "",
        "miles/tools/bench/__main__.py": tool})


def test_a_tool_flags_are_read_from_its_argparse_definitions(tmp_path: Path) -> None:
    report = _tool(tmp_path / "a", TOOL_ARGPARSE,
                   "python -m miles.tools.bench --tensor-parallel 4 --pp 4 --seq-length 99")
    (found,) = _rules(report)
    assert found.rule == "PAR003" and "16 ranks" in found.message
    ok = _tool(tmp_path / "b", TOOL_ARGPARSE, "python -m miles.tools.bench --tensor-parallel 4")
    assert _rules(ok) == [] and _launch(ok) == "checked"  # 4 x the default PP 2


def test_a_quoted_configuration_is_one_launch_each(tmp_path: Path) -> None:
    command = "python3 -m miles.tools.bench run --baseline '--tp 1' --target '--tp 4 --cp 4 --pp 1'"
    report = _tool(tmp_path, TOOL_LOOP, command)
    (found,) = _rules(report)
    assert found.rule == "PAR003" and "16 ranks" in found.message


def test_typer_options_and_their_defaults(tmp_path: Path) -> None:
    report = _tool(tmp_path / "a", TOOL_TYPER, "python -m miles.tools.bench --nproc=12")
    assert [f.rule for f in _rules(report)] == ["PAR003"]
    other = _tool(tmp_path / "b", TOOL_TYPER, "python -m miles.tools.bench --other 12")
    assert _rules(other) == [] and _launch(other) == "none"  # no parallel flag given


def test_a_tool_value_not_known_or_a_parser_not_read_is_unchecked(tmp_path: Path) -> None:
    report = _audit(tmp_path / "a", "import os\nimport subprocess\n" + MARK + (
        "def test_tool():\n"
        "    subprocess.run(f\"python -m miles.tools.bench --target '{os.environ['T']}'\",\n"
        "                   shell=True)\n"
    ), {"miles/tools/__init__.py": "", "miles/tools/bench/__init__.py": "",
        "miles/tools/bench/__main__.py": TOOL_LOOP})
    (found,) = _rules(report)
    assert found.rule == "PAR019" and "os.environ['T']" in found.message
    assert _launch(report) == "unchecked"
    broken = _tool(tmp_path / "b", TOOL_LOOP + "def broken(:\n", "python -m miles.tools.bench --tp 2")
    (found,) = _rules(broken)
    assert found.rule == "PAR019" and "miles/tools/bench/__main__.py" in found.message
    assert _launch(broken) == "unchecked"


def test_a_shell_script_the_test_runs_is_read(tmp_path: Path) -> None:
    script = "#!/bin/bash\nset -e\nNPROC=16\ntorchrun \\\n  --nproc_per_node 16 tests/w.py\n"
    text = "import subprocess\n" + MARK + (
        "def test_x():\n"
        "    subprocess.run(['bash', 'tests/run_dist.sh'], check=True)\n"
    )
    report = _audit(tmp_path / "a", text, {"tests/run_dist.sh": script})
    (found,) = _rules(report)
    assert (found.rule, found.path, found.line) == ("PAR003", "tests/run_dist.sh", 5)
    unknown = _audit(tmp_path / "b", text, {"tests/run_dist.sh": script.replace(
        "--nproc_per_node 16", "--nproc_per_node=$NPROC")})
    (found,) = _rules(unknown)
    assert found.rule == "PAR019" and "$NPROC" in found.message
    broken = _audit(tmp_path / "c", text, {"tests/run_dist.sh": "torchrun 'x\n"})
    (found,) = _rules(broken)
    assert found.rule == "PAR019" and "does not parse" in found.message
    assert _launch(broken) == "unchecked"


SPAWN = "import torch.multiprocessing as mp\n" + MARK + "def work(rank):\n    pass\n"


def test_the_forms_of_an_mp_spawn_rank_count(tmp_path: Path) -> None:
    """`nprocs` by position, missing (one rank), through `**kwargs` (not known), or of a type
    that is no count (PAR019 naming it): never a guessed count."""
    cases = {
        "def test_a():\n    mp.spawn(work, (), 16)\n": ("checked", ["PAR003"]),
        "def test_a():\n    mp.spawn(work)\n": ("checked", []),
        "def test_a():\n    mp.spawn(work, **options())\n": ("unchecked", ["PAR019"]),
        "def test_a():\n    mp.spawn(work, nprocs='4')\n": ("unchecked", ["PAR019"]),
        "def test_a():\n    mp.spawn(work, nprocs=[4])\n": ("unchecked", ["PAR019"]),
        "def test_a():\n    mp.spawn(work, nprocs=(4,))\n": ("unchecked", ["PAR019"]),
        "def test_a():\n    mp.spawn(work, nprocs=None)\n": ("unchecked", ["PAR019"]),
        "def test_a():\n    mp.spawn(work, nprocs=object())\n": ("unchecked", ["PAR019"]),
    }
    for n, (body, (state, rules)) in enumerate(cases.items()):
        report = _audit(tmp_path / str(n), SPAWN + body)
        assert (_launch(report), [f.rule for f in _rules(report)]) == (state, rules), body


def test_the_forms_of_a_torchrun_command_line(tmp_path: Path) -> None:
    """`-mtorch.distributed.run` in one word, one rank per GPU (`gpu`), a count given as a word
    not known, an option without its value, and the program after other options."""
    head = "import subprocess\nimport sys\nimport os\n" + MARK + "def test_a():\n"
    cases = {
        "    subprocess.run([sys.executable, '-mtorch.distributed.run', '--nproc-per-node', '16',"
        " 'w.py'])\n": ("checked", ["PAR003"]),
        "    subprocess.run(['torchrun', '--nproc-per-node=gpu', 'w.py'])\n": ("checked", []),
        "    subprocess.run(['torchrun', '--nproc-per-node', os.environ['N'], 'w.py'])\n":
            ("unchecked", ["PAR019"]),
        "    subprocess.run(['torchrun', '--nproc-per-node', 'many', 'w.py'])\n": ("unchecked", ["PAR019"]),
        "    subprocess.run(['torchrun', '--standalone', '--rdzv-backend', 'c10d', '--nproc-per-node'])\n":
            ("unchecked", ["PAR019"]),
    }
    for n, (body, (state, rules)) in enumerate(cases.items()):
        report = _audit(tmp_path / str(n), head + body)
        assert (_launch(report), [f.rule for f in _rules(report)]) == (state, rules), body


def test_a_tool_flag_given_with_an_equals_sign_or_not_a_number(tmp_path: Path) -> None:
    over = _tool(tmp_path / "a", TOOL_ARGPARSE, "python -m miles.tools.bench --tensor-parallel=8 --pp=2")
    assert [f.rule for f in _rules(over)] == ["PAR003"]
    word = _tool(tmp_path / "b", TOOL_ARGPARSE, "python -m miles.tools.bench --tensor-parallel two")
    assert [f.rule for f in _rules(word)] == ["PAR019"] and _launch(word) == "unchecked"
