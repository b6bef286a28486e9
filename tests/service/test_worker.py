"""Workers: routing, retries, dead letters, superseded heads, leases while working."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from bot.events import Event
from bot.router import Router
from bot.store.store import Store
from bot.worker import Worker
from config.settings import Settings
from tests.service.helpers import comment_payload, event_of, pr_payload

SETTINGS = Settings(dry_run=True, max_attempts=3, lease_seconds=0.3, backoff_base_seconds=0.001,
                    backoff_max_seconds=0.002, poll_seconds=0.01)


def _add(store: Store, name: str, delivery_id: str, payload: dict[str, Any]) -> None:
    store.add_delivery(event_of(name, delivery_id, payload), json.dumps(payload))


def test_handlers_run_in_registration_order_for_matching_actions(store: Store) -> None:
    router = Router()
    calls: list[str] = []
    router.register("pull_request")(lambda e, c: calls.append("any"))
    router.register("pull_request", "opened")(lambda e, c: calls.append("opened"))
    router.register("pull_request", "closed")(lambda e, c: calls.append("closed"))
    router.register("issue_comment")(lambda e, c: calls.append("comment"))
    _add(store, "pull_request", "d1", pr_payload(action="opened"))
    worker = Worker(store, Router(router), SETTINGS)
    assert worker.run_once() is True
    assert worker.run_once() is False
    assert calls == ["any", "opened"]
    assert store.get("d1").status == "done"  # type: ignore[union-attr]


def test_unrouted_events_are_acknowledged_and_done(store: Store) -> None:
    _add(store, "star", "s1", {"action": "created", "repository": {"full_name": "o/r"}})
    worker = Worker(store, Router(), SETTINGS)
    assert worker.run_once()
    assert store.get("s1").status == "done"  # type: ignore[union-attr]


def test_failures_retry_with_backoff_then_dead_letter(store: Store) -> None:
    router = Router()
    attempts: list[int] = []

    @router.register("issue_comment")
    def flaky(event: Event, context: Any) -> None:
        attempts.append(1)
        raise ConnectionError("GitHub said 502")

    _add(store, "issue_comment", "c1", comment_payload())
    worker = Worker(store, router, SETTINGS)
    deadline = time.monotonic() + 60
    while store.get("c1").status != "dead" and time.monotonic() < deadline:  # type: ignore[union-attr]
        worker.run_once()
        time.sleep(0.003)
    record = store.get("c1")
    assert record is not None and record.status == "dead" and record.attempts == 3
    assert "ConnectionError: GitHub said 502" in (record.last_error or "")
    assert len(attempts) == 3 and worker.stats.failed == 2 and worker.stats.dead == 1


def test_a_stale_head_is_superseded_not_analysed(store: Store) -> None:
    router = Router()
    analysed: list[str] = []
    router.register("pull_request")(lambda e, c: analysed.append(e.head_sha or ""))
    _add(store, "pull_request", "p1", pr_payload(sha="1" * 40))
    _add(store, "pull_request", "p2", pr_payload(sha="2" * 40, before="1" * 40))
    _add(store, "issue_comment", "c1", comment_payload())
    worker = Worker(store, router, SETTINGS)
    while worker.run_once():
        pass
    assert analysed == ["2" * 40]
    assert store.get("p1").status == "superseded"  # type: ignore[union-attr]
    assert store.get("c1").status == "done"  # type: ignore[union-attr]
    assert worker.stats.superseded == 1


def test_a_slow_handler_keeps_its_lease(store: Store) -> None:
    router = Router()
    started, release = threading.Event(), threading.Event()

    @router.register("pull_request")
    def slow(event: Event, context: Any) -> None:
        started.set()
        release.wait(60)

    # A lease long enough that a loaded machine still renews it in time (every third of it).
    settings = SETTINGS.model_copy(update={"lease_seconds": 2.0})
    _add(store, "pull_request", "p1", pr_payload())
    worker = Worker(store, router, settings, name="slow")
    worker.start(1)
    try:
        assert started.wait(60)
        first = store.get("p1").lease_expires_at  # type: ignore[union-attr]
        assert first is not None
        deadline = time.monotonic() + 60
        while time.time() <= first:  # until the first lease has run out
            assert time.monotonic() < deadline
            time.sleep(0.05)
        renewed = store.get("p1").lease_expires_at  # type: ignore[union-attr]
        assert renewed is not None and renewed > first
        other = Worker(store, router, settings, name="other")
        assert other.run_once() is False  # the lease was renewed, nothing to take over
    finally:
        release.set()
        worker.stop(timeout=60)
    assert store.get("p1").status == "done"  # type: ignore[union-attr]


def test_stop_releases_what_is_still_in_flight(store: Store) -> None:
    router = Router()
    started, release = threading.Event(), threading.Event()

    @router.register("pull_request")
    def stuck(event: Event, context: Any) -> None:
        started.set()
        release.wait(10)

    _add(store, "pull_request", "p1", pr_payload())
    worker = Worker(store, router, SETTINGS, name="stuck")
    worker.start(1)
    assert started.wait(60)
    worker.stop(timeout=0.2)
    record = store.get("p1")
    assert record is not None and (record.status, record.attempts) == ("queued", 0)
    release.set()
