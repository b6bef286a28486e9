"""A commit on GitHub as an analysis `Tree`: one listing request, contents in GraphQL batches.

A PR's base need not be listed at all: :meth:`GitHubTree.before` describes it as the head
without the PR's changes. The files the PR changes are read at the base commit; every other
file is the head's, listing and contents alike, which is what the PR leaves unchanged.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable

from bot.analysis.tree import git_blob_id
from bot.github.port import Batch, BlobRequest, ChangedFile, GitHubPort
from config.globs import glob_matcher


class GitHubTree:
    """Reads a commit through the port. The listing is fetched once, on first need; contents
    are fetched in batches by :meth:`fetch` (what the analysis prefetches) or one by one."""

    def __init__(self, port: GitHubPort, repo: str, sha: str) -> None:
        self.port = port
        self.repo = repo
        self.sha = sha
        self._listing: dict[str, tuple[str, int]] | None = None
        self._data: dict[str, bytes | None] = {}
        self.pair: GitHubTree | None = None
        self._after: GitHubTree | None = None  # set on a base described by its PR's head
        self._changed: frozenset[str] = frozenset()

    @classmethod
    def before(cls, head: GitHubTree, sha: str, files: Iterable[ChangedFile]) -> GitHubTree:
        """The base ``sha`` of a PR whose head is ``head`` and whose changed files are ``files``:
        only those are read at ``sha``, and the two trees are read in the same requests."""
        base = cls(head.port, head.repo, sha)
        changed: set[str] = set()
        for f in files:
            changed.add(f.path)
            if f.previous_path:
                changed.add(f.previous_path)
        base._after, base._changed = head, frozenset(changed)
        head.pair_with(base)
        return base

    def pair_with(self, other: GitHubTree) -> None:
        """Read the same paths of both commits in the same requests: an analysis of a PR reads
        much the same files at its base and its head."""
        self.pair, other.pair = other, self

    @property
    def rev(self) -> str:
        return self.sha

    @property
    def _files(self) -> dict[str, tuple[str, int]]:
        if self._listing is None:
            if self._after is None:
                self._listing = self.port.tree(self.repo, self.sha)
            else:
                self._listing = self._derived_listing()
        return self._listing

    def _derived_listing(self) -> dict[str, tuple[str, int]]:
        assert self._after is not None
        listing = {p: e for p, e in self._after._files.items() if p not in self._changed}
        self.fetch(sorted(self._changed))
        for path in self._changed:
            data = self._data.get(path)
            if data is not None:
                listing[path] = (git_blob_id(data), len(data))
        return listing

    def _requests(self, paths: Iterable[str]) -> list[BlobRequest]:
        """What reading ``paths`` asks GitHub for: nothing known already, and at a base
        described by its head only the changed files (the rest are the head's)."""
        if self._after is not None:
            wanted = [p for p in paths if p in self._changed and p not in self._data]
        else:
            wanted = [p for p in paths if p not in self._data and self.blob_id(p) is not None]
        return [BlobRequest(self.sha, p) for p in wanted]

    def _keep(self, batch: Batch, paths: Iterable[str]) -> None:
        for p in paths:
            request = BlobRequest(self.sha, p)
            if request in batch.blobs:
                self._data[p] = batch.blobs[request]

    def fetch(self, paths: list[str], *, also: GitHubTree | None = None) -> None:
        """Read many files in as few requests as the port allows; with ``also``, the same
        paths of another commit of the same repository in the same requests."""
        read_together(self, paths, also=also)

    def read(self, path: str) -> bytes | None:
        if self._after is not None and path not in self._changed:
            return self._after.read(path)
        if path not in self._data:
            if self._after is None and self.blob_id(path) is None:
                return None
            self.fetch([path])
        return self._data.get(path)

    def list(self, pattern: str) -> list[str]:
        matches = glob_matcher(pattern)
        return sorted(p for p in self._files if matches(p) is not None)

    def blob_id(self, path: str) -> str | None:
        entry = self._files.get(path)
        return None if entry is None else entry[0]

    def size(self, path: str) -> int | None:
        entry = self._files.get(path)
        return None if entry is None else entry[1]


def read_together(
    tree: GitHubTree,
    paths: list[str],
    *,
    also: GitHubTree | None = None,
    extra: list[BlobRequest] | None = None,
    pull: int | None = None,
) -> Batch:
    """Read ``paths`` of ``tree`` and of its pair (or ``also``) in as few requests as the port
    allows; ``extra`` files (of other commits) and the PR ``pull`` ride along in the same
    requests, and come back in the answer."""
    other = also or tree.pair
    trees = [tree] if other is None else [tree, other]
    wanted = [w for t in trees for w in t._requests(paths)]
    if not wanted and not extra and pull is None:
        return Batch({})
    batch = tree.port.read_batch(tree.repo, [*wanted, *(extra or [])], pull=pull)
    for t in trees:
        t._keep(batch, paths)
    return batch


def likely_reads(
    head: GitHubTree, changed: Iterable[str], is_test: Callable[[str], bool], model_script: str,
    *, limit: int = 40,
) -> list[str]:
    """Files an analysis of the changed tests will read after them, so that they can come in
    the same request: the package ``__init__.py`` of each folder up to the root and the other
    Python modules beside each changed test (where harness modules live), then the model
    scripts. Guessing wrong costs bytes, never a result: what is missed is read when needed."""
    files = head._files
    out: dict[str, None] = {}
    folders = {posixpath.dirname(p) for p in changed if p.endswith(".py")}
    for start in sorted(folders):
        folder = start
        while folder:
            if f"{folder}/__init__.py" in files:
                out[f"{folder}/__init__.py"] = None
            folder = posixpath.dirname(folder)
    for path in sorted(files):
        if posixpath.dirname(path) in folders and path.endswith(".py") and not is_test(path):
            out[path] = None
    models = glob_matcher(re.sub(r"\{[^}]*\}", "*", model_script))
    out.update(dict.fromkeys(p for p in sorted(files) if models(p) is not None))
    return list(out)[:limit]
