"""Missed deliveries: ask GitHub to redeliver what never reached the store.

GitHub records every delivery it makes to the App's webhook, with the status code of the answer,
keeps the record three days, and never redelivers a failed delivery by itself. The reconciler
lists the App's deliveries with the App's JWT (``GET /app/hook/deliveries``, newest first, paged
with a cursor) back to a window, groups the attempts by GUID (the ``X-GitHub-Delivery`` id the
store is keyed on), and asks for one redelivery (``POST /app/hook/deliveries/{id}/attempts``) of
each GUID that the store does not hold, unless the service refused it for good (a 4xx other than
408 and 429: a bad signature or body will not get better) or it was already attempted
``MAX_ATTEMPTS`` times in the window. A GUID the store holds is never asked for again, so running
it twice asks nothing twice for what arrived in between.
"""

from __future__ import annotations

import logging
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from bot.store.store import Store
from config.settings import Settings

log = logging.getLogger(__name__)

PER_PAGE = 100
MAX_PAGES = 2000  # 200,000 deliveries: more than three days of a busy App
MAX_ATTEMPTS = 6  # attempts of one GUID in the window after which the reconciler stops asking
NOT_STORED = frozenset({"ping"})  # answered without being stored
RETRYABLE_4XX = frozenset({408, 429})
API_VERSION = "2022-11-28"


class ReconcileError(Exception):
    """The reconciler cannot run (no App credentials, or GitHub refused to list deliveries)."""


@dataclass(frozen=True)
class Attempt:
    """One delivery attempt as GitHub lists it."""

    id: int
    guid: str
    event: str
    action: str | None
    status_code: int
    redelivery: bool
    delivered_at: float

    @property
    def ok(self) -> bool:
        return 200 <= self.status_code < 300

    @property
    def refused(self) -> bool:
        """The service answered and refused it: redelivering the same body cannot help."""
        return 400 <= self.status_code < 500 and self.status_code not in RETRYABLE_4XX

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Attempt:
        stamp = str(data.get("delivered_at") or "")
        try:
            when = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            when = 0.0
        return cls(
            id=int(data["id"]),
            guid=str(data.get("guid") or ""),
            event=str(data.get("event") or ""),
            action=data.get("action") if isinstance(data.get("action"), str) else None,
            status_code=int(data.get("status_code") or 0),
            redelivery=bool(data.get("redelivery")),
            delivered_at=when,
        )


class DeliveriesApi(Protocol):
    """The two calls the reconciler makes."""

    def page(self, cursor: str | None) -> tuple[list[Attempt], str | None]:
        """One page of the App's deliveries, newest first, and the cursor of the next page."""
        ...

    def redeliver(self, attempt_id: int) -> None: ...


def next_cursor(link: str | None) -> str | None:
    """The ``cursor`` of the ``rel="next"`` URL of a Link header."""
    for part in (link or "").split(","):
        if 'rel="next"' not in part:
            continue
        url = part.split(";", 1)[0].strip().strip("<>")
        values = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("cursor")
        if values:
            return values[0]
    return None


class AppDeliveries:
    """The deliveries API through PyGithub, authenticated as the App (a JWT, not a token)."""

    def __init__(self, settings: Settings) -> None:
        from github import Auth, GithubIntegration

        from bot.github.adapter import retry_policy

        key = settings.app_private_key()
        if settings.app_id is None or key is None:
            raise ReconcileError(
                "listing the App's deliveries needs ROCMBOT_APP_ID and ROCMBOT_PRIVATE_KEY "
                "(or ROCMBOT_PRIVATE_KEY_PATH)"
            )
        self._integration = GithubIntegration(
            auth=Auth.AppAuth(settings.app_id, key),
            base_url=settings.github_api_url,
            retry=retry_policy(settings),
            seconds_between_requests=None,
            seconds_between_writes=None,
            timeout=30,
        )
        self._headers = {"X-GitHub-Api-Version": API_VERSION, "Accept": "application/vnd.github+json"}

    def page(self, cursor: str | None) -> tuple[list[Attempt], str | None]:
        params: dict[str, Any] = {"per_page": PER_PAGE}
        if cursor:
            params["cursor"] = cursor
        headers, data = self._integration.requester.requestJsonAndCheck(
            "GET", "/app/hook/deliveries", parameters=params, headers=self._headers
        )
        items = [Attempt.from_json(d) for d in data or [] if isinstance(d, dict)]
        return items, next_cursor(headers.get("link"))

    def redeliver(self, attempt_id: int) -> None:
        self._integration.requester.requestJsonAndCheck(
            "POST", f"/app/hook/deliveries/{attempt_id}/attempts", headers=self._headers
        )

    def close(self) -> None:
        self._integration.close()


