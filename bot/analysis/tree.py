"""Read-only views of a repository at one revision: the only way the analysis reads files."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol, runtime_checkable

from config.globs import glob_matcher


class TreeError(Exception):
    """A revision or repository cannot be read (unknown revision, not a git repository)."""


@runtime_checkable
class Tree(Protocol):
    """A snapshot of a repository: paths are POSIX, relative to the repository root."""

    @property
    def rev(self) -> str | None:
        """The full commit SHA this tree shows, or None for a working folder."""

    def read(self, path: str) -> bytes | None:
        """The file's bytes, or None when there is no such regular file."""

    def list(self, pattern: str) -> list[str]:
        """Sorted paths of regular files matching a glob (``**`` spans folders)."""

    def blob_id(self, path: str) -> str | None:
        """A content identity (git blob SHA-1), or None when there is no such file."""

    def size(self, path: str) -> int | None:
        """The file's size in bytes, or None when there is no such file."""


def match(pattern: str, path: str) -> bool:
    """Whether a repository path matches a glob (:mod:`config.globs`: ``**/`` spans folders,
    ``*`` and ``?`` stay within one segment, ``[...]`` is a class). Never raises: an invalid
    glob (``[z-a]``) matches only the path spelled as it is."""
    return glob_matcher(pattern)(path) is not None


def git_blob_id(data: bytes) -> str:
    """The git blob SHA-1 of some bytes, as ``git hash-object`` prints it."""
    import hashlib  # here: loading OpenSSL would add 2 ms to every start

    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True, slots=True)
class _Entry:
    blob: str
    size: int  # MISSING when the repository does not have the blob


MISSING = -1  # the size of a file whose content the repository does not have


