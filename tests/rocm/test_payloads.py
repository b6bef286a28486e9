"""What GitHub receives about ROCm runs, built from plain values."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.rocm import payloads
from bot.store.dispatch import Dispatch, Explanation, JobOutcome, SelectedTest, Selection
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
    made = payloads.queued_check(record)  # made late, for a run that has ended: in its state
    assert (made["status"], made["conclusion"], made["external_id"], made["head_sha"]) == (
        "completed", "success", "d" * 16, H)
    assert made["details_url"] == record.run_url
    for status, shown in (("queued", "queued"), ("dispatching", "queued"), ("in_progress", "in_progress")):
        check = payloads.queued_check(replace(record, status=status, conclusion=None))
        assert check["status"] == shown and "conclusion" not in check
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


def test_a_list_in_a_reply_names_its_first_items_and_counts_the_rest() -> None:
    assert payloads.capped(["a", "b"]) == ["a", "b"]
    names = [f"p{n}" for n in range(25)]
    assert payloads.capped(names) == [*names[:20], "…and 5 more"]
    assert payloads.capped(names, 25) == names
    many = [SelectedTest(f"tests/t{n}.py", "s", 60, 1) for n in range(500)]
    selection = Selection("o/r", 1, H, "dev", many, [], 500.0, None, "pending")
    shown = payloads.help_reply(DispatchConfig(), selection)
    assert shown.count("\n- `tests/t") == 20 and shown.endswith("\n- …and 480 more")


def test_a_reply_stays_under_githubs_limit_whatever_it_quotes() -> None:
    marker = payloads.answer_marker(H, "0" * 12)
    long = "\n".join(f"- `tests/{n:05d}.py` is not a file at the head" for n in range(5000))
    body = payloads.marked(long, marker)
    assert len(body) <= payloads.REPLY_LIMIT < 65_536 and body.endswith(f"\n\n{marker}")
    assert "\n\n…(cut: the whole reply would be too long for a GitHub comment)\n\n" in body
    assert body.split("\n\n…(cut")[0].endswith("is not a file at the head")  # cut at a line's end
    counted = payloads.counted(long, 3, marker)
    assert len(counted) <= payloads.REPLY_LIMIT and "_The same answer to 3 commands on this head._" in counted
    one_line = payloads.marked("x" * 70_000, marker)
    assert len(one_line) <= payloads.REPLY_LIMIT and one_line.endswith(marker)
    assert payloads.marked("short", marker) == f"short\n\n{marker}"


def test_a_reply_carries_no_bidirectional_or_control_character() -> None:
    bidi = "\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
    quoted = f"a\u202eb{bidi}c\x00\x07\x1b\r\x7f\x85d"
    assert payloads.bounded(quoted) == "abcd"
    assert payloads.bounded("line\n\tindented") == "line\n\tindented"
    assert payloads.bounded("zero\u200bwidth, émoji ✓") == "zero\u200bwidth, émoji ✓"  # not bidi, kept


def _failed(path: str, kind: str | None, *, job: int = 7, lines: int = 2, **kw: Any) -> JobOutcome:
    explained = Explanation(job, kind, tuple(f"line {n} of {path}" for n in range(lines)), "why", **kw)
    return JobOutcome(path, job, "completed", "failure", f"https://github.com/o/r/actions/runs/5/job/{job}",
                      60.0, explained=explained)


def test_only_a_failed_job_explained_is_a_failure_to_show() -> None:
    failed = _failed(MOE.path, "predicted", rule="PAR002", fix="`ep_size=2`")
    shown = payloads.failure_of(failed)
    assert shown is not None and (shown.kind, shown.rule, shown.fix, shown.url) == (
        "predicted", "PAR002", "`ep_size=2`", failed.job_url)
    assert payloads.failure_of(replace(failed, explained=None)) is None  # its log not read yet
    assert payloads.failure_of(replace(failed, conclusion="success")) is None
    assert payloads.failure_of(replace(failed, status="in_progress")) is None
    assert payloads.failure_of(None) is None


def test_a_failures_annotation_is_on_the_marker_line_with_the_fix_or_the_retry() -> None:
    predicted = payloads.failure_of(_failed(MOE.path, "predicted", rule="PAR002", fix="`ep_size=2`"))
    assert predicted is not None
    note = payloads.failure_annotation(predicted, 4)
    assert (note["path"], note["start_line"], note["end_line"], note["annotation_level"]) == (
        MOE.path, 4, 4, "failure")
    assert note["title"] == "ROCm run failed: predicted by PAR002"
    assert note["message"] == ("Why\nFix: `ep_size=2`\nLog: https://github.com/o/r/actions/runs/5/job/7")
    assert note["raw_details"] == f"line 0 of {MOE.path}\nline 1 of {MOE.path}"
    retry = payloads.failure_of(_failed(MOE.path, "infrastructure", pattern="disk-full"))
    assert retry is not None and payloads.failure_annotation(retry, None)["start_line"] == 1
    said = payloads.failure_annotation(retry, 3)["message"]
    assert "A retry may pass: /run-amd retry runs it again." in said
    gone = payloads.failure_of(_failed(MOE.path, None, lines=0, unavailable="the log is empty"))
    assert gone is not None
    shown = payloads.failure_annotation(gone, 3)
    assert shown["title"] == "ROCm run failed: log not available" and "raw_details" not in shown
    assert shown["message"].startswith("Log not available: the log is empty\n")


def test_a_check_with_many_failed_tests_stays_under_githubs_limit_and_names_each() -> None:
    paths = [f"tests/e2e/test_{n:03}.py" for n in range(120)]
    outcomes = {p: _failed(p, "new", job=n, lines=8) for n, p in enumerate(paths)}
    outcomes = {p: replace(o, explained=replace(o.explained, excerpt=tuple("x" * 299 for _ in range(8))))
                for p, o in outcomes.items() if o.explained is not None}
    check = payloads.run_check(H, "d1", MOE.suite, paths, 40.0, "completed", conclusion="failure",
                               outcomes=outcomes)
    summary = check["output"]["summary"]
    assert len(summary) <= payloads.CHECK_SUMMARY_LIMIT
    assert "**Failed tests, explained** (120)" in summary
    assert all(f"- `{p}`: **new**" in summary for p in paths)
    few = payloads.run_check(H, "d1", MOE.suite, paths[:2], 40.0, "completed", conclusion="failure",
                             outcomes={p: outcomes[p] for p in paths[:2]})["output"]["summary"]
    assert few.count("x" * 299) == 16  # each line of both excerpts
