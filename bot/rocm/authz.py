"""Who may spend GPU time: the actor's effective repository permission, plus configured lists."""

from __future__ import annotations

from dataclasses import dataclass

from bot.github.port import GitHubPort
from config.repo import DispatchConfig

LEVELS = {"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}


@dataclass(frozen=True)
class Actor:
    login: str
    permission: str
    trusted: bool  # may run
    maintainer: bool  # may approve and force

    def why(self) -> str:
        return f"@{self.login} has `{self.permission}` permission"


def _in_teams(gh: GitHubPort, teams: list[str], login: str) -> bool:
    for team in teams:
        org, slug = team.split("/", 1)
        if gh.team_member(org, slug, login):
            return True
    return False


def actor(gh: GitHubPort, repo: str, login: str, config: DispatchConfig) -> Actor:
    """The actor's rights on a repository (the REST permission includes team grants)."""
    permission = gh.permission(repo, login)
    level = LEVELS.get(permission, 0)
    lowered = login.lower()
    maintainer = (
        level >= LEVELS["maintain"]
        or lowered in {u.lower() for u in config.maintainers}
        or (bool(config.maintainer_teams) and _in_teams(gh, config.maintainer_teams, login))
    )
    trusted = (
        maintainer
        or level >= LEVELS["write"]
        or lowered in {u.lower() for u in config.trusted_users}
        or (bool(config.trusted_teams) and _in_teams(gh, config.trusted_teams, login))
    )
    return Actor(login, permission, trusted, maintainer)


def who_may(config: DispatchConfig, *, approve: bool) -> str:
    """One sentence naming who may run (or approve)."""
    if approve:
        extra = [*config.maintainers, *config.maintainer_teams]
        base = "people with maintain or admin permission on this repository"
    else:
        extra = [*config.trusted_users, *config.trusted_teams, *config.maintainers, *config.maintainer_teams]
        base = "people with write, maintain or admin permission on this repository"
    if extra:
        return base + ", and " + ", ".join(f"`{e}`" for e in extra)
    return base
