"""Fault campaigns: the service and its workers against the GitHub simulator, on loopback only,
bounded in count and time, each ending with a table (deliveries sent, stored, processed, lost,
duplicate effects).

- ``sqlite``: deliveries over many PRs (synchronize bursts, slash commands, reviews, workflow
  runs) to ``rocmbot serve`` on SQLite with its in-process worker, while that process is killed
  with SIGKILL and restarted, and GitHub answers a share of requests with a 5xx (some after
  carrying the write out), secondary rate limits and slow answers. Deliveries sent while the
  process is down fail as they would at GitHub; the service's reconciler
  (``ROCMBOT_RECONCILE_MINUTES``) and a last ``reconcile`` pass have them redelivered.
- ``postgres``: the same against ``rocmbot serve --no-worker`` and three ``rocmbot worker``
  processes on PostgreSQL; a worker is killed with SIGKILL and restarted.
- ``pg-restart``: PostgreSQL restarted mid-run: ``/readyz`` answers 503 while it is down,
  deliveries posted meanwhile get 503 and are redelivered, and nothing stored is lost.
- ``missed``: the service down for a window; ``rocmbot reconcile`` has GitHub redeliver what
  failed, each delivery is processed once, and a second run asks for nothing.

Targets: zero lost, zero duplicates (comments and replies by their hidden marker, reviews,
dispatches, check runs), zero missing effects. What must exist is derived from the scenario the
campaign generated, not from what the bot recorded: every final head's analysis check, completed,
failing exactly when the head's test cannot launch; every PR's sticky comment describing its
final head; a run for every final head that its author's trust, a maintainer's command or an
approval the maintainer gave after seeing that head calls for; for every run, a
`rocmbot / rocm` check whose state matches the run's (completed with the run's conclusion once
the run completed); for every command, the bot's acknowledgement and its answer (a reaction, a
reply, or the PR's shared answer). Also counted, from the bot's records: no accepted dispatch
without its run, no dispatch row in flight without a run.

Run: ``.venv/bin/python -m bench.chaos [--deliveries N] [--prs P] [--kills K] [--campaign NAME]``.
Writes ``bench/results/chaos.json``. ``tests/chaos/`` runs smaller versions and asserts the targets.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr
from sqlalchemy import select, text

from bot.cli.example import BASE_FILES, TEST_TEMPLATE
from bot.github.publish import CHECK_NAME, SUMMARY_MARKER, SummaryState
from bot.github.reconcile import AppDeliveries, reconcile
from bot.store.dispatch import ACTIVE
from bot.store.schema import dispatches
from bot.store.store import Store
from config.settings import Settings
from ghsim import Simulator, serve_simulator
from ghsim.faults import RateLimiter
from ghsim.state import HookDelivery, PullRequest, Repository, Review

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "chaos.json"
SECRET = "chaos-secret"
REPO = "octo/miles"
INSTALLATION = 77
WORKFLOW_PATH = ".github/workflows/rocm-targeted.yml"
WORKFLOW = (ROOT / "config" / "workflows" / "rocm-targeted.yml").read_text()
ROCM_CHECK = "rocmbot / rocm"
# Dispatch rows GitHub has not (yet) accepted (`requested`: an in-flight row of older versions;
# `unknown`: sent by a worker killed before the answer, and its run never found).
NOT_ACCEPTED = ("requested", "dispatching", "dry_run", "withdrawn", "unknown")
COMMANDS = (
    "/run-amd", "/run-amd", "/run-amd help", "/run-amd all", "/approve-amd", "/run-amd cancel",
    "/run-amd --force", "/run-amd tests/e2e/megatron/test_nothing.py", "/run-amd frobnicate --x",
)
PEOPLE = ("dev", "dev", "lead", "stranger")
MAINTAINER = "lead"  # `maintain` on the repository; "dev" has `write`; "stranger" none (a fork)
# The expert-parallel sizes the campaign's test files use, and those whose launch fits the
# 4-GPU runner (tp 2 x pp 2: an expert grid of 2 x ep x 2 must divide the world size, 4):
# ep 4 is the PAR002 error. tests/chaos checks this against the analysis.
EP_SIZES = (1, 2, 4)
VALID_EP = frozenset({1, 2})
# The budgets are not what a campaign measures: raised so that what must run follows from who
# asked and what the head holds alone.
POLICY = """dispatch:
  budget_gpu_minutes_per_head: 100000000
  budget_gpu_minutes_per_day: 100000000
"""
RUN_COMMANDS = ("/run-amd", "/run-amd all")  # a maintainer's request at a seen head runs its tests
ANSWERED = {"rocket", "+1", "confused"}  # the reactions that end a command's handling
UNLIMITED = {"core": 100_000_000, "graphql": 100_000_000}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------------------------ faults


DISPATCHES = "/repos/*/actions/workflows/*/dispatches"


@dataclass(frozen=True)
class Faults:
    """What the simulator does to the bot's GitHub requests."""

    errors: float = 0.20  # share of requests answered with a 5xx
    after: float = 0.25  # of those, the share carried out before the 5xx (a write made, unseen)
    secondary: float = 0.03  # share of POSTs refused with a secondary rate limit (Retry-After: 1)
    slow: float = 0.03  # share of requests answered late
    slow_seconds: float = 0.3
    # GitHub's late answers to a dispatch: made at once, answered after the client's timeout
    # (the service's is 5 s here), or the connection dropped after the work; and new runs
    # listed a few seconds after the dispatch was answered
    late_dispatch: float = 0.10
    late_seconds: float = 6.0
    dropped_dispatch: float = 0.05
    listing_delay: float = 2.0
    seed: int = 7

    def inject(self, sim: Simulator) -> None:
        plan = sim.faults
        plan.clear()
        plan.reseed(self.seed)
        sim.state.run_listing_delay = self.listing_delay
        if self.late_dispatch:
            plan.answer_late(self.late_seconds, times=None, fraction=self.late_dispatch, method="POST",
                             path=DISPATCHES)
        if self.dropped_dispatch:
            plan.drop_after(times=None, fraction=self.dropped_dispatch, method="POST", path=DISPATCHES)
        if self.slow:
            plan.slow(self.slow_seconds, times=None, fraction=self.slow)
        if self.secondary:
            plan.secondary_rate_limit(retry_after=1, times=None, fraction=self.secondary, method="POST")
        if self.errors:
            before = self.errors * (1 - self.after)
            plan.fail(502, times=None, fraction=before)
            if self.after:  # of the requests the first rule let through
                plan.fail_after(502, times=None, fraction=self.errors * self.after / (1 - before))


