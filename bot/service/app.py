"""The web service: `create_app(settings)` builds it; nothing is read or connected at import."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel
from sqlalchemy.exc import SQLAlchemyError
from starlette.background import BackgroundTask

from bot.core.events import Event
from bot.service.metrics import Metrics
from bot.service.router import Router
from bot.service.webhooks import WebhookError, metric_event, parse_delivery
from bot.service.worker import Clock, ContextFactory, DeadLetter, GoLive, Reenable, Sweep, Worker
from bot.store.ingest import LoopInserter, loop_inserter
from bot.store.store import Store, StoreError
from config.settings import Settings

log = logging.getLogger(__name__)


class ErrorBody(BaseModel):
    """Every refusal of the webhook endpoint: a JSON object with the reason."""

    error: str


class Accepted(BaseModel):
    """A delivery stored (``queued``), already stored (``duplicate``), or a ping (``pong``)."""

    status: str
    delivery_id: str


class Readiness(BaseModel):
    """`ready`, or `not ready` with the reason (the database is unreachable or not migrated)."""

    status: str
    reason: str | None = None


def _error(status: int, reason: str) -> JSONResponse:
    # A refusal before the body is read closes the connection: the rest is not read.
    headers = {"Connection": "close"} if status in (408, 413, 503) else None
    return JSONResponse({"error": reason}, status_code=status, headers=headers)


def _header(name: str, description: str, required: bool = True, longest: int = 100) -> dict[str, Any]:
    return {"name": name, "in": "header", "required": required, "description": description,
            "schema": {"type": "string", "maxLength": longest}}


# The request the endpoint takes, for the OpenAPI description (the handler reads the raw
# body itself: the signature is over its bytes, so FastAPI must not parse it first).
WEBHOOK_REQUEST: dict[str, Any] = {
    "parameters": [
        _header("X-GitHub-Event", "The event name (`pull_request`, `issue_comment`, `ping`, ...)"),
        _header("X-GitHub-Delivery", "The delivery's unique id (a redelivery keeps it)"),
        _header("X-Hub-Signature-256", "`sha256=` and the hex HMAC-SHA256 of the raw body under the "
                "webhook secret (required unless the service runs without one, in dry-run)",
                required=False, longest=71),
    ],
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"type": "object", "description": "The event payload"}},
            "application/x-www-form-urlencoded": {
                "schema": {"type": "object", "required": ["payload"],
                           "properties": {"payload": {"type": "string",
                                                      "description": "The payload as JSON"}}},
            },
        },
    },
}


SMALL_BODY_BYTES = 1024 * 1024
BUSY = "too many deliveries are being read at once; redeliver later"
BUSY_CLIENT = "too many deliveries from one address are being read at once; redeliver later"


def client_key(host: str) -> str:
    """The client a connection's address counts as: an IPv4 address, or an IPv6 /64 network
    (one host commonly has a whole /64; an IPv4-mapped address is its IPv4 address)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:  # not an address (a Unix socket's peer, a test client's name)
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


@dataclass
class _Client:
    bodies: int = 0
    held: int = 0