@dataclass
class Result:
    """What one pass found and asked for."""

    since_minutes: float
    attempts: int = 0  # delivery attempts listed in the window
    deliveries: int = 0  # distinct GUIDs among them
    stored: int = 0  # GUIDs the store holds
    failed: int = 0  # GUIDs not stored whose last attempt failed
    unstored_ok: int = 0  # GUIDs not stored although GitHub saw a 2xx (a store reset, another receiver)
    refused: list[str] = field(default_factory=list)  # not stored, refused by the service (4xx)
    gave_up: list[str] = field(default_factory=list)  # not stored after MAX_ATTEMPTS attempts
    redelivered: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [
            f"{self.deliveries} deliveries ({self.attempts} attempts) "
            f"in the last {self.since_minutes:g} minutes",
            f"{self.stored} stored",
            f"{self.failed} failed",
        ]
        if self.unstored_ok:
            parts.append(f"{self.unstored_ok} acknowledged but not stored")
        if self.refused:
            parts.append(f"{len(self.refused)} refused by the service (not redelivered)")
        if self.gave_up:
            parts.append(f"{len(self.gave_up)} given up after {MAX_ATTEMPTS} attempts")
        parts.append(f"{len(self.redelivered)} redelivery requests")
        if self.errors:
            parts.append(f"{len(self.errors)} requests failed")
        return ", ".join(parts)


def _error(exc: Exception) -> str:
    status = getattr(exc, "status", None)
    return f"{type(exc).__name__} {status}" if status is not None else f"{type(exc).__name__}: {exc}"


def reconcile(
    api: DeliveriesApi,
    store: Store,
    *,
    since_minutes: float,
    now: float | None = None,
    dry_run: bool = False,
) -> Result:
    """One pass: list the window's deliveries, redeliver what the store misses (oldest first)."""
    now = time.time() if now is None else now
    cutoff = now - since_minutes * 60
    result = Result(since_minutes)
    attempts: list[Attempt] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        try:
            items, cursor = api.page(cursor)
        except Exception as exc:
            raise ReconcileError(f"cannot list the App's deliveries: {_error(exc)}") from exc
        inside = [a for a in items if a.delivered_at >= cutoff]
        attempts.extend(inside)
        if cursor is None or not inside:  # newest first: a page wholly before the window ends it
            break
    result.attempts = len(attempts)
    by_guid: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        if attempt.guid and attempt.event not in NOT_STORED:
            by_guid.setdefault(attempt.guid, []).append(attempt)
    result.deliveries = len(by_guid)
    stored = store.stored_ids(list(by_guid))
    result.stored = len(stored)
    wanted: list[tuple[float, str, Attempt]] = []
    for guid, tries in by_guid.items():
        if guid in stored:
            continue
        last = max(tries, key=lambda a: (a.delivered_at, a.id))
        if last.ok:
            result.unstored_ok += 1
        else:
            result.failed += 1
            if last.refused:
                result.refused.append(guid)
                continue
        if len(tries) >= MAX_ATTEMPTS:
            result.gave_up.append(guid)
            continue
        first = min(a.delivered_at for a in tries)
        wanted.append((first, guid, last))
    for _, guid, last in sorted(wanted, key=lambda w: (w[0], w[2].id)):  # the order GitHub first sent them
        if dry_run:
            result.redelivered.append(guid)
            continue
        try:
            api.redeliver(last.id)
        except Exception as exc:
            result.errors.append(f"{guid}: {_error(exc)}")
            log.warning("redelivery request failed", extra={"delivery_id": guid, "error": _error(exc)})
            continue
        result.redelivered.append(guid)
        log.info("redelivery requested", extra={"delivery_id": guid, "event": last.event,
                                                "action": last.action, "status_code": last.status_code})
    if result.refused:
        log.warning("deliveries refused by the service are not redelivered",
                    extra={"count": len(result.refused), "delivery_ids": result.refused[:20]})
    return result


def run_once(settings: Settings, store: Store, *, since_minutes: float | None = None,
             dry_run: bool = False) -> Result:
    """One pass with the App's credentials from ``settings``."""
    api = AppDeliveries(settings)
    try:
        return reconcile(api, store, since_minutes=since_minutes or settings.reconcile_window_minutes,
                         dry_run=dry_run)
    finally:
        api.close()


class Reconciler:
    """Passes in a background thread: once ``first_delay`` seconds after ``ready()`` holds, then
    every ``ROCMBOT_RECONCILE_MINUTES``."""

    def __init__(self, settings: Settings, *, ready: Callable[[], bool] = lambda: True,
                 first_delay: float = 2.0) -> None:
        self.settings = settings
        self.ready = ready
        self.first_delay = first_delay
        self.passes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rocmbot-reconciler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        while not self.ready():
            if self._stop.wait(0.1):
                return
        if self._stop.wait(self.first_delay):
            return
        store = Store(self.settings.database_url)
        try:
            while True:
                try:
                    result = run_once(self.settings, store)
                    self.passes += 1
                    log.info("reconciled deliveries", extra={"summary": result.summary(),
                                                             "redelivered": len(result.redelivered)})
                except Exception as exc:
                    log.warning("reconcile pass failed", extra={"error": _error(exc)})
                if self._stop.wait(self.settings.reconcile_minutes * 60):
                    return
        finally:
            store.close()
