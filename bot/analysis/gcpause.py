"""Pausing Python's cycle collector while an analysis runs.

An analysis allocates syntax trees and evaluator values by the hundred thousand, and
nearly all of them are freed by reference counting as soon as a file is done with. The
cycle collector does not know that: allocations trigger collections, and each older
generation's collection walks every object still alive. On a large revision that walking
cost most of what parsing did, to find a few objects per test file (a revision's function
scopes and the classes they refer to), which one collection after the analysis finds as
well. So the collector is paused while analyses run and resumed, if it was running, once
the last one ends, whatever way it ends. A service whose analyses overlap without a break
would never get there: every ``COLLECT_EVERY`` analyses that end while others still run,
one collection is made by hand, so the garbage they leave stays bounded.

What an analysis holds in cycles (a module's functions refer to its scope, and the scope
to them) is emptied when it ends (``Snapshot.release``), before the collector resumes: the
revision's syntax trees and values are freed by reference counting, and the first
collection after the pause has nothing of them to walk.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

COLLECT_EVERY = 32


class _Pause:
    """Nested and concurrent pauses: the collector resumes when the last one ends, and
    only if it was running when the first began."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._resume = False
        self._ended = 0

    @contextmanager
    def __call__(self) -> Iterator[None]:
        self._begin()
        try:
            yield
        finally:
            self._end()

    def _begin(self) -> None:
        with self._lock:
            if self._active == 0:
                self._resume = gc.isenabled()
                gc.disable()
            self._active += 1

    def _end(self) -> None:
        with self._lock:
            self._active -= 1
            self._ended += 1
            if self._resume and self._active == 0:
                gc.enable()
            elif self._resume and self._ended % COLLECT_EVERY == 0:
                gc.collect()


paused = _Pause()
