"""`rocmbot sandbox`: the simulator, the service as its App and the example PR, end to end."""

from __future__ import annotations

import io
from pathlib import Path

import httpx

from bot.cli import build_parser
from bot.cli.sandbox import REPO, TEST, run_sandbox, sandbox


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
