"""`rocmbot sandbox`: rocmbot at work without a GitHub App.

In this process: the GitHub simulator as a server on loopback, and the service (SQLite, its
worker) pointed at it as a real App, with credentials the simulator issued. The simulator holds
a small repository shaped like the ones rocmbot serves and a PR like the product's motivating
case: it re-enables a ROCm test whose expert grid (EP4 with TP2 x PP2) does not fit its 4-GPU
runner. The PR's `opened` webhook is delivered, signed, over HTTP; what rocmbot posted (the check
runs, the summary comment, the review) is printed, and can be read from the simulator's API at
the URLs printed (no token needed). Then commands on standard input post a comment on the PR
(say `/run-amd`) or push a fix, each delivered as GitHub would, and print what changed.
"""

from __future__ import annotations

import secrets
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from pydantic import SecretStr

from bot.cli.example import BASE_FILES, HEAD_FILES, TEST_TEMPLATE
from bot.store.store import Store
from config.settings import Settings
from ghsim import Simulator, SimulatorState, serve_simulator
from ghsim.state import PullRequest, Repository

REPO = "example/miles"
TEST = "tests/e2e/megatron/test_qwen35_moe.py"
WORKFLOW = ".github/workflows/rocm-targeted.yml"
AUTHOR, MAINTAINER = "contributor", "maintainer"
FIX = {TEST: TEST_TEMPLATE.format(disabled="", ep=2)}  # EP2 with TP2 x PP2: fits four GPUs
PARKED = ', disabled="FIXME: re-enable once this case passes on the MI350 runners."'
SETTLE_SECONDS = 120.0

HELP = f"""\
commands (one a line):
  comment TEXT   post TEXT on the PR as `{MAINTAINER}` (maintain rights), e.g. `comment /run-amd`
  push-fix       push a fix to the PR: the test's expert parallelism back to 2, which fits its runner
  reenable       the parked-test story, scripted: a second PR touches the parked test (its grid
                 fits, `disabled=` kept); `/run-amd disabled`; the ROCm run passes; rocmbot
                 offers the patch that brings the test back (later commands act on that PR)
  show           print the checks, the summary, the review and the replies again
  help           this list
  quit           stop (so does the end of input)
"""


