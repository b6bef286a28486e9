"""File diffs between two commits the way the PR files and compare endpoints report them."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from ghsim.objects import Commit, ObjectStore

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class DiffLine:
    """One line of a patch after the first hunk header, numbered as review ``position``s count."""

    kind: str  # " ", "+", "-" or "@" (a later hunk header)
    old: int | None
    new: int | None
    hunk_start: int  # index into the patch lines of this line's hunk header


@dataclass
class FileDiff:
    """One changed file."""

    filename: str
    status: str  # added, removed, modified, renamed, changed
    sha: str
    previous_filename: str | None = None
    additions: int = 0
    deletions: int = 0
    patch: str | None = None
    lines: list[DiffLine] = field(default_factory=list)

    @property
    def changes(self) -> int:
        return self.additions + self.deletions

    def commentable(self, side: str) -> set[int]:
        """Line numbers a review comment may target on ``side`` (RIGHT: new file, LEFT: old file)."""
        if side == "LEFT":
            return {d.old for d in self.lines if d.kind in " -" and d.old is not None}
        return {d.new for d in self.lines if d.kind in " +" and d.new is not None}

    def hunk_of(self, side: str, line: int) -> int | None:
        for d in self.lines:
            number = d.old if side == "LEFT" else d.new
            if d.kind != "@" and number == line and d.kind in (" -" if side == "LEFT" else " +"):
                return d.hunk_start
        return None

    def position_of(self, side: str, line: int) -> int | None:
        for index, d in enumerate(self.lines, start=1):
            number = d.old if side == "LEFT" else d.new
            if d.kind in (" -" if side == "LEFT" else " +") and number == line:
                return index
        return None

    def diff_hunk(self, position: int) -> str:
        """The patch text from the enclosing hunk header down to ``position``."""
        if not self.patch or position < 1 or position > len(self.lines):
            return ""
        patch_lines = self.patch.split("\n")
        start = self.lines[position - 1].hunk_start
        return "\n".join(patch_lines[start : position + 1])


def is_binary(data: bytes) -> bool:
    if b"\0" in data[:8000]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _patch(old: bytes, new: bytes, diff: FileDiff) -> None:
    if is_binary(old) or is_binary(new):
        return
    old_lines, new_lines = old.decode().splitlines(), new.decode().splitlines()
    body = list(difflib.unified_diff(old_lines, new_lines, n=3, lineterm=""))[2:]
    if not body:
        return
    lines: list[DiffLine] = []
    old_no = new_no = 0
    hunk_start = 0
    for index, text in enumerate(body):
        match = _HUNK.match(text)
        if match:
            old_no, new_no, hunk_start = int(match.group(1)), int(match.group(3)), index
            if int(match.group(2) or 1) == 0:
                old_no += 1
            if int(match.group(4) or 1) == 0:
                new_no += 1
            if index:
                lines.append(DiffLine("@", None, None, hunk_start))
            continue
        kind = text[:1]
        if kind == "+":
            lines.append(DiffLine("+", None, new_no, hunk_start))
            new_no += 1
            diff.additions += 1
        elif kind == "-":
            lines.append(DiffLine("-", old_no, None, hunk_start))
            old_no += 1
            diff.deletions += 1
        else:
            lines.append(DiffLine(" ", old_no, new_no, hunk_start))
            old_no += 1
            new_no += 1
    diff.patch = "\n".join(body)
    diff.lines = lines


def diff_commits(store: ObjectStore, base: Commit | None, head: Commit) -> list[FileDiff]:
    """Changed files from ``base`` to ``head``, sorted by path, exact renames detected."""
    old_files = base.files if base else {}
    new_files = head.files
    removed = {p: e for p, e in old_files.items() if p not in new_files}
    added = {p: e for p, e in new_files.items() if p not in old_files}
    renamed_from: dict[str, str] = {}
    by_sha = {e.sha: p for p, e in sorted(removed.items())}
    for path, entry in sorted(added.items()):
        source = by_sha.pop(entry.sha, None)
        if source is not None:
            renamed_from[path] = source
    diffs: list[FileDiff] = []
    for path in sorted(set(old_files) | set(new_files)):
        old, new = old_files.get(path), new_files.get(path)
        if path in renamed_from:
            diffs.append(FileDiff(path, "renamed", new.sha if new else "", renamed_from[path]))
            continue
        if old is not None and new is None and path in renamed_from.values():
            continue
        if old == new:
            continue
        if old is None and new is not None:
            diff = FileDiff(path, "added", new.sha)
            _patch(b"", store.blobs.get(new.sha, b""), diff)
        elif new is None and old is not None:
            diff = FileDiff(path, "removed", old.sha)
            _patch(store.blobs.get(old.sha, b""), b"", diff)
        elif old is not None and new is not None and old.sha == new.sha:
            diff = FileDiff(path, "changed", new.sha)
        else:
            assert old is not None and new is not None
            diff = FileDiff(path, "modified", new.sha)
            _patch(store.blobs.get(old.sha, b""), store.blobs.get(new.sha, b""), diff)
        diffs.append(diff)
    return diffs
