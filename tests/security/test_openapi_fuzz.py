"""Schemathesis against the service's own OpenAPI description, served by real uvicorn on
loopback with real SQLite: every operation, positive and negative cases, answers below 500
with a status, content type and body the description documents, and nothing stored (the
generated requests cannot know the webhook secret).

The description is taken from ``create_app(...).openapi()`` when the module loads (building
the app connects to nothing); schemathesis's lazy ``from_fixture`` loader does not run on
pytest 9, so the live server is only the target of the calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from pydantic import SecretStr
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from bot.service.app import create_app
from bot.store.store import Store
from config.settings import Settings
from tests.service.helpers import SECRET
from tests.service.server import serving

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


@dataclass
class Live:
    url: str
    store: Store


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    folder = tmp_path_factory.mktemp("openapi")
    config = _settings(f"sqlite:///{folder}/db.sqlite")
    with serving(create_app(config)) as url:
        store = Store(config.database_url)
        try:
            yield Live(url, store)
        finally:
            store.close()


def _settings(database_url: str) -> Settings:
    return Settings(webhook_secret=SecretStr(SECRET.decode()), database_url=database_url,
                    max_body_bytes=64 * 1024)


schema = schemathesis.openapi.from_dict(create_app(_settings("sqlite://")).openapi())


def test_the_served_description_is_the_one_fuzzed(live: Live) -> None:
    import httpx

    assert httpx.get(f"{live.url}/openapi.json").json() == schema.raw_schema


@schema.parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented(case: schemathesis.Case[Any], live: Live) -> None:
    response = case.call(base_url=live.url, timeout=30)
    case.validate_response(response, checks=CHECKS)
    assert live.store.counts().get("queued", 0) == 0, "a request without the secret was stored"
