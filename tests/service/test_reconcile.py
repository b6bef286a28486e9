"""The reconciler's choices, against a fake deliveries API: what it redelivers, in what order,
what it leaves alone, how far back it looks, and that a second pass asks nothing again."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.cli import main
from bot.github.reconcile import MAX_ATTEMPTS, Attempt, ReconcileError, next_cursor, reconcile
from bot.store.store import Store
from tests.service.helpers import event_of, pr_payload

NOW = 1_800_000_000.0


def attempt(n: int, guid: str, status: int, *, ago: float = 60, event: str = "pull_request",
            redelivery: bool = False) -> Attempt:
    return Attempt(n, guid, event, "synchronize", status, redelivery, NOW - ago)


@dataclass
class FakeApi:
    """Pages of attempts, newest first, and the redeliveries asked for."""

    attempts: list[Attempt]
    per_page: int = 3
    fail_redelivery: set[int] = field(default_factory=set)
    fail_listing: bool = False
    asked: list[int] = field(default_factory=list)
    pages: int = 0

    def page(self, cursor: str | None) -> tuple[list[Attempt], str | None]:
        if self.fail_listing:
            raise RuntimeError("GitHub said 502")
        self.pages += 1
        ordered = sorted(self.attempts, key=lambda a: -a.id)
        start = int(cursor or 0)
        following = start + self.per_page
        return ordered[start:following], str(following) if following < len(ordered) else None

    def redeliver(self, attempt_id: int) -> None:
        if attempt_id in self.fail_redelivery:
            raise RuntimeError("GitHub said 502")
        self.asked.append(attempt_id)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    db = Store(f"sqlite:///{tmp_path / 'r.db'}")
    db.upgrade()
    return db


def stored(store: Store, *guids: str) -> None:
    for guid in guids:
        payload = pr_payload()
        store.add_delivery(event_of("pull_request", guid, payload), json.dumps(payload))


def test_what_failed_and_is_not_stored_is_redelivered_oldest_first(store: Store) -> None:
    api = FakeApi([
        attempt(1, "a", 0, ago=300),          # no connection: redelivered
        attempt(2, "b", 503, ago=200),        # the store was down: redelivered
        attempt(3, "c", 202, ago=150),        # delivered and stored
        attempt(4, "d", 0, ago=120),          # failed, but stored (the answer was lost)
        attempt(5, "e", 401, ago=100),        # refused: a bad signature will not get better
        attempt(6, "f", 0, ago=90, event="ping"),  # pings are answered, never stored
        attempt(7, "g", 429, ago=80),         # throttled: redelivered
        attempt(8, "h", 202, ago=70),         # acknowledged but not stored (a store reset)
        attempt(9, "b", 0, ago=50, redelivery=True),  # a redelivery that failed again
    ])
    stored(store, "c", "d")
    result = reconcile(api, store, since_minutes=10, now=NOW)
    assert api.asked == [1, 9, 7, 8]  # one request per GUID, its latest attempt, in first-sent order
    assert result.redelivered == ["a", "b", "g", "h"]
    assert (result.attempts, result.deliveries, result.stored, result.failed, result.unstored_ok) == (
        9, 7, 2, 4, 1)
    assert result.refused == ["e"] and result.errors == [] and result.gave_up == []
    assert "4 redelivery requests" in result.summary() and "1 refused by the service" in result.summary()


def test_a_second_pass_asks_nothing_for_what_is_now_stored(store: Store) -> None:
    api = FakeApi([attempt(1, "a", 0), attempt(2, "b", 0), attempt(3, "c", 202)])
    stored(store, "c")
    assert reconcile(api, store, since_minutes=10, now=NOW).redelivered == ["a", "b"]
    stored(store, "a", "b")  # GitHub redelivered them
    api.attempts += [attempt(4, "a", 202, ago=1, redelivery=True),
                     attempt(5, "b", 202, ago=1, redelivery=True)]
    again = reconcile(api, store, since_minutes=10, now=NOW)
    assert again.redelivered == [] and api.asked == [1, 2] and again.stored == 3


def test_only_the_window_is_listed(store: Store) -> None:
    old = [attempt(n, f"old{n}", 0, ago=3600 + n) for n in range(1, 8)]
    api = FakeApi([*old, attempt(100, "new", 0, ago=30), attempt(101, "newer", 0, ago=20)], per_page=2)
    result = reconcile(api, store, since_minutes=5, now=NOW)
    assert result.redelivered == ["new", "newer"]
    assert api.pages == 2  # the second page is wholly before the window: no third


def test_a_delivery_that_keeps_failing_is_given_up(store: Store) -> None:
    tries = [attempt(n, "stuck", 500, ago=100 - n, redelivery=n > 1) for n in range(1, MAX_ATTEMPTS + 1)]
    result = reconcile(FakeApi(tries), store, since_minutes=10, now=NOW)
    assert result.gave_up == ["stuck"] and result.redelivered == []


def test_a_refused_redelivery_request_is_reported_and_the_rest_go_on(store: Store) -> None:
    api = FakeApi([attempt(1, "a", 0, ago=30), attempt(2, "b", 0, ago=20)], fail_redelivery={1})
    result = reconcile(api, store, since_minutes=10, now=NOW)
    assert result.redelivered == ["b"] and result.errors == ["a: RuntimeError: GitHub said 502"]


def test_dry_run_asks_nothing(store: Store) -> None:
    api = FakeApi([attempt(1, "a", 0)])
    assert reconcile(api, store, since_minutes=10, now=NOW, dry_run=True).redelivered == ["a"]
    assert api.asked == []


def test_a_listing_failure_is_an_error(store: Store) -> None:
    with pytest.raises(ReconcileError, match="cannot list the App's deliveries: RuntimeError"):
        reconcile(FakeApi([], fail_listing=True), store, since_minutes=10, now=NOW)


def test_the_next_cursor_comes_from_the_link_header() -> None:
    link = ('<https://api.github.com/app/hook/deliveries?per_page=100&cursor=v1_123>; rel="next", '
            '<https://api.github.com/app/hook/deliveries?per_page=100>; rel="first"')
    assert next_cursor(link) == "v1_123"
    assert next_cursor('<https://x/app/hook/deliveries?per_page=2>; rel="first"') is None
    assert next_cursor(None) is None


def test_attempts_are_read_from_github_json() -> None:
    found = Attempt.from_json({"id": 5, "guid": "g", "event": "issue_comment", "action": "created",
                               "status_code": 0, "redelivery": False,
                               "delivered_at": "2027-01-15T08:00:00Z"})
    assert (found.id, found.guid, found.ok, found.refused, found.delivered_at) == (
        5, "g", False, False, datetime(2027, 1, 15, 8, tzinfo=UTC).timestamp())


def test_the_command_needs_app_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("ROCMBOT_APP_ID", "ROCMBOT_PRIVATE_KEY", "ROCMBOT_PRIVATE_KEY_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ROCMBOT_DATABASE_URL", f"sqlite:///{tmp_path / 'c.db'}")
    assert main(["reconcile"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs ROCMBOT_APP_ID and ROCMBOT_PRIVATE_KEY" in err
    assert main(["reconcile", "--since", "5000"]) == 2
    assert "--since takes minutes between 0 and 4320" in capsys.readouterr().err
