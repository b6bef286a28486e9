"""Rate-limit accounting and an injectable fault plan: 5xx, secondary limits, 429, exhaustion, slow
and late answers, drops."""

from __future__ import annotations

import math
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

DOCS = "https://docs.github.com/rest"
SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID ghsim."
)


@dataclass
class Bucket:
    """One rate-limit window for one identity and resource."""

    limit: int
    used: int = 0
    reset: float = 0.0

    def remaining(self) -> int:
        return max(0, self.limit - self.used)


class RateLimiter:
    """Counts requests per (identity, resource) in hourly windows, as GitHub's primary limit does."""

    def __init__(self, limits: dict[str, int] | None = None, window: float = 3600.0) -> None:
        self.limits = {"core": 5000, "graphql": 5000, **(limits or {})}
        self.window = window
        self._buckets: dict[tuple[str, str], Bucket] = {}
        self._lock = threading.Lock()

    def bucket(self, identity: str, resource: str) -> Bucket:
        with self._lock:
            now = time.time()
            found = self._buckets.get((identity, resource))
            if found is None or now >= found.reset:
                found = Bucket(
                    self.limits.get(resource, self.limits["core"]), 0, math.ceil(now + self.window)
                )
                self._buckets[(identity, resource)] = found
            return found

    def consume(self, identity: str, resource: str) -> tuple[Bucket, bool]:
        """Count one request; False when the window is already spent."""
        found = self.bucket(identity, resource)
        with self._lock:
            if found.remaining() == 0:
                return found, False
            found.used += 1
            return found, True

    def exhaust(self, identity: str, resource: str, reset_in: float) -> Bucket:
        """Spend the window of ``identity`` until ``reset_in`` seconds from now."""
        with self._lock:
            limit = self.limits.get(resource, self.limits["core"])
            spent = Bucket(limit, limit, math.ceil(time.time() + reset_in))
            self._buckets[(identity, resource)] = spent
            return spent

    def headers(self, bucket: Bucket, resource: str) -> dict[str, str]:
        return {
            "x-ratelimit-limit": str(bucket.limit),
            "x-ratelimit-remaining": str(bucket.remaining()),
            "x-ratelimit-reset": str(int(bucket.reset)),
            "x-ratelimit-used": str(bucket.used),
            "x-ratelimit-resource": resource,
        }


@dataclass
class Fault:
    """One rule of the plan; ``times`` None means every matching request (subject to ``fraction``)."""

    # status, status_after, answer_late, drop_after, secondary, too_many, primary, slow, drop, before
    kind: str
    method: str | None = None
    path: str | re.Pattern[str] | None = None
    times: int | None = 1
    fraction: float | None = None
    status: int = 502
    retry_after: int | None = None
    delay: float = 0.0
    reset_in: float = 1.0
    hits: int = 0
    action: Callable[[], object] | None = None
    skip: int = 0  # matching requests let through before the rule applies
    seen: int = 0

    def matches(self, method: str, path: str) -> bool:
        if self.method and self.method.upper() != method.upper():
            return False
        if self.path is None:
            return True
        if isinstance(self.path, re.Pattern):
            return self.path.search(path) is not None
        return fnmatchcase(path, self.path)


@dataclass
class Injected:
    """A fault that was applied, for assertions."""

    kind: str
    method: str
    path: str
    status: int | None


