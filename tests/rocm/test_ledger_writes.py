"""Replies, reactions and check updates of ROCm runs go through the effect ledger: made once,
found again after an attempt that died, and not sent in dry-run."""

from __future__ import annotations

import threading
from pathlib import Path

from bot.github import keys
from bot.github.effects import RECORDED_CHARS, Effects, recorded
from bot.github.local import LocalPort
from bot.github.port import InlineComment
from bot.rocm import payloads
from bot.store.store import Store

R = "octo/miles"


def _effects(store: Store, port: LocalPort, delivery: str, *, dry_run: bool = False) -> Effects:
    return Effects(store, port, dry_run=dry_run, delivery_id=delivery)


def test_a_reply_is_made_once_and_found_again_by_its_marker(store: Store, tmp_path: Path) -> None:
    port = LocalPort(str(tmp_path))
    marker = payloads.reply_marker(5, "abc")
    key = keys.reply(R, 5, "abc")
    made = _effects(store, port, "d1").marked_comment(key, R, 7, payloads.marked("first", marker), marker,
                                                     made={"kind": "help"})
    assert made == {"id": 1, "kind": "help"}
    _effects(store, port, "d2").marked_comment(key, R, 7, payloads.marked("first", marker), marker)
    assert [w.kind for w in port.writes] == ["comment"]  # redelivered: nothing written
    # an attempt that died after GitHub made the comment, before the ledger knew
    other = keys.reply(R, 6, "abc")
    store.begin_effect(other, "comment", f"{R}#7", "d3")
    mark = payloads.reply_marker(6, "abc")
    port.create_comment(R, 7, payloads.marked("old answer", mark))
    found = _effects(store, port, "d4").marked_comment(other, R, 7, payloads.marked("new answer", mark), mark,
                                                      found={"kind": "help"}, refresh=True)
    assert found == {"id": 2, "kind": "help", "reconciled": True}
    assert [w.kind for w in port.writes] == ["comment", "comment", "comment_edit"]
    assert port.comments(R, 7)[1].body.startswith("new answer")


def test_dry_run_sends_no_reply_reaction_or_check_update(store: Store, tmp_path: Path) -> None:
    port = LocalPort(str(tmp_path))
    effects = _effects(store, port, "d1", dry_run=True)
    marker = payloads.answer_marker("f" * 40, "abc")
    assert effects.marked_comment(keys.answer("g"), R, 7, "x", marker) == {
        "dry_run": True, "content": {"body": "x"}}
    effects.react(R, 5, "eyes")
    cancelled = effects.update_check(keys.cancelled_check("d"), R, 3, payloads.CANCELLED_CHECK)
    assert cancelled["dry_run"] is True
    assert cancelled["content"]["conclusion"] == payloads.CANCELLED_CHECK["conclusion"]
    assert effects.make_check(keys.refusal_check(R, 7, "f" * 40, None), R,
                              payloads.refusal_check("f" * 40, "why", None)) is None
    assert port.writes == []
    _effects(store, port, "d2").react(R, 5, "eyes")  # live, later: made then
    assert [w.kind for w in port.writes] == ["reaction"]


def test_a_check_is_made_once_per_key(store: Store, tmp_path: Path) -> None:
    port = LocalPort(str(tmp_path))
    payload = payloads.refusal_check("f" * 40, "why", "CFG002")
    key = keys.refusal_check(R, 7, "f" * 40, "CFG002")
    assert _effects(store, port, "d1").make_check(key, R, payload) == 1
    assert _effects(store, port, "d2").make_check(key, R, payload) == 1
    assert _effects(store, port, "d2").update_check(keys.cancelled_check("d"), R, 1, payloads.CANCELLED_CHECK)
    assert [w.kind for w in port.writes] == ["check_run", "check_run_update"]


def test_dry_run_keeps_what_a_write_would_send_with_long_texts_cut(store: Store, tmp_path: Path) -> None:
    port = LocalPort(str(tmp_path))
    effects = _effects(store, port, "d1", dry_run=True)
    long = "x" * (RECORDED_CHARS + 10)
    effects.summary(R, 7, long, None, version="v1")
    effects.review(R, 7, "f" * 40, "body", [InlineComment("a.py", 3, "look here")])
    effects.cancel_run("d", R, 11)
    assert port.writes == []
    kept = {e.kind: e.result["content"] for e in store.effects_of("d1")}
    assert kept["comment"]["body"] == "x" * RECORDED_CHARS + "\n[cut: 10 more characters]"
    assert kept["review"]["commit_id"] == "f" * 40
    assert kept["review"]["comments"] == [{"path": "a.py", "line": 3, "body": "look here"}]
    assert kept["cancel"] == {"run_id": 11}
    assert recorded({"a": ["y" * RECORDED_CHARS]}) == {"a": ["y" * RECORDED_CHARS]}  # not over: whole


def test_a_dry_run_write_superseded_is_made_by_a_later_live_one(store: Store, tmp_path: Path) -> None:
    port = LocalPort(str(tmp_path))
    _effects(store, port, "d1", dry_run=True).summary(R, 7, "first", None, version="v1")
    assert store.mark_effect(keys.summary(R, 7), "superseded", was="dry_run")
    _effects(store, port, "d2", dry_run=True).summary(R, 7, "second", None, version="v2")
    (entry,) = store.effects()
    assert (entry.status, entry.result["content"]["body"]) == ("dry_run", "second")  # recorded again
    assert store.mark_effect(keys.summary(R, 7), "superseded", was="dry_run")
    made = _effects(store, port, "d3").summary(R, 7, "third", None, version="v3")
    assert [w.kind for w in port.writes] == ["comment"] and made["body"] == "third"
    assert store.effects()[0].status == "done"


def test_a_write_another_live_attempt_is_making_is_waited_for_a_moment(store: Store, tmp_path: Path) -> None:
    """Two deliveries of one failed run explain the same job at once: the second leaves the
    annotated check update to the first, waits for it to land, and reads its result; were the
    first to die mid-write, the second learns so (None) and comes back later."""
    port = LocalPort(str(tmp_path))
    key = keys.failure("d", 11)
    first = _effects(store, port, "d1")
    store.begin_effect(key, "check_run", f"{R}/check-runs/3", "d1")  # d1 is mid-write
    second = _effects(store, port, "d2")
    assert second.update_check(key, R, 3, payloads.CANCELLED_CHECK, defer_to_live=60) is None
    landed = threading.Timer(0.2, lambda: store.finish_effect(key, {"id": 3}))
    landed.start()
    assert second.made_meanwhile(key, 30) == {"id": 3}
    landed.join()
    assert port.writes == []  # only the first attempt writes, and it wrote around the port here
    died = keys.failure("d", 12)
    store.begin_effect(died, "check_run", f"{R}/check-runs/3", "d1")
    assert first.made_meanwhile(died, 0.1) is None
