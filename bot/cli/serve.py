"""Running the service: uvicorn with an in-process worker, or workers on their own."""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType

from bot.github.context import context_factory, no_app_notice
from bot.service.router import Router
from bot.service.worker import DeadLetter, GoLive, Sweep, Worker
from bot.store.store import Store
from config.settings import Settings

log = logging.getLogger(__name__)


def serve(settings: Settings, host: str, port: int, router: Router, sweep: Sweep | None, *,
          with_worker: bool = True, dead_letter: DeadLetter | None = None, go_live: GoLive | None = None
          ) -> None:
    """Serve the webhook endpoint until SIGINT/SIGTERM; the lifespan stops the worker."""
    import uvicorn

    from bot.service.app import create_app

    app = create_app(settings, router=router, sweep=sweep, dead_letter=dead_letter, go_live=go_live,
                     run_worker=with_worker,
                     contexts=lambda db: context_factory(settings, db), notice=no_app_notice(settings))
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False,
                                           timeout_graceful_shutdown=30))
    reconciler = None
    if settings.reconcile_minutes > 0 and settings.has_app_credentials:
        from bot.github.reconcile import Reconciler

        reconciler = Reconciler(settings, ready=lambda: bool(server.started))
        reconciler.start()
        log.info("reconciler started", extra={"every_minutes": settings.reconcile_minutes,
                                              "window_minutes": settings.reconcile_window_minutes})
    elif settings.reconcile_minutes > 0:
        log.warning("ROCMBOT_RECONCILE_MINUTES is set but there are no App credentials: not reconciling")
    try:
        server.run()
    finally:
        if reconciler is not None:
            reconciler.stop()


def run_workers(settings: Settings, concurrency: int, router: Router, sweep: Sweep | None, *,
                dead_letter: DeadLetter | None = None, go_live: GoLive | None = None) -> None:
    """Process deliveries until SIGINT/SIGTERM, then release what is in flight."""
    store = Store(settings.database_url)
    if settings.migrate_on_start:
        store.upgrade()
    worker = Worker(store, router, settings, sweep=sweep, dead_letter=dead_letter, go_live=go_live,
                    context_factory=context_factory(settings, store))
    if without_app := no_app_notice(settings):
        log.warning(without_app)
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        log.info("stopping on signal", extra={"signal": signum})
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    worker.start(concurrency)
    try:
        stop.wait()
    finally:
        worker.stop()
        store.close()
