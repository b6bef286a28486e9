"""The web service: `create_app(settings)` builds it; nothing is read or connected at import."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from sqlalchemy.exc import SQLAlchemyError

from bot.context import context_factory as default_context
from bot.events import Event
from bot.metrics import Metrics
from bot.router import Router
from bot.store.store import Store, StoreError
from bot.webhooks import WebhookError, parse_delivery
from bot.worker import ContextFactory, Worker
from config.settings import Settings

log = logging.getLogger(__name__)


def _error(status: int, reason: str) -> JSONResponse:
    return JSONResponse({"error": reason}, status_code=status)


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            if int(declared) > limit:
                raise WebhookError(413, f"body is over the {limit}-byte limit")
        except ValueError as exc:
            raise WebhookError(400, "Content-Length is not a number") from exc
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise WebhookError(413, f"body is over the {limit}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks)


def create_app(
    settings: Settings,
    *,
    store: Store | None = None,
    router: Router | None = None,
    run_worker: bool = False,
    context_factory: ContextFactory | None = None,
) -> FastAPI:
    """The service. With ``run_worker`` it also processes deliveries in this process."""
    settings.check_servable()
    metrics = Metrics()
    secrets = settings.secrets
    verify = bool(secrets)
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own_store = store is None
        db = store or Store(settings.database_url)
        if settings.migrate_on_start:
            await anyio.to_thread.run_sync(db.upgrade)
        state["store"] = db
        metrics.watch_queue(db.counts)
        worker: Worker | None = None
        if run_worker:
            if router is None:
                from handlers import build_router

                active_router = build_router()
            else:
                active_router = router
            worker = Worker(db, active_router, settings, metrics=metrics,
                            context_factory=context_factory or default_context(settings, db))
            worker.start()
        if not verify:
            log.warning("no webhook secret: accepting unsigned deliveries (dry-run)")
        log.info("service started", extra={"dry_run": settings.effective_dry_run,
                                           "database": db.dialect, "worker": run_worker})
        try:
            yield
        finally:
            if worker is not None:
                await anyio.to_thread.run_sync(worker.stop)
            if own_store:
                db.close()
            log.info("service stopped")

    app = FastAPI(title="rocmbot", version="0.1.0", lifespan=lifespan,
                  description="GitHub App webhook receiver for GPU ML repositories.")
    app.state.metrics = metrics
    app.state.settings = settings

    def current_store() -> Store:
        db = state.get("store")
        assert isinstance(db, Store), "the app is not started"
        return db

    app.state.store = current_store

    @app.post("/webhook", status_code=202, responses={
        200: {"description": "already stored (a redelivery), or a ping"},
        202: {"description": "stored"},
        400: {"description": "malformed body or missing headers"},
        401: {"description": "missing or wrong signature"},
        413: {"description": "body over the size limit"},
        415: {"description": "unsupported content type"},
        503: {"description": "the store is unavailable; GitHub may redeliver"},
    })
    async def webhook(request: Request) -> Response:
        """Verify, store, then answer: GitHub waits ten seconds at most."""
        start = time.perf_counter()
        event_name = request.headers.get("x-github-event", "?")[:100]
        try:
            body = await _read_body(request, settings.max_body_bytes)
            delivery = parse_delivery(request.headers, body, secrets, verify=verify)
        except WebhookError as exc:
            metrics.deliveries.labels(event_name, f"rejected_{exc.status}").inc()
            log.info("delivery rejected", extra={"status": exc.status, "reason": exc.reason,
                                                 "event": event_name})
            return _error(exc.status, exc.reason)
        if delivery.event == "ping":
            metrics.deliveries.labels("ping", "ping").inc()
            return JSONResponse({"status": "pong", "delivery_id": delivery.id}, status_code=200)
        event = Event.from_payload(delivery.event, delivery.id, delivery.payload)
        try:
            new = await anyio.to_thread.run_sync(current_store().add_delivery, event, delivery.payload_text)
        except SQLAlchemyError as exc:
            metrics.deliveries.labels(event.name, "unavailable").inc()
            log.error("could not store delivery", extra={"delivery_id": delivery.id,
                                                         "error": type(exc).__name__})
            return _error(503, "the delivery store is unavailable; redeliver later")
        outcome = "stored" if new else "duplicate"
        metrics.deliveries.labels(event.name, outcome).inc()
        metrics.ack_seconds.observe(time.perf_counter() - start)
        log.info("delivery " + outcome, extra={"delivery_id": delivery.id, "event": event.name,
                                               "action": event.action, "repository": event.repository,
                                               "pr": event.pr_number})
        return JSONResponse({"status": "queued" if new else "duplicate", "delivery_id": delivery.id},
                            status_code=202 if new else 200)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> Response:
        """The database answers and its schema is current."""
        try:
            await anyio.to_thread.run_sync(current_store().check_ready)
        except StoreError as exc:
            return JSONResponse({"status": "not ready", "reason": str(exc)}, status_code=503)
        return JSONResponse({"status": "ready"})

    @app.get("/metrics")
    async def metrics_endpoint() -> Response:
        """Prometheus metrics."""
        data = await anyio.to_thread.run_sync(metrics.render)
        return Response(data, media_type="text/plain; version=0.0.4; charset=utf-8")

    return app