@dataclass
class Sandbox:
    sim: Simulator
    repo: Repository
    pull: PullRequest
    store: Store
    service_url: str

    def _deliver(self, event: str, payload: dict[str, Any]) -> None:
        answer = self.sim.deliver(event, payload)
        if answer.status_code not in (200, 202):
            raise RuntimeError(f"the service answered {answer.status_code} to the {event} delivery")
        self.settle()

    def settle(self) -> None:
        """Return once every delivery stored so far is processed."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            counts = self.store.counts()
            if counts["queued"] == counts["processing"] == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"deliveries still waiting after {SETTLE_SECONDS:g} s: {counts}")
            time.sleep(0.05)

    def open(self) -> None:
        self._deliver("pull_request", self.sim.payloads.pull_request(self.pull, "opened"))

    def comment(self, text: str) -> None:
        posted = self.sim.state.add_comment(self.repo, self.pull.number, text, author=MAINTAINER)
        self._deliver("issue_comment", self.sim.payloads.issue_comment(posted))

    def push_fix(self) -> None:
        before = self.pull.head_sha
        self.sim.state.push(self.pull, FIX, message="Keep the expert grid within the 4-GPU runner")
        self._deliver("pull_request", self.sim.payloads.pull_request(self.pull, "synchronize", before=before))

    def reenable(self, say: TextIO) -> None:
        """The parked test's way back, step by step, each printed as it happens."""
        touched = TEST_TEMPLATE.format(disabled=PARKED, ep=2).replace("register_rocm_ci(1600,",
                                                                       "register_rocm_ci(1800,")
        head = self.sim.state.commit(self.repo, {TEST: touched}, branch="touch-parked-moe",
                                     message="Give the parked MoE test the time it takes on MI350")
        self.pull = self.sim.state.open_pull_request(self.repo, head=head, head_ref="touch-parked-moe",
                                                     author=AUTHOR)
        self.open()
        say.write(f"1. PR #{self.pull.number} changes the parked {TEST} (its marker's time; "
                  "`disabled=` kept):\n")
        say.write(self.parked_lines() + "\n")
        self.comment("/run-amd disabled")
        runs = [r for r in self.sim.state.runs.values() if r.inputs.get("pr_number") == str(self.pull.number)]
        say.write(f"2. `/run-amd disabled` by {MAINTAINER}: {len(runs)} ROCm run dispatched"
                  + "".join(f" ({r.inputs.get('suite')}: {r.inputs.get('tests')}, include_disabled="
                            f"{r.inputs.get('include_disabled')})" for r in runs) + "\n")
        for run in runs:
            self.sim.advance_run(run, "in_progress", notify=True)
            for test in str(run.inputs.get("tests") or "").split():
                self.sim.advance_job(run, f"{run.inputs.get('suite')} ({test})", "completed", "success",
                                     notify=True)
            self.sim.advance_run(run, "completed", "success", notify=True)
        self.settle()
        say.write("3. the run passed on MI350; rocmbot offers the edit that brings the test back:\n")
        say.write(self.offers() + "\n")

    def parked_lines(self) -> str:
        ours = [c for c in self.sim.state.comments_on(self.repo, self.pull.number)
                if c.body.startswith("<!-- rocmbot:summary")]
        body = ours[-1].body if ours else ""
        return "\n".join(f"  | {line}" for line in body.splitlines()
                         if "is parked" in line or "ready to re-enable" in line) or "  (no summary)"

    def offers(self) -> str:
        state, n = self.sim.state, self.pull.number
        lines = []
        for review in state.reviews_on(self.repo, n):
            for c in review.comments:
                if "```suggestion" in c.body:
                    lines.append(f"  review comment on {c.path}:{c.line}:")
                    lines.extend(f"    {line}" for line in c.body.splitlines())
        for posted in state.comments_on(self.repo, n):
            if "rocmbot:unpark" in posted.body:
                lines.append("  comment:")
                lines.extend(f"    {line}" for line in posted.body.splitlines()
                             if not line.startswith("<!--"))
        lines.append("  summary:")
        lines.append(self.parked_lines())
        return "\n".join(lines)

    def urls(self) -> str:
        api, n = f"{self.sim.url}/repos/{REPO}", self.pull.number
        return "\n".join([
            f"  check runs:  {api}/commits/{self.pull.head_sha}/check-runs",
            f"  summary and replies:  {api}/issues/{n}/comments",
            f"  review:  {api}/pulls/{n}/reviews  (inline comments: {api}/pulls/{n}/comments)",
            f"  ROCm runs dispatched:  {api}/actions/runs",
        ])

    def report(self) -> str:
        state, n, head = self.sim.state, self.pull.number, self.pull.head_sha
        lines = [f"PR #{n} at head {head[:12]}:", "checks:"]
        for check in sorted(state.check_runs_for(self.repo, head), key=lambda c: c.id):
            lines.append(f"  {check.name}: {check.conclusion or check.status}"
                         + (f" ({check.title})" if check.title else ""))
        ours = [c for c in state.comments_on(self.repo, n) if c.user.login.endswith("[bot]")]
        summary = [c for c in ours if c.body.startswith("<!-- rocmbot:summary")]
        if summary:
            body = [line for line in summary[-1].body.splitlines()[1:] if line.strip()]
            lines.append("summary comment (first lines):")
            lines.extend(f"  | {line}" for line in body[:12])
        for review in state.reviews_on(self.repo, n):
            if review.commit_id != head:
                continue
            lines.append(f"review ({review.state.lower()}):")
            lines.extend(f"  {c.path}:{c.line}: {c.body.splitlines()[0] if c.body else ''}"
                         for c in review.comments)
        replies = [c for c in ours if c not in summary]
        if replies:
            lines.append("replies to commands:")
            lines.extend(f"  - {c.body.splitlines()[0]}" for c in replies)
        runs = [r for r in state.runs.values() if r.inputs.get("pr_number") == str(n)]
        lines.append(f"ROCm runs dispatched: {len(runs)}"
                     + "".join(f"\n  - {r.inputs.get('suite')}: {r.inputs.get('tests')} at "
                               f"{str(r.inputs.get('head_sha'))[:12]}" for r in runs))
        return "\n".join(lines)


