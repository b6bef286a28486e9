from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from bot.service.router import Router
from tests.gitrepo import GitRepo

settings.register_profile("ci", deadline=None, max_examples=200)
settings.register_profile("dev", deadline=None, max_examples=60)
settings.load_profile("ci")


@pytest.fixture
def product_router() -> Router:
    """The product's handlers, as the CLI's composition root builds them for the service."""
    from bot.cli.wiring import build_router

    return build_router()


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "repo")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A real PostgreSQL server for the session (ROCMBOT_TEST_DATABASE_URL to use your own)."""
    given = os.environ.get("ROCMBOT_TEST_DATABASE_URL")
    if given:
        yield given
        return
    from tests.pg import postgres_server

    with postgres_server() as url:
        yield url
