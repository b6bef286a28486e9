"""What a handler receives with each event: settings, the store, GitHub, and whether to act."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.effects import Effects
from bot.events import Event
from bot.port import GitHubPort
from bot.store.store import Store
from config.settings import Settings

PortFactory = Callable[[Event], GitHubPort | None]


@dataclass(frozen=True)
class HandlerContext:
    settings: Settings
    store: Store
    event: Event
    github: GitHubPort | None = None

    @property
    def dry_run(self) -> bool:
        return self.settings.effective_dry_run

    def effects(self) -> Effects:
        return Effects(self.store, self.github, dry_run=self.dry_run, delivery_id=self.event.delivery_id)


def app_ports(settings: Settings) -> PortFactory:
    """GitHub through the App's installation tokens, or nothing without App credentials."""
    if not settings.has_app_credentials:
        return lambda event: None
    from bot.gh_adapter import GitHubApp

    app = GitHubApp(settings)

    def port(event: Event) -> GitHubPort | None:
        return None if event.installation_id is None else app.installation(event.installation_id)

    return port


def context_factory(
    settings: Settings, store: Store, ports: PortFactory | None = None
) -> Callable[[Event], HandlerContext]:
    """A factory building each event's context."""
    port_for = ports or app_ports(settings)

    def build(event: Event) -> HandlerContext:
        return HandlerContext(settings, store, event, port_for(event))

    return build
