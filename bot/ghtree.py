"""A commit on GitHub as an analysis `Tree`: one listing request, contents in GraphQL batches."""

from __future__ import annotations

from bot.analysis.tree import glob_regex
from bot.port import BlobRequest, GitHubPort


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
            self._listing = self.port.tree(self.repo, self.sha)
        return self._listing

    def fetch(self, paths: list[str], *, also: GitHubTree | None = None) -> None:
        """Read many files in as few requests as the port allows; with ``also``, the same
        paths of another commit of the same repository in the same requests."""
        also = also or self.pair
        trees = [self] if also is None else [self, also]
        wanted = [
            BlobRequest(t.sha, p)
            for t in trees
            for p in paths
            if p not in t._data and t.blob_id(p) is not None
        ]
        if not wanted:
            return
        found = self.port.blobs(self.repo, wanted)
        for t in trees:
            for p in paths:
                request = BlobRequest(t.sha, p)
                if request in found:
                    t._data[p] = found[request]

    def read(self, path: str) -> bytes | None:
        if path not in self._data:
            if self.blob_id(path) is None:
                return None
            self.fetch([path])
        return self._data.get(path)

    def list(self, pattern: str) -> list[str]:
        regex = glob_regex(pattern)
        return sorted(p for p in self._files if regex.match(p))

    def blob_id(self, path: str) -> str | None:
        entry = self._files.get(path)
        return None if entry is None else entry[0]

    def size(self, path: str) -> int | None:
        entry = self._files.get(path)
        return None if entry is None else entry[1]
