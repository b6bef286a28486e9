"""Flag parsing and the PAR rules on launches built directly."""
# ruff: noqa: E501

from __future__ import annotations

from pathlib import Path

import pytest

from bot.analysis import launch as launch_module
from bot.analysis import par
from bot.analysis.engine import audit
from bot.analysis.findings import Severity
from bot.analysis.flags import (
    Branches,
    Opaque,
    Setting,
    Word,
    has_flag,
    parse,
    shell_text,
    tokenize,
)
from bot.analysis.tree import FolderTree
from bot.analysis.values import Choice, Chunk, Hole, Origin, Text, Unknown
from tests.analysis.launch_fixtures import BASE, write

ORIGIN = Origin("t.py", 1)


def _launch(flags: str, gpus: int | None = 4, **kw: object) -> par.Launch:
    parsed = parse(tokenize(Text.of(flags, ORIGIN).parts))
    return par.Launch("t.py", "t.py", 1, parsed.settings, parsed.opaque, gpus, **kw)  # type: ignore[arg-type]


def _rules(flags: str, gpus: int | None = 4, **kw: object) -> list[str]:
    return [v.rule for v in par.evaluate(_launch(flags, gpus, **kw)).violations]


A4 = "--actor-num-nodes 1 --actor-num-gpus-per-node 4 --colocate "


def test_tokenize_words_holes_and_choices() -> None:
    parts = (Chunk("--a 1 --b", ORIGIN), Hole("x", ORIGIN), Chunk(" ", ORIGIN),
             Choice(((Chunk("--c 2 ", ORIGIN),), ()), "cond", ORIGIN), Chunk("--d", ORIGIN),
             Choice(((Chunk("x", ORIGIN),), (Chunk("y", ORIGIN),)), "glued", ORIGIN), Hole("q", ORIGIN, quiet=True),
             Chunk(" ", ORIGIN), Hole("q2", ORIGIN, quiet=True))
    tokens = tokenize(parts)
    assert isinstance(tokens[0], Word) and tokens[0].text == "--a"
    assert isinstance(tokens[2], Opaque) and tokens[2].text == "x"
    assert isinstance(tokens[3], Branches) and tokens[3].cond == "cond"
    assert isinstance(tokens[4], Opaque) and not tokens[4].quiet
    assert isinstance(tokens[5], Opaque) and tokens[5].quiet
    assert has_flag(tokens) and has_flag(tokens, frozenset({"--c"}))
    assert not has_flag(tokens, frozenset({"--zzz"}))


def test_parse_later_flag_wins_and_spellings() -> None:
    parsed = parse(tokenize(Text.of(
        "--tensor-model-parallel-size 2 --tensor-model-parallel-size=4 --sglang-expert-parallel-size 2 "
        "--unknown-flag --sglang-ep-size x --train-backend fsdp --num-layers", ORIGIN).parts))
    assert parsed.settings["tp"].value == 4
    assert isinstance(parsed.settings["sglang_ep"].value, Unknown)
    assert parsed.settings["backend"].value == "fsdp"
    assert "layers" not in parsed.settings


def test_parse_values_that_are_not_known() -> None:
    parts = (Chunk("--tensor-model-parallel-size ", ORIGIN), Hole("f()", ORIGIN), Chunk(" --pipeline-model-parallel-size ", ORIGIN),
             Choice(((Chunk("2", ORIGIN),), (Chunk("4", ORIGIN),)), "c", ORIGIN), Chunk(" --other ", ORIGIN), Hole("g()", ORIGIN),
             Chunk(" ", ORIGIN), Choice(((Chunk("--context-parallel-size 2 --colocate ", ORIGIN),),
                                    (Chunk("--context-parallel-size 2 ", ORIGIN), Hole("h", ORIGIN))), "k", ORIGIN))
    parsed = parse(tokenize(parts))
    assert isinstance(parsed.settings["tp"].value, Unknown)
    assert isinstance(parsed.settings["pp"].value, Unknown)
    assert parsed.settings["cp"].value == 2
    assert isinstance(parsed.settings["colocate"].value, Unknown)
    assert [o.text for o in parsed.opaque] == ["h"]


def test_shell_model_script() -> None:
    text = shell_text("# model\nMODEL_ARGS=(\n  --num-layers 40 \\\n  --hidden-size ${H}\n)\nOTHER=1\n", "m.sh")
    parsed = parse(tokenize(text.parts))
    assert parsed.settings["layers"].value == 40
    assert parsed.settings["layers"].origin == Origin("m.sh", 3)
    whole = parse(tokenize(shell_text("--num-layers 8 # comment\n", "m.sh").parts))
    assert whole.settings["layers"].value == 8


