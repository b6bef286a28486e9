"""GitHub Actions: workflows, ``workflow_dispatch`` checked against the workflow's inputs, runs, cancel,
a job's log (a 302 to a short-lived link).

A dispatched run may be missing from the run lists (and from ``GET .../runs/{id}``) for a while
after its dispatch was answered, as on GitHub: ``SimulatorState.run_listing_delay`` and
``run_lookup_delay`` (0 by default: at once)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import yaml
from fastapi.responses import Response

from ghsim.blobs import job_log_link
from ghsim.endpoints.base import ApiError, Ctx, handles, json_response, not_found, paginate
from ghsim.state import Repository, Workflow, WorkflowRun, utcnow

_EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def _workflow(ctx: Ctx, repo: Repository) -> Workflow:
    wanted = str(ctx.params["workflow_id"])
    for workflow in repo.workflows.values():
        if wanted in (str(workflow.id), workflow.path, workflow.path.rsplit("/", 1)[-1]):
            return workflow
    raise not_found()


def dispatch_inputs(text: str) -> dict[str, dict[str, Any]] | None:
    """The ``workflow_dispatch`` inputs a workflow declares (None: it has no such trigger)."""
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(loaded, dict):
        return None
    triggers = loaded.get("on", loaded.get(True))  # YAML 1.1 reads a bare ``on`` as true
    if triggers == "workflow_dispatch":
        return {}
    if isinstance(triggers, list):
        return {} if "workflow_dispatch" in triggers else None
    if isinstance(triggers, dict) and "workflow_dispatch" in triggers:
        spec = triggers["workflow_dispatch"] or {}
        inputs = spec.get("inputs") if isinstance(spec, dict) else None
        return {str(k): (v or {}) for k, v in (inputs or {}).items()}
    return None


def check_inputs(declared: dict[str, dict[str, Any]], given: dict[str, Any]) -> dict[str, Any]:
    """The inputs a run gets (given values over defaults), or ApiError(422) with GitHub's message."""
    unexpected = [name for name in given if name not in declared]
    if unexpected:
        raise ApiError(422, f"Unexpected inputs provided: {json.dumps(unexpected)}")
    values: dict[str, Any] = {}
    for name, spec in declared.items():
        if name not in given:
            if spec.get("required") and spec.get("default") is None:
                raise ApiError(422, f"Required input '{name}' not provided")
            if spec.get("default") is not None:
                values[name] = spec["default"]
            continue
        value = given[name]
        kind = spec.get("type", "string")
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if kind == "choice" and text not in [str(o) for o in spec.get("options") or []]:
            raise ApiError(
                422, f"Provided value '{text}' for input '{name}' not in the list of allowed values"
            )
        if kind == "boolean" and text not in ("true", "false"):
            raise ApiError(422, f"Provided value '{text}' for input '{name}' is not a valid boolean")
        if kind == "number" and not re.fullmatch(r"-?\d+(\.\d+)?", text):
            raise ApiError(422, f"Provided value '{text}' for input '{name}' is not a valid number")
        values[name] = value
    return values


def render_title(template: str, inputs: dict[str, Any], ref: str, actor: str) -> str:
    """``run-name`` with ``${{ inputs.x }}``, ``${{ github.event.inputs.x }}``, ref and actor filled in."""

    def replace(match: re.Match[str]) -> str:
        expression = match.group(1)
        for prefix in ("inputs.", "github.event.inputs."):
            if expression.startswith(prefix):
                value = inputs.get(expression.removeprefix(prefix), "")
                return str(value).lower() if isinstance(value, bool) else str(value)
        return {
            "github.ref_name": ref,
            "github.ref": f"refs/heads/{ref}",
            "github.actor": actor,
            "github.event_name": "workflow_dispatch",
        }.get(expression, "")

    return _EXPRESSION.sub(replace, template)


@handles("actions/list-repo-workflows")
def list_workflows(ctx: Ctx) -> Response:
    repo = ctx.repo()
    shaped = [ctx.shapes.workflow(repo, w) for w in sorted(repo.workflows.values(), key=lambda w: w.id)]
    return paginate(ctx, shaped, wrap=lambda page: {"total_count": len(shaped), "workflows": page})


@handles("actions/get-workflow")
def get_workflow(ctx: Ctx) -> Response:
    repo = ctx.repo()
    return json_response(ctx.shapes.workflow(repo, _workflow(ctx, repo)))


