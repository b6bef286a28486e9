"""The local port on real git repositories: what it reads, and how few git processes a PR's
analysis through it starts."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from bot.cli.demo import build_example
from bot.core.events import Event
from bot.github.context import HandlerContext, local_ports
from bot.github.local import TREES_KEPT, LocalPort
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
    assert ran["cat-file"] <= 10, ran  # one exchange per batch of reads