RULES_CASES: list[tuple[str, int | None, list[str]]] = [
    (A4 + "--tensor-model-parallel-size 2 --context-parallel-size 4", 4, ["PAR001"]),
    (A4 + "--pipeline-model-parallel-size 2 --expert-model-parallel-size 4", 4, ["PAR002"]),
    ("--actor-num-nodes 2 --actor-num-gpus-per-node 4 --colocate", 4, ["PAR003"]),
    ("--actor-num-gpus-per-node 4 --rollout-num-gpus 2", 8, []),
    ("--actor-num-gpus-per-node 4", 4, []),
    (A4, None, []),
    (A4 + "--rollout-num-gpus-per-engine 8", 4, ["PAR004"]),
    (A4 + "--rollout-num-gpus-per-engine 4 --sglang-ep-size 2", 4, []),
    (A4 + "--rollout-num-gpus-per-engine 4 --sglang-ep-size 8", 4, ["PAR005"]),
    # SGLang sets its EP to its TP with an expert-spanning all-to-all backend (or Waterfill)
    (A4 + "--rollout-num-gpus-per-engine 4 --sglang-ep-size 8 --sglang-moe-a2a-backend deepep", 4, []),
    (A4 + "--rollout-num-gpus-per-engine 4 --sglang-ep-size 8 --sglang-moe-a2a-backend mori", 4, []),
    (A4 + "--rollout-num-gpus-per-engine 4 --sglang-ep-size 8 --sglang-enable-waterfill", 4, []),
    (A4 + "--rollout-num-gpus-per-engine 4 --sglang-ep-size 8 --sglang-moe-a2a-backend none", 4, ["PAR005"]),
    (A4 + "--rollout-num-gpus-per-engine 4 --sglang-ep-size 8 --num-experts 6 "
     "--sglang-moe-a2a-backend deepep", 4, ["PAR018"]),
    (A4 + "--train-backend fsdp --dp-replicate-size 0", 4, ["PAR007"]),
    (A4 + "--train-backend fsdp --tensor-model-parallel-size 4 --context-parallel-size 2", 4, ["PAR008"]),
    (A4 + "--pipeline-model-parallel-size 4 --num-layers 6 --account-for-embedding-in-pipeline-split "
     "--account-for-loss-in-pipeline-split", 4, []),
    (A4 + "--pipeline-model-parallel-size 4 --num-layers 6 --account-for-loss-in-pipeline-split", 4, ["PAR009"]),
    (A4 + "--pipeline-model-parallel-size 4 --num-layers 7 --decoder-first-pipeline-num-layers 1", 4, []),
    (A4 + "--pipeline-model-parallel-size 4", 4, []),
    (A4 + "--tensor-model-parallel-size 4", 4, []),
    (A4 + "--tensor-model-parallel-size 4 --num-attention-heads 8 --num-query-groups 2", 4, []),
    (A4 + "--expert-model-parallel-size 4", 4, []),
    (A4 + "--global-batch-size 8 --micro-batch-size 1", 4, []),
    (A4 + "--global-batch-size 8", 4, []),
    (A4 + "--tensor-model-parallel-size 3 --global-batch-size 8 --micro-batch-size 1", 4, ["PAR001", "PAR002"]),
    (A4 + "--context-parallel-size 2", 4, []),
    (A4 + "--pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 --overlap-p2p-comm", 4, []),
    (A4 + "--pipeline-model-parallel-size 1 --num-virtual-stages-per-pipeline-rank 2 --overlap-p2p-comm", 4, ["PAR015"]),
    (A4 + "--rollout-num-gpus-per-engine 4 --sglang-dp-size 2 --sglang-enable-dp-attention "
     "--num-attention-heads 6 --num-query-groups 1", 4, []),
    (A4 + "--rollout-num-gpus-per-engine 4 --num-attention-heads 8 --num-query-groups 2", 4, []),
    (A4 + "--rollout-num-gpus-per-engine 4 --num-attention-heads 8 --num-query-groups 3", 4, ["PAR017"]),
    (A4 + "--rollout-num-gpus-per-engine 4 --sglang-dp-size 3 --sglang-enable-dp-attention "
     "--num-attention-heads 8", 4, []),
    (A4 + "--rollout-num-gpus-per-engine 4 --sglang-ep-size 4", 4, []),
]


