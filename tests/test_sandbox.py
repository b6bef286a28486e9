"""`rocmbot sandbox`: the simulator, the service as its App and the example PR, end to end."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import pytest

from bot.cli import build_parser
from bot.cli.sandbox import REPO, TEST, run_sandbox, sandbox

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_example_pr_is_analysed_and_what_was_posted_is_readable_without_a_token(tmp_path: Path) -> None:
    with sandbox(tmp_path) as box:
        box.open()
        api, n = f"{box.sim.url}/repos/{REPO}", box.pull.number
        checks = httpx.get(f"{api}/commits/{box.pull.head_sha}/check-runs").json()["check_runs"]
        comments = httpx.get(f"{api}/issues/{n}/comments").json()
        inline = httpx.get(f"{api}/pulls/{n}/comments").json()
        assert box.urls().count(box.sim.url) == 5
    assert [(c["name"], c["conclusion"]) for c in checks] == [("rocmbot / analysis", "failure")]
    assert any(c["body"].startswith("<!-- rocmbot:summary") for c in comments)
    assert [c["path"] for c in inline] == [TEST] and "PAR002" in inline[0]["body"]


@pytest.mark.slow
def test_a_command_and_a_fix_push_from_standard_input(tmp_path: Path) -> None:
    out = io.StringIO()
    commands = io.StringIO("comment /run-amd\n\nbogus\npush-fix\nquit\nshow\n")
    assert run_sandbox(commands, out, folder=str(tmp_path / "box")) == 0
    text = out.getvalue()
    opened, commented, bogus, fixed = text.split("\n> ")
    assert "rocmbot / analysis: failure" in opened and "PAR002" in opened
    assert "ROCm runs dispatched: 0" in opened and "comment TEXT" in opened
    assert commented.startswith("comment /run-amd") and "Not dispatched" in commented
    assert "ROCm runs dispatched: 0" in commented
    assert bogus.startswith("bogus") and "comment TEXT" in bogus  # the help again, nothing done
    assert fixed.startswith("push-fix") and "rocmbot / analysis: success" in fixed
    assert "ROCm runs dispatched: 1" in fixed and "rocmbot / rocm: queued" in fixed
    assert build_parser().parse_args(["sandbox", "--port", "0"]).command == "sandbox"


@pytest.mark.parametrize("missing", ["ghsim", "jsonschema"])
def test_without_the_simulator_the_command_says_how_to_install_it(missing: str) -> None:
    probe = (f"import sys; sys.modules[{missing!r}] = None; "  # its import fails as when not installed
             "from bot.cli import main; sys.exit(main(['sandbox']))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("rocmbot: error: the sandbox needs the GitHub simulator")
    assert f"({missing})" in proc.stderr and "pip install -e '.[sandbox]' -e sim" in proc.stderr


def test_the_simulator_imports_with_the_sandbox_extra_alone(tmp_path: Path) -> None:
    """No test tool among what `import ghsim` loads: the sandbox extra is enough to run it."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    sandbox = {re.split(r"[\[<>=]", spec)[0].lower().replace("-", "_") for spec in extra["sandbox"]}
    own = tomllib.loads((ROOT / "sim" / "pyproject.toml").read_text())["project"]["dependencies"]
    assert {re.split(r"[\[<>=]", spec)[0].lower().replace("-", "_") for spec in own} == sandbox
    probe = ("import json, sys, ghsim; from ghsim.webhooks.payloads import example, validate_payload; "
             "assert validate_payload('pull_request', example('pull_request', 'opened')) == []; "
             "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                           check=True, cwd=tmp_path).stdout))
    assert {"ghsim", "jsonschema"} <= loaded
    tests_only = {"pytest", "hypothesis", "schemathesis", "cmarkgfm", "pydantic_sarif", "tests"}
    assert not loaded & tests_only


@pytest.mark.slow
def test_the_reenable_walk_through_ends_with_the_suggestion_that_brings_the_test_back(tmp_path: Path) -> None:
    out = io.StringIO()
    assert run_sandbox(io.StringIO("reenable\n"), out, folder=str(tmp_path / "box")) == 0
    walk = out.getvalue().split("\n> ")[1]
    assert walk.startswith("reenable\n1. PR #2 changes the parked")
    assert "is parked ('FIXME: re-enable once this case passes on the MI350 runners.')" in walk
    assert "Comment `/run-amd disabled` to try it on ROCm." in walk
    assert "2. `/run-amd disabled` by maintainer: 1 ROCm run dispatched (stage-c-4-gpu-mi350: " \
           f"{TEST}, include_disabled=true)" in walk
    assert f"review comment on {TEST}:4:" in walk
    assert '```suggestion\n    register_rocm_ci(1800, "stage-c-4-gpu-mi350")\n    ```' in walk
    assert "ready to re-enable" in walk.split("  summary:")[1]
    assert "ROCm runs dispatched: 1" in walk  # the report of PR #2, which `show` now prints
