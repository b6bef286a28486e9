"""What GitHub answers for good: the thing a delivery is about is out of the App's reach.

A repository or PR that no longer exists (404, 410: deleted, or transferred where the App is
not installed) or access the App lost (403 that is not a rate limit: the installation suspended,
a permission withdrawn) does not come back by asking again. The GitHub port raises an error
that is also an :class:`OutOfReach`, so the worker, which does not know the port, ends the
delivery at once instead of retrying it until it is dead-lettered.
"""

from __future__ import annotations


class OutOfReach(Exception):  # noqa: N818 - the name says what GitHub said
    """A mix-in of the port's errors: GitHub answered ``http_status`` to ``request`` for good."""

    http_status: int = 0
    request: str = ""

    @property
    def lost_access(self) -> bool:
        """403: the App may not (an operator can restore access); else what was asked is gone."""
        return self.http_status == 403

    def describe(self) -> str:
        what = "access lost" if self.lost_access else "gone"
        return f"GitHub answered {self.http_status} to {self.request} ({what})"

