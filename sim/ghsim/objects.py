"""Git objects for the simulator: blobs, trees and commits with git's own SHAs, from dicts or git."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

FILE_MODE, EXEC_MODE, LINK_MODE, SUBMODULE_MODE, TREE_MODE = "100644", "100755", "120000", "160000", "40000"


@dataclass(frozen=True)
class Signature:
    """An author or committer line."""

    name: str
    email: str
    date: datetime

    def git_line(self) -> str:
        stamp = int(self.date.timestamp())
        return f"{self.name} <{self.email}> {stamp} +0000"


@dataclass(frozen=True)
class Entry:
    """One file of a commit: its mode and blob SHA."""

    mode: str
    sha: str


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a tree object."""

    mode: str
    name: str
    sha: str

    @property
    def kind(self) -> str:
        return {TREE_MODE: "tree", SUBMODULE_MODE: "commit"}.get(self.mode, "blob")


@dataclass
class Commit:
    """A commit with its flattened file list."""

    sha: str
    tree: str
    parents: tuple[str, ...]
    message: str
    author: Signature
    committer: Signature
    files: dict[str, Entry] = field(default_factory=dict)


DEFAULT_SIGNATURE = Signature("Octo Cat", "octocat@example.invalid", datetime(2026, 1, 1, tzinfo=UTC))


def _hash(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data, usedforsecurity=False).hexdigest()


def blob_sha(data: bytes) -> str:
    """The git SHA of a blob holding ``data``."""
    return _hash("blob", data)


def _tree_sort_key(entry: TreeEntry) -> bytes:
    name = entry.name.encode()
    return name + b"/" if entry.mode == TREE_MODE else name