NO_FAULTS = Faults(errors=0.0, secondary=0.0, slow=0.0, late_dispatch=0.0, dropped_dispatch=0.0,
                   listing_delay=0.0)


# ------------------------------------------------------------------------------------ processes


class Proc:
    """One service process (`rocmbot serve` or `rocmbot worker`) that can be killed and restarted."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], logdir: Path) -> None:
        self.name, self.argv, self.env, self.logdir = name, argv, env, logdir
        self.popen: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.kills = 0

    def start(self) -> None:
        self.starts += 1
        log = (self.logdir / f"{self.name}.{self.starts}.log").open("wb")
        self.popen = subprocess.Popen([sys.executable, "-m", "bot.cli", *self.argv], env=self.env,
                                      stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT)
        log.close()

    def kill(self) -> None:
        """SIGKILL: no shutdown, no lease released, no transaction finished."""
        assert self.popen is not None
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(30)
        self.kills += 1

    def stop(self) -> None:
        if self.popen is None or self.popen.poll() is not None:
            return
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(30)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(10)


@dataclass
class Service:
    """The web process(es) and worker processes of one deployment."""

    url: str
    web: list[Proc]
    workers: list[Proc]
    store: Store
    settings: Settings

    @property
    def victims(self) -> list[Proc]:
        """What a kill hits: a worker process, or the web process that runs the worker."""
        return self.workers or self.web

    def ready(self) -> bool:
        try:
            return httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not self.ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the service at {self.url} is not ready")
            time.sleep(0.1)

    def kills(self) -> int:
        return sum(p.kills for p in self.web + self.workers)


def service_env(sim: Simulator, database_url: str, *, reconcile_minutes: float = 0.0,
                concurrency: int = 2, lease: float = 5.0, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCMBOT_")}
    env.update({
        "ROCMBOT_DATABASE_URL": database_url,
        "ROCMBOT_WEBHOOK_SECRET": SECRET,
        "ROCMBOT_DRY_RUN": "0",
        "ROCMBOT_APP_ID": str(sim.state.app.id),
        "ROCMBOT_PRIVATE_KEY": sim.state.app.private_key_pem,
        "ROCMBOT_GITHUB_API_URL": sim.url,
        "ROCMBOT_SECONDS_BETWEEN_WRITES": "0",
        # the simulator is on loopback: a request a killed worker sent lands within this, and a
        # retry of its delivery waits that long before it looks for what the request made
        "ROCMBOT_GITHUB_TIMEOUT_SECONDS": "5",
        "ROCMBOT_SECONDARY_RATE_WAIT_SECONDS": "0.2",
        "ROCMBOT_GITHUB_BACKOFF_SECONDS": "0.05",
        "ROCMBOT_GITHUB_RETRIES": "8",
        "ROCMBOT_POLL_SECONDS": "0.05",
        "ROCMBOT_BACKOFF_BASE_SECONDS": "0.1",
        "ROCMBOT_BACKOFF_MAX_SECONDS": "2",
        "ROCMBOT_LEASE_SECONDS": str(lease),
        "ROCMBOT_MAX_ATTEMPTS": "40",
        "ROCMBOT_WORKER_CONCURRENCY": str(concurrency),
        "ROCMBOT_RECONCILE_MINUTES": str(reconcile_minutes),
        "ROCMBOT_RECONCILE_WINDOW_MINUTES": "60",
        "ROCMBOT_PENDING_EFFECT_SECONDS": "3",
        # the simulator lists a run at once: the run of a dispatch in doubt shows within a lookup
        "ROCMBOT_DISPATCH_LOOKUP_SECONDS": "8",
        "ROCMBOT_DISPATCH_LOOKUP_FIRST_SECONDS": "0.5",
        "ROCMBOT_LOG_LEVEL": "WARNING",
        "ROCMBOT_LOG_FORMAT": "text",
    })
    env.update(extra)
    return env


def driver_settings(sim: Simulator, database_url: str) -> Settings:
    """The campaign's own view: the App credentials and store the reconciler needs."""
    return Settings(
        webhook_secret=SecretStr(SECRET), database_url=database_url, dry_run=False,
        app_id=sim.state.app.id, private_key=SecretStr(sim.state.app.private_key_pem),
        github_api_url=sim.url, github_retries=8, github_backoff_seconds=0.05,
        secondary_rate_wait_seconds=0.2, reconcile_window_minutes=60,
    )


@contextmanager
def sqlite_service(sim: Simulator, workdir: Path, *, reconcile_minutes: float = 0.25,
                   concurrency: int = 4) -> Iterator[Service]:
    """`rocmbot serve` on SQLite with its in-process worker."""
    url = f"sqlite:///{workdir / 'chaos.db'}"
    port = free_port()
    env = service_env(sim, url, reconcile_minutes=reconcile_minutes, concurrency=concurrency)
    web = Proc("serve", ["serve", "--port", str(port)], env, workdir)
    service = Service(f"http://127.0.0.1:{port}", [web], [], Store(url), driver_settings(sim, url))
    web.start()
    try:
        service.wait_ready()
        yield service
    finally:
        web.stop()
        service.store.close()


