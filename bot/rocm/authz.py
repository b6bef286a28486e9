"""Who may spend GPU time: the actor's effective repository permission, plus configured lists."""

from __future__ import annotations

from bot.github.port import Permissions
from bot.rocm.decide import LEVELS, Actor, rank
from config.repo import DispatchConfig


def _in_teams(gh: Permissions, teams: list[str], login: str) -> bool:
    for team in teams:
        org, slug = team.split("/", 1)
        if gh.team_member(org, slug, login):
            return True
    return False


def actor(gh: Permissions, repo: str, login: str, config: DispatchConfig) -> Actor:
    """The actor's rights on a repository (the REST permission includes team grants); teams
    are asked about only when the permission and the lists do not settle it."""
    permission = gh.permission(repo, login)
    level = rank(permission)
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
