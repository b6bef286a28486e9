"""Workflow dispatch checked against the workflow's inputs; the runs it creates: list, get, cancel;
their jobs' logs."""

from __future__ import annotations

import time
from typing import Any

import github
import httpx
import pytest

from ghsim import Simulator
from tests.ghsim.conftest import World


def workflow(gh: github.Github) -> github.Workflow.Workflow:
    return gh.get_repo("rocm-org/miles").get_workflow("rocm-targeted.yml")


def test_dispatch_creates_a_run_whose_title_carries_an_input(sim: Simulator, gh: github.Github) -> None:
    flow = workflow(gh)
    assert flow.name == "ROCm targeted tests"
    assert flow.create_dispatch("main", {"tests": "tests/e2e/test_short.py", "dry_run": "true"}) is True
    runs = list(gh.get_repo("rocm-org/miles").get_workflow_runs())
    assert len(runs) == 1
    run = runs[0]
    assert (run.display_title, run.name, run.event, run.status) == (
        "ROCm: tests/e2e/test_short.py",
        "ROCm targeted tests",
        "workflow_dispatch",
        "queued",
    )
    assert run.head_sha == sim.state.repos["rocm-org/miles"].branches["main"]
    stored = sim.state.runs[run.id]
    assert stored.inputs == {
        "tests": "tests/e2e/test_short.py",
        "suite": "stage-c-4-gpu-mi350",
        "dry_run": "true",
    }
    dispatches = sim.state.find_calls("POST", "/repos/*/actions/workflows/*/dispatches")
    assert [c.status for c in dispatches] == [204]
    assert dispatches[0].body == {
        "ref": "main",
        "inputs": {"tests": "tests/e2e/test_short.py", "dry_run": "true"},
    }


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"tests": "a", "bogus": "1", "other": "2"}, 'Unexpected inputs provided: ["bogus", "other"]'),
        ({}, "Required input 'tests' not provided"),
        (
            {"tests": "a", "suite": "stage-z"},
            "Provided value 'stage-z' for input 'suite' not in the list of allowed values",
        ),
        (
            {"tests": "a", "dry_run": "maybe"},
            "Provided value 'maybe' for input 'dry_run' is not a valid boolean",
        ),
    ],
)
def test_dispatch_inputs_are_checked_against_the_workflow_file(
    sim: Simulator, gh: github.Github, inputs: dict[str, str], message: str
) -> None:
    assert workflow(gh).create_dispatch("main", inputs) is False  # PyGithub reports a non-204 as False
    assert sim.state.find_calls("POST", "*/dispatches")[-1].status == 422
    assert sim.state.runs == {}
    failure = sim.state.validation_failures[-1]
    assert (failure.operation, failure.message) == ("actions/create-workflow-dispatch", message)


def test_dispatch_to_a_missing_ref_or_a_workflow_without_the_trigger_is_refused(
    sim: Simulator, world: World, gh: github.Github
) -> None:
    assert workflow(gh).create_dispatch("no-such-branch", {"tests": "a"}) is False
    assert sim.state.validation_failures[-1].message == "No ref found for: no-such-branch"
    sim.state.commit(world.repo, {".github/workflows/pr.yml": "name: PR\non: [pull_request]\n"})
    assert gh.get_repo("rocm-org/miles").get_workflow("pr.yml").create_dispatch("main") is False
    assert sim.state.validation_failures[-1].message == "Workflow does not have 'workflow_dispatch' trigger"


def test_return_run_details_answers_200_with_the_run(sim: Simulator, world: World) -> None:
    token = sim.state.issue_token(world.installation).token
    flow = next(iter(world.repo.workflows.values()))
    answer = httpx.post(
        f"{sim.url}/repos/rocm-org/miles/actions/workflows/{flow.id}/dispatches",
        headers={"Authorization": f"token {token}"},
        json={"ref": "main", "inputs": {"tests": "x"}, "return_run_details": True},
    )
    assert answer.status_code == 200
    details = answer.json()
    assert details["run_url"] == f"{sim.url}/repos/rocm-org/miles/actions/runs/{details['workflow_run_id']}"


