"""What a handler receives with each event: settings, the store, GitHub, and whether to act."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.effects import Effects
from bot.events import Event
from bot.policy import policy
from bot.port import GitHubPort, PullRequest
from bot.store.store import Store
from config.repo import LoadedConfig
from config.settings import Settings

PortFactory = Callable[[Event], GitHubPort | None]


@dataclass(frozen=True)
class HandlerContext:
    settings: Settings
    store: Store
    event: Event
    github: GitHubPort | None = None
    cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def dry_run(self) -> bool:
        return self.settings.effective_dry_run

    @property
    def default_branch(self) -> str | None:
        """The repository's default branch, as the delivery names it."""
        branch = (self.event.payload.get("repository") or {}).get("default_branch")
        return branch if isinstance(branch, str) and branch else None

    def has_policy(self, repo: str) -> bool:
        return f"policy:{repo}" in self.cache

    def remember_policy(self, repo: str, loaded: LoadedConfig) -> None:
        """The policy, read by a handler along with other files."""
        self.cache[f"policy:{repo}"] = loaded

    def policy(self, repo: str) -> LoadedConfig:
        """The repository's policy from its default branch, read once per delivery."""
        key = f"policy:{repo}"
        if key not in self.cache:
            assert self.github is not None
            self.cache[key] = policy(self.github, repo, self.default_branch)
        loaded: LoadedConfig = self.cache[key]
        return loaded

    def pull_request(self, repo: str, number: int) -> PullRequest:
        """The PR as GitHub has it now, read once per delivery."""
        key = f"pr:{repo}#{number}"
        if key not in self.cache:
            assert self.github is not None
            self.cache[key] = self.github.pull_request(repo, number)
        pr: PullRequest = self.cache[key]
        return pr

    def remember_pull_request(self, pr: PullRequest) -> None:
        """The PR as a handler read it along with other things, for the later handlers."""
        self.cache[f"pr:{pr.repo}#{pr.number}"] = pr

    def forget_pull_request(self, repo: str, number: int) -> None:
        self.cache.pop(f"pr:{repo}#{number}", None)

    def effects(self) -> Effects:
        return Effects(self.store, self.github, dry_run=self.dry_run, delivery_id=self.event.delivery_id,
                       app_id=self.settings.app_id)


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
