"""Check runs: create, update (annotations accumulate), get, list annotations, list for a ref."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi.responses import Response

from ghsim.endpoints.base import ApiError, Ctx, handles, json_response, not_found, paginate
from ghsim.state import CheckRun, utcnow

MAX_ANNOTATIONS = 50


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _apply(ctx: Ctx, run: CheckRun, body: dict[str, Any]) -> None:
    output = body.get("output") or {}
    annotations = output.get("annotations") or []
    if len(annotations) > MAX_ANNOTATIONS:
        raise ApiError(
            422, f"Only {MAX_ANNOTATIONS} annotations are allowed per request; got {len(annotations)}."
        )
    conclusion = body.get("conclusion", run.conclusion)
    status = "completed" if "conclusion" in body else body.get("status", run.status)
    if (status == "completed" or body.get("completed_at")) and not conclusion:
        raise ApiError(
            422,
            "Validation Failed",
            [
                {
                    "resource": "CheckRun",
                    "code": "missing_field",
                    "field": "conclusion",
                    "message": "conclusion must be given when status is completed",
                }
            ],
        )
    for key in ("name", "details_url", "external_id"):
        if key in body:
            setattr(run, key, body[key])
    run.status, run.conclusion = status, conclusion
    if "started_at" in body:
        run.started_at = _when(body["started_at"])
    if status == "completed":
        run.completed_at = _when(body.get("completed_at")) or run.completed_at or utcnow()
    if output:
        run.title, run.summary = output.get("title", run.title), output.get("summary", run.summary)
        run.text = output.get("text", run.text)
        run.annotations.extend(annotations)
    if "actions" in body:
        run.actions = list(body["actions"])


@handles("checks/create")
def create_check_run(ctx: Ctx) -> Response:
    repo = ctx.repo()
    head_sha = ctx.body["head_sha"]
    if repo.resolve(head_sha) is None or len(head_sha) != 40:
        raise ApiError(422, f"No commit found for SHA: {head_sha}")
    suite = next((r.check_suite_id for r in ctx.state.check_runs_for(repo, head_sha)), 0)
    run = CheckRun(
        6_000_000 + ctx.state.next_id(),
        repo,
        ctx.body["name"],
        head_sha,
        ctx.state.app.id,
        check_suite_id=suite or 5_000_000 + ctx.state.next_id(),
    )
    _apply(ctx, run, {"status": "queued", **ctx.body})
    ctx.state.check_runs[run.id] = run
    return json_response(ctx.shapes.check_run(run), 201)


def _run(ctx: Ctx) -> CheckRun:
    repo = ctx.repo()
    run = ctx.state.check_runs.get(ctx.int_param("check_run_id"))
    if run is None or run.repo is not repo:
        raise not_found()
    return run


@handles("checks/update")
def update_check_run(ctx: Ctx) -> Response:
    run = _run(ctx)
    _apply(ctx, run, ctx.body or {})
    return json_response(ctx.shapes.check_run(run))


@handles("checks/get")
def get_check_run(ctx: Ctx) -> Response:
    return json_response(ctx.shapes.check_run(_run(ctx)))


@handles("checks/list-annotations")
def list_annotations(ctx: Ctx) -> Response:
    run = _run(ctx)
    return paginate(ctx, [ctx.shapes.annotation(run, a) for a in run.annotations])


@handles("checks/list-for-ref")
def list_for_ref(ctx: Ctx) -> Response:
    repo = ctx.repo()
    commit = repo.resolve(ctx.params["ref"])
    if commit is None:
        raise ApiError(422, f"No commit found for SHA: {ctx.params['ref']}")
    runs = sorted(ctx.state.check_runs_for(repo, commit.sha), key=lambda r: -r.id)
    name, status, app_id = ctx.params.get("check_name"), ctx.params.get("status"), ctx.params.get("app_id")
    runs = [
        r
        for r in runs
        if name in (None, r.name) and status in (None, r.status) and app_id in (None, r.app_id)
    ]
    if ctx.params.get("filter", "latest") == "latest":
        seen: set[str] = set()
        runs = [r for r in runs if not (r.name in seen or seen.add(r.name))]  # type: ignore[func-returns-value]
    shaped = [ctx.shapes.check_run(r) for r in runs]
    return paginate(ctx, shaped, wrap=lambda page: {"total_count": len(shaped), "check_runs": page})