class ObjectStore:
    """Blobs, trees and commits of one repository network (a repository and its forks share one)."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.trees: dict[str, list[TreeEntry]] = {}
        self.commits: dict[str, Commit] = {}

    # -- writing ---------------------------------------------------------------------------------
    def add_blob(self, data: bytes) -> str:
        sha = blob_sha(data)
        self.blobs[sha] = data
        return sha

    def write_tree(self, files: Mapping[str, Entry]) -> str:
        """Store the nested trees for ``files`` and return the root tree SHA."""
        children: dict[str, dict[str, Entry]] = {}
        entries: list[TreeEntry] = []
        for path, entry in files.items():
            head, sep, rest = path.partition("/")
            if sep:
                children.setdefault(head, {})[rest] = entry
            else:
                entries.append(TreeEntry(entry.mode, head, entry.sha))
        for name, sub in children.items():
            entries.append(TreeEntry(TREE_MODE, name, self.write_tree(sub)))
        entries.sort(key=_tree_sort_key)
        data = b"".join(f"{e.mode} {e.name}\0".encode() + bytes.fromhex(e.sha) for e in entries)
        sha = _hash("tree", data)
        self.trees[sha] = entries
        return sha

    def commit(
        self,
        files: Mapping[str, str | bytes | None],
        *,
        parents: Iterable[str] = (),
        message: str = "change",
        author: Signature = DEFAULT_SIGNATURE,
        base: str | None = None,
    ) -> Commit:
        """A new commit: the files of ``base`` (if any) updated by ``files`` (``None`` deletes)."""
        tree_files = dict(self.commits[base].files) if base else {}
        for path, content in files.items():
            if content is None:
                tree_files.pop(path, None)
                continue
            data = content.encode() if isinstance(content, str) else content
            tree_files[path.strip("/")] = Entry(FILE_MODE, self.add_blob(data))
        tree = self.write_tree(tree_files)
        parent_list = tuple(parents)
        text = f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parent_list)
        text += f"author {author.git_line()}\ncommitter {author.git_line()}\n\n{message}\n"
        sha = _hash("commit", text.encode())
        made = Commit(sha, tree, parent_list, message, author, author, tree_files)
        self.commits[sha] = made
        return made

    # -- reading ---------------------------------------------------------------------------------
    def text(self, sha: str) -> bytes:
        return self.blobs[sha]

    def ancestors(self, sha: str) -> list[str]:
        """``sha`` and every commit reachable from it, breadth first."""
        order, seen, queue = [], {sha}, [sha]
        while queue:
            current = queue.pop(0)
            order.append(current)
            commit = self.commits.get(current)
            for parent in commit.parents if commit else ():
                if parent not in seen:
                    seen.add(parent)
                    queue.append(parent)
        return order

    def merge_base(self, base: str, head: str) -> str | None:
        """The nearest common ancestor of ``base`` and ``head`` (``None`` if unrelated)."""
        base_side = set(self.ancestors(base))
        return next((sha for sha in self.ancestors(head) if sha in base_side), None)

    # -- importing -------------------------------------------------------------------------------
    def import_git(self, root: Path, revs: Iterable[str] = ()) -> list[Commit]:
        """Read every commit reachable from ``revs`` (all refs when empty) of the git checkout ``root``."""
        wanted = list(revs) or ["--all"]
        listing = _git(root, "rev-list", "--topo-order", "--reverse", *wanted).split()
        reader = _CatFile(root)
        try:
            imported = [self._import_commit(reader, sha) for sha in listing if sha not in self.commits]
        finally:
            reader.close()
        return imported

    def _import_commit(self, reader: _CatFile, sha: str) -> Commit:
        data = reader.read(sha, "commit").decode("utf-8", "replace")
        header, _, message = data.partition("\n\n")
        tree, parents, people = "", [], {}
        for line in header.splitlines():
            key, _, value = line.partition(" ")
            if key == "tree":
                tree = value
            elif key == "parent":
                parents.append(value)
            elif key in ("author", "committer"):
                people[key] = _parse_signature(value)
        files: dict[str, Entry] = {}
        self._import_tree(reader, tree, "", files)
        made = Commit(
            sha,
            tree,
            tuple(parents),
            message.rstrip("\n"),
            people.get("author", DEFAULT_SIGNATURE),
            people.get("committer", DEFAULT_SIGNATURE),
            files,
        )
        self.commits[sha] = made
        return made

    def _import_tree(self, reader: _CatFile, sha: str, prefix: str, files: dict[str, Entry]) -> None:
        if sha not in self.trees:
            self.trees[sha] = _parse_tree(reader.read(sha, "tree"))
        for entry in self.trees[sha]:
            path = prefix + entry.name
            if entry.mode == TREE_MODE:
                self._import_tree(reader, entry.sha, path + "/", files)
                continue
            if entry.mode != SUBMODULE_MODE and entry.sha not in self.blobs:
                self.blobs[entry.sha] = reader.read(entry.sha, "blob")
            files[path] = Entry(entry.mode, entry.sha)


def _parse_tree(data: bytes) -> list[TreeEntry]:
    entries, pos = [], 0
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        mode, name = data[pos:space].decode(), data[space + 1 : nul].decode("utf-8", "replace")
        entries.append(TreeEntry(mode, name, data[nul + 1 : nul + 21].hex()))
        pos = nul + 21
    return entries


def _parse_signature(value: str) -> Signature:
    name, _, rest = value.partition(" <")
    email, _, stamp = rest.partition("> ")
    seconds = stamp.split(" ")[0]
    when = datetime.fromtimestamp(int(seconds), UTC) if seconds.isdigit() else DEFAULT_SIGNATURE.date
    return Signature(name, email, when)


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True)
    return proc.stdout


def git_refs(root: Path) -> tuple[dict[str, str], dict[str, str], str | None]:
    """Branches and tags (name -> commit SHA) of a checkout, and the branch HEAD points at."""
    branches, tags = {}, {}
    out = _git(
        root, "for-each-ref", "--format=%(refname) %(objectname) %(*objectname)", "refs/heads", "refs/tags"
    )
    for line in out.splitlines():
        ref, sha, *peeled = line.split(" ")
        if ref.startswith("refs/heads/"):
            branches[ref.removeprefix("refs/heads/")] = sha
        else:
            tags[ref.removeprefix("refs/tags/")] = peeled[0] if peeled and peeled[0] else sha
    head = subprocess.run(
        ["git", "-C", str(root), "symbolic-ref", "--quiet", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return branches, tags, head or None


class _CatFile:
    """A long-running ``git cat-file --batch`` reader."""

    def __init__(self, root: Path) -> None:
        self._proc = subprocess.Popen(
            ["git", "-C", str(root), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def read(self, sha: str, kind: str) -> bytes:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(sha.encode() + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().decode().split()
        if len(header) != 3 or header[1] != kind:
            raise ValueError(f"git object {sha}: expected {kind}, got {' '.join(header)}")
        data = self._proc.stdout.read(int(header[2]))
        self._proc.stdout.read(1)
        return data

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
