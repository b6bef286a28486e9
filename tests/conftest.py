from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from bot.service.router import Router
from bot.store.store import Store
from tests.gitrepo import GitRepo

# Suites that start servers and processes end to end: marked `slow` as they are collected, so
# `pytest -m "not slow"` is a quick local run (CONTRIBUTING.md); bin/test and CI run everything.
# A single slow test elsewhere carries `@pytest.mark.slow` itself.
SLOW_SUITES = ("tests/e2e/", "tests/chaos/", "tests/service/test_multiprocess.py")
ROOT = Path(__file__).resolve().parents[1]


# The files whose tests take longest (`--durations`): they are handed out first, so that over
# several processes (bin/test's -n) they run beside the many short tests instead of after them.
LONGEST_FIRST = (
    "tests/chaos/test_campaigns.py",
    "tests/service/test_multiprocess.py",
    "tests/e2e/test_approvals.py",
    "tests/e2e/test_authorization.py",
    "tests/security/test_parser_fuzz.py",
    "tests/analysis/test_launch_sharing.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.relative_to(ROOT).as_posix().startswith(SLOW_SUITES):
            item.add_marker(pytest.mark.slow)
    # whole files move, each in its order: a module's fixtures are still set up once
    items.sort(key=lambda item: item.path.relative_to(ROOT).as_posix() not in LONGEST_FIRST)


settings.register_profile("ci", deadline=None, max_examples=120)  # each CI run draws anew
settings.register_profile("dev", deadline=None, max_examples=60)
settings.load_profile("ci")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A migrated SQLite store of the test's own (tests/service/ runs its tests on PostgreSQL too)."""
    store = Store(f"sqlite:///{tmp_path}/db.sqlite")
    store.upgrade()
    yield store
    store.close()


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
