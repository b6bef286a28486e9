"""The GraphQL blob query the bot batches reads with: aliases, truncation, binary, missing paths, errors."""

from __future__ import annotations

from typing import Any

import github
import httpx

from ghsim import Simulator
from tests.ghsim.conftest import World

BLOB = "... on Blob { text isTruncated byteSize oid }"


def query(sim: Simulator, world: World, text: str, variables: dict[str, Any] | None = None) -> Any:
    token = sim.state.issue_token(world.installation).token
    answer = httpx.post(
        f"{sim.url}/graphql",
        json={"query": text, "variables": variables or {}},
        headers={"Authorization": f"bearer {token}"},
    )
    assert answer.status_code == 200
    assert answer.headers["x-ratelimit-resource"] == "graphql"
    return answer.json()


def test_aliased_object_expressions_read_many_blobs_in_one_query(sim: Simulator, world: World) -> None:
    head, base = world.pull.head_sha, world.pull.base_sha
    text = f"""
    query Files($owner: String!, $name: String!) {{
      repository(owner: $owner, name: $name) {{
        a0: object(expression: "{head}:tests/e2e/test_short.py") {{ {BLOB} }}
        a1: object(expression: "{base}:tests/e2e/test_short.py") {{ {BLOB} }}
        a2: object(expression: "{base}:tests/e2e/test_new.py") {{ {BLOB} }}
        a3: object(expression: "{head}:tests/e2e") {{ __typename ... on Tree {{ entries {{ name type }} }} }}
      }}
      rateLimit {{ cost remaining }}
    }}"""
    data = query(sim, world, text, {"owner": "rocm-org", "name": "miles"})["data"]
    files = data["repository"]
    assert "line twenty" in files["a0"]["text"] and "line twenty" not in files["a1"]["text"]
    assert files["a0"]["isTruncated"] is False
    assert files["a0"]["byteSize"] == len(files["a0"]["text"].encode())
    assert files["a0"]["oid"] == world.repo.store.commits[head].files["tests/e2e/test_short.py"].sha
    assert files["a2"] is None
    assert files["a3"] == {
        "__typename": "Tree",
        "entries": [{"name": "test_new.py", "type": "blob"}, {"name": "test_short.py", "type": "blob"}],
    }
    assert data["rateLimit"]["cost"] == 1
    assert len(sim.state.find_calls("POST", "/graphql")) == 1
    assert sim.state.writes == []


def test_text_above_the_configured_limit_is_truncated(sim: Simulator, world: World) -> None:
    sim.state.graphql_blob_limit = 10
    head = world.pull.head_sha
    text = (
        f'{{ repository(owner: "rocm-org", name: "miles") {{ '
        f'f: object(expression: "{head}:README.md") {{ {BLOB} }} '
        f'g: object(expression: "{head}:tests/e2e/test_short.py") {{ {BLOB} }} }} }}'
    )
    files = query(sim, world, text)["data"]["repository"]
    assert files["f"] == {"text": "# miles\n", "isTruncated": False, "byteSize": 8, "oid": files["f"]["oid"]}
    assert files["g"]["isTruncated"] is True and files["g"]["text"] == "line 1\nlin"


def test_binary_blobs_have_null_text(sim: Simulator, world: World) -> None:
    sha = sim.state.commit(world.repo, {"weights.bin": b"\x00\x01\x02"})
    text = (
        f'{{ repository(owner: "rocm-org", name: "miles") {{ w: object(expression: "{sha}:weights.bin") '
        f"{{ ... on Blob {{ text isBinary byteSize }} }} }} }}"
    )
    assert query(sim, world, text)["data"]["repository"]["w"] == {
        "text": None,
        "isBinary": True,
        "byteSize": 3,
    }


def test_unknown_fields_and_repositories_are_errors(sim: Simulator, world: World) -> None:
    bad = query(sim, world, '{ repository(owner: "rocm-org", name: "miles") { nope } }')
    assert "data" not in bad
    assert bad["errors"][0]["message"] == "Field 'nope' doesn't exist on type 'Repository'"
    assert sim.state.validation_failures[-1].operation == "graphql"
    missing = query(sim, world, '{ repository(owner: "rocm-org", name: "nothing") { name } }')
    assert missing["data"] == {"repository": None}
    assert missing["errors"][0]["type"] == "NOT_FOUND"