@pytest.mark.parametrize(("flags", "gpus", "expected"), RULES_CASES, ids=[c[0][-60:] for c in RULES_CASES])
def test_rules(flags: str, gpus: int | None, expected: list[str]) -> None:
    assert _rules(flags, gpus) == expected


def test_unknown_all_to_all_backend_leaves_par005_unchecked() -> None:
    parts = (*Text.of(A4 + "--rollout-num-gpus-per-engine 4 --sglang-ep-size 8 "
                      "--sglang-moe-a2a-backend ", ORIGIN).parts, Hole("backend()", ORIGIN))
    parsed = parse(tokenize(parts))
    outcome = par.evaluate(par.Launch("t.py", "t.py", 1, parsed.settings, parsed.opaque, 4))
    assert [v.rule for v in outcome.violations] == []
    assert [rules for _, rules, _ in outcome.needs.values()] == [["PAR005"]]


def test_slime_flavor() -> None:
    flags = "--actor-num-gpus-per-node 4 --colocate --rollout-num-gpus 2 --rollout-num-gpus-per-engine 4 " \
            "--sglang-pp-size 2 --sglang-ep-size 4"
    view = par.View(_launch(flags, flavor="slime"))
    assert view.rollout() == 2
    assert view.sglang_tp() == 2
    assert par.View(_launch("--rollout-num-gpus-per-engine 3 --sglang-pp-size 2", flavor="slime")).sglang_tp() is None
    assert _rules(flags, flavor="slime") == ["PAR004", "PAR005"]


def test_no_gpus_per_engine_is_no_engine_at_all() -> None:
    (found,) = par.evaluate(_launch(A4 + "--rollout-num-gpus-per-engine 0")).violations
    assert (found.rule, found.severity) == ("PAR004", None)  # the rule's own: an error
    assert found.message == "0 GPUs per engine: no rollout engine starts."
    assert _rules(A4 + "--rollout-num-gpus-per-engine -2") == ["PAR004"]


def test_an_audit_reports_zero_gpus_per_engine_with_a_fix(tmp_path: Path) -> None:
    test = """\
register_rocm_ci(600, "stage-c-4-gpu-mi350")

if __name__ == "__main__":
    execute_train(train_args="--actor-num-nodes 1 --actor-num-gpus-per-node 4 --colocate "
                  "--rollout-num-gpus-per-engine 0 ")
"""
    report = audit(FolderTree(write(tmp_path, {**BASE, "tests/test_m.py": test})))
    (found,) = [f for f in report.findings if f.rule.startswith("PAR")]
    assert (found.rule, found.severity, found.line) == ("PAR004", Severity.ERROR, 5)
    assert found.fix is not None and "--rollout-num-gpus-per-engine" in found.fix