@contextmanager
def postgres_service(sim: Simulator, database_url: str, workdir: Path, *, workers: int = 3,
                     reconcile_minutes: float = 0.25, concurrency: int = 2) -> Iterator[Service]:
    """`rocmbot serve --no-worker` and ``workers`` `rocmbot worker` processes on one PostgreSQL database."""
    store = Store(database_url)
    store.upgrade()
    with store.engine.begin() as conn:
        conn.execute(text("TRUNCATE deliveries, pr_leases, effects, selections, approvals, dispatches "
                          "RESTART IDENTITY"))
    port = free_port()
    env = service_env(sim, database_url, reconcile_minutes=reconcile_minutes, concurrency=concurrency,
                      ROCMBOT_AUTO_MIGRATE="0")
    web = Proc("serve", ["serve", "--no-worker", "--port", str(port)], env, workdir)
    procs = [Proc(f"worker{i}", ["worker"], env, workdir) for i in range(workers)]
    service = Service(f"http://127.0.0.1:{port}", [web], procs, store, driver_settings(sim, database_url))
    for proc in [web, *procs]:
        proc.start()
    try:
        service.wait_ready()
        yield service
    finally:
        for proc in [web, *procs]:
            proc.stop()
        store.close()


# ------------------------------------------------------------------------------------ the world


@dataclass
class World:
    sim: Simulator
    repo: Repository


@contextmanager
def world() -> Iterator[World]:
    """The simulator with one repository shaped like the ones rocmbot serves. Its primary rate
    limit is raised: a thousand deliveries in minutes would spend an installation's hourly 5,000
    requests, and waiting out the hour is not what these campaigns measure."""
    with serve_simulator(limiter=RateLimiter(limits=UNLIMITED)) as sim:
        state = sim.state
        repo = state.add_repository(REPO, files={**BASE_FILES, WORKFLOW_PATH: WORKFLOW,
                                                 ".github/rocmbot.yml": POLICY})
        state.add_installation("octo", installation_id=INSTALLATION)
        state.add_collaborator(repo, "dev", "write")
        state.add_collaborator(repo, "lead", "maintain")
        state.configure_webhook(None, SECRET)
        yield World(sim, repo)


def case_file(pr: int, revision: int, ep: int) -> str:
    return TEST_TEMPLATE.format(disabled="", ep=ep) + f"# PR {pr}, revision {revision}\n"


@dataclass(frozen=True)
class Command:
    """A slash command someone wrote (or a maintainer's APPROVED review), as the scenario knows it."""

    pr: int
    comment_id: int  # the review's id for a review
    body: str
    author: str
    head: str  # the PR's head when the comment was written
    seen: bool  # that head's delivery was answered before the comment's second began


