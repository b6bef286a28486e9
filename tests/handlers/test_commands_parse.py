"""Slash-command parsing, the workflow contract check, and `rocmbot ci run` (and the template's use of it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.cli import main
from bot.cli.ci_run import disabled_reason, run
from bot.rocm.commands import parse
from bot.rocm.decide import workflow_problem
from config.repo import parse_config

TEMPLATE = Path(__file__).parents[2] / "config" / "workflows" / "rocm-targeted.yml"


@pytest.mark.parametrize(
    ("body", "kind", "paths", "force"),
    [
        ("/run-amd", "run", (), False),
        ("/run-amd --force", "run", (), True),
        ("/run-amd all", "all", (), False),
        ("/run-amd all --force", "all", (), True),
        ("/run-amd cancel", "cancel", (), False),
        ("/run-amd help", "help", (), False),
        ("/approve-amd", "approve", (), False),
        ("/run-amd tests/a.py tests/b.py tests/a.py", "paths", ("tests/a.py", "tests/b.py"), False),
        ("  /run-amd  \nplease", "run", (), False),
        ("> /run-amd all\n/run-amd help", "help", (), False),
        ("```\n/run-amd all\n```\n/run-amd cancel", "cancel", (), False),
        ("/run-amd disabled", "disabled", (), False),
        ("/run-amd disabled tests/a.py tests/b.py tests/a.py", "disabled", ("tests/a.py", "tests/b.py"),
         False),
        ("/run-amd disabled --force tests/a.py", "disabled", ("tests/a.py",), True),
        ("/run-amd tests/a.py disabled", "paths", ("tests/a.py", "disabled"), False),  # the word comes first
        ("/run-amd retry", "retry", (), False),
        ("/run-amd retry --force", "retry", (), True),
    ],
)
def test_commands_parse(body: str, kind: str, paths: tuple[str, ...], force: bool) -> None:
    command = parse(body)
    assert command is not None
    assert (command.kind, command.paths, command.force) == (kind, paths, force)


@pytest.mark.parametrize(
    ("body", "suggestion"),
    [
        ("/run-and", "/run-amd"),
        ("/runamd all", "/run-amd all"),
        ("/run-amd --bogus", "/run-amd"),
        ("/aprove-amd", "/approve-amd"),
        ("/run_amd", "/run-amd"),
        ("/run-rocm all", "/run-amd all"),
        ("/approve-amd now", "/approve-amd"),
        ("/run-amd cancel --force", "/run-amd cancel"),
        ("/rerun-amd", "/run-amd"),
        ("/runamd disabld", "/run-amd disabled"),
        ("/run-amd disabled --bogus", "/run-amd disabled"),
    ],
)
def test_near_misses_get_the_closest_command(body: str, suggestion: str) -> None:
    command = parse(body)
    assert command is not None and command.kind == "unknown" and command.suggestion == suggestion


@pytest.mark.parametrize(
    "body", ["", "LGTM", "hello /run-amd", "    /run-amd", "```\n/run-amd\n```", "/lgtm",
             # other bots' commands, in repositories rocmbot serves: left alone
             "/rerun-failed-ci", "/rerun-test tests/x.py", "/run-ci", "/approve", "/rerun-stage b",
             "/tag-and-rerun-ci", "/gpu-run"]
)
def test_other_comments_carry_no_command(body: str) -> None:
    assert parse(body) is None


def test_a_repository_can_make_more_prefixes_its_own() -> None:
    command = parse("/gpu-run all", ["/gpu-"])
    assert command is not None and command.kind == "unknown" and command.suggestion == "/run-amd all"
    assert parse("/gpu-run", ["gpu"]) is None  # a prefix is a `/word`
    assert parse("/rerun-failed-ci", ["/gpu-"]) is None


def test_the_shipped_template_satisfies_the_dispatch_contract() -> None:
    assert workflow_problem(TEMPLATE.read_bytes(), "t.yml") is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (None, "does not exist"),
        (b"on: [push]\n", "no `workflow_dispatch` trigger"),
        (b"on: workflow_dispatch\n", "does not declare the inputs `tests`, `suite`"),
        (
            b"on:\n  workflow_dispatch:\n    inputs:\n      tests: {}\n      suite: {}\n      pr_number: {}\n"
            b"      head_sha: {}\n",
            "does not declare the input `dispatch_id`",
        ),
        (b"on: [\n", "not valid YAML (line 2)"),
        (b"- a\n", "is not a workflow"),
        (
            b"true: {workflow_dispatch: {inputs: {tests: {}, suite: {}, pr_number: {}, head_sha: {}, "
            b"dispatch_id: {}}}}\n",
            "",
        ),
    ],
)
def test_workflow_contract_problems(text: bytes | None, problem: str) -> None:
    found = workflow_problem(text, "w.yml")
    if problem:
        assert found is not None and problem in found
    else:
        assert found is None


def test_ci_run_reports_each_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ok.py").write_text("print('fine')\n")
    (tmp_path / "bad.py").write_text("raise SystemExit(3)\n")
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(3600)\n")
    monkeypatch.chdir(tmp_path)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert run(["ok.py"], timeout=60, junit_path=None) == 0
    # The timeout must also let ok.py and bad.py start and end on a loaded machine.
    code = run(["ok.py", "bad.py", "slow.py", "missing.py"], timeout=8, junit_path="r.xml", suite="s")
    assert code == 1
    xml = (tmp_path / "r.xml").read_text()
    assert 'tests="4" failures="3"' in xml and 'name="slow.py"' in xml and "timed out after 8 s" in xml
    assert 'name="ok.py" time=' in xml and xml.count("<failure") == 3
    text = summary.read_text()
    assert "| `bad.py` | ❌ failed |" in text and "| `missing.py` | ❓ missing |" in text
    assert main(["ci", "run", "--tests", "ok.py", "--runner", f"{sys.executable} -u"]) == 0
    assert main(["ci", "run", "--tests", " "]) == 2
    assert os.environ["GITHUB_STEP_SUMMARY"] == str(summary)


def test_a_command_prefix_that_is_no_slash_word_is_a_problem_and_the_default_stands() -> None:
    loaded = parse_config("dispatch:\n  command_prefixes: [gpu-, /ok]\n", ".github/rocmbot.yml")
    assert loaded.config.dispatch.command_prefixes == []
    assert any("a command prefix is a `/word` with no space: 'gpu-'" in str(p)
               for p in loaded.problems)
    fine = parse_config("dispatch:\n  command_prefixes: [/gpu-]\n", ".github/rocmbot.yml")
    assert fine.config.dispatch.command_prefixes == ["/gpu-"] and not fine.problems


PARKED = ('def register_rocm_ci(*args, **kwargs):\n    pass\n\n\n'
          'register_rocm_ci(60, "stage-b-1-gpu-mi350", disabled="FIXME: flaky")\nprint("ran")\n')


@pytest.mark.parametrize(
    ("text", "suite", "reason"),
    [
        (PARKED, None, "FIXME: flaky"),
        ('register_rocm_ci(60, "s")\n', None, None),
        ('register_rocm_ci(60, "s", disabled=None)\n', None, None),
        ('register_amd_ci(60, "s", False, "sglang: 4th positional")\n', None, "sglang: 4th positional"),
        ('register_rocm_ci(60, "s", disabled=REASON)\n', None, "(its reason is not a literal)"),
        ('register_cuda_ci(60, "s", disabled="cuda only")\nregister_rocm_ci(60, "s")\n', None, None),
        ('register_rocm_ci(60, "a", disabled="x")\nregister_rocm_ci(60, "b")\n', "a", "x"),
        ('register_rocm_ci(60, "a", disabled="x")\nregister_rocm_ci(60, "b")\n', "b", None),
        ('register_rocm_ci(60, "a", disabled="x")\nregister_rocm_ci(60, "b")\n', "c", None),
        ('register_rocm_ci(60, "a", disabled="x")\nregister_rocm_ci(60, "b", disabled="y")\n', "c", "x"),
        ('if True:\n    register_rocm_ci(60, "s", disabled="not top level")\n', None, None),
        ("def broken(:\n", None, None),
    ],
)
def test_ci_run_reads_whether_a_tests_rocm_marker_is_disabled(tmp_path: Path, text: str, suite: str | None,
                                                            reason: str | None) -> None:
    (tmp_path / "t.py").write_text(text)
    assert disabled_reason(str(tmp_path / "t.py"), suite) == reason


def test_ci_run_leaves_a_disabled_test_out_unless_told_to_include_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "parked.py").write_text(PARKED)
    (tmp_path / "ok.py").write_text("print('fine')\n")
    monkeypatch.chdir(tmp_path)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert run(["parked.py", "ok.py"], timeout=60, junit_path="r.xml") == 0  # left out is not failed
    xml = (tmp_path / "r.xml").read_text()
    assert 'tests="2" failures="0" skipped="1"' in xml and xml.count("<skipped") == 1
    assert "its ROCm marker is disabled (FIXME: flaky)" in xml
    assert "| `parked.py` | ⏸️ disabled | 0 s |" in summary.read_text()
    assert "ran" not in capsys.readouterr().err
    assert main(["ci", "run", "--tests", "parked.py", "--junit", "again.xml", "--include-disabled"]) == 0
    again = (tmp_path / "again.xml").read_text()
    assert 'failures="0" skipped="0"' in again and "run although its ROCm marker is disabled" in again
    assert "ran" in capsys.readouterr().err


def test_the_template_runs_a_disabled_test_only_when_the_dispatch_says_so() -> None:
    workflow = yaml.safe_load(TEMPLATE.read_text())
    declared = workflow[True]["workflow_dispatch"]["inputs"]["include_disabled"]
    assert declared["type"] == "boolean" and declared["default"] is False and not declared["required"]
    (job,) = [j for j in workflow["jobs"].values() if "matrix" in j.get("strategy", {})]
    assert job["env"]["INCLUDE_DISABLED"] == "${{ inputs.include_disabled }}"
    (step,) = [s for s in job["steps"] if "rocmbot ci run" in s.get("run", "")]
    script = step["run"]
    for value, flag in (("true", ["--include-disabled"]), ("false", []), ("", [])):
        fake = script.replace("rocmbot ci run", 'printf "%s\\n" ci run')
        env = {"PATH": os.environ["PATH"], "INCLUDE_DISABLED": value, "TEST": "t.py", "SUITE": "s"}
        out = subprocess.run(["sh", "-ec", fake], env=env, capture_output=True, text=True, check=True).stdout
        assert out.split() == ["ci", "run", "--tests", "t.py", "--suite", "s", "--junit", "rocm-results.xml",
                               "--timeout", "7200", *flag]
