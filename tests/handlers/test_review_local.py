"""The pull_request handler against the local port: what it would post, and that it posts once."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.context import HandlerContext
from bot.demo import build_example
from bot.events import Event
from bot.local_port import LocalPort
from bot.publish import SUMMARY_MARKER, SummaryState
from bot.store.store import Store
from config.settings import Settings
from handlers.review import review_pull_request


@pytest.fixture
def setup(tmp_path: Path) -> tuple[LocalPort, Store, str, str]:
    base, head = build_example(tmp_path / "repo")
    port = LocalPort(str(tmp_path / "repo"), repo="octo/miles", prs={7: (base, head)}, default_ref=base)
    store = Store(f"sqlite:///{tmp_path}/db.sqlite")
    store.upgrade()
    return port, store, base, head


def _event(head: str, delivery: str = "d1", action: str = "synchronize") -> Event:
    return Event.from_payload("pull_request", delivery, {
        "action": action, "number": 7, "pull_request": {"number": 7, "head": {"sha": head}},
        "repository": {"full_name": "octo/miles"}, "installation": {"id": 1}})


def _ctx(port: LocalPort, store: Store, event: Event) -> HandlerContext:
    return HandlerContext(Settings(dry_run=False), store, event, port)


def test_publishes_a_check_run_a_summary_and_no_duplicate_on_redelivery(
    setup: tuple[LocalPort, Store, str, str],
) -> None:
    port, store, _, head = setup
    review_pull_request(_event(head), _ctx(port, store, _event(head)))
    kinds = [w.kind for w in port.writes]
    assert kinds[0] == "check_run" and "comment" in kinds
    check = port.writes[0].payload
    assert check["head_sha"] == head and check["name"] == "rocmbot / analysis"
    assert check["status"] == "completed" and check["conclusion"] in ("success", "neutral", "failure")
    (comment,) = [w for w in port.writes if w.kind == "comment"]
    assert comment.payload["body"].startswith(SUMMARY_MARKER)
    assert "test_qwen35_moe.py" in comment.payload["body"]
    assert SummaryState.load(comment.payload["body"]).head == head
    before = len(port.writes)
    again = _event(head, "d2")
    review_pull_request(again, _ctx(port, store, again))
    assert len(port.writes) == before  # same head, same content: nothing new


def test_a_stale_delivery_does_nothing(setup: tuple[LocalPort, Store, str, str]) -> None:
    port, store, base, _ = setup
    stale = _event(base)
    review_pull_request(stale, _ctx(port, store, stale))
    assert port.writes == []


def test_dry_run_records_but_does_not_write(setup: tuple[LocalPort, Store, str, str]) -> None:
    port, store, _, head = setup
    event = _event(head)
    review_pull_request(event, HandlerContext(Settings(dry_run=True), store, event, port))
    assert port.writes == []
    kinds = {e.kind for e in store.effects()}
    assert "check_run" in kinds and "comment" in kinds
    assert all(e.result == {"dry_run": True} for e in store.effects())