class Traffic:
    """GitHub's side of a campaign: people open PRs, push, comment, review; runs move on.

    Every event is built when it happens and delivered from a pool, as GitHub delivers:
    concurrently, so deliveries of one burst may arrive out of order; a run's news is sometimes
    sent out of order on purpose (its `completed` before its `in_progress`).
    """

    def __init__(self, w: World, url: str, rng: random.Random, *, prs: int, senders: int = 6) -> None:
        self.sim, self.repo, self.rng = w.sim, w.repo, rng
        self.url = f"{url}/webhook"
        self.target_prs = prs
        self.pulls: list[PullRequest] = []
        self.revisions: Counter[int] = Counter()
        self.pool = ThreadPoolExecutor(senders, thread_name_prefix="github-sender")
        self.futures: list[Future[HookDelivery]] = []
        self.events: Counter[str] = Counter()
        self.review_ids = iter(range(8_800_000, 9_000_000))
        self.ep: dict[str, int] = {}  # a head's test file's expert-parallel size
        self.answered: dict[str, float] = {}  # when a head's delivery was answered with a 2xx
        self.commands: list[Command] = []
        self.reordered = 0  # runs whose news went out completed-first
        self.told: set[int] = set()  # runs whose `completed` news was sent

    @property
    def sent(self) -> int:
        return len(self.futures)

    def send(self, event: str, payload: dict[str, Any], *, head: str | None = None) -> None:
        self.events[event] += 1
        future = self.pool.submit(self.sim.deliver, event, payload, url=self.url)
        if head is not None:
            def answered(done: Future[HookDelivery], sha: str = head) -> None:
                if not done.exception() and 200 <= done.result().status_code < 300:
                    self.answered.setdefault(sha, time.time())
            future.add_done_callback(answered)
        self.futures.append(future)

    def close(self) -> list[HookDelivery]:
        self.pool.shutdown(wait=True)
        return [f.result() for f in self.futures]

    # -- what people do -------------------------------------------------------------------------
    def open_pr(self) -> int:
        n = len(self.pulls)
        state = self.sim.state
        author = "stranger" if n % 7 == 3 else ("lead" if n % 10 == 0 else "dev")
        branch = f"chaos-{n}"
        ep = self.rng.choice(EP_SIZES)
        head = state.commit(self.repo, {f"tests/e2e/megatron/test_chaos_{n:03d}.py": case_file(n, 0, ep)},
                            branch=branch, message=f"PR {n}")
        pull = state.open_pull_request(self.repo, head=head, head_ref=branch, author=author,
                                       fork=author == "stranger")
        self.ep[pull.head_sha] = ep
        self.pulls.append(pull)
        self.send("pull_request", self.sim.payloads.pull_request(pull, "opened"), head=pull.head_sha)
        return 1

    def burst(self, pull: PullRequest, limit: int) -> int:
        """Several pushes in a row; their synchronize deliveries go out together."""
        count = min(limit, self.rng.choice((1, 2, 2, 3, 4)))
        payloads = []
        for _ in range(count):
            before = pull.head_sha
            index = self.pulls.index(pull)
            self.revisions[index] += 1
            ep = self.rng.choice(EP_SIZES)
            self.sim.state.push(pull, {f"tests/e2e/megatron/test_chaos_{index:03d}.py":
                                       case_file(index, self.revisions[index], ep)})
            self.ep[pull.head_sha] = ep
            payload = self.sim.payloads.pull_request(pull, "synchronize", before=before)
            payloads.append((pull.head_sha, payload))
        for head, payload in payloads:
            self.send("pull_request", payload, head=head)
        return count

    def comment(self, pull: PullRequest) -> int:
        body, author = self.rng.choice(COMMANDS), self.rng.choice(PEOPLE)
        head = pull.head_sha
        answered = self.answered.get(head)
        comment = self.sim.state.add_comment(self.repo, pull.number, body, author=author)
        # GitHub's stamps are whole seconds: the bot can only know the head was seen when its
        # delivery arrived before the second the comment is stamped with began.
        seen = answered is not None and answered < comment.created_at.timestamp()
        self.commands.append(Command(pull.number, comment.id, body, author, head, seen))
        self.send("issue_comment", self.sim.payloads.issue_comment(comment))
        return 1

    def review(self, pull: PullRequest) -> int:
        state = self.sim.state
        approve = self.rng.random() < 0.7
        with state.lock:
            review = Review(next(self.review_ids), self.repo, pull.number,
                            state.account("lead" if approve else "dev"), "LGTM" if approve else "a note",
                            "APPROVED" if approve else "COMMENTED", pull.head_sha)
            state.reviews[review.id] = review
        if approve:
            answered = self.answered.get(review.commit_id)
            assert review.submitted_at is not None
            seen = answered is not None and answered < review.submitted_at.timestamp()
            self.commands.append(Command(pull.number, review.id, "APPROVED review", "lead", review.commit_id,
                                         seen))
        self.send("pull_request_review", self.sim.payloads.pull_request_review(review))
        return 1

    def workflow_run(self, limit: int) -> int:
        """A run moves on and GitHub tells: queued to in progress to completed, or the news of a
        run the bot cancelled (GitHub sends `completed` with the conclusion `cancelled`)."""
        state = self.sim.state
        news: list[dict[str, Any]] = []
        with state.lock:  # a cancel through the API cannot slip in between the look and the move
            moving = [r for r in state.runs.values() if r.status != "completed" or r.id not in self.told]
            if not moving:
                return 0
            run = self.rng.choice(moving)
            if run.status == "completed":  # cancelled through the API
                news.append(self.sim.payloads.workflow_run(run, "completed"))
            elif run.status == "queued" and limit >= 2 and self.rng.random() < 0.3:
                # a run that started and ended at once; its later news is delivered first
                state.set_run_status(run, "in_progress")
                started = self.sim.payloads.workflow_run(run, "in_progress")
                state.set_run_status(run, "completed", self.rng.choice(("success", "success", "failure")))
                news += [self.sim.payloads.workflow_run(run, "completed"), started]
                self.reordered += 1
            elif run.status == "queued":
                state.set_run_status(run, "in_progress")
                news.append(self.sim.payloads.workflow_run(run, "in_progress"))
            else:
                state.set_run_status(run, "completed", self.rng.choice(("success", "success", "failure")))
                news.append(self.sim.payloads.workflow_run(run, "completed"))
            if run.status == "completed":
                self.told.add(run.id)
        for payload in news:
            self.send("workflow_run", payload)
        return len(news)

    def step(self, limit: int) -> int:
        """One thing happens; returns how many deliveries it sent (at most ``limit``)."""
        if len(self.pulls) < self.target_prs and (not self.pulls or self.rng.random() < 0.3):
            return self.open_pr()
        pull = self.rng.choice(self.pulls)
        roll = self.rng.random()
        if roll < 0.45:
            return self.burst(pull, limit)
        if roll < 0.70:
            return self.comment(pull)
        if roll < 0.82:
            return self.review(pull)
        return self.workflow_run(limit) or self.comment(pull)

    # -- what must exist at the end ---------------------------------------------------------------
    def valid(self, head: str) -> bool:
        return self.ep[head] in VALID_EP

    def must_run(self, pull: PullRequest) -> str | None:
        """Why the PR's final head must have a ROCm run, or None when nothing calls for one.

        A trusted author's (write or more: not a fork here) valid head runs by itself. A
        maintainer's `/run-amd --force` runs any head; a maintainer's `/run-amd` or
        `/run-amd all` runs a valid one, approving an untrusted author's head as it goes; a
        maintainer's `/approve-amd` or APPROVED review releases a valid untrusted head. A maintainer's command
        counts only when the head it acts on was seen before it was written (an approval
        covers exactly what the approver could have seen)."""
        head = pull.head_sha
        if not pull.fork and self.valid(head):
            return "trusted author"
        for c in self.commands:
            if c.pr != pull.number or c.head != head or not c.seen or c.author != MAINTAINER:
                continue
            if c.body == "/run-amd --force":
                return f"{c.body} (comment {c.comment_id})"
            approves = c.body in ("/approve-amd", "APPROVED review")
            if self.valid(head) and (c.body in RUN_COMMANDS or (pull.fork and approves)):
                return f"{c.body} (comment {c.comment_id})"
        return None


# ------------------------------------------------------------------------------------ measuring


@dataclass
class Table:
    """What a campaign ends with."""

    campaign: str
    database: str
    prs: int = 0
    sent: int = 0  # distinct deliveries GitHub sent (GUIDs)
    events: dict[str, int] = field(default_factory=dict)
    failed_attempts: int = 0  # attempts GitHub recorded as failed (no connection, 503)
    redelivered: int = 0  # redelivery attempts (the service's reconciler and the final passes)
    stored: int = 0
    processed: int = 0  # done or superseded
    superseded: int = 0
    dead: int = 0
    lost: int = 0  # sent but not processed by the end
    duplicate_comments: int = 0
    duplicate_reviews: int = 0
    duplicate_dispatches: int = 0
    duplicate_check_runs: int = 0
    # Effects that should exist and do not: the final head's analysis check or summary, the run
    # or the `rocmbot / rocm` check of an accepted dispatch, a dispatch row counted as in flight
    # (against the budgets, "already running") with no run behind it.
    missing_analysis: int = 0
    wrong_analysis: int = 0  # the final head's check not completed, or failing when it should not be
    missing_summaries: int = 0
    missing_runs: int = 0
    missing_rocm_checks: int = 0
    phantom_dispatches: int = 0
    # Derived from the scenario: final heads that must have a run and have none; runs whose
    # check does not show the run's state; commands without the bot's acknowledgement or answer.
    missing_head_runs: int = 0
    stale_rocm_checks: int = 0
    missing_acks: int = 0
    missing_answers: int = 0
    sticky_matching: int = 0  # PRs whose sticky comment describes the final head
    kills: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    github_requests: int = 0
    retries: int = 0  # delivery attempts beyond the first
    seconds: float = 0.0
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def duplicates(self) -> int:
        return (self.duplicate_comments + self.duplicate_reviews + self.duplicate_dispatches
                + self.duplicate_check_runs)

    @property
    def missing(self) -> int:
        return (self.missing_analysis + self.wrong_analysis + self.missing_summaries + self.missing_runs
                + self.missing_rocm_checks + self.phantom_dispatches + self.missing_head_runs
                + self.stale_rocm_checks + self.missing_acks + self.missing_answers)

    def row(self) -> list[str]:
        return [self.campaign, self.database, str(self.sent), str(self.stored), str(self.processed),
                str(self.lost), str(self.duplicates), str(self.missing), f"{self.sticky_matching}/{self.prs}",
                str(self.kills), str(self.failed_attempts), str(self.redelivered), f"{self.seconds:.0f}"]


