"""The simulator's FastAPI app: an edge (faults, auth, rate limits, recording) around validated operations."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import urllib.parse
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from ghsim import blobs, endpoints
from ghsim.auth import AuthError, Caller, authenticate
from ghsim.endpoints.base import ApiError, Ctx, Handler, error_response
from ghsim.faults import SECONDARY_MESSAGE, Fault, FaultPlan, RateLimiter
from ghsim.graphql import execute
from ghsim.shapes import Shapes
from ghsim.spec import Operation, Spec, load_spec
from ghsim.state import Call, SimulatorState, ValidationFailure, iso

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_APP_ENDPOINT = re.compile(r"^/app(/|$)|^/repos/[^/]+/[^/]+/installation$")
_UNCOUNTED = ("/rate_limit",)
_AFTER = ("status_after", "answer_late", "drop_after")  # faults that let the request be carried out


class SimulatorApp(FastAPI):
    """A FastAPI app holding the simulator's state, fault plan and rate limiter."""

    sim: SimulatorState
    faults: FaultPlan
    limiter: RateLimiter
    spec: Spec
    require_auth: bool
    validate_responses: bool

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        await _edge(self, scope, receive, send)


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _parse(body: bytes) -> tuple[Any, bool]:
    """(parsed JSON, present); raw text when it is not JSON."""
    if not body.strip():
        return None, False
    try:
        return json.loads(body), True
    except ValueError:
        return body.decode("utf-8", "replace"), True


async def _send_json(send: Send, status: int, body: Any, headers: dict[str, str]) -> None:
    payload = json.dumps(body).encode()
    raw = [
        (b"content-type", b"application/json; charset=utf-8"),
        (b"content-length", str(len(payload)).encode()),
    ]
    raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})


