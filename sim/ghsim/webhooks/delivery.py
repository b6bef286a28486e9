"""Signing and sending webhooks the way GitHub does, and recording each delivery for the deliveries API."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import ssl
import time
import uuid
from typing import Any

import httpx

from ghsim.state import HookDelivery, SimulatorState

USER_AGENT = "GitHub-Hookshot/ghsim"


def sign(secret: str | bytes, body: bytes) -> str:
    """The ``X-Hub-Signature-256`` value for ``body``: ``sha256=`` and the HMAC-SHA256 hex digest."""
    key = secret.encode() if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def sign_sha1(secret: str | bytes, body: bytes) -> str:
    """The legacy ``X-Hub-Signature`` value."""
    key = secret.encode() if isinstance(secret, str) else secret
    return "sha1=" + hmac.new(key, body, hashlib.sha1).hexdigest()


def encode(payload: dict[str, Any]) -> bytes:
    """The body GitHub would send: compact JSON."""
    return json.dumps(payload, separators=(",", ":")).encode()


def webhook_headers(
    state: SimulatorState, event: str, body: bytes, *, secret: str | None, guid: str | None = None
) -> dict[str, str]:
    """GitHub's delivery headers (signatures only with a secret)."""
    headers = {
        "Accept": "*/*",
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": guid or str(uuid.uuid4()),
        "X-GitHub-Hook-ID": str(state.app.id * 10),
        "X-GitHub-Hook-Installation-Target-Type": "integration",
        "X-GitHub-Hook-Installation-Target-ID": str(state.app.id),
    }
    if secret:
        headers["X-Hub-Signature"] = sign_sha1(secret, body)
        headers["X-Hub-Signature-256"] = sign(secret, body)
    return headers


def record_delivery(
    state: SimulatorState,
    *,
    event: str,
    body: bytes,
    url: str,
    headers: dict[str, str],
    status_code: int,
    response_headers: dict[str, str] | None = None,
    response_body: str = "",
    duration: float = 0.0,
    redelivery: bool = False,
) -> HookDelivery:
    """Add one delivery to the App's deliveries (for a webhook sent by the simulator or by a test)."""
    try:
        payload = json.loads(body)
    except ValueError:
        payload = {}
    installation = payload.get("installation") if isinstance(payload, dict) else None
    repository = payload.get("repository") if isinstance(payload, dict) else None
    with state.lock:
        delivery = HookDelivery(
            id=12_000_000_000 + state.next_id(),
            guid=headers.get("X-GitHub-Delivery", str(uuid.uuid4())),
            event=event,
            action=payload.get("action") if isinstance(payload, dict) else None,
            url=url,
            request_headers=dict(headers),
            payload=body,
            status_code=status_code,
            response_headers=dict(response_headers or {}),
            response_body=response_body,
            duration=duration,
            installation_id=installation.get("id") if isinstance(installation, dict) else None,
            repository_id=repository.get("id") if isinstance(repository, dict) else None,
            redelivery=redelivery,
        )
        state.deliveries.append(delivery)
    return delivery


def _target(state: SimulatorState, url: str | None, secret: str | None) -> tuple[str, str | None]:
    target = url or state.app.webhook_url
    if not target:
        raise ValueError("no webhook URL: pass url= or call state.configure_webhook(url, secret)")
    return target, secret if secret is not None else state.app.webhook_secret


@functools.cache
def tls() -> ssl.SSLContext:
    """One TLS context for every delivery: each is a connection of its own, as GitHub makes
    them, but reading the system's certificates for each costs more than the delivery."""
    return ssl.create_default_context()


def deliver(
    state: SimulatorState,
    event: str,
    payload: dict[str, Any],
    *,
    url: str | None = None,
    secret: str | None = None,
    guid: str | None = None,
    timeout: float = 30.0,
) -> HookDelivery:
    """POST one webhook to ``url`` (default: the App's webhook URL) and record the delivery and its status.

    A run's news that ``state.news`` holds back is not sent now (the answer is marked ``held``
    and not recorded); news it releases goes out after this delivery (see ``ghsim.order``)."""
    guid = guid or str(uuid.uuid4())
    target, key = _target(state, url, secret)
    if state.news.take(event, payload, url, secret, guid) is not None:
        body = encode(payload)
        return HookDelivery(0, guid, event, payload.get("action"), target,
                            webhook_headers(state, event, body, secret=key, guid=guid), body, 0, {}, "", 0.0,
                            None, None, held=True)
    sent = _send(state, event, payload, url=url, secret=secret, guid=guid, timeout=timeout)
    for later in state.news.due(event, payload):
        _send(state, later.event, later.payload, url=later.url, secret=later.secret, guid=later.guid,
              timeout=timeout)
    return sent


def deliver_held(
    state: SimulatorState, run_id: int | None = None, timeout: float = 30.0
) -> list[HookDelivery]:
    """Send what ``state.news`` holds (of one run, or all) now, in the order it was held."""
    return [_send(state, h.event, h.payload, url=h.url, secret=h.secret, guid=h.guid, timeout=timeout)
            for h in state.news.release(run_id)]


def _send(
    state: SimulatorState,
    event: str,
    payload: dict[str, Any],
    *,
    url: str | None,
    secret: str | None,
    guid: str,
    timeout: float,
) -> HookDelivery:
    target, key = _target(state, url, secret)
    body = encode(payload)
    headers = webhook_headers(state, event, body, secret=key, guid=guid)
    started = time.monotonic()
    try:
        with httpx.Client(timeout=timeout, verify=tls()) as client:
            answer = client.post(target, content=body, headers=headers)
        status, answer_headers, text = answer.status_code, dict(answer.headers), answer.text
    except httpx.HTTPError as exc:
        status, answer_headers, text = 0, {}, str(exc)
    return record_delivery(
        state,
        event=event,
        body=body,
        url=target,
        headers=headers,
        status_code=status,
        response_headers=answer_headers,
        response_body=text,
        duration=time.monotonic() - started,
    )


async def redeliver_async(
    state: SimulatorState, original: HookDelivery, timeout: float = 30.0
) -> HookDelivery:
    """Send a recorded delivery again (same GUID and body): ``POST /app/hook/deliveries/{id}/attempts``."""
    started = time.monotonic()
    try:
        async with httpx.AsyncClient(timeout=timeout, verify=tls()) as client:
            answer = await client.post(
                original.url, content=original.payload, headers=original.request_headers
            )
        status, answer_headers, text = answer.status_code, dict(answer.headers), answer.text
    except httpx.HTTPError as exc:
        status, answer_headers, text = 0, {}, str(exc)
    return record_delivery(
        state,
        event=original.event,
        body=original.payload,
        url=original.url,
        headers=original.request_headers,
        status_code=status,
        response_headers=answer_headers,
        response_body=text,
        duration=time.monotonic() - started,
        redelivery=True,
    )