HEADER = ["campaign", "store", "sent", "stored", "processed", "lost", "duplicate effects", "missing effects",
          "sticky = head", "kills", "failed attempts", "redelivered", "s"]


def render(tables: list[Table]) -> str:
    rows = [HEADER, *(t.row() for t in tables)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = ["  ".join(c.rjust(w) if i >= 2 else c.ljust(w)
                       for i, (c, w) in enumerate(zip(r, widths, strict=True)))
             for r in rows]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]]) + "\n"


def _effect_ids(store: Store) -> set[int]:
    ids: set[int] = set()
    for effect in store.effects():
        if isinstance(effect.result, dict) and isinstance(effect.result.get("id"), int):
            ids.add(effect.result["id"])
    return ids


# The hidden marker of each reply the bot writes (bot/rocm/payloads.py): one per command, per
# answer on a head, per review; two comments with one marker are one reply written twice.
_MARKER = re.compile(r"<!-- rocmbot:(?:reply|answer|review-reply) [^>]*-->")


def measure(table: Table, w: World, store: Store, guids: set[str], traffic: Traffic) -> Table:
    """Count what GitHub holds against what was sent and what the scenario calls for."""
    pulls = traffic.pulls
    state = w.sim.state
    records = {d.delivery_id: d for d in store.recent(limit=1_000_000) if d.delivery_id in guids}
    table.sent = len(guids)
    table.stored = len(records)
    statuses = Counter(r.status for r in records.values())
    table.processed = statuses["done"] + statuses["superseded"]
    table.superseded = statuses["superseded"]
    table.dead = statuses["dead"]
    table.lost = table.sent - table.processed
    table.retries = sum(max(0, r.attempts - 1) for r in records.values())
    with state.lock:
        attempts = list(state.deliveries)
    table.failed_attempts = sum(1 for d in attempts if not 200 <= d.status_code < 300)
    table.redelivered = sum(1 for d in attempts if d.redelivery)
    ledger_ids = _effect_ids(store)
    bot = state.bot
    table.prs = len(pulls)
    orphans: list[int] = []
    twice: list[dict[str, Any]] = []
    wrong: list[dict[str, Any]] = []
    for pull in pulls:
        mine = [c for c in state.comments_on(w.repo, pull.number) if c.user is bot]
        summaries = [c for c in mine if c.body.startswith(SUMMARY_MARKER)]
        table.duplicate_comments += max(0, len(summaries) - 1)
        replies = [c for c in mine if c not in summaries]
        # A reply is known by its marker; one the ledger has not recorded (an attempt died after
        # GitHub made it) is still the one reply its ledger entry will find, unless there are two.
        marked = Counter(m.group(0) for c in replies if (m := _MARKER.search(c.body)))
        for marker, n in marked.items():
            if n > 1:
                table.duplicate_comments += n - 1
                twice.append({"pr": pull.number, "marker": marker, "copies": n})
        table.duplicate_comments += sum(1 for c in replies if not _MARKER.search(c.body))
        orphans.extend(c.id for c in replies if c.id not in ledger_ids)
        shown = SummaryState.load(summaries[0].body).head if summaries else None
        if len(summaries) == 1 and shown == pull.head_sha:
            table.sticky_matching += 1
        else:
            wrong.append({"pr": pull.number, "sticky": len(summaries), "shows": (shown or "-")[:12],
                          "head": pull.head_sha[:12]})
        reviews = Counter(r.commit_id for r in state.reviews_on(w.repo, pull.number) if r.user is bot)
        table.duplicate_reviews += sum(n - 1 for n in reviews.values())
    with state.lock:
        runs = Counter(str(r.inputs.get("dispatch_id")) for r in state.runs.values())
        checks = list(state.check_runs.values())
    table.duplicate_dispatches = sum(n - 1 for n in runs.values())
    analysis = Counter(c.head_sha for c in checks if c.name == CHECK_NAME)
    # A dispatch's check is known by its external id; a pending or refused one by head and title.
    rocm = Counter((c.head_sha, c.external_id or c.title) for c in checks if c.name == ROCM_CHECK)
    table.duplicate_check_runs = sum(n - 1 for n in analysis.values()) + sum(n - 1 for n in rocm.values())
    twice_checks = [{"check": CHECK_NAME, "head": h[:12], "copies": n} for h, n in analysis.items() if n > 1]
    twice_checks += [{"check": ROCM_CHECK, "head": h[:12], "of": str(k)[:60], "copies": n}
                     for (h, k), n in rocm.items() if n > 1]
    table.notes["checks_twice"] = twice_checks[:20]
    missing_effects(table, w, store, pulls, checks)
    expected_effects(table, w, traffic, checks)
    table.faults = dict(Counter(i.kind for i in w.sim.faults.injected))
    table.github_requests = state.requests
    table.notes.update({"dispatches": len(runs), "replies_twice": twice[:20],
                        "unrecorded_replies": orphans[:20], "sticky_wrong": wrong[:20],
                        "statuses": dict(statuses), "runs_news_reordered": traffic.reordered, "unprocessed": [
                            {"delivery": g, "status": r.status if r else "not stored",
                             "attempts": r.attempts if r else 0,
                             "error": (r.last_error or "")[:300] if r else ""}
                            for g, r in ((g, records.get(g)) for g in sorted(guids))
                            if r is None or r.status not in ("done", "superseded")][:20]})
    return table