def test_a_rule_that_cannot_do_its_arithmetic_leaves_the_others_to_report(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    def dividing(view: par.View) -> par.Violation | None:
        raise ZeroDivisionError("integer modulo by zero")

    monkeypatch.setitem(par.CHECKS, "PAR004", dividing)
    with caplog.at_level("WARNING"):
        assert _rules(A4 + "--tensor-model-parallel-size 8") == ["PAR001", "PAR002"]
    assert "rule PAR004 could not be evaluated on t.py line 1" in caplog.text


def test_warning_severities() -> None:
    found = par.evaluate(_launch(A4 + "--rollout-num-gpus-per-engine 3 --sglang-ep-size 2")).violations
    assert [(v.rule, v.severity) for v in found] == [("PAR004", Severity.WARNING), ("PAR005", Severity.WARNING)]


def test_unknown_values_are_needs_not_violations() -> None:
    launch = _launch(A4)
    launch.settings["tp"] = Setting(Unknown("f()", ORIGIN), ORIGIN, "--tensor-model-parallel-size")
    launch.settings["backend"] = Setting(Unknown("g()", None), None, "--train-backend")
    outcome = par.evaluate(launch)
    assert outcome.violations == []
    assert {k[2] for k in outcome.needs} == {"g()"}
    assert "TP? PP? CP? EP? ETP?" not in par.describe(launch)
    assert par.describe(launch).startswith("TP?")
    assert "W=4" in par.describe(launch)
    opaque = _launch("--colocate")
    opaque.opaque.append(Opaque("x()", ORIGIN))
    assert "W=?" in par.describe(opaque)
    fsdp = _launch(A4 + "--train-backend fsdp")
    assert par.describe(fsdp).startswith("FSDP r=1")
    fsdp.settings["dp_replicate"] = Setting(Unknown("r()", ORIGIN), ORIGIN, "--dp-replicate-size")
    assert par.describe(fsdp).startswith("FSDP r=?")
    assert "unknown size" in par.describe(_launch(A4, None))
    assert "an 8-GPU runner" in par.describe(_launch(A4, 8))


def test_fixes_prefer_the_named_parameter_and_skip_derived_ones() -> None:
    launch = _launch(A4 + "--pipeline-model-parallel-size 2 --expert-model-parallel-size 4")
    violations = par.evaluate(launch).violations
    assert [f.text for f in par.fixes(launch, violations, prefer=("pp",))][:1] == [
        "`--pipeline-model-parallel-size 1`"]
    named = Origin("t.py", 3, "N", "constant")
    launch.settings["ep"] = Setting(4, named, "--expert-model-parallel-size")
    launch.settings["gpus_per_node"] = Setting(4, Origin("t.py", 4, None, "computed", named),
                                                   "--actor-num-gpus-per-node")
    assert all("N = " not in f.text for f in par.fixes(launch, violations))
    unknown = _launch(A4 + "--pipeline-model-parallel-size 2 --expert-model-parallel-size 4")
    unknown.settings["pp"] = Setting(Unknown("p()", ORIGIN), ORIGIN, "--pipeline-model-parallel-size")
    assert par.evaluate(unknown).violations == []


def test_attention_split_is_not_checked_when_engines_do_not_split_into_pipeline_stages() -> None:
    heads = "--num-attention-heads 8 --num-query-groups 3 "
    assert "PAR017" in _rules(A4 + "--rollout-num-gpus-per-engine 4 " + heads)
    assert "PAR017" not in _rules(A4 + "--rollout-num-gpus-per-engine 3 --sglang-pp-size 2 " + heads,
                                  flavor="slime")


def test_fixes_are_found_for_a_runner_of_unknown_size() -> None:
    launch = _launch(A4 + "--pipeline-model-parallel-size 2 --expert-model-parallel-size 4", None)
    violations = par.evaluate(launch).violations
    assert [v.rule for v in violations] == ["PAR002"]
    assert [f.text for f in par.fixes(launch, violations)][:2] == [
        "`--expert-model-parallel-size 2`", "`--pipeline-model-parallel-size 1`"]


def test_a_value_named_once_and_used_by_two_flags_is_fixed_once() -> None:
    launch = _launch(A4 + "--tensor-model-parallel-size 2 --context-parallel-size 4")
    named = Origin("t.py", 3, "TP", "constant")
    launch.settings["tp"] = Setting(2, named, "--tensor-model-parallel-size")
    launch.settings["etp"] = Setting(2, named, "--expert-tensor-parallel-size")
    violations = par.evaluate(launch).violations
    texts = [f.text for f in par.fixes(launch, violations, limit=10)]
    assert texts.count("`TP = 1`") == 1
    assert all("expert-tensor" not in t for t in texts)


def test_fixes_never_change_a_value_that_is_not_known() -> None:
    launch = _launch(A4 + "--pipeline-model-parallel-size 2 --expert-model-parallel-size 4")
    launch.settings["sglang_ep"] = Setting(Unknown("e()", ORIGIN), ORIGIN, "--sglang-ep-size")
    violations = par.evaluate(launch).violations
    texts = [f.text for f in par.fixes(launch, violations, limit=30)]
    assert "`--pipeline-model-parallel-size 1`" in texts
    assert all("sglang" not in t for t in texts)


def test_with_unknown_text_in_the_command_fixes_change_only_flags_the_launch_sets() -> None:
    flags = "--actor-num-nodes 2 --actor-num-gpus-per-node 4 --colocate " \
            "--pipeline-model-parallel-size 2 --expert-model-parallel-size 4"
    launch = _launch(flags)
    launch.opaque.append(Opaque("more_args()", ORIGIN))
    violations = par.evaluate(launch).violations
    assert [v.rule for v in violations] == ["PAR003"]
    texts = [f.text for f in par.fixes(launch, violations, limit=30)]
    assert texts == ["`--actor-num-gpus-per-node 2`", "`--actor-num-nodes 1`"]


def test_engine_findings_with_unknown_model(tmp_path: Path) -> None:
    test = """\
from miles.utils.external_utils import command_utils

register_rocm_ci(600, "stage-c-4-gpu-mi350")
MODEL_TYPE = command_utils.pick_model()

if __name__ == "__main__":
    execute_train(train_args="--actor-num-gpus-per-node 4 --colocate --tensor-model-parallel-size 4 ")
"""
    report = audit(FolderTree(write(tmp_path, {**BASE, "tests/test_m.py": test})))
    found = [f for f in report.findings if f.rule.startswith("PAR")]
    assert [f.rule for f in found] == ["PAR019"]
    assert "command_utils.pick_model()" in found[0].message


def test_model_type_keyword_none_and_shell_script(tmp_path: Path) -> None:
    files = {
        **BASE,
        ".github/rocmbot.yml": "launch:\n  model_script: 'models/{MODEL_TYPE}.sh'\n",
        "models/big.sh": "MODEL_ARGS=(\n  --num-layers 7\n)\n",
        "tests/test_a.py": 'register_rocm_ci(600, "stage-c-4-gpu-mi350")\n'
                           'execute_train(train_args="--actor-num-gpus-per-node 4 --colocate '
                           '--pipeline-model-parallel-size 2 ", megatron_model_type="big")\n',
        "tests/test_b.py": 'register_rocm_ci(600, "stage-c-4-gpu-mi350")\n'
                           'execute_train(train_args="--actor-num-gpus-per-node 4 --colocate '
                           '--pipeline-model-parallel-size 2 ", megatron_model_type=None)\n',
        "tests/test_c.py": 'register_rocm_ci(600, "stage-c-4-gpu-mi350")\n'
                           'execute_train(train_args="--actor-num-gpus-per-node 4 --colocate '
                           '--pipeline-model-parallel-size 2 ", megatron_model_type="../x")\n',
        "tests/test_d.py": 'register_rocm_ci(600, "stage-c-4-gpu-mi350")\n'
                           'execute_train(train_args="--actor-num-gpus-per-node 4 --colocate '
                           '--pipeline-model-parallel-size 2 ", megatron_model_type="absent")\n',
    }
    report = audit(FolderTree(write(tmp_path, files)))
    found = {(f.rule, f.path) for f in report.findings if f.rule.startswith("PAR")}
    assert found == {("PAR009", "tests/test_a.py")}


def test_launch_outcome_files_name_the_model_script(tmp_path: Path) -> None:
    from bot.analysis.markers import find_markers
    from bot.analysis.snapshot import Snapshot
    from bot.analysis.source import Module
    from config.repo import defaults

    test = 'register_rocm_ci(600, "stage-c-4-gpu-mi350")\n' \
           'execute_train(train_args="--actor-num-gpus-per-node 4 --colocate", megatron_model_type="dense-36")\n'
    snap = Snapshot(FolderTree(write(tmp_path, {**BASE, "tests/test_f.py": test})), defaults())
    module = snap.sources.module("tests/test_f.py")
    assert isinstance(module, Module)
    (marker,), _ = find_markers(module, snap.config.markers)
    outcome = launch_module.analyze_launch(snap, marker)
    assert outcome.files == ("scripts/models/dense-36.py",)
    assert outcome.signature is not None


def _outcome(root: Path, test: str, files: dict[str, str], config: dict[str, object] | None = None,
             base: launch_module.LaunchOutcome | None = None) -> launch_module.LaunchOutcome:
    from bot.analysis.markers import find_markers
    from bot.analysis.snapshot import Snapshot
    from bot.analysis.source import Module
    from config.repo import RepoConfig, default_data, merge

    loaded = RepoConfig.model_validate(merge(default_data(), config or {}))
    snap = Snapshot(FolderTree(write(root, {**BASE, **files, "tests/test_f.py": test})), loaded)
    module = snap.sources.module("tests/test_f.py")
    assert isinstance(module, Module)
    (marker,), _ = find_markers(module, snap.config.markers)
    return launch_module.analyze_launch(snap, marker, base)


def test_a_model_script_without_the_model_function_gives_no_model_flags(tmp_path: Path) -> None:
    test = 'register_rocm_ci(600, "stage-c-4-gpu-mi350")\n' \
           f'execute_train(train_args="{A4}--pipeline-model-parallel-size 2", megatron_model_type="bare")\n'
    outcome = _outcome(tmp_path, test, {"scripts/models/bare.py": "LAYERS = 7\n"})
    assert outcome.files == ("scripts/models/bare.py",)
    (launch,) = outcome.launches
    assert "layers" not in launch.settings
    assert outcome.findings == []


def test_launches_of_one_shell_model_script_share_its_parsed_flags(tmp_path: Path) -> None:
    test = 'register_rocm_ci(600, "stage-c-4-gpu-mi350")\n' + "".join(
        f'execute_train(train_args="{A4}--tensor-model-parallel-size {tp}", megatron_model_type="big")\n'
        for tp in (1, 2))
    outcome = _outcome(tmp_path, test, {"models/big.sh": "MODEL_ARGS=(\n  --num-layers 8\n)\n"},
                       {"launch": {"model_script": "models/{MODEL_TYPE}.sh"}})
    first, second = outcome.launches
    assert first.settings["layers"].value == 8
    assert first.settings["tp"].value != second.settings["tp"].value
    assert first.settings["layers"] is second.settings["layers"]


def test_analyze_launch_never_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.analysis.snapshot import Snapshot
    from config.repo import defaults

    snap = Snapshot(FolderTree(write(tmp_path, BASE)), defaults())

    def boom(*args: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(launch_module, "_analyze", boom)
    from bot.analysis.markers import Marker

    marker = Marker("tests/x.py", 1, "register_rocm_ci", "rocm", 0, 1.0, "s", (), False, None, None)
    outcome = launch_module.analyze_launch(snap, marker)
    assert (outcome.findings, outcome.launches, outcome.stopped) == ([], (), True)
    assert outcome.state == "unchecked"  # not "none": what it would have found is unknown


def test_disabled_launch_config_and_budget(tmp_path: Path) -> None:
    loop = 'register_rocm_ci(600, "stage-c-4-gpu-mi350")\nwhile True:\n    pass\nexecute_train("--colocate")\n'
    files = {**BASE, "tests/test_loop.py": loop}
    report = audit(FolderTree(write(tmp_path, {**files, ".github/rocmbot.yml": "launch:\n  max_steps: 1000\n"})))
    assert [(f.rule, f.line) for f in report.findings if f.rule.startswith("PAR")] == [("PAR019", 1)]
    off = audit(FolderTree(write(tmp_path, {**files, ".github/rocmbot.yml": "launch:\n  enabled: false\n"})))
    assert [f for f in off.findings if f.rule.startswith("PAR")] == []


def test_fixes_prefer_what_the_pr_changed(tmp_path: Path) -> None:
    from bot.analysis.markers import find_markers
    from bot.analysis.snapshot import Snapshot
    from bot.analysis.source import Module
    from config.repo import defaults

    def outcome(root: Path, pp: int, base: launch_module.LaunchOutcome | None = None) -> launch_module.LaunchOutcome:
        test = ('register_rocm_ci(600, "stage-c-4-gpu-mi350")\n'
                f'execute_train(train_args="{A4}--pipeline-model-parallel-size {pp} '
                '--expert-model-parallel-size 4 ")\n')
        snap = Snapshot(FolderTree(write(root, {**BASE, "tests/test_p.py": test})), defaults())
        module = snap.sources.module("tests/test_p.py")
        assert isinstance(module, Module)
        (marker,), _ = find_markers(module, snap.config.markers)
        return launch_module.analyze_launch(snap, marker, base)

    before = outcome(tmp_path / "base", 1)
    assert before.findings == []
    plain = outcome(tmp_path / "plain", 2)
    preferred = outcome(tmp_path / "head", 2, before)
    assert plain.findings[0].fix == "`--expert-model-parallel-size 2` or `--pipeline-model-parallel-size 1`"
    assert preferred.findings[0].fix == "`--pipeline-model-parallel-size 1` or `--expert-model-parallel-size 2`"



def test_fixes_prefer_a_flag_the_pr_added(tmp_path: Path) -> None:
    def test(pp: str) -> str:
        return ('register_rocm_ci(600, "stage-c-4-gpu-mi350")\n'
                f'execute_train(train_args="{A4}{pp}--expert-model-parallel-size 4 ")\n')

    before = _outcome(tmp_path / "base", test(""), {})
    assert before.findings == []
    head = test("--pipeline-model-parallel-size 2 ")
    plain = _outcome(tmp_path / "plain", head, {})
    preferred = _outcome(tmp_path / "head", head, {}, base=before)
    assert plain.findings[0].fix == "`--expert-model-parallel-size 2` or `--pipeline-model-parallel-size 1`"
    assert preferred.findings[0].fix == "`--pipeline-model-parallel-size 1` or `--expert-model-parallel-size 2`"
