"""The deadline of the delivery a worker thread is processing, and the two ways its GitHub
requests give up early: past the deadline, or told by GitHub when to come back.

The worker sets the deadline around each delivery (`deadline_in`); the GitHub port starts a
request only when the longest it can take still fits, and waits out a rate limit only when the
wait fits too. Outside a worker (the CLI, tests) there is no deadline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_local = threading.local()


class DeadlineError(Exception):
    """A GitHub request was not started: it could have run past the delivery's deadline."""


class RetryLaterError(Exception):
    """GitHub refused for now (a rate limit) and said when to try again: ``seconds`` from now."""

    def __init__(self, seconds: float, reason: str) -> None:
        super().__init__(f"{reason} (retry in {seconds:g} s)")
        self.seconds = seconds


@contextmanager
def deadline_in(seconds: float) -> Iterator[None]:
    """Within the block, this thread's work ends ``seconds`` from now."""
    previous = getattr(_local, "at", None)
    _local.at = time.monotonic() + seconds
    try:
        yield
    finally:
        _local.at = previous


def remaining() -> float | None:
    """Seconds left before this thread's deadline; None without one."""
    at: float | None = getattr(_local, "at", None)
    return None if at is None else at - time.monotonic()


def fits(seconds: float) -> bool:
    """Whether ``seconds`` of work (or waiting) ends before this thread's deadline."""
    left = remaining()
    return left is None or seconds <= left


def check(seconds: float, what: str) -> None:
    """Raise DeadlineError unless ``seconds`` of ``what`` fit before the deadline."""
    if not fits(seconds):
        raise DeadlineError(f"{what} could take {seconds:g} s, past the delivery's deadline "
                               f"({max(0.0, remaining() or 0.0):.1f} s left)")
