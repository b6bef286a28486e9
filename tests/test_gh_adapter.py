"""The PyGithub adapter's retries against the simulator: reads are retried, a write never twice."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from github import GithubException
from pydantic import SecretStr

from bot.core.deadline import DeadlineError, RetryLaterError, deadline_in
from bot.core.gone import OutOfReach
from bot.github.adapter import GitHubApp, PyGithubPort, _graphql_pr, _split, rate_limit_wait, unreachable
from bot.github.port import BlobRequest, Gone, LogUnreadableError, label_names
from config.settings import Settings
from ghsim import Simulator, serve_simulator
from ghsim.state import PullRequest, Repository


@pytest.fixture
def sim() -> Iterator[Simulator]:
    with serve_simulator() as served:
        yield served


Seeded = tuple[PyGithubPort, Repository, PullRequest]


@pytest.fixture
def seeded(sim: Simulator) -> Iterator[Seeded]:
    found = _world(sim)
    yield found
    found[0].gh.close()  # no keep-alive connection left for the simulator to wait out


def _world(sim: Simulator) -> tuple[PyGithubPort, Repository, PullRequest]:
    state = sim.state
    repo = state.add_repository("octo/miles", files={"README.md": "# miles\n"})
    state.add_installation("octo", installation_id=5)
    head = state.commit(repo, {"a.py": "x = 1\n"}, branch="feature")
    pull = state.open_pull_request(repo, head=head, head_ref="feature")
    settings = Settings(app_id=state.app.id, private_key=SecretStr(state.app.private_key_pem),
                        github_api_url=sim.url, github_backoff_seconds=0, github_retries=3,
                        seconds_between_writes=0)
    port = GitHubApp(settings).installation(5)
    return port, repo, pull


def test_a_read_is_retried_after_a_5xx(sim: Simulator, seeded: Seeded) -> None:
    port, _, pull = seeded
    sim.faults.fail(502, times=2, method="GET", path="/repos/*/pulls/*")
    assert port.pull_request("octo/miles", pull.number).number == pull.number
    assert [c.status for c in sim.state.find_calls("GET", "/repos/*/pulls/*")] == [502, 502, 200]


def _port(sim: Simulator, **settings: Any) -> PyGithubPort:
    state = sim.state
    return GitHubApp(Settings(app_id=state.app.id, private_key=SecretStr(state.app.private_key_pem),
                              github_api_url=sim.url, seconds_between_writes=0, **settings)).installation(5)


def test_a_persistent_5xx_costs_a_few_quick_requests_then_the_attempt_fails(
        sim: Simulator, seeded: Seeded) -> None:
    """The default retries are a short burst (two, a second apart at most): the worker's
    backoff is the one long wait, not client retries inside worker retries."""
    _, _, pull = seeded
    port = _port(sim, github_backoff_seconds=0)  # the default number of retries
    sim.faults.fail(502, times=None, method="GET", path="/repos/*/pulls/*")
    with pytest.raises(GithubException) as raised:
        port.pull_request("octo/miles", pull.number)
    assert raised.value.status == 502
    assert [c.status for c in sim.state.find_calls("GET", "/repos/*/pulls/*")] == [502] * 3
    port.gh.close()


def test_a_read_retry_that_would_end_past_the_deadline_is_not_made(sim: Simulator, seeded: Seeded) -> None:
    _, _, pull = seeded
    port = _port(sim, github_backoff_seconds=10, github_retries=5)  # 0 s, then 20 s
    sim.faults.fail(502, times=None, method="GET", path="/repos/*/pulls/*")
    with deadline_in(port.margin + 5), pytest.raises(GithubException):
        port.pull_request("octo/miles", pull.number)
    assert [c.status for c in sim.state.find_calls("GET", "/repos/*/pulls/*")] == [502] * 2
    port.gh.close()


def test_a_secondary_rate_limit_is_waited_out_as_long_as_retry_after_says(
        sim: Simulator, seeded: Seeded, caplog: pytest.LogCaptureFixture) -> None:
    port, repo, pull = seeded
    sim.faults.secondary_rate_limit(retry_after=2, times=1, method="POST", path="*/comments")
    with caplog.at_level(logging.INFO, logger="bot.github.adapter"), deadline_in(60):
        port.create_comment("octo/miles", pull.number, "hello")
    assert [c.status for c in sim.state.find_calls("POST", "*/comments")] == [403, 201]
    assert [c.body for c in sim.state.comments_on(repo, pull.number)] == ["hello"]
    assert [getattr(r, "seconds", None) for r in caplog.records
            if r.getMessage().startswith("rate limited")] == [2.0]  # not the 60 s floor of old


def test_a_rate_limit_past_the_deadline_goes_back_to_the_worker_with_its_wait(
        sim: Simulator, seeded: Seeded) -> None:
    port, _, pull = seeded
    sim.faults.secondary_rate_limit(retry_after=30, times=1, method="POST", path="*/comments")
    with deadline_in(port.margin + 10), pytest.raises(RetryLaterError) as raised:
        port.create_comment("octo/miles", pull.number, "hello")
    assert raised.value.seconds == 30
    assert [c.status for c in sim.state.find_calls("POST", "*/comments")] == [403]


def test_no_request_starts_that_could_end_past_the_deadline(sim: Simulator, seeded: Seeded) -> None:
    port, _, pull = seeded
    before = len(sim.state.find_calls("GET", "/repos/*/pulls/*"))
    with deadline_in(port.margin - 1), pytest.raises(DeadlineError):
        port.pull_request("octo/miles", pull.number)
    assert len(sim.state.find_calls("GET", "/repos/*/pulls/*")) == before
    with deadline_in(port.margin + 60):
        assert port.pull_request("octo/miles", pull.number).number == pull.number


@pytest.mark.parametrize(("status", "headers", "message", "wait"), [
    (403, {"Retry-After": "2"}, "", 2.0),
    (429, {"retry-after": "0"}, "", 0.0),
    (403, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, "", 0.0),  # a date long past
    (403, {"Retry-After": "soon"}, "You have exceeded a secondary rate limit", 60.0),
    (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1"}, "API rate limit exceeded", 0.0),
    (429, {}, "", 60.0),
    (403, {}, "Resource not accessible by integration", None),
    (502, {"Retry-After": "2"}, "", None),
])
def test_the_wait_a_refusal_names(status: int, headers: dict[str, str], message: str,
                                  wait: float | None) -> None:
    assert rate_limit_wait(status, headers, message, 60.0) == wait


def test_a_write_answered_5xx_fails_once_without_a_retry(sim: Simulator, seeded: Seeded) -> None:
    """Regression: the write guard re-entered itself until RecursionError on every POST 5xx."""
    port, repo, pull = seeded
    sim.faults.fail(502, times=1, method="POST", path="*/comments")
    with pytest.raises(GithubException) as raised:
        port.create_comment("octo/miles", pull.number, "hello")
    assert raised.value.status == 502
    assert [c.status for c in sim.state.find_calls("POST", "*/comments")] == [502]
    assert sim.state.comments_on(repo, pull.number) == []


def test_a_write_made_before_its_5xx_is_not_sent_again(sim: Simulator, seeded: Seeded) -> None:
    port, repo, pull = seeded
    sim.faults.fail_after(502, times=1, method="POST", path="*/comments")
    with pytest.raises(GithubException) as raised:
        port.create_comment("octo/miles", pull.number, "hello")
    assert raised.value.status == 502
    assert [c.body for c in sim.state.comments_on(repo, pull.number)] == ["hello"]  # once


def _dispatched(sim: Simulator, seeded: Seeded) -> tuple[PyGithubPort, int]:
    """The port, and the run of a dispatch of the targeted workflow it made."""
    port, repo, _ = seeded
    workflow = (Path(__file__).parents[1] / "config" / "workflows" / "rocm-targeted.yml").read_text()
    sim.state.add_workflow(repo, ".github/workflows/rocm-targeted.yml", workflow)
    inputs = {"tests": "tests/test_a.py", "suite": "stage-c-4-gpu-mi350", "pr_number": "1",
              "head_sha": "a" * 40, "dispatch_id": "0123456789abcdef"}
    run_id = port.dispatch_workflow("octo/miles", ".github/workflows/rocm-targeted.yml", "main", inputs)
    assert run_id is not None
    return port, run_id


def test_cancelling_a_run_that_already_completed_is_not_an_error(sim: Simulator, seeded: Seeded) -> None:
    """Found by bench/chaos.py: a push cancels the previous head's run; when that run had just
    completed (its webhook not yet processed), GitHub's 409 failed the delivery on every retry."""
    port, run_id = _dispatched(sim, seeded)
    sim.state.set_run_status(run_id, "completed", "success")
    assert port.cancel_run("octo/miles", run_id) is False  # it had completed: nothing stopped
    assert [c.status for c in sim.state.find_calls("POST", "/repos/*/actions/runs/*/cancel")] == [409]
    assert sim.state.runs[run_id].conclusion == "success"
    sim.faults.fail(502, times=1, method="POST", path="/repos/*/actions/runs/*/cancel")
    with pytest.raises(GithubException):  # other failures still fail
        port.cancel_run("octo/miles", run_id)


