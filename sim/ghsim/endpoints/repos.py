"""Repositories, contents, git blobs and trees, commits, compare, pull requests and their files."""

from __future__ import annotations

from typing import Any

from fastapi.responses import Response

from ghsim.diff import diff_commits
from ghsim.endpoints.base import ApiError, Ctx, handles, json_response, not_found, paginate
from ghsim.objects import LINK_MODE, SUBMODULE_MODE, TREE_MODE, Commit
from ghsim.state import PullRequest, Repository


@handles("repos/get")
def get_repo(ctx: Ctx) -> Response:
    return json_response(ctx.shapes.repository(ctx.repo()))


def _commit(repo: Repository, ref: str) -> Commit:
    commit = repo.resolve(ref)
    if commit is None:
        raise ApiError(422, f"No commit found for SHA: {ref}")
    return commit


@handles("repos/get-commit")
def get_commit(ctx: Ctx) -> Response:
    repo = ctx.repo()
    commit = _commit(repo, ctx.params["ref"])
    parent = repo.store.commits.get(commit.parents[0]) if commit.parents else None
    return json_response(ctx.shapes.commit(repo, commit, files=diff_commits(repo.store, parent, commit)))


@handles("repos/get-content")
def get_content(ctx: Ctx) -> Response:
    repo = ctx.repo()
    ref = ctx.params.get("ref") or repo.default_branch
    commit = repo.resolve(ref)
    if commit is None:
        raise ApiError(404, f"No commit found for the ref {ref}")
    path = ctx.params.get("path", "").strip("/")
    entry = commit.files.get(path)
    raw = "raw" in ctx.request.headers.get("accept", "")
    if entry is not None:
        data = repo.store.blobs.get(entry.sha, b"")
        if raw:
            return Response(data, media_type="application/vnd.github.raw")
        kind = {LINK_MODE: "symlink", SUBMODULE_MODE: "submodule"}.get(entry.mode, "file")
        return json_response(ctx.shapes.content_file(repo, path, entry.sha, data, ref, kind))
    prefix = f"{path}/" if path else ""
    children: dict[str, tuple[str, str, int]] = {}
    for file_path, file_entry in commit.files.items():
        if not file_path.startswith(prefix):
            continue
        name, sep, _ = file_path[len(prefix) :].partition("/")
        if sep:
            children.setdefault(name, ("dir", _subtree_sha(repo, commit, prefix + name), 0))
        else:
            size = len(repo.store.blobs.get(file_entry.sha, b""))
            children[name] = ("file", file_entry.sha, size)
    if not children:
        raise not_found()
    listing = [
        ctx.shapes.content_entry(repo, prefix + name, kind, sha, size, ref)
        for name, (kind, sha, size) in sorted(children.items())
    ]
    return json_response(listing)


def _subtree_sha(repo: Repository, commit: Commit, path: str) -> str:
    tree = commit.tree
    for part in path.split("/"):
        found = next(
            (e for e in repo.store.trees.get(tree, []) if e.name == part and e.mode == TREE_MODE), None
        )
        if found is None:
            return ""
        tree = found.sha
    return tree


@handles("git/get-blob")
def get_blob(ctx: Ctx) -> Response:
    repo = ctx.repo()
    sha = ctx.params["file_sha"]
    data = repo.store.blobs.get(sha)
    if data is None:
        raise not_found()
    return json_response(ctx.shapes.blob(repo, sha, data))


@handles("git/get-tree")
def get_tree(ctx: Ctx) -> Response:
    repo = ctx.repo()
    wanted = ctx.params["tree_sha"]
    sha = wanted if wanted in repo.store.trees else None
    if sha is None:
        commit = repo.resolve(wanted)
        sha = commit.tree if commit else None
    if sha is None:
        raise not_found()
    recursive = ctx.request.query_params.get("recursive") not in (None, "", "0", "false")
    api = ctx.shapes.repo_url(repo)
    entries: list[dict[str, Any]] = []

    def walk(tree_sha: str, prefix: str) -> None:
        for entry in repo.store.trees.get(tree_sha, []):
            path = prefix + entry.name
            item: dict[str, Any] = {
                "path": path,
                "mode": entry.mode.zfill(6),
                "type": entry.kind,
                "sha": entry.sha,
            }
            if entry.kind == "blob":
                item["size"] = len(repo.store.blobs.get(entry.sha, b""))
                item["url"] = f"{api}/git/blobs/{entry.sha}"
            elif entry.kind == "tree":
                item["url"] = f"{api}/git/trees/{entry.sha}"
            entries.append(item)
            if recursive and entry.kind == "tree":
                walk(entry.sha, path + "/")

    walk(sha, "")
    return json_response({"sha": sha, "url": f"{api}/git/trees/{sha}", "tree": entries, "truncated": False})


@handles("repos/compare-commits-with-basehead")
def compare(ctx: Ctx) -> Response:
    repo = ctx.repo()
    base_name, sep, head_name = str(ctx.params["basehead"]).partition("...")
    if not sep:
        raise not_found()
    base, head = repo.resolve(base_name), repo.resolve(head_name.split(":")[-1])
    if base is None or head is None:
        raise not_found()
    store = repo.store
    merge_base_sha = store.merge_base(base.sha, head.sha)
    if merge_base_sha is None:
        raise ApiError(404, f"No common ancestor between {base_name} and {head_name}.")
    merge_base = store.commits[merge_base_sha]
    head_side, base_side = store.ancestors(head.sha), store.ancestors(base.sha)
    ahead = [s for s in head_side if s not in set(base_side)]
    behind = [s for s in base_side if s not in set(head_side)]
    status = (
        "identical"
        if base.sha == head.sha
        else "ahead"
        if not behind
        else "behind"
        if not ahead
        else "diverged"
    )
    ahead.reverse()
    html = f"{ctx.shapes.html(repo)}/compare/{base_name}...{head_name}"
    owner = repo.owner.login
    per_page = ctx.params.get("per_page", 250)
    page = ctx.params.get("page", 1)
    shown = ahead[(page - 1) * per_page : page * per_page]
    files = diff_commits(store, merge_base, head)
    return json_response(
        {
            "url": f"{ctx.shapes.repo_url(repo)}/compare/{base_name}...{head_name}",
            "html_url": html,
            "permalink_url": f"{html.rsplit('/', 1)[0]}/{owner}:{base.sha[:7]}...{owner}:{head.sha[:7]}",
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "base_commit": ctx.shapes.commit(repo, base),
            "merge_base_commit": ctx.shapes.commit(repo, merge_base),
            "status": status,
            "ahead_by": len(ahead),
            "behind_by": len(behind),
            "total_commits": len(ahead),
            "commits": [ctx.shapes.commit(repo, store.commits[s]) for s in shown],
            "files": [ctx.shapes.diff_entry(repo, head.sha, f) for f in files],
        }
    )


def pull_of(ctx: Ctx) -> tuple[Repository, PullRequest]:
    repo = ctx.repo()
    pull = ctx.state.pull(repo, ctx.int_param("pull_number"))
    if pull is None:
        raise not_found()
    return repo, pull


@handles("pulls/get")
def get_pull(ctx: Ctx) -> Response:
    _, pull = pull_of(ctx)
    return json_response(ctx.shapes.pull(pull))


@handles("pulls/list-files")
def list_pull_files(ctx: Ctx) -> Response:
    repo, pull = pull_of(ctx)
    files = [ctx.shapes.diff_entry(repo, pull.head_sha, f) for f in pull.files()]
    return paginate(ctx, files[:3000])
