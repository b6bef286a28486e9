"""Replies, reactions and check updates of ROCm runs go through the effect ledger: made once,
found again after an attempt that died, and not sent in dry-run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.github import keys
from bot.github.effects import Effects
from bot.github.local import LocalPort
from bot.rocm import payloads
from bot.store.store import Store

R = "octo/miles"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(f"sqlite:///{tmp_path}/db.sqlite")
    store.upgrade()
    yield store
    store.close()


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
    assert effects.marked_comment(keys.answer("g"), R, 7, "x", marker) == {"dry_run": True}
    effects.react(R, 5, "eyes")
    cancelled = effects.update_check(keys.cancelled_check("d"), R, 3, payloads.CANCELLED_CHECK)
    assert cancelled == {"dry_run": True}
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
