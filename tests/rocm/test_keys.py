"""The ledger keys are stored: their spelling is pinned, or every write they name is made again."""

from __future__ import annotations

from bot.github import keys

R, H = "octo/miles", "f" * 40


def test_the_analysis_keys_keep_their_spelling() -> None:
    assert keys.check(R, H, "rocmbot / analysis", "v1") == f"check:{R}:{H}:rocmbot / analysis:v1"
    assert keys.check(R, H, "n", "v").startswith(keys.check_prefix(R, H, "n"))
    assert keys.summary(R, 7) == f"comment:{R}#7"
    assert keys.summary_again(R, 7, 99) == f"comment:{R}#7:after:99"
    assert keys.summary_edit(R, 7, 99, "v") == f"comment-edit:{R}#7:99:v"
    assert keys.review(R, 7, H) == f"review:{R}#7:{H}"


def test_a_summary_key_belongs_to_its_own_pr_only() -> None:
    assert keys.is_summary_key(keys.summary(R, 1), R, 1)
    assert keys.is_summary_key(keys.summary_again(R, 1, 5), R, 1)
    assert keys.is_summary_key(keys.summary_edit(R, 1, 5, "v"), R, 1)
    assert not keys.is_summary_key(keys.summary(R, 12), R, 1)  # #1 is a prefix of #12
    assert not keys.is_summary_key(keys.summary_edit(R, 12, 5, "v"), R, 1)


def test_the_rocm_keys_keep_their_spelling() -> None:
    assert keys.dispatch("d" * 16) == "dispatch:" + "d" * 16
    assert keys.rocm_check("d") == "rocm-check:d"
    assert keys.dispatch("d").startswith(keys.DISPATCH) and keys.rocm_check("d").startswith(keys.ROCM_CHECK)
    assert keys.run_news("d", "completed", "success") == "rocm-check-update:d:completed:success"
    assert keys.run_news("d", "queued", None) == "rocm-check-update:d:queued:None"
    assert keys.job_news("d", 5, "in_progress", None) == "rocm-check-update:d:job:5:in_progress:None"
    assert keys.failure("d", 5) == "rocm-check-failure:d:5" and keys.failure("d", 5).startswith(
        keys.failure_prefix("d"))
    assert not keys.failure("d", 5).startswith(keys.ROCM_CHECK)  # not a check the sweep makes
    assert keys.cancel("d") == "cancel:d"
    assert keys.pending_check(R, 7, H, "x") == f"pending-check:{R}#7:{H}:x"
    assert keys.refusal_check(R, 7, H, "CFG002") == f"refusal-check:{R}#7:{H}:CFG002"
    assert keys.refusal_check(R, 7, H, None) == f"refusal-check:{R}#7:{H}:None"
    assert keys.cancelled_check("d") == "cancel-check:d"
    assert keys.approved_check(R, 7, H, "x") == f"approved-check:{R}#7:{H}:x"


def test_a_dispatch_id_is_the_request_s() -> None:
    first = keys.dispatch_id(R, 7, H, "s", ["b.py", "a.py"], keys.by_comment(3))
    assert first == keys.dispatch_id(R, 7, H, "s", ["a.py", "b.py"], "comment:3")
    assert first != keys.dispatch_id(R, 7, H, "s", ["a.py", "b.py"], keys.by_comment(4))
    assert len(first) == 16 and int(first, 16) >= 0
    assert (keys.AUTOMATIC, keys.by_rerun("d1"), keys.by_approval("x")) == ("auto", "rerun:d1", "approval:x")


def test_the_reply_keys_keep_their_spelling() -> None:
    group = keys.answer_group(R, 7, H, "abc")
    assert group == f"{R}#7:{H[:12]}:abc"
    assert keys.answer(group) == f"answer:{group}"
    assert keys.answer_edit(group, 9) == f"answer-edit:{group}:9"
    assert keys.answer_edit(group, 9).startswith(keys.answer_edit_prefix(group))
    assert keys.reply(R, 9, "abc") == f"reply:{R}:9:abc"
    assert keys.reaction(R, 9, "eyes") == f"reaction:{R}:9:eyes"
    assert keys.review_reply(R, 4) == f"review-reply:{R}:4"
