"""What a handler receives with each event: settings, the store, and whether to act."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.events import Event
from bot.store.store import Store
from config.settings import Settings


@dataclass(frozen=True)
class HandlerContext:
    settings: Settings
    store: Store
    event: Event

    @property
    def dry_run(self) -> bool:
        return self.settings.effective_dry_run


def context_factory(settings: Settings, store: Store) -> Callable[[Event], HandlerContext]:
    """A factory building each event's context."""

    def build(event: Event) -> HandlerContext:
        return HandlerContext(settings, store, event)

    return build
