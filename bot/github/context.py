"""What a handler receives with each event: settings, the store, GitHub, and whether to act."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.core.events import Event
from bot.github.effects import Effects, Lookups
from bot.github.policy import policy
from bot.github.port import GitHubPort, PullRequest, label_names
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
        settings = self.settings
        lookups = Lookups(settings.dispatch_lookup_seconds, settings.dispatch_lookup_first_seconds)
        return Effects(self.store, self.github, dry_run=self.dry_run, delivery_id=self.event.delivery_id,
                       app_id=settings.app_id, in_flight=settings.request_margin, lookups=lookups)


def local_ports(repo_path: str) -> PortFactory:
    """A local clone standing in for GitHub: each pull_request delivery's PR is read from it
    at the base and head the delivery names (other events get no port). One port per thread:
    a worker thread processes one delivery at a time, and its port keeps the commits it listed
    for the next (branch names are resolved again for each)."""
    from bot.github.local import LocalPort

    mine = threading.local()

    def port(event: Event) -> GitHubPort | None:
        pr = event.payload.get("pull_request")
        if not isinstance(pr, dict) or event.pr_number is None:
            return None
        base, head = ((pr.get(side) or {}).get("sha") for side in ("base", "head"))
        if not (isinstance(base, str) and isinstance(head, str)):
            return None
        local: LocalPort | None = getattr(mine, "port", None)
        if local is None:
            local = mine.port = LocalPort(repo_path)
        local.repo = event.repository or "local/repo"
        local.prs = {event.pr_number: (base, head)}
        local.default_ref = base
        local.author = str((pr.get("user") or {}).get("login") or "contributor")
        local.labels = label_names(pr.get("labels"))
        local.writes.clear()
        local.refresh()
        return local

    return port


def no_app_notice(settings: Settings) -> str | None:
    """What a worker without App credentials can do, for its log; None with them."""
    if settings.has_app_credentials:
        return None
    if settings.local_repo is not None:
        return (f"no App credentials: each PR is read from the clone at {settings.local_repo} "
                "(ROCMBOT_LOCAL_REPO); effects are recorded, not sent")
    return ("no App credentials: deliveries are stored, but GitHub cannot be read, so nothing is "
            "analysed. Set ROCMBOT_LOCAL_REPO to a clone of the repository to analyse its PRs "
            "(effects recorded, not sent), or run `rocmbot sandbox` (or `rocmbot demo`) to see "
            "rocmbot work without a GitHub App")


def app_ports(settings: Settings) -> PortFactory:
    """GitHub through the App's installation tokens; without App credentials, the local clone
    of ``ROCMBOT_LOCAL_REPO``, or nothing."""
    if not settings.has_app_credentials:
        if settings.local_repo is not None:
            return local_ports(str(settings.local_repo))
        return lambda event: None
    from bot.github.adapter import GitHubApp

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