def _world(state: SimulatorState) -> tuple[Repository, PullRequest]:
    template = (resources.files("config") / "workflows" / "rocm-targeted.yml").read_text()
    state.add_installation("example", installation_id=1)
    repo = state.add_repository(REPO, files={**BASE_FILES, WORKFLOW: template})
    state.add_collaborator(repo, AUTHOR, "write")
    state.add_collaborator(repo, MAINTAINER, "maintain")
    head = state.commit(repo, HEAD_FILES, branch="reenable-moe",
                        message="Re-enable the Qwen3.5 MoE test with EP4")
    pull = state.open_pull_request(repo, head=head, head_ref="reenable-moe", author=AUTHOR)
    return repo, pull


@contextmanager
def sandbox(folder: Path, port: int = 0) -> Iterator[Sandbox]:
    """The simulator and the service running, the example PR opened but not yet delivered."""
    import uvicorn

    from bot.cli.wiring import service_app

    state = SimulatorState()
    repo, pull = _world(state)
    with serve_simulator(state, require_auth=False) as sim:
        secret = secrets.token_hex(16)
        settings = Settings(
            webhook_secret=SecretStr(secret), database_url=f"sqlite:///{folder / 'sandbox.db'}",
            dry_run=False, app_id=state.app.id, private_key=SecretStr(state.app.private_key_pem),
            github_api_url=sim.url, seconds_between_writes=0, poll_seconds=0.05,
        )
        server = uvicorn.Server(uvicorn.Config(service_app(settings, run_worker=True), host="127.0.0.1",
                                               port=port, log_config=None, access_log=False))
        thread = threading.Thread(target=server.run, name="rocmbot-sandbox", daemon=True)
        thread.start()
        deadline = time.monotonic() + 60
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the service did not start")
            time.sleep(0.02)
        url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        state.configure_webhook(f"{url}/webhook", secret)
        store = Store(settings.database_url)
        try:
            yield Sandbox(sim, repo, pull, store, url)
        finally:
            store.close()
            server.should_exit = True
            thread.join(60)


def run_sandbox(commands: TextIO, out: TextIO, *, folder: str | None = None, port: int = 0) -> int:
    """Open the example PR, print what rocmbot did, then follow ``commands`` line by line."""
    with tempfile.TemporaryDirectory(prefix="rocmbot-sandbox-") as tmp:
        where = Path(folder) if folder else Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        with sandbox(where, port) as box:
            out.write(f"GitHub simulator: {box.sim.url}\nrocmbot service: {box.service_url} "
                      f"(webhooks at /webhook, metrics at /metrics)\n"
                      f"example PR #{box.pull.number} on {REPO} by {AUTHOR}: re-enables {TEST} "
                      f"with EP4 on a 4-GPU MI350 runner\n\n")
            out.flush()
            box.open()
            out.write(box.report() + "\n\nread it from the simulator's API (no token needed):\n"
                      + box.urls() + "\n\n" + HELP)
            out.flush()
            for raw in commands:
                line = raw.strip()
                word, _, rest = line.partition(" ")
                if not line:
                    continue
                if word in ("quit", "exit"):
                    break
                out.write(f"\n> {line}\n")
                if word == "comment" and rest.strip():
                    box.comment(rest.strip())
                elif word == "push-fix":
                    box.push_fix()
                elif word == "reenable":
                    box.reenable(out)
                elif word != "show":
                    out.write(HELP)
                    out.flush()
                    continue
                out.write(box.report() + "\n" + box.urls() + "\n")
                out.flush()
    return 0