def test_runs_are_listed_filtered_fetched_and_cancelled(sim: Simulator, gh: github.Github) -> None:
    flow = workflow(gh)
    flow.create_dispatch("main", {"tests": "one"})
    flow.create_dispatch("feature", {"tests": "two"})
    repo = gh.get_repo("rocm-org/miles")
    first, second = sorted(sim.state.runs)
    sim.state.set_run_status(first, "completed", "success")
    feature: Any = "feature"  # PyGithub sends a branch name as given; its annotation says Branch
    assert [r.id for r in repo.get_workflow_runs(branch=feature)] == [second]
    assert [r.id for r in repo.get_workflow_runs(status="success")] == [first]
    assert [r.id for r in flow.get_runs()] == [second, first]
    run = repo.get_workflow_run(second)
    assert run.run_number == 2
    assert run.cancel() is True
    assert repo.get_workflow_run(second).conclusion == "cancelled"
    assert repo.get_workflow_run(first).cancel() is False  # 409: it is already completed
    assert sim.state.find_calls("POST", "*/cancel")[-1].status == 409


def test_a_dispatched_run_is_listed_and_found_only_after_githubs_delay(
    sim: Simulator, gh: github.Github
) -> None:
    """GitHub answers a dispatch before its run shows: the lists (the workflow's and the
    repository's) and the run's own URL miss it for a while."""
    sim.state.run_listing_delay = sim.state.run_lookup_delay = 3.0
    flow = workflow(gh)
    repo = gh.get_repo("rocm-org/miles")
    assert flow.create_dispatch("main", {"tests": "late"}) is True
    (run,) = sim.state.runs.values()
    assert [r.id for r in flow.get_runs()] == [] and [r.id for r in repo.get_workflow_runs()] == []
    with pytest.raises(github.UnknownObjectException):
        repo.get_workflow_run(run.id)
    deadline = time.monotonic() + 60
    while not [r.id for r in flow.get_runs()]:
        assert time.monotonic() < deadline, "the run was never listed"
        time.sleep(0.1)
    assert [r.id for r in repo.get_workflow_runs()] == [run.id]
    assert repo.get_workflow_run(run.id).display_title == "ROCm: late"


def test_by_default_a_dispatched_run_is_listed_at_once(sim: Simulator, gh: github.Github) -> None:
    assert workflow(gh).create_dispatch("main", {"tests": "now"}) is True
    assert [r.display_title for r in workflow(gh).get_runs()] == ["ROCm: now"]


def test_a_re_run_is_the_runs_next_attempt_with_jobs_of_its_own(sim: Simulator, gh: github.Github) -> None:
    flow = workflow(gh)
    flow.create_dispatch("main", {"tests": "one"})
    (run_id,) = sim.state.runs
    first = sim.advance_job(run_id, "test (one)", "completed", "failure")
    sim.advance_job(run_id, "plan", "completed", "success")
    with pytest.raises(ValueError, match="only a completed run is re-run"):
        sim.rerun(run_id)
    sim.advance_run(run_id, "completed", "failure")
    run = sim.rerun(run_id)
    assert (run.id, run.run_attempt, run.status, run.conclusion) == (run_id, 2, "queued", None)
    again = sim.advance_job(run, "test (one)", "in_progress")
    assert again.id != first.id and (again.run_attempt, first.run_attempt) == (2, 1)
    listed = gh.get_repo("rocm-org/miles").get_workflow_run(run_id)
    assert (listed.run_attempt, listed.status) == (2, "queued")
    assert listed.raw_data["previous_attempt_url"].endswith(f"/actions/runs/{run_id}/attempts/1")
    jobs = {j.name: j for j in listed.jobs()}  # the latest attempt of each job, as GitHub lists them
    assert (jobs["test (one)"].id, jobs["test (one)"].run_attempt) == (again.id, 2)
    assert jobs["plan"].run_attempt == 1
    payload = sim.payloads.workflow_job(run, "in_progress", job=again)
    assert payload["workflow_job"]["run_attempt"] == 2
    assert sim.payloads.workflow_run(run, "requested")["workflow_run"]["run_attempt"] == 2


