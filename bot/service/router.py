"""Routing events to handlers: registration order, one handler's failure isolated from the others."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.core.events import Event

log = logging.getLogger(__name__)

Handler = Callable[[Event, Any], None]


@dataclass(frozen=True)
class HandlerOutcome:
    """How one handler fared with one event."""

    handler: str
    error: str | None = None
    seconds: float = 0.0
    exception: Exception | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None


class HandlerError(Exception):
    """At least one handler raised; the others still ran. The message names each failure."""

    def __init__(self, outcomes: list[HandlerOutcome]) -> None:
        self.outcomes = outcomes
        failed = [o for o in outcomes if not o.ok]
        super().__init__("; ".join(f"{o.handler}: {o.error}" for o in failed))


class Router:
    """Handlers by event name and action (None: every action)."""

    def __init__(self, *others: Router) -> None:
        self._routes: list[tuple[str, str | None, Handler]] = []
        for other in others:
            self._routes.extend(other._routes)

    def register(self, event: str, action: str | None = None) -> Callable[[Handler], Handler]:
        def decorate(handler: Handler) -> Handler:
            self._routes.append((event, action, handler))
            return handler

        return decorate

    def handlers(self, event: Event) -> list[Handler]:
        """The handlers for an event, in registration order."""
        return [h for name, action, h in self._routes
                if name == event.name and (action is None or action == event.action)]

    def dispatch(self, event: Event, context: Any) -> list[HandlerOutcome]:
        """Run every matching handler; raise HandlerError after all ran if any failed."""
        outcomes: list[HandlerOutcome] = []
        for handler in self.handlers(event):
            name = f"{handler.__module__}.{handler.__qualname__}"
            start = time.perf_counter()
            try:
                handler(event, context)
            except Exception as exc:
                log.exception("handler failed", extra={"handler": name, "delivery_id": event.delivery_id})
                outcomes.append(HandlerOutcome(name, f"{type(exc).__name__}: {exc}",
                                               time.perf_counter() - start, exc))
            else:
                outcomes.append(HandlerOutcome(name, None, time.perf_counter() - start))
        if any(not o.ok for o in outcomes):
            raise HandlerError(outcomes)
        return outcomes