class GitRepository:
    """One git repository (bare or not), read through a single ``git cat-file --batch``.

    A forked child (see :mod:`bot.analysis.pool`) reads through a ``cat-file`` of its
    own: the parent's process and lock stay the parent's.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise TreeError(f"not a folder: {self.path}")
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def _own(self) -> None:
        """In a forked child, forget the parent's reader (without touching it)."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._proc = None
            self._lock = threading.Lock()

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args],
            capture_output=True,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
        if check and proc.returncode != 0:
            message = proc.stderr.decode(errors="replace").strip().splitlines()
            raise TreeError(message[-1] if message else f"git {args[0]} failed")
        return proc

    def resolve(self, rev: str) -> str:
        """The full SHA of a commit-ish, or TreeError naming the revision."""
        proc = self._git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}",
                         check=False)
        if proc.returncode != 0:
            if b"not a git repository" in proc.stderr:
                raise TreeError(f"not a git repository: {self.path}")
            raise TreeError(f"unknown revision: {rev}")
        return proc.stdout.decode().strip()

    def merge_base(self, a: str, b: str) -> str | None:
        """The best common ancestor of two commit-ishes (what a PR of ``b`` into ``a`` is
        diffed from), or None when they share no history."""
        first, second = self.resolve(a), self.resolve(b)
        proc = self._git("merge-base", first, second, check=False)
        found = proc.stdout.decode().strip()
        return found if proc.returncode == 0 and found else None

    def added(self, rev: str, path: str, text: str) -> tuple[str, str] | None:
        """The newest commit up to ``rev`` that changed how often ``text`` occurs in a file
        (followed across renames), with its committer date: for a text still there, the one
        that added it. None when history does not say (a shallow clone, an unknown path)."""
        proc = self._git("log", "-1", "--format=%H %cI", f"-S{text}", "--follow", rev, "--", path,
                         check=False)
        line = proc.stdout.decode(errors="replace").strip()
        if proc.returncode != 0 or " " not in line:
            return None
        sha, date = line.split(" ", 1)
        return sha, date

    def tree(self, rev: str) -> GitTree:
        """The tree of a commit-ish."""
        return GitTree(self, self.resolve(rev))

    def entries(self, sha: str) -> dict[str, _Entry]:
        """Every regular file of a commit: path to blob id and size (one ``git ls-tree``)."""
        out = self._git("ls-tree", "-r", "-l", "-z", "--full-tree", sha).stdout
        entries: dict[str, _Entry] = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, name = record.partition(b"\t")
            mode, kind, blob, size = meta.split()
            if kind != b"blob" or mode == b"120000":  # submodules and symbolic links
                continue
            # a blob the repository does not have (a partial or damaged copy) has no size:
            # git writes `-` or `BAD`; reading it then fails and the file is unreadable
            entries[name.decode("utf-8", errors="surrogateescape")] = _Entry(
                blob.decode(), int(size) if size.isdigit() else MISSING
            )
        return entries

    def _batch(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                ["git", "-C", str(self.path), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        return self._proc

    def blob(self, blob: str) -> bytes | None:
        """The bytes of a blob, through the long-lived ``cat-file --batch`` process."""
        self._own()
        with self._lock:
            proc = self._batch()
            stdin: IO[bytes] | None = proc.stdin
            stdout: IO[bytes] | None = proc.stdout
            assert stdin is not None and stdout is not None
            stdin.write(blob.encode() + b"\n")
            stdin.flush()
            header = stdout.readline().split()
            if len(header) != 3:  # "<sha> missing"
                return None
            size = int(header[2])
            data = stdout.read(size)
            stdout.read(1)  # the newline after the contents
            return data

    def stream_blobs(self, ids: list[str], chunk: int = 64) -> Iterator[tuple[str, bytes]]:
        """Many blobs, in order, from a ``cat-file`` process of their own (so a reader thread
        can run it while the caller reads other files through :meth:`blob`).

        Requests go out a chunk at a time: a chunk of requests fits the pipe, so writing it
        never waits on ``cat-file``, which may block on its output until the chunk is read.
        """
        proc = subprocess.Popen(
            ["git", "-C", str(self.path), "cat-file", "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        stdin, stdout = proc.stdin, proc.stdout
        assert stdin is not None and stdout is not None
        try:
            for start in range(0, len(ids), chunk):
                part = ids[start : start + chunk]
                stdin.write(b"".join(i.encode() + b"\n" for i in part))
                stdin.flush()
                for blob in part:
                    header = stdout.readline().split()
                    if len(header) != 3:
                        continue
                    data = stdout.read(int(header[2]))
                    stdout.read(1)
                    yield blob, data
        finally:
            stdin.close()
            proc.wait()
            stdout.close()

    def close(self) -> None:
        """Stop the ``cat-file`` process."""
        self._own()
        with self._lock:
            if self._proc is not None:
                stdin, stdout = self._proc.stdin, self._proc.stdout
                assert stdin is not None and stdout is not None  # _batch always opens both pipes
                stdin.close()
                self._proc.wait()
                stdout.close()
                self._proc = None

    def __enter__(self) -> GitRepository:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class GitTree:
    """A commit of a :class:`GitRepository`; the file list is read once, lazily."""

    forkable = True  # see GitRepository

    def __init__(self, repo: GitRepository, sha: str) -> None:
        self.repo = repo
        self._sha = sha
        self._entries: dict[str, _Entry] | None = None

    @property
    def rev(self) -> str:
        return self._sha

    @property
    def _files(self) -> dict[str, _Entry]:
        if self._entries is None:
            self._entries = self.repo.entries(self._sha)
        return self._entries

    def read(self, path: str) -> bytes | None:
        entry = self._files.get(path)
        return None if entry is None else self.repo.blob(entry.blob)

    def stream(self, paths: list[str]) -> Iterator[tuple[str, bytes]]:
        """Several files' bytes, fetched in one pipelined exchange."""
        files = self._files
        by_id: dict[str, list[str]] = {}
        for p in paths:
            if p in files:
                by_id.setdefault(files[p].blob, []).append(p)
        for blob, data in self.repo.stream_blobs(list(by_id)):
            for p in by_id[blob]:
                yield p, data

    def list(self, pattern: str) -> list[str]:
        matches = glob_matcher(pattern)
        return sorted(p for p in self._files if matches(p) is not None)

    def listing(self) -> dict[str, tuple[str, int]]:
        """Every regular file: its blob id and size (``MISSING`` when the repository does not
        have the blob)."""
        return {p: (e.blob, e.size) for p, e in self._files.items()}

    def blob_id(self, path: str) -> str | None:
        entry = self._files.get(path)
        return None if entry is None else entry.blob

    def size(self, path: str) -> int | None:
        entry = self._files.get(path)
        return None if entry is None else entry.size


class FolderTree:
    """A plain folder (a working copy, say); ``.git`` and other VCS folders are skipped."""

    SKIP = frozenset({".git", ".hg", ".svn", ".venv", "__pycache__", "node_modules"})
    forkable = True  # plain files: a forked child reads them as well as the parent

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise TreeError(f"not a folder: {self.root}")
        self._paths: list[str] | None = None
        self._ids: dict[str, str] = {}

    @property
    def rev(self) -> None:
        return None

    def _walk(self) -> Iterator[str]:
        for folder, dirs, files in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if d not in self.SKIP)
            rel = os.path.relpath(folder, self.root)
            for name in files:
                full = os.path.join(folder, name)
                if os.path.isfile(full) and not os.path.islink(full):
                    yield name if rel == "." else f"{rel}/{name}".replace(os.sep, "/")

    @property
    def _all(self) -> list[str]:
        if self._paths is None:
            self._paths = sorted(self._walk())
        return self._paths

    def _file(self, path: str) -> Path | None:
        if path.startswith("/") or ".." in path.split("/"):
            return None
        full = self.root / path
        if full.is_symlink() or not full.is_file():
            return None
        return full

    def read(self, path: str) -> bytes | None:
        full = self._file(path)
        return None if full is None else full.read_bytes()

    def list(self, pattern: str) -> list[str]:
        matches = glob_matcher(pattern)
        return [p for p in self._all if matches(p)]

    def blob_id(self, path: str) -> str | None:
        if path not in self._ids:
            data = self.read(path)
            if data is None:
                return None
            self._ids[path] = git_blob_id(data)
        return self._ids[path]

    def size(self, path: str) -> int | None:
        full = self._file(path)
        return None if full is None else full.stat().st_size


def changed_paths(base: Tree, head: Tree, candidates: list[str] | None = None) -> set[str]:
    """Paths added, removed or modified between two trees.

    For two commits of one git repository this compares the ``ls-tree`` listings (no file
    is read); otherwise it compares content identities path by path.
    """
    if isinstance(base, GitTree) and isinstance(head, GitTree) and base.repo is head.repo:
        a, b = base._files, head._files
        return {p for p in a.keys() | b.keys() if (a.get(p) or _NONE).blob != (b.get(p) or _NONE).blob}
    paths = candidates if candidates is not None else sorted(set(base.list("**")) | set(head.list("**")))
    return {p for p in paths if base.blob_id(p) != head.blob_id(p)}


_NONE = _Entry("", -1)
