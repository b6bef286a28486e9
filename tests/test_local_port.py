"""The local port on real git repositories: its patches, and how few git processes a PR's
analysis through it starts."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from bot.cli.demo import build_example
from bot.core.events import Event
from bot.github.context import HandlerContext, local_ports
from bot.github.local import TREES_KEPT, LocalPort, as_text, split_diff
from bot.github.port import BlobRequest
from bot.store.store import Store
from config.settings import Settings
from handlers.review import review_pull_request
from tests.gitrepo import GitRepo

BINARY = bytes(range(256))


def _pr(repo: GitRepo) -> tuple[str, str]:
    """A base and a head that change files of every kind the patches must survive."""
    repo.write_all({"a b/with space.py": "x = 1\n", "ünï/cödé.py": "y = 1\n", "gone.py": "g\n",
                    "run.sh": "echo\n", "tolink.py": "l\n", "same.py": "s\n",
                    "tab\there.py": "t = 1\n", 'q"uote\\back.py': "q = 1\n"})
    repo.write("bin.dat", BINARY)
    repo.write("crlf.py", b"a\r\nb\r\n")
    repo.write("latin.py", "é = 1\n".encode("latin-1"))
    base = repo.commit("base")
    repo.write_all({"a b/with space.py": "x = 2\n", "ünï/cödé.py": "y = 2\n", "new dir/ñ é.py": "n\n",
                    "tab\there.py": "t = 2\n", 'q"uote\\back.py': "q = 2\n",
                    "lines.py": "x\ndiff --git a/b b/b\n"})
    repo.write("bin.dat", BINARY[::-1])
    repo.write("new.bin", b"\0\1\2")
    repo.write("empty.py", b"")
    repo.write("crlf.py", b"a\r\nc\r\n")
    repo.write("latin.py", "é = 2\n".encode("latin-1"))
    repo.remove("gone.py")
    (repo.root / "run.sh").chmod(0o755)
    repo.remove("tolink.py")
    os.symlink("same.py", repo.root / "tolink.py")
    return base, repo.commit("head")


def _file_diff(repo: GitRepo, base: str, head: str, path: str) -> str | None:
    """The hunks of one file's own `git diff`, as the port reported them one file at a time."""
    out = subprocess.run(["git", "-C", str(repo.root), "diff", "-U3", base, head, "--", f":(literal){path}"],
                         capture_output=True, check=True).stdout
    patch = as_text(out)
    return patch[patch.find("\n@@") + 1 :] if "\n@@" in patch else None


def test_one_diff_gives_each_files_patch_whatever_its_name_or_content(git_repo: GitRepo) -> None:
    base, head = _pr(git_repo)
    port = LocalPort(str(git_repo.root), prs={1: (base, head)})
    files = {f.path: f for f in port.pull_files("o/r", 1)}
    assert sorted(files) == sorted([
        "a b/with space.py", "ünï/cödé.py", "new dir/ñ é.py", "tab\there.py", 'q"uote\\back.py',
        "lines.py", "bin.dat", "new.bin", "empty.py", "crlf.py", "latin.py", "gone.py", "run.sh",
        "tolink.py"])
    assert files["a b/with space.py"].patch == "@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    assert files["ünï/cödé.py"].patch == "@@ -1 +1 @@\n-y = 1\n+y = 2\n"
    assert files["tab\there.py"].patch == "@@ -1 +1 @@\n-t = 1\n+t = 2\n"
    assert files["new dir/ñ é.py"].patch == "@@ -0,0 +1 @@\n+n\n"
    assert files["new dir/ñ é.py"].status == "added"
    assert files["lines.py"].patch == "@@ -0,0 +1,2 @@\n+x\n+diff --git a/b b/b\n"
    assert files["crlf.py"].patch == "@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
    assert files["latin.py"].patch == "@@ -1 +1 @@\n-\ufffd = 1\n+\ufffd = 2\n"
    assert files["gone.py"].status == "removed" and files["gone.py"].patch == "@@ -1 +0,0 @@\n-g\n"
    assert files["gone.py"].blob_sha is None
    # binary contents, a new empty file and a mode change have no hunks, as on GitHub
    for path in ("bin.dat", "new.bin", "empty.py", "run.sh"):
        assert files[path].patch is None, path
    assert files["bin.dat"].blob_sha == git_repo.git("rev-parse", f"{head}:bin.dat")
    # a file become a symbolic link: its deletion and the link's addition, as one patch
    link = files["tolink.py"].patch
    assert link is not None and link.startswith("@@ -1 +0,0 @@\n-l\n") and "+same.py" in link
    # each the same as the file's own diff
    for path, f in files.items():
        assert f.patch == _file_diff(git_repo, base, head, path), path
    # the parts of the one diff, byte for byte those of a diff per file (what the port falls back on)
    order = [f.path for f in port.pull_files("o/r", 1)]
    assert list(split_diff(port._diff("-U3", base, head))) == [port._file_patch(base, head, p) for p in order]


