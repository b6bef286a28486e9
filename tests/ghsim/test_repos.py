"""Reading a repository: the repo, PRs and their files (paged), contents, blobs, trees, commits, compare."""

from __future__ import annotations

import base64

import github
import httpx
import pytest

from ghsim import Simulator, serve_simulator
from ghsim.state import SimulatorState
from tests.ghsim.conftest import World, client
from tests.gitrepo import GitRepo


def token_headers(sim: Simulator, world: World) -> dict[str, str]:
    return {"Authorization": f"token {sim.state.issue_token(world.installation).token}"}


def test_repository_and_pull_request_carry_githubs_fields_and_the_simulators_urls(
    sim: Simulator, world: World, gh: github.Github
) -> None:
    repo = gh.get_repo("rocm-org/miles")
    assert (repo.id, repo.default_branch, repo.private, repo.owner.login) == (
        world.repo.id,
        "main",
        False,
        "rocm-org",
    )
    assert repo.html_url == f"{sim.url}/rocm-org/miles"
    pull = repo.get_pull(world.pull.number)
    assert (pull.head.sha, pull.base.sha) == (world.pull.head_sha, world.pull.base_sha)
    assert (pull.head.ref, pull.base.ref, pull.user.login, pull.draft) == (
        "feature",
        "main",
        "contributor",
        False,
    )
    assert (pull.changed_files, pull.additions, pull.deletions) == (2, 2, 1)
    assert pull.url == f"{sim.url}/repos/rocm-org/miles/pulls/{world.pull.number}"


def test_pull_request_files_report_status_counts_and_patch(gh: github.Github, world: World) -> None:
    files = {f.filename: f for f in gh.get_repo("rocm-org/miles").get_pull(world.pull.number).get_files()}
    assert set(files) == {"tests/e2e/test_short.py", "tests/e2e/test_new.py"}
    short = files["tests/e2e/test_short.py"]
    assert (short.status, short.additions, short.deletions) == ("modified", 1, 1)
    assert short.patch.startswith("@@ -17,7 +17,7 @@")
    assert "-line 20\n+line twenty" in short.patch
    assert files["tests/e2e/test_new.py"].status == "added"


def test_pull_request_files_are_paginated_with_link_headers(sim: Simulator, world: World) -> None:
    state = sim.state
    many = {f"tests/e2e/test_{i:03}.py": f"x = {i}\n" for i in range(250)}
    state.commit(world.repo, many, branch="many")
    pull = state.open_pull_request(world.repo, head="many", head_ref="many")
    gh = client(sim, world.installation)
    gh.per_page = 100
    names = [f.filename for f in gh.get_repo("rocm-org/miles").get_pull(pull.number).get_files()]
    assert names == sorted(many)
    pages = state.find_calls("GET", f"/repos/rocm-org/miles/pulls/{pull.number}/files")
    assert [(c.query.get("per_page"), c.query.get("page")) for c in pages] == [
        ("100", None),
        ("100", "2"),
        ("100", "3"),
    ]
    answer = httpx.get(
        f"{sim.url}/repos/rocm-org/miles/pulls/{pull.number}/files?per_page=100&page=2",
        headers=token_headers(sim, world),
    )
    links = answer.headers["link"]
    assert (
        f'<{sim.url}/repos/rocm-org/miles/pulls/{pull.number}/files?per_page=100&page=3>; rel="next"' in links
    )
    assert 'rel="prev"' in links and 'rel="first"' in links and 'rel="last"' in links


def test_contents_of_a_file_and_a_directory_at_a_ref(gh: github.Github, world: World, sim: Simulator) -> None:
    repo = gh.get_repo("rocm-org/miles")
    at_head = repo.get_contents("tests/e2e/test_short.py", ref=world.pull.head_sha)
    assert not isinstance(at_head, list)
    assert b"line twenty" in at_head.decoded_content
    at_base = repo.get_contents("tests/e2e/test_short.py")
    assert not isinstance(at_base, list)
    assert b"line twenty" not in at_base.decoded_content
    listing = repo.get_contents("tests/e2e", ref="feature")
    assert isinstance(listing, list)
    assert sorted(c.path for c in listing) == ["tests/e2e/test_new.py", "tests/e2e/test_short.py"]
    with pytest.raises(github.UnknownObjectException):
        repo.get_contents("missing.txt")
    raw = httpx.get(
        f"{sim.url}/repos/rocm-org/miles/contents/README.md",
        headers={**token_headers(sim, world), "Accept": "application/vnd.github.raw+json"},
    )
    assert raw.content == b"# miles\n"


