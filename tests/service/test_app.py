"""The service over real HTTP: uvicorn on loopback, real SQLite."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.exc import OperationalError

from bot.cli.demo import build_example
from bot.cli.wiring import service_app
from bot.core.events import Event
from bot.service.app import client_key, create_app
from bot.service.logs import JsonFormatter
from bot.service.router import Router
from bot.store.store import Store
from config.settings import Settings, SettingsError
from tests.service.helpers import SECRET, pr_payload, signed
from tests.service.server import running, serving


def _settings(tmp_path: Path, **extra: Any) -> Settings:
    values: dict[str, Any] = {"webhook_secret": SECRET.decode(), "database_url": f"sqlite:///{tmp_path}/db.sqlite",
                              "poll_seconds": 0.02, "lease_seconds": 5, "backoff_base_seconds": 0.01,
                              "max_attempts": 2, **extra}
    return Settings(**values)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    with serving(create_app(_settings(tmp_path, max_body_bytes=64 * 1024))) as url:
        yield url


def test_a_signed_delivery_is_stored_then_acknowledged_once(service: str, tmp_path: Path) -> None:
    body, headers = signed("pull_request", "d-1", pr_payload())
    first = httpx.post(f"{service}/webhook", content=body, headers=headers)
    again = httpx.post(f"{service}/webhook", content=body, headers=headers)
    assert (first.status_code, first.json()) == (202, {"status": "queued", "delivery_id": "d-1"})
    assert (again.status_code, again.json()["status"]) == (200, "duplicate")
    store = Store(f"sqlite:///{tmp_path}/db.sqlite")
    record = store.get("d-1")
    store.close()
    assert record is not None and record.pr_key == "octo/miles#1" and record.status == "queued"


def test_each_acknowledged_delivery_is_logged_as_json_with_its_fields(
        service: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="bot.service.app")
    body, headers = signed("pull_request", "d-log", pr_payload(number=7))
    for _ in range(2):
        assert httpx.post(f"{service}/webhook", content=body, headers=headers).status_code in (200, 202)
    deadline = time.monotonic() + 60  # written once the answer is sent
    while len([r for r in caplog.records if r.name == "bot.service.app"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    lines = [json.loads(JsonFormatter().format(r)) for r in caplog.records if r.name == "bot.service.app"]
    assert [(line["message"], line["delivery_id"], line["event"], line["action"], line["repository"],
             line["pr"]) for line in lines] == [
        (f"delivery {outcome}", "d-log", "pull_request", "synchronize", "octo/miles", 7)
        for outcome in ("stored", "duplicate")]


def test_form_encoded_deliveries_are_accepted(service: str) -> None:
    payload = json.dumps(pr_payload())
    body = httpx.QueryParams({"payload": payload}).__str__().encode()
    _, headers = signed("pull_request", "d-form", body)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    answer = httpx.post(f"{service}/webhook", content=body, headers=headers)
    assert answer.status_code == 202


@pytest.mark.parametrize(
    ("change", "status", "reason"),
    [
        ({"X-Hub-Signature-256": None}, 401, "missing X-Hub-Signature-256"),
        ({"X-Hub-Signature-256": "sha256=" + "0" * 64}, 401, "does not match"),
        ({"X-GitHub-Event": None}, 400, "missing X-GitHub-Event"),
        ({"X-GitHub-Delivery": None}, 400, "missing X-GitHub-Delivery"),
        ({"Content-Type": "text/xml"}, 415, "unsupported content type"),
    ],
)
def test_bad_requests_get_a_status_and_a_json_reason(
    service: str, change: dict[str, str | None], status: int, reason: str
) -> None:
    body, headers = signed("pull_request", "d-bad", pr_payload())
    for key, value in change.items():
        if value is None:
            headers.pop(key)
        else:
            headers[key] = value
    answer = httpx.post(f"{service}/webhook", content=body, headers=headers)
    assert answer.status_code == status
    assert reason in answer.json()["error"]


def test_malformed_json_is_400(service: str) -> None:
    body, headers = signed("pull_request", "d-json", b"{not json")
    answer = httpx.post(f"{service}/webhook", content=body, headers=headers)
    assert answer.status_code == 400 and "not valid JSON" in answer.json()["error"]


def test_oversized_bodies_are_413_declared_or_streamed(service: str) -> None:
    big = b'{"x": "' + b"a" * (70 * 1024) + b'"}'
    body, headers = signed("pull_request", "d-big", big)
    assert httpx.post(f"{service}/webhook", content=body, headers=headers).status_code == 413

    def chunks() -> Iterator[bytes]:
        for _ in range(70):
            yield b"a" * 1024

    del headers["Content-Type"]
    streamed = httpx.post(f"{service}/webhook", content=chunks(), headers=headers)
    assert streamed.status_code == 413 and "limit" in streamed.json()["error"]


def test_ping_answers_200(service: str) -> None:
    body, headers = signed("ping", "d-ping", {"zen": "Keep it logically awesome.", "hook_id": 1})
    answer = httpx.post(f"{service}/webhook", content=body, headers=headers)
    assert answer.status_code == 200 and answer.json()["status"] == "pong"


def test_health_readiness_and_metrics(service: str) -> None:
    assert httpx.get(f"{service}/healthz").json() == {"status": "ok"}
    assert httpx.get(f"{service}/readyz").json() == {"status": "ready"}
    body, headers = signed("pull_request", "d-m", pr_payload())
    httpx.post(f"{service}/webhook", content=body, headers=headers)
    text = httpx.get(f"{service}/metrics").text
    assert 'rocmbot_deliveries_total{event="pull_request",outcome="stored"} 1.0' in text
    assert 'rocmbot_deliveries_by_status{status="queued"} 1.0' in text
    assert "rocmbot_ack_seconds_bucket" in text


def test_a_delivery_waits_for_the_write_lock_another_connection_holds(tmp_path: Path) -> None:
    """In a thread: the event loop goes on answering meanwhile."""
    writer = sqlite3.connect(tmp_path / "db.sqlite", isolation_level=None, check_same_thread=False)
    run_app = create_app(_settings(tmp_path, max_body_bytes=64 * 1024))
    with running(run_app) as run:
        writer.execute("BEGIN IMMEDIATE")
        body, headers = signed("pull_request", "d-wait", pr_payload())
        answers: list[httpx.Response] = []
        sender = threading.Thread(target=lambda: answers.append(
            httpx.post(f"{run.url}/webhook", content=body, headers=headers, timeout=60)))
        sender.start()
        deadline = time.monotonic() + 60
        while not run.server.server_state.tasks:  # the delivery's request is being handled
            assert time.monotonic() < deadline, "the delivery never reached the server"
            time.sleep(0.005)
        # Answered while the delivery waits for the lock (it cannot be stored before COMMIT);
        # a blocked event loop would not answer at all.
        assert httpx.get(f"{run.url}/healthz", timeout=60).status_code == 200
        assert not answers
        writer.execute("COMMIT")
        sender.join(60)
    assert [a.status_code for a in answers] == [202]
    stored = writer.execute("SELECT status FROM deliveries WHERE delivery_id = 'd-wait'").fetchone()
    assert stored == ("queued",)
    writer.close()


def test_sqlite_is_checkpointed_in_the_background(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr("bot.service.app.CHECKPOINT_SECONDS", 0.01)
    store = Store(f"sqlite:///{tmp_path}/db.sqlite")
    calls: list[tuple[int, int]] = []
    checkpoint = store.checkpoint

    def counted() -> tuple[int, int]:
        if not calls:
            calls.append((0, 0))
            raise OperationalError("PRAGMA wal_checkpoint", None, Exception("disk I/O error"))
        calls.append(checkpoint())
        return calls[-1]

    monkeypatch.setattr(store, "checkpoint", counted)
    with serving(create_app(_settings(tmp_path), store=store)) as url:
        body, headers = signed("pull_request", "d-c", pr_payload())
        assert httpx.post(f"{url}/webhook", content=body, headers=headers).status_code == 202
        deadline = time.monotonic() + 60
        while not any(copied > 0 for _, copied in calls) and time.monotonic() < deadline:
            time.sleep(0.01)
    store.close()
    assert any(copied > 0 for _, copied in calls)  # the delivery's frames reached the file
    assert any(r.message == "checkpoint failed" and "disk I/O error" in r.__dict__["error"]
               for r in caplog.records)  # and a failed checkpoint did not stop the next ones


def test_not_ready_until_migrated(tmp_path: Path) -> None:
    settings = _settings(tmp_path, auto_migrate=False)
    with serving(create_app(settings)) as url:
        answer = httpx.get(f"{url}/readyz")
        assert answer.status_code == 503 and "rocmbot db upgrade" in answer.json()["reason"]
        body, headers = signed("pull_request", "d-x", pr_payload())
        stored = httpx.post(f"{url}/webhook", content=body, headers=headers)
        assert stored.status_code == 503 and "redeliver later" in stored.json()["error"]


def test_refuses_to_start_without_a_secret_unless_dry_run_is_explicit(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="ROCMBOT_WEBHOOK_SECRET is not set"):
        create_app(Settings(database_url=f"sqlite:///{tmp_path}/a.db"))
    with pytest.raises(SettingsError):
        create_app(Settings(database_url=f"sqlite:///{tmp_path}/a.db", dry_run=False))
    app = create_app(Settings(database_url=f"sqlite:///{tmp_path}/a.db", dry_run=True))
    with serving(app) as url:
        body, headers = signed("pull_request", "d-unsigned", pr_payload())
        del headers["X-Hub-Signature-256"]
        assert httpx.post(f"{url}/webhook", content=body, headers=headers).status_code == 202


def test_rotated_secrets_both_verify(tmp_path: Path) -> None:
    app = create_app(_settings(tmp_path, webhook_secret="new-secret, test-secret"))
    with serving(app) as url:
        for n, secret in enumerate((b"new-secret", SECRET)):
            body, headers = signed("pull_request", f"d-{n}", pr_payload(), secret)
            assert httpx.post(f"{url}/webhook", content=body, headers=headers).status_code == 202


def test_the_in_process_worker_processes_and_isolates_handler_failures(tmp_path: Path) -> None:
    router = Router()
    seen: list[tuple[str, str]] = []

    @router.register("pull_request", "synchronize")
    def broken(event: Event, context: Any) -> None:
        seen.append(("broken", event.delivery_id))
        raise RuntimeError("handler bug")

    @router.register("pull_request")
    def fine(event: Event, context: Any) -> None:
        assert context.store is not None and context.event is event
        seen.append(("fine", event.delivery_id))

    settings = _settings(tmp_path)
    with serving(service_app(settings, router=router, run_worker=True)) as url:
        for n, action in enumerate(("opened", "synchronize")):
            body, headers = signed("pull_request", f"w-{n}", pr_payload(number=n, action=action))
            assert httpx.post(f"{url}/webhook", content=body, headers=headers).status_code == 202
        deadline = time.monotonic() + 60
        store = Store(settings.database_url)
        while time.monotonic() < deadline:
            states = {d.delivery_id: d.status for d in store.recent()}
            if states == {"w-0": "done", "w-1": "dead"}:
                break
            time.sleep(0.05)
        dead = store.get("w-1")
        store.close()
        assert states == {"w-0": "done", "w-1": "dead"}
        assert dead is not None and dead.attempts == 2
        assert "handler bug" in (dead.last_error or "") and "broken" in (dead.last_error or "")
        assert ("fine", "w-1") in seen  # the other handler still ran
        metrics = httpx.get(f"{url}/metrics").text
        assert "rocmbot_dead_letters_total 1.0" in metrics and "rocmbot_retries_total 1.0" in metrics


def test_a_delivery_this_process_stored_wakes_its_idle_worker(tmp_path: Path) -> None:
    """The worker polls once an hour here: a delivery is processed because the web side woke
    it, not because a poll came round."""
    router = Router()
    done = {n: threading.Event() for n in (1, 2)}
    router.register("pull_request")(lambda event, context: done[event.pr_number or 0].set())
    settings = _settings(tmp_path).model_copy(update={"poll_seconds": 3600.0})
    with serving(service_app(settings, router=router, run_worker=True)) as url:
        for n in (1, 2):  # the second comes when the loops have gone idle after the first
            body, headers = signed("pull_request", f"w-wake-{n}", pr_payload(number=n, action="opened"))
            assert httpx.post(f"{url}/webhook", content=body, headers=headers).status_code == 202
            assert done[n].wait(60), f"delivery {n} waited for the next poll"


def test_without_app_credentials_a_local_clone_is_analysed_and_its_effects_recorded(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, product_router: Router) -> None:
    """What `bin/run` promises without a GitHub App: deliveries are analysed (the PR read from
    the clone in ROCMBOT_LOCAL_REPO) and their effects recorded in the ledger, not sent."""
    base, head = build_example(tmp_path / "example")
    settings = Settings(dry_run=True, database_url=f"sqlite:///{tmp_path}/db.sqlite", poll_seconds=0.02,
                        local_repo=tmp_path / "example")
    payload = pr_payload(number=1, sha=head, action="opened", repo="example/miles")
    payload["pull_request"]["base"]["sha"] = base
    body = json.dumps(payload).encode()
    caplog.set_level(logging.WARNING, logger="bot.service.app")
    with serving(service_app(settings, router=product_router, run_worker=True)) as url:
        answer = httpx.post(f"{url}/webhook", content=body, headers={
            "Content-Type": "application/json", "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": "local-1"})
        assert answer.status_code == 202
        store = Store(settings.database_url)
        try:
            _wait_for(lambda: store.get("local-1").status == "done")  # type: ignore[union-attr]
            effects = store.effects()
        finally:
            store.close()
    assert {e.kind for e in effects} >= {"check_run", "comment"}
    assert all(e.status == "dry_run" and e.result["dry_run"] is True and e.result["content"]
               for e in effects)
    assert any("ROCMBOT_LOCAL_REPO" in r.getMessage() for r in caplog.records)


def test_without_app_credentials_or_a_clone_the_log_says_how_to_see_the_bot_work(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="bot.service.app")
    settings = Settings(dry_run=True, database_url=f"sqlite:///{tmp_path}/db.sqlite")
    with serving(service_app(settings, router=Router(), run_worker=True)):
        pass
    notices = [r.getMessage() for r in caplog.records if "no App credentials" in r.getMessage()]
    assert len(notices) == 1 and "nothing is analysed" in notices[0] and "`rocmbot sandbox`" in notices[0]


def test_a_worker_needs_the_router_it_runs(tmp_path: Path) -> None:
    """The service does not know the handlers: the CLI (bot.cli.wiring) hands them in."""
    with pytest.raises(ValueError, match="needs the router"):
        create_app(_settings(tmp_path), run_worker=True)


def _wait_for(condition: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.05)


@pytest.mark.parametrize(("host", "key"), [
    ("192.0.2.7", "192.0.2.7"),
    ("::ffff:192.0.2.7", "192.0.2.7"),  # IPv4-mapped: the IPv4 client
    ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),  # one host commonly has a whole /64
    ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),
    ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
    ("testclient", "testclient"),
])
def test_the_intake_caps_a_client_by_its_ipv4_address_or_ipv6_64(host: str, key: str) -> None:
    assert client_key(host) == key
