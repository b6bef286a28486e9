"""An audit split over processes: the same report, whatever a child does."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from bot.analysis import pool
from bot.analysis.engine import audit
from bot.analysis.tree import FolderTree, GitRepository
from bot.cli.example import BASE_FILES, TEST_TEMPLATE
from bot.formats import FORMATS
from tests.gitrepo import GitRepo

PARENT = os.getpid()


def test_split_keeps_order_and_balances() -> None:
    items = list(range(11))
    parts = pool.split(items, 3)
    assert parts == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10]]
    assert pool.split(items, 1) == [items]
    assert pool.split([1, 2], 5) == [[1], [2]]  # never an empty part
    assert pool.split([], 4) == [[]]


def test_usable_needs_a_forkable_tree_and_enough_files(tmp_path: Path) -> None:
    folder = FolderTree(tmp_path)
    assert pool.usable(folder, 4, 1000) == 4
    assert pool.usable(folder, 4, 2 * pool.MIN_FILES_PER_JOB + 1) == 2  # at least MIN_FILES_PER_JOB each
    assert pool.usable(folder, 4, 2 * pool.MIN_FILES_PER_JOB - 1) == 1
    assert pool.usable(folder, 1, 1000) == 1
    assert pool.usable(object(), 4, 1000) == 1  # a remote tree is never split


def _square_all(part: list[int]) -> list[int]:
    return [n * n for n in part]


def test_fork_map_returns_every_part_in_order() -> None:
    parts = pool.split(list(range(10)), 3)
    assert pool.fork_map(_square_all, parts) == [_square_all(p) for p in parts]


def test_fork_map_over_fewer_processes_than_parts_returns_every_part_in_order() -> None:
    parts = [[n] for n in range(50)]
    assert pool.fork_map(_square_all, parts, 3) == [_square_all(p) for p in parts]


def test_meanwhile_runs_after_the_parts_in_one_process() -> None:
    done: list[object] = []

    def work(part: list[int]) -> list[int]:
        done.append(tuple(part))
        return _square_all(part)

    assert pool.fork_map(work, [[1, 2], [3]], 1, meanwhile=lambda: done.append("meanwhile")) == [[1, 4], [9]]
    assert done == [(1, 2), (3,), "meanwhile"]


def test_meanwhile_runs_here_once_before_this_process_takes_parts() -> None:
    done: list[object] = []

    def work(part: list[int]) -> list[int]:
        done.append(tuple(part))  # in a child, this changes the child's list only
        return _square_all(part)

    parts = [[1], [2], [3]]
    results = pool.fork_map(work, parts, meanwhile=lambda: done.append(("meanwhile", os.getpid())))
    assert results == [_square_all(p) for p in parts]
    assert done == [("meanwhile", PARENT), (1,)]  # each child took one of the other parts


def test_the_parts_a_killed_child_had_taken_are_done_by_the_parent(caplog: pytest.LogCaptureFixture) -> None:
    dying_r, dying_w = os.pipe()

    def work(part: list[int]) -> list[int]:
        if os.getpid() != PARENT and 15 in part:
            os.write(dying_w, b"x")
            os.kill(os.getpid(), signal.SIGKILL)
        return _square_all(part)

    parts = [[n] for n in range(30)]
    try:
        # the parent takes no part until the child has taken parts 1 to 15 and is dying
        results = pool.fork_map(work, parts, 2, meanwhile=lambda: os.read(dying_r, 1))
    finally:
        os.close(dying_r)
        os.close(dying_w)
    assert results == [_square_all(p) for p in parts]
    assert sum("read again" in r.getMessage() for r in caplog.records) == 1


def test_too_many_parts_for_the_pipe_are_refused() -> None:
    with pytest.raises(ValueError, match="at most"):
        pool.fork_map(_square_all, [[n] for n in range(pool.MAX_PARTS + 1)], 2)


def _fails_in_children(part: list[int]) -> list[int]:
    if os.getpid() != PARENT:
        raise RuntimeError("child failure")
    return _square_all(part)


def _killed_in_children(part: list[int]) -> list[int]:
    if os.getpid() != PARENT:
        os.kill(os.getpid(), signal.SIGKILL)
    return _square_all(part)


def _unpicklable_in_children(part: list[int]) -> object:
    if os.getpid() != PARENT:
        return lambda: part  # cannot be pickled: the child exits with an error
    return _square_all(part)


@pytest.mark.parametrize("work", [_fails_in_children, _killed_in_children, _unpicklable_in_children])
def test_a_failing_child_has_its_part_done_by_the_parent(work: object,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    parts = pool.split(list(range(9)), 3)
    assert pool.fork_map(work, parts) == [_square_all(p) for p in parts]  # type: ignore[arg-type]
    assert sum("read again" in r.getMessage() for r in caplog.records) == 2


def test_a_failing_parent_stops_its_children() -> None:
    def work(part: list[int]) -> list[int]:
        if os.getpid() == PARENT:
            raise KeyboardInterrupt
        signal.pause()  # would never end by itself
        return part

    with pytest.raises(KeyboardInterrupt):
        pool.fork_map(work, [[1], [2], [3]])
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # every child was reaped


def test_a_forked_child_reads_git_through_its_own_process(git_repo: GitRepo) -> None:
    git_repo.write_all({f"f{n}.txt": f"file {n}\n" for n in range(4)})
    sha = git_repo.commit()
    with GitRepository(git_repo.root) as repo:
        tree = repo.tree(sha)
        assert tree.read("f0.txt") == b"file 0\n"  # the parent's reader is running

        def read(part: list[str]) -> list[bytes | None]:
            return [tree.read(p) for p in part]

        parts = [["f0.txt", "f1.txt"], ["f2.txt"], ["f3.txt", "missing"]]
        assert pool.fork_map(read, parts) == [[b"file 0\n", b"file 1\n"], [b"file 2\n"],
                                                   [b"file 3\n", None]]
        assert tree.read("f1.txt") == b"file 1\n"  # and still reads for the parent


def _repository(repo: GitRepo, tests: int) -> str:
    files = {p: text for p, text in BASE_FILES.items() if "/test_" not in p}  # all but its tests
    for n in range(tests):
        disabled = ', disabled="FIXME: flaky"' if n % 7 == 0 else ""
        text = TEST_TEMPLATE.format(disabled=disabled, ep=(1, 2, 4, 8)[n % 4])
        if n % 50 == 3:
            text = text.replace("stage-c-4-gpu-mi350", "stage-z-4-gpu-nowhere")  # REG001
        if n % 97 == 5:
            text = text.replace("CASE = CaseConfig(", "CASE = CaseConfig((")  # REG004
        files[f"tests/e2e/megatron/test_case_{n:04d}.py"] = text
    repo.write_all(files)
    return repo.commit()


def test_an_audit_over_processes_gives_the_same_report(git_repo: GitRepo) -> None:
    sha = _repository(git_repo, 240)
    with GitRepository(git_repo.root) as repo:
        tree = repo.tree(sha)
        assert pool.usable(tree, 3, 240) == 3
        one = audit(tree, jobs=1)
        two = audit(repo.tree(sha), jobs=3)
    assert {f.rule for f in one.findings} >= {"PAR002", "REG001", "REG004"}
    assert len(one.tests) == 2 * (240 - 3)  # three files do not parse
    for name in ("json", "markdown", "sarif"):
        assert FORMATS[name](two) == FORMATS[name](one)
    folder = audit(FolderTree(git_repo.root), jobs=2)
    assert FORMATS["json"](folder).replace('"head": null', f'"head": "{sha}"') == FORMATS["json"](one)


def test_what_a_child_does_with_its_parts_and_what_the_parent_makes_of_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    """A child's body, run here: its parts' results pickled into its file (exit 0), read back
    by the parent; a failure is exit 1, and a result file that cannot be read gives nothing
    (the parent redoes those parts)."""
    parts = [[1, 2], [3], [4]]
    read_fd, write_fd = os.pipe()
    os.write(write_fd, pool._INDEX.pack(2))
    os.close(write_fd)
    out = str(tmp_path / "child.pickle")
    try:
        assert pool._child(_square_all, parts, 0, read_fd, out) == 0
    finally:
        os.close(read_fd)
    assert pool._result(0, out) == {0: [1, 4], 2: [16]}
    read_fd, write_fd = os.pipe()
    os.close(write_fd)
    try:
        assert pool._child(_always_fails, parts, 1, read_fd, out) == 1
    finally:
        os.close(read_fd)
    (tmp_path / "child.pickle").write_bytes(b"not a pickle")
    assert pool._result(0, out) == {}
    assert pool._result(0, str(tmp_path / "none.pickle")) == {}
    messages = [r.getMessage() for r in caplog.records]
    assert sum("no readable result" in m for m in messages) == 2
    assert any("an audit process failed" in m for m in messages)


def _always_fails(part: list[int]) -> list[int]:
    raise RuntimeError("child failure")


def test_stopping_a_child_that_is_gone_is_no_error() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    pool._stop(pid)  # reaped already: nothing to kill or wait for