async def _drop(send: Send) -> None:
    """Close the client's connection without an answer (uvicorn's transport is reached through ``send``)."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is None:
        raise ConnectionResetError("ghsim dropped the connection")
    transport.close()
    await asyncio.sleep(0.01)


_MESSAGES = {
    403: "Resource not accessible by integration",  # what GitHub says when the App lost access
    404: "Not Found",
    500: "Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def _fault_answer(
    fault: Fault, caller: Caller, limiter: RateLimiter, resource: str
) -> tuple[int, Any, dict[str, str]]:
    if fault.kind == "primary":
        bucket = limiter.exhaust(caller.rate_identity, resource, fault.reset_in)
        who = f"installation ID {caller.installation_id}" if caller.installation_id else "this identity"
        body = {
            "message": f"API rate limit exceeded for {who}. If you reach out to GitHub Support for help, "
            "please include the request ID ghsim.",
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
            "status": "403",
        }
        return 403, body, limiter.headers(bucket, resource)
    bucket, _ = limiter.consume(caller.rate_identity, resource)
    headers = limiter.headers(bucket, resource)
    if fault.kind in ("secondary", "too_many"):
        headers["retry-after"] = str(fault.retry_after or 1)
        body = {
            "message": SECONDARY_MESSAGE,
            "status": str(fault.status),
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
            "#about-secondary-rate-limits",
        }
        return fault.status, body, headers
    return fault.status, {"message": _MESSAGES.get(fault.status, "Server Error")}, headers


async def _edge(app: SimulatorApp, scope: Scope, receive: Receive, send: Send) -> None:
    state = app.sim
    method, path = scope["method"], scope["path"]
    query = dict(urllib.parse.parse_qsl(scope.get("query_string", b"").decode()))
    body = await _read_body(receive)
    parsed, _ = _parse(body)
    call = Call(method, path, query, parsed)
    with state.lock:
        state.requests += 1
        state.calls.append(call)
    delay, fault = app.faults.pick(method, path)
    if delay:
        await asyncio.sleep(delay)
    if fault is not None and fault.kind == "drop":
        call.fault = "drop"
        await _drop(send)
        return
    headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
    if path.startswith(blobs.PREFIX):  # a link the API gave: no token, no rate limit
        if fault is not None and fault.kind not in _AFTER:
            call.fault, call.status = fault.kind, fault.status
            await _send_json(send, fault.status, {"message": _MESSAGES.get(fault.status, "Server Error")}, {})
            return
        await blobs.serve(state, call, query, headers, send)
        return
    resource = "graphql" if path == "/graphql" else "core"
    try:
        caller = authenticate(
            state,
            headers.get("authorization"),
            app_endpoint=bool(_APP_ENDPOINT.match(path)),
            required=app.require_auth,
        )
    except AuthError as exc:
        call.status = 401
        bucket, _ = app.limiter.consume("anonymous", resource)
        await _send_json(
            send,
            401,
            {"message": str(exc), "documentation_url": "https://docs.github.com/rest", "status": "401"},
            app.limiter.headers(bucket, resource),
        )
        return
    call.installation_id = caller.installation_id
    after: Fault | None = None
    if fault is not None and fault.kind in _AFTER:  # carried out first, then answered otherwise
        after, fault = fault, None
    if fault is not None:
        call.fault = fault.kind
        status, answer, answer_headers = _fault_answer(fault, caller, app.limiter, resource)
        call.status = status
        await _send_json(send, status, answer, answer_headers)
        return
    if path in _UNCOUNTED:
        bucket, allowed = app.limiter.bucket(caller.rate_identity, resource), True
    else:
        bucket, allowed = app.limiter.consume(caller.rate_identity, resource)
    rate_headers = app.limiter.headers(bucket, resource)
    if not allowed:
        call.status = 403
        await _send_json(
            send,
            403,
            {
                "message": f"API rate limit exceeded for installation ID {caller.installation_id}.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
                "status": "403",
            },
            rate_headers,
        )
        return
    scope.setdefault("state", {})
    scope["ghsim"] = {"caller": caller, "call": call, "body": body, "rate": bucket}
    captured: dict[str, Any] = {"status": 0, "body": b""}

    async def replay() -> Message:
        if not captured.get("replayed"):
            captured["replayed"] = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    held: list[Message] = []

    async def send_with_headers(message: Message) -> None:
        if after is not None and after.kind != "answer_late":  # the client gets the fault's answer instead
            if message["type"] == "http.response.start":
                captured["status"] = message["status"]
            return
        if message["type"] == "http.response.start":
            captured["status"] = call.status = message["status"]  # before the client can see the answer
            message["headers"] = [
                *message.get("headers", []),
                *((k.encode(), v.encode()) for k, v in rate_headers.items()),
            ]
        elif message["type"] == "http.response.body" and app.validate_responses:
            captured["body"] += message.get("body", b"")
        if after is not None:  # answer_late: held until the work is done and the delay is over
            held.append(message)
            return
        await send(message)

    await FastAPI.__call__(app, scope, replay, send_with_headers)
    if after is not None and after.kind == "answer_late":
        call.fault = after.kind
        await asyncio.sleep(after.delay)
        for message in held:  # to a client that may have given up: then nobody reads it
            await send(message)
    elif after is not None and after.kind == "drop_after":
        call.fault = after.kind  # the status stays 0: the client got none
        await _drop(send)
        return
    elif after is not None:
        call.fault, call.status = after.kind, after.status  # already counted against the rate limit
        await _send_json(send, after.status, {"message": _MESSAGES.get(after.status, "Server Error")},
                         rate_headers)
        return
    operation = scope["ghsim"].get("operation")
    if app.validate_responses and operation is not None and 200 <= call.status < 300 and captured["body"]:
        problems = app.spec.validate_response(operation, call.status, json.loads(captured["body"]))
        if problems:
            with state.lock:
                state.response_failures.append(
                    ValidationFailure(method, path, operation.operation_id, "; ".join(problems[:5]))
                )


def _invalid(
    state: SimulatorState,
    request: Request,
    operation: Operation | None,
    message: str,
    body: Any,
    status: int = 422,
) -> JSONResponse:
    with state.lock:
        state.validation_failures.append(
            ValidationFailure(
                request.method, request.url.path, operation.operation_id if operation else None, message, body
            )
        )
    if status == 422 and not message.startswith(("Invalid request", "Validation Failed")):
        message = f"Invalid request.\n\n{message}"
    return error_response(status, message)


def _endpoint(
    app: SimulatorApp, operation: Operation, handler: Handler
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        state = app.sim
        edge = request.scope["ghsim"]
        edge["operation"] = operation
        edge["call"].operation = operation.operation_id
        query = dict(request.query_params)
        params, errors = app.spec.validate_parameters(operation, dict(request.path_params), query)
        body, present = _parse(edge["body"])
        if present and isinstance(body, str):
            return _invalid(state, request, operation, "Problems parsing JSON", body, 400)
        errors += app.spec.validate_body(operation, body, present)
        if errors:
            return _invalid(state, request, operation, "\n".join(errors), body)
        ctx = Ctx(
            request,
            state,
            Shapes(state, str(request.base_url).rstrip("/")),
            edge["caller"],
            operation,
            params,
            body if present else None,
        )
        result: Any
        try:
            if inspect.iscoroutinefunction(handler):
                result = handler(ctx)
            else:
                with state.lock:
                    result = handler(ctx)
            response: Response = await result if inspect.isawaitable(result) else result
        except ApiError as exc:
            if exc.status == 422:
                with state.lock:
                    state.validation_failures.append(
                        ValidationFailure(
                            request.method,
                            request.url.path,
                            operation.operation_id,
                            exc.message + (f": {exc.errors}" if exc.errors else ""),
                            body,
                        )
                    )
            return exc.response()
        return response

    return endpoint


async def _graphql(request: Request) -> Response:
    app: SimulatorApp = request.app
    edge = request.scope["ghsim"]
    body, present = _parse(edge["body"])
    if not present or isinstance(body, str):
        return _invalid(app.sim, request, None, "Problems parsing JSON", body, 400)
    caller: Caller = edge["caller"]
    bucket = edge["rate"]
    ctx = Ctx(
        request,
        app.sim,
        Shapes(app.sim, str(request.base_url).rstrip("/")),
        caller,
        Operation("POST", "/graphql", "graphql", [], None, False, {}),
        {},
        body,
    )

    rate = {
        "limit": bucket.limit,
        "remaining": bucket.remaining(),
        "used": bucket.used,
        "resetAt": iso(datetime.fromtimestamp(bucket.reset, UTC)),
    }
    answer = execute(app.sim, ctx.base, body, allowed=ctx.may_see, rate=rate)
    if "data" not in answer:
        with app.sim.lock:
            app.sim.validation_failures.append(
                ValidationFailure(
                    "POST", "/graphql", "graphql", "; ".join(e["message"] for e in answer["errors"]), body
                )
            )
    return JSONResponse(answer)


def _fastapi_path(template: str) -> str:
    return template.replace("{path}", "{path:path}")


def create_simulator(
    state: SimulatorState | None = None,
    *,
    faults: FaultPlan | None = None,
    limiter: RateLimiter | None = None,
    require_auth: bool = True,
    validate_responses: bool = False,
) -> SimulatorApp:
    """The simulator as an ASGI app.

    ``validate_responses`` also checks each 2xx answer against the description and records mismatches
    in ``state.response_failures`` (slower; the simulator's own tests turn it on).
    """
    app = SimulatorApp(title="GitHub simulator", docs_url=None, redoc_url=None, openapi_url=None)
    app.sim = state or SimulatorState()
    app.faults = faults or FaultPlan()
    app.limiter = limiter or RateLimiter()
    app.spec = load_spec()
    app.require_auth = require_auth
    app.validate_responses = validate_responses
    app.add_api_route("/graphql", _graphql, methods=["POST"])
    for operation in app.spec.operations:
        handler = endpoints.HANDLERS.get(operation.operation_id)
        if handler is None:
            raise RuntimeError(f"no handler for {operation.operation_id}")
        app.add_api_route(
            _fastapi_path(operation.template),
            _endpoint(app, operation, handler),
            methods=[operation.method],
            name=operation.operation_id,
        )

    @app.exception_handler(StarletteHTTPException)
    async def not_found(request: Request, exc: StarletteHTTPException) -> Response:
        return error_response(exc.status_code, "Not Found" if exc.status_code == 404 else str(exc.detail))

    return app
