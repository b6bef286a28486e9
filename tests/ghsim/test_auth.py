"""App JWT to installation token, and what happens with missing, wrong or expired credentials."""

from __future__ import annotations

from datetime import timedelta

import github
import httpx
import pytest
from github import Auth

from ghsim import Simulator
from ghsim.state import utcnow
from tests.ghsim.conftest import World, app_auth, app_jwt, client


def test_github_integration_exchanges_the_app_jwt_for_an_installation_token(
    sim: Simulator, world: World, integration: github.GithubIntegration
) -> None:
    token = integration.get_access_token(world.installation.id)
    assert token.token.startswith("ghs_")
    assert token.expires_at > utcnow() + timedelta(minutes=50)
    assert sim.state.tokens[token.token].installation_id == world.installation.id
    assert integration.get_repo_installation("rocm-org", "miles").id == world.installation.id
    assert integration.get_app_installation(world.installation.id).id == world.installation.id


def test_installation_auth_fetches_a_token_once_and_presents_it(sim: Simulator, world: World) -> None:
    gh = client(sim, world.installation)
    assert gh.get_repo("rocm-org/miles").default_branch == "main"
    assert gh.get_repo("rocm-org/miles").full_name == "rocm-org/miles"
    assert len(sim.state.find_calls("POST", "/app/installations/*/access_tokens")) == 1
    repo_calls = sim.state.find_calls("GET", "/repos/rocm-org/miles")
    assert {c.installation_id for c in repo_calls} == {world.installation.id}


def test_a_token_sent_as_bearer_is_accepted(sim: Simulator, world: World) -> None:
    token = sim.state.issue_token(world.installation)
    answer = httpx.get(f"{sim.url}/repos/rocm-org/miles", headers={"Authorization": f"Bearer {token.token}"})
    assert answer.status_code == 200


@pytest.mark.parametrize("header", [None, "token nope", "Basic abc"])
def test_requests_without_a_valid_token_get_401(sim: Simulator, header: str | None) -> None:
    headers = {"Authorization": header} if header else {}
    answer = httpx.get(f"{sim.url}/repos/rocm-org/miles", headers=headers)
    assert answer.status_code == 401
    assert answer.json()["message"] in ("Requires authentication", "Bad credentials")
    assert "x-ratelimit-remaining" in answer.headers


def test_an_expired_token_is_refused(sim: Simulator, world: World) -> None:
    token = sim.state.issue_token(world.installation)
    token.expires_at = utcnow() - timedelta(seconds=1)
    answer = httpx.get(f"{sim.url}/repos/rocm-org/miles", headers={"Authorization": f"token {token.token}"})
    assert answer.status_code == 401


def test_app_endpoints_check_the_jwt_signature_issuer_and_lifetime(sim: Simulator, world: World) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    other = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        .decode()
    )
    url = f"{sim.url}/app/installations/{world.installation.id}/access_tokens"
    cases = {
        app_jwt(sim): 201,
        app_jwt(sim, key=other): 401,
        app_jwt(sim, iss="999"): 401,
        app_jwt(sim, lifetime=3600): 401,
        app_jwt(sim, lifetime=-120): 401,
    }
    got = {t: httpx.post(url, headers={"Authorization": f"Bearer {t}"}).status_code for t in cases}
    assert got == cases


def test_an_installation_token_cannot_call_app_endpoints(sim: Simulator, world: World) -> None:
    token = sim.state.issue_token(world.installation)
    answer = httpx.get(f"{sim.url}/app", headers={"Authorization": f"token {token.token}"})
    assert answer.status_code == 401


def test_a_token_sees_only_its_installations_repositories(sim: Simulator, world: World) -> None:
    sim.state.add_repository("elsewhere/private", files={"a": "b"}, private=True)
    gh = client(sim, world.installation)
    with pytest.raises(github.UnknownObjectException):
        gh.get_repo("elsewhere/private")


def test_a_token_restricted_to_some_repositories_hides_the_others(sim: Simulator, world: World) -> None:
    sim.state.add_repository("rocm-org/slime", files={"a": "b"})
    answer = httpx.post(
        f"{sim.url}/app/installations/{world.installation.id}/access_tokens",
        headers={"Authorization": f"Bearer {app_jwt(sim)}"},
        json={"repositories": ["slime"]},
    )
    assert answer.status_code == 201
    assert [r["full_name"] for r in answer.json()["repositories"]] == ["rocm-org/slime"]
    gh = github.Github(base_url=sim.url, auth=Auth.Token(answer.json()["token"]))
    assert gh.get_repo("rocm-org/slime").name == "slime"
    with pytest.raises(github.UnknownObjectException):
        gh.get_repo("rocm-org/miles")


def test_an_unknown_installation_is_404(sim: Simulator, integration: github.GithubIntegration) -> None:
    with pytest.raises(github.UnknownObjectException):
        integration.get_access_token(123)


def test_app_identity_is_served(sim: Simulator) -> None:
    gi = github.GithubIntegration(auth=app_auth(sim.state), base_url=sim.url, seconds_between_requests=None)
    assert gi.get_app().slug == sim.state.app.slug
    assert [i.id for i in gi.get_installations()] == list(sim.state.installations)
