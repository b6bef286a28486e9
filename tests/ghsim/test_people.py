"""Permission checks the bot gates on: collaborator permission levels and org team membership."""

from __future__ import annotations

import github
import httpx
import pytest

from ghsim import Simulator
from tests.ghsim.conftest import World


@pytest.mark.parametrize(
    ("role", "permission"),
    [("admin", "admin"), ("maintain", "write"), ("write", "write"), ("triage", "read"), ("read", "read")],
)
def test_collaborator_permission_levels(
    sim: Simulator, world: World, gh: github.Github, role: str, permission: str
) -> None:
    sim.state.add_collaborator(world.repo, "maintainer", role)
    assert gh.get_repo("rocm-org/miles").get_collaborator_permission("maintainer") == permission


def test_a_known_user_without_access_reads_a_public_repository_and_nothing_of_a_private_one(
    sim: Simulator, world: World, gh: github.Github
) -> None:
    assert gh.get_repo("rocm-org/miles").get_collaborator_permission("contributor") == "read"
    world.repo.private = True
    assert gh.get_repo("rocm-org/miles").get_collaborator_permission("contributor") == "none"
    with pytest.raises(github.UnknownObjectException):
        gh.get_repo("rocm-org/miles").get_collaborator_permission("nobody-at-all")


def test_team_membership(sim: Simulator, world: World) -> None:
    sim.state.add_team_member("rocm-org", "amd-ci", "maintainer", role="maintainer")
    token = sim.state.issue_token(world.installation).token
    headers = {"Authorization": f"token {token}"}
    member = httpx.get(f"{sim.url}/orgs/rocm-org/teams/amd-ci/memberships/maintainer", headers=headers)
    assert member.status_code == 200
    assert (member.json()["role"], member.json()["state"]) == ("maintainer", "active")
    outsider = httpx.get(f"{sim.url}/orgs/rocm-org/teams/amd-ci/memberships/contributor", headers=headers)
    assert outsider.status_code == 404