def test_a_runs_jobs_are_read_page_by_page(sim: Simulator, seeded: Seeded) -> None:
    port, repo, _ = seeded
    workflow = (Path(__file__).parents[1] / "config" / "workflows" / "rocm-targeted.yml").read_text()
    sim.state.add_workflow(repo, ".github/workflows/rocm-targeted.yml", workflow)
    inputs = {"tests": "t", "suite": "s", "pr_number": "1", "head_sha": "a" * 40, "dispatch_id": "d" * 16}
    run_id = port.dispatch_workflow("octo/miles", ".github/workflows/rocm-targeted.yml", "main", inputs)
    assert run_id is not None
    for n in range(120):
        sim.state.set_job_status(run_id, f"s (tests/test_{n}.py)", "completed", "success")
    sim.state.set_job_status(run_id, "s (tests/test_0.py)", "completed", "failure")  # the same job
    jobs = port.run_jobs("octo/miles", run_id)
    assert len(jobs) == 120 and len(sim.state.find_calls("GET", f"/repos/*/actions/runs/{run_id}/jobs")) == 2
    assert (jobs[0].name, jobs[0].conclusion) == ("s (tests/test_0.py)", "failure")
    assert jobs[0].html_url.endswith(f"/actions/runs/{run_id}/job/{jobs[0].id}")
    assert jobs[0].started_at and jobs[0].completed_at
    assert not sim.state.response_failures


