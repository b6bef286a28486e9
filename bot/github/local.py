"""The GitHub port on a local git repository, with writes recorded instead of sent.

It serves `rocmbot demo`, `rocmbot replay --dry-run` and the service with
``ROCMBOT_LOCAL_REPO``: reads come from the repository's objects, a pull request is a
(base, head) pair of revisions, and every write is appended to ``writes`` so the caller can
show what would have been posted.

A PR's analysis reads a few commits many times over: each revision is resolved once, each
commit listed once (its :class:`GitTree` kept for every later read), the files of one request
read in one exchange with ``git cat-file``, and the PR's patches come from one ``git diff``.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from bot.analysis.tree import GitRepository, GitTree
from bot.github.port import (
    Batch,
    BlobRequest,
    ChangedFile,
    CheckRun,
    Comment,
    Gone,
    InlineComment,
    Issue,
    PullRequest,
    WorkflowJob,
    WorkflowRun,
)

TREES_KEPT = 6  # commits a port keeps listed: a delivery reads 2 or 3 (base, head, default branch)

# the options that fix the shape of `git diff`'s output whatever the repository's configuration
# says: no colour, no external program, no renames, `a/` and `b/` headers, one header a file
_DIFF = ("diff", "--no-color", "--no-ext-diff", "--no-renames", "--submodule=short",
         "--src-prefix=a/", "--dst-prefix=b/")
_FILE_START = re.compile(rb"^(?=diff --git )", re.MULTILINE)  # where a file's part starts


@dataclass
class Write:
    kind: str
    target: str
    payload: dict[str, Any]


@dataclass
class LocalPort:
    """A repository on disk standing in for GitHub; ``prs`` maps a number to (base, head)."""

    repo_path: str
    repo: str = "local/repo"
    prs: dict[int, tuple[str, str]] = field(default_factory=dict)
    author: str = "contributor"
    labels: tuple[str, ...] = ()  # the PR's, as the delivery named them
    default_ref: str = "HEAD"
    permissions: dict[str, str] = field(default_factory=dict)
    writes: list[Write] = field(default_factory=list)
    _comments: dict[int, Comment] = field(default_factory=dict)
    _issues: dict[int, Issue] = field(default_factory=dict)
    _git: GitRepository | None = None
    _revs: dict[str, str] = field(default_factory=dict)  # a revision as named: its commit
    _trees: dict[str, GitTree] = field(default_factory=dict)  # by commit, the last used last

    @property
    def git(self) -> GitRepository:
        if self._git is None:
            self._git = GitRepository(self.repo_path)
        return self._git

    def close(self) -> None:
        if self._git is not None:
            self._git.close()
        self._revs.clear()
        self._trees.clear()

    def refresh(self) -> None:
        """Resolve revisions again from the next read on (a new delivery: the clone's
        branches may have moved since); the commits' listings are kept."""
        self._revs.clear()

    def _resolve(self, rev: str) -> str:
        sha = self._revs.get(rev)
        if sha is None:
            sha = self._revs[rev] = self.git.resolve(rev)
        return sha

    def _tree(self, rev: str) -> GitTree:
        """The commit ``rev`` names, listed at most once while the port keeps it."""
        sha = self._resolve(rev)
        tree = self._trees.pop(sha, None) or GitTree(self.git, sha)
        self._trees[sha] = tree
        while len(self._trees) > TREES_KEPT:
            del self._trees[next(iter(self._trees))]
        return tree

    def _record(self, kind: str, target: str, payload: dict[str, Any]) -> int:
        self.writes.append(Write(kind, target, payload))
        return len(self.writes)

    def pull_request(self, repo: str, number: int) -> PullRequest:
        base, head = self.prs[number]
        return PullRequest(
            repo=repo,
            number=number,
            author=self.author,
            head_sha=self._resolve(head),
            head_ref=head,
            head_repo=repo,
            base_sha=self._resolve(base),
            base_ref=base,
            draft=False,
            state="open",
            labels=self.labels,
        )

    def _diff(self, *args: str) -> bytes:
        return subprocess.run(
            ["git", "-C", self.repo_path, *_DIFF, *args],
            capture_output=True,
            check=True,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        ).stdout

    def pull_files(self, repo: str, number: int, *, expected: int | None = None) -> list[ChangedFile]:
        pr = self.pull_request(repo, number)
        out = self._diff("--name-status", "-z", pr.base_sha, pr.head_sha)
        parts = [p.decode("utf-8", errors="surrogateescape") for p in out.split(b"\0") if p]
        changed = list(zip(parts[::2], parts[1::2], strict=False))
        # the same diff printed as patches: the same files, in the same order
        patches = list(split_diff(self._diff("-U3", pr.base_sha, pr.head_sha)))
        if len(patches) != len(changed):  # not one part a file: ask for each file's own
            patches = [self._file_patch(pr.base_sha, pr.head_sha, path) for _, path in changed]
        head_tree = self._tree(pr.head_sha)
        files = []
        for (status, path), raw in zip(changed, patches, strict=True):
            patch = as_text(raw)
            hunks = patch[patch.find("\n@@") + 1 :] if "\n@@" in patch else None
            files.append(
                ChangedFile(
                    path=path,
                    status={"A": "added", "D": "removed"}.get(status, "modified"),
                    patch=hunks,
                    blob_sha=head_tree.blob_id(path),
                )
            )
        return files

    def _file_patch(self, base: str, head: str, path: str) -> bytes:
        """One file's part of the diff from ``base`` to ``head``."""
        return self._diff("-U3", base, head, "--", f":(literal){path}")

    def tree(self, repo: str, sha: str) -> dict[str, tuple[str, int]]:
        return self._tree(sha).listing()

    def blobs(self, repo: str, wanted: list[BlobRequest]) -> dict[BlobRequest, bytes | None]:
        found: dict[BlobRequest, bytes | None] = dict.fromkeys(wanted)
        by_rev: dict[str, list[str]] = {}
        for w in found:
            by_rev.setdefault(w.sha, []).append(w.path)
        for rev, paths in by_rev.items():
            tree = self._tree(rev)
            if len(paths) == 1:  # through the port's long-lived reader
                found[BlobRequest(rev, paths[0])] = tree.read(paths[0])
                continue
            for path, data in tree.stream(paths):  # one exchange for them all
                found[BlobRequest(rev, path)] = data
        return found

    def read_batch(self, repo: str, wanted: list[BlobRequest], *, pull: int | None = None) -> Batch:
        return Batch(self.blobs(repo, wanted), None if pull is None else self.pull_request(repo, pull))

    def default_branch(self, repo: str) -> str:
        return self.default_ref

    def default_branch_file(self, repo: str, path: str) -> bytes | None:
        return self._tree(self.default_ref).read(path)

    def workflow_file(self, repo: str, path: str) -> bytes | None:
        return self.default_branch_file(repo, path)

    def default_branch_head(self, repo: str) -> tuple[str, str] | None:
        return self.default_ref, self._resolve(self.default_ref)

    def comments(self, repo: str, number: int) -> list[Comment]:
        return list(self._comments.values())

    def create_comment(self, repo: str, number: int, body: str) -> Comment:
        comment = Comment(
            self._record("comment", f"{repo}#{number}", {"body": body}), body, "rocmbot[bot]", True
        )
        self._comments[comment.id] = comment
        return comment

    def edit_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        if comment_id not in self._comments:
            raise Gone(f"comment {comment_id} of {repo}")
        self._record("comment_edit", f"{repo}/comments/{comment_id}", {"body": body})
        comment = Comment(comment_id, body, "rocmbot[bot]", True)
        self._comments[comment_id] = comment
        return comment

    def add_reaction(self, repo: str, comment_id: int, content: str) -> None:
        self._record("reaction", f"{repo}/comments/{comment_id}", {"content": content})

    def issues(self, repo: str) -> list[Issue]:
        return list(reversed(self._issues.values()))

    def create_issue(self, repo: str, title: str, body: str) -> Issue:
        number = self._record("issue", repo, {"title": title, "body": body})
        issue = self._issues[number] = Issue(number, title, body, "open", True)
        return issue

    def edit_issue(self, repo: str, number: int, body: str) -> Issue:
        if number not in self._issues:
            raise Gone(f"issue {number} of {repo}")
        self._record("issue_edit", f"{repo}/issues/{number}", {"body": body})
        issue = self._issues[number] = replace(self._issues[number], body=body)
        return issue

    def review_keys(self, repo: str, number: int) -> list[tuple[str, str]]:
        return [(w.payload["commit_id"], w.payload["body"]) for w in self.writes if w.kind == "review"]

    def create_review(
        self, repo: str, number: int, commit_sha: str, body: str, comments: list[InlineComment]
    ) -> int:
        return self._record(
            "review",
            f"{repo}#{number}",
            {
                "commit_id": commit_sha,
                "body": body,
                "event": "COMMENT",
                "comments": [{"path": c.path, "line": c.line, "body": c.body,
                              **({"start_line": c.start_line} if c.start_line is not None else {})}
                             for c in comments],
            },
        )

    def check_runs(self, repo: str, sha: str, name: str) -> list[CheckRun]:
        return [
            CheckRun(i + 1, name, sha, w.payload.get("status", ""), w.payload.get("conclusion"))
            for i, w in enumerate(self.writes)
            if w.kind == "check_run" and w.payload.get("head_sha") == sha and w.payload.get("name") == name
        ]

    def create_check_run(self, repo: str, payload: dict[str, Any]) -> CheckRun:
        run_id = self._record("check_run", repo, payload)
        return CheckRun(
            run_id,
            payload["name"],
            payload["head_sha"],
            payload.get("status", "queued"),
            payload.get("conclusion"),
        )

    def update_check_run(self, repo: str, check_run_id: int, payload: dict[str, Any]) -> CheckRun:
        self._record("check_run_update", f"{repo}/check-runs/{check_run_id}", payload)
        return CheckRun(
            check_run_id,
            payload.get("name", ""),
            payload.get("head_sha", ""),
            payload.get("status", ""),
            payload.get("conclusion"),
        )

    def permission(self, repo: str, user: str) -> str:
        return self.permissions.get(user, "read")

    def team_member(self, org: str, team: str, user: str) -> bool:
        return False

    def dispatch_workflow(self, repo: str, workflow: str, ref: str, inputs: dict[str, str]) -> int | None:
        self._record("dispatch", f"{repo}/{workflow}", {"ref": ref, "inputs": inputs})
        return None

    def workflow_runs(
        self, repo: str, workflow: str, *, event: str = "workflow_dispatch"
    ) -> list[WorkflowRun]:
        return []

    def workflow_run(self, repo: str, run_id: int) -> WorkflowRun | None:
        return None

    def run_jobs(self, repo: str, run_id: int) -> list[WorkflowJob]:
        return []

    def job_log(self, repo: str, job_id: int, *, limit: int) -> bytes | None:
        return None  # no runs here, so no logs

    def cancel_run(self, repo: str, run_id: int) -> bool:
        self._record("cancel", f"{repo}/runs/{run_id}", {})
        return True


def split_diff(diff: bytes) -> Iterator[bytes]:
    """The parts of a ``git diff`` (made with :data:`_DIFF`), one a changed file, in its
    order. A file whose type changes (a file become a symbolic link) comes as a deletion and an
    addition under the same header: one part. Lines of a hunk start with a space, ``+``, ``-``
    or ``\\``, so a line starting ``diff --git`` is always a file's header."""
    header = part = b""
    for section in _FILE_START.split(diff):
        line = section[: section.find(b"\n")]
        if part and line != header:
            yield part
            part = b""
        header, part = line, part + section
    if part:
        yield part


def as_text(patch: bytes) -> str:
    """A patch as text, its newlines as reading it in text mode leaves them (CRLF and CR
    become LF); bytes that are not UTF-8 are replaced."""
    return patch.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