@dataclass
class FaultPlan:
    """What goes wrong next. Rules are tried in the order added; ``slow`` rules add up and fall through.

    ``path`` is an fnmatch pattern over the request path (``/repos/*/pulls/*``) or a compiled regex.
    """

    seed: int = 0
    rules: list[Fault] = field(default_factory=list)
    injected: list[Injected] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)
        self._lock = threading.Lock()

    def reseed(self, seed: int) -> None:
        with self._lock:
            self.seed, self._random = seed, random.Random(seed)

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self.rules.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()

    # -- the kinds -------------------------------------------------------------------------------
    def fail(
        self,
        status: int = 502,
        *,
        times: int | None = 1,
        fraction: float | None = None,
        method: str | None = None,
        path: str | re.Pattern[str] | None = None,
    ) -> Fault:
        """Answer ``status`` (a 5xx; a 403 is access the App lost, not a rate limit) to the next
        ``times`` matching requests, or to a seeded ``fraction``."""
        return self.add(Fault("status", method, path, times, fraction, status=status))

    def fail_after(
        self,
        status: int = 502,
        *,
        times: int | None = 1,
        fraction: float | None = None,
        method: str | None = None,
        path: str | re.Pattern[str] | None = None,
    ) -> Fault:
        """Carry the request out, then answer ``status`` instead of its result: a write that was made
        although the client saw a 5xx (GitHub does this under load)."""
        return self.add(Fault("status_after", method, path, times, fraction, status=status))

    def answer_late(
        self,
        seconds: float,
        *,
        times: int | None = 1,
        fraction: float | None = None,
        method: str | None = None,
        path: str | re.Pattern[str] | None = None,
    ) -> Fault:
        """Carry the request out at once, then hold its answer ``seconds``: a write GitHub made
        while the client, its timeout shorter, gave up on the answer (``slow`` waits before the
        work instead: a write that lands after the client gave up)."""
        return self.add(Fault("answer_late", method, path, times, fraction, delay=seconds))

    def drop_after(
        self,
        *,
        times: int | None = 1,
        fraction: float | None = None,
        method: str | None = None,
        path: str | re.Pattern[str] | None = None,
    ) -> Fault:
        """Carry the request out, then close the connection without an answer."""
        return self.add(Fault("drop_after", method, path, times, fraction))

    def secondary_rate_limit(
        self,
        *,
        retry_after: int = 1,
        times: int | None = 1,
        fraction: float | None = None,
        method: str | None = None,
        path: str | re.Pattern[str] | None = None,
    ) -> Fault:
        """403 with GitHub's secondary-limit message and ``Retry-After``."""
        return self.add(
            Fault("secondary", method, path, times, fraction, status=403, retry_after=retry_after)
        )

    def too_many_requests(
        self,
        *,
        retry_after: int = 1,
        times: int | None = 1,
        fraction: float | None = None,
        method: str | None = None,
        path: str | re.Pattern[str] | None = None,
    ) -> Fault:
        """429 with ``Retry-After``."""
        return self.add(Fault("too_many", method, path, times, fraction, status=429, retry_after=retry_after))

    def exhaust_rate_limit(
        self,
        *,
        reset_in: float = 1.0,
        times: int | None = 1,
        fraction: float | None = None,
        method: str | None = None,
        path: str | re.Pattern[str] | None = None,
    ) -> Fault:
        """Spend the caller's primary window: 403 with remaining 0 until ``reset_in`` seconds pass."""
        return self.add(Fault("primary", method, path, times, fraction, status=403, reset_in=reset_in))

    def slow(
        self,
        seconds: float,
        *,
        times: int | None = None,
        fraction: float | None = None,
        method: str | None = None,
        path: str | re.Pattern[str] | None = None,
    ) -> Fault:
        """Sleep ``seconds`` before answering."""
        return self.add(Fault("slow", method, path, times, fraction, delay=seconds))

    def before(
        self,
        action: Callable[[], object],
        *,
        skip: int = 0,
        times: int | None = 1,
        method: str | None = None,
        path: str | re.Pattern[str] | None = None,
    ) -> Fault:
        """Run ``action`` (a push, say) just before the simulator answers a matching request,
        after letting ``skip`` of them through: something that happens on GitHub between two
        requests of the client."""
        return self.add(Fault("before", method, path, times, action=action, skip=skip))

    def drop(
        self,
        *,
        times: int | None = 1,
        fraction: float | None = None,
        method: str | None = None,
        path: str | re.Pattern[str] | None = None,
    ) -> Fault:
        """Close the connection without answering."""
        return self.add(Fault("drop", method, path, times, fraction))

    # -- applying --------------------------------------------------------------------------------
    def pick(self, method: str, path: str) -> tuple[float, Fault | None]:
        """(total delay, terminal fault) for one request; counts the rules it consumes."""
        delay, chosen, actions = 0.0, None, []
        with self._lock:
            for rule in self.rules:
                if (rule.times is not None and rule.hits >= rule.times) or not rule.matches(method, path):
                    continue
                rule.seen += 1
                if rule.seen <= rule.skip:
                    continue
                if rule.fraction is not None and self._random.random() >= rule.fraction:
                    continue
                rule.hits += 1
                if rule.kind == "slow":
                    delay += rule.delay
                    continue
                if rule.kind == "before":
                    assert rule.action is not None
                    actions.append(rule.action)
                    continue
                chosen = rule
                break
            if chosen is not None:
                self.injected.append(Injected(chosen.kind, method, path, chosen.status))
            elif delay:
                self.injected.append(Injected("slow", method, path, None))
        for action in actions:  # outside the lock: an action may add rules
            action()
        return delay, chosen

    def count(self, kind: str | None = None) -> int:
        """How many faults (of ``kind``) were injected."""
        return sum(1 for i in self.injected if kind is None or i.kind == kind)
