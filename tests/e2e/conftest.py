"""End to end: the simulator over loopback, the service (uvicorn, SQLite, in-process worker)
acting through PyGithub with App credentials, webhooks signed and delivered over HTTP."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from sqlalchemy import func, select

from bot.cli.example import BASE_FILES
from bot.cli.wiring import service_app
from bot.store.schema import deliveries
from bot.store.store import Store
from config.settings import Settings
from ghsim import Simulator, serve_simulator
from ghsim.state import PullRequest, Repository
from tests.service.server import serving

SECRET = "e2e-secret"
REPO = "octo/miles"
TEMPLATE = (Path(__file__).parents[2] / "config" / "workflows" / "rocm-targeted.yml").read_text()


@dataclass
class World:
    sim: Simulator
    repo: Repository
    service: str
    store: Store
    settings: Settings
    services: ExitStack = field(default_factory=ExitStack)

    def restart(self, **changes: Any) -> None:
        """Stop the service, then serve again on the same database with changed settings."""
        self.services.close()
        self.settings = self.settings.model_copy(update=changes)
        self.service = self.services.enter_context(serving(service_app(self.settings, run_worker=True)))
        self.sim.state.configure_webhook(f"{self.service}/webhook", SECRET)

    def open_pr(self, files: dict[str, str | None], *, author: str = "dev", fork: bool = False,
                branch: str = "feature") -> PullRequest:
        state = self.sim.state
        head = state.commit(self.repo, files, branch=branch, message="PR change")
        return state.open_pull_request(self.repo, head=head, head_ref=branch, author=author, fork=fork)

    def deliver(self, event: str, payload: dict[str, Any]) -> None:
        delivery = self.sim.deliver(event, payload)
        assert delivery.status_code in (200, 202), delivery

    def settle(self, timeout: float = 60) -> None:
        """Wait until every stored delivery is processed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            counts = self.store.counts()
            if counts["queued"] == 0 and counts["processing"] == 0:
                return
            time.sleep(0.05)
        raise AssertionError(f"deliveries not processed: {self.store.counts()} "
                             f"{[(d.delivery_id, d.status, d.last_error) for d in self.store.recent()]}")

    def first_seen(self, head: str) -> float | None:
        """When the service stored the first delivery that carried ``head``, if one did."""
        with self.store.engine.connect() as conn:
            found = conn.execute(select(func.min(deliveries.c.received_at))
                                 .where(deliveries.c.head_sha == head)).scalar()
        return None if found is None else float(found)

    def read(self, pr: PullRequest, timeout: float = 10) -> None:
        """Wait until a person could have read the PR's head: until the clock is past the
        second the service first saw it in (GitHub's stamps are whole seconds)."""
        seen = self.first_seen(pr.head_sha)
        assert seen is not None, f"no delivery carried {pr.head_sha}"
        deadline = time.monotonic() + timeout
        while time.time() < math.floor(seen) + 1:
            assert time.monotonic() < deadline, "the clock did not move"
            time.sleep(0.01)

    def comments(self, pr: PullRequest) -> list[Any]:
        return self.sim.state.comments_on(self.repo, pr.number)

    def summary(self, pr: PullRequest) -> str:
        """The body of the PR's sticky summary comment (empty when there is none)."""
        found = [c.body for c in self.bot_comments(pr) if c.body.startswith("<!-- rocmbot:summary")]
        return found[-1] if found else ""

    def bot_comments(self, pr: PullRequest) -> list[Any]:
        return [c for c in self.comments(pr) if c.user.login.endswith("[bot]")]

    def reviews(self, pr: PullRequest) -> list[Any]:
        return self.sim.state.reviews_on(self.repo, pr.number)

    def checks(self, sha: str, name: str = "rocmbot / analysis") -> list[Any]:
        return [c for c in self.sim.state.check_runs_for(self.repo, sha) if c.name == name]


def make_world(tmp_path: Path, files: dict[str, str] | None = None, **overrides: Any) -> Iterator[World]:
    with serve_simulator() as sim:
        state = sim.state
        repo = state.add_repository(REPO, files={**BASE_FILES, **(files or {})})
        state.add_installation("octo", installation_id=77)
        state.add_collaborator(repo, "dev", "write")
        state.add_collaborator(repo, "lead", "maintain")
        settings = Settings(**{
            "webhook_secret": SecretStr(SECRET), "database_url": f"sqlite:///{tmp_path}/e2e.db",
            "dry_run": False, "app_id": state.app.id, "private_key": SecretStr(state.app.private_key_pem),
            "github_api_url": sim.url, "seconds_between_writes": 0, "secondary_rate_wait_seconds": 0.2,
            "github_backoff_seconds": 0.05, "github_retries": 8, "poll_seconds": 0.1,
            "backoff_base_seconds": 0.05, "backoff_max_seconds": 0.5, "lease_seconds": 30,
            "max_attempts": 12, "worker_concurrency": 2,
            # the simulator lists a run at once unless told otherwise: a short lookup window
            "dispatch_lookup_seconds": 1.0, "dispatch_lookup_first_seconds": 0.25, **overrides,
        })
        with ExitStack() as services:
            url = services.enter_context(serving(service_app(settings, run_worker=True)))
            state.configure_webhook(f"{url}/webhook", SECRET)
            store = Store(settings.database_url)
            try:
                yield World(sim, repo, url, store, settings, services)
            finally:
                store.close()
        assert not state.validation_failures, state.validation_failures


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path)


WorldFactory = Callable[..., World]