def test_files_and_the_pr_come_in_one_query(sim: Simulator, seeded: Seeded) -> None:
    port, _, pull = seeded
    wanted = [BlobRequest(pull.head_sha, "a.py"), BlobRequest(pull.head_sha, "missing.py"),
              BlobRequest(pull.base_sha, "README.md")]
    batch = port.read_batch("octo/miles", wanted, pull=pull.number)
    assert batch.blobs == {wanted[0]: b"x = 1\n", wanted[1]: None, wanted[2]: b"# miles\n"}
    assert batch.pull is not None and batch.pull.head_sha == pull.head_sha
    assert (batch.pull.base_sha, batch.pull.author, batch.pull.draft) == (pull.base_sha, "contributor", False)
    assert not batch.pull.is_fork and batch.pull.state == "open"
    assert len(sim.state.find_calls("POST", "/graphql")) == 1
    with pytest.raises(GithubException):  # no such PR: as GitHub says, not a silent nothing
        port.read_batch("octo/miles", [], pull=999)
    assert port.read_batch("octo/miles", []).blobs == {}  # nothing to ask: no request
    assert len(sim.state.find_calls("POST", "/graphql")) == 2


def test_a_bots_pr_keeps_the_login_rest_gives_it() -> None:
    data = {"number": 3, "headRefOid": "h", "baseRefOid": "b", "state": "CLOSED", "headRepository": None,
            "author": {"__typename": "Bot", "login": "dependabot"}}
    pr = _graphql_pr("octo/miles", data)
    assert (pr.author, pr.head_repo, pr.state, pr.is_fork) == ("dependabot[bot]", None, "closed", False)


