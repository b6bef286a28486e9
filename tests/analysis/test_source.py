"""Reading a tree's files once: read-ahead, remote batching, vanished files, messages."""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from pathlib import Path

from bot.analysis.source import Module, Shared, Sources, parse_python
from bot.analysis.tree import FolderTree, GitRepository
from tests.gitrepo import GitRepo


def _folder(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


class _BrokenStream(FolderTree):
    """Streams one unrequested file, then the first requested one, then fails."""

    def stream(self, paths: list[str]) -> Iterator[tuple[str, bytes]]:
        yield "c.py", b"streamed but never asked for\n"
        yield paths[0], b"first = 'streamed'\n"
        raise OSError("connection reset")


class _Remote(FolderTree):
    """A tree that batches its own reads, like the GitHub one."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.fetched: list[list[str]] = []

    def fetch(self, paths: list[str]) -> None:
        self.fetched.append(paths)


class _Vanishing(FolderTree):
    """A tree whose files are listed with a size but gone when read."""

    def read(self, path: str) -> bytes | None:
        return None


def test_a_node_without_a_position_is_shown_unparsed() -> None:
    module = parse_python("t.py", "flags = [f for f in  ARGS]\n")
    assert isinstance(module, Module)
    comp = next(n for n in ast.walk(module.tree) if isinstance(n, ast.comprehension))
    assert module.segment(comp) == "for f in ARGS"


def test_a_source_segment_is_the_text_ast_gives_without_splitting_the_file_again() -> None:
    text = 'x = ("é",\r\n     f"{a}" "b")\rY = """one\ntwo"""  # ü\nz = 1\n'
    module = parse_python("t.py", text)
    assert isinstance(module, Module)
    nodes = [n for n in ast.walk(module.tree) if hasattr(n, "lineno")]
    assert len(nodes) > 8
    for node in nodes:
        assert module.source_segment(node) == ast.get_source_segment(text, node)
    assert module.source_segment(ast.comprehension(ast.Name("a"), ast.Name("b"), [], 0)) is None


def test_read_ahead_keeps_only_requested_files_and_falls_back_when_the_stream_fails(tmp_path: Path) -> None:
    root = _folder(tmp_path, {"a.py": "first = 'disk'\n", "b.py": "second = 2\n", "c.py": "third = 3\n"})
    sources = Sources(_BrokenStream(root))
    sources.prefetch(["a.py", "b.py"])
    assert sources.text("a.py") == "first = 'streamed'\n"
    assert sources.text("b.py") == "second = 2\n"
    assert sources.text("c.py") == "third = 3\n"


def test_a_remote_tree_is_asked_once_for_the_files_not_yet_read(tmp_path: Path) -> None:
    root = _folder(tmp_path, {"a.py": "", "b.py": "", "big.py": "x" * 2048})
    tree = _Remote(root)
    sources = Sources(tree, max_bytes=1024)
    assert sources.text("a.py") == ""
    sources.prefetch(["a.py", "b.py", "big.py"])
    sources.hint(["a.py", "b.py"])
    sources.hint(["a.py"])
    assert tree.fetched == [["b.py"], ["b.py"]]


def test_a_file_gone_by_the_time_it_is_read_is_absent(tmp_path: Path) -> None:
    sources = Sources(_Vanishing(_folder(tmp_path, {"a.py": "x = 1\n"})))
    assert sources.text("a.py") is None
    assert sources.module("a.py") is None


def test_parser_warnings_about_repository_code_are_silenced_and_no_others() -> None:
    odd = 'x = "\\d"\nif 1if 1 else 2:\n    pass\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()  # as a host might: the filter comes back on the next parse
        warnings.simplefilter("always")
        assert isinstance(parse_python("tests/test_odd.py", odd), Module)
        assert caught == []
        ast.parse('x = "\\d"', filename="elsewhere.py")
        assert [type(w.message) for w in caught] == [DeprecationWarning]


def test_a_file_is_parsed_once_for_every_reader_and_a_missing_one_not_at_all(tmp_path: Path) -> None:
    sources = Sources(FolderTree(_folder(tmp_path, {"w.yml": "on: push\n"})))
    calls: list[str] = []

    def parse(path: str, text: str) -> tuple[str, int]:
        calls.append(path)
        return path, len(text)

    assert sources.parsed("w.yml", parse) == ("w.yml", 9)
    assert sources.parsed("w.yml", parse) == ("w.yml", 9)
    assert sources.parsed("gone.yml", parse) is None
    assert calls == ["w.yml"]


def test_two_revisions_share_what_the_change_did_not_touch(git_repo: GitRepo) -> None:
    git_repo.write_all({"same.py": "A = 1\n", "changed.py": "B = 1\n"})
    base_sha = git_repo.commit()
    git_repo.write("changed.py", "B = 2\n")
    head_sha = git_repo.commit()
    shared = Shared()
    with GitRepository(git_repo.root) as repo:
        base = Sources(repo.tree(base_sha), shared=shared)
        head = Sources(repo.tree(head_sha), shared=shared)
        assert head.module("same.py") is base.module("same.py")  # parsed once
        def words(path: str, text: str) -> list[str]:
            return text.split()

        assert head.parsed("same.py", words) is base.parsed("same.py", words)  # worked out once
        assert head.parsed("changed.py", words) == ["B", "=", "2"]
        before, after = base.module("changed.py"), head.module("changed.py")
        assert isinstance(before, Module) and isinstance(after, Module)
        assert (before.text, after.text) == ("B = 1\n", "B = 2\n")
        head.release("same.py")  # a released file is no longer kept for the other
        assert ("same.py", repo.tree(base_sha).blob_id("same.py")) not in shared.modules