def test_the_parts_of_a_diff_follow_its_headers() -> None:
    diff = (b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-diff --git a/y b/y\n+z\n"
            b"diff --git a/l b/l\ndeleted file mode 100644\n"
            b"diff --git a/l b/l\nnew file mode 120000\n"
            b"diff --git a/m b/m\nold mode 100644\nnew mode 100755\n")
    assert list(split_diff(diff)) == [
        b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-diff --git a/y b/y\n+z\n",
        b"diff --git a/l b/l\ndeleted file mode 100644\ndiff --git a/l b/l\nnew file mode 120000\n",
        b"diff --git a/m b/m\nold mode 100644\nnew mode 100755\n",
    ]
    assert list(split_diff(b"")) == []


def test_reads_answer_as_the_commits_have_them(git_repo: GitRepo) -> None:
    base, head = _pr(git_repo)
    port = LocalPort(str(git_repo.root), prs={1: (base, head)}, default_ref="main")
    wanted = [BlobRequest(sha, path) for sha in (base, head, "main")
              for path in ("same.py", "bin.dat", "tolink.py", "gone.py", "missing.py", "ünï/cödé.py")]
    found = port.blobs("o/r", [*wanted, wanted[0]])
    assert list(found) == wanted
    assert found[BlobRequest(base, "bin.dat")] == BINARY
    assert found[BlobRequest(head, "bin.dat")] == BINARY[::-1]
    assert found[BlobRequest("main", "bin.dat")] == BINARY[::-1]
    assert found[BlobRequest(base, "tolink.py")] == b"l\n"
    assert found[BlobRequest(head, "tolink.py")] is None  # a symbolic link is not a file
    assert found[BlobRequest(head, "gone.py")] is None and found[BlobRequest(head, "missing.py")] is None
    assert found[BlobRequest(base, "ünï/cödé.py")] == b"y = 1\n"
    assert port.blobs("o/r", [BlobRequest(head, "same.py")]) == {BlobRequest(head, "same.py"): b"s\n"}
    assert port.default_branch_file("o/r", "run.sh") == b"echo\n"
    listing = port.tree("o/r", head)
    assert listing["bin.dat"] == (git_repo.git("rev-parse", f"{head}:bin.dat"), 256)
    assert "tolink.py" not in listing and "gone.py" not in listing


def test_a_port_keeps_a_few_commits_and_resolves_branches_again_when_refreshed(git_repo: GitRepo) -> None:
    commits = []
    for n in range(TREES_KEPT + 3):
        git_repo.write("f.py", f"n = {n}\n")
        commits.append(git_repo.commit(f"c{n}"))
    port = LocalPort(str(git_repo.root), default_ref="main")
    for sha in commits:
        assert port.blobs("o/r", [BlobRequest(sha, "f.py")])
    assert len(port._trees) == TREES_KEPT
    assert port.default_branch_file("o/r", "f.py") == f"n = {TREES_KEPT + 2}\n".encode()
    git_repo.write("f.py", "moved = 1\n")
    git_repo.commit("main moves on")
    assert port.default_branch_file("o/r", "f.py") == f"n = {TREES_KEPT + 2}\n".encode()  # one delivery
    port.refresh()  # the next
    assert port.default_branch_file("o/r", "f.py") == b"moved = 1\n"


def _counting_git(folder: Path) -> Path:
    """A `git` on PATH that logs each command line, then runs the real one."""
    real = shutil.which("git")
    assert real is not None
    folder.mkdir()
    log = folder / "log"
    script = folder / "git"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    return log


def _commands(log: Path) -> Counter[str]:
    """How many times each git command ran (``-C`` and ``-c`` skipped)."""
    out: Counter[str] = Counter()
    for line in log.read_text().splitlines():
        words = line.split(" ")
        while words and words[0] in ("-C", "-c"):
            words = words[2:]
        out[words[0] if words else ""] += 1
    return out


def test_a_prs_analysis_through_the_port_lists_each_commit_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    base, _ = build_example(root)
    repo = GitRepo(root)  # the example's repository, opened again
    # modules beside the changed test and workflows: dozens of files the analysis reads
    repo.write_all({f"tests/e2e/megatron/helper_{n:02d}.py": f"VALUE = {n}\n" for n in range(40)})
    repo.write_all({f".github/workflows/extra-{n:02d}.yml": "on: [push]\njobs: {}\n" for n in range(20)})
    repo.write("tests/e2e/megatron/test_short.py", (root / "tests/e2e/megatron/test_short.py").read_text()
               + "\n# changed\n")
    head = repo.commit("more to read")
    log = _counting_git(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{log.parent}{os.pathsep}{os.environ['PATH']}")
    store = Store(f"sqlite:///{tmp_path}/db.sqlite")
    store.upgrade()
    event = Event.from_payload("pull_request", "d1", {
        "action": "synchronize", "number": 7, "repository": {"full_name": "octo/miles"},
        "pull_request": {"number": 7, "base": {"sha": base}, "head": {"sha": head}}})
    port = local_ports(str(root))(event)
    assert isinstance(port, LocalPort)
    try:
        review_pull_request(event, HandlerContext(Settings(dry_run=False), store, event, port))
    finally:
        store.close()
        port.close()
    assert [w.kind for w in port.writes][:1] == ["check_run"]
    ran = _commands(log)
    assert ran["ls-tree"] <= 2, ran  # the base and the head, once each
    assert ran["rev-parse"] <= 2, ran
    assert ran["diff"] == 2, ran  # the changed files, and their patches
    assert sum(ran.values()) <= 20, ran  # the rest: `cat-file`, one exchange per batch of reads
