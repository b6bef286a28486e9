"""The simulator's in-memory GitHub: accounts, the App, repositories, pull requests and everything written."""

from __future__ import annotations

import base64
import itertools
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from ghsim.diff import FileDiff, diff_commits
from ghsim.objects import Commit, ObjectStore, Signature, git_refs
from ghsim.order import NewsOrder

PERMISSION_LEVELS = ("admin", "maintain", "write", "triage", "read")
_LEGACY_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
}


def utcnow() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def iso(when: datetime | None) -> str | None:
    """GitHub's timestamp format, ``2026-01-01T00:00:00Z``."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if when else None


def node_id(kind: str, number: int) -> str:
    return f"{kind}_" + base64.urlsafe_b64encode(f"ghsim:{kind}:{number}".encode()).decode().rstrip("=")


@dataclass
class Account:
    """A user, organization or bot."""

    login: str
    id: int
    type: str = "User"  # User, Organization or Bot

    @property
    def node_id(self) -> str:
        return node_id({"Organization": "O", "Bot": "BOT"}.get(self.type, "U"), self.id)


@dataclass
class App:
    """The GitHub App the simulator answers for."""

    id: int
    slug: str
    name: str
    owner: Account
    private_key_pem: str
    public_key_pem: str
    webhook_url: str | None = None
    webhook_secret: str | None = None
    permissions: dict[str, str] = field(
        default_factory=lambda: {
            "checks": "write",
            "contents": "read",
            "issues": "write",
            "pull_requests": "write",
            "actions": "write",
            "metadata": "read",
            "members": "read",
        }
    )
    events: list[str] = field(
        default_factory=lambda: [
            "check_run",
            "issue_comment",
            "pull_request",
            "pull_request_review",
            "workflow_job",
            "workflow_run",
        ]
    )
    created_at: datetime = field(default_factory=utcnow)


@dataclass
class Installation:
    """One installation of the App on an account; ``repositories`` None means all of its repositories."""

    id: int
    account: Account
    repositories: set[str] | None = None
    suspended: bool = False
    created_at: datetime = field(default_factory=utcnow)


@dataclass
class Token:
    """An installation access token."""

    token: str
    installation_id: int
    expires_at: datetime
    repositories: set[str] | None = None


@dataclass
class Workflow:
    """A workflow file on the default branch."""

    id: int
    path: str
    text: str
    name: str
    state: str = "active"
    created_at: datetime = field(default_factory=utcnow)


@dataclass
class WorkflowRun:
    """One run of a workflow."""

    id: int
    workflow_id: int
    name: str
    display_title: str
    run_number: int
    event: str
    head_branch: str | None
    head_sha: str
    actor: Account
    path: str
    inputs: dict[str, Any] = field(default_factory=dict)
    status: str = "queued"
    conclusion: str | None = None
    run_attempt: int = 1
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    listed_at: float = 0.0  # time.time() from which the run lists show it
    found_at: float = 0.0  # and from which ``GET .../runs/{id}`` (its jobs, its cancel) finds it

    def listed(self, now: float) -> bool:
        return now >= self.listed_at

    def found(self, now: float) -> bool:
        return now >= self.found_at


@dataclass
class WorkflowJob:
    """One job of a workflow run (a matrix entry is a job of its own, named after its values)."""

    id: int
    run_id: int
    name: str
    status: str = "queued"
    conclusion: str | None = None
    run_attempt: int = 1  # a re-run makes the jobs of its attempt anew
    runner_name: str | None = None
    labels: list[str] = field(default_factory=lambda: ["self-hosted", "linux-mi350-gpu-4"])
    created_at: datetime = field(default_factory=utcnow)
    started_at: datetime | None = None
    completed_at: datetime | None = None
    # its log, as the link of ``GET .../actions/jobs/{id}/logs`` serves it (None: a few lines
    # the runner would have written); ``log_gone``: that request answers 410 (past its
    # retention) or 404 (deleted); ``log_cut_at``: the download stops after that many bytes of
    # its body, the connection closed
    log: bytes | None = None
    log_gone: int | None = None
    log_cut_at: int | None = None

    def log_bytes(self) -> bytes:
        """The log the job's link serves: the one set, or a runner's few lines."""
        if self.log is not None:
            return self.log
        when = self.started_at or self.created_at
        lines = [f"Job is about to start running on the runner: {self.runner_name or 'runner'}",
                 f"##[group]Run {self.name}", "##[endgroup]"]
        if self.conclusion == "failure":
            lines.append("##[error]Process completed with exit code 1.")
        lines.append("Cleaning up orphan processes")
        return stamped("\n".join(lines) + "\n", when)


def stamped(text: str, when: datetime) -> bytes:
    """A log as GitHub serves one: UTF-8 with a byte order mark, each line after the time it
    was written (``2026-12-02T10:00:00.0000000Z ``)."""
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S.0000000Z ")
    lines = text.split("\n")
    body = "\n".join(stamp + line if line or i < len(lines) - 1 else line for i, line in enumerate(lines))
    return "\ufeff".encode() + body.encode("utf-8")


@dataclass
class Label:
    """A repository's label; issues and pull requests carry some."""

    id: int
    name: str
    color: str = "ededed"  # GitHub's colour for a label made by naming it
    description: str | None = None
    default: bool = False