def missing_effects(table: Table, w: World, store: Store, pulls: list[PullRequest],
                    checks: list[Any]) -> None:
    """Count the effects the bot's own records call for and GitHub does not hold (see `Table`)."""
    state = w.sim.state
    with state.lock:
        runs = {str(r.inputs.get("dispatch_id")) for r in state.runs.values()}
    analysed = {c.head_sha for c in checks if c.name == CHECK_NAME}
    rocm = {c.external_id for c in checks if c.name == ROCM_CHECK and c.external_id}
    gaps: list[dict[str, Any]] = []
    for pull in pulls:
        if pull.head_sha not in analysed:
            table.missing_analysis += 1
            gaps.append({"pr": pull.number, "missing": "analysis check", "head": pull.head_sha[:12]})
        if not any(c.user is state.bot and c.body.startswith(SUMMARY_MARKER)
                   for c in state.comments_on(w.repo, pull.number)):
            table.missing_summaries += 1
            gaps.append({"pr": pull.number, "missing": "summary"})
    with store.engine.connect() as conn:
        rows = conn.execute(select(dispatches.c.dispatch_id, dispatches.c.status)).all()
    table.notes["unknown_dispatches"] = sum(1 for _, status in rows if status == "unknown")
    for dispatch_id, status in rows:
        accepted = status not in NOT_ACCEPTED
        if accepted and dispatch_id not in runs:
            table.missing_runs += 1
            gaps.append({"dispatch": dispatch_id, "missing": "run", "status": status})
        if status in ACTIVE and dispatch_id not in runs:
            table.phantom_dispatches += 1
            gaps.append({"dispatch": dispatch_id, "missing": "run of an active row", "status": status})
        if dispatch_id in runs and dispatch_id not in rocm:
            table.missing_rocm_checks += 1
            gaps.append({"dispatch": dispatch_id, "missing": "rocmbot / rocm check", "status": status})
    table.notes["missing"] = gaps[:20]


def expected_effects(table: Table, w: World, traffic: Traffic, checks: list[Any]) -> None:
    """Count the effects the scenario calls for and GitHub does not hold: each final head's
    analysis check with the right verdict and its run when one is due (`Traffic.must_run`), each
    run's check in the run's state, each command's acknowledgement and answer."""
    state = w.sim.state
    bot = state.bot
    gaps: list[dict[str, Any]] = []
    newest: dict[tuple[str, str], Any] = {}
    for check in sorted(checks, key=lambda c: c.id):
        newest[(check.name, check.external_id or check.head_sha)] = check
    with state.lock:
        runs = list(state.runs.values())
    for pull in traffic.pulls:
        head = pull.head_sha
        check = newest.get((CHECK_NAME, head))
        if check is not None:
            failing = check.conclusion == "failure"
            if check.status != "completed" or failing == traffic.valid(head):
                table.wrong_analysis += 1
                gaps.append({"pr": pull.number, "wrong": "analysis check", "status": check.status,
                             "conclusion": check.conclusion, "ep": traffic.ep[head]})
        why = traffic.must_run(pull)
        if why is not None and not any(r.inputs.get("head_sha") == head for r in runs):
            table.missing_head_runs += 1
            gaps.append({"pr": pull.number, "missing": "run", "head": head[:12], "because": why})
    for run in runs:
        dispatch_id = str(run.inputs.get("dispatch_id"))
        check = newest.get((ROCM_CHECK, dispatch_id))
        if check is None:
            continue  # counted by missing_effects
        done = run.status == "completed"
        if (check.status == "completed") != done or (done and check.conclusion != run.conclusion):
            table.stale_rocm_checks += 1
            gaps.append({"dispatch": dispatch_id, "stale": "rocmbot / rocm check", "run": run.status,
                         "run_conclusion": run.conclusion, "check": check.status,
                         "check_conclusion": check.conclusion})
    for command in traffic.commands:
        if command.body == "APPROVED review":
            continue
        comment = state.issue_comments[command.comment_id]
        reactions = {r.content for r in comment.reactions if r.user is bot}
        mine = [c for c in state.comments_on(w.repo, command.pr) if c.user is bot]
        replied = any(f"rocmbot:reply {command.comment_id}:" in c.body for c in mine)
        shared = any("rocmbot:answer " in c.body for c in mine)  # a refusal or a wait, counted
        if "eyes" not in reactions:
            table.missing_acks += 1
            gaps.append({"comment": command.comment_id, "missing": "eyes", "body": command.body})
        if not (reactions & ANSWERED or replied or shared):
            table.missing_answers += 1
            gaps.append({"comment": command.comment_id, "missing": "answer", "body": command.body,
                         "by": command.author})
    table.notes["expected_missing"] = gaps[:30]
    table.notes["expected"] = {
        "final_heads": len(traffic.pulls),
        "runs_due": sum(1 for pull in traffic.pulls if traffic.must_run(pull) is not None),
        "run_checks": sum(1 for run in runs if (ROCM_CHECK, str(run.inputs.get("dispatch_id"))) in newest),
        "commands": sum(1 for c in traffic.commands if c.body != "APPROVED review"),
    }


# ------------------------------------------------------------------------------------ running


def backlog(store: Store) -> int:
    try:
        counts = store.counts()
    except Exception:  # the database is restarting
        return 0
    return counts["queued"] + counts["processing"]


def reconcile_pass(service: Service) -> int:
    """One pass of the reconciler as `rocmbot reconcile` runs it; how many redeliveries it asked."""
    api = AppDeliveries(service.settings)
    try:
        return len(reconcile(api, service.store, since_minutes=60).redelivered)
    finally:
        api.close()


def settle(service: Service, guids: set[str], deadline: float, *, grace: float = 0.0,
           reconcile_every: float = 3.0) -> int:
    """Wait until every sent delivery is stored and processed; after ``grace`` seconds (the
    service's own reconciler's turn) reconcile what is still missing, as `rocmbot reconcile`
    would. Returns how many redeliveries these final passes asked for."""
    asked = 0
    last = time.monotonic() + grace - reconcile_every
    while time.monotonic() < deadline:
        try:
            stored = service.store.stored_ids(list(guids))
            counts = service.store.counts()
            pending = counts["queued"] + counts["processing"]
        except Exception:
            time.sleep(0.5)
            continue
        if len(stored) == len(guids) and pending == 0:
            return asked
        if len(stored) < len(guids) and time.monotonic() - last > reconcile_every and service.ready():
            last = time.monotonic()
            try:
                asked += reconcile_pass(service)
            except Exception as exc:  # GitHub's 5xx on the listing: the next pass
                sys.stderr.write(f"reconcile pass failed: {exc}\n")
        time.sleep(0.2)
    return asked


