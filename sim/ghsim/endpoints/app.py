"""The App's own endpoints (installations, tokens, hook deliveries), permissions, teams, rate limit."""

from __future__ import annotations

import time
from typing import Any

from fastapi.responses import Response

from ghsim.endpoints.base import ApiError, Ctx, handles, json_response, not_found, paginate
from ghsim.state import iso


@handles("apps/get-authenticated")
def get_app(ctx: Ctx) -> Response:
    return json_response(ctx.shapes.app())


@handles("apps/list-installations")
def list_installations(ctx: Ctx) -> Response:
    installed = sorted(ctx.state.installations.values(), key=lambda i: i.id)
    return paginate(ctx, [ctx.shapes.installation(i) for i in installed])


@handles("apps/get-installation")
def get_installation(ctx: Ctx) -> Response:
    installed = ctx.state.installations.get(ctx.int_param("installation_id"))
    if installed is None:
        raise not_found()
    return json_response(ctx.shapes.installation(installed))


@handles("apps/get-repo-installation")
def get_repo_installation(ctx: Ctx) -> Response:
    repo = ctx.state.repos.get(f"{ctx.params['owner']}/{ctx.params['repo']}".lower())
    installed = ctx.state.installation_for(repo) if repo else None
    if installed is None:
        raise not_found()
    return json_response(ctx.shapes.installation(installed))


@handles("apps/create-installation-access-token")
def create_token(ctx: Ctx) -> Response:
    installed = ctx.state.installations.get(ctx.int_param("installation_id"))
    if installed is None:
        raise not_found()
    if installed.suspended:
        raise ApiError(403, "This installation has been suspended")
    body: dict[str, Any] = ctx.body or {}
    names: set[str] | None = set(body["repositories"]) if body.get("repositories") else None
    if body.get("repository_ids"):
        by_id = {r.id: r.name for r in ctx.state.repos.values()}
        names = (names or set()) | {by_id[i] for i in body["repository_ids"] if i in by_id}
    token = ctx.state.issue_token(installed, names)
    shape: dict[str, Any] = {
        "token": token.token,
        "expires_at": iso(token.expires_at),
        "permissions": body.get("permissions") or dict(ctx.state.app.permissions),
        "repository_selection": "selected"
        if names is not None or installed.repositories is not None
        else "all",
    }
    if names is not None:
        shape["repositories"] = [
            ctx.shapes.repository(r, full=False)
            for r in ctx.state.repos.values()
            if r.name in names and r.owner is installed.account
        ]
    return json_response(shape, 201)


# -- hook deliveries -----------------------------------------------------------------------------
@handles("apps/list-webhook-deliveries")
def list_deliveries(ctx: Ctx) -> Response:
    deliveries = sorted(ctx.state.deliveries, key=lambda d: -d.id)
    status = ctx.params.get("status")
    if status:
        deliveries = [d for d in deliveries if (d.status == "OK") == (status == "success")]
    cursor = str(ctx.params.get("cursor") or "")
    if cursor.startswith("v1_"):
        deliveries = [d for d in deliveries if d.id < int(cursor[3:] or 0)]
    per_page = ctx.params.get("per_page", 30)
    page = deliveries[:per_page]
    headers = None
    if len(deliveries) > per_page:
        following = f"{ctx.base}/app/hook/deliveries?per_page={per_page}&cursor=v1_{page[-1].id}"
        headers = {"Link": f'<{following}>; rel="next"'}
    return json_response([ctx.shapes.delivery(d) for d in page], headers=headers)


@handles("apps/get-webhook-delivery")
def get_delivery(ctx: Ctx) -> Response:
    wanted = ctx.int_param("delivery_id")
    found = next((d for d in ctx.state.deliveries if d.id == wanted), None)
    if found is None:
        raise not_found()
    return json_response(ctx.shapes.delivery(found, detail=True))


@handles("apps/redeliver-webhook-delivery")
async def redeliver(ctx: Ctx) -> Response:
    from ghsim.webhooks.delivery import redeliver_async

    wanted = ctx.int_param("delivery_id")
    with ctx.state.lock:
        found = next((d for d in ctx.state.deliveries if d.id == wanted), None)
    if found is None:
        raise not_found()
    await redeliver_async(ctx.state, found)
    return json_response({}, 202)


# -- people --------------------------------------------------------------------------------------
@handles("repos/get-collaborator-permission-level")
def collaborator_permission(ctx: Ctx) -> Response:
    repo = ctx.repo()
    login = str(ctx.params["username"])
    account = ctx.state.accounts.get(login.lower())
    if account is None:
        raise not_found()
    permission, role = ctx.state.permission(repo, login)
    user = {
        **ctx.shapes.user(account),
        "role_name": role,
        "permissions": {
            "admin": permission == "admin",
            "maintain": role in ("admin", "maintain"),
            "push": permission in ("admin", "write"),
            "triage": role not in {"read", "none"},
            "pull": permission != "none",
        },
    }
    return json_response({"permission": permission, "role_name": role, "user": user})


@handles("teams/get-membership-for-user-in-org")
def team_membership(ctx: Ctx) -> Response:
    org, team, login = (str(ctx.params[k]) for k in ("org", "team_slug", "username"))
    member = ctx.state.teams.get((org.lower(), team.lower()), {}).get(login.lower())
    if member is None:
        raise not_found()
    role, state = member
    return json_response(
        {
            "url": f"{ctx.base}/organizations/{org}/team/{team}/memberships/{login}",
            "role": role,
            "state": state,
        }
    )


@handles("rate-limit/get")
def rate_limit(ctx: Ctx) -> Response:
    limiter = ctx.request.app.limiter
    identity = ctx.caller.rate_identity
    resources = {}
    for name in ("core", "search", "graphql"):
        bucket = limiter.bucket(identity, name)
        resources[name] = {
            "limit": bucket.limit,
            "remaining": bucket.remaining(),
            "reset": int(bucket.reset),
            "used": bucket.used,
            "resource": name,
        }
    resources["search"] = {
        **resources["search"],
        "limit": 30,
        "remaining": 30,
        "used": 0,
        "reset": int(time.time()) + 60,
    }
    return json_response({"resources": resources, "rate": resources["core"]})
