"""Rate-limit headers on every answer; injected 5xx, secondary limits, 429, exhaustion, slowness, drops."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import github
import httpx
import pytest
from github.GithubRetry import GithubRetry

from ghsim import Simulator
from tests.ghsim.conftest import World, client


@pytest.fixture
def api(sim: Simulator, world: World) -> Iterator[httpx.Client]:
    token = sim.state.issue_token(world.installation).token
    with httpx.Client(base_url=sim.url, headers={"Authorization": f"token {token}"}) as session:
        yield session


def retrying(sim: Simulator, world: World, total: int = 3) -> github.Github:
    return client(
        sim, world.installation, retry=GithubRetry(total=total, backoff_factor=0, secondary_rate_wait=1)
    )


def test_every_answer_carries_rate_limit_headers(sim: Simulator, world: World, api: httpx.Client) -> None:
    first = api.get("/repos/rocm-org/miles")
    second = api.get("/repos/rocm-org/miles/pulls/999")
    graphql = api.post(
        "/graphql", json={"query": '{ repository(owner: "rocm-org", name: "miles") { name } }'}
    )
    assert second.status_code == 404
    for answer in (first, second, graphql):
        assert {
            "x-ratelimit-limit",
            "x-ratelimit-remaining",
            "x-ratelimit-reset",
            "x-ratelimit-used",
            "x-ratelimit-resource",
        } <= set(answer.headers)
    assert int(second.headers["x-ratelimit-remaining"]) == int(first.headers["x-ratelimit-remaining"]) - 1
    assert (first.headers["x-ratelimit-used"], second.headers["x-ratelimit-used"]) == ("1", "2")
    assert (first.headers["x-ratelimit-resource"], graphql.headers["x-ratelimit-resource"]) == (
        "core",
        "graphql",
    )
    assert int(first.headers["x-ratelimit-reset"]) > time.time()


def test_5xx_for_the_next_requests_is_retried_by_pygithub(sim: Simulator, world: World) -> None:
    sim.faults.fail(502, times=2, method="GET", path="/repos/*/pulls/*")
    pull = retrying(sim, world).get_repo("rocm-org/miles").get_pull(world.pull.number)
    assert pull.number == world.pull.number
    assert [c.status for c in sim.state.find_calls("GET", "/repos/*/pulls/*")] == [502, 502, 200]
    assert sim.faults.count("status") == 2


def test_without_retries_a_5xx_reaches_the_client(sim: Simulator, world: World) -> None:
    sim.faults.fail(503, times=1)
    with pytest.raises(github.GithubException) as raised:
        client(sim, world.installation).get_repo("rocm-org/miles")
    assert raised.value.status == 503


def test_a_5xx_after_the_write_leaves_the_write_made(sim: Simulator, world: World, api: httpx.Client) -> None:
    sim.faults.fail_after(502, times=1, method="POST", path="*/comments")
    answer = api.post(f"/repos/rocm-org/miles/issues/{world.pull.number}/comments", json={"body": "made"})
    assert answer.status_code == 502 and answer.json() == {"message": "Bad Gateway"}
    assert "x-ratelimit-remaining" in answer.headers
    assert [c.body for c in sim.state.comments_on(world.repo, world.pull.number)] == ["made"]
    (call,) = sim.state.find_calls("POST", "*/comments")
    assert (call.status, call.fault) == (502, "status_after")
    assert sim.faults.count("status_after") == 1


def test_a_random_fraction_is_reproducible_from_its_seed(sim: Simulator, api: httpx.Client) -> None:
    def pattern() -> list[int]:
        sim.faults.clear()
        sim.faults.reseed(7)
        sim.faults.fail(500, times=None, fraction=0.3, method="GET")
        return [api.get("/repos/rocm-org/miles").status_code for _ in range(30)]

    first, second = pattern(), pattern()
    assert first == second
    assert 0 < first.count(500) < 30 and set(first) == {200, 500}
    assert api.post("/repos/rocm-org/miles/issues/1/comments", json={"body": "x"}).status_code == 201


def test_a_secondary_rate_limit_carries_retry_after_and_is_waited_out(
    sim: Simulator, world: World, api: httpx.Client
) -> None:
    sim.faults.secondary_rate_limit(retry_after=1, times=1, method="POST")
    refused = api.post("/repos/rocm-org/miles/issues/1/comments", json={"body": "x"})
    assert refused.status_code == 403
    assert refused.headers["retry-after"] == "1"
    assert refused.json()["message"].startswith("You have exceeded a secondary rate limit")
    sim.faults.secondary_rate_limit(retry_after=1, times=1, method="POST", path="*/comments")
    started = time.monotonic()
    retrying(sim, world).get_repo("rocm-org/miles").get_pull(world.pull.number).create_issue_comment("hello")
    assert time.monotonic() - started >= 1
    assert [c.status for c in sim.state.find_calls("POST", "*/comments")] == [403, 403, 201]
    assert [c.body for c in sim.state.comments_on(world.repo, world.pull.number)] == ["hello"]


def test_429_carries_retry_after(sim: Simulator, api: httpx.Client) -> None:
    sim.faults.too_many_requests(retry_after=2, path=re.compile(r"/pulls/\d+$"))
    limited = api.get("/repos/rocm-org/miles/pulls/1")
    assert (limited.status_code, limited.headers["retry-after"]) == (429, "2")
    assert "x-ratelimit-remaining" in limited.headers
    assert api.get("/repos/rocm-org/miles/pulls/1").status_code == 200


def test_primary_exhaustion_refuses_until_the_reset(sim: Simulator, world: World, api: httpx.Client) -> None:
    sim.faults.exhaust_rate_limit(reset_in=5)  # room for the requests below on a loaded machine
    refused = api.get("/repos/rocm-org/miles")
    assert refused.status_code == 403
    assert refused.headers["x-ratelimit-remaining"] == "0"
    assert refused.json()["message"].startswith("API rate limit exceeded")
    again = api.get("/repos/rocm-org/miles")
    assert again.status_code == 403
    with pytest.raises(github.RateLimitExceededException):
        github.Github(
            base_url=sim.url,
            auth=github.Auth.Token(api.headers["Authorization"].split()[1]),
            retry=0,
            seconds_between_requests=None,
        ).get_repo("rocm-org/miles")
    time.sleep(max(0.0, int(refused.headers["x-ratelimit-reset"]) - time.time()) + 0.05)
    fresh = api.get("/repos/rocm-org/miles")
    assert fresh.status_code == 200
    assert fresh.headers["x-ratelimit-used"] == "1"


def test_slow_answers_take_their_time(sim: Simulator, api: httpx.Client) -> None:
    rule = sim.faults.slow(0.3, times=1, path="/repos/rocm-org/miles")
    started = time.monotonic()
    assert api.get("/repos/rocm-org/miles").status_code == 200
    assert time.monotonic() - started >= 0.3  # a lower bound: load only makes it longer
    assert api.get("/repos/rocm-org/miles").status_code == 200
    assert rule.hits == 1  # the second answer was not delayed
    assert [i.kind for i in sim.faults.injected] == ["slow"]


def test_a_dropped_connection_gets_no_answer_and_is_retried_by_pygithub(
    sim: Simulator, world: World, api: httpx.Client
) -> None:
    sim.faults.drop(times=1)
    with pytest.raises(httpx.RemoteProtocolError):
        api.get("/repos/rocm-org/miles")
    assert api.get("/repos/rocm-org/miles").status_code == 200
    sim.faults.drop(times=1, method="GET", path="/repos/*/pulls/*")
    assert (
        retrying(sim, world).get_repo("rocm-org/miles").get_pull(world.pull.number).number
        == world.pull.number
    )
    assert [c.fault for c in sim.state.calls if c.fault] == ["drop", "drop"]


def test_a_late_answer_comes_after_the_write_was_made(sim: Simulator, world: World) -> None:
    """GitHub did the work; the client, its timeout shorter than the wait, never saw the answer."""
    token = sim.state.issue_token(world.installation).token
    flow = next(iter(world.repo.workflows.values()))
    url = f"{sim.url}/repos/rocm-org/miles/actions/workflows/{flow.id}/dispatches"
    body = {"ref": "main", "inputs": {"tests": "x"}, "return_run_details": True}
    headers = {"Authorization": f"token {token}"}
    sim.faults.answer_late(3, times=1, method="POST", path="*/dispatches")
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(url, headers=headers, json=body, timeout=0.5)
    (made,) = sim.state.runs.values()  # made before the answer was due
    assert sim.state.find_calls("POST", "*/dispatches")[0].status == 200
    sim.faults.answer_late(0.2, times=1, method="POST", path="*/dispatches")
    answer = httpx.post(url, headers=headers, json=body, timeout=30)
    assert answer.status_code == 200 and answer.json()["workflow_run_id"] in sim.state.runs
    assert answer.json()["workflow_run_id"] != made.id
    assert [c.fault for c in sim.state.find_calls("POST", "*/dispatches")] == ["answer_late", "answer_late"]
    assert sim.faults.count("answer_late") == 2


def test_a_connection_dropped_after_the_write_leaves_it_made(
    sim: Simulator, world: World, api: httpx.Client
) -> None:
    sim.faults.drop_after(times=1, method="POST", path="*/comments")
    with pytest.raises(httpx.RemoteProtocolError):
        api.post(f"/repos/rocm-org/miles/issues/{world.pull.number}/comments", json={"body": "made"})
    (call,) = sim.state.find_calls("POST", "*/comments")
    assert (call.status, call.fault) == (0, "drop_after")
    assert [c.body for c in sim.state.comments_on(world.repo, world.pull.number)] == ["made"]


def test_an_injected_403_says_access_was_lost_and_is_no_rate_limit(
    sim: Simulator, world: World, api: httpx.Client
) -> None:
    sim.faults.fail(403, times=1, path="/repos/*/pulls/*")
    answer = api.get(f"/repos/rocm-org/miles/pulls/{world.pull.number}")
    assert answer.status_code == 403
    assert answer.json() == {"message": "Resource not accessible by integration"}
    assert "retry-after" not in answer.headers and answer.headers["x-ratelimit-remaining"] != "0"
