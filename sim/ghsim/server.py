"""Serve the simulator with uvicorn on a free loopback port in a background thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn

from ghsim.app import SimulatorApp, create_simulator
from ghsim.faults import FaultPlan, RateLimiter
from ghsim.order import NewsOrder
from ghsim.state import HookDelivery, PullRequest, SimulatorState, WorkflowJob, WorkflowRun
from ghsim.webhooks.delivery import deliver, deliver_held
from ghsim.webhooks.payloads import Payloads


@dataclass
class Simulator:
    """A running simulator: its base URL, state, fault plan and payload builders."""

    url: str
    app: SimulatorApp

    @property
    def state(self) -> SimulatorState:
        return self.app.sim

    @property
    def faults(self) -> FaultPlan:
        return self.app.faults

    @property
    def limiter(self) -> RateLimiter:
        return self.app.limiter

    @property
    def payloads(self) -> Payloads:
        return Payloads(self.state)

    @property
    def news(self) -> NewsOrder:
        """Which of a run's webhooks to hold back and deliver out of order (``ghsim.order``)."""
        return self.state.news

    def deliver(
        self, event: str, payload: dict[str, Any], *, url: str | None = None, secret: str | None = None
    ) -> HookDelivery:
        """Send a webhook (default: to the App's configured URL, signed with its secret) and record it."""
        return deliver(self.state, event, payload, url=url, secret=secret)

    def advance_run(
        self, run: WorkflowRun | int, status: str, conclusion: str | None = None, *, notify: bool = False
    ) -> WorkflowRun:
        """Move a workflow run on; with ``notify`` deliver the matching ``workflow_run`` webhook."""
        moved = self.state.set_run_status(run, status, conclusion)
        if notify:
            action = {"queued": "requested"}.get(status, status)
            self.deliver("workflow_run", self.payloads.workflow_run(moved, action))
        return moved

    def release_news(self, run: WorkflowRun | int | None = None) -> list[HookDelivery]:
        """Deliver the news held back (of one run, or all) now, in the order it was held."""
        return deliver_held(self.state, run.id if isinstance(run, WorkflowRun) else run)

    def rerun(self, run: WorkflowRun | int, *, notify: bool = False) -> WorkflowRun:
        """Re-run a completed run (its next attempt, queued); with ``notify`` deliver the
        ``workflow_run`` requested webhook of the new attempt."""
        again = self.state.rerun(run)
        if notify:
            self.deliver("workflow_run", self.payloads.workflow_run(again, "requested"))
        return again

    def advance_job(
        self,
        run: WorkflowRun | int,
        name: str,
        status: str,
        conclusion: str | None = None,
        *,
        notify: bool = False,
    ) -> WorkflowJob:
        """Move the job ``name`` of a run on (made on first use); with ``notify`` deliver the
        matching ``workflow_job`` webhook."""
        job = self.state.set_job_status(run, name, status, conclusion)
        if notify:
            found = run if isinstance(run, WorkflowRun) else self.state.runs[run]
            self.deliver("workflow_job", self.payloads.workflow_job(found, status, job=job))
        return job


    def add_label(
        self, pull: PullRequest, name: str, *, sender: str = "maintainer", notify: bool = False
    ) -> bool:
        """A person labels a PR (GitHub's "Labels" menu); with ``notify`` deliver the
        ``pull_request`` labeled webhook. False, and nothing delivered, when it had the label."""
        added = bool(self.state.add_labels(pull.repo, pull.number, [name]))
        if added and notify:
            payload = self.payloads.pull_request(pull, "labeled", label=name, sender=sender)
            self.deliver("pull_request", payload)
        return added

    def remove_label(
        self, pull: PullRequest, name: str, *, sender: str = "maintainer", notify: bool = False
    ) -> bool:
        """A person takes a label off a PR; with ``notify`` deliver ``pull_request`` unlabeled.
        False, and nothing delivered, when it did not have the label."""
        removed = self.state.remove_label(pull.repo, pull.number, name) is not None
        if removed and notify:
            payload = self.payloads.pull_request(pull, "unlabeled", label=name, sender=sender)
            self.deliver("pull_request", payload)
        return removed


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class _Server(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # the test process keeps its own handlers
        return


@contextmanager
def serve_simulator(
    state: SimulatorState | None = None,
    *,
    faults: FaultPlan | None = None,
    limiter: RateLimiter | None = None,
    require_auth: bool = True,
    validate_responses: bool = False,
    startup_timeout: float = 10.0,
) -> Iterator[Simulator]:
    """``with serve_simulator() as sim:`` it answers on ``sim.url`` (127.0.0.1) until the block ends."""
    app = create_simulator(
        state,
        faults=faults,
        limiter=limiter,
        require_auth=require_auth,
        validate_responses=validate_responses,
    )
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted sockets only when their proto says TCP,
    # and without it every keep-alive answer waits out the client's delayed ACK (40-200 ms).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_keep_alive=30,
        timeout_graceful_shutdown=2,
    )
    server = _Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"ghsim:{port}", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the GitHub simulator did not start")
        time.sleep(0.01)
    url = f"http://127.0.0.1:{port}"
    app.sim.base_url = url
    try:
        yield Simulator(url, app)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
