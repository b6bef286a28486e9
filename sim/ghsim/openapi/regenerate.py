"""Rewrite the vendored OpenAPI subset from the npm package `@octokit/openapi`.

Usage: ``python sim/ghsim/openapi/regenerate.py [--version 23.0.2] [--tarball FILE]``.

Fetches the package with ``npm pack`` (or reads a tarball already on disk), keeps only the operations
the simulator serves and the components they reference, drops examples and long operation prose, and
writes ``api.github.com.json`` and ``LICENSE`` beside this script. The output is deterministic: sorted
keys, one-space indent, a trailing newline.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

PACKAGE = "@octokit/openapi"
VERSION = "23.0.2"
SOURCE = "package/generated/api.github.com.json"
HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "api.github.com.json"

# (method, path template) as in GitHub's description; the simulator serves exactly these.
OPERATIONS: tuple[tuple[str, str], ...] = (
    ("get", "/app"),
    ("get", "/app/installations"),
    ("get", "/app/installations/{installation_id}"),
    ("post", "/app/installations/{installation_id}/access_tokens"),
    ("get", "/app/hook/deliveries"),
    ("get", "/app/hook/deliveries/{delivery_id}"),
    ("post", "/app/hook/deliveries/{delivery_id}/attempts"),
    ("get", "/rate_limit"),
    ("get", "/repos/{owner}/{repo}"),
    ("get", "/repos/{owner}/{repo}/installation"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/files"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    ("post", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments"),
    ("get", "/repos/{owner}/{repo}/contents/{path}"),
    ("get", "/repos/{owner}/{repo}/git/blobs/{file_sha}"),
    ("get", "/repos/{owner}/{repo}/git/trees/{tree_sha}"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}"),
    ("get", "/repos/{owner}/{repo}/compare/{basehead}"),
    ("get", "/repos/{owner}/{repo}/issues"),
    ("post", "/repos/{owner}/{repo}/issues"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("patch", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
    ("delete", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("get", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("get", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"),
    ("post", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"),
    ("post", "/repos/{owner}/{repo}/check-runs"),
    ("get", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("get", "/repos/{owner}/{repo}/check-runs/{check_run_id}/annotations"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}/check-runs"),
    ("get", "/repos/{owner}/{repo}/actions/workflows"),
    ("get", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}"),
    ("post", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"),
    ("get", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs"),
    ("get", "/repos/{owner}/{repo}/actions/runs"),
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}"),
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs"),
    ("post", "/repos/{owner}/{repo}/actions/runs/{run_id}/cancel"),
    ("get", "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs"),
    ("get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("get", "/orgs/{org}/teams/{team_slug}/memberships/{username}"),
)

# Operation keys kept; the rest (long descriptions, examples, docs links, breaking-change patches) go.
_OPERATION_KEYS = ("operationId", "summary", "parameters", "requestBody", "responses")
_DROPPED_ANYWHERE = ("examples", "example")


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k not in _DROPPED_ANYWHERE}
    if isinstance(node, list):
        return [_strip(item) for item in node]
    return node


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref)
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for item in node:
            found |= _refs(item)
    return found


def trim(spec: dict[str, Any], version: str) -> dict[str, Any]:
    """Return the subset of ``spec`` holding OPERATIONS and every component they reach."""
    paths: dict[str, dict[str, Any]] = {}
    for method, template in OPERATIONS:
        operation = spec["paths"][template][method]
        kept = {k: operation[k] for k in _OPERATION_KEYS if k in operation}
        paths.setdefault(template, {})[method] = _strip(kept)
    components: dict[str, dict[str, Any]] = {}
    pending = sorted(_refs(paths))
    seen: set[str] = set()
    while pending:
        ref = pending.pop()
        if ref in seen:
            continue
        seen.add(ref)
        _, _, kind, name = ref.split("/", 3)
        if kind == "examples":
            continue
        value = _strip(spec["components"][kind][name])
        components.setdefault(kind, {})[name] = value
        pending.extend(sorted(_refs(value) - seen))
    info = {
        "title": spec["info"]["title"],
        "version": spec["info"]["version"],
        "license": spec["info"].get("license"),
        "x-ghsim-source": f"{PACKAGE}@{version} {SOURCE}, trimmed by ghsim/openapi/regenerate.py",
    }
    return {"openapi": spec["openapi"], "info": info, "paths": paths, "components": components}


def _fetch(version: str, workdir: Path) -> Path:
    proc = subprocess.run(
        ["npm", "pack", f"{PACKAGE}@{version}", "--pack-destination", str(workdir), "--silent"],
        capture_output=True,
        text=True,
        check=True,
    )
    return workdir / proc.stdout.strip().splitlines()[-1]


def _member(tarball: Path, name: str) -> bytes:
    with tarfile.open(tarball, "r:gz") as archive:
        handle = archive.extractfile(name)
        if handle is None:
            raise SystemExit(f"{name} missing from {tarball}")
        return handle.read()


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` deterministically."""
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=VERSION)
    parser.add_argument("--tarball", type=Path, help="use this npm tarball instead of running npm pack")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tarball = args.tarball or _fetch(args.version, Path(tmp))
        spec = json.loads(_member(tarball, SOURCE))
        licence = _member(tarball, "package/LICENSE")
    write_json(OUTPUT, trim(spec, args.version))
    (HERE / "LICENSE").write_bytes(licence)
    sys.stderr.write(f"wrote {OUTPUT} ({OUTPUT.stat().st_size} bytes)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