def test_pygithub_graphql_requests_reach_the_simulator(
    sim: Simulator, world: World, gh: github.Github
) -> None:
    head = world.pull.head_sha
    _, data = gh.requester.graphql_query(
        f'query {{ repository(owner: "rocm-org", name: "miles") {{ a: object(expression: "{head}:README.md") '
        f"{{ {BLOB} }} }} }}",
        {},
    )
    assert data["data"]["repository"]["a"]["text"] == "# miles\n"


def test_a_pull_request_comes_with_its_head_base_and_author(sim: Simulator, world: World) -> None:
    pull = world.pull
    fields = ("number headRefOid headRefName baseRefOid baseRefName isDraft state url "
              "author { __typename login } headRepository { nameWithOwner }")
    text = (f'{{ repository(owner: "rocm-org", name: "miles") {{ '
            f"pr: pullRequest(number: {pull.number}) {{ {fields} }} "
            f"gone: pullRequest(number: 999) {{ number }} }} }}")
    answer = query(sim, world, text)
    pr = answer["data"]["repository"]["pr"]
    assert (pr["number"], pr["headRefOid"], pr["baseRefOid"]) == (pull.number, pull.head_sha, pull.base_sha)
    assert (pr["headRefName"], pr["baseRefName"], pr["isDraft"], pr["state"]) == (
        pull.head_ref, pull.base_ref, pull.draft, "OPEN")
    assert pr["author"] == {"__typename": "User", "login": pull.user.login}
    assert pr["headRepository"] == {"nameWithOwner": pull.head_repo.full_name}
    assert pr["url"].endswith(f"/rocm-org/miles/pull/{pull.number}")
    assert answer["data"]["repository"]["gone"] is None
    (error,) = answer["errors"]
    assert error["type"] == "NOT_FOUND" and error["path"] == ["repository", "gone"]
    bot = sim.state.account("helper[bot]", "Bot")
    pull.user = bot
    sim.state.set_pull_state(pull, merged=True, state="closed")
    again = query(sim, world, text)["data"]["repository"]["pr"]
    assert again["author"] == {"__typename": "Bot", "login": "helper"} and again["state"] == "MERGED"


def test_a_pull_requests_labels_are_a_connection_that_needs_a_page_size(sim: Simulator, world: World) -> None:
    sim.state.add_labels(world.repo, world.pull.number, ["run-ci", "run-ci-extra", "perf"])
    number = world.pull.number
    pull_request = f'{{ repository(owner: "rocm-org", name: "miles") {{ pullRequest(number: {number}) '
    text = pull_request + (
        "{ a: labels(first: 2) { totalCount nodes { name color description isDefault url id } } "
        "b: labels(last: 1) { nodes { name } } } } }"
    )
    pull = query(sim, world, text)["data"]["repository"]["pullRequest"]
    assert pull["a"]["totalCount"] == 3
    assert [x["name"] for x in pull["a"]["nodes"]] == ["run-ci", "run-ci-extra"]
    first = pull["a"]["nodes"][0]
    assert (first["color"], first["description"], first["isDefault"]) == ("ededed", None, False)
    assert first["url"] == f"{sim.url}/rocm-org/miles/labels/run-ci" and first["id"].startswith("LA_")
    assert pull["b"]["nodes"] == [{"name": "perf"}]
    for arguments, message in (
        ("", "You must provide a `first` or `last` value"),
        ("(first: 101)", "exceeds the `first` limit of 100 records"),
        ("(last: -1)", "cannot be less than zero"),
        ('(first: "2")', "Expected type 'Int'"),
    ):
        text = pull_request + f"{{ labels{arguments} {{ nodes {{ name }} }} }} }} }}"
        (error,) = query(sim, world, text)["errors"]
        assert message in error["message"], arguments