@handles("actions/create-workflow-dispatch")
def dispatch(ctx: Ctx) -> Response:
    repo = ctx.repo()
    workflow = _workflow(ctx, repo)
    ref = str(ctx.body["ref"]).removeprefix("refs/heads/").removeprefix("refs/tags/")
    commit = repo.resolve(ref) if ref in repo.branches or ref in repo.tags else None
    if commit is None:
        raise ApiError(422, f"No ref found for: {ctx.body['ref']}")
    entry = commit.files.get(workflow.path)
    text = repo.store.blobs[entry.sha].decode("utf-8", "replace") if entry else workflow.text
    declared = dispatch_inputs(text)
    if declared is None:
        raise ApiError(422, "Workflow does not have 'workflow_dispatch' trigger")
    inputs = check_inputs(declared, dict(ctx.body.get("inputs") or {}))
    loaded = yaml.safe_load(text)
    run_name = loaded.get("run-name") if isinstance(loaded, dict) else None
    actor = ctx.state.bot
    title = render_title(str(run_name), inputs, ref, actor.login) if run_name else workflow.name
    number = 1 + sum(1 for r in ctx.state.runs.values() if r.workflow_id == workflow.id)
    run = WorkflowRun(
        170_000_000 + ctx.state.next_id(),
        workflow.id,
        workflow.name,
        title,
        number,
        "workflow_dispatch",
        ref,
        commit.sha,
        actor,
        workflow.path,
        inputs,
    )
    now = time.time()
    run.listed_at = now + ctx.state.run_listing_delay
    run.found_at = now + ctx.state.run_lookup_delay
    ctx.state.runs[run.id] = run
    if ctx.body.get("return_run_details"):
        api = f"{ctx.shapes.repo_url(repo)}/actions/runs/{run.id}"
        return json_response(
            {
                "workflow_run_id": run.id,
                "run_url": api,
                "html_url": f"{ctx.shapes.html(repo)}/actions/runs/{run.id}",
            }
        )
    return Response(status_code=204)


def _runs(ctx: Ctx, repo: Repository, workflow: Workflow | None) -> Response:
    now = time.time()
    runs = [
        r
        for r in ctx.state.runs.values()
        if r.workflow_id in repo.workflows and (workflow is None or r.workflow_id == workflow.id)
        and r.listed(now)
    ]
    params = ctx.params
    status = params.get("status")
    runs = [
        r
        for r in runs
        if params.get("actor") in (None, r.actor.login)
        and params.get("branch") in (None, r.head_branch)
        and params.get("event") in (None, r.event)
        and params.get("head_sha") in (None, r.head_sha)
        and status in (None, r.status, r.conclusion)
    ]
    runs.sort(key=lambda r: -r.id)
    shaped = [ctx.shapes.workflow_run(repo, r) for r in runs]
    return paginate(ctx, shaped, wrap=lambda page: {"total_count": len(shaped), "workflow_runs": page})


@handles("actions/list-workflow-runs-for-repo")
def list_runs(ctx: Ctx) -> Response:
    return _runs(ctx, ctx.repo(), None)


@handles("actions/list-workflow-runs")
def list_workflow_runs(ctx: Ctx) -> Response:
    repo = ctx.repo()
    return _runs(ctx, repo, _workflow(ctx, repo))


def _run(ctx: Ctx) -> tuple[Repository, WorkflowRun]:
    repo = ctx.repo()
    run = ctx.state.runs.get(ctx.int_param("run_id"))
    if run is None or run.workflow_id not in repo.workflows or not run.found(time.time()):
        raise not_found()
    return repo, run


@handles("actions/get-workflow-run")
def get_run(ctx: Ctx) -> Response:
    repo, run = _run(ctx)
    return json_response(ctx.shapes.workflow_run(repo, run))


@handles("actions/list-jobs-for-workflow-run")
def list_jobs(ctx: Ctx) -> Response:
    repo, run = _run(ctx)
    shaped = [ctx.shapes.workflow_job(repo, run, job) for job in ctx.state.jobs_of(run.id)]
    return paginate(ctx, shaped, wrap=lambda page: {"total_count": len(shaped), "jobs": page})


@handles("actions/download-job-logs-for-workflow-run")
def job_logs(ctx: Ctx) -> Response:
    """A 302 to a link that serves the job's log for a minute (``ghsim.blobs``); 404 for a job
    the repository does not have, that never started or whose log was deleted, 410 for a log
    past its retention."""
    repo = ctx.repo()
    job = ctx.state.jobs.get(ctx.int_param("job_id"))
    run = ctx.state.runs.get(job.run_id) if job is not None else None
    if job is None or run is None or run.workflow_id not in repo.workflows or job.started_at is None:
        raise not_found()
    if job.log_gone == 410:
        raise ApiError(410, "Gone")
    if job.log_gone is not None:
        raise not_found()
    return Response(status_code=302, headers={"Location": job_log_link(ctx.state, ctx.base, job)})


@handles("actions/cancel-workflow-run")
def cancel_run(ctx: Ctx) -> Response:
    _, run = _run(ctx)
    if run.status == "completed":
        raise ApiError(409, "Cannot cancel a workflow run that is completed.")
    run.status, run.conclusion, run.updated_at = "completed", "cancelled", utcnow()
    return json_response({}, 202)
