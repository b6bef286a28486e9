"""The narrow GitHub port handlers use: a protocol that returns the project's own dataclasses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


class Gone(Exception):  # noqa: N818 - the name says what GitHub said
    """What was edited no longer exists (a comment someone deleted)."""


class LogUnreadableError(Exception):
    """GitHub has a job's log but it could not be read: the download was cut short or refused,
    or GitHub failed to give its link. The message says why, in a few words."""


@dataclass(frozen=True)
class PullRequest:
    repo: str  # owner/name of the base repository
    number: int
    author: str
    head_sha: str
    head_ref: str
    head_repo: str | None
    base_sha: str
    base_ref: str
    draft: bool
    state: str
    html_url: str = ""
    labels: tuple[str, ...] = ()  # what the repository's own CI may be gated on (`run-ci-extra`)

    @property
    def is_fork(self) -> bool:
        return self.head_repo is not None and self.head_repo != self.repo


def label_names(labels: Any) -> tuple[str, ...]:
    """The names of a PR's labels as GitHub sends them: a list of label objects (REST and
    webhooks) or a connection's ``nodes`` (GraphQL); nothing for anything else."""
    if isinstance(labels, dict):
        labels = labels.get("nodes")
    if not isinstance(labels, list):
        return ()
    return tuple(label["name"] for label in labels
                 if isinstance(label, dict) and isinstance(label.get("name"), str))


@dataclass(frozen=True)
class ChangedFile:
    path: str
    status: str  # added | removed | modified | renamed | copied | changed | unchanged
    previous_path: str | None = None
    patch: str | None = None
    blob_sha: str | None = None


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    author: str
    author_is_bot: bool = False
    app_id: int | None = None  # the GitHub App the comment was made through (`performed_via_github_app`)


@dataclass(frozen=True)
class Issue:
    """An issue (not a PR): the one the re-enable sweep keeps is found by a marker in its body."""

    number: int
    title: str
    body: str
    state: str  # open | closed
    author_is_bot: bool = False
    app_id: int | None = None  # the GitHub App it was made through (`performed_via_github_app`)
    html_url: str = ""


@dataclass(frozen=True)
class InlineComment:
    path: str
    line: int
    body: str
    start_line: int | None = None  # a comment on lines start_line..line (a suggestion's)


@dataclass(frozen=True)
class CheckRun:
    id: int
    name: str
    head_sha: str
    status: str
    conclusion: str | None = None
    external_id: str | None = None
    html_url: str | None = None


@dataclass(frozen=True)
class WorkflowRun:
    id: int
    name: str
    head_sha: str
    status: str
    conclusion: str | None
    html_url: str
    display_title: str = ""


@dataclass(frozen=True)
class WorkflowJob:
    """One job of a run; the targeted workflow runs one job per test, named after it."""

    id: int
    name: str
    status: str
    conclusion: str | None
    html_url: str
    started_at: str | None = None
    completed_at: str | None = None
    run_attempt: int = 1  # the attempt of its run the job belongs to (a re-run makes new jobs)

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> WorkflowJob:
        """From the REST shape, which `workflow_job` webhooks share."""
        attempt = data.get("run_attempt")
        return cls(
            id=int(data["id"]),
            name=str(data.get("name") or ""),
            status=str(data.get("status") or ""),
            conclusion=data.get("conclusion"),
            html_url=str(data.get("html_url") or ""),
            started_at=data.get("started_at"),
            completed_at=data.get("completed_at"),
            run_attempt=attempt if isinstance(attempt, int) and attempt > 0 else 1,
        )


@dataclass(frozen=True)
class BlobRequest:
    """A file at a commit: ``sha:path``."""

    sha: str
    path: str


@dataclass(frozen=True)
class Batch:
    """Files read together, and the PR as GitHub had it when they were read."""

    blobs: dict[BlobRequest, bytes | None]
    pull: PullRequest | None = None


class Permissions(Protocol):
    """What deciding who may run reads."""

    def permission(self, repo: str, user: str) -> str:
        """admin | maintain | write | triage | read | none"""
        ...

    def team_member(self, org: str, team: str, user: str) -> bool: ...


