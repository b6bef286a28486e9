"""The store on SQLite and PostgreSQL: deliveries, leases, backoff, the ledger."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from github import GithubException
from sqlalchemy import create_engine
from sqlalchemy.exc import SQLAlchemyError

from bot.core.deadline import RetryLaterError
from bot.github.effects import Effects, Lookups
from bot.store.dispatch import (
    DispatchStore,
    Explanation,
    HeadFindings,
    JobOutcome,
    KnownFinding,
    ParkedTest,
    SelectedTest,
)
from bot.store.schema import deliveries, metadata, pr_leases
from bot.store.store import Store, StoreError, backoff_seconds, normalise_url
from tests.service.helpers import comment_payload, event_of, pr_payload


def _add(store: Store, delivery_id: str, number: int = 1, sha: str = "a" * 40, now: float = 1000.0,
         before: str | None = None) -> bool:
    payload = pr_payload(number, sha, before=before)
    return store.add_delivery(event_of("pull_request", delivery_id, payload), json.dumps(payload), now=now)


def test_a_delivery_is_stored_once(store: Store) -> None:
    assert _add(store, "d1") is True
    assert _add(store, "d1") is False
    record = store.get("d1")
    assert record is not None
    assert (record.event, record.action, record.repository, record.pr_number, record.pr_key) == (
        "pull_request", "synchronize", "octo/miles", 1, "octo/miles#1")
    assert record.installation_id == 42 and record.head_sha == "a" * 40
    assert record.payload()["number"] == 1 and record.to_event().pr_key == "octo/miles#1"
    assert store.counts()["queued"] == 1 and store.get("nope") is None


def test_a_delivery_is_committed_when_add_returns(store: Store) -> None:
    """The webhook answers 202 right after storing: the row must be durable by then."""
    other = Store(str(store.engine.url.render_as_string(hide_password=False)))
    try:
        for n in range(8):
            assert _add(store, f"c{n}") is True
            assert other.get(f"c{n}") is not None  # another connection sees it: committed
        assert _add(store, "c0") is False
        # The connection goes back to the pool as the rest of the store expects it: a
        # transaction on it still rolls back.
        with pytest.raises(RuntimeError), store.engine.begin() as conn:
            conn.execute(deliveries.update().values(status="done"))
            raise RuntimeError
        assert (store.counts()["queued"], store.counts()["done"]) == (8, 0)
    finally:
        other.close()


def test_a_delivery_is_committed_on_an_engine_the_store_did_not_make(tmp_path: object) -> None:
    url = f"sqlite:///{tmp_path}/plain.db"
    db = Store(url, engine=create_engine(url))  # the driver begins transactions itself
    db.upgrade()
    payload = pr_payload(1, "a" * 40)
    assert db.add_delivery(event_of("pull_request", "d1", payload), json.dumps(payload)) is True
    other = Store(url)
    assert other.get("d1") is not None
    other.close()
    db.close()


def test_a_failed_insert_is_a_store_error_and_its_connection_is_dropped(tmp_path: object) -> None:
    db = Store(f"sqlite:///{tmp_path}/unmigrated.db")
    payload = pr_payload(1, "a" * 40)
    with pytest.raises(SQLAlchemyError):  # no table yet: the app answers 503
        db.add_delivery(event_of("pull_request", "d1", payload), json.dumps(payload))
    db.upgrade()
    assert db.add_delivery(event_of("pull_request", "d1", payload), json.dumps(payload)) is True
    db.close()


def test_one_pr_is_never_claimed_twice_at_once(store: Store) -> None:
    _add(store, "a1", number=1)
    _add(store, "a2", number=1, sha="c" * 40)
    _add(store, "b1", number=2)
    first = store.claim("w1", limit=5, lease_seconds=30, max_attempts=3, now=1001)
    assert [r.delivery_id for r in first] == ["a1", "b1"]
    assert store.claim("w2", limit=5, lease_seconds=30, max_attempts=3, now=1002) == []
    assert store.finish(first[0], "w1", "done", now=1003)
    second = store.claim("w2", limit=5, lease_seconds=30, max_attempts=3, now=1004)
    assert [r.delivery_id for r in second] == ["a2"]
    assert second[0].attempts == 1 and second[0].status == "processing"


def test_an_expired_lease_is_taken_over_and_the_old_owner_cannot_finish(store: Store) -> None:
    _add(store, "a1")
    (mine,) = store.claim("w1", lease_seconds=10, max_attempts=3, now=1001)
    assert store.claim("w2", lease_seconds=10, max_attempts=3, now=1005) == []
    (theirs,) = store.claim("w2", lease_seconds=10, max_attempts=3, now=1012)
    assert theirs.attempts == 2 and theirs.lease_owner == "w2"
    assert store.finish(mine, "w1", "done") is False
    assert store.finish(theirs, "w2", "done") is True
    assert store.get("a1").status == "done"  # type: ignore[union-attr]


def test_renewal_keeps_a_lease(store: Store) -> None:
    _add(store, "a1")
    (mine,) = store.claim("w1", lease_seconds=10, max_attempts=3, now=1001)
    assert store.renew("w1", [mine.id], 100, now=1009) == 1
    assert store.renew("w2", [mine.id], 100, now=1009) == 0
    assert store.renew("w1", [], 100) == 0
    assert store.claim("w2", lease_seconds=10, max_attempts=3, now=1050) == []


def test_a_lost_worker_past_max_attempts_is_dead_lettered(store: Store) -> None:
    _add(store, "a1")
    store.claim("w1", lease_seconds=1, max_attempts=1, now=1001)
    assert store.claim("w2", lease_seconds=1, max_attempts=1, now=1010) == []
    record = store.get("a1")
    assert record is not None and record.status == "dead" and "lease expired" in (record.last_error or "")


def test_retry_waits_for_its_backoff(store: Store) -> None:
    _add(store, "a1")
    (mine,) = store.claim("w1", lease_seconds=10, max_attempts=3, now=1001)
    store.finish(mine, "w1", "queued", error="boom", retry_at=1100, now=1002)
    assert store.claim("w1", lease_seconds=10, max_attempts=3, now=1050) == []
    (again,) = store.claim("w1", lease_seconds=10, max_attempts=3, now=1101)
    assert again.attempts == 2 and again.last_error == "boom"


def test_release_gives_work_back_without_spending_an_attempt(store: Store) -> None:
    _add(store, "a1")
    store.claim("w1", lease_seconds=100, max_attempts=3)
    assert store.release("w1") == 1
    record = store.get("a1")
    assert record is not None and (record.status, record.attempts, record.lease_owner) == ("queued", 0, None)
    (again,) = store.claim("w2", lease_seconds=100, max_attempts=3)
    assert again.attempts == 1


def test_a_newer_head_supersedes(store: Store) -> None:
    _add(store, "old", sha="1" * 40)
    _add(store, "new", sha="2" * 40, before="1" * 40)
    _add(store, "other-pr", number=9, sha="3" * 40, before="2" * 40)
    old, new = store.get("old"), store.get("new")
    assert old is not None and new is not None
    assert store.newer_head(old) == "2" * 40
    assert store.newer_head(new) is None
    comment = event_of("issue_comment", "c1", comment_payload())
    store.add_delivery(comment, "{}")
    assert store.newer_head(store.get("c1")) is None  # type: ignore[arg-type]


def test_a_later_stored_older_head_does_not_supersede(store: Store) -> None:
    """Found by the chaos campaign: pushes 1 -> 2 -> 3 whose deliveries arrive 3, 2 (concurrent
    delivery, or a redelivery). The delivery of 2, stored last, must not supersede the final head 3."""
    one, two, three = "1" * 40, "2" * 40, "3" * 40
    _add(store, "opened", sha=one)
    _add(store, "push-3", sha=three, before=two)
    _add(store, "push-2", sha=two, before=one)
    records = {d: store.get(d) for d in ("opened", "push-3", "push-2")}
    assert store.newer_head(records["push-3"]) is None  # type: ignore[arg-type]
    assert store.newer_head(records["opened"]) == two  # type: ignore[arg-type]
    assert store.newer_head(records["push-2"]) is None  # type: ignore[arg-type]  # the handler sees it is stale
    # A force-push back to an earlier head: the head is current again.
    _add(store, "back-to-1", sha=one, before=three)
    assert store.newer_head(store.get("push-3")) == one  # type: ignore[arg-type]
    assert store.newer_head(store.get("back-to-1")) is None  # type: ignore[arg-type]


def test_listing_retrying_and_counts(store: Store) -> None:
    for n in range(3):
        _add(store, f"d{n}", number=n)
    (first,) = store.claim("w", lease_seconds=10, max_attempts=1)
    store.finish(first, "w", "dead", error="x" * 5000)
    assert [r.delivery_id for r in store.recent()] == ["d2", "d1", "d0"]
    assert [r.delivery_id for r in store.recent("dead")] == ["d0"]
    assert len(store.get("d0").last_error or "") == 4000  # type: ignore[union-attr]
    assert store.retry("d0") is True
    assert store.get("d0").status == "queued"  # type: ignore[union-attr]
    assert store.counts() == {"queued": 3, "processing": 0, "done": 0, "failed": 0, "dead": 0,
                              "superseded": 0}
    (claimed,) = store.claim("w", lease_seconds=10, max_attempts=1)
    assert store.retry(claimed.delivery_id) is False
    assert "payload_text" not in claimed.summary()


def test_effects_are_recorded_before_they_are_made(store: Store) -> None:
    first = store.begin_effect("comment:octo/miles#1", "comment", "octo/miles#1", "d1")
    assert (first.created, first.status, first.result) == (True, "pending", None)
    again = store.begin_effect("comment:octo/miles#1", "comment", "octo/miles#1", "d2")
    assert (again.created, again.status) == (False, "pending")
    store.finish_effect("comment:octo/miles#1", {"id": 5})
    done = store.begin_effect("comment:octo/miles#1", "comment", "octo/miles#1")
    assert (done.created, done.status, done.result) == (False, "done", {"id": 5})
    assert [e.key for e in store.effects("comment")] == ["comment:octo/miles#1"]
    assert store.effects("dispatch") == []


def test_a_write_another_live_attempt_began_is_left_to_it(store: Store) -> None:
    """Two deliveries learn of one run at once (the dispatch and the run's first webhook): the
    second finds the first's entry pending, and its reconcile finds nothing yet because the
    first is mid-write. With ``defer_to_live`` it leaves the write to the first instead of
    making a duplicate; once the entry is older than that, it reconciles and makes it."""
    made: list[str] = []

    def write() -> dict[str, int]:
        made.append("x")
        return {"id": 1}

    store.begin_effect("rocm-check:d1", "check_run", "octo/miles@abc", "first")  # mid-write
    second = Effects(store, None, dry_run=False, delivery_id="second")
    second.dry_run = False  # no port is needed: ``write`` stands for GitHub's
    assert second.once("rocm-check:d1", "check_run", "octo/miles@abc", write, lambda: None,
                       defer_to_live=60.0) is None
    assert made == [] and store.begin_effect("rocm-check:d1", "check_run", "t").status == "pending"
    second.once("rocm-check:d1", "check_run", "octo/miles@abc", write, lambda: None,
                defer_to_live=0.0)  # the other attempt is taken to be dead
    assert made == ["x"] and store.begin_effect("rocm-check:d1", "check_run", "t").status == "done"
    assert store.begin_effect("rocm-check:d1", "check_run", "t").age >= 0.0


def _live(store: Store, delivery_id: str, in_flight: float) -> Effects:
    effects = Effects(store, None, dry_run=False, delivery_id=delivery_id, in_flight=in_flight)
    effects.dry_run = False  # no port is needed: the callables stand for GitHub
    return effects


def test_a_write_a_killed_attempt_may_still_land_is_waited_out(store: Store) -> None:
    """A worker killed mid-request: GitHub may make its comment after another worker took the
    delivery over. Reconciling at once would find nothing and answer twice; the delivery is
    retried once that request can no longer land, and then finds the comment."""
    made: list[str] = []
    looked: list[str] = []

    def write() -> dict[str, int]:
        made.append("x")
        return {"id": 2}

    def reconcile() -> dict[str, int] | None:
        looked.append("x")
        return {"id": 1}  # the killed attempt's comment, landed late

    store.begin_effect("reply:octo/miles:7:abc", "comment", "octo/miles#1", "first")  # then killed
    with pytest.raises(RetryLaterError) as waited:
        _live(store, "second", 30.0).once("reply:octo/miles:7:abc", "comment", "octo/miles#1", write,
                                          reconcile)
    assert 0 < waited.value.seconds <= 30.0 and made == looked == []
    assert store.begin_effect("reply:octo/miles:7:abc", "comment", "t").status == "pending"
    later = _live(store, "second", 0.0)  # as when the entry is older than a request may take
    assert later.once("reply:octo/miles:7:abc", "comment", "octo/miles#1", write, reconcile) == {"id": 1}
    assert made == [] and looked == ["x"]


def test_a_write_github_answered_is_reconciled_at_once(store: Store) -> None:
    """An attempt that saw GitHub's answer (a 502, the write perhaps made unseen) has nothing in
    flight: the retry looks at once. One that timed out may: the retry waits."""
    looked: list[str] = []

    def reconcile() -> dict[str, int] | None:
        looked.append("x")
        return None

    def bad_gateway() -> dict[str, int]:
        raise GithubException(502, {"message": "Bad Gateway"}, None)

    def timed_out() -> dict[str, int]:
        raise TimeoutError("read timed out")

    first = _live(store, "first", 30.0)
    with pytest.raises(GithubException):
        first.once("reply:a", "comment", "octo/miles#1", bad_gateway, reconcile)
    with pytest.raises(TimeoutError):
        first.once("reply:b", "comment", "octo/miles#1", timed_out, reconcile)
    retry = _live(store, "first", 30.0)
    assert retry.once("reply:a", "comment", "octo/miles#1", lambda: {"id": 3}, reconcile) == {"id": 3}
    assert looked == ["x"]
    with pytest.raises(RetryLaterError):
        retry.once("reply:b", "comment", "octo/miles#1", lambda: {"id": 4}, reconcile)
    assert looked == ["x"]
    # a 502, then a retry that found nothing and was sending again when it timed out: its
    # request is the one that may still land, whatever the first attempt saw
    with pytest.raises(GithubException):
        first.once("reply:c", "comment", "octo/miles#1", bad_gateway, reconcile)
    with pytest.raises(TimeoutError):
        retry.once("reply:c", "comment", "octo/miles#1", timed_out, reconcile)
    assert looked == ["x", "x"]
    with pytest.raises(RetryLaterError):
        _live(store, "first", 30.0).once("reply:c", "comment", "octo/miles#1", lambda: {"id": 5}, reconcile)
    assert looked == ["x", "x"]


def test_lookups_come_at_growing_intervals_until_the_window_ends() -> None:
    lookups = Lookups(180.0, 10.0)
    assert [lookups.wait(since) for since in (0.0, 10.0, 31.0, 170.0)] == [10.0, 10.0, 9.0, 10.0]
    assert lookups.wait(180.0) is None and Lookups(0.0).wait(0.0) is None


def test_a_dispatch_in_doubt_is_looked_for_over_the_window(store: Store) -> None:
    """After a 4xx nothing was made: sent again at once. After a 502 GitHub may have made it:
    looked for while the window lasts, sent again after. After no answer: looked for while the
    window lasts, then `unknown` and never sent again; found later, it is done."""
    made: list[int] = []
    looked: list[int] = []

    def send() -> dict[str, int]:
        made.append(1)
        return {"run_id": len(made)}

    def reconcile() -> dict[str, int] | None:
        looked.append(1)
        return None

    def answer(status: int) -> Callable[[], dict[str, int]]:
        def refused() -> dict[str, int]:
            raise GithubException(status, {"message": "no"}, None)
        return refused

    def timed_out() -> dict[str, int]:
        raise TimeoutError("read timed out")

    def effects(window: float) -> Effects:
        live = Effects(store, None, dry_run=False, delivery_id="d", lookups=Lookups(window, 10.0))
        live.dry_run = False  # no port is needed: the callables stand for GitHub
        return live

    during, after = effects(600.0), effects(0.0)  # within the window, and once it is over
    with pytest.raises(GithubException):
        during.once("dispatch:a", "dispatch", "t", answer(422), reconcile, look=True)
    assert during.once("dispatch:a", "dispatch", "t", send, reconcile, look=True) == {"run_id": 1}
    with pytest.raises(GithubException):
        during.once("dispatch:b", "dispatch", "t", answer(502), reconcile, look=True)
    with pytest.raises(RetryLaterError) as waited:
        during.once("dispatch:b", "dispatch", "t", send, reconcile, look=True)
    assert 0 < waited.value.seconds <= 10.0 and made == [1]
    assert after.once("dispatch:b", "dispatch", "t", send, reconcile, look=True) == {"run_id": 2}
    with pytest.raises(TimeoutError):
        during.once("dispatch:c", "dispatch", "t", timed_out, reconcile, look=True)
    with pytest.raises(RetryLaterError):
        during.once("dispatch:c", "dispatch", "t", send, reconcile, look=True)
    assert after.once("dispatch:c", "dispatch", "t", send, reconcile, look=True)["unknown"] is True
    assert after.once("dispatch:c", "dispatch", "t", send, reconcile, look=True)["unknown"] is True
    assert store.begin_effect("dispatch:c", "dispatch", "t").status == "unknown"
    assert made == [1, 1] and len(looked) == 6
    found = after.once("dispatch:c", "dispatch", "t", send, lambda: {"run_id": 9}, look=True)
    assert found == {"run_id": 9} and store.begin_effect("dispatch:c", "dispatch", "t").status == "done"
    assert made == [1, 1]


def test_readiness_names_the_missing_migration(tmp_path: object) -> None:
    db = Store(f"sqlite:///{tmp_path}/empty.db")
    with pytest.raises(StoreError, match="run `rocmbot db upgrade`"):
        db.check_ready()
    assert db.upgrade() == db.head_revision() == "0007"
    db.check_ready()
    db.close()
    gone = Store("postgresql://nobody@127.0.0.1:1/none")
    with pytest.raises(StoreError, match="database unreachable"):
        gone.check_ready()


def test_backoff_grows_and_is_capped() -> None:
    rng = random.Random(1)
    steps = [backoff_seconds(n, 2, 60, rng) for n in range(1, 10)]
    assert 1 <= steps[0] <= 2 and 2 <= steps[1] <= 4
    assert all(30 <= s <= 60 for s in steps[6:])
    assert normalise_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalise_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalise_url("sqlite:///x.db") == "sqlite:///x.db"
    assert time.time() > 0


def test_the_migrations_make_the_tables_the_code_declares(store: Store) -> None:
    def ours(name: str | None, kind: str, parent: object) -> bool:
        return kind != "table" or name in metadata.tables  # other tests share the database

    with store.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"include_name": ours})
        diff = compare_metadata(context, metadata)
    assert diff == []


def test_a_tests_outcome_never_goes_back_from_completed(store: Store) -> None:
    runs = DispatchStore(store)
    path = "tests/e2e/test_a.py"
    runs.record_outcome("d1", JobOutcome(path, 5, "in_progress", None, "https://x/5", None))
    runs.record_outcome("d1", JobOutcome(path, 5, "completed", "failure", "https://x/5", 61.0))
    runs.record_outcome("d1", JobOutcome(path, 5, "in_progress", None, "https://x/5", None))  # late
    assert runs.outcomes("d1") == {path: JobOutcome(path, 5, "completed", "failure", "https://x/5", 61.0)}
    runs.record_outcome("d1", JobOutcome(path, 9, "completed", "success", "https://x/9", 30.0, 2))  # re-run
    assert runs.outcomes("d1")[path].conclusion == "success"
    assert runs.outcomes("d2") == {}


def test_a_pr_with_many_queued_deliveries_does_not_stall_the_others(store: Store) -> None:
    for n in range(40):  # one PR's burst, stored first
        _add(store, f"a{n}", number=1, sha=f"{n:040x}")
    _add(store, "b1", number=2)
    _add(store, "c1", number=3)
    (first,) = store.claim("w1", lease_seconds=30, max_attempts=3, now=1001)
    assert first.delivery_id == "a0"
    # Every other delivery of PR 1 waits for w1; the oldest of each PR nobody holds is next.
    assert [r.delivery_id for r in store.claim("w2", lease_seconds=30, max_attempts=3, now=1002)] == ["b1"]
    assert [r.delivery_id for r in store.claim("w3", limit=5, lease_seconds=30, max_attempts=3,
                                               now=1003)] == ["c1"]
    assert store.claim("w4", limit=5, lease_seconds=30, max_attempts=3, now=1004) == []
    assert store.finish(first, "w1", "done", now=1005)
    assert [r.delivery_id for r in store.claim("w4", lease_seconds=30, max_attempts=3, now=1006)] == ["a1"]


def test_a_pr_lease_lost_to_another_worker_is_passed_over_in_the_same_claim(store: Store) -> None:
    for n in range(20):
        _add(store, f"a{n}", number=1, sha=f"{n:040x}")
    _add(store, "b1", number=2)
    # A lease row without a processing delivery: what a concurrent claim leaves mid-way.
    with store.engine.begin() as conn:
        conn.execute(pr_leases.insert().values(pr_key="octo/miles#1", owner="w9", expires_at=2000.0))
    assert [r.delivery_id for r in store.claim("w1", lease_seconds=30, max_attempts=3, now=1001)] == ["b1"]
    # Its own lease does not stop a worker; an expired one does not stop anybody.
    assert [r.delivery_id for r in store.claim("w9", lease_seconds=30, max_attempts=3, now=1002)] == ["a0"]


def test_the_leases_of_owners_gone_are_due_at_once(store: Store) -> None:
    _add(store, "a1", number=1)
    _add(store, "b1", number=2)
    store.claim("host:11:dead/0", lease_seconds=600, max_attempts=3, now=1001)
    store.claim("host:12:live/0", lease_seconds=600, max_attempts=3, now=1001)
    assert store.lease_owners() == {"host:11:dead/0", "host:12:live/0"}
    assert store.expire_leases([]) == 0
    assert store.expire_leases(["host:11:dead/0"]) == 1
    (again,) = store.claim("w2", limit=5, lease_seconds=600, max_attempts=3, now=1002)
    assert (again.delivery_id, again.attempts) == ("a1", 2)  # the attempt it died in counts
    assert store.get("b1").lease_owner == "host:12:live/0"  # type: ignore[union-attr]


def test_an_approval_covers_only_the_heads_seen_before_its_second_began(store: Store) -> None:
    """GitHub stamps a comment in whole seconds: a head first seen within the comment's second
    (even at its very start) may have come after the comment, so the approval does not cover it."""
    runs = DispatchStore(store)
    old, same, later = "a" * 40, "b" * 40, "c" * 40
    _add(store, "d1", sha=old, now=1000.2)
    _add(store, "d2", sha=old, now=1005.9)  # a later delivery of a head seen before
    assert runs.head_at("octo/miles", 1, 1000) is None  # written in the second of the first head
    assert runs.head_at("octo/miles", 1, 1001) == old
    _add(store, "d3", sha=same, now=1005.0)
    assert runs.head_at("octo/miles", 1, 1005) == old  # first seen at the start of that second
    assert runs.head_at("octo/miles", 1, 1005.7) == old  # a stamp with a fraction: its second
    assert runs.head_at("octo/miles", 1, 1006) == same
    _add(store, "d4", sha=later, now=1006.999)
    assert runs.head_at("octo/miles", 1, 1006) == same
    assert runs.head_at("octo/miles", 1, 1007) == later
    assert runs.head_at("octo/miles", 2, 1007) is None  # another PR's heads are not this one's


def test_an_approval_covers_the_current_head_seen_before_it_whatever_came_in_later(store: Store) -> None:
    """A burst of pushes is delivered in any order: the push of the current head may arrive
    before that of the head it replaced. The current head, seen before the comment's second,
    is what the approver could have seen; not the last head to arrive. Found by bench/chaos.py:
    a maintainer's `/run-amd --force` was refused as written for an older head."""
    runs = DispatchStore(store)
    older, current = "a" * 40, "b" * 40
    _add(store, "d1", sha=current, now=1000.1)
    _add(store, "d2", sha=older, now=1000.6)  # the older push's delivery came in second
    assert runs.head_at("octo/miles", 1, 1001) == older  # the last to arrive, without the current head
    assert runs.head_at("octo/miles", 1, 1001, current) == current
    assert runs.head_at("octo/miles", 1, 1000, current) is None  # neither seen before the second
    newer = "c" * 40
    _add(store, "d3", sha=newer, now=1001.2)  # the current head moved on within the comment's second
    assert runs.head_at("octo/miles", 1, 1001, newer) == older  # not covered: names what came last before


def test_a_heads_parked_tests_and_a_dispatch_of_them_are_kept(store: Store) -> None:
    runs = DispatchStore(store)
    head, suite = "c" * 40, "stage-c-4-gpu-mi350"
    moe = SelectedTest("tests/e2e/test_moe.py", suite, 1600, 4, parked=True)
    parked = [ParkedTest(moe, True, "its launch is checked and valid."),
              ParkedTest(SelectedTest("tests/e2e/test_x.py", suite, 60, 4, parked=True), False,
                         "its launch would fail: PAR002.", ("PAR002",))]
    runs.save_selection("o/r", 1, head, "dev", [], [], "selected", parked=parked)
    selection = runs.selection("o/r", 1, head)
    assert selection is not None and selection.parked == parked and selection.candidates == [moe]
    assert selection.tests == [] and selection.gpu_minutes == 0  # parked tests are no part of the selection
    runs.add("d-parked", "o/r", 1, head, suite, [moe.path], moe.gpu_minutes, "lead", include_disabled=True)
    runs.add("d-plain", "o/r", 1, head, suite, ["tests/e2e/test_y.py"], 10.0, "lead")
    assert [(d.dispatch_id, d.include_disabled) for d in sorted(runs.for_pr("o/r", 1, head),
                                                                key=lambda d: d.dispatch_id)] == [
        ("d-parked", True), ("d-plain", False)]


def test_a_heads_findings_are_kept_with_its_selection_until_analysed_again(store: Store) -> None:
    runs = DispatchStore(store)
    path = "tests/e2e/test_a.py"
    par = KnownFinding("PAR002", "error", path, 11, "world_size (4) is not divisible by ...", "`ep_size=2`",
                       path, "PAR002:abc")
    pin = KnownFinding("PIN001", "error", "docker/Dockerfile.rocm", 3, "`numba` is pinned ...", None, None,
                       "PIN:x")
    known = HeadFindings({path: [par]}, [pin], {path: 4})
    test = SelectedTest(path, "stage-c-4-gpu-mi350", 600, 4)
    runs.save_selection("o/r", 1, "h1", "dev", [], [path], "selected", [test], findings=known)
    found = runs.selection("o/r", 1, "h1")
    assert found is not None and found.findings == known and found.held == [test]
    assert found.findings.of(path) == [par, pin] and found.findings.of("tests/other.py") == [pin]
    runs.save_selection("o/r", 1, "h1", "dev", [test], [], "pending")  # queued for approval: kept
    again = runs.selection("o/r", 1, "h1")
    assert again is not None and again.findings == known
    runs.save_selection("o/r", 1, "h2", "dev", [test], [], "selected")
    assert (runs.selection("o/r", 1, "h2") or again).findings is None


def test_a_failed_jobs_explanation_is_kept_once_and_shown_for_its_job_only(store: Store) -> None:
    runs = DispatchStore(store)
    path = "tests/e2e/test_a.py"
    runs.add("d1", "o/r", 1, "h1", "suite", [path], 10.0, "dev")
    runs.record_outcome("d1", JobOutcome(path, 5, "completed", "failure", "https://x/5", 61.0))
    first = Explanation(5, "new", ("ValueError: N",), "no explanation", signature="ValueError: N")
    assert runs.explain("d1", path, first)
    assert not runs.explain("d1", path, Explanation(5, "known", ("x",)))  # once per job
    assert runs.outcomes("d1")[path].explained == first
    assert not runs.explain("d1", path, Explanation(6, "new"))  # not the test's job
    runs.record_outcome("d1", JobOutcome(path, 9, "in_progress", None, "https://x/9", None, 2))  # re-run
    assert runs.outcomes("d1")[path].explained is None  # the earlier attempt's is not this job's
    assert runs.last_explained("d1", path) == first
    assert runs.failures_seen("o/r", "h1", path, besides=9) == {"ValueError: N"}
    assert runs.failures_seen("o/r", "h1", path, besides=5) == set()
    assert runs.failures_seen("o/r", "h2", path, besides=9) == set()
    runs.record_outcome("d1", JobOutcome(path, 9, "completed", "failure", "https://x/9", 30.0, 2))
    second = Explanation(9, "known", ("ValueError: N",), signature="ValueError: N", seen=("ValueError: N",))
    assert runs.explain("d1", path, second)
    assert runs.outcomes("d1")[path].explained == second
    gone = Explanation(9, None, unavailable="GitHub no longer has it")
    assert Explanation.from_json(gone.as_json()) == gone and Explanation.from_json(None) is None


def test_the_writes_made_under_a_prefix_leave_out_those_pending(store: Store) -> None:
    live = _live(store, "d", 0.0)
    live.once("rocm-check-failure:d1:5", "check_run", "t", lambda: {"id": 1})
    store.begin_effect("rocm-check-failure:d1:6", "check_run", "t", "other")  # an attempt mid-write
    assert live.done_starting("rocm-check-failure:d1:") == {"rocm-check-failure:d1:5"}
    assert len(live.made_starting("rocm-check-failure:d1:")) == 2
    dry = Effects(store, None, dry_run=True, delivery_id="e")
    dry.once("rocm-check-failure:d2:7", "check_run", "t", lambda: {"id": 1})
    assert dry.done_starting("rocm-check-failure:d2:") == {"rocm-check-failure:d2:7"}  # recorded: shown
    assert live.done_starting("rocm-check-failure:d2:") == set()  # live, it is still to be made
