"""Launch resolution end to end: the vectors V1..V10 of RULES.md, twenty valid launches in
every style, change detection between two commits."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.analysis import launch
from bot.analysis.engine import analyze, audit
from bot.analysis.findings import Finding, Severity
from bot.analysis.report import Report
from bot.analysis.tree import FolderTree, GitRepository
from tests.analysis.launch_fixtures import BASE, STYLE_FILES, VECTORS, write
from tests.gitrepo import GitRepo


def _audit(tmp_path: Path, files: dict[str, str]) -> Report:
    return audit(FolderTree(write(tmp_path, {**BASE, **files})))


def _par(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.rule.startswith("PAR")]


# (vector, rule, line of the anchor in the test file, fixes named)
EXPECTED = [
    ("V1", "PAR002", 10, ["`ep_size=2`", "`pp_size=1`"]),
    ("V3", "PAR002", 16, ["`--expert-model-parallel-size 4`", "`--pipeline-model-parallel-size 1`"]),
    ("V5", "PAR007", 5, ["`DP_REPLICATE_SIZE = 2`"]),
    ("V6", "PAR009", 13, ["`--pipeline-model-parallel-size 4`"]),
    ("V7", "PAR001", 7, ["`tp_size=1`", "`cp_size=2`"]),
    ("V8", "PAR006", 8, ["add `--sglang-enable-dp-attention`", "`sglang_dp_size=1`"]),
    ("V9", "PAR003", 6, ["add `--colocate`"]),
    ("V10", "PAR003", 10, ["add `--actor-num-gpus-per-node 4`"]),
]


@pytest.mark.parametrize(("name", "rule", "line", "fixes"), EXPECTED, ids=[e[0] for e in EXPECTED])
def test_vector_reports_its_error_at_the_line_that_sets_the_value(
    tmp_path: Path, name: str, rule: str, line: int, fixes: list[str]
) -> None:
    report = _audit(tmp_path, VECTORS[name])
    (path,) = VECTORS[name]
    found = _par(report)
    assert [(f.rule, f.path, f.line) for f in found] == [(rule, path, line)]
    assert found[0].severity is Severity.ERROR
    assert found[0].test == path
    assert found[0].fix == " or ".join(fixes)


@pytest.mark.parametrize("name", ["V2", "V4", "V8-ok"])
def test_valid_vector_reports_nothing(tmp_path: Path, name: str) -> None:
    assert _par(_audit(tmp_path, VECTORS[name])) == []


def test_v1_message_and_details_carry_the_numbers(tmp_path: Path) -> None:
    (finding,) = _par(_audit(tmp_path, VECTORS["V1"]))
    assert finding.message == (
        "world_size (4) is not divisible by expert_tensor_model_pipeline_parallel size (8)")
    assert "TP2 PP2 CP1 EP4 ETP1, W=4 on a 4-GPU runner" in finding.details[0]
    assert "after Ray has started" in finding.details[2]
    assert "1 x 4 x 2 = 8" in finding.details[1]


def test_v10_uses_the_default_of_eight_gpus_per_node(tmp_path: Path) -> None:
    (finding,) = _par(_audit(tmp_path, VECTORS["V10"]))
    assert "needs 8 GPUs" in finding.message and "has 4" in finding.message


def test_v1_launch_table(tmp_path: Path) -> None:
    report = _audit(tmp_path, VECTORS["V1"])
    (table,) = report.tables
    assert table.header == ("TP", "PP", "CP", "EP", "ETP", "DP", "W", "runner GPUs",
                            "rollout engines", "verdict")
    assert table.rows == (("2", "2", "1", "4", "1", "1", "4", "4", "1 x 4 GPUs", "PAR002"),)


def test_twenty_valid_launches_in_every_style_report_no_error(tmp_path: Path) -> None:
    report = audit(FolderTree(write(tmp_path, STYLE_FILES)))
    errors = [f for f in report.findings if f.severity is not Severity.INFO]
    assert errors == []
    rows = [row for table in report.tables for row in table.rows]
    valid = [row for row in rows if row[-1] == "ok"]
    assert len(valid) == 20
    unresolved = {(f.path, f.rule) for f in report.findings}
    assert unresolved == {
        ("tests/e2e/megatron/test_s12_unresolved.py", "PAR019"),
        ("tests/e2e/megatron/test_s13_guarded.py", "PAR019"),
    }


def test_unresolved_value_names_the_expression(tmp_path: Path) -> None:
    report = audit(FolderTree(write(tmp_path, STYLE_FILES)))
    (finding,) = [f for f in report.findings if (f.path or "").endswith("test_s12_unresolved.py")]
    assert '`int(os.environ.get("TP_SIZE", "2"))`' in finding.message
    assert finding.line == 7
    assert "PAR001" in finding.message


def test_platform_switch_follows_the_marker(tmp_path: Path) -> None:
    report = audit(FolderTree(write(tmp_path, STYLE_FILES)))
    tables = {t.title: t.rows for t in report.tables}
    rocm = tables["Launches of `tests/e2e/scripts/test_s07_script.py` (rocm, stage-c-4-gpu-mi350)"]
    cuda = tables["Launches of `tests/e2e/scripts/test_s07_script.py` (cuda, stage-c-8-gpu-h200)"]
    assert rocm[0][8] == "2 x 2 GPUs"  # the ROCm script halves the engine size
    assert cuda[0][8] == "1 x 4 GPUs"


# ----- change detection ---------------------------------------------------------------------

def _pr(tmp_path: Path, base: dict[str, str], head: dict[str, str]) -> Report:
    repo = GitRepo(tmp_path / "repo")
    repo.write_all({**BASE, **base})
    first = repo.commit("base")
    repo.write_all(head)
    second = repo.commit("head")
    with GitRepository(repo.root) as git:
        return analyze(git.tree(first), git.tree(second))


def _entry(report: Report, path: str) -> tuple[str, list[str]]:
    (entry,) = [t for t in report.tests if t.path == path]
    return entry.change, entry.reasons


def test_changed_call_site_is_a_parallelism_change(tmp_path: Path) -> None:
    v2 = VECTORS["V2"]["tests/e2e/megatron/test_v2.py"]
    report = _pr(tmp_path, {"tests/e2e/megatron/test_x.py": v2},
                 {"tests/e2e/megatron/test_x.py": v2.replace("ep_size=2", "ep_size=4")})
    assert _entry(report, "tests/e2e/megatron/test_x.py") == ("parallelism", ["ep 2 -> 4"])
    assert [f.rule for f in _par(report)] == ["PAR002"]
    # the run would fail after taking its GPUs: held, not selected
    assert report.selected == [] and [(h.test.path, h.test.tier, h.rule) for h in report.held] == [
        ("tests/e2e/megatron/test_x.py", "direct", "PAR002")]


def test_a_parallelism_change_to_a_valid_layout_is_selected_without_findings(tmp_path: Path) -> None:
    v2 = VECTORS["V2"]["tests/e2e/megatron/test_v2.py"]
    report = _pr(tmp_path, {"tests/e2e/megatron/test_x.py": v2},
                 {"tests/e2e/megatron/test_x.py": v2.replace("ep_size=2", "ep_size=1")})
    assert _entry(report, "tests/e2e/megatron/test_x.py") == ("parallelism", ["ep 2 -> 1"])
    assert _par(report) == []
    assert [s.path for s in report.selected] == ["tests/e2e/megatron/test_x.py"]


def test_harness_only_change_is_a_parallelism_change(tmp_path: Path) -> None:
    v2 = VECTORS["V2"]["tests/e2e/megatron/test_v2.py"]
    harness = BASE["tests/e2e/megatron/_common.py"]
    report = _pr(tmp_path, {"tests/e2e/megatron/test_x.py": v2}, {
        "tests/e2e/megatron/_common.py": harness.replace(
            '"--expert-tensor-parallel-size 1 "', '"--expert-tensor-parallel-size 2 "'),
    })
    change, reasons = _entry(report, "tests/e2e/megatron/test_x.py")
    assert (change, reasons) == ("parallelism", ["etp 1 -> 2"])


def test_model_script_only_change_is_a_parallelism_change(tmp_path: Path) -> None:
    v2 = VECTORS["V2"]["tests/e2e/megatron/test_v2.py"]
    report = _pr(tmp_path, {"tests/e2e/megatron/test_x.py": v2}, {
        "scripts/models/qwen3.5-35B-A3B.py": BASE["scripts/models/qwen3.5-35B-A3B.py"].replace(
            "--num-layers 40", "--num-layers 41"),
    })
    change, reasons = _entry(report, "tests/e2e/megatron/test_x.py")
    assert (change, reasons) == ("parallelism", ["layers 40 -> 41"])
    assert [f.rule for f in _par(report)] == ["PAR009"]


def test_unrelated_harness_change_is_affected_not_parallelism(tmp_path: Path) -> None:
    v2 = VECTORS["V2"]["tests/e2e/megatron/test_v2.py"]
    harness = BASE["tests/e2e/megatron/_common.py"]
    report = _pr(tmp_path, {"tests/e2e/megatron/test_x.py": v2}, {
        "tests/e2e/megatron/_common.py": harness.replace("--n-samples-per-eval-prompt 1",
                                                         "--n-samples-per-eval-prompt 2"),
    })
    assert _entry(report, "tests/e2e/megatron/test_x.py")[0] == "affected"


def test_compare_sentences() -> None:
    empty = launch.LaunchOutcome.empty()
    one = launch.LaunchOutcome(signature=((("ep", 4), ("colocate", True)),))
    two = launch.LaunchOutcome(signature=((("ep", 2), ("colocate", False)),
                                          (("ep", 2), ("colocate", None))))
    assert launch.compare(empty, empty) == []
    assert launch.compare(empty, one) == []
    assert launch.compare(one, empty) == []
    assert launch.compare(one, two) == [
        "launches 1 -> 2", "launch 1: ep 4 -> 2", "launch 1: colocate on -> off"]
    assert launch.compare(two, one)[-1] == "launch 1: colocate off -> on"
    three = launch.LaunchOutcome(signature=((("ep", 2), ("colocate", None)),))
    assert launch.compare(one, three) == ["ep 4 -> 2", "colocate on -> unset"]


MARK = 'register_rocm_ci(600, "stage-c-4-gpu-mi350")\n'
A4 = "--actor-num-nodes 1 --actor-num-gpus-per-node 4 --colocate "


def test_the_same_launch_made_twice_is_checked_once(tmp_path: Path) -> None:
    call = f'execute_train(train_args="{A4}--tensor-model-parallel-size 2 ")\n'
    report = _audit(tmp_path, {"tests/test_twice.py": MARK + call + call})
    (table,) = report.tables
    assert len(table.rows) == 1 and table.rows[0][-1] == "ok"


def test_arguments_that_are_not_text_add_no_flags(tmp_path: Path) -> None:
    call = (f'execute_train(train_args=["{A4}", "--tensor-model-parallel-size 2 "], '
            'num_gpus_per_node=4, extra=None)\n')
    (table,) = _audit(tmp_path, {"tests/test_args.py": MARK + call}).tables
    assert table.rows[0][:7] == ("2", "1", "1", "1", "2", "2", "4")


def test_a_launch_call_without_flags_is_not_a_launch(tmp_path: Path) -> None:
    report = _audit(tmp_path, {"tests/test_none.py": MARK + 'execute_train(train_args="")\n'})
    assert report.tables == [] and _par(report) == []


def test_model_flags_given_on_the_command_line_stand_when_the_model_is_unknown(tmp_path: Path) -> None:
    test = ("from miles.utils.external_utils import command_utils\n" + MARK +
            "MODEL_TYPE = command_utils.pick_model()\n"
            f'execute_train(train_args="{A4}--num-layers 7 --pipeline-model-parallel-size 2 ")\n')
    report = _audit(tmp_path, {"tests/test_m.py": test})
    assert "PAR009" in [f.rule for f in _par(report)]


def test_a_separate_rollout_of_unknown_size_shows_no_engines(tmp_path: Path) -> None:
    call = 'execute_train(train_args="--actor-num-nodes 1 --actor-num-gpus-per-node 4 ")\n'
    (table,) = _audit(tmp_path, {"tests/test_e.py": MARK + call}).tables
    assert table.rows[0][8] == "-"


def test_a_violation_no_single_change_fixes_is_reported_at_the_launch(tmp_path: Path) -> None:
    call = ('execute_train(train_args="--colocate --pipeline-model-parallel-size 2 '
            '--expert-model-parallel-size 4 ")\n')
    (found,) = _par(_audit(tmp_path, {"tests/test_n.py": MARK + "X = 1\n" + call}))
    assert (found.rule, found.path, found.line, found.fix) == ("PAR003", "tests/test_n.py", 3, None)


def test_the_outcome_says_which_rules_each_launch_skipped(tmp_path: Path) -> None:
    from bot.analysis.par import CHECKS
    from bot.analysis.snapshot import Snapshot
    from config.repo import defaults

    root = write(tmp_path, {**BASE, **STYLE_FILES})
    snapshot = Snapshot(FolderTree(root), defaults())
    outcomes = {}
    for path in ("tests/e2e/megatron/test_s12_unresolved.py", "tests/e2e/megatron/test_s13_guarded.py",
                 "tests/e2e/megatron/test_s14_harness.py"):
        (marker,) = [m for m in snapshot.markers(path)[0] if m.backend == "rocm"]
        outcomes[path] = launch.analyze_launch(snapshot, marker)
    unresolved, guarded, checked = outcomes.values()
    assert unresolved.skipped == (frozenset({"PAR001", "PAR002", "PAR010", "PAR011"}),)
    assert all(s == frozenset(CHECKS) for s in guarded.skipped) and guarded.skipped
    assert checked.skipped == (frozenset(),) and not checked.stopped
    assert launch.LaunchOutcome.empty().skipped == ()
