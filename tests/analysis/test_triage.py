"""A failed job's log explained: one vector per class, in the formats the tools print, and
the logs that cannot be read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.analysis.findings import Finding, Severity
from bot.analysis.triage import (
    MAX_LOG_BYTES,
    LogUnavailableError,
    classify,
    decisive,
    packaged,
    patterns,
    read_log,
)
from bot.cli import main
from config.repo import FailureRule, validate_failures
from tests.gitrepo import GitRepo

STAMP = "2026-12-01T10:41:07.1234567Z "

MEGATRON = """\
(MegatronTrainRayActor pid=8811) Traceback (most recent call last):
  File "/__w/miles/miles/miles/backends/megatron_utils/initialize.py", line 61, in init
    mpu.initialize_model_parallel(
  File "/usr/local/lib/python3.12/dist-packages/megatron/core/parallel_state.py", line 791, in \
initialize_model_parallel
    raise RuntimeError(
RuntimeError: world_size (4) is not divisible by expert_tensor_model_pipeline_parallel size (8)
##[error]Process completed with exit code 1.
"""

SGLANG = """\
[2026-12-01 10:41:07] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2912, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/sgl-workspace/sglang/python/sglang/srt/layers/quantization/fp8.py", line 480, in create_weights
    raise ValueError(
ValueError: tp_size 2 must be divisible by ep_size 4
"""

OOM = """\
[rank2]: Traceback (most recent call last):
[rank2]:   File "/__w/miles/miles/train.py", line 88, in <module>
[rank2]:     train(args)
[rank2]: torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total \
capacity of 191.98 GiB of which 1.21 GiB is free.
"""

RUNNER = """\
Running tests/e2e/test_x.py
##[error]The runner has received a shutdown signal. This can happen when the runner service is \
stopped, or a manually started runner is canceled.
##[error]The operation was canceled.
"""

PYTEST = """\
tests/test_units.py::test_a PASSED
tests/test_units.py::test_b FAILED
=========================== short test summary info ============================
FAILED tests/test_units.py::test_b - KeyError: 'rollout_batch_size'
========================= 1 failed, 1 passed in 3.21s ==========================
"""

NEW = """\
Traceback (most recent call last):
  File "/__w/slime/slime/slime/ray/rollout.py", line 120, in generate
    raise ValueError("bad sample")
ValueError: bad sample
Traceback (most recent call last):
  File "/__w/slime/slime/train.py", line 10, in <module>
    main()
  File "/__w/slime/slime/slime/utils/data.py", line 77, in load
    return rows[index]
IndexError: list index out of range
"""


def _log(text: str) -> str:
    return read_log("".join(STAMP + line + "\n" for line in text.splitlines()).encode())


def _par(rule: str, message: str, fix: str) -> Finding:
    return Finding(rule, Severity.ERROR, "tests/e2e/test_x.py", 9, message, fix=fix,
                   test="tests/e2e/test_x.py")


def test_megatrons_assertion_with_the_findings_numbers_is_predicted() -> None:
    par002 = _par("PAR002", "world_size (4) is not divisible by expert_tensor_model_pipeline_parallel "
                  "size (8)", "`ep_size=2` or `pp_size=1`")
    result = classify(_log(MEGATRON), [par002])
    assert (result.kind, result.rule, result.fix) == ("predicted", "PAR002", "`ep_size=2` or `pp_size=1`")
    assert result.excerpt == (
        "RuntimeError: world_size (4) is not divisible by expert_tensor_model_pipeline_parallel size (8)",
        "at miles/backends/megatron_utils/initialize.py:61 in init",
        "Process completed with exit code 1.",
    )
    # other numbers: not the failure that finding foretold
    other = _par("PAR002", "world_size (8) is not divisible by expert_tensor_model_pipeline_parallel "
                 "size (16)", "x")
    assert classify(_log(MEGATRON), [other]).kind == "new"
    # a disabled test's finding says so first; the upstream message still matches
    disabled = _par("PAR002", "This test is disabled, and would fail this way when re-enabled: "
                    + par002.message, "x")
    assert classify(_log(MEGATRON), [disabled]).kind == "predicted"


def test_sglangs_message_is_predicted_by_par005() -> None:
    par005 = _par("PAR005", "tp_size 2 must be divisible by ep_size 4", "`--ep-size 2`")
    result = classify(_log(SGLANG), [par005])
    assert (result.kind, result.rule) == ("predicted", "PAR005")
    assert result.excerpt[0] == "ValueError: tp_size 2 must be divisible by ep_size 4"
    assert result.excerpt[1].startswith(
        "at /sgl-workspace/sglang/python/sglang/srt/layers/quantization/fp8.py:480")


def test_a_rocm_out_of_memory_error_is_infrastructure() -> None:
    result = classify(_log(OOM), [])
    assert (result.kind, result.pattern) == ("infrastructure", "device-out-of-memory")
    assert result.excerpt[0].startswith("torch.OutOfMemoryError: HIP out of memory.")
    assert result.excerpt[1] == "at train.py:88 in <module>"
    assert result.fix is not None and "/run-amd retry" in result.fix


def test_a_runner_shutdown_is_infrastructure() -> None:
    result = classify(_log(RUNNER), [])
    assert (result.kind, result.pattern) == ("infrastructure", "runner-lost")
    assert result.excerpt[-1] == "The operation was canceled."


def test_pytests_summary_is_the_excerpt_and_a_failure_seen_before_is_known() -> None:
    found = decisive(_log(PYTEST))
    assert found.pytest == ("FAILED tests/test_units.py::test_b - KeyError: 'rollout_batch_size'",)
    result = classify(_log(PYTEST), [])
    assert result.kind == "new" and result.excerpt == found.pytest
    assert result.signature is not None
    again = classify(_log(PYTEST.replace("3.21s", "4.02s")), [], seen={result.signature})
    assert again.kind == "known"


def test_a_log_that_names_no_known_error_is_new_with_its_last_exception() -> None:
    result = classify(_log(NEW), [])
    assert result.kind == "new" and result.rule is None and result.pattern is None
    assert result.excerpt == ("IndexError: list index out of range", "at slime/utils/data.py:77 in load")


def test_a_placement_that_never_comes_is_predicted_only_with_a_par003_finding() -> None:
    text = _log("(autoscaler +1m2s) Warning: The following resource request cannot be scheduled right "
                "now: {'GPU': 1.0, 'CPU': 1.0}.\n##[error]The job running on runner x has exceeded the "
                "maximum execution time of 360 minutes.")
    assert classify(text, []).kind == "new"
    par003 = _par("PAR003", "This launch needs 8 GPUs but its runner has 4.", "`num_gpus_per_node=4`")
    result = classify(text, [par003])
    assert (result.kind, result.rule, result.pattern) == ("predicted", "PAR003", "placement-never-scheduled")


def test_a_missing_module_a_pin_finding_names_is_predicted() -> None:
    text = _log("Traceback (most recent call last):\n  File \"/__w/m/m/x.py\", line 1, in <module>\n"
                "    import numba\nModuleNotFoundError: No module named 'numba'")
    pin = Finding("PIN003", Severity.ERROR, ".github/workflows/ci.yml", 12, "`numba==0.65.1` is installed "
                  "by one install path and missing from another", fix="add it to both")
    assert classify(text, []).kind == "new"
    result = classify(text, [pin])
    assert (result.kind, result.rule) == ("predicted", "PIN003")


@pytest.mark.parametrize("data, why", [
    (b"", "the log is empty"),
    (b"  \n\n", "the log is empty"),
    (bytes(range(256)) * 100, "the log is not text"),
    (b"\x00" * 5000 + b"RuntimeError: x", "the log is not text"),
])
def test_a_log_that_is_not_text_is_unavailable(data: bytes, why: str) -> None:
    with pytest.raises(LogUnavailableError, match=why):
        read_log(data)


def test_a_huge_or_truncated_log_is_read_from_its_end() -> None:
    noise = (STAMP + "step 1 loss 0.5 " + "x" * 200 + "\n").encode() * 40_000  # 9 MB
    text = read_log(noise + _log(OOM).encode())
    assert len(text.encode()) <= MAX_LOG_BYTES
    assert classify(text, []).kind == "infrastructure"
    cut = _log(MEGATRON).encode()[:-60]  # the download stopped mid-line
    assert classify(read_log(cut), []).excerpt[0].startswith("RuntimeError: world_size (4)")


def test_every_packaged_pattern_matches_its_vectors_and_no_other_class() -> None:
    rules = packaged()
    assert rules and all(p.vectors for p in rules)
    for p in rules:
        for vector in p.vectors:
            assert p.regex.search(vector), (p.id, vector)
            clashing = [o.id for o in rules if o.id != p.id and o.kind != p.kind and o.regex.search(vector)]
            assert not clashing, (p.id, clashing)


def test_a_repositorys_patterns_are_validated_and_replace_packaged_ids() -> None:
    own = validate_failures([{"id": "device-out-of-memory", "pattern": "never matches ^$x",
                              "class": "infrastructure", "explanation": "off"},
                             {"id": "flaky-hub", "pattern": "hub hiccup", "class": "infrastructure",
                              "explanation": "the hub hiccuped", "vectors": ["hub hiccup at 3"]}])
    assert isinstance(own[0], FailureRule) and own[0].kind == "infrastructure"
    chosen = patterns(own)
    assert [p.id for p in chosen].count("device-out-of-memory") == 1
    assert classify(_log(OOM), [], rules=chosen).kind == "new"
    assert classify(_log("hub hiccup at 3"), [], rules=chosen).pattern == "flaky-hub"
    with pytest.raises(ValueError, match="not a valid regular expression"):
        validate_failures([{"id": "x", "pattern": "(", "class": "infrastructure", "explanation": "e"}])


def test_triage_command_classifies_a_saved_log_as_the_service_would(
    git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from bot.cli.example import BASE_FILES

    git_repo.write_all(BASE_FILES)
    git_repo.write("tests/e2e/megatron/test_qwen35_moe.py",
                   BASE_FILES["tests/e2e/megatron/test_qwen35_moe.py"].replace("ep_size=2,", "ep_size=4,"))
    git_repo.commit()
    log = tmp_path / "job.log"
    log.write_text(MEGATRON)
    args = ["triage", "--repo", str(git_repo.root), "--rev", "HEAD", "--test", "test_qwen35_moe.py", str(log)]
    assert main([*args, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["class"], doc["rule"]) == ("predicted", "PAR002")
    assert "ep_size=2" in doc["fix"]
    assert main(args) == 0
    assert "predicted by PAR002" in capsys.readouterr().out
    log.write_bytes(b"")
    assert main(args) == 0
    assert capsys.readouterr().out.endswith("log not available: the log is empty\n")
    assert main([*args[:-1], str(tmp_path / "gone.log")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main([*args[:5], "--test", "nope.py", str(log)]) == 2


def test_the_decisive_lines_skip_what_is_between_and_a_traceback_cut_short() -> None:
    text = _log("Traceback (most recent call last):\n  File \"/__w/m/m/x.py\", line 3, in <module>\n"
                "    run()\n"  # the log ends before the exception line: the frame alone is no excerpt
                "=========================== short test summary info ============================\n"
                "FAILED tests/test_a.py::test_one - AssertionError\n"
                "  (a wrapped line of the reason)\n"
                "FAILED tests/test_a.py::test_two - AssertionError\n"
                "========================= 2 failed in 1.00s =========================\n")
    found = decisive(text)
    assert found.pytest == ("FAILED tests/test_a.py::test_one - AssertionError",
                            "FAILED tests/test_a.py::test_two - AssertionError")
    assert found.exception is None and found.frame is None


def test_a_missing_module_no_pin_finding_names_is_not_predicted() -> None:
    text = _log("ModuleNotFoundError: No module named 'numba'")
    pin = Finding("PIN003", Severity.ERROR, ".github/workflows/ci.yml", 12, "`flash-attn==2.8.0` is "
                  "installed by one install path and missing from another", fix="add it to both")
    assert classify(text, [pin]).kind == "new"