def swept(service: Service, deadline: float) -> float | None:
    """Wait until the workers' sweep has completed what the deliveries left pending (no dispatch
    in doubt, no accepted dispatch without its check, the deliveries it queued again processed);
    how long that took, or None when it did not by ``deadline``."""
    start = time.monotonic()
    query = select(dispatches.c.dispatch_id).where(
        (dispatches.c.status == "dispatching")
        | (dispatches.c.status.not_in(NOT_ACCEPTED) & dispatches.c.check_run_id.is_(None)))
    while time.monotonic() < deadline:
        try:
            with service.store.engine.connect() as conn:
                waiting = conn.execute(query).first() is not None
            busy = backlog(service.store)
        except Exception:  # the database is restarting
            waiting, busy = True, 1
        if not waiting and not busy:
            return round(time.monotonic() - start, 1)
        time.sleep(0.2)
    return None


def run_traffic(traffic: Traffic, service: Service, deliveries: int, *, max_backlog: int, rate: float,
                events: dict[int, Callable[[], None]] | None = None) -> None:
    """Send ``deliveries`` deliveries, at most ``rate`` a second and while the service's backlog
    is under ``max_backlog`` (GitHub does not wait for a service that is down); run
    ``events[n]`` once ``n`` deliveries have gone out."""
    todo = dict(sorted((events or {}).items()))
    start, first = time.monotonic(), traffic.sent
    while traffic.sent < deliveries:
        while backlog(service.store) > max_backlog:
            time.sleep(0.05)
        ahead = (traffic.sent - first) / rate - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)
        traffic.step(deliveries - traffic.sent)
        for at in [n for n in todo if n <= traffic.sent]:
            todo.pop(at)()
        time.sleep(0.005)
    for action in todo.values():
        action()


def kill_schedule(service: Service, deliveries: int, kills: int,
                  rng: random.Random) -> dict[int, Callable[[], None]]:
    """SIGKILL a process (round robin over the victims) at evenly spaced points; start it again."""
    def kill(index: int) -> Callable[[], None]:
        def act() -> None:
            victim = service.victims[index % len(service.victims)]
            time.sleep(rng.random() * 0.3)  # land anywhere in the work, not only between deliveries
            victim.kill()
            victim.start()
        return act

    return {round(deliveries * (j + 1) / (kills + 1)): kill(j) for j in range(kills)}


@dataclass
class Campaign:
    deliveries: int = 1000
    prs: int = 100
    kills: int = 10
    faults: Faults = field(default_factory=Faults)
    seed: int = 1
    max_backlog: int = 40
    rate: float = 10.0  # deliveries a second at most
    grace: float = 20.0  # seconds the service's own reconciler has before the final passes
    timeout: float = 1800.0


def load_campaign(name: str, database: str, w: World, service: Service, c: Campaign) -> Table:
    """Campaign (a): traffic with kills and GitHub faults."""
    rng = random.Random(c.seed)
    table = Table(name, database)
    started = time.monotonic()
    c.faults.inject(w.sim)
    traffic = Traffic(w, service.url, rng, prs=c.prs)
    run_traffic(traffic, service, c.deliveries, max_backlog=c.max_backlog, rate=c.rate,
                events=kill_schedule(service, c.deliveries, c.kills, rng))
    sent = traffic.close()
    guids = {d.guid for d in sent}
    service.wait_ready()
    final = settle(service, guids, started + c.timeout, grace=c.grace)
    w.sim.faults.clear()
    table.notes["sweep_seconds"] = swept(service, min(started + c.timeout, time.monotonic() + 120))
    table.seconds = time.monotonic() - started
    table.kills = service.kills()
    table.events = dict(traffic.events)
    table.notes["final_pass_redeliveries"] = final
    return measure(table, w, service.store, guids, traffic)