@dataclass
class Repository:
    """A repository: refs over a shared object store, plus workflows, collaborators and labels."""

    id: int
    owner: Account
    name: str
    store: ObjectStore
    default_branch: str = "main"
    private: bool = False
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    workflows: dict[int, Workflow] = field(default_factory=dict)
    collaborators: dict[str, str] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)  # by name, lower-cased
    fork_of: Repository | None = None
    created_at: datetime = field(default_factory=utcnow)
    # deleted (or transferred where the App is not installed): every request that names it, its
    # PRs included, is answered 404, REST and GraphQL alike (see SimulatorState.delete_repository)
    deleted: bool = False

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"

    @property
    def node_id(self) -> str:
        return node_id("R", self.id)

    def resolve(self, ref: str | None) -> Commit | None:
        """The commit a branch, tag, ``refs/...`` name or (abbreviated) SHA names."""
        ref = ref or self.default_branch
        for prefix in ("refs/heads/", "refs/tags/"):
            ref = ref.removeprefix(prefix)
        sha = self.branches.get(ref) or self.tags.get(ref)
        if sha is None and re.fullmatch(r"[0-9a-f]{4,40}", ref):
            matches = [s for s in self.store.commits if s.startswith(ref)]
            sha = matches[0] if len(matches) == 1 else None
        return self.store.commits.get(sha) if sha else None


@dataclass
class Reaction:
    id: int
    user: Account
    content: str
    created_at: datetime = field(default_factory=utcnow)


@dataclass
class IssueComment:
    id: int
    repo: Repository
    number: int
    user: Account
    body: str
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class Issue:
    """An issue; a pull request is an issue with a ``pull`` attached."""

    id: int
    repo: Repository
    number: int
    title: str
    body: str | None
    user: Account
    state: str = "open"
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    closed_at: datetime | None = None
    pull: PullRequest | None = None
    labels: list[Label] = field(default_factory=list)


@dataclass
class PullRequest:
    id: int
    repo: Repository
    number: int
    title: str
    body: str | None
    user: Account
    head_ref: str
    head_sha: str
    head_repo: Repository
    base_ref: str
    base_sha: str
    draft: bool = False
    state: str = "open"
    merged: bool = False
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    closed_at: datetime | None = None
    merged_at: datetime | None = None

    @property
    def fork(self) -> bool:
        return self.head_repo is not self.repo

    def files(self, head_sha: str | None = None) -> list[FileDiff]:
        """The PR's changed files (at ``head_sha``, default the current head), against the merge base."""
        store = self.repo.store
        head = store.commits[head_sha or self.head_sha]
        merge_base = store.merge_base(self.base_sha, head.sha) or self.base_sha
        return diff_commits(store, store.commits.get(merge_base), head)


