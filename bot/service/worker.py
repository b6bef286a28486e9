"""Workers: claim deliveries with a lease, renew it while working, retry with backoff."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from bot.core.deadline import RetryLaterError, deadline_in
from bot.core.events import Event
from bot.core.gone import OutOfReach
from bot.service.metrics import Metrics
from bot.service.router import HandlerError, Router
from bot.store.store import DeliveryRecord, Store, backoff_seconds
from config.settings import Settings

log = logging.getLogger(__name__)

ContextFactory = Callable[[Event], Any]
# One pass over the effects left pending longer than the seconds given (the composition root
# hands in bot.rocm.pending.sweep): store, contexts, seconds.
Sweep = Callable[[Store, ContextFactory, float], object]
# What a delivery given up tells its PR (the composition root hands in
# bot.github.notice.analysis_failed): the delivery's handler context, the record, the error.
DeadLetter = Callable[[Any, DeliveryRecord, str], object]
# Once, when a worker starts live: make the effects a dry-run recorded (the composition root
# hands in bot.rocm.pending.go_live): store, contexts.
GoLive = Callable[[Store, ContextFactory], object]
# A pass of the re-enable sweep over the repositories whose sweep may be due (the composition
# root hands in bot.rocm.reenable.sweep_due): store, contexts, settings, the owner its leases are
# taken as, and the clock its schedule follows.
Clock = Callable[[], float]
Reenable = Callable[[Store, ContextFactory, Settings, str, Clock], object]

# The names of this process's workers that are running: a lease named after this process's
# id but none of these was taken by an earlier process that had the same id (a container's
# process is often pid 1 on every start).
_RUNNING: set[str] = set()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def dead_owners(owners: set[str], host: str, pid: int) -> list[str]:
    """The lease owners (``host:pid:id/thread``) that were processes of this host now gone.

    An owner on another host, or one whose process still runs, is not among them: its leases
    are left to expire. Hosts are told apart by name, so replicas must have distinct names
    (containers and pods do by default).
    """
    gone: list[str] = []
    for owner in sorted(owners):
        name = owner.rpartition("/")[0] or owner
        parts = name.rsplit(":", 2)
        if len(parts) != 3 or parts[0] != host or not parts[1].isdigit() or int(parts[1]) <= 0:
            continue
        their_pid = int(parts[1])
        if their_pid == pid:
            if name not in _RUNNING:
                gone.append(owner)
        elif not _alive(their_pid):
            gone.append(owner)
    return gone


def retry_later(exc: Exception) -> float | None:
    """When GitHub said to come back (a rate limit), the longest wait it named; else None."""
    if isinstance(exc, RetryLaterError):
        return exc.seconds
    if isinstance(exc, HandlerError):
        waits = [o.exception.seconds for o in exc.outcomes if isinstance(o.exception, RetryLaterError)]
        return max(waits) if waits else None
    return None


def out_of_reach(exc: Exception) -> list[OutOfReach]:
    """What GitHub answered for good (see :mod:`bot.core.gone`) when that is every failure of
    this attempt; none when any failure may pass (that one is retried)."""
    if isinstance(exc, OutOfReach):
        return [exc]
    if not isinstance(exc, HandlerError):
        return []
    failed = [o.exception for o in exc.outcomes if not o.ok]
    found = [e for e in failed if isinstance(e, OutOfReach)]
    return found if found and len(found) == len(failed) else []


def _fields(record: DeliveryRecord) -> dict[str, Any]:
    return {"delivery_id": record.delivery_id, "event": record.event, "repository": record.repository,
            "pr": record.pr_number}


@dataclass
class WorkerStats:
    processed: int = 0
    failed: int = 0
    dead: int = 0
    superseded: int = 0
    gone: int = 0  # ended at once: GitHub answered for good


class Worker:
    """``concurrency`` threads, each claiming one delivery at a time; one lease renewer."""

    def __init__(self, store: Store, router: Router, settings: Settings, *,
                 context_factory: ContextFactory | None = None, metrics: Metrics | None = None,
                 name: str | None = None, sweep: Sweep | None = None,
                 dead_letter: DeadLetter | None = None, go_live: GoLive | None = None,
                 reenable: Reenable | None = None, clock: Clock | None = None) -> None:
        self.store = store
        self.router = router
        self.settings = settings
        self.context_factory = context_factory or (lambda event: None)
        self.sweep = sweep
        self.dead_letter = dead_letter
        self.go_live = go_live
        self.reenable = reenable
        self.clock = clock or time.time  # the re-enable sweep's schedule (tests move it on)
        self.metrics = metrics
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.stats = WorkerStats()
        self._stop = threading.Event()
        self._wake = threading.Event()  # set when this process stored a delivery (see :meth:`wake`)
        self._threads: list[threading.Thread] = []
        self._active: dict[str, int] = {}  # owner -> delivery pk being worked on
        self._lock = threading.Lock()

    def owner(self, index: int | str) -> str:
        return f"{self.name}/{index}"

    def start(self, concurrency: int | None = None) -> None:
        count = concurrency or self.settings.worker_concurrency
        _RUNNING.add(self.name)
        self.reclaim_predecessors()
        for index in range(count):
            thread = threading.Thread(target=self._loop, args=(self.owner(index),),
                                      name=f"rocmbot-worker-{index}", daemon=True)
            thread.start()
            self._threads.append(thread)
        renewer = threading.Thread(target=self._renew_loop, name="rocmbot-lease-renewer", daemon=True)
        renewer.start()
        self._threads.append(renewer)
        if self.sweep is not None and self.settings.pending_effect_seconds > 0:
            sweeper = threading.Thread(target=self._sweep_loop, name="rocmbot-pending-sweeper", daemon=True)
            sweeper.start()
            self._threads.append(sweeper)
        if self.reenable is not None and self.settings.reenable_seconds > 0:
            reenable = threading.Thread(target=self._reenable_loop, name="rocmbot-reenable-sweeper",
                                        daemon=True)
            reenable.start()
            self._threads.append(reenable)
        if self.go_live is not None and not self.settings.effective_dry_run:
            live = threading.Thread(target=self._go_live, name="rocmbot-dry-run-to-live", daemon=True)
            live.start()
            self._threads.append(live)
        log.info("worker started", extra={"worker": self.name, "concurrency": count})

    def wake(self) -> None:
        """A delivery was stored in this process: an idle loop claims it now instead of at its
        next poll (deliveries stored by other processes, and retries that come due, are found
        by polling)."""
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop claiming, let in-flight work finish for ``timeout``, then give back leases."""
        self._stop.set()
        self._wake.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        released = sum(self.store.release(self.owner(i)) for i in range(len(self._threads)))
        if released:
            log.warning("released leases on shutdown", extra={"worker": self.name, "count": released})
        self._threads.clear()
        _RUNNING.discard(self.name)

    def reclaim_predecessors(self) -> int:
        """Take back at once the leases of processes of this host that died (a restart after
        SIGKILL finds its predecessor's work due now, not when its leases expire)."""
        try:
            gone = dead_owners(self.store.lease_owners(), socket.gethostname(), os.getpid())
            count = self.store.expire_leases(gone)
        except Exception:  # the database is away: the leases expire in their own time
            log.exception("could not look for the leases of dead processes", extra={"worker": self.name})
            return 0
        if gone:
            log.warning("took back the leases of processes gone", extra={
                "worker": self.name, "owners": gone, "deliveries": count})
        return count

    def run_forever(self, concurrency: int | None = None) -> None:
        self.start(concurrency)
        try:
            while not self._stop.wait(1.0):
                pass
        finally:
            self.stop()

    def _loop(self, owner: str) -> None:
        while not self._stop.is_set():
            try:
                worked = self.run_once(owner)
            except Exception:  # the database went away: wait and try again
                log.exception("worker loop error", extra={"worker": owner})
                worked = False
            if not worked:
                self._wake.wait(self.settings.poll_seconds)
                self._wake.clear()

    def _renew_loop(self) -> None:
        interval = max(0.05, self.settings.lease_seconds / 3)
        while not self._stop.wait(interval):
            with self._lock:
                active = dict(self._active)
            for owner, pk in active.items():
                try:
                    self.store.renew(owner, [pk], self.settings.lease_seconds)
                except Exception:
                    log.exception("lease renewal failed", extra={"worker": owner})

    def _sweep_loop(self) -> None:
        """Complete or retry the effects left pending, on a timer."""
        assert self.sweep is not None
        older = self.settings.pending_effect_seconds
        while not self._stop.wait(min(60.0, older / 2)):
            try:
                self.sweep(self.store, self.context_factory, older)
            except Exception:  # the database went away: the next pass
                log.exception("pending-effects sweep failed", extra={"worker": self.name})

    def _reenable_loop(self) -> None:
        """Sweep the parked tests of the repositories whose re-enable sweep is due, on a timer."""
        assert self.reenable is not None
        while not self._stop.wait(self.settings.reenable_seconds):
            try:
                self.reenable(self.store, self.context_factory, self.settings, self.owner("reenable"),
                              self.clock)
            except Exception:  # the database went away: the next pass
                log.exception("re-enable sweep pass failed", extra={"worker": self.name})
            if self.metrics is not None:
                self.metrics.reenable_passes.inc()

    def _go_live(self) -> None:
        """Once: make what a dry-run recorded for the heads that are still their PR's."""
        assert self.go_live is not None
        try:
            self.go_live(self.store, self.context_factory)
        except Exception:  # the database or GitHub went away: the next start
            log.exception("could not make the effects recorded in dry-run", extra={"worker": self.name})

    def run_once(self, owner: str | None = None) -> bool:
        """Claim and process one delivery; False when none was due."""
        owner = owner or self.owner(0)
        claimed = self.store.claim(owner, limit=1, lease_seconds=self.settings.lease_seconds,
                                   max_attempts=self.settings.max_attempts)
        if not claimed:
            return False
        record = claimed[0]
        with self._lock:
            self._active[owner] = record.id
        try:
            self._process(owner, record)
        finally:
            with self._lock:
                self._active.pop(owner, None)
        return True

    def _process(self, owner: str, record: DeliveryRecord) -> None:
        fields = _fields(record)
        newer = self.store.newer_head(record) if record.event == "pull_request" else None
        if newer is not None:
            self.store.finish(record, owner, "superseded", error=f"superseded by head {newer}")
            self.stats.superseded += 1
            log.info("delivery superseded", extra={**fields, "newer_head": newer})
            self._observe(record, "superseded", 0.0)
            return
        start = time.perf_counter()
        try:
            event = record.to_event()
            with deadline_in(self.settings.delivery_deadline_seconds):
                self.router.dispatch(event, self.context_factory(event))
        except Exception as exc:
            elapsed = time.perf_counter() - start
            error = str(exc) if isinstance(exc, HandlerError) else f"{type(exc).__name__}: {exc}"
            later = retry_later(exc)
            gone = out_of_reach(exc)
            if gone:
                self._out_of_reach(owner, record, gone, elapsed)
            elif record.attempts >= self.settings.max_attempts:
                self._tell_pr(record, error)  # under the lease: the PR is told when the delivery ends
                self.store.finish(record, owner, "dead", error=error)
                self.stats.dead += 1
                log.error("delivery dead-lettered", extra={**fields, "attempts": record.attempts,
                                                           "error": error})
                self._observe(record, "dead", elapsed)
            else:
                delay = later if later is not None else backoff_seconds(
                    record.attempts, self.settings.backoff_base_seconds, self.settings.backoff_max_seconds)
                self.store.finish(record, owner, "queued", error=error, retry_at=time.time() + delay)
                self.stats.failed += 1
                log.warning("delivery failed; will retry",
                            extra={**fields, "attempts": record.attempts, "retry_in_s": round(delay, 2),
                                   "error": error})
                self._observe(record, "retry", elapsed)
            return
        elapsed = time.perf_counter() - start
        self.store.finish(record, owner, "done")
        self.stats.processed += 1
        log.info("delivery processed", extra={**fields, "seconds": round(elapsed, 4)})
        self._observe(record, "done", elapsed)

    def _out_of_reach(self, owner: str, record: DeliveryRecord, gone: list[OutOfReach],
                      elapsed: float) -> None:
        """End a delivery GitHub answered for good, without retrying it: ``dead`` when the App
        lost access (an operator can restore it and retry), ``done`` when what it is about is
        gone (nothing is left to do). Its PR is not told: GitHub would refuse that too."""
        lost = any(g.lost_access for g in gone)
        note = "; ".join(dict.fromkeys(g.describe() for g in gone))
        status: Literal["dead", "done"] = "dead" if lost else "done"
        self.store.finish(record, owner, status, error=f"not retried: {note}")
        self.stats.gone += 1
        if lost:
            self.stats.dead += 1
        (log.error if lost else log.warning)(
            "delivery ended: GitHub answered for good, not retried",
            extra={**_fields(record), "status": gone[0].http_status, "request": gone[0].request,
                   "attempts": record.attempts, "ended_as": status, "error": note})
        self._observe(record, status, elapsed)

    def _tell_pr(self, record: DeliveryRecord, error: str) -> None:
        """The dead-letter hook: a delivery given up for a PR's head says so on the PR."""
        if self.dead_letter is None or record.pr_number is None or record.head_sha is None:
            return
        try:
            with deadline_in(self.settings.delivery_deadline_seconds):
                self.dead_letter(self.context_factory(record.to_event()), record, error)
        except Exception:  # GitHub or the database failed too: the dead letter stands
            log.exception("could not tell the PR its delivery was given up", extra=_fields(record))

    def _observe(self, record: DeliveryRecord, outcome: str, seconds: float) -> None:
        if self.metrics is not None:
            self.metrics.processed(record.event, outcome, seconds, time.time() - record.received_at)