def test_blobs_and_recursive_trees(gh: github.Github, world: World) -> None:
    repo = gh.get_repo("rocm-org/miles")
    tree = repo.get_git_tree(world.pull.head_sha, recursive=True)
    paths = {e.path: e for e in tree.tree}
    assert {"tests", "tests/e2e", "tests/e2e/test_new.py", ".github/workflows/rocm-targeted.yml"} <= set(
        paths
    )
    assert paths["tests"].type == "tree" and paths["README.md"].mode == "100644"
    blob = repo.get_git_blob(paths["README.md"].sha)
    assert base64.b64decode(blob.content) == b"# miles\n"
    top = repo.get_git_tree(tree.sha)
    assert "tests/e2e" not in {e.path for e in top.tree}


def test_compare_reports_merge_base_ahead_and_files(gh: github.Github, world: World, sim: Simulator) -> None:
    sim.state.commit(world.repo, {"README.md": "# miles, moved on\n"})
    compared = gh.get_repo("rocm-org/miles").compare("main", "feature")
    assert compared.status == "diverged"
    assert (compared.ahead_by, compared.behind_by) == (1, 1)
    assert compared.merge_base_commit.sha == world.pull.base_sha
    assert sorted(f.filename for f in compared.files) == ["tests/e2e/test_new.py", "tests/e2e/test_short.py"]
    commit = gh.get_repo("rocm-org/miles").get_commit(world.pull.head_sha)
    assert commit.commit.message == "change a test"
    assert [p.sha for p in commit.parents] == [world.pull.base_sha]


def test_a_repository_seeded_from_git_keeps_gits_shas(git_repo: GitRepo) -> None:
    git_repo.write_all({"a.py": "A = 1\n", "pkg/b.py": "B = 2\n", "pkg/deep/c.txt": "c\n"})
    base = git_repo.commit("base")
    git_repo.git("checkout", "-q", "-b", "topic")
    git_repo.write("pkg/b.py", "B = 3\n")
    git_repo.remove("a.py")
    head = git_repo.commit("topic")
    git_repo.git("checkout", "-q", "main")
    state = SimulatorState()
    installation = state.add_installation("rocm-org")
    repo = state.add_repository_from_git("rocm-org/gitrepo", git_repo.root)
    assert repo.branches == {"main": base, "topic": head}
    assert repo.store.commits[head].tree == git_repo.git("rev-parse", f"{head}^{{tree}}")
    remade = repo.store.write_tree(repo.store.commits[head].files)  # our own tree hashing agrees with git's
    assert remade == repo.store.commits[head].tree
    pull = state.open_pull_request(repo, head="topic", head_ref="topic")
    with serve_simulator(state, validate_responses=True) as sim:
        gh = client(sim, installation)
        files = {
            f.filename: f.status for f in gh.get_repo("rocm-org/gitrepo").get_pull(pull.number).get_files()
        }
        assert files == {"a.py": "removed", "pkg/b.py": "modified"}
        assert sim.state.response_failures == []


def test_a_deleted_repository_and_its_pull_requests_are_answered_404(
    sim: Simulator, world: World, gh: github.Github
) -> None:
    """GitHub has no deletion of a PR: it disappears with its repository (or a transfer where
    the App is not installed). Off until asked for: the repository answers as before."""
    number = world.pull.number
    assert gh.get_repo("rocm-org/miles").get_pull(number).number == number
    sim.state.delete_repository(world.repo)
    headers = token_headers(sim, world)
    for path in ("/repos/rocm-org/miles", f"/repos/rocm-org/miles/pulls/{number}",
                 f"/repos/rocm-org/miles/pulls/{number}/files"):
        answer = httpx.get(f"{sim.url}{path}", headers=headers)
        assert (answer.status_code, answer.json()["message"]) == (404, "Not Found"), path
    posted = httpx.post(f"{sim.url}/repos/rocm-org/miles/issues/{number}/comments", headers=headers,
                        json={"body": "too late"})
    assert posted.status_code == 404
    query = (f'{{ repository(owner: "rocm-org", name: "miles") {{ '
             f"pullRequest(number: {number}) {{ number }} }} }}")
    answer = httpx.post(f"{sim.url}/graphql", headers=headers, json={"query": query}).json()
    assert answer["data"] == {"repository": None} and answer["errors"][0]["type"] == "NOT_FOUND"
    assert sim.state.comments_on(world.repo, number) == []
