"""Never guess, never drop: no PAR error or warning is ever derived from a value that went
through a condition the evaluator cannot decide.

Each example is a launch that holds every rule, then changes made only under undecided
conditions (appends, ``+=``, assignments, conditional expressions, dict items, environment
writes, early returns, ``match`` cases), each to a value that may break a rule. Whatever
the undecided conditions would pick, the PAR rules only see a value that came from such
a branch, so the only findings allowed are PAR019 (not checked)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.analysis.engine import audit
from bot.analysis.findings import Severity
from bot.analysis.report import Report
from bot.analysis.tree import FolderTree

WORKFLOW = 'jobs: {t: {steps: [{run: "run --suite stage-c-4-gpu-mi350"}]}}\n'

BASE = [
    "--actor-num-nodes 1", "--actor-num-gpus-per-node 4", "--colocate",
    "--tensor-model-parallel-size 2", "--pipeline-model-parallel-size 1",
    "--rollout-num-gpus-per-engine 2", "--num-layers 4", "--num-attention-heads 8",
]

# changes that would break at least one rule on a 4-GPU runner
CHANGES = [
    ("--tensor-model-parallel-size", "3"), ("--pipeline-model-parallel-size", "3"),
    ("--actor-num-gpus-per-node", "8"), ("--actor-num-nodes", "2"),
    ("--expert-model-parallel-size", "16"), ("--context-parallel-size", "4"),
    ("--rollout-num-gpus-per-engine", "3"), ("--sglang-dp-size", "4"),
    ("--train-backend", "fsdp"), ("--dp-replicate-size", "3"), ("--num-layers", "7"),
    ("--num-attention-heads", "5"), ("--rollout-num-gpus", "9"), ("--sglang-ep-size", "8"),
]

SHAPES = ["append", "iadd", "assign", "ifexp", "dict", "environ", "early_return", "match",
          "else_append", "join_choice"]


def _change(index: int, shape: str, flag: str, value: str) -> tuple[str, str]:
    """(code run before the launch, words added to the command) for one change."""
    cond = f'probe("c{index}")'
    word = f"{flag} {value}"
    if shape == "append":
        return f"if {cond}:\n    args.append({word!r})\n", ""
    if shape == "iadd":
        return f"if {cond}:\n    args += [{flag!r}, {value!r}]\n", ""
    if shape == "else_append":
        return f"if {cond}:\n    pass\nelse:\n    args.extend([{flag!r}, {value!r}])\n", ""
    if shape == "assign":
        return f"m{index} = ''\nif {cond}:\n    m{index} = {word!r}\n", f"{{m{index}}}"
    if shape == "ifexp":
        return f"m{index} = {word!r} if {cond} else None\n", f"{{m{index} or ''}}"
    if shape == "dict":
        return (f"opts{index} = {{}}\nif {cond}:\n    opts{index}[{flag!r}] = {value!r}\n"
                f"for k, v in opts{index}.items():\n    args.append(k + ' ' + v)\n"), ""
    if shape == "environ":
        return (f"if {cond}:\n    os.environ['V{index}'] = {word!r}\n",
                f"{{os.environ.get('V{index}', '')}}")
    if shape == "early_return":
        return (f"def f{index}():\n    if {cond}:\n        return {word!r}\n    return ''\n",
                f"{{f{index}()}}")
    if shape == "match":
        return (f"m{index} = ''\nmatch {cond}:\n    case 'x':\n        m{index} = {word!r}\n",
                f"{{m{index}}}")
    assert shape == "join_choice"
    return (f"w{index} = ['--seed 1']\nif {cond}:\n    w{index}.append({word!r})\n",
            f"{{' '.join(w{index})}}")


def _test_file(changes: list[tuple[str, tuple[str, str]]]) -> str:
    lines = ["import os", "", 'register_rocm_ci(600, "stage-c-4-gpu-mi350")', "",
             f"args = {BASE!r}"]
    words = []
    for index, (shape, (flag, value)) in enumerate(changes):
        code, added = _change(index, shape, flag, value)
        lines.append(code)
        if added:
            words.append(added)
    tail = " ".join(words)
    lines.append(f'execute_train(train_args=" ".join(args) + f" {tail} ")')
    return "\n".join(lines) + "\n"


def _audit(source: str) -> Report:
    """The audit of a repository holding one test file (and a workflow naming its suite)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / ".github/workflows").mkdir(parents=True)
        (root / ".github/workflows/ci.yml").write_text(WORKFLOW)
        (root / "tests").mkdir()
        (root / "tests/test_launch.py").write_text(source)
        return audit(FolderTree(root))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SHAPES), st.sampled_from(CHANGES)), min_size=1,
                max_size=4))
def test_no_par_finding_comes_from_a_value_an_undecided_condition_chose(
        changes: list[tuple[str, tuple[str, str]]]) -> None:
    source = _test_file(changes)
    report = _audit(source)
    wrong = [f for f in report.findings
             if f.rule.startswith("PAR") and f.severity is not Severity.INFO]
    assert wrong == [], source


def test_the_unchanged_launch_holds_every_rule() -> None:
    report = _audit(_test_file([]))
    assert [f.rule for f in report.findings] == []
    assert [row[-1] for table in report.tables for row in table.rows] == ["ok"]


def test_a_list_of_words_an_undecided_branch_changed_reaches_the_launch_as_a_choice() -> None:
    source = (
        'register_rocm_ci(600, "stage-c-4-gpu-mi350")\n'
        f"args = {BASE!r}\n"
        'if probe("x"):\n    args.append("--context-parallel-size 4")\n'
        "execute_train(train_args=args)\n"
        'runner.submit(args)\n'
    )
    report = _audit(source)
    assert {(f.rule, f.line) for f in report.findings} == {("PAR019", 3)}
    assert "`--context-parallel-size`" in report.findings[0].message