class Workflows(Protocol):
    """What dispatching and tracking ROCm runs read (their writes go through the ledger)."""

    def pull_request(self, repo: str, number: int) -> PullRequest: ...

    def default_branch(self, repo: str) -> str: ...

    def workflow_file(self, repo: str, path: str) -> bytes | None: ...

    def workflow_runs(
        self, repo: str, workflow: str, *, event: str = "workflow_dispatch"
    ) -> list[WorkflowRun]: ...

    def run_jobs(self, repo: str, run_id: int) -> list[WorkflowJob]:
        """The jobs of a run's latest attempt."""
        ...

    def workflow_run(self, repo: str, run_id: int) -> WorkflowRun | None:
        """One run by its id; None when GitHub does not know it."""
        ...

    def job_log(self, repo: str, job_id: int, *, limit: int) -> bytes | None:
        """The end of a job's log: its last ``limit`` bytes at most (the whole log when it is
        shorter). None when GitHub no longer has it (404, 410); :class:`LogUnreadableError`
        when it has it and the download failed."""
        ...


class Checks(Protocol):
    """Check runs: read, made and updated."""

    def check_runs(self, repo: str, sha: str, name: str) -> list[CheckRun]: ...

    def create_check_run(self, repo: str, payload: dict[str, Any]) -> CheckRun: ...

    def update_check_run(self, repo: str, check_run_id: int, payload: dict[str, Any]) -> CheckRun: ...


class Conversation(Protocol):
    """PR comments and reactions."""

    def comments(self, repo: str, number: int) -> list[Comment]: ...

    def create_comment(self, repo: str, number: int, body: str) -> Comment: ...

    def edit_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        """Edit a comment; :class:`Gone` when it was deleted."""
        ...

    def add_reaction(self, repo: str, comment_id: int, content: str) -> None: ...


class Issues(Protocol):
    """Issues of a repository: what the re-enable sweep's tracking issue needs."""

    def issues(self, repo: str) -> list[Issue]:
        """The repository's issues, open and closed, the most recently updated first (its first
        pages; PRs left out)."""
        ...

    def create_issue(self, repo: str, title: str, body: str) -> Issue: ...

    def edit_issue(self, repo: str, number: int, body: str) -> Issue:
        """Replace an issue's body; :class:`Gone` when it was deleted."""
        ...


class GitHubPort(Permissions, Workflows, Checks, Conversation, Issues, Protocol):
    """What handlers may ask of GitHub. Implementations: PyGithub over HTTP, and a local
    git repository with a recording sink (demo, replay, tests). A consumer that needs only a
    few of its methods takes one of the narrower protocols above."""

    def pull_files(self, repo: str, number: int, *, expected: int | None = None) -> list[ChangedFile]:
        """The PR's changed files, 100 a page; ``expected`` (the delivery's ``changed_files``)
        spares asking for a page past the last."""
        ...

    def tree(self, repo: str, sha: str) -> dict[str, tuple[str, int]]:
        """Every file of a commit: path -> (blob sha, size). One request."""
        ...

    def blobs(self, repo: str, wanted: list[BlobRequest]) -> dict[BlobRequest, bytes | None]:
        """File contents in batches (about 50 a request); None for a file that is absent."""
        ...

    def read_batch(self, repo: str, wanted: list[BlobRequest], *, pull: int | None = None) -> Batch:
        """Like :meth:`blobs`; with ``pull``, that PR's current head and base come in the same
        request (None when there is no such PR)."""
        ...

    def default_branch_file(self, repo: str, path: str) -> bytes | None:
        """A file on the default branch (the policy lives there), None when absent."""
        ...

    def default_branch_head(self, repo: str) -> tuple[str, str] | None:
        """The default branch's name and the commit at its head; None for a repository
        without commits."""
        ...

    def review_keys(self, repo: str, number: int) -> list[tuple[str, str]]:
        """(commit sha, body) of the App's reviews on a PR (for reconciling a lost write)."""
        ...

    def create_review(
        self, repo: str, number: int, commit_sha: str, body: str, comments: list[InlineComment]
    ) -> int: ...

    def dispatch_workflow(self, repo: str, workflow: str, ref: str, inputs: dict[str, str]) -> int | None:
        """Dispatch; the run id when GitHub returns run details, else None."""
        ...

    def cancel_run(self, repo: str, run_id: int) -> bool:
        """Stop a run: False when it had already completed (its own news tells how)."""
        ...
