"""The event model: what a delivery is about (repository, PR, head SHA), read from its payload."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


_INT64 = 1 << 63


def _int(value: Any) -> int | None:
    """An id or a number: a JSON integer a database column can hold (64-bit signed)."""
    if isinstance(value, int) and not isinstance(value, bool) and -_INT64 <= value < _INT64:
        return value
    return None


def _str(value: Any) -> str | None:
    """A name or a SHA: a JSON string a database column can hold (no NUL, no lone surrogate,
    which JSON's `\\u` escapes can spell but UTF-8 cannot encode)."""
    if not isinstance(value, str) or "\0" in value:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


@dataclass(frozen=True)
class Event:
    """One webhook event, with the fields routing and ordering need pulled out."""

    name: str
    delivery_id: str
    payload: dict[str, Any] = field(repr=False)
    action: str | None = None
    installation_id: int | None = None
    repository: str | None = None  # owner/name
    pr_number: int | None = None
    head_sha: str | None = None
    sender: str | None = None

    @property
    def pr_key(self) -> str | None:
        """What serialises processing: one PR of one repository."""
        if self.repository is None or self.pr_number is None:
            return None
        return f"{self.repository}#{self.pr_number}"

    @classmethod
    def from_payload(cls, name: str, delivery_id: str, payload: dict[str, Any]) -> Event:
        pr_number: int | None = None
        head_sha: str | None = None
        pr = payload.get("pull_request")
        if isinstance(pr, dict):
            pr_number = _int(pr.get("number"))
            head_sha = _str(_get(pr, "head", "sha"))
        elif isinstance(payload.get("issue"), dict) and _get(payload, "issue", "pull_request") is not None:
            pr_number = _int(_get(payload, "issue", "number"))
        for run_key in ("check_run", "check_suite", "workflow_run"):
            run = payload.get(run_key)
            if isinstance(run, dict):
                head_sha = head_sha or _str(run.get("head_sha"))
                prs = run.get("pull_requests")
                if pr_number is None and isinstance(prs, list) and prs and isinstance(prs[0], dict):
                    pr_number = _int(prs[0].get("number"))
        if pr_number is None and name == "pull_request":
            pr_number = _int(payload.get("number"))
        return cls(
            name=name,
            delivery_id=delivery_id,
            payload=payload,
            action=_str(payload.get("action")),
            installation_id=_int(_get(payload, "installation", "id")),
            repository=_str(_get(payload, "repository", "full_name")),
            pr_number=pr_number,
            head_sha=head_sha,
            sender=_str(_get(payload, "sender", "login")),
        )
