"""Reading a PR through the port: a base described by its head, batches, likely next reads."""

from __future__ import annotations

from typing import Any

from bot.analysis.tree import git_blob_id
from bot.github.port import Batch, BlobRequest, ChangedFile, PullRequest
from bot.github.tree import GitHubTree, likely_reads, read_together

HEAD = {
    "tests/__init__.py": b"",
    "tests/e2e/__init__.py": b"",
    "tests/e2e/_common.py": b"HARNESS = 1\n",
    "tests/e2e/test_a.py": b"a = 2\n",
    "tests/e2e/test_new.py": b"new = 1\n",
    "tests/e2e/test_moved.py": b"moved = 1\n",
    "scripts/models/qwen.py": b"def model_args(): ...\n",
    "README.md": b"# r\n",
}
BASE = {**{k: v for k, v in HEAD.items() if k not in ("tests/e2e/test_new.py", "tests/e2e/test_moved.py")},
        "tests/e2e/test_a.py": b"a = 1\n", "tests/e2e/test_gone.py": b"gone = 1\n",
        "tests/e2e/test_old_name.py": b"moved = 1\n", "README.md": b"# moved on\n"}
FILES = [
    ChangedFile("tests/e2e/test_a.py", "modified"),
    ChangedFile("tests/e2e/test_new.py", "added"),
    ChangedFile("tests/e2e/test_gone.py", "removed"),
    ChangedFile("tests/e2e/test_moved.py", "renamed", previous_path="tests/e2e/test_old_name.py"),
]


class Port:
    def __init__(self) -> None:
        self.commits = {"h": HEAD, "b": BASE}
        self.calls: list[tuple[str, Any]] = []

    def tree(self, repo: str, sha: str) -> dict[str, tuple[str, int]]:
        self.calls.append(("tree", sha))
        return {p: (git_blob_id(d), len(d)) for p, d in self.commits[sha].items()}

    def read_batch(self, repo: str, wanted: list[BlobRequest], *, pull: int | None = None) -> Batch:
        self.calls.append(("batch", (sorted(f"{w.sha}:{w.path}" for w in wanted), pull)))
        found = {w: self.commits.get(w.sha, {}).get(w.path) for w in wanted}
        pr = PullRequest("o/r", pull, "dev", "h", "f", "o/r", "b", "main", False, "open") if pull else None
        return Batch(found, pr)


def _trees() -> tuple[Port, GitHubTree, GitHubTree]:
    port = Port()
    head = GitHubTree(port, "o/r", "h")  # type: ignore[arg-type]
    return port, head, GitHubTree.before(head, "b", FILES)


def test_the_base_is_the_head_without_the_prs_changes() -> None:
    port, head, base = _trees()
    assert base.list("tests/e2e/test_*.py") == [
        "tests/e2e/test_a.py", "tests/e2e/test_gone.py", "tests/e2e/test_old_name.py"]
    changed = ["tests/e2e/test_a.py", "tests/e2e/test_gone.py", "tests/e2e/test_moved.py",
               "tests/e2e/test_new.py", "tests/e2e/test_old_name.py"]
    at_head = ["tests/e2e/test_a.py", "tests/e2e/test_moved.py", "tests/e2e/test_new.py"]
    asked = sorted([f"b:{p}" for p in changed] + [f"h:{p}" for p in at_head])
    assert port.calls == [("tree", "h"), ("batch", (asked, None))]  # with the head's, in one request
    assert base.read("tests/e2e/test_a.py") == b"a = 1\n" and base.size("tests/e2e/test_gone.py") == 9
    assert base.blob_id("tests/e2e/test_a.py") == git_blob_id(b"a = 1\n")
    assert base.read("tests/e2e/test_new.py") is None and base.blob_id("tests/e2e/test_new.py") is None
    # Unchanged files are the head's: README.md moved on at the base commit, not in this PR.
    assert base.read("README.md") == b"# r\n" and base.blob_id("README.md") == head.blob_id("README.md")
    assert head.read("tests/nope.py") is None and base.read("tests/nope.py") is None
    assert len(port.calls) == 3  # the head's README.md was read on its own


def test_one_batch_carries_both_commits_the_policy_and_the_pr() -> None:
    port, head, base = _trees()
    extra = [BlobRequest("main", ".github/rocmbot.yml")]
    batch = read_together(head, ["tests/e2e/test_a.py", "tests/e2e/_common.py"], extra=extra, pull=7)
    assert batch.pull is not None and batch.pull.head_sha == "h" and batch.blobs[extra[0]] is None
    assert port.calls[-1] == ("batch", (["b:tests/e2e/test_a.py", "h:tests/e2e/_common.py",
                                         "h:tests/e2e/test_a.py", "main:.github/rocmbot.yml"], 7))
    calls = len(port.calls)
    assert base.read("tests/e2e/test_a.py") == b"a = 1\n"
    assert head.read("tests/e2e/_common.py") == b"HARNESS = 1\n"
    base.fetch(["tests/e2e/_common.py", "tests/e2e/test_a.py"])
    assert read_together(head, []).blobs == {}
    assert len(port.calls) == calls  # all known: nothing asked again


def test_likely_reads_are_package_files_harness_modules_and_model_scripts() -> None:
    _, head, _ = _trees()
    found = likely_reads(head, ["tests/e2e/test_a.py", "README.md"], lambda p: "/test_" in p,
                         "scripts/models/{MODEL_TYPE}.py")
    assert found == ["tests/e2e/__init__.py", "tests/__init__.py", "tests/e2e/_common.py",
                     "scripts/models/qwen.py"]
    assert likely_reads(head, ["tests/e2e/test_a.py"], lambda p: False, "x/{M}.sh", limit=2) == [
        "tests/e2e/__init__.py", "tests/__init__.py"]
