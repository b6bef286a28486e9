"""Downloads the API hands out as short-lived links: a job's log.

GitHub answers ``GET /repos/{o}/{r}/actions/jobs/{id}/logs`` with a 302 to a signed URL of its
blob storage that "expires after 1 minute". That storage is not the API: it wants no token
(the link is signed), counts against no rate limit, answers ranges (``bytes=a-b``, ``bytes=a-``;
another form is ignored and the whole blob sent), and refuses an expired or altered link with
403. Here the link is a loopback URL on the simulator's own port, under ``/_blobs/``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import time
import urllib.parse
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ghsim.state import Call, SimulatorState, WorkflowJob

PREFIX = "/_blobs/"
_JOB_LOG = re.compile(r"^/_blobs/job-logs/(\d+)$")
_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]

_DENIED = (b'<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthenticationFailed</Code>'
           b"<Message>Server failed to authenticate the request. Make sure the value of Authorization "
           b"header is formed correctly including the signature.</Message></Error>")
_MISSING = (b'<?xml version="1.0" encoding="utf-8"?><Error><Code>BlobNotFound</Code>'
            b"<Message>The specified blob does not exist.</Message></Error>")


def _signature(state: SimulatorState, path: str, expires: int) -> str:
    return hmac.new(state.link_key, f"{path}\n{expires}".encode(), hashlib.sha256).hexdigest()[:32]


def job_log_link(state: SimulatorState, base: str, job: WorkflowJob) -> str:
    """A signed link to a job's log, good for ``state.log_link_seconds``."""
    path = f"{PREFIX}job-logs/{job.id}"
    expires = int(time.time() + state.log_link_seconds)
    query = urllib.parse.urlencode({"se": expires, "sig": _signature(state, path, expires)})
    return f"{base}{path}?{query}"


def _valid(state: SimulatorState, path: str, query: dict[str, str]) -> bool:
    expires = query.get("se", "")
    if not expires.isdigit() or int(expires) < time.time():
        return False
    return hmac.compare_digest(query.get("sig", ""), _signature(state, path, int(expires)))


def _slice(size: int, wanted: str | None) -> tuple[int, int, int] | None:
    """(status, start, end exclusive) for a Range header; None when it cannot be satisfied."""
    found = _RANGE.match(wanted.strip()) if wanted else None
    if found is None:
        return 200, 0, size
    start = int(found.group(1))
    end = min(size, int(found.group(2)) + 1) if found.group(2) else size
    if start >= size or end <= start:
        return None
    return 206, start, end


async def serve(state: SimulatorState, call: Call, query: dict[str, str], headers: dict[str, str],
                send: Send) -> None:
    """Answer one download (the caller has recorded ``call``)."""
    call.headers = {k: v for k, v in headers.items() if k in ("range", "authorization")}
    if call.headers.get("authorization"):
        call.headers["authorization"] = "(sent)"
    found = _JOB_LOG.match(call.path)
    with state.lock:
        job = state.jobs.get(int(found.group(1))) if found else None
        data = job.log_bytes() if job is not None else b""
        cut_at = job.log_cut_at if job is not None else None
    if job is None:
        await _answer(send, call, 404, _MISSING, "application/xml")
        return
    if not _valid(state, call.path, query):
        await _answer(send, call, 403, _DENIED, "application/xml")
        return
    picked = _slice(len(data), headers.get("range"))
    if picked is None:
        await _answer(send, call, 416, b"", "application/xml", {"content-range": f"bytes */{len(data)}"})
        return
    status, start, end = picked
    extra = {"accept-ranges": "bytes"}
    if status == 206:
        extra["content-range"] = f"bytes {start}-{end - 1}/{len(data)}"
    body = data[start:end]
    if cut_at is None or cut_at >= len(body):
        await _answer(send, call, status, body, "text/plain", extra)
        return
    # the body stops short of its length: what a storage node that went away mid-answer sends
    call.status, call.fault = status, "cut"
    await send({"type": "http.response.start", "status": status,
                "headers": _headers(len(body), "text/plain", extra)})
    await send({"type": "http.response.body", "body": body[:cut_at], "more_body": True})
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is not None:
        transport.close()
    await asyncio.sleep(0.01)


def _headers(length: int, kind: str, extra: dict[str, str]) -> list[tuple[bytes, bytes]]:
    raw = [(b"content-type", kind.encode()), (b"content-length", str(length).encode())]
    return raw + [(k.encode(), v.encode()) for k, v in extra.items()]


async def _answer(send: Send, call: Call, status: int, body: bytes, kind: str,
                  extra: dict[str, str] | None = None) -> None:
    call.status = status
    headers = _headers(len(body), kind, extra or {})
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
