"""Fixtures: a seeded simulator served over loopback, PyGithub clients for its App and installation."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import github
import jwt
import pytest
from github import Auth
from github.GithubRetry import GithubRetry

from ghsim import Simulator, SimulatorState, serve_simulator
from ghsim.state import Installation, PullRequest, Repository

WORKFLOW = """\
name: ROCm targeted tests
run-name: "ROCm: ${{ inputs.tests }}"
on:
  workflow_dispatch:
    inputs:
      tests:
        description: test paths
        required: true
        type: string
      suite:
        type: choice
        options: [stage-c-4-gpu-mi350, stage-c-8-gpu-mi350]
        default: stage-c-4-gpu-mi350
      dry_run:
        type: boolean
        default: false
  pull_request:
"""

BASE_FILES = {
    "README.md": "# miles\n",
    "tests/e2e/test_short.py": "".join(f"line {i}\n" for i in range(1, 41)),
    "docker/Dockerfile.rocm": 'RUN pip install "numba==0.65.1"\n',
    ".github/workflows/rocm-targeted.yml": WORKFLOW,
}


@dataclass
class World:
    """The seeded state: one org installation, one repository, one open PR."""

    state: SimulatorState
    installation: Installation
    repo: Repository
    pull: PullRequest


def seed() -> World:
    state = SimulatorState()
    installation = state.add_installation("rocm-org")
    repo = state.add_repository("rocm-org/miles", files=BASE_FILES)
    changed = BASE_FILES["tests/e2e/test_short.py"].replace("line 20\n", "line twenty\n")
    state.commit(
        repo,
        {"tests/e2e/test_short.py": changed, "tests/e2e/test_new.py": "print('new')\n"},
        branch="feature",
        message="change a test",
    )
    pull = state.open_pull_request(repo, head="feature", title="Change a test", author="contributor")
    return World(state, installation, repo, pull)


@pytest.fixture
def world() -> World:
    return seed()


@pytest.fixture
def sim(world: World) -> Iterator[Simulator]:
    """The seeded simulator, checking its own answers against the description; no test may leave it with
    an answer that does not match GitHub's schema."""
    with serve_simulator(world.state, validate_responses=True) as running:
        yield running
    assert running.state.response_failures == []


def app_auth(state: SimulatorState) -> Auth.AppAuth:
    return Auth.AppAuth(state.app.id, state.app.private_key_pem)


def app_jwt(sim: Simulator, *, iss: str | None = None, lifetime: int = 540, key: str | None = None) -> str:
    now = int(time.time())
    claims = {"iat": now - 60, "exp": now + lifetime, "iss": iss or str(sim.state.app.id)}
    return jwt.encode(claims, key or sim.state.app.private_key_pem, algorithm="RS256")


def client(sim: Simulator, installation: Installation, *, retry: int | GithubRetry = 0) -> github.Github:
    """PyGithub for one installation, without its default pacing (0.25 s a request, 1 s a write)."""
    return github.Github(
        base_url=sim.url,
        auth=app_auth(sim.state).get_installation_auth(installation.id),
        retry=retry,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )


@pytest.fixture
def gh(sim: Simulator, world: World) -> github.Github:
    return client(sim, world.installation)


@pytest.fixture
def integration(sim: Simulator) -> github.GithubIntegration:
    return github.GithubIntegration(
        auth=app_auth(sim.state), base_url=sim.url, seconds_between_requests=None, seconds_between_writes=None
    )
