"""Effects left pending: complete them, or retry the delivery that began them.

A write is recorded in the ledger before it is made and marked done after. An entry still
pending long after (the attempt died, its delivery was given up, or the head moved on before a
retry came) is an effect that may be missing. A worker sweeps for them on a timer:

- a dispatch GitHub has not accepted (``dispatching``): its run is looked for by the dispatch id
  in the run's name; found, the dispatch is in flight; not found, it is sent again while its head
  is still the open PR's head, and withdrawn otherwise. Not while its run may still show: an
  attempt GitHub did not answer, or answered 5xx, is looked for over the lookup window first
  (``waiting``), and one GitHub never answered is recorded ``unknown`` after it, not sent again
  (``unknown`` dispatches are not swept: their run's `workflow_run` delivery settles them);
- an accepted dispatch without its `rocmbot / rocm` check: the check is made;
- any other pending write of a delivery that was given up (dead-lettered): the delivery is
  queued again, once (its handlers look for what the attempt made before writing anything).

And once, when a worker starts live, what a dry-run recorded (:func:`go_live`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.core.deadline import RetryLaterError
from bot.core.events import Event
from bot.core.gone import OutOfReach
from bot.github import keys
from bot.github.context import HandlerContext
from bot.rocm.runs import RocmRuns
from bot.store.dispatch import Dispatch, DispatchStore
from bot.store.store import Store

log = logging.getLogger(__name__)

Contexts = Callable[[Event], HandlerContext | None]
OWN = (keys.DISPATCH, keys.ROCM_CHECK)  # completed from the dispatch rows below, not by a retry
BUSY = ("queued", "processing")


@dataclass
class Swept:
    """What one pass did."""

    dispatched: list[str] = field(default_factory=list)  # sent again
    found: list[str] = field(default_factory=list)  # their run was there
    withdrawn: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # never answered, and their run not found
    waiting: list[str] = field(default_factory=list)  # their run may still show: looked for later
    checks: list[str] = field(default_factory=list)  # checks made for runs that had none
    retried: list[str] = field(default_factory=list)  # deliveries queued again
    errors: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return any((self.dispatched, self.found, self.withdrawn, self.unknown, self.waiting, self.checks,
                    self.retried, self.errors))


def _context(store: Store, contexts: Contexts, record: Dispatch) -> HandlerContext | None:
    """The context of the delivery that began the dispatch (its installation, its repository's
    policy); None while that delivery is still being worked on: it completes the dispatch itself."""
    delivery_id = store.effect_delivery(keys.dispatch(record.dispatch_id))
    delivery = store.get(delivery_id) if delivery_id else None
    if delivery is None or delivery.status in BUSY:
        return None
    ctx = contexts(delivery.to_event())
    return ctx if ctx is not None and ctx.github is not None else None


def _complete(ctx: HandlerContext, record: Dispatch, swept: Swept) -> None:
    assert record.pr_number is not None
    what, checked = RocmRuns(ctx, record.repository, record.pr_number).complete(record)
    if what is not None:
        {"found": swept.found, "dispatched": swept.dispatched, "withdrawn": swept.withdrawn,
         "unknown": swept.unknown}[what].append(record.dispatch_id)
    if checked:
        swept.checks.append(record.dispatch_id)


def sweep(store: Store, contexts: Contexts, older_than: float, *, now: float | None = None) -> Swept:
    """One pass over what was left pending more than ``older_than`` seconds."""
    cutoff = (time.time() if now is None else now) - older_than
    swept = Swept()
    runs = DispatchStore(store)
    for record in runs.left_pending(cutoff):
        if record.pr_number is None:  # the re-enable sweep's: it completes its own
            continue
        ctx = _context(store, contexts, record)
        if ctx is None or not runs.take(record.dispatch_id, cutoff):
            continue
        try:
            _complete(ctx, record, swept)
        except RetryLaterError:  # its run may still show, or GitHub asked to wait: a later pass
            swept.waiting.append(record.dispatch_id)
        except Exception as exc:  # GitHub failed: the next pass
            swept.errors.append(f"{record.dispatch_id}: {type(exc).__name__}: {exc}")
    for entry, delivery_id in store.pending_effects(cutoff):
        if entry.key.startswith(OWN) or delivery_id is None:
            continue
        # Only a delivery that gave up: one that finished left the write behind on purpose (the
        # head moved on before its retry), and one still at work will get to it.
        delivery = store.get(delivery_id)
        if delivery is None or delivery.status != "dead" or not store.mark_effect(entry.key, "retried"):
            continue
        if delivery_id not in swept.retried and store.retry(delivery_id):
            swept.retried.append(delivery_id)
    if swept:
        log.info("completed effects left pending", extra={
            "dispatched": swept.dispatched, "found": swept.found, "withdrawn": swept.withdrawn,
            "unknown": swept.unknown, "waiting": swept.waiting, "checks": swept.checks,
            "retried": swept.retried, "errors": swept.errors})
    return swept


@dataclass
class Live:
    """What :func:`go_live` did."""

    requeued: list[str] = field(default_factory=list)  # deliveries run again, live
    superseded: list[str] = field(default_factory=list)  # ledger keys left unmade
    unknown: list[str] = field(default_factory=list)  # PRs GitHub could not be asked about


def go_live(store: Store, contexts: Contexts) -> Live:
    """Make what a dry-run recorded, once, when the service starts live.

    Each delivery whose handling recorded ``dry_run`` entries is looked at once: when it names a
    PR head that is still the head of the open PR, it is queued again (a live run of the same
    delivery, which sends everything through the ledger: each write is made once, however many
    services start). Otherwise (the head moved on, the PR was closed or is gone, the delivery
    names no head, a command in a comment) its entries are left unmade, marked ``superseded``:
    a later delivery that makes the same write makes it. Its entries are marked ``superseded`` before the run
    either way, so a write the live run no longer makes (the analysis changed) is not looked at
    on every start. A PR GitHub cannot be asked about (a 5xx, access lost) is left for the next
    start.
    """
    done = Live()
    by_delivery: dict[str | None, list[str]] = {}
    for entry, delivery_id in store.effects_in("dry_run"):
        by_delivery.setdefault(delivery_id, []).append(entry.key)
    heads: dict[str, str | None] = {}  # PR key -> its open head (None: closed)
    for delivery_id, keys_ in by_delivery.items():
        record = store.get(delivery_id) if delivery_id else None
        current = False
        if record is not None and record.pr_key is not None and record.head_sha and record.repository:
            if record.pr_key not in heads:
                ctx = contexts(record.to_event())
                if ctx is None or ctx.github is None:
                    continue
                try:
                    pr = ctx.github.pull_request(record.repository, int(record.pr_number or 0))
                    heads[record.pr_key] = pr.head_sha if pr.state == "open" else None
                except Exception as exc:
                    if isinstance(exc, OutOfReach) and not exc.lost_access:
                        heads[record.pr_key] = None  # the PR is gone: nothing to make
                    else:  # GitHub failed, or refuses the App for now: left for the next start
                        done.unknown.append(f"{record.pr_key}: {type(exc).__name__}: {exc}")
                        log.warning("could not read a PR to make its dry-run effects",
                                    extra={"pr": record.pr_key, "error": str(exc)})
                        continue
            current = heads[record.pr_key] == record.head_sha
        for key in keys_:
            if store.mark_effect(key, "superseded", was="dry_run") and not current:
                done.superseded.append(key)
        if current and record is not None and record.status not in BUSY and store.retry(record.delivery_id):
            done.requeued.append(record.delivery_id)
    if done.requeued or done.superseded or done.unknown:
        log.info("made live what dry-run recorded", extra={
            "requeued": done.requeued, "superseded": len(done.superseded), "unknown": done.unknown})
    return done