def test_objects_are_split_in_even_queries() -> None:
    requests = [BlobRequest("s", str(n)) for n in range(209)]
    assert [len(p) for p in _split(requests)] == [105, 104]
    assert [len(p) for p in _split(requests[:120])] == [120]
    assert _split([]) == []


def test_the_files_of_a_pr_are_read_without_a_page_past_the_last(sim: Simulator, seeded: Seeded) -> None:
    port, repo, _ = seeded
    head = sim.state.commit(repo, {f"f{n}.py": f"x = {n}\n" for n in range(100)}, branch="wide")
    wide = sim.state.open_pull_request(repo, head=head, head_ref="wide")
    assert len(port.pull_files("octo/miles", wide.number, expected=100)) == 100
    assert len(sim.state.find_calls("GET", f"/repos/*/pulls/{wide.number}/files")) == 1
    assert len(port.pull_files("octo/miles", wide.number)) == 100  # not knowing: one more page
    assert len(sim.state.find_calls("GET", f"/repos/*/pulls/{wide.number}/files")) == 3


def test_the_prs_labels_come_from_rest_and_graphql(sim: Simulator, seeded: Seeded) -> None:
    port, repo, pull = seeded
    assert port.pull_request("octo/miles", pull.number).labels == ()
    sim.state.add_labels(repo, pull.number, ["run-ci", "run-ci-extra"])
    assert port.pull_request("octo/miles", pull.number).labels == ("run-ci", "run-ci-extra")
    batch = port.read_batch("octo/miles", [], pull=pull.number)
    assert batch.pull is not None and batch.pull.labels == ("run-ci", "run-ci-extra")
    assert not sim.state.validation_failures


def test_label_names_take_what_github_sends_and_nothing_else() -> None:
    assert label_names([{"name": "run-ci"}, {"id": 1}, "bug", {"name": 3}]) == ("run-ci",)
    assert label_names({"nodes": [{"name": "run-ci-extra"}]}) == ("run-ci-extra",)
    assert label_names(None) == label_names({"nodes": None}) == label_names("run-ci") == ()


def test_a_deleted_repository_is_out_of_reach_and_a_missing_file_is_not(
        sim: Simulator, seeded: Seeded) -> None:
    port, repo, pull = seeded
    assert port.default_branch_file("octo/miles", "no/such/file.yml") is None  # a 404 expected
    sim.state.delete_repository(repo)
    for read in (lambda: port.pull_request("octo/miles", pull.number),
                 lambda: port.pull_files("octo/miles", pull.number),
                 lambda: port.read_batch("octo/miles", [BlobRequest(pull.head_sha, "a.py")],
                                         pull=pull.number)):
        with pytest.raises(OutOfReach) as raised:
            read()
        assert raised.value.http_status == 404 and not raised.value.lost_access
        assert isinstance(raised.value, GithubException)  # still what the callers expecting one catch
    assert port.default_branch_file("octo/miles", "no/such/file.yml") is None


def test_a_403_that_is_no_rate_limit_is_lost_access(sim: Simulator, seeded: Seeded) -> None:
    port, _, pull = seeded
    sim.faults.fail(403, times=1, path="/repos/*/pulls/*")
    with pytest.raises(OutOfReach) as raised:
        port.pull_request("octo/miles", pull.number)
    assert raised.value.lost_access and raised.value.request == f"GET /repos/octo/miles/pulls/{pull.number}"
    assert len(sim.state.find_calls("GET", "/repos/*/pulls/*")) == 1  # not retried


