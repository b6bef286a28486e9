"""What every operation handler gets (the request context), how it fails, and how lists are paginated."""

from __future__ import annotations

import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from ghsim.auth import Caller
from ghsim.shapes import Shapes
from ghsim.spec import Operation
from ghsim.state import Repository, SimulatorState

DOCS = "https://docs.github.com/rest"


class ApiError(Exception):
    """An answer GitHub gives instead of the resource: status, message, optional ``errors``."""

    def __init__(
        self,
        status: int,
        message: str,
        errors: list[Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.errors, self.headers = status, message, errors, headers or {}

    def response(self) -> JSONResponse:
        return error_response(self.status, self.message, self.errors, self.headers)


def error_response(
    status: int, message: str, errors: list[Any] | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body: dict[str, Any] = {"message": message, "documentation_url": DOCS, "status": str(status)}
    if errors is not None:
        body["errors"] = errors
    return JSONResponse(body, status_code=status, headers=headers)


def not_found() -> ApiError:
    return ApiError(404, "Not Found")


def unprocessable(*errors: str) -> ApiError:
    """GitHub's 422 with string errors, as the reviews API answers."""
    return ApiError(422, "Unprocessable Entity", list(errors))


@dataclass
class Ctx:
    """One validated request."""

    request: Request
    state: SimulatorState
    shapes: Shapes
    caller: Caller
    operation: Operation
    params: dict[str, Any]
    body: Any

    @property
    def base(self) -> str:
        return self.shapes.base

    def repo(self) -> Repository:
        """The repository named by the path, if this caller may see it (404 otherwise, as GitHub hides it)."""
        full_name = f"{self.params['owner']}/{self.params['repo']}"
        repo = self.state.repos.get(full_name.lower())
        if repo is None or not self.may_see(repo):
            raise not_found()
        return repo

    def may_see(self, repo: Repository) -> bool:
        if repo.deleted:
            return False
        token = self.caller.token
        if token is None:
            return self.caller.kind != "installation"
        if token.repositories is not None and repo.name not in token.repositories:
            return False
        installed = self.state.installations.get(token.installation_id)
        if installed is None:
            return False
        target = repo.fork_of or repo
        owner_ok = installed.account.login.lower() in (repo.owner.login.lower(), target.owner.login.lower())
        listed = installed.repositories is None or bool(
            {repo.full_name, target.full_name} & installed.repositories
        )
        return owner_ok and listed

    def int_param(self, name: str) -> int:
        value = self.params[name]
        if not isinstance(value, int):
            raise not_found()
        return value


Handler = Callable[[Ctx], Response | Awaitable[Response]]
HANDLERS: dict[str, Handler] = {}


def handles(operation_id: str) -> Callable[[Handler], Handler]:
    """Register the handler of one operation of the description."""

    def register(handler: Handler) -> Handler:
        HANDLERS[operation_id] = handler
        return handler

    return register


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=headers)


def paginate(
    ctx: Ctx, items: Sequence[Any], *, wrap: Callable[[list[Any]], Any] | None = None
) -> JSONResponse:
    """One page of ``items`` (``per_page`` default 30, ``page`` from 1) with GitHub's ``Link`` header."""
    per_page = ctx.params.get("per_page", 30)
    page = max(1, ctx.params.get("page", 1))
    last = max(1, -(-len(items) // per_page))
    chunk = list(items[(page - 1) * per_page : page * per_page])
    links = []
    url = ctx.request.url
    query = dict(urllib.parse.parse_qsl(url.query))

    def link(number: int, rel: str) -> str:
        target = urllib.parse.urlencode({**query, "per_page": per_page, "page": number})
        return f'<{ctx.base}{url.path}?{target}>; rel="{rel}"'

    if page > 1:
        links += [link(page - 1, "prev"), link(1, "first")]
    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    headers = {"Link": ", ".join(links)} if links else None
    return json_response(wrap(chunk) if wrap else chunk, headers=headers)
