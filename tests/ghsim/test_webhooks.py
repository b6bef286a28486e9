"""Payloads from octokit's examples validate against octokit's schemas; delivery, signing, redelivery."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from ghsim import Simulator, sign, validate_payload
from ghsim.state import CheckRun, Review, WorkflowRun
from ghsim.webhooks import encode, example, record_delivery, webhook_headers
from ghsim.webhooks.payloads import _examples
from tests.ghsim.conftest import World, app_jwt

SECRET = "It's a Secret to Everybody"


class Receiver:
    """A loopback HTTP endpoint that records webhook POSTs and answers ``status``."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.status = 202
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append(({k: v for k, v in self.headers.items()}, body))
                self.send_response(receiver.status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/webhook"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


def test_sign_matches_githubs_documented_vector() -> None:
    assert sign(SECRET, b"Hello, World!") == (
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    )


@pytest.mark.parametrize("key", sorted(k for k in _examples() if not k.startswith("_")))
def test_every_vendored_example_matches_its_schema(key: str) -> None:
    event, _, action = key.partition(".")
    assert validate_payload(event, example(event, action or None)) == []


def builders(sim: Simulator, world: World) -> dict[str, Callable[[], dict[str, Any]]]:
    state, build = sim.state, sim.payloads
    comment = state.add_comment(world.repo, world.pull.number, "/run-amd all", author="maintainer")
    run = CheckRun(1, world.repo, "rocmbot / analysis", world.pull.head_sha, state.app.id, check_suite_id=2)
    state.check_runs[run.id] = run
    workflow = next(iter(world.repo.workflows.values()))
    review = Review(
        3, world.repo, world.pull.number, state.bot, "looks off", "COMMENTED", world.pull.head_sha
    )
    state.reviews[review.id] = review
    flow_run = WorkflowRun(
        4,
        workflow.id,
        workflow.name,
        "ROCm: x",
        1,
        "workflow_dispatch",
        "main",
        world.pull.base_sha,
        state.bot,
        workflow.path,
        {"tests": "x"},
    )
    state.runs[flow_run.id] = flow_run
    pull = world.pull
    return {
        "pull_request.opened": lambda: build.pull_request(pull, "opened"),
        "pull_request.synchronize": lambda: build.pull_request(pull, "synchronize", before=pull.base_sha),
        "pull_request.reopened": lambda: build.pull_request(pull, "reopened"),
        "pull_request.ready_for_review": lambda: build.pull_request(pull, "ready_for_review"),
        "pull_request.closed": lambda: build.pull_request(pull, "closed"),
        "pull_request.labeled": lambda: build.pull_request(pull, "labeled", label="run-ci-extra"),
        "pull_request.unlabeled": lambda: build.pull_request(pull, "unlabeled", label="run-ci"),
        "issue_comment.created": lambda: build.issue_comment(comment),
        "issue_comment.edited": lambda: build.issue_comment(comment, "edited", previous_body="/run-amd"),
        "pull_request_review.submitted": lambda: build.pull_request_review(review),
        "check_run.requested_action": lambda: build.check_run(run, "requested_action", identifier="run-amd"),
        "check_run.rerequested": lambda: build.check_run(run, "rerequested"),
        "workflow_run.requested": lambda: build.workflow_run(flow_run, "requested"),
        "workflow_run.in_progress": lambda: build.workflow_run(flow_run, "in_progress"),
        "workflow_run.completed": lambda: build.workflow_run(flow_run, "completed"),
        "workflow_job.queued": lambda: build.workflow_job(flow_run, "queued"),
        "workflow_job.in_progress": lambda: build.workflow_job(flow_run, "in_progress"),
        "workflow_job.completed": lambda: build.workflow_job(flow_run, "completed"),
        "ping": build.ping,
        "installation.created": lambda: build.installation(world.installation),
        "installation.deleted": lambda: build.installation(world.installation, "deleted"),
    }


def test_built_payloads_carry_the_simulators_state_and_match_the_schemas(
    sim: Simulator, world: World
) -> None:
    for key, build in builders(sim, world).items():
        event = key.partition(".")[0]
        payload = build()
        assert validate_payload(event, payload) == [], key
        if "repository" in payload:
            assert payload["repository"]["full_name"] == "rocm-org/miles", key
            assert payload["installation"]["id"] == world.installation.id, key
            assert payload["repository"]["url"] == f"{sim.url}/repos/rocm-org/miles", key
    opened = sim.payloads.pull_request(world.pull, "synchronize", before="0" * 40)
    assert opened["number"] == world.pull.number and opened["after"] == world.pull.head_sha
    assert opened["pull_request"]["head"]["sha"] == world.pull.head_sha
    assert opened["pull_request"]["user"]["login"] == "contributor"
    assert opened["organization"]["login"] == "rocm-org"


def test_a_fork_pull_request_points_its_head_at_the_fork(sim: Simulator, world: World) -> None:
    fork = sim.state.open_pull_request(
        world.repo, head="feature", head_ref="patch", author="outsider", fork=True
    )
    payload = sim.payloads.pull_request(fork)
    assert payload["pull_request"]["head"]["repo"]["full_name"] == "outsider/miles"
    assert payload["pull_request"]["head"]["repo"]["fork"] is True
    assert validate_payload("pull_request", payload) == []


def test_deliver_posts_githubs_headers_and_a_verifiable_signature(
    sim: Simulator, world: World, receiver: Receiver
) -> None:
    sim.state.configure_webhook(receiver.url, SECRET)
    delivery = sim.deliver("pull_request", sim.payloads.pull_request(world.pull))
    headers, body = receiver.received[0]
    assert headers["X-GitHub-Event"] == "pull_request"
    assert headers["X-GitHub-Delivery"] == delivery.guid
    assert headers["User-Agent"].startswith("GitHub-Hookshot/")
    expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-Hub-Signature-256"], expected)
    assert (delivery.status_code, delivery.status, delivery.action) == (202, "OK", "opened")
    assert delivery.installation_id == world.installation.id and delivery.repository_id == world.repo.id


def test_deliveries_are_listed_and_redelivered_through_the_app_api(
    sim: Simulator, world: World, receiver: Receiver
) -> None:
    sim.state.configure_webhook(receiver.url, SECRET)
    receiver.status = 500
    failed = sim.deliver(
        "issue_comment",
        sim.payloads.issue_comment(sim.state.add_comment(world.repo, world.pull.number, "/run-amd")),
    )
    assert failed.status == "Invalid HTTP Response: 500"
    receiver.status = 200
    sim.deliver("ping", sim.payloads.ping())
    jwt_headers = {"Authorization": f"Bearer {app_jwt(sim)}"}
    listed = httpx.get(f"{sim.url}/app/hook/deliveries", headers=jwt_headers).json()
    assert [(d["event"], d["status_code"]) for d in listed] == [("ping", 200), ("issue_comment", 500)]
    failures = httpx.get(f"{sim.url}/app/hook/deliveries?status=failure", headers=jwt_headers).json()
    assert [d["id"] for d in failures] == [failed.id]
    paged = httpx.get(f"{sim.url}/app/hook/deliveries?per_page=1", headers=jwt_headers)
    assert 'rel="next"' in paged.headers["link"]
    detail = httpx.get(f"{sim.url}/app/hook/deliveries/{failed.id}", headers=jwt_headers).json()
    assert detail["request"]["payload"]["comment"]["body"] == "/run-amd"
    assert detail["request"]["headers"]["X-GitHub-Event"] == "issue_comment"
    again = httpx.post(f"{sim.url}/app/hook/deliveries/{failed.id}/attempts", headers=jwt_headers)
    assert again.status_code == 202
    assert receiver.received[-1][0]["X-GitHub-Delivery"] == failed.guid
    assert receiver.received[-1][1] == receiver.received[0][1]
    latest = sim.state.deliveries[-1]
    assert (latest.redelivery, latest.status_code, latest.guid) == (True, 200, failed.guid)


def test_a_delivery_to_nowhere_is_recorded_as_failed(sim: Simulator) -> None:
    delivery = sim.deliver("ping", sim.payloads.ping(), url="http://127.0.0.1:9/none", secret=SECRET)
    assert (delivery.status_code, delivery.status) == (0, "failed to connect to host")


def test_advancing_a_run_can_notify_the_app(sim: Simulator, world: World, receiver: Receiver) -> None:
    sim.state.configure_webhook(receiver.url, SECRET)
    flow = next(iter(world.repo.workflows.values()))
    run = WorkflowRun(
        5,
        flow.id,
        flow.name,
        "ROCm: x",
        1,
        "workflow_dispatch",
        "main",
        world.pull.base_sha,
        sim.state.bot,
        flow.path,
    )
    sim.state.runs[run.id] = run
    sim.advance_run(run.id, "completed", "failure", notify=True)
    headers, body = receiver.received[-1]
    payload = json.loads(body)
    assert headers["X-GitHub-Event"] == "workflow_run"
    assert (payload["action"], payload["workflow_run"]["conclusion"]) == ("completed", "failure")
    assert validate_payload("workflow_run", payload) == []


def test_a_delivery_sent_elsewhere_can_be_recorded(sim: Simulator, world: World) -> None:
    body = encode(sim.payloads.pull_request(world.pull))
    headers = webhook_headers(sim.state, "pull_request", body, secret=SECRET)
    recorded = record_delivery(
        sim.state, event="pull_request", body=body, url="asgi://bot/webhook", headers=headers, status_code=202
    )
    assert (recorded.action, recorded.installation_id, recorded.status) == (
        "opened",
        world.installation.id,
        "OK",
    )
    assert sim.state.deliveries == [recorded]


def test_labelling_a_pr_can_notify_the_app(sim: Simulator, world: World, receiver: Receiver) -> None:
    sim.state.configure_webhook(receiver.url, SECRET)
    assert sim.add_label(world.pull, "run-ci", notify=True)
    assert sim.add_label(world.pull, "run-ci-extra", sender="lead", notify=True)
    assert not sim.add_label(world.pull, "RUN-CI", notify=True)  # carried already: no news
    assert len(receiver.received) == 2
    labeled = json.loads(receiver.received[-1][1])
    assert (labeled["action"], labeled["label"]["name"], labeled["sender"]["login"]) == (
        "labeled", "run-ci-extra", "lead")
    assert [x["name"] for x in labeled["pull_request"]["labels"]] == ["run-ci", "run-ci-extra"]
    assert labeled["label"]["url"] == f"{sim.url}/repos/rocm-org/miles/labels/run-ci-extra"
    assert validate_payload("pull_request", labeled) == []
    assert sim.remove_label(world.pull, "run-ci", notify=True)
    assert not sim.remove_label(world.pull, "run-ci", notify=True)
    unlabeled = json.loads(receiver.received[-1][1])
    assert (unlabeled["action"], unlabeled["label"]["name"]) == ("unlabeled", "run-ci")
    assert [x["name"] for x in unlabeled["pull_request"]["labels"]] == ["run-ci-extra"]
    assert len(receiver.received) == 3
    with pytest.raises(ValueError, match="names its label"):
        sim.payloads.pull_request(world.pull, "labeled")


def _run(sim: Simulator, world: World, run_id: int = 5) -> WorkflowRun:
    flow = next(iter(world.repo.workflows.values()))
    run = WorkflowRun(run_id, flow.id, flow.name, "ROCm: x", 1, "workflow_dispatch", "main",
                      world.pull.base_sha, sim.state.bot, flow.path)
    sim.state.runs[run.id] = run
    return run


def _news(receiver: Receiver) -> list[tuple[str, str | None, str]]:
    """(event, action, GUID) of each delivery received, in order."""
    return [(h["X-GitHub-Event"], json.loads(b).get("action"), h["X-GitHub-Delivery"])
            for h, b in receiver.received]


def test_a_runs_in_progress_news_can_be_held_until_it_completed(
    sim: Simulator, world: World, receiver: Receiver
) -> None:
    """Out of order, as GitHub may deliver: the `in_progress` news of a run (its own and its
    jobs') held back and sent right after its `completed`, each with its GUID; other runs' and
    other events' deliveries are not held."""
    sim.state.configure_webhook(receiver.url, SECRET)
    run, other = _run(sim, world), _run(sim, world, 6)
    sim.news.hold("in_progress")
    held = sim.deliver("workflow_run", sim.payloads.workflow_run(sim.state.set_run_status(run, "in_progress"),
                                                                  "in_progress"))
    assert held.held and held.status == "held" and held.status_code == 0
    sim.advance_job(run, "test (a)", "in_progress", notify=True)
    assert receiver.received == [] and sim.state.deliveries == [] and len(sim.news.held) == 2
    sim.deliver("ping", sim.payloads.ping())
    sim.advance_job(run, "test (a)", "completed", "success", notify=True)
    sim.advance_run(other, "completed", "success", notify=True)  # another run's end sends nothing held
    assert [n[:2] for n in _news(receiver)] == [("ping", None), ("workflow_job", "completed"),
                                              ("workflow_run", "completed")]
    sim.advance_run(run, "completed", "failure", notify=True)
    news = _news(receiver)
    assert [n[:2] for n in news[3:]] == [("workflow_run", "completed"), ("workflow_run", "in_progress"),
                                         ("workflow_job", "in_progress")]
    assert news[4][2] == held.guid and sim.news.held == []
    late = json.loads(receiver.received[4][1])
    assert (late["workflow_run"]["status"], late["workflow_run"]["conclusion"]) == ("in_progress", None)
    assert all(validate_payload(e, json.loads(b)) == [] for (e, _, _), (_, b) in zip(news, receiver.received,
                                                                                    strict=True))
    assert [d.guid for d in sim.state.deliveries] == [n[2] for n in news]  # each recorded when sent
    with pytest.raises(ValueError, match="cannot be held"):
        sim.news.hold("completed")


def test_held_news_can_wait_for_an_explicit_release(sim: Simulator, world: World, receiver: Receiver) -> None:
    sim.state.configure_webhook(receiver.url, SECRET)
    run, other = _run(sim, world), _run(sim, world, 6)
    sim.news.hold("requested", "in_progress", run_id=run.id, after_completed=False)
    sim.advance_run(run, "queued", notify=True)
    sim.advance_run(other, "queued", notify=True)  # not the held run's
    sim.advance_run(run, "in_progress", notify=True)
    sim.advance_run(run, "completed", "success", notify=True)
    assert [n[:2] for n in _news(receiver)] == [("workflow_run", "requested"), ("workflow_run", "completed")]
    sim.news.clear()
    sim.advance_run(other, "in_progress", notify=True)  # no rule: sent at once
    assert len(receiver.received) == 3
    sent = sim.release_news(run)
    assert [d.action for d in sent] == ["requested", "in_progress"] and all(d.status == "OK" for d in sent)
    assert [n[1] for n in _news(receiver)[3:]] == ["requested", "in_progress"]
    assert sim.release_news() == [] and sim.news.held == []