def pg_restart_campaign(w: World, service: Service, pg: Any, c: Campaign, down_seconds: float = 3.0) -> Table:
    """Campaign (b): PostgreSQL restarted mid-run under traffic."""
    rng = random.Random(c.seed + 1)
    table = Table("pg-restart", "postgresql")
    started = time.monotonic()
    c.faults.inject(w.sim)
    probes: list[tuple[float, float, int]] = []  # (sent, answered, status)
    stop = threading.Event()

    def probe() -> None:
        while not stop.is_set():
            sent = time.monotonic()
            try:
                status = httpx.get(f"{service.url}/readyz", timeout=2).status_code
            except httpx.HTTPError:
                status = 0
            probes.append((sent, time.monotonic(), status))
            stop.wait(0.1)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    before: set[str] = set()
    window: dict[str, float] = {}

    def restart() -> None:
        before.update(d.delivery_id for d in service.store.recent(limit=1_000_000))
        pg.stop("fast")  # returns once the server is down
        window["down"] = time.monotonic()
        time.sleep(down_seconds)
        deadline = time.monotonic() + 60  # a loaded machine may not have probed yet: stay down until
        while time.monotonic() < deadline and not any(window["down"] <= s for s, _, _ in probes):
            time.sleep(0.05)  # one /readyz probe was sent and answered while down
        window["up"] = time.monotonic()
        pg.start()

    traffic = Traffic(w, service.url, rng, prs=c.prs)
    restarter = threading.Thread(target=restart)
    run_traffic(traffic, service, c.deliveries, max_backlog=c.max_backlog, rate=c.rate,
                events={c.deliveries // 2: restarter.start})
    restarter.join()
    sent = traffic.close()
    guids = {d.guid for d in sent}
    service.wait_ready()
    final = settle(service, guids, started + c.timeout, grace=c.grace)
    stop.set()
    prober.join()
    table.seconds = time.monotonic() - started
    w.sim.faults.clear()
    after = service.store.stored_ids(list(before))
    down = [s for sent, answered, s in probes if window["down"] <= sent and answered <= window["up"]]
    recovered = [answered for sent, answered, s in probes if sent > window["up"] and s == 200]
    table.notes.update({
        "stored_before_restart": len(before), "still_stored_after": len(after),
        "readyz_probes_while_down": len(down),
        "readyz_not_ready_while_down": sum(1 for s in down if s != 200),
        "readyz_seconds_to_ready_after_start": round(recovered[0] - window["up"], 2) if recovered else None,
        "webhook_503": sum(1 for d in sent if d.status_code == 503),
        "final_pass_redeliveries": final,
    })
    table.events = dict(traffic.events)
    return measure(table, w, service.store, guids, traffic)


def missed_campaign(w: World, service: Service, c: Campaign, cli_env: dict[str, str]) -> Table:
    """Campaign (c): the service down for a window; `rocmbot reconcile` recovers what failed."""
    rng = random.Random(c.seed + 2)
    table = Table("missed", "sqlite")
    started = time.monotonic()
    NO_FAULTS.inject(w.sim)
    traffic = Traffic(w, service.url, rng, prs=c.prs)
    (web,) = service.web
    third = c.deliveries // 3
    run_traffic(traffic, service, third, max_backlog=c.max_backlog, rate=c.rate)
    for f in traffic.futures:
        f.result()
    web.stop()  # down: GitHub's deliveries fail to connect
    run_traffic(traffic, service, 2 * third, max_backlog=c.max_backlog, rate=c.rate)
    for f in traffic.futures:
        f.result()
    web.start()
    service.wait_ready()
    run_traffic(traffic, service, c.deliveries, max_backlog=c.max_backlog, rate=c.rate)
    sent = traffic.close()
    guids = {d.guid for d in sent}
    failed = {d.guid for d in sent if not 200 <= d.status_code < 300}

    def cli() -> str:
        done = subprocess.run([sys.executable, "-m", "bot.cli", "reconcile", "--since", "30"], env=cli_env,
                              capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"rocmbot reconcile failed: {done.stderr.strip()}")
        return done.stdout.strip().splitlines()[-1]

    first = cli()
    final = settle(service, guids, started + c.timeout)
    second = cli()
    table.seconds = time.monotonic() - started
    records = [service.store.get(g) for g in guids]
    table.notes.update({
        "failed_while_down": len(failed), "first_reconcile": first, "second_reconcile": second,
        "attempts_over_one": sum(1 for r in records if r is not None and r.attempts != 1),
        "final_pass_redeliveries": final,
    })
    table.events = dict(traffic.events)
    return measure(table, w, service.store, guids, traffic)


# ------------------------------------------------------------------------------------ the script


def run_campaigns(names: list[str], c: Campaign, workdir: Path) -> list[Table]:
    from tests.pg import postgres_instance

    tables: list[Table] = []
    for name in names:
        sys.stderr.write(f"campaign {name}: {c.deliveries} deliveries over {c.prs} PRs\n")
        with ExitStack() as stack:
            w = stack.enter_context(world())
            folder = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=workdir))
            if name == "sqlite":
                service = stack.enter_context(sqlite_service(w.sim, folder))
                table = load_campaign("sqlite", "sqlite", w, service, c)
            elif name == "postgres":
                pg = stack.enter_context(postgres_instance())
                service = stack.enter_context(postgres_service(w.sim, pg.url, folder))
                table = load_campaign("postgres", "postgresql", w, service, c)
            elif name == "pg-restart":
                pg = stack.enter_context(postgres_instance())
                service = stack.enter_context(postgres_service(w.sim, pg.url, folder, reconcile_minutes=0.1))
                size = Campaign(deliveries=max(40, c.deliveries // 4), prs=max(5, c.prs // 4), kills=0,
                                faults=NO_FAULTS, seed=c.seed, max_backlog=c.max_backlog, timeout=c.timeout)
                table = pg_restart_campaign(w, service, pg, size)
            elif name == "missed":
                service = stack.enter_context(sqlite_service(w.sim, folder, reconcile_minutes=0))
                size = Campaign(deliveries=max(30, c.deliveries // 5), prs=max(5, c.prs // 5), kills=0,
                                faults=NO_FAULTS, seed=c.seed, max_backlog=c.max_backlog, timeout=c.timeout)
                env = service_env(w.sim, service.settings.database_url)
                table = missed_campaign(w, service, size, env)
            else:
                raise SystemExit(f"unknown campaign {name}")
        sys.stderr.write(render([table]))
        tables.append(table)
    return tables


CAMPAIGNS = ("sqlite", "postgres", "pg-restart", "missed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.chaos", description=__doc__.split("\n\n")[0])
    parser.add_argument("--deliveries", type=int, default=1000)
    parser.add_argument("--prs", type=int, default=100)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--campaign", action="append", choices=CAMPAIGNS,
                        help="run only these (repeatable; default: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per campaign at most")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep the campaign's databases and process logs in DIR (default: removed)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)  # GitHub's 5xx are the point here

    def on_term(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)  # unwinds the campaign: its processes and servers stop

    signal.signal(signal.SIGTERM, on_term)
    campaign = Campaign(deliveries=args.deliveries, prs=args.prs, kills=args.kills, seed=args.seed,
                        timeout=args.timeout)
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        tables = run_campaigns(list(args.campaign or CAMPAIGNS), campaign, args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="rocmbot-chaos-") as workdir:
            tables = run_campaigns(list(args.campaign or CAMPAIGNS), campaign, Path(workdir))
    sys.stdout.write(render(tables))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({
        "command": ".venv/bin/python -m bench.chaos " + " ".join(argv if argv is not None else sys.argv[1:]),
        "campaign": {**asdict(campaign), "faults": asdict(campaign.faults)},
        "tables": [{**asdict(t), "duplicates": t.duplicates, "missing": t.missing} for t in tables],
    }, indent=2) + "\n")
    failed = [t.campaign for t in tables
              if t.lost or t.duplicates or t.missing or t.sticky_matching != t.prs]
    if failed:
        sys.stderr.write(f"targets missed: {', '.join(failed)}\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