class BodyBudget:
    """The bytes of request bodies held at once before their signature is checked.

    Anybody can send a body: it is read only while what it holds fits the budget, and answered
    503 beyond it, so unauthenticated requests cannot make the service hold memory without bound.

    - A large body (declared over a MiB) is charged its declared size before a byte of it is
      read, and a body of no declared size (chunked) as it arrives; large bodies together hold
      at most four fifths of the budget, so a flood of them does not turn small ones (nearly
      all of GitHub's deliveries) away.
    - A small body (declared, at most a MiB) is charged what has come of it, as it comes, so a
      body that trickles in holds what it sent and no more. Small bodies together hold at most
      the budget less one largest body, so one large delivery always fits.
    - One client (an IPv4 address, or an IPv6 /64: one host has all of it) holds at most a
      quarter of the budget (and at least one largest body), in at most ``per_client`` bodies.

    Used on the event loop only.
    """

    def __init__(self, total: int, largest: int, per_client: int) -> None:
        self.total = max(total, largest)
        self.large_total = max(self.total - self.total // 5, largest)
        self.small_total = max(self.total - largest, self.total // 5)
        self.client_total = max(self.total // 4, largest)
        self.per_client = per_client
        self.used = 0
        self.small_used = 0
        self.peak = 0
        self.clients: dict[str, _Client] = {}

    def open(self, address: str, *, small: bool) -> Share | None:
        """A share for one body from ``address``, holding nothing yet; None when that address
        has ``per_client`` bodies being read already."""
        client = self.clients.setdefault(address, _Client())
        if client.bodies >= self.per_client:
            return None
        client.bodies += 1
        return Share(self, address, client, small)


class Share:
    """What one body holds of a `BodyBudget`."""

    def __init__(self, budget: BodyBudget, address: str, client: _Client, small: bool) -> None:
        self.budget = budget
        self.address = address
        self.client = client
        self.small = small
        self.held = 0

    def take(self, size: int) -> str | None:
        """Hold ``size`` more bytes; None when they fit, else the reason they do not."""
        budget = self.budget
        if size <= 0:
            return None
        if budget.used + size > (budget.total if self.small else budget.large_total):
            return BUSY
        if self.small and budget.small_used + size > budget.small_total:
            return BUSY
        if self.client.held + size > budget.client_total:
            return BUSY_CLIENT
        budget.used += size
        if self.small:
            budget.small_used += size
        self.client.held += size
        self.held += size
        budget.peak = max(budget.peak, budget.used)
        return None

    def close(self) -> None:
        """Give everything back."""
        budget = self.budget
        budget.used -= self.held
        if self.small:
            budget.small_used -= self.held
        self.client.held -= self.held
        self.client.bodies -= 1
        if not self.client.bodies:
            del budget.clients[self.address]
        self.held = 0


@dataclass(frozen=True)
class Pace:
    """How fast a body must come: each piece within ``chunk`` seconds of the one before, and
    after the first ``floor`` seconds at ``rate`` bytes a second on average, so a body of N
    bytes is due ``floor + N / rate`` seconds after its headers."""

    chunk: float
    floor: float
    rate: int

    @classmethod
    def of(cls, settings: Settings) -> Pace:
        return cls(settings.body_chunk_seconds, settings.body_read_seconds,
                   settings.body_min_bytes_per_second)


def _refuse(reason: str | None) -> None:
    if reason is not None:
        raise WebhookError(503, reason)


@asynccontextmanager
async def _body(request: Request, limit: int, budget: BodyBudget, pace: Pace) -> AsyncIterator[bytearray]:
    """The request's body, held within ``budget`` until the block ends."""
    declared: int | None = None
    if "content-length" in request.headers:
        try:
            declared = int(request.headers["content-length"])
        except ValueError as exc:
            raise WebhookError(400, "Content-Length is not a number") from exc
        if declared < 0:
            raise WebhookError(400, "Content-Length is negative")
        if declared > limit:
            raise WebhookError(413, f"body is over the {limit}-byte limit")
    # The peer's address (or, from a proxy uvicorn trusts, the one it forwards).
    address = client_key(request.client.host) if request.client is not None else ""
    share = budget.open(address, small=declared is not None and declared <= SMALL_BODY_BYTES)
    if share is None:
        raise WebhookError(503, BUSY_CLIENT)
    try:
        yield await _read(request, declared, limit, share, pace)
    finally:
        share.close()


async def _read(request: Request, declared: int | None, limit: int, share: Share, pace: Pace) -> bytearray:
    """Read the body, holding it in ``share``, at ``pace``."""
    if declared is not None and not share.small:  # one buffer of the declared size, taken first
        _refuse(share.take(declared))
        body = bytearray(declared)
    else:
        body = bytearray()
    loop = asyncio.get_running_loop()
    start = loop.time()
    size = 0
    while True:
        # The next byte is due when the minimum rate asks for it, and within `chunk` seconds.
        left = start + pace.floor + (size + 1) / pace.rate - loop.time()
        wait = min(pace.chunk, left)
        try:
            if wait <= 0:
                raise TimeoutError
            async with asyncio.timeout(wait):
                message = await request.receive()
        except TimeoutError as exc:
            how = (f"nothing came for {pace.chunk:g} s" if wait == pace.chunk else
                   f"under {pace.rate} bytes a second after the first {pace.floor:g} s")
            raise WebhookError(408, "the body did not arrive in time: " + how) from exc
        if message["type"] == "http.disconnect":  # nobody hears the answer; not a server error
            raise WebhookError(400, "the client went away before the body ended")
        chunk: bytes = message.get("body", b"")
        end = size + len(chunk)
        if end > limit:
            raise WebhookError(413, f"body is over the {limit}-byte limit")
        if declared is None or share.small:
            _refuse(share.take(len(chunk)))
            body += chunk
        else:
            body[size:end] = chunk
        size = end
        if not message.get("more_body", False):
            return body


async def _log_info(message: str, fields: dict[str, Any]) -> None:
    """Log after the answer is sent (a coroutine: Starlette runs a plain function in a thread)."""
    log.info(message, extra=fields)


CHECKPOINT_SECONDS = 1.0


async def _checkpoints(db: Store) -> None:
    """Checkpoint SQLite's write-ahead log in a thread every second, so that no write on the
    acknowledgement path pays for one (the database file's sync takes milliseconds)."""
    while True:
        await anyio.sleep(CHECKPOINT_SECONDS)
        try:
            await anyio.to_thread.run_sync(db.checkpoint)
        except SQLAlchemyError as exc:  # the next one tries again; writes do not depend on it
            log.warning("checkpoint failed", extra={"error": str(exc).splitlines()[0]})


def create_app(
    settings: Settings,
    *,
    store: Store | None = None,
    router: Router | None = None,
    sweep: Sweep | None = None,
    dead_letter: DeadLetter | None = None,
    go_live: GoLive | None = None,
    run_worker: bool = False,
    contexts: Callable[[Store], ContextFactory] | None = None,
    notice: str | None = None,
    reenable: Reenable | None = None,
    clock: Clock | None = None,
) -> FastAPI:
    """The service. With ``run_worker`` it also processes deliveries in this process, with
    ``router``'s handlers, each given the context ``contexts(store)`` builds for its event (none
    without it), and, when given, ``sweep`` for the effects left pending, ``dead_letter`` for a
    delivery given up, ``go_live`` once at the start and ``reenable`` on a timer, on ``clock``'s
    time (see `Worker`); ``notice`` is logged
    when the worker starts (what it cannot do). The CLI's `bot.cli.wiring.service_app` passes
    the product's."""
    if run_worker and router is None:
        raise ValueError("create_app(run_worker=True) needs the router of the handlers to run "
                         "(bot.cli.wiring.service_app builds the product's)")
    settings.check_servable()
    metrics = Metrics()
    secrets = settings.secrets
    verify = bool(secrets)
    state: dict[str, Any] = {}
    budget = BodyBudget(settings.body_buffer_bytes, settings.max_body_bytes,
                        settings.body_reads_per_client)
    pace = Pace.of(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own_store = store is None
        db = store or Store(settings.database_url)
        if settings.migrate_on_start:
            await anyio.to_thread.run_sync(db.upgrade)
        state["store"] = db
        state["inserter"] = loop_inserter(db)
        metrics.watch_queue(db.counts)
        worker: Worker | None = None
        if run_worker:
            assert router is not None
            worker = Worker(db, router, settings, metrics=metrics, sweep=sweep, dead_letter=dead_letter,
                            go_live=go_live, reenable=reenable, clock=clock,
                            context_factory=contexts(db) if contexts is not None else None)
            worker.start()
        state["worker"] = worker
        if not verify:
            log.warning("no webhook secret: accepting unsigned deliveries (dry-run)")
        if run_worker and notice:
            log.warning(notice)
        log.info("service started", extra={"dry_run": settings.effective_dry_run,
                                           "database": db.dialect, "worker": run_worker})
        checkpoints = asyncio.create_task(_checkpoints(db)) if db.dialect == "sqlite" else None
        try:
            yield
        finally:
            if checkpoints is not None:
                checkpoints.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await checkpoints
            if worker is not None:
                await anyio.to_thread.run_sync(worker.stop)
            inserter = state.pop("inserter", None)
            if inserter is not None:
                await inserter.close()
            if own_store:
                db.close()
            log.info("service stopped")

    app = FastAPI(title="rocmbot", version="0.1.0", lifespan=lifespan,
                  description="GitHub App webhook receiver for GPU ML repositories.")
    app.state.metrics = metrics
    app.state.settings = settings
    app.state.body_budget = budget

    def current_store() -> Store:
        db = state.get("store")
        assert isinstance(db, Store), "the app is not started"
        return db

    app.state.store = current_store

    @app.post("/webhook", status_code=202, response_model=Accepted, openapi_extra=WEBHOOK_REQUEST,
              responses={
        200: {"description": "already stored (a redelivery), or a ping", "model": Accepted},
        202: {"description": "stored", "model": Accepted},
        400: {"description": "malformed body or missing headers", "model": ErrorBody},
        401: {"description": "missing or wrong signature", "model": ErrorBody},
        408: {"description": "the body did not arrive in time (too slow, or stopped)", "model": ErrorBody},
        413: {"description": "body over the size limit", "model": ErrorBody},
        415: {"description": "unsupported content type", "model": ErrorBody},
        503: {"description": "the store is unavailable, or too many bodies are being read at once "
                            "(or from one address); GitHub may redeliver", "model": ErrorBody},
    })
    async def webhook(request: Request) -> Response:
        """Verify, store, then answer: GitHub waits ten seconds at most."""
        start = time.perf_counter()
        # Unverified: a metric label from it is one of a fixed set (any other string would
        # grow the metrics without bound), and a log field is cut short.
        event_name = request.headers.get("x-github-event", "?")[:100]
        try:
            async with _body(request, settings.max_body_bytes, budget, pace) as body:
                delivery = parse_delivery(request.headers, body, secrets, verify=verify)
        except WebhookError as exc:
            metrics.deliveries.labels(metric_event(event_name), f"rejected_{exc.status}").inc()
            log.info("delivery rejected", extra={"status": exc.status, "reason": exc.reason,
                                                 "event": event_name})
            return _error(exc.status, exc.reason)
        if delivery.event == "ping":
            metrics.deliveries.labels("ping", "ping").inc()
            return JSONResponse({"status": "pong", "delivery_id": delivery.id}, status_code=200)
        event = Event.from_payload(delivery.event, delivery.id, delivery.payload)
        inserter: LoopInserter | None = state.get("inserter")
        try:
            new = await inserter.add(event, delivery.payload_text) if inserter is not None else None
            if new is None:  # SQLite's write lock is taken (or in memory): wait in a thread
                new = await anyio.to_thread.run_sync(current_store().add_delivery, event,
                                                     delivery.payload_text)
        except SQLAlchemyError as exc:
            metrics.deliveries.labels(event.name, "unavailable").inc()
            log.error("could not store delivery", extra={"delivery_id": delivery.id,
                                                         "error": type(exc).__name__})
            return _error(503, "the delivery store is unavailable; redeliver later")
        outcome = "stored" if new else "duplicate"
        if new and (worker := state.get("worker")) is not None:
            worker.wake()  # this process's worker takes it now
        metrics.deliveries.labels(event.name, outcome).inc()
        metrics.ack_seconds.observe(time.perf_counter() - start)
        # Formatting and writing the line takes 20 to 40 us: GitHub need not wait for it.
        logged = BackgroundTask(_log_info, "delivery " + outcome, {
            "delivery_id": delivery.id, "event": event.name, "action": event.action,
            "repository": event.repository, "pr": event.pr_number})
        return JSONResponse({"status": "queued" if new else "duplicate", "delivery_id": delivery.id},
                            status_code=202 if new else 200, background=logged)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz", response_model=Readiness,
             responses={503: {"description": "the database is unreachable or not migrated",
                              "model": Readiness}})
    async def readyz() -> Response:
        """The database answers and its schema is current."""
        try:
            await anyio.to_thread.run_sync(current_store().check_ready)
        except StoreError as exc:
            return JSONResponse({"status": "not ready", "reason": str(exc)}, status_code=503)
        return JSONResponse({"status": "ready"})

    @app.get("/metrics", response_class=PlainTextResponse,
             responses={200: {"description": "the Prometheus text format"}})
    async def metrics_endpoint() -> Response:
        """Prometheus metrics."""
        data = await anyio.to_thread.run_sync(metrics.render)
        return Response(data, media_type="text/plain; version=0.0.4; charset=utf-8")

    return app
