"""Payloads and signed requests for service tests."""

from __future__ import annotations

import json
from typing import Any

from bot.core.events import Event
from bot.service.webhooks import sign

SECRET = b"test-secret"


def pr_payload(number: int = 1, sha: str = "a" * 40, action: str = "synchronize",
               repo: str = "octo/miles", before: str | None = None) -> dict[str, Any]:
    payload = {
        "action": action,
        "number": number,
        "pull_request": {"number": number, "head": {"sha": sha, "ref": "feature"},
                         "base": {"sha": "b" * 40, "ref": "main"}, "user": {"login": "dev"}},
        "repository": {"full_name": repo, "name": repo.partition("/")[2],
                       "owner": {"login": repo.partition("/")[0]}},
        "installation": {"id": 42},
        "sender": {"login": "dev"},
    }
    if before is not None:  # a push: synchronize deliveries name the head they replace
        payload["before"], payload["after"] = before, sha
    return payload


def comment_payload(number: int = 1, body: str = "/run-amd", repo: str = "octo/miles") -> dict[str, Any]:
    return {
        "action": "created",
        "issue": {"number": number, "pull_request": {"url": "x"}},
        "comment": {"id": 7, "body": body, "user": {"login": "maintainer"}},
        "repository": {"full_name": repo},
        "installation": {"id": 42},
        "sender": {"login": "maintainer"},
    }


def event_of(name: str, delivery_id: str, payload: dict[str, Any]) -> Event:
    return Event.from_payload(name, delivery_id, payload)


def signed(event: str, delivery_id: str, payload: dict[str, Any] | bytes,
           secret: bytes = SECRET) -> tuple[bytes, dict[str, str]]:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return body, {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id,
        "X-Hub-Signature-256": sign(secret, body),
    }