@pytest.mark.parametrize(("status", "request_line", "expected"), [
    (403, "GET /repos/o/r/contents/x", True),
    (404, "GET /repos/o/r", True),
    (404, "GET /repos/o/r/pulls/7", True),
    (410, "GET /repos/o/r/pulls/7/files", True),
    (404, "POST /repos/o/r/issues/7/comments", True),
    (404, "POST /graphql", True),
    (404, "PATCH /repos/o/r/issues/comments/9", False),  # a comment someone deleted
    (404, "GET /repos/o/r/contents/.github/rocmbot.yml", False),
    (404, "GET /repos/o/r/actions/runs/5/jobs", False),
    (502, "GET /repos/o/r/pulls/7", False),
    (422, "POST /repos/o/r/pulls/7/reviews", False),
])
def test_what_is_out_of_reach_for_good(status: int, request_line: str, expected: bool) -> None:
    assert unreachable(status, request_line) is expected


def test_one_run_is_read_by_its_id(sim: Simulator, seeded: Seeded) -> None:
    port, run_id = _dispatched(sim, seeded)
    sim.state.set_run_status(run_id, "completed", "failure")
    found = port.workflow_run("octo/miles", run_id)
    assert found is not None
    assert (found.id, found.status, found.conclusion) == (run_id, "completed", "failure")
    assert port.workflow_run("octo/miles", run_id + 999) is None  # GitHub does not know it


def _failed_job(sim: Simulator, seeded: Seeded, log: str | bytes | None = None, **kw: Any) -> tuple[
        PyGithubPort, int]:
    port, run_id = _dispatched(sim, seeded)
    job = sim.state.set_job_status(run_id, "s (tests/test_a.py)", "completed", "failure")
    if log is not None:
        sim.state.set_job_log(job, log, **kw)
    return port, job.id


def test_a_jobs_log_is_read_from_the_link_github_gives_without_the_token(
        sim: Simulator, seeded: Seeded) -> None:
    port, job_id = _failed_job(sim, seeded, "setup\nRuntimeError: boom\n")
    data = port.job_log("octo/miles", job_id, limit=1 << 20)
    assert data is not None and data.startswith("\ufeff".encode())
    assert data.endswith(b"Z RuntimeError: boom\n")
    (asked,) = sim.state.find_calls("GET", f"/repos/octo/miles/actions/jobs/{job_id}/logs")
    assert asked.status == 302 and asked.installation_id == 5
    (download,) = sim.state.find_calls("GET", "/_blobs/*")
    assert download.status == 200 and "authorization" not in download.headers


def test_only_the_end_of_a_long_log_is_read(sim: Simulator, seeded: Seeded) -> None:
    noise = b"".join(b"%08d noise\n" % n for n in range(200_000))
    log = noise + b"torch.OutOfMemoryError: HIP out of memory\n"
    port, job_id = _failed_job(sim, seeded, log)
    data = port.job_log("octo/miles", job_id, limit=100_000)
    assert data == log[-100_000:]
    first, ranged = sim.state.find_calls("GET", "/_blobs/*")
    assert "range" not in first.headers  # its length said it was long: the rest was not read
    assert (ranged.status, ranged.headers["range"]) == (206, f"bytes={len(log) - 100_000}-")


def test_a_log_shorter_than_the_limit_is_read_whole_in_one_download(sim: Simulator, seeded: Seeded) -> None:
    port, job_id = _failed_job(sim, seeded, b"short\n")
    assert port.job_log("octo/miles", job_id, limit=6) == b"short\n"
    assert len(sim.state.find_calls("GET", "/_blobs/*")) == 1


