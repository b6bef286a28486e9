"""Workers: routing, retries, dead letters, superseded heads, leases while working."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

from bot.core import deadline
from bot.core.deadline import RetryLaterError
from bot.core.events import Event
from bot.core.gone import OutOfReach
from bot.service.router import Router
from bot.service.worker import _RUNNING, Worker, dead_owners, retry_later
from bot.store.store import Store
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
        release.wait(60)  # until the lease has outlived its first expiry

    # A lease long enough that a loaded machine still renews it in time (every third of it).
    settings = SETTINGS.model_copy(update={"lease_seconds": 2.0})
    _add(store, "pull_request", "p1", pr_payload())
    worker = Worker(store, router, settings, name="slow")
    worker.start(1)
    try:
        assert started.wait(60)
        record = store.get("p1")
        assert record is not None and record.lease_expires_at is not None
        first_expiry = record.lease_expires_at
        deadline = time.monotonic() + 60
        while True:  # a moment past the first expiry at which the renewed lease still holds
            now = time.time()
            record = store.get("p1")
            assert record is not None and record.lease_expires_at is not None
            if now > first_expiry and record.lease_expires_at > now:
                break
            assert time.monotonic() < deadline, "the lease was not renewed"
            time.sleep(0.01)
        # At that moment nobody can take the delivery over: the lease was renewed.
        assert store.claim("other/0", lease_seconds=1, max_attempts=3, now=now) == []
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


def test_only_owners_of_this_host_whose_process_is_gone_are_dead() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    me = os.getpid()
    try:
        owners = {f"h:{gone.pid}:aa/0", f"h:{live.pid}:bb/1", f"other:{gone.pid}:cc/0",
                  f"h:{me}:earlier/0", f"h:{me}:running/0", "w1", "h:x:dd/0", "h:0:ee/0"}
        _RUNNING.add(f"h:{me}:running")
        assert set(dead_owners(owners, "h", me)) == {f"h:{gone.pid}:aa/0", f"h:{me}:earlier/0"}
    finally:
        _RUNNING.discard(f"h:{me}:running")
        assert live.stdin is not None
        live.stdin.close()
        live.wait()


def test_a_rate_limit_is_retried_when_github_said_and_the_handler_ran_under_a_deadline(
        store: Store) -> None:
    router = Router()
    left: list[float | None] = []

    @router.register("issue_comment")
    def limited(event: Event, context: Any) -> None:
        left.append(deadline.remaining())
        raise RetryLaterError(7.0, "GitHub rate limit on POST /comments")

    @router.register("issue_comment")
    def fine(event: Event, context: Any) -> None:
        pass

    _add(store, "issue_comment", "c1", comment_payload())
    worker = Worker(store, router, Settings(dry_run=True, max_attempts=3, delivery_deadline_seconds=45))
    before = time.time()
    assert worker.run_once() is True
    after = time.time()
    record = store.get("c1")
    assert record is not None and record.status == "queued" and record.attempts == 1
    # Exactly the wait GitHub named, not the backoff (2 s for a first failure, with jitter).
    assert before + 7.0 <= record.next_attempt_at <= after + 7.0
    assert len(left) == 1 and left[0] is not None and 0 < left[0] <= 45
    assert deadline.remaining() is None  # only while the delivery is processed
    assert retry_later(ConnectionError("502")) is None
    assert retry_later(RetryLaterError(3.0, "x")) == 3.0


class _Gone(OutOfReach):
    def __init__(self, status: int) -> None:
        super().__init__(f"GitHub said {status}")
        self.http_status, self.request = status, "GET /repos/o/r/pulls/1"


def _raising(exc: Exception) -> Any:
    def handler(event: Event, context: Any) -> None:
        raise exc

    return handler


def _run_until_final(worker: Worker, store: Store, delivery_id: str) -> None:
    deadline = time.monotonic() + 60
    while store.get(delivery_id).status in ("queued", "processing"):  # type: ignore[union-attr]
        assert time.monotonic() < deadline, store.get(delivery_id)
        worker.run_once()
        time.sleep(0.003)


def test_an_answer_for_good_ends_the_delivery_at_once_and_tells_no_pr(store: Store) -> None:
    told: list[str] = []
    for status, ended in ((404, "done"), (410, "done"), (403, "dead")):
        router = Router()
        router.register("pull_request")(_raising(_Gone(status)))
        _add(store, "pull_request", f"p{status}", pr_payload(sha=str(status)[0] * 40, number=status))
        worker = Worker(store, router, SETTINGS, dead_letter=lambda ctx, r, error: told.append(r.delivery_id))
        _run_until_final(worker, store, f"p{status}")
        record = store.get(f"p{status}")
        assert record is not None and (record.status, record.attempts) == (ended, 1)
        assert (record.last_error or "").startswith(f"not retried: GitHub answered {status} to GET ")
    assert told == []


def test_a_failure_that_may_pass_beside_one_for_good_is_retried(store: Store) -> None:
    router = Router()
    router.register("pull_request")(_raising(_Gone(404)))
    router.register("pull_request")(_raising(ConnectionError("502")))
    _add(store, "pull_request", "p1", pr_payload())
    told: list[tuple[str, str]] = []
    worker = Worker(store, router, SETTINGS,
                    dead_letter=lambda ctx, r, error: told.append((r.delivery_id, error)))
    _run_until_final(worker, store, "p1")
    record = store.get("p1")
    assert record is not None and (record.status, record.attempts) == ("dead", 3)
    assert [t[0] for t in told] == ["p1"] and "ConnectionError: 502" in told[0][1]


def test_a_failing_dead_letter_hook_leaves_the_dead_letter(store: Store) -> None:
    router = Router()
    router.register("pull_request")(_raising(ConnectionError("502")))
    _add(store, "pull_request", "p1", pr_payload())

    def broken(ctx: Any, record: Any, error: str) -> None:
        raise RuntimeError("GitHub is away too")

    worker = Worker(store, router, SETTINGS, dead_letter=broken)
    _run_until_final(worker, store, "p1")
    assert store.get("p1").status == "dead"  # type: ignore[union-attr]


def test_the_reenable_sweep_runs_on_a_timer_on_the_workers_clock_past_a_failure(store: Store) -> None:
    from bot.service.metrics import Metrics

    seen: list[tuple[str, float]] = []
    passes = threading.Semaphore(0)

    def sweep(db: Store, contexts: Any, settings: Settings, owner: str, clock: Any) -> None:
        seen.append((owner, clock()))
        passes.release()
        if len(seen) == 1:
            raise ConnectionError("the database went away")  # the next pass comes anyway

    metrics = Metrics()
    settings = SETTINGS.model_copy(update={"reenable_seconds": 0.01})
    worker = Worker(store, Router(), settings, name="w", reenable=sweep, clock=lambda: 1234.0,
                    metrics=metrics)
    worker.start(1)
    try:
        assert passes.acquire(timeout=10) and passes.acquire(timeout=10)
    finally:
        worker.stop()
    assert seen[:2] == [("w/reenable", 1234.0), ("w/reenable", 1234.0)]
    assert (metrics.registry.get_sample_value("rocmbot_reenable_passes_total") or 0) >= 2
    off = Worker(store, Router(), SETTINGS.model_copy(update={"reenable_seconds": 0}), reenable=sweep)
    off.start(1)
    off.stop()
    assert all(name != "rocmbot-reenable-sweeper" for name in (t.name for t in threading.enumerate()))
