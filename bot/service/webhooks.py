"""Sans-I/O webhook validation: HMAC over the raw body first, then parsing."""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SIGNATURE_HEADER = "x-hub-signature-256"

# Events a metric may name; any other `X-GitHub-Event` is counted as "other". The header of a
# rejected delivery is unauthenticated, and a label per distinct value would let anyone grow
# the service's memory (and /metrics) without bound.
METRIC_EVENTS = frozenset({
    "check_run", "check_suite", "github_app_authorization", "installation",
    "installation_repositories", "installation_target", "issue_comment", "meta", "ping",
    "pull_request", "pull_request_review", "pull_request_review_comment", "push",
    "workflow_dispatch", "workflow_job", "workflow_run",
})


def metric_event(name: str) -> str:
    """The metric label for an event name taken from a request header."""
    return name if name in METRIC_EVENTS else "other"


class WebhookError(Exception):
    """A delivery that cannot be accepted; ``status`` is the HTTP answer."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def sign(secret: bytes, body: bytes | bytearray) -> str:
    """The `X-Hub-Signature-256` value GitHub sends for ``body``."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify_signature(secrets: Sequence[bytes], body: bytes | bytearray, signature: str | None) -> None:
    """Accept the body if any configured secret signed it; compare in constant time."""
    if not signature:
        raise WebhookError(401, "missing X-Hub-Signature-256 header")
    if not signature.startswith("sha256="):
        raise WebhookError(401, "X-Hub-Signature-256 must start with sha256=")
    if not secrets:
        raise WebhookError(401, "no webhook secret is configured")
    matched = False
    for secret in secrets:  # check all, so timing does not tell which secret matched
        matched |= hmac.compare_digest(sign(secret, body), signature)
    if not matched:
        raise WebhookError(401, "signature does not match the body")


@dataclass(frozen=True)
class Delivery:
    """A validated webhook delivery."""

    id: str
    event: str
    payload: dict[str, Any]
    body: bytes
    payload_text: str  # the payload's JSON text, as sent


def parse_delivery(
    headers: Mapping[str, str], body: bytes | bytearray, secrets: Sequence[bytes], *, verify: bool = True
) -> Delivery:
    """Validate a webhook request (headers lower-cased) and parse its payload."""
    event = headers.get("x-github-event", "").strip()
    delivery_id = headers.get("x-github-delivery", "").strip()
    if verify:
        verify_signature(secrets, body, headers.get(SIGNATURE_HEADER))
    if not event:
        raise WebhookError(400, "missing X-GitHub-Event header")
    if not delivery_id:
        raise WebhookError(400, "missing X-GitHub-Delivery header")
    if len(event) > 100 or len(delivery_id) > 100:
        raise WebhookError(400, "X-GitHub-Event or X-GitHub-Delivery is too long")
    content_type = headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if content_type == "application/json":
        raw: bytes | bytearray = body
    elif content_type == "application/x-www-form-urlencoded":
        try:
            form = urllib.parse.parse_qs(body.decode("utf-8"), strict_parsing=True)
        except (UnicodeDecodeError, ValueError) as exc:
            raise WebhookError(400, f"form body does not parse: {exc}") from exc
        values = form.get("payload")
        if not values or len(values) != 1:
            raise WebhookError(400, "form body has no single `payload` field")
        raw = values[0].encode("utf-8")
    else:
        raise WebhookError(415, f"unsupported content type {content_type!r}: use application/json")
    try:
        text = raw.decode("utf-8")
        payload = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WebhookError(400, f"body is not valid JSON: {str(exc).splitlines()[0][:200]}") from exc
    if not isinstance(payload, dict):
        raise WebhookError(400, "payload must be a JSON object")
    return Delivery(delivery_id, event, payload, bytes(body), text)