def test_a_log_github_no_longer_has_is_none(sim: Simulator, seeded: Seeded) -> None:
    port, job_id = _failed_job(sim, seeded, "x\n")
    assert port.job_log("octo/miles", job_id + 12345, limit=1000) is None  # 404: no such job
    sim.state.expire_job_log(job_id)
    assert port.job_log("octo/miles", job_id, limit=1000) is None  # 410: past its retention
    statuses = [c.status for c in sim.state.find_calls("GET", "/repos/*/actions/jobs/*/logs")]
    assert statuses == [404, 410] and sim.state.find_calls("GET", "/_blobs/*") == []


def test_a_download_cut_short_is_retried_then_unreadable(sim: Simulator, seeded: Seeded) -> None:
    port, job_id = _failed_job(sim, seeded, b"y" * 50_000, cut_at=100)
    with pytest.raises(LogUnreadableError, match=r"^the download was cut short$"):
        port.job_log("octo/miles", job_id, limit=1 << 20)
    assert len(sim.state.find_calls("GET", "/_blobs/*")) == 4  # three retries, as any read


def test_a_storage_5xx_is_retried(sim: Simulator, seeded: Seeded) -> None:
    port, job_id = _failed_job(sim, seeded, "ok\n")
    sim.faults.fail(503, times=2, method="GET", path="/_blobs/*")
    assert (port.job_log("octo/miles", job_id, limit=1000) or b"").endswith(b"Z ok\n")
    assert [c.status for c in sim.state.find_calls("GET", "/_blobs/*")] == [503, 503, 200]


def test_an_expired_link_is_asked_for_again_once(sim: Simulator, seeded: Seeded) -> None:
    port, job_id = _failed_job(sim, seeded, "ok\n")
    sim.state.log_link_seconds = -1  # every link has expired by the time it is read
    with pytest.raises(LogUnreadableError, match="expired"):
        port.job_log("octo/miles", job_id, limit=1000)
    assert len(sim.state.find_calls("GET", "/repos/*/actions/jobs/*/logs")) == 2
    assert [c.status for c in sim.state.find_calls("GET", "/_blobs/*")] == [403, 403]


def test_github_failing_to_give_the_link_is_unreadable_and_a_rate_limit_waits(
        sim: Simulator, seeded: Seeded) -> None:
    port, job_id = _failed_job(sim, seeded, "ok\n")
    sim.faults.fail(502, times=None, method="GET", path="/repos/*/actions/jobs/*/logs")
    with pytest.raises(LogUnreadableError, match="GitHub answered 502"):
        port.job_log("octo/miles", job_id, limit=1000)
    sim.faults.clear()
    sim.faults.secondary_rate_limit(retry_after=30, times=1, method="GET", path="*/logs")
    with deadline_in(port.margin + 10), pytest.raises(RetryLaterError) as raised:  # as any read
        port.job_log("octo/miles", job_id, limit=1000)
    assert raised.value.seconds == 30
def test_the_default_branch_head_and_issues_through_the_port(sim: Simulator, seeded: Seeded) -> None:
    port, repo, pull = seeded
    assert port.default_branch_head("octo/miles") == (repo.default_branch, repo.branches[repo.default_branch])
    other = sim.state.open_issue(repo, "A bug", body="<!-- rocmbot:parked-tests --> quoted", author="dev")
    made = port.create_issue("octo/miles", "Parked ROCm tests", "<!-- rocmbot:parked-tests -->\nfirst")
    assert (made.title, made.state, made.author_is_bot, made.app_id) == (
        "Parked ROCm tests", "open", True, sim.state.app.id)
    found = {i.number: i for i in port.issues("octo/miles")}
    assert set(found) == {other.number, made.number}  # the PR left out
    assert (found[other.number].author_is_bot, found[other.number].app_id) == (False, None)
    assert port.edit_issue("octo/miles", made.number, "second").body == "second"
    with pytest.raises(Gone):
        port.edit_issue("octo/miles", 9999, "x")
    assert pull.number not in found and not sim.state.validation_failures
