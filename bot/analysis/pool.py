"""A process pool for an audit's test files: forked workers that pull files as they go.

An audit does the same work for every test file (parse, markers, launches), and the files
do not depend on one another: the report of a revision whose files were worked by several
processes is the one a single process gives, as long as the results are put back in file
order. The work is uneven, though (on a real repository one test can cost a fifth of the
audit: an evaluation that runs to its step limit), so a fixed split leaves one process
waiting on the other. Instead the files are small parts, numbered in order, and each
process pulls the next part's number from a pipe the parent filled before forking, until
none is left; each process starts with a part of its own, so that no child goes without.

The workers are forked children: they start with everything the parent has already read
and worked out (the configuration, the file listing, the CI index), which the caller
prepares before calling :func:`fork_map` so that it is done once, not once per process.
The parent works parts too, after the work it does alone (``meanwhile``: the pin checks).
A child that fails in any way has its parts done again by the parent, so a report is never
missing a file.

Only a tree that says it survives a fork (``forkable``: a git revision, whose reader starts
a ``cat-file`` of its own in the child, or a folder) is split; on platforms without
``os.fork`` everything runs here.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import struct
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["MAX_PARTS", "MIN_FILES_PER_JOB", "default_jobs", "fork_map", "split", "usable"]

log = logging.getLogger(__name__)

T = TypeVar("T")
P = TypeVar("P")

# Below this many test files per process, forking and sending results back cost more than
# the other process saves (a file costs a few milliseconds to audit, a fork tens).
MIN_FILES_PER_JOB = 40

_INDEX = struct.Struct("<I")  # a part's number in the pipe: written all at once, read whole
# At most this many parts: their numbers must fit a pipe's buffer (4 KiB everywhere) before
# any reader starts.
MAX_PARTS = 1024


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


def fork_map(work: Callable[[list[P]], T], parts: list[list[P]], processes: int | None = None,
             meanwhile: Callable[[], object] | None = None) -> list[T]:
    """``[work(part) for part in parts]``, over ``processes`` (default: one per part): this
    one and forked children, each taking the next part not yet taken.

    Each child sends its results back pickled, through a file of its own. The parts of a
    child that exits with an error, is killed, or leaves no readable result are worked here
    instead. ``meanwhile`` runs here once: after the parts in one process, before this
    process takes its first part when there are others.
    """
    processes = min(len(parts), processes or len(parts))
    if processes <= 1 or not hasattr(os, "fork"):
        results = [work(part) for part in parts]
        if meanwhile is not None:
            meanwhile()
        return results
    if len(parts) > MAX_PARTS:
        raise ValueError(f"{len(parts)} parts: at most {MAX_PARTS}")
    read_fd, write_fd = os.pipe()
    try:
        # every part after each process's first, in order, written before any reader starts
        os.write(write_fd, b"".join(_INDEX.pack(i) for i in range(processes, len(parts))))
    finally:
        os.close(write_fd)
    import tempfile  # here, not at the top: only a split audit needs it

    with tempfile.TemporaryDirectory(prefix="rocmbot-jobs-") as folder:
        pending: list[tuple[int, str]] = []
        try:
            for first in range(1, processes):
                out = os.path.join(folder, f"worker-{first}.pickle")
                pending.append((_fork(work, parts, first, read_fd, out), out))
            if meanwhile is not None:
                meanwhile()
            done = _worker(work, parts, 0, read_fd)
            os.close(read_fd)
            read_fd = -1
            while pending:
                pid, out = pending[0]
                _, status = os.waitpid(pid, 0)
                del pending[0]  # reaped: never signalled again
                done.update(_result(os.waitstatus_to_exitcode(status), out))
            for index, part in enumerate(parts):  # what a failed child left undone
                if index not in done:
                    done[index] = work(part)
            return [done[index] for index in range(len(parts))]
        finally:
            if read_fd >= 0:
                os.close(read_fd)
            for pid, _ in pending:  # this process failed: stop and reap the others
                _stop(pid)


def _worker(work: Callable[[list[P]], T], parts: list[list[P]], first: int,
            queue: int) -> dict[int, T]:
    """Work part ``first``, then each part whose number the pipe gives, until it is empty."""
    done = {first: work(parts[first])}
    while len(data := os.read(queue, _INDEX.size)) == _INDEX.size:
        (index,) = _INDEX.unpack(data)
        done[index] = work(parts[index])
    return done


def _fork(work: Callable[[list[P]], T], parts: list[list[P]], first: int, queue: int,
          out: str) -> int:
    for stream in (sys.stdout, sys.stderr):
        stream.flush()  # nothing buffered here is written twice
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # an interrupt stops a child at once
        code = _child(work, parts, first, queue, out)
    finally:
        os._exit(code)  # never return into the parent's code, nor run its clean-ups


def _child(work: Callable[[list[P]], T], parts: list[list[P]], first: int, queue: int,
           out: str) -> int:
    """A child's parts, worked and pickled into ``out``; its exit status (1: it failed, and
    the parent redoes its parts)."""
    try:
        data = pickle.dumps(_worker(work, parts, first, queue), protocol=pickle.HIGHEST_PROTOCOL)
        with open(out, "wb") as handle:
            handle.write(data)
        return 0
    except BaseException:  # the parent redoes the parts; the child only has to exit
        log.warning("an audit process failed; its files are read again", exc_info=True)
        return 1


def _result(code: int, out: str) -> dict[int, T]:
    """A child's results by part number; empty when it left none (its parts are redone)."""
    if code == 0:
        try:
            with open(out, "rb") as handle:
                return pickle.load(handle)  # type: ignore[no-any-return]
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            log.warning("an audit process left no readable result (%s); its files are read again", exc)
    else:
        log.warning("an audit process ended with status %s; its files are read again", code)
    return {}


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
