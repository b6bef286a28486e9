"""Running the service: uvicorn with an in-process worker, or workers on their own."""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType

from bot.github.context import context_factory, no_app_notice
from bot.service.router import Router
from bot.service.worker import DeadLetter, GoLive, Reenable, Sweep, Worker
from bot.store.store import Store
from config.settings import Settings

log = logging.getLogger(__name__)


def startup_problem(settings: Settings) -> str | None:
    """What in the settings would fail every delivery, in one line naming the setting, or
    None: checked before the service or a worker starts (a private key that does not parse,
    a database whose driver is missing or that cannot be opened, a local repository that is
    not one)."""
    from config.settings import SettingsError

    try:
        key = settings.app_private_key() if settings.has_app_credentials else None
    except SettingsError as exc:
        return str(exc)
    if key is not None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        name = "ROCMBOT_PRIVATE_KEY_PATH" if settings.private_key is None else "ROCMBOT_PRIVATE_KEY"
        try:
            loaded = serialization.load_pem_private_key(key.encode(), password=None)
        except (ValueError, TypeError) as exc:
            return f"{name}: not a PEM private key ({str(exc).splitlines()[0]})"
        if not isinstance(loaded, rsa.RSAPrivateKey):
            return f"{name}: a GitHub App's key is an RSA private key, this one is not"
    problem = _database_problem(settings.database_url)
    if problem is not None:
        return f"ROCMBOT_DATABASE_URL: {problem}"
    if settings.local_repo is not None:
        from bot.analysis.tree import GitRepository, TreeError

        try:
            with GitRepository(str(settings.local_repo)) as repo:
                repo.resolve("HEAD")
        except (TreeError, OSError) as exc:
            return f"ROCMBOT_LOCAL_REPO: {settings.local_repo} is not a git repository with a commit ({exc})"
    return None


def _database_problem(url: str) -> str | None:
    from pathlib import Path

    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, SQLAlchemyError

    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        return f"not a database URL ({exc})"
    folder = Path(parsed.database or "").parent
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:") \
            and not folder.is_dir():
        return f"the folder {folder} of the SQLite file does not exist"
    try:
        engine = create_engine(url)
    except ModuleNotFoundError as exc:
        return f"its driver `{exc.name}` is not installed"
    except (ArgumentError, SQLAlchemyError) as exc:
        return str(exc).splitlines()[0]
    try:
        with engine.connect() as conn:
            conn.execute(text("select 1"))
    except SQLAlchemyError as exc:
        return f"cannot open it: {str(exc.orig if hasattr(exc, 'orig') else exc).splitlines()[0]}"
    finally:
        engine.dispose()
    return None


def serve(settings: Settings, host: str, port: int, router: Router, sweep: Sweep | None, *,
          with_worker: bool = True, dead_letter: DeadLetter | None = None, go_live: GoLive | None = None,
          reenable: Reenable | None = None) -> None:
    """Serve the webhook endpoint until SIGINT/SIGTERM; the lifespan stops the worker."""
    import uvicorn

    from bot.service.app import create_app

    app = create_app(settings, router=router, sweep=sweep, dead_letter=dead_letter, go_live=go_live,
                     run_worker=with_worker, reenable=reenable,
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
                dead_letter: DeadLetter | None = None, go_live: GoLive | None = None,
                reenable: Reenable | None = None) -> None:
    """Process deliveries until SIGINT/SIGTERM, then release what is in flight."""
    store = Store(settings.database_url)
    if settings.migrate_on_start:
        store.upgrade()
    worker = Worker(store, router, settings, sweep=sweep, dead_letter=dead_letter, go_live=go_live,
                    reenable=reenable, context_factory=context_factory(settings, store))
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