@dataclass
class ReviewComment:
    id: int
    review_id: int
    repo: Repository
    number: int
    user: Account
    body: str
    path: str
    commit_id: str
    side: str
    line: int | None
    start_line: int | None
    start_side: str | None
    position: int | None
    diff_hunk: str
    created_at: datetime = field(default_factory=utcnow)


@dataclass
class Review:
    id: int
    repo: Repository
    number: int
    user: Account
    body: str
    state: str
    commit_id: str
    submitted_at: datetime | None = field(default_factory=utcnow)
    comments: list[ReviewComment] = field(default_factory=list)


@dataclass
class CheckRun:
    id: int
    repo: Repository
    name: str
    head_sha: str
    app_id: int
    status: str = "queued"
    conclusion: str | None = None
    started_at: datetime | None = field(default_factory=utcnow)
    completed_at: datetime | None = None
    details_url: str | None = None
    external_id: str | None = None
    title: str | None = None
    summary: str | None = None
    text: str | None = None
    annotations: list[dict[str, Any]] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    check_suite_id: int = 0


@dataclass
class HookDelivery:
    """One webhook delivery the simulator sent or was told about."""

    id: int
    guid: str
    event: str
    action: str | None
    url: str
    request_headers: dict[str, str]
    payload: bytes
    status_code: int
    response_headers: dict[str, str]
    response_body: str
    duration: float
    installation_id: int | None
    repository_id: int | None
    redelivery: bool = False
    delivered_at: datetime = field(default_factory=utcnow)
    held: bool = False  # held back by `state.news` (not sent yet, not listed): see ghsim.order

    @property
    def status(self) -> str:
        if self.held:
            return "held"
        if 200 <= self.status_code < 300:
            return "OK"
        return (
            f"Invalid HTTP Response: {self.status_code}" if self.status_code else "failed to connect to host"
        )


@dataclass
class Call:
    """One request the simulator answered (or refused)."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    status: int = 0
    operation: str | None = None
    installation_id: int | None = None
    fault: str | None = None
    at: float = field(default_factory=time.time)
    # a download from a link the API gave (a job's log): the headers that matter there, lower
    # case (`range`, and `authorization` when one was sent where none is wanted)
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def is_write(self) -> bool:
        return self.method not in ("GET", "HEAD") and self.path != "/graphql"


@dataclass
class ValidationFailure:
    """A request that GitHub's description (or its prose) rejects; tests assert there are none."""

    method: str
    path: str
    operation: str | None
    message: str
    body: Any = None


