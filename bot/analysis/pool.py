"""Spreading an audit's test files over processes.

An audit does the same work for every test file (parse, markers, launches), and the files
do not depend on one another: a revision's files split into contiguous parts, one per
process, give the same report as one process reading them all, as long as the parts are
put back in order. The parts are worked in forked children, which start with everything
the parent has already read (the configuration, the file listing); the parent works the
first part itself. A child that fails in any way has its part done again by the parent,
so a report is never missing a file.

Only a tree that says it survives a fork (``forkable``: a git revision, whose reader starts
a ``cat-file`` of its own in the child, or a folder) is split; on platforms without
``os.fork`` everything runs here.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["MIN_FILES_PER_JOB", "default_jobs", "fork_map", "split", "usable"]

log = logging.getLogger(__name__)

T = TypeVar("T")
P = TypeVar("P")

# Below this many files per process, forking and sending results back cost more than the
# second process saves.
MIN_FILES_PER_JOB = 100


def default_jobs() -> int:
    """Processes an audit uses when not told: the CPUs this process may run on (at most 8)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


def usable(tree: object, jobs: int, files: int) -> int:
    """How many processes to split ``files`` over (1: do not split)."""
    if jobs <= 1 or not hasattr(os, "fork") or not getattr(tree, "forkable", False):
        return 1
    return max(1, min(jobs, files // MIN_FILES_PER_JOB))


def split(items: Sequence[P], parts: int) -> list[list[P]]:
    """``items`` in ``parts`` contiguous runs whose lengths differ by at most one."""
    parts = max(1, min(parts, len(items)))
    size, extra = divmod(len(items), parts)
    out: list[list[P]] = []
    start = 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        out.append(list(items[start:end]))
        start = end
    return out


def fork_map(work: Callable[[list[P]], T], parts: list[list[P]],
             meanwhile: Callable[[], object] | None = None) -> list[T]:
    """``[work(part) for part in parts]``: every part but the first in a forked child.

    The results come back pickled through a file per child. A child that exits with an
    error, is killed, or leaves no readable result has its part worked here instead.
    ``meanwhile`` runs here once, after the first part, while the children still work.
    """
    if len(parts) <= 1 or not hasattr(os, "fork"):
        results = [work(part) for part in parts]
        if meanwhile is not None:
            meanwhile()
        return results
    with tempfile.TemporaryDirectory(prefix="rocmbot-jobs-") as folder:
        pending: list[tuple[int, str, list[P]]] = []
        try:
            for index, part in enumerate(parts[1:], start=1):
                out = os.path.join(folder, f"part-{index}.pickle")
                pending.append((_fork(work, part, out), out, part))
            results = [work(parts[0])]
            if meanwhile is not None:
                meanwhile()
            while pending:
                pid, out, part = pending[0]
                _, status = os.waitpid(pid, 0)
                del pending[0]  # reaped: never signalled again
                results.append(_result(os.waitstatus_to_exitcode(status), out, work, part))
            return results
        finally:
            for pid, _, _ in pending:  # this process failed: stop and reap the others
                _stop(pid)


def _fork(work: Callable[[list[P]], T], part: list[P], out: str) -> int:
    for stream in (sys.stdout, sys.stderr):
        stream.flush()  # nothing buffered here is written twice
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # an interrupt stops a child at once
        data = pickle.dumps(work(part), protocol=pickle.HIGHEST_PROTOCOL)
        with open(out, "wb") as handle:
            handle.write(data)
        code = 0
    except BaseException:  # the parent redoes the part; the child only has to exit
        log.warning("an audit process failed; its files are read again", exc_info=True)
    finally:
        os._exit(code)  # never return into the parent's code, nor run its clean-ups


def _result(code: int, out: str, work: Callable[[list[P]], T], part: list[P]) -> T:
    if code == 0:
        try:
            with open(out, "rb") as handle:
                return pickle.load(handle)  # type: ignore[no-any-return]
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            log.warning("an audit process left no readable result (%s); its files are read again", exc)
    else:
        log.warning("an audit process ended with status %s; its files are read again", code)
    return work(part)


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
