"""Requests are checked against GitHub's OpenAPI description: invalid ones get 422 and are recorded."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from ghsim import Simulator
from ghsim.endpoints import HANDLERS
from ghsim.openapi.regenerate import OPERATIONS
from ghsim.spec import load_spec
from tests.ghsim.conftest import World


@pytest.fixture
def api(sim: Simulator, world: World) -> Iterator[httpx.Client]:
    token = sim.state.issue_token(world.installation).token
    with httpx.Client(base_url=sim.url, headers={"Authorization": f"token {token}"}) as session:
        yield session


def test_the_vendored_subset_holds_exactly_the_served_operations() -> None:
    spec = load_spec()
    assert {(o.method.lower(), o.template) for o in spec.operations} == set(OPERATIONS)
    assert set(HANDLERS) == {o.operation_id for o in spec.operations}


def test_per_page_above_100_is_refused_and_recorded(sim: Simulator, world: World, api: httpx.Client) -> None:
    answer = api.get(f"/repos/rocm-org/miles/pulls/{world.pull.number}/files?per_page=101")
    assert answer.status_code == 422
    assert "per_page" in answer.json()["message"]
    failure = sim.state.validation_failures[-1]
    assert (failure.method, failure.operation) == ("GET", "pulls/list-files")
    assert api.get(f"/repos/rocm-org/miles/pulls/{world.pull.number}/files?per_page=100").status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "body", "fragment"),
    [
        ("POST", "/repos/rocm-org/miles/issues/1/comments", {}, "'body' is a required property"),
        ("POST", "/repos/rocm-org/miles/issues/1/comments", {"body": 5}, "5 is not of type 'string'"),
        ("POST", "/repos/rocm-org/miles/check-runs", {"name": "x"}, "'head_sha' is a required property"),
        (
            "POST",
            "/repos/rocm-org/miles/check-runs",
            {"name": "x", "head_sha": "a", "status": "done"},
            "'done' is not one of",
        ),
        (
            "POST",
            "/repos/rocm-org/miles/issues/comments/1/reactions",
            {"content": "party"},
            "'party' is not one of",
        ),
        ("POST", "/repos/rocm-org/miles/pulls/1/reviews", {"event": "SHOUT"}, "'SHOUT' is not one of"),
        ("GET", "/repos/rocm-org/miles/pulls/one", None, "pull_number"),
        (
            "GET",
            "/repos/rocm-org/miles/commits/main/check-runs?filter=oldest",
            None,
            "'oldest' is not one of",
        ),
    ],
)
def test_requests_that_break_the_description_get_422(
    sim: Simulator, api: httpx.Client, method: str, path: str, body: object, fragment: str
) -> None:
    answer = api.request(method, path, json=body)
    assert answer.status_code == 422
    assert answer.json()["message"].startswith("Invalid request.")
    assert fragment in answer.json()["message"]
    assert sim.state.validation_failures[-1].message in answer.json()["message"]


def test_malformed_json_is_400(sim: Simulator, api: httpx.Client) -> None:
    answer = api.post(
        "/repos/rocm-org/miles/issues/1/comments",
        content=b"{nope",
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 400
    assert answer.json()["message"] == "Problems parsing JSON"


def test_unknown_paths_are_githubs_404(sim: Simulator, api: httpx.Client) -> None:
    answer = api.get("/repos/rocm-org/miles/branches")
    assert answer.status_code == 404
    assert answer.json()["message"] == "Not Found"
    assert sim.state.validation_failures == []


def test_valid_traffic_leaves_no_validation_failure(sim: Simulator, world: World, api: httpx.Client) -> None:
    assert api.get(f"/repos/rocm-org/miles/pulls/{world.pull.number}").status_code == 200
    assert (
        api.post(f"/repos/rocm-org/miles/issues/{world.pull.number}/comments", json={"body": "x"}).status_code
        == 201
    )
    assert sim.state.validation_failures == []
    assert [c.operation for c in sim.state.calls] == ["pulls/get", "issues/create-comment"]
    assert sim.state.requests == 2