class SimulatorState:
    """Everything the simulator knows; every method is safe to call from tests while it serves."""

    def __init__(
        self,
        *,
        app_id: int = 1000,
        app_slug: str = "rocmbot",
        private_key_pem: str | None = None,
        graphql_blob_limit: int = 512 * 1024,
        token_ttl: timedelta = timedelta(hours=1),
        run_listing_delay: float = 0.0,
        run_lookup_delay: float = 0.0,
    ) -> None:
        self.lock = threading.RLock()
        self._ids = itertools.count(1)
        self.base_url = "http://testserver"
        self.graphql_blob_limit = graphql_blob_limit
        self.token_ttl = token_ttl
        # GitHub's timing: a dispatched run is missing from the run lists for a while after its
        # dispatch was answered, and may not be found by its id either (0: at once)
        self.run_listing_delay = run_listing_delay
        self.run_lookup_delay = run_lookup_delay
        # the links to download a job's log: signed with this key, good for this long (GitHub:
        # one minute)
        self.link_key = secrets.token_bytes(16)
        self.log_link_seconds = 60.0
        self.accounts: dict[str, Account] = {}
        pem = private_key_pem or default_private_key()
        key = serialization.load_pem_private_key(pem.encode(), password=None)
        public = (
            key.public_key()
            .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            .decode()
        )
        owner = self.account("rocm-org", "Organization")
        self.app = App(app_id, app_slug, app_slug, owner, pem, public)
        self.bot = self.account(f"{app_slug}[bot]", "Bot")
        self.installations: dict[int, Installation] = {}
        self.tokens: dict[str, Token] = {}
        self.repos: dict[str, Repository] = {}
        self.issues: dict[tuple[str, int], Issue] = {}
        self.issue_comments: dict[int, IssueComment] = {}
        self.reviews: dict[int, Review] = {}
        self.check_runs: dict[int, CheckRun] = {}
        self.runs: dict[int, WorkflowRun] = {}
        self.jobs: dict[int, WorkflowJob] = {}
        self.teams: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}
        self.deliveries: list[HookDelivery] = []
        self.news = NewsOrder()  # a run's webhooks held back, to deliver them out of order
        self.calls: list[Call] = []
        self.validation_failures: list[ValidationFailure] = []
        self.response_failures: list[ValidationFailure] = []
        self.requests = 0

    # -- ids and accounts --------------------------------------------------------------------------
    def next_id(self) -> int:
        with self.lock:
            return next(self._ids)

    def account(self, login: str, kind: str | None = None) -> Account:
        """The account ``login``, created on first use (``kind``: User, Organization or Bot)."""
        with self.lock:
            found = self.accounts.get(login.lower())
            if found is None:
                found = Account(login, 5_000_000 + self.next_id(), kind or "User")
                self.accounts[login.lower()] = found
            elif kind and found.type != kind:
                found.type = kind
            return found

    # -- the App ---------------------------------------------------------------------------------
    def configure_webhook(self, url: str | None, secret: str | None) -> None:
        """Where :meth:`Simulator.deliver` sends webhooks by default, and the secret they are signed with."""
        with self.lock:
            self.app.webhook_url, self.app.webhook_secret = url, secret

    def add_installation(
        self,
        account: str,
        *,
        repositories: Iterable[str] | None = None,
        installation_id: int | None = None,
        kind: str = "Organization",
    ) -> Installation:
        with self.lock:
            ident = installation_id or 40_000_000 + self.next_id()
            installed = Installation(
                ident, self.account(account, kind), set(repositories) if repositories is not None else None
            )
            self.installations[ident] = installed
            return installed

    def issue_token(self, installation: Installation, repositories: set[str] | None = None) -> Token:
        with self.lock:
            value = "ghs_" + secrets.token_urlsafe(27).replace("-", "a").replace("_", "b")[:36]
            token = Token(value, installation.id, utcnow() + self.token_ttl, repositories)
            self.tokens[value] = token
            return token

    def installation_for(self, repo: Repository) -> Installation | None:
        for installed in self.installations.values():
            if installed.account.login.lower() != repo.owner.login.lower():
                continue
            if installed.repositories is None or repo.full_name in installed.repositories:
                return installed
        return None

    # -- repositories ----------------------------------------------------------------------------
    def add_repository(
        self,
        full_name: str,
        *,
        files: Mapping[str, str | bytes] | None = None,
        default_branch: str = "main",
        private: bool = False,
        owner_type: str | None = None,
        message: str = "initial commit",
    ) -> Repository:
        """A repository whose default branch holds ``files`` in one commit (no commit when None)."""
        with self.lock:
            repo = self._new_repo(full_name, ObjectStore(), default_branch, private, owner_type)
            if files is not None:
                self.commit(repo, files, message=message)
            return repo

    def add_repository_from_git(
        self,
        full_name: str,
        checkout: Path,
        *,
        revs: Iterable[str] = (),
        private: bool = False,
        owner_type: str | None = None,
    ) -> Repository:
        """A repository holding the commits, branches and tags of a local git checkout."""
        store = ObjectStore()
        store.import_git(checkout, revs)
        branches, tags, head = git_refs(checkout)
        with self.lock:
            repo = self._new_repo(full_name, store, head or "main", private, owner_type)
            repo.branches.update({b: s for b, s in branches.items() if s in store.commits})
            repo.tags.update({t: s for t, s in tags.items() if s in store.commits})
            self._discover_workflows(repo)
            return repo

    def _new_repo(
        self, full_name: str, store: ObjectStore, default_branch: str, private: bool, owner_type: str | None
    ) -> Repository:
        owner, _, name = full_name.partition("/")
        repo = Repository(
            100_000 + self.next_id(), self.account(owner, owner_type), name, store, default_branch, private
        )
        self.repos[full_name.lower()] = repo
        return repo

    def repo(self, full_name: str) -> Repository:
        with self.lock:
            return self.repos[full_name.lower()]

    def delete_repository(self, repo: Repository) -> None:
        """Delete a repository: GitHub answers 404 to it and to its PRs from now on (a PR has no
        deletion of its own; this is how one disappears). What it held stays for assertions."""
        with self.lock:
            repo.deleted = True

    def commit(
        self,
        repo: Repository,
        files: Mapping[str, str | bytes | None],
        *,
        branch: str | None = None,
        parent: str | None = None,
        message: str = "change",
        author: Signature | None = None,
    ) -> str:
        """Commit ``files`` on top of ``parent`` (default: the tip of ``branch``); moves ``branch``."""
        with self.lock:
            branch = branch or (None if parent else repo.default_branch)
            base = parent or (repo.branches.get(branch) if branch else None)
            if base is None and branch and branch != repo.default_branch:
                base = repo.branches.get(repo.default_branch)  # a new branch starts at the default branch
            kwargs = {"author": author} if author else {}
            made = repo.store.commit(
                files, parents=[base] if base else [], base=base, message=message, **kwargs
            )
            if branch:
                repo.branches[branch] = made.sha
            if branch == repo.default_branch:
                self._discover_workflows(repo)
            return made.sha

    def _discover_workflows(self, repo: Repository) -> None:
        head = repo.resolve(repo.default_branch)
        if head is None:
            return
        known = {w.path: w for w in repo.workflows.values()}
        for path, entry in sorted(head.files.items()):
            if re.fullmatch(r"\.github/workflows/[^/]+\.ya?ml", path):
                text = repo.store.blobs[entry.sha].decode("utf-8", "replace")
                if path in known:
                    known[path].text = text
                else:
                    self.add_workflow(repo, path, text)

    def add_workflow(self, repo: Repository, path: str, text: str) -> Workflow:
        """Register a workflow (its YAML ``text``); files under .github/workflows are found on their own."""
        import yaml

        with self.lock:
            try:
                loaded = yaml.safe_load(text)
            except yaml.YAMLError:
                loaded = None
            name = loaded.get("name") if isinstance(loaded, dict) else None
            workflow = Workflow(160_000 + self.next_id(), path, text, str(name or path))
            repo.workflows[workflow.id] = workflow
            return workflow

    def add_collaborator(self, repo: Repository, login: str, permission: str = "write") -> None:
        if permission not in PERMISSION_LEVELS:
            raise ValueError(f"permission must be one of {PERMISSION_LEVELS}")
        with self.lock:
            self.account(login)
            repo.collaborators[login.lower()] = permission

    def permission(self, repo: Repository, login: str) -> tuple[str, str]:
        """(legacy permission, role name) of ``login`` on ``repo``."""
        role = repo.collaborators.get(login.lower())
        if role is None:
            return ("none", "none") if repo.private else ("read", "read")
        return _LEGACY_PERMISSION[role], role

    def add_team_member(
        self, org: str, team: str, login: str, *, role: str = "member", state: str = "active"
    ) -> None:
        with self.lock:
            self.account(org, "Organization")
            self.account(login)
            self.teams.setdefault((org.lower(), team.lower()), {})[login.lower()] = (role, state)

    # -- issues and pull requests ----------------------------------------------------------------
    def _next_number(self, repo: Repository) -> int:
        return 1 + max((n for (name, n) in self.issues if name == repo.full_name.lower()), default=0)

    def open_issue(
        self, repo: Repository, title: str, *, body: str | None = None, author: str = "contributor"
    ) -> Issue:
        with self.lock:
            number = self._next_number(repo)
            issue = Issue(2_000_000 + self.next_id(), repo, number, title, body, self.account(author))
            self.issues[(repo.full_name.lower(), number)] = issue
            return issue

    def open_pull_request(
        self,
        repo: Repository,
        *,
        head: str,
        base: str | None = None,
        head_ref: str = "feature",
        title: str = "A change",
        body: str | None = None,
        author: str = "contributor",
        draft: bool = False,
        fork: bool = False,
    ) -> PullRequest:
        """A PR from ``head`` (a SHA or branch) into ``base`` (a branch, default the default branch).

        With ``fork`` the head lives in ``<author>/<name>``, a fork sharing the object store.
        """
        with self.lock:
            base_ref = base or repo.default_branch
            base_commit = repo.resolve(base_ref)
            head_commit = repo.resolve(head)
            if base_commit is None or head_commit is None:
                raise KeyError(f"unknown ref: {base_ref if base_commit is None else head}")
            head_repo = repo
            if fork:
                fork_name = f"{author}/{repo.name}"
                head_repo = self.repos.get(fork_name.lower()) or self._new_repo(
                    fork_name, repo.store, repo.default_branch, repo.private, "User"
                )
                head_repo.fork_of = repo
            if head_ref not in head_repo.branches or head_repo.branches[head_ref] != head_commit.sha:
                head_repo.branches[head_ref] = head_commit.sha
            number = self._next_number(repo)
            user = self.account(author)
            pull = PullRequest(
                3_000_000 + self.next_id(),
                repo,
                number,
                title,
                body,
                user,
                head_ref,
                head_commit.sha,
                head_repo,
                base_ref,
                base_commit.sha,
                draft,
            )
            issue = Issue(2_000_000 + self.next_id(), repo, number, title, body, user, pull=pull)
            self.issues[(repo.full_name.lower(), number)] = issue
            return pull

    def pull(self, repo: Repository, number: int) -> PullRequest | None:
        issue = self.issues.get((repo.full_name.lower(), number))
        return issue.pull if issue else None

    def issue(self, repo: Repository, number: int) -> Issue | None:
        return self.issues.get((repo.full_name.lower(), number))

    def issues_of(self, repo: Repository) -> list[Issue]:
        """A repository's issues and PRs, by number."""
        with self.lock:
            name = repo.full_name.lower()
            found = [issue for (owner, _), issue in self.issues.items() if owner == name]
            return sorted(found, key=lambda i: i.number)

    def push(
        self,
        pull: PullRequest,
        files: Mapping[str, str | bytes | None] | None = None,
        *,
        sha: str | None = None,
        message: str = "push",
    ) -> str:
        """Move the PR head: to ``sha``, or to a new commit of ``files`` on top of the head."""
        with self.lock:
            if sha is None:
                sha = self.commit(
                    pull.head_repo, files or {}, branch=pull.head_ref, parent=pull.head_sha, message=message
                )
            pull.head_sha = sha
            pull.head_repo.branches[pull.head_ref] = sha
            pull.updated_at = utcnow()
            return sha

    def set_pull_state(
        self, pull: PullRequest, *, state: str | None = None, draft: bool | None = None, merged: bool = False
    ) -> None:
        with self.lock:
            if draft is not None:
                pull.draft = draft
            if state is not None:
                pull.state = state
                pull.closed_at = utcnow() if state == "closed" else None
                issue = self.issue(pull.repo, pull.number)
                if issue:
                    issue.state, issue.closed_at = state, pull.closed_at
            if merged:
                pull.merged, pull.merged_at = True, utcnow()
            pull.updated_at = utcnow()

    def add_comment(
        self, repo: Repository, number: int, body: str, *, author: str = "contributor"
    ) -> IssueComment:
        """A comment written by a person (for example a slash command)."""
        with self.lock:
            comment = IssueComment(7_000_000 + self.next_id(), repo, number, self.account(author), body)
            self.issue_comments[comment.id] = comment
            return comment

    def label(
        self, repo: Repository, name: str, *, color: str = "ededed", description: str | None = None
    ) -> Label:
        """The repository's label ``name`` (names are case-insensitive), made on first use."""
        with self.lock:
            found = repo.labels.get(name.lower())
            if found is None:
                found = Label(6_000_000 + self.next_id(), name, color, description)
                repo.labels[name.lower()] = found
            return found

    def add_labels(self, repo: Repository, number: int, names: Iterable[str]) -> list[Label]:
        """Label issue or PR ``number`` (a label it lacks is made, as GitHub does); the labels
        it did not carry before, in order."""
        with self.lock:
            issue = self.issues[(repo.full_name.lower(), number)]
            added = []
            for name in names:
                label = self.label(repo, name)
                if label not in issue.labels:
                    issue.labels.append(label)
                    added.append(label)
            if added:
                issue.updated_at = utcnow()
                if issue.pull is not None:
                    issue.pull.updated_at = issue.updated_at
            return added

    def remove_label(self, repo: Repository, number: int, name: str) -> Label | None:
        """Take label ``name`` off issue or PR ``number``; None when it did not carry it."""
        with self.lock:
            issue = self.issues[(repo.full_name.lower(), number)]
            found = next((label for label in issue.labels if label.name.lower() == name.lower()), None)
            if found is not None:
                issue.labels.remove(found)
                issue.updated_at = utcnow()
                if issue.pull is not None:
                    issue.pull.updated_at = issue.updated_at
            return found

    def labels_on(self, repo: Repository, number: int) -> list[Label]:
        """The labels issue or PR ``number`` carries, in the order they were added."""
        with self.lock:
            issue = self.issues.get((repo.full_name.lower(), number))
            return list(issue.labels) if issue else []

    def comments_on(self, repo: Repository, number: int) -> list[IssueComment]:
        with self.lock:
            return [c for c in self.issue_comments.values() if c.repo is repo and c.number == number]

    def reviews_on(self, repo: Repository, number: int) -> list[Review]:
        with self.lock:
            return [r for r in self.reviews.values() if r.repo is repo and r.number == number]

    def check_runs_for(self, repo: Repository, sha: str) -> list[CheckRun]:
        with self.lock:
            return [c for c in self.check_runs.values() if c.repo is repo and c.head_sha == sha]

    # -- workflow runs ---------------------------------------------------------------------------
    def set_run_status(
        self, run: WorkflowRun | int, status: str, conclusion: str | None = None
    ) -> WorkflowRun:
        """Move a workflow run along: queued, in_progress, completed (with a conclusion)."""
        with self.lock:
            found = run if isinstance(run, WorkflowRun) else self.runs[run]
            found.status, found.conclusion, found.updated_at = status, conclusion, utcnow()
            return found

    def rerun(self, run: WorkflowRun | int) -> WorkflowRun:
        """Re-run a completed run ("Re-run all jobs"): the same run, its next attempt, queued;
        its jobs are made anew for the attempt."""
        with self.lock:
            found = run if isinstance(run, WorkflowRun) else self.runs[run]
            if found.status != "completed":
                raise ValueError(f"run {found.id} is {found.status}: only a completed run is re-run")
            found.run_attempt += 1
            found.status, found.conclusion, found.updated_at = "queued", None, utcnow()
            return found

    def set_job_status(
        self, run: WorkflowRun | int, name: str, status: str, conclusion: str | None = None
    ) -> WorkflowJob:
        """Move the job ``name`` of a run's current attempt along (made on first use), as a
        runner would."""
        with self.lock:
            run_id = run.id if isinstance(run, WorkflowRun) else run
            found = run if isinstance(run, WorkflowRun) else self.runs.get(run_id)
            attempt = found.run_attempt if found is not None else 1
            job = next((j for j in self.jobs.values() if j.run_id == run_id and j.name == name
                        and j.run_attempt == attempt), None)
            if job is None:
                job = WorkflowJob(180_000_000 + self.next_id(), run_id, name, run_attempt=attempt)
                self.jobs[job.id] = job
            job.status, job.conclusion = status, conclusion
            if status != "queued" and job.started_at is None:
                job.started_at, job.runner_name = utcnow(), "mi350-runner-1"
            if status == "completed":
                job.completed_at = utcnow()
            return job

    def set_job_log(self, job: WorkflowJob | int, log: str | bytes, *, cut_at: int | None = None
                    ) -> WorkflowJob:
        """The log a job's link serves: text is stamped as GitHub stamps it (each line after
        its time, a byte order mark first); bytes are served as they are. ``cut_at``: the
        download stops after that many bytes of its body."""
        with self.lock:
            found = job if isinstance(job, WorkflowJob) else self.jobs[job]
            found.log = stamped(log, found.started_at or found.created_at) if isinstance(log, str) else log
            found.log_cut_at = cut_at
            return found

    def expire_job_log(self, job: WorkflowJob | int) -> WorkflowJob:
        """The job's log is past its retention: ``GET .../logs`` answers 410."""
        with self.lock:
            found = job if isinstance(job, WorkflowJob) else self.jobs[job]
            found.log_gone = 410
            return found

    def delete_job_log(self, job: WorkflowJob | int) -> WorkflowJob:
        """The job's log was deleted (its run's logs, by someone with write access): ``GET
        .../logs`` answers 404."""
        with self.lock:
            found = job if isinstance(job, WorkflowJob) else self.jobs[job]
            found.log_gone = 404
            return found

    def jobs_of(self, run_id: int) -> list[WorkflowJob]:
        """The run's jobs, each of the latest attempt that ran it (GitHub's `filter=latest`)."""
        with self.lock:
            latest: dict[str, WorkflowJob] = {}
            for job in sorted((j for j in self.jobs.values() if j.run_id == run_id), key=lambda j: j.id):
                if job.name not in latest or job.run_attempt >= latest[job.name].run_attempt:
                    latest[job.name] = job
            return sorted(latest.values(), key=lambda j: j.id)

    def repo_of_run(self, run: WorkflowRun) -> Repository:
        for repo in self.repos.values():
            if run.workflow_id in repo.workflows:
                return repo
        raise KeyError(run.id)

    # -- what was asked --------------------------------------------------------------------------
    @property
    def writes(self) -> list[Call]:
        """Every non-GET REST call (GraphQL queries are reads), in order."""
        with self.lock:
            return [c for c in self.calls if c.is_write]

    def find_calls(
        self, method: str | None = None, pattern: str = "*", where: Callable[[Call], bool] | None = None
    ) -> list[Call]:
        """Calls whose method and path (an fnmatch pattern such as ``/repos/*/pulls/*/reviews``) match."""
        with self.lock:
            return [
                c
                for c in self.calls
                if (method is None or c.method == method.upper())
                and fnmatchcase(c.path, pattern)
                and (where is None or where(c))
            ]

    def reset_calls(self) -> None:
        """Forget recorded calls and validation failures (not the data they created)."""
        with self.lock:
            self.calls.clear()
            self.validation_failures.clear()
            self.response_failures.clear()
            self.requests = 0


@cache
def default_private_key() -> str:
    """The App private key simulators use unless given one (made once per process: RSA keys are slow)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
