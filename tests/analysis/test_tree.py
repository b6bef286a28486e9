from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.analysis.engine import audit
from bot.analysis.tree import (
    MISSING,
    FolderTree,
    GitRepository,
    GitTree,
    TreeError,
    changed_paths,
    git_blob_id,
    match,
)
from tests.gitrepo import GitRepo


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("tests/**/test_*.py", "tests/test_a.py", True),
        ("tests/**/test_*.py", "tests/e2e/megatron/test_a.py", True),
        ("tests/**/test_*.py", "tests/e2e/helper.py", False),
        ("tests/**/test_*.py", "other/tests/test_a.py", False),
        ("**/Dockerfile.rocm", "Dockerfile.rocm", True),
        ("**/Dockerfile.rocm", "docker/x/Dockerfile.rocm", True),
        ("*.py", "a/b.py", False),
        ("a/?.py", "a/b.py", True),
        ("a/[bc].py", "a/c.py", True),
        ("a/[!bc].py", "a/c.py", False),
        ("a/[bc", "a/[bc", True),
        ("**", "a/b/c", True),
        (".github/workflows/*rocm*.yml", ".github/workflows/_run-ci-rocm.yml", True),
        ("test/[z-a]*.py", "test/a.py", False),  # invalid: only the path spelled as the glob
        ("test/[z-a]*.py", "test/[z-a]*.py", True),
    ],
)
def test_glob_matches_like_a_repository_glob(pattern: str, path: str, expected: bool) -> None:
    assert match(pattern, path) is expected


def test_git_tree_reads_revisions_through_one_batch_process(git_repo: GitRepo) -> None:
    git_repo.write("a/b.py", "x = 1\n")
    git_repo.write("big.bin", b"\0" * 10)
    first = git_repo.commit()
    git_repo.write("a/b.py", "x = 2\n")
    git_repo.write("c.py", "y = 1\n")
    second = git_repo.commit()
    with GitRepository(git_repo.root) as repo:
        old, new = repo.tree(first), repo.tree("HEAD")
        assert new.rev == second
        assert old.read("a/b.py") == b"x = 1\n"
        assert new.read("a/b.py") == b"x = 2\n"
        assert new.read("missing.py") is None
        assert old.read("c.py") is None
        assert new.list("**/*.py") == ["a/b.py", "c.py"]
        assert new.size("big.bin") == 10
        assert new.size("nope") is None
        assert new.blob_id("a/b.py") == git_blob_id(b"x = 2\n")
        proc = repo._proc
        assert proc is not None
        new.read("c.py")
        assert repo._proc is proc  # still the same process
        assert changed_paths(old, new) == {"a/b.py", "c.py"}
        assert repo.blob("0" * 40) is None
    assert repo._proc is None


def test_git_tree_reads_a_bare_repository(git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.write("x.py", "1\n")
    sha = git_repo.commit()
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(git_repo.root), str(bare)], check=True)
    with GitRepository(bare) as repo:
        assert repo.tree(sha).read("x.py") == b"1\n"


def test_git_tree_skips_symlinks_and_submodule_entries(git_repo: GitRepo) -> None:
    git_repo.write("real.py", "1\n")
    (git_repo.root / "link.py").symlink_to("real.py")
    git_repo.commit()
    with GitRepository(git_repo.root) as repo:
        tree = repo.tree("HEAD")
        assert tree.list("*.py") == ["real.py"]
        assert tree.read("link.py") is None


def test_unknown_revision_and_non_repository_are_tree_errors(git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.write("x.py", "1\n")
    git_repo.commit()
    with GitRepository(git_repo.root) as repo, pytest.raises(TreeError, match="unknown revision: nope"):
        repo.tree("nope")
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(TreeError, match="not a git repository"):
        GitRepository(plain).tree("HEAD")
    with pytest.raises(TreeError, match="not a folder"):
        GitRepository(tmp_path / "absent")


def test_a_dead_batch_process_is_restarted(git_repo: GitRepo) -> None:
    git_repo.write("x.py", "1\n")
    git_repo.commit()
    with GitRepository(git_repo.root) as repo:
        tree = repo.tree("HEAD")
        assert tree.read("x.py") == b"1\n"
        assert repo._proc is not None
        repo._proc.kill()
        repo._proc.wait()
        assert tree.read("x.py") == b"1\n"


def test_folder_tree_lists_reads_and_hashes(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.py").write_text("x = 1\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("")
    (tmp_path / "link.py").symlink_to(tmp_path / "a" / "b.py")
    tree = FolderTree(tmp_path)
    assert tree.rev is None
    assert tree.list("**") == ["a/b.py"]
    assert tree.read("a/b.py") == b"x = 1\n"
    assert tree.read("../etc/passwd") is None
    assert tree.read("/etc/passwd") is None
    assert tree.read("link.py") is None
    assert tree.blob_id("a/b.py") == git_blob_id(b"x = 1\n")
    assert tree.blob_id("nope") is None
    assert tree.size("a/b.py") == 6
    assert tree.size("nope") is None
    with pytest.raises(TreeError):
        FolderTree(tmp_path / "absent")


def test_changed_paths_between_different_kinds_of_tree(git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.write("a.py", "1\n")
    git_repo.write("b.py", "2\n")
    git_repo.commit()
    (git_repo.root / "b.py").write_text("3\n")
    with GitRepository(git_repo.root) as repo:
        head: GitTree = repo.tree("HEAD")
        assert changed_paths(head, FolderTree(git_repo.root)) == {"b.py"}
        assert changed_paths(head, FolderTree(git_repo.root), ["a.py"]) == set()


def test_streaming_shares_one_read_per_blob_and_skips_absent_paths(git_repo: GitRepo) -> None:
    git_repo.write("a.py", "same\n")
    git_repo.write("b.py", "same\n")
    git_repo.write("c.py", "other\n")
    git_repo.commit()
    with GitRepository(git_repo.root) as repo:
        tree = repo.tree("HEAD")
        assert list(tree.stream(["a.py", "missing.py", "b.py", "c.py"])) == [
            ("a.py", b"same\n"), ("b.py", b"same\n"), ("c.py", b"other\n"),
        ]
        real = tree.blob_id("c.py")
        assert real is not None
        assert list(repo.stream_blobs(["0" * 40, real])) == [(real, b"other\n")]


def test_listing_an_object_that_is_not_a_commit_is_a_tree_error_with_gits_message(git_repo: GitRepo) -> None:
    git_repo.write("x.py", "1\n")
    git_repo.commit()
    with GitRepository(git_repo.root) as repo, pytest.raises(TreeError, match="not a tree object"):
        repo.entries("0" * 40)


def test_a_blob_the_repository_lacks_is_an_unreadable_file_not_a_crash(git_repo: GitRepo) -> None:
    # a partial or damaged copy: `git ls-tree -l` lists the file with no size
    git_repo.write_all({"tests/test_a.py": 'register_rocm_ci(60, "stage-b-1-gpu-mi350")\n',
                        "README.md": "hi\n"})
    sha = git_repo.commit()
    blob = git_repo.git("rev-parse", f"{sha}:tests/test_a.py")
    (git_repo.root / ".git/objects" / blob[:2] / blob[2:]).unlink()
    with GitRepository(git_repo.root) as repo:
        tree = repo.tree(sha)
        assert tree.size("tests/test_a.py") == MISSING and tree.size("README.md") == 3
        report = audit(tree)
    (found,) = [f for f in report.findings if f.rule == "REG004"]
    assert found.path == "tests/test_a.py" and "missing from the repository" in found.message
