"""Out-of-order webhooks: a run's news held back and delivered after the run's end.

GitHub delivers webhooks concurrently and with retries, so news of one run (``workflow_run``
and ``workflow_job``) can arrive in any order: an ``in_progress`` after the ``completed``. Off
by default; ``sim.news.hold("in_progress")`` holds the matching deliveries of every run (or of
``run_id``) until that run's ``completed`` ``workflow_run`` is delivered, and sends them right
after it, in the order they were held. ``after_completed=False`` keeps them until
``sim.news.release()``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

RUN_EVENTS = ("workflow_run", "workflow_job")


@dataclass(frozen=True)
class Hold:
    """Which deliveries to hold: their actions, of one run or of every run."""

    actions: frozenset[str]
    run_id: int | None = None
    after_completed: bool = True  # sent after the run's completed `workflow_run`; else on release()


@dataclass(frozen=True)
class Held:
    """A delivery not sent yet: sent later with the GUID it was given when held."""

    event: str
    payload: dict[str, Any]
    url: str | None
    secret: str | None
    guid: str
    run_id: int
    after_completed: bool


def run_of(event: str, payload: dict[str, Any]) -> int | None:
    """The run a ``workflow_run`` or ``workflow_job`` delivery is news of."""
    if event == "workflow_run":
        found = (payload.get("workflow_run") or {}).get("id")
    elif event == "workflow_job":
        found = (payload.get("workflow_job") or {}).get("run_id")
    else:
        return None
    return found if isinstance(found, int) else None


class NewsOrder:
    """The hold rules and the deliveries held (thread-safe: deliveries go out from many threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.rules: list[Hold] = []
        self._held: list[Held] = []

    def hold(self, *actions: str, run_id: int | None = None, after_completed: bool = True) -> Hold:
        """Hold the deliveries of a run's news with these actions (default ``in_progress``)."""
        rule = Hold(frozenset(actions or ("in_progress",)), run_id, after_completed)
        if "completed" in rule.actions:
            raise ValueError("a run's completed news is what held news wait for: it cannot be held")
        with self._lock:
            self.rules.append(rule)
        return rule

    def clear(self) -> None:
        """Hold nothing more; what is held stays until its run completes or release()."""
        with self._lock:
            self.rules.clear()

    @property
    def held(self) -> list[Held]:
        with self._lock:
            return list(self._held)

    def take(self, event: str, payload: dict[str, Any], url: str | None, secret: str | None,
             guid: str) -> Held | None:
        """Hold this delivery if a rule says so (then the caller does not send it)."""
        run_id = run_of(event, payload)
        if run_id is None:
            return None
        action = payload.get("action")
        with self._lock:
            for rule in self.rules:
                if action in rule.actions and rule.run_id in (None, run_id):
                    held = Held(event, payload, url, secret, guid, run_id, rule.after_completed)
                    self._held.append(held)
                    return held
        return None

    def due(self, event: str, payload: dict[str, Any]) -> list[Held]:
        """What to send now that this delivery went out: after a run's ``completed``
        ``workflow_run``, the news of that run held for it."""
        run_id = run_of(event, payload)
        if event != "workflow_run" or payload.get("action") != "completed" or run_id is None:
            return []
        return self._pop(lambda h: h.run_id == run_id and h.after_completed)

    def release(self, run_id: int | None = None) -> list[Held]:
        """Take what is held (of one run, or all) for sending now."""
        return self._pop(lambda h: run_id in (None, h.run_id))

    def _pop(self, which: Callable[[Held], bool]) -> list[Held]:
        with self._lock:
            out = [h for h in self._held if which(h)]
            self._held = [h for h in self._held if not which(h)]
        return out
