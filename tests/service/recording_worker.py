"""A worker process for the multi-process tests: its handler logs when it ran, and where."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

from sqlalchemy import text

from bot.core.events import Event
from bot.service.router import Router
from bot.service.worker import Worker
from bot.store.store import Store
from config.settings import Settings

LOG_TABLE = """
CREATE TABLE IF NOT EXISTS test_log (
    delivery_id TEXT NOT NULL, pr_key TEXT, owner TEXT NOT NULL,
    started DOUBLE PRECISION NOT NULL, ended DOUBLE PRECISION NOT NULL
)
"""


def main() -> None:
    settings = Settings()
    store = Store(settings.database_url)
    router = Router()

    def record(event: Event, context: Any) -> None:
        started = time.time()
        time.sleep(float(os.environ.get("TEST_HANDLER_SECONDS", "0.002")))
        with store.engine.begin() as conn:
            conn.execute(text("INSERT INTO test_log VALUES (:d, :p, :o, :s, :e)"), {
                "d": event.delivery_id, "p": event.pr_key,
                "o": f"{os.getpid()}/{threading.current_thread().name}", "s": started, "e": time.time()})

    router.register("pull_request")(record)
    router.register("issue_comment")(record)
    worker = Worker(store, router, settings)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    worker.start(settings.worker_concurrency)
    print("ready", flush=True)  # the parent waits for this line
    stop.wait()
    worker.stop(timeout=10)
    store.close()


if __name__ == "__main__":
    main()
