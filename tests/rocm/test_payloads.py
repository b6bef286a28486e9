"""What GitHub receives about ROCm runs, built from plain values."""

from __future__ import annotations

from bot.rocm import payloads
from bot.store.dispatch import Dispatch, JobOutcome, SelectedTest, Selection
from config.repo import DispatchConfig

H = "f" * 40
MOE = SelectedTest("tests/e2e/test_moe.py", "stage-c-4-gpu-mi350", 600, 4)


def test_the_approval_check_has_a_button_and_the_cost() -> None:
    check = payloads.approval_check(H, [MOE], "the PR author @x is not trusted", "0123456789abcdef0123")
    assert (check["name"], check["head_sha"], check["conclusion"]) == ("rocmbot / rocm", H, "action_required")
    assert check["external_id"] == "pending-0123456789abcdef"
    assert check["output"]["title"] == "Approval needed: 1 ROCm tests, about 40 GPU-minutes"
    assert check["output"]["summary"].startswith("Waiting for a maintainer: the PR author @x is not trusted.")
    (button,) = check["actions"]
    assert button["identifier"] == payloads.APPROVE_ACTION and len(button["description"]) <= 40


def test_a_refused_automatic_dispatch_is_a_failed_check() -> None:
    check = payloads.refusal_check(H, "CFG002: no workflow", "CFG002")
    assert check["conclusion"] == "failure" and check["external_id"] == "refusal-CFG002"
    assert check["output"] == {"title": "CFG002: ROCm runs not dispatched", "summary": "CFG002: no workflow"}
    assert payloads.refusal_check(H, "why", None)["external_id"] == "refusal-none"


def test_a_dispatch_s_check_follows_its_run() -> None:
    record = Dispatch("d" * 16, "o/r", 1, H, MOE.suite, [MOE.path], 40.0, "dev", "completed", "success", 5,
                      "https://github.com/o/r/actions/runs/5", 9, 0.0)
    queued = payloads.queued_check(record)
    assert (queued["status"], queued["external_id"], queued["head_sha"]) == ("queued", "d" * 16, H)
    done = payloads.run_check_update(record, {MOE.path: JobOutcome(MOE.path, 1, "completed", "success", None,
                                                                   60.0)})
    assert "head_sha" not in done and "name" not in done
    assert (done["conclusion"], done["details_url"]) == ("success", record.run_url)
    assert done["output"]["title"] == f"1 ROCm test on {MOE.suite}: success (1 passed)"
    assert payloads.CANCELLED_CHECK["conclusion"] == "cancelled"
    assert payloads.approved_check("lead")["output"]["title"] == "Approved by @lead"


def test_replies_name_who_may_and_carry_their_marker() -> None:
    config = DispatchConfig(maintainers=["boss"])
    waiting = payloads.waiting_reply("over budget", config)
    assert waiting.startswith("Waiting for a maintainer's approval: over budget. People with maintain")
    assert "`boss`" in waiting
    marker = payloads.reply_marker(7, payloads.digest("/run-amd x"))
    body = payloads.marked(payloads.unknown_reply("/run-amdx", "/run-amd"), marker)
    assert body.endswith("\n\n" + marker) and marker.startswith("<!-- rocmbot:reply 7:")
    counted = payloads.counted("Not dispatched: no", 3, payloads.answer_marker(H, "abc"))
    assert "_The same answer to 3 commands on this head._" in counted
    assert counted.endswith(f"<!-- rocmbot:answer {H[:12]}:abc -->")
    assert payloads.refused_reply("why") == "Not dispatched: why"


def test_help_shows_the_head_s_selection() -> None:
    none = payloads.help_reply(DispatchConfig(), None)
    assert none.startswith(payloads.HELP) and none.endswith("This head has no selected ROCm tests.")
    selection = Selection("o/r", 1, H, "dev", [MOE], [], 40.0, None, "selected")
    shown = payloads.help_reply(DispatchConfig(), selection)
    assert "This head's selection: 1 tests, about 40 GPU-minutes:" in shown
    assert shown.endswith(f"- `{MOE.path}` on `{MOE.suite}`")