def _logs(sim: Simulator, world: World, job_id: int) -> httpx.Response:
    token = sim.state.issue_token(world.installation).token
    return httpx.get(f"{sim.url}/repos/rocm-org/miles/actions/jobs/{job_id}/logs",
                     headers={"Authorization": f"token {token}"})


def _failed_job(sim: Simulator, gh: github.Github) -> Any:
    workflow(gh).create_dispatch("main", {"tests": "one"})
    (run_id,) = sim.state.runs
    return sim.advance_job(run_id, "test (one)", "completed", "failure")


def test_a_jobs_log_is_a_redirect_to_a_short_lived_link_that_wants_no_token(
        sim: Simulator, world: World, gh: github.Github) -> None:
    job = _failed_job(sim, gh)
    sim.state.set_job_log(job, "step 1\nTraceback (most recent call last):\nValueError: no\n")
    answer = _logs(sim, world, job.id)
    assert answer.status_code == 302
    link = answer.headers["location"]
    assert link.startswith(f"{sim.url}/_blobs/job-logs/{job.id}?")
    text = httpx.get(link)
    assert text.status_code == 200 and text.headers["accept-ranges"] == "bytes"
    body = text.content.decode("utf-8")
    assert body.startswith("\ufeff") and body.endswith("ValueError: no\n")
    lines = body.lstrip("\ufeff").split("\n")
    assert all(line[:4].isdigit() and line[10] == "T" and "Z " in line for line in lines[:-1])
    assert lines[1].split("Z ", 1)[1] == "Traceback (most recent call last):"
    (download,) = sim.state.find_calls("GET", "/_blobs/*")
    assert download.headers == {} and download.installation_id is None  # no token: none counted
    assert sim.state.validation_failures == []


def test_a_link_serves_a_range_and_refuses_when_expired_or_altered(
        sim: Simulator, world: World, gh: github.Github) -> None:
    job = _failed_job(sim, gh)
    sim.state.set_job_log(job, b"0123456789")
    link = _logs(sim, world, job.id).headers["location"]
    tail = httpx.get(link, headers={"Range": "bytes=6-"})
    assert (tail.status_code, tail.content, tail.headers["content-range"]) == (206, b"6789", "bytes 6-9/10")
    middle = httpx.get(link, headers={"Range": "bytes=2-4"})
    assert (middle.status_code, middle.content) == (206, b"234")
    assert httpx.get(link, headers={"Range": "bytes=-3"}).content == b"0123456789"  # not a form it reads
    assert httpx.get(link, headers={"Range": "bytes=10-"}).status_code == 416
    assert httpx.get(link.replace("sig=", "sig=0")).status_code == 403
    sim.state.log_link_seconds = -1.0
    expired = _logs(sim, world, job.id).headers["location"]
    refused = httpx.get(expired)
    assert refused.status_code == 403 and b"AuthenticationFailed" in refused.content


def test_a_job_with_no_log_set_has_the_runners_lines(sim: Simulator, world: World, gh: github.Github) -> None:
    job = _failed_job(sim, gh)
    text = httpx.get(_logs(sim, world, job.id).headers["location"]).text
    assert "##[error]Process completed with exit code 1." in text


def test_an_unknown_job_is_404_an_expired_log_410(sim: Simulator, world: World, gh: github.Github) -> None:
    job = _failed_job(sim, gh)
    assert _logs(sim, world, job.id + 1000).status_code == 404
    workflow(gh).create_dispatch("main", {"tests": "two"})
    queued = sim.advance_job(max(sim.state.runs), "test (two)", "queued")
    assert _logs(sim, world, queued.id).status_code == 404  # never started: no log yet
    sim.state.expire_job_log(job)
    gone = _logs(sim, world, job.id)
    assert gone.status_code == 410 and gone.json()["message"] == "Gone"
    sim.state.delete_job_log(job)
    assert _logs(sim, world, job.id).status_code == 404


def test_a_download_cut_short_stops_before_its_length(
        sim: Simulator, world: World, gh: github.Github) -> None:
    job = _failed_job(sim, gh)
    sim.state.set_job_log(job, b"x" * 100_000, cut_at=1000)
    link = _logs(sim, world, job.id).headers["location"]
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(link)
