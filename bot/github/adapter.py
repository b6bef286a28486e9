"""The GitHub port on PyGithub: App auth, one client per installation, retries and pacing."""

from __future__ import annotations

import base64
import email.utils
import functools
import json
import logging
import re
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Self

import httpx
import requests
from github import Auth, Github, GithubException
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
from urllib3.util.retry import Retry

from bot.core import deadline
from bot.core.deadline import RetryLaterError
from bot.core.gone import OutOfReach
from bot.core.redact import redact_secrets
from bot.github.port import (
    Batch,
    BlobRequest,
    ChangedFile,
    CheckRun,
    Comment,
    Gone,
    InlineComment,
    Issue,
    LogUnreadableError,
    PullRequest,
    WorkflowJob,
    WorkflowRun,
    label_names,
)
from config.settings import Settings

log = logging.getLogger(__name__)

API_VERSION = "2022-11-28"
BLOBS_PER_QUERY_MAX = 120  # fifty files at base and head, and what comes with them
ISSUE_PAGES = 5  # of issues looked through for the tracking issue, the most recently updated first


def rate_limit_wait(status: int, headers: Mapping[str, Any], message: str,
                    secondary_wait: float) -> float | None:
    """Seconds GitHub asks to wait before a refused request may be sent again; None when the
    answer is not a rate limit. ``Retry-After`` is taken as it is; a primary limit (no requests
    left) lasts until its reset; a secondary limit that names no wait gets ``secondary_wait``
    (GitHub: "at least one minute")."""
    if status not in (403, 429):
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    after = lower.get("retry-after", "").strip()
    if after:
        try:
            return max(0.0, float(after))
        except ValueError:
            try:
                return max(0.0, email.utils.parsedate_to_datetime(after).timestamp() - time.time())
            except (TypeError, ValueError):
                pass
    reset = lower.get("x-ratelimit-reset", "")
    if lower.get("x-ratelimit-remaining") == "0" and reset.isdigit():
        return max(0.0, int(reset) - time.time())
    if status == 429 or "rate limit" in message.lower():
        return secondary_wait
    return None


# A repository or one of its PRs (or the PR's conversation): a 404 or 410 here means it is gone.
_REPO_OR_PR = re.compile(r"^[A-Z]+ /repos/[^/]+/[^/]+(/(pulls|issues)/\d+(/[a-z_]+)?)?$")


class Unreachable(GithubException, OutOfReach):
    """GitHub answered for good (see :mod:`bot.core.gone`); still a ``GithubException`` with
    the same status, for the callers that expect one."""

    def __init__(self, exc: GithubException, request: str) -> None:
        super().__init__(exc.status, exc.data, exc.headers, exc.message)
        self.http_status = exc.status
        self.request = request


def unreachable(status: int, request: str) -> bool:
    """Whether an answer that is not a rate limit says what was asked is out of reach for good:
    a 403 (the App lost access), or a 404 or 410 on a repository or PR (deleted, or transferred
    away). GraphQL answers 404 only when the repository or PR a query names does not exist (a
    missing file is a null object, not an error)."""
    if status == 403:
        return True
    if status not in (404, 410):
        return False
    return request == "POST /graphql" or _REPO_OR_PR.match(request.split("?", 1)[0]) is not None


class _Retry(Retry):
    """The client's retries, none of them waiting past the delivery's deadline: each is made
    only when its wait and the request after it end before then (``margin`` is the longest a
    request may take: its timeout and the write pacing before it).

    - A rate limit that names its wait (that request was not carried out): waited out exactly
      as long as GitHub says. One that does not fit goes back to the worker, which queues the
      delivery for that time.
    - A read that failed (5xx, timeout, lost connection), and any request that could not
      connect: sent again after a short backoff, ``total`` times at most (two by default:
      about a second). A persistent failure then fails the attempt, and the worker's backoff
      is the one long wait.
    - A write answered 5xx or cut off may have been carried out: never sent again here; the
      delivery is retried and the effects ledger keeps the write from being made twice.
    """

    def __init__(self, secondary_wait: float = 60.0, margin: float = 0.0, **kwargs: Any) -> None:
        self.secondary_wait = secondary_wait
        self.margin = margin
        self.wait: float | None = None  # the rate limit this retry waits out
        kwargs.setdefault("status_forcelist", [403, 429, *range(500, 600)])
        kwargs.setdefault("allowed_methods", None)  # increment tells reads from writes
        super().__init__(**kwargs)

    def new(self, **kw: Any) -> Self:
        kw["secondary_wait"] = self.secondary_wait
        kw["margin"] = self.margin
        return super().new(**kw)

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        wanted = status_code in (403, 429) or 500 <= status_code < 600
        return wanted and super().is_retry(method, status_code, has_retry_after)

    def _give_up(self, method: str | None, url: str | None, response: Any, error: Exception | None,
                 _pool: Any, _stacktrace: Any) -> Self:
        # Exhausted, so the parent raises (or, for an answer, urllib3 hands it back and PyGithub
        # raises it). Not through this override again: it would recurse.
        exhausted = self.new(total=0, connect=0, read=0, status=0, other=0)
        return Retry.increment(exhausted, method, url, response, error, _pool, _stacktrace)

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: Any = None,
    ) -> Self:
        if response is not None and response.status in (403, 429):
            wait = rate_limit_wait(response.status, response.headers, "", self.secondary_wait)
            if wait is None or not deadline.fits(wait + self.margin):
                return self._give_up(method, url, response, error, _pool, _stacktrace)
            retry = super().increment(method, url, response, error, _pool, _stacktrace)
            retry.wait = wait
            log.info("rate limited: waiting as GitHub asked", extra={"seconds": wait, "url": url})
            return retry
        is_write = (method or "GET").upper() not in ("GET", "HEAD") and not (url or "").rstrip(
            "/").endswith("/graphql")
        never_sent = response is None and isinstance(error, NewConnectionError | ConnectTimeoutError)
        if is_write and not never_sent:
            return self._give_up(method, url, response, error, _pool, _stacktrace)
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        if not deadline.fits(retry.get_backoff_time() + self.margin):
            return self._give_up(method, url, response, error, _pool, _stacktrace)
        return retry

    def sleep(self, response: Any = None) -> None:
        if self.wait is not None:
            time.sleep(self.wait)
        else:
            self._sleep_backoff()


def retry_policy(settings: Settings) -> Retry:
    """The retry policy of every client the service builds (never a write twice)."""
    return _Retry(
        secondary_wait=settings.secondary_rate_wait_seconds,
        margin=settings.request_margin,
        total=settings.github_retries,
        backoff_factor=settings.github_backoff_seconds,
        raise_on_status=False,
    )


def _client(settings: Settings, auth: Auth.Auth) -> Github:
    return Github(
        auth=auth,
        base_url=settings.github_api_url,
        per_page=100,
        retry=retry_policy(settings),
        seconds_between_requests=None,
        seconds_between_writes=settings.seconds_between_writes,
        timeout=settings.github_timeout_seconds,
        lazy=True,
    )


class GitHubApp:
    """The App: its JWT mints installation tokens, cached until shortly before they expire."""

    def __init__(self, settings: Settings) -> None:
        key = settings.app_private_key()
        if settings.app_id is None or key is None:
            raise ValueError("ROCMBOT_APP_ID and a private key are needed to act on GitHub")
        self.settings = settings
        redact_secrets()  # PyGithub logs response bodies at DEBUG, new installation tokens included
        self._auth = Auth.AppAuth(settings.app_id, key)
        self._clients: dict[int, PyGithubPort] = {}
        self._lock = threading.Lock()

    def installation(self, installation_id: int) -> PyGithubPort:
        """The port for one installation (one client, so writes are paced per installation)."""
        with self._lock:
            port = self._clients.get(installation_id)
            if port is None:
                auth = self._auth.get_installation_auth(installation_id)
                port = PyGithubPort(_client(self.settings, auth),
                                    secondary_wait=self.settings.secondary_rate_wait_seconds,
                                    margin=self.settings.request_margin,
                                    timeout=self.settings.github_timeout_seconds,
                                    retries=self.settings.github_retries,
                                    backoff=self.settings.github_backoff_seconds)
                self._clients[installation_id] = port
            return port


def _pr(repo: str, data: dict[str, Any]) -> PullRequest:
    head, base = data["head"], data["base"]
    head_repo = (head.get("repo") or {}).get("full_name")
    return PullRequest(
        repo=repo,
        number=data["number"],
        author=(data.get("user") or {}).get("login", ""),
        head_sha=head["sha"],
        head_ref=head.get("ref", ""),
        head_repo=head_repo,
        base_sha=base["sha"],
        base_ref=base.get("ref", ""),
        draft=bool(data.get("draft")),
        state=data.get("state", "open"),
        html_url=data.get("html_url", ""),
        labels=label_names(data.get("labels")),
    )


def _split(wanted: list[BlobRequest]) -> list[list[BlobRequest]]:
    """At most ``BLOBS_PER_QUERY_MAX`` objects a query, in even parts: a hundred files at base
    and head plus the few files read with them are two queries, not three."""
    if not wanted:
        return []
    count = -(-len(wanted) // BLOBS_PER_QUERY_MAX)
    size = -(-len(wanted) // count)
    return [wanted[start : start + size] for start in range(0, len(wanted), size)]


_PULL_FIELDS = (
    "number headRefOid headRefName baseRefOid baseRefName isDraft state url "
    "author { __typename login } headRepository { nameWithOwner } "
    "labels(first: 100) { nodes { name } }"  # the largest page GraphQL gives
)


def _graphql_pr(repo: str, data: dict[str, Any]) -> PullRequest:
    """A PR from GraphQL's fields (a bot's login lacks REST's ``[bot]`` suffix there)."""
    author = data.get("author") or {}
    login = str(author.get("login") or "")
    if author.get("__typename") == "Bot" and login:
        login += "[bot]"
    return PullRequest(
        repo=repo,
        number=int(data["number"]),
        author=login,
        head_sha=str(data["headRefOid"]),
        head_ref=str(data.get("headRefName") or ""),
        head_repo=(data.get("headRepository") or {}).get("nameWithOwner"),
        base_sha=str(data["baseRefOid"]),
        base_ref=str(data.get("baseRefName") or ""),
        draft=bool(data.get("isDraft")),
        state="open" if data.get("state") == "OPEN" else "closed",
        html_url=str(data.get("url") or ""),
        labels=label_names(data.get("labels")),
    )


def _issue(data: dict[str, Any]) -> Issue:
    user = data.get("user") or {}
    return Issue(
        number=int(data["number"]),
        title=str(data.get("title") or ""),
        body=str(data.get("body") or ""),
        state=str(data.get("state") or "open"),
        author_is_bot=user.get("type") == "Bot",
        app_id=(data.get("performed_via_github_app") or {}).get("id"),
        html_url=str(data.get("html_url") or ""),
    )


def _check(data: dict[str, Any]) -> CheckRun:
    return CheckRun(
        id=data["id"],
        name=data["name"],
        head_sha=data["head_sha"],
        status=data["status"],
        conclusion=data.get("conclusion"),
        external_id=data.get("external_id"),
        html_url=data.get("html_url"),
    )


def _run(data: dict[str, Any]) -> WorkflowRun:
    return WorkflowRun(
        id=data["id"],
        name=data.get("name") or "",
        head_sha=data.get("head_sha", ""),
        status=data.get("status") or "",
        conclusion=data.get("conclusion"),
        html_url=data.get("html_url", ""),
        display_title=data.get("display_title") or "",
    )


class _LinkExpiredError(Exception):
    """A link GitHub gave was refused (403): it expired before it was read."""


class _StorageError(Exception):
    """The storage behind a link answered 5xx: a read, retried."""

    def __init__(self, status: int) -> None:
        super().__init__(f"storage answered {status}")
        self.status = status


def _read_tail(client: httpx.Client, link: str, limit: int) -> bytes | None:
    """One attempt at the end of what ``link`` serves (no token goes with it: the link is
    signed); None when it is gone (404, 410)."""
    with client.stream("GET", link) as answer:
        if answer.status_code == 403:
            raise _LinkExpiredError(link)
        if answer.status_code in (404, 410):
            return None
        if answer.status_code >= 500:
            raise _StorageError(answer.status_code)
        if answer.status_code not in (200, 206):
            raise LogUnreadableError(f"its storage answered {answer.status_code}")
        size = answer.headers.get("content-length", "")
        ranged = "bytes" in answer.headers.get("accept-ranges", "").lower()
        if answer.status_code == 200 and size.isdigit() and int(size) > limit and ranged:
            start = int(size) - limit
        else:
            return _keep_tail(answer, limit)
    with client.stream("GET", link, headers={"Range": f"bytes={start}-"}) as answer:
        if answer.status_code >= 500:
            raise _StorageError(answer.status_code)
        if answer.status_code not in (200, 206):
            raise LogUnreadableError(f"its storage answered {answer.status_code} to a range")
        return _keep_tail(answer, limit)


def _keep_tail(answer: httpx.Response, limit: int) -> bytes:
    """Read a streamed answer to its end, keeping at most its last ``limit`` bytes; past the
    delivery's deadline, it is given up."""
    kept = bytearray()
    for chunk in answer.iter_bytes():
        kept += chunk
        if len(kept) > 2 * limit:
            del kept[:-limit]
        if not deadline.fits(0.0):
            raise LogUnreadableError("it could not be read before the delivery's deadline")
    return bytes(kept[-limit:])


class PyGithubPort:
    """The port over PyGithub's requester: every call is one documented REST or GraphQL request
    (pages aside), with PyGithub's auth, retries and write pacing."""

    def __init__(self, gh: Github, *, secondary_wait: float = 60.0, margin: float = 0.0,
                 timeout: float = 30.0, retries: int = 2, backoff: float = 0.5) -> None:
        self.gh = gh
        self._req = gh.requester
        self.secondary_wait = secondary_wait
        self.margin = margin  # the longest one request may take
        # a download from a link GitHub gives (a job's log), outside PyGithub: the same timeout,
        # retries and backoff as its requests
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff

    def _request(self, what: str, send: Callable[..., tuple[Any, Any]], *args: Any, **kwargs: Any) -> Any:
        """One request, started only when it ends before the delivery's deadline; a rate limit
        the client did not wait out is RetryLaterError, with the wait GitHub named."""
        return self._exchange(what, send, *args, **kwargs)[1]

    def _exchange(self, what: str, send: Callable[..., tuple[Any, Any]], *args: Any,
                  **kwargs: Any) -> tuple[Any, Any]:
        """:meth:`_request`, with the answer's headers."""
        deadline.check(self.margin, what)
        try:
            headers, data = send(*args, **kwargs)
        except GithubException as exc:
            message = str((exc.data or {}).get("message", "")) if isinstance(exc.data, dict) else ""
            wait = rate_limit_wait(exc.status, exc.headers or {}, message, self.secondary_wait)
            if wait is None:
                if unreachable(exc.status, what):
                    raise Unreachable(exc, what) from exc
                raise
            raise RetryLaterError(wait, f"GitHub rate limit on {what}") from exc
        return headers, data

    def _call(self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None) -> Any:
        headers = {"X-GitHub-Api-Version": API_VERSION, "Accept": "application/vnd.github+json"}
        return self._request(f"{method} {path}", self._req.requestJsonAndCheck, method, path,
                             parameters=params, input=body, headers=headers)

    def _pages(
        self,
        path: str,
        params: dict[str, Any] | None = None,
        key: str | None = None,
        total: int | None = None,
    ) -> list[Any]:
        """Every page of a listing; with ``total`` known, none past the one that reaches it."""
        out: list[Any] = []
        page = 1
        while True:
            data = self._call("GET", path, params={**(params or {}), "per_page": 100, "page": page})
            items = data.get(key, []) if key else data
            out.extend(items)
            if len(items) < 100 or (total is not None and len(out) >= total):
                return out
            page += 1

    # reading ---------------------------------------------------------------

    def pull_request(self, repo: str, number: int) -> PullRequest:
        return _pr(repo, self._call("GET", f"/repos/{repo}/pulls/{number}"))

    def pull_files(self, repo: str, number: int, *, expected: int | None = None) -> list[ChangedFile]:
        return [
            ChangedFile(
                path=f["filename"],
                status=f["status"],
                previous_path=f.get("previous_filename"),
                patch=f.get("patch"),
                blob_sha=f.get("sha"),
            )
            for f in self._pages(f"/repos/{repo}/pulls/{number}/files", total=expected)
        ]

    def tree(self, repo: str, sha: str) -> dict[str, tuple[str, int]]:
        data = self._call("GET", f"/repos/{repo}/git/trees/{sha}", params={"recursive": "1"})
        if data.get("truncated"):
            log.warning("tree listing truncated by GitHub", extra={"repository": repo, "sha": sha})
        return {
            e["path"]: (e["sha"], int(e.get("size") or 0))
            for e in data.get("tree", [])
            if e.get("type") == "blob" and e.get("mode") != "120000"
        }

    def blobs(self, repo: str, wanted: list[BlobRequest]) -> dict[BlobRequest, bytes | None]:
        return self.read_batch(repo, wanted).blobs

    def read_batch(self, repo: str, wanted: list[BlobRequest], *, pull: int | None = None) -> Batch:
        owner, name = repo.split("/", 1)
        out: dict[BlobRequest, bytes | None] = {}
        unique = list(dict.fromkeys(wanted))
        parts = _split(unique)
        found_pull: PullRequest | None = None
        for index, part in enumerate(parts or [[]]):
            fields = [
                f"f{i}: object(expression: {json.dumps(f'{w.sha}:{w.path}')}) "
                "{ ... on Blob { oid text isTruncated isBinary byteSize } }"
                for i, w in enumerate(part)
            ]
            asks_pull = pull is not None and index == 0
            if asks_pull:
                fields.append(f"pull: pullRequest(number: {int(pull or 0)}) {{ {_PULL_FIELDS} }}")
            if not fields:
                continue
            query = (
                "query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) {\n"
                + "\n".join(fields)
                + "\n} }"
            )
            data = self._request("POST /graphql", self._req.graphql_query, query,
                                 {"owner": owner, "name": name})
            found = ((data.get("data") or {}).get("repository")) or {}
            if asks_pull and found.get("pull"):
                found_pull = _graphql_pr(repo, found["pull"])
            for i, w in enumerate(part):
                blob = found.get(f"f{i}")
                if not blob:
                    out[w] = None
                elif blob.get("isTruncated") or blob.get("isBinary") or blob.get("text") is None:
                    out[w] = self.blob(repo, blob["oid"])
                else:
                    out[w] = str(blob["text"]).encode("utf-8")
        return Batch(out, found_pull)

    def blob(self, repo: str, blob_sha: str) -> bytes:
        data = self._call("GET", f"/repos/{repo}/git/blobs/{blob_sha}")
        return base64.b64decode(data.get("content", ""))

    def default_branch(self, repo: str) -> str:
        return str(self._call("GET", f"/repos/{repo}")["default_branch"])

    def default_branch_file(self, repo: str, path: str) -> bytes | None:
        try:
            data = self._call("GET", f"/repos/{repo}/contents/{path}")
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        if data.get("encoding") == "base64":
            return base64.b64decode(data.get("content", ""))
        return self.blob(repo, data["sha"])

    def workflow_file(self, repo: str, path: str) -> bytes | None:
        return self.default_branch_file(repo, path)

    def default_branch_head(self, repo: str) -> tuple[str, str] | None:
        owner, name = repo.split("/", 1)
        query = ("query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) "
                 "{ defaultBranchRef { name target { oid } } } }")
        data = self._request("POST /graphql", self._req.graphql_query, query, {"owner": owner, "name": name})
        ref = (((data.get("data") or {}).get("repository")) or {}).get("defaultBranchRef")
        if not isinstance(ref, dict) or not isinstance((ref.get("target") or {}).get("oid"), str):
            return None
        return str(ref["name"]), str(ref["target"]["oid"])

    # comments, reviews, checks -------------------------------------------

    def comments(self, repo: str, number: int) -> list[Comment]:
        return [
            Comment(
                c["id"],
                c.get("body") or "",
                (c.get("user") or {}).get("login", ""),
                (c.get("user") or {}).get("type") == "Bot",
                (c.get("performed_via_github_app") or {}).get("id"),
            )
            for c in self._pages(f"/repos/{repo}/issues/{number}/comments")
        ]

    def create_comment(self, repo: str, number: int, body: str) -> Comment:
        c = self._call("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})
        return Comment(c["id"], c.get("body") or "", (c.get("user") or {}).get("login", ""), True)

    def edit_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        try:
            c = self._call("PATCH", f"/repos/{repo}/issues/comments/{comment_id}", {"body": body})
        except GithubException as exc:
            if exc.status == 404:
                raise Gone(f"comment {comment_id} of {repo}") from exc
            raise
        return Comment(c["id"], c.get("body") or "", (c.get("user") or {}).get("login", ""), True)

    def add_reaction(self, repo: str, comment_id: int, content: str) -> None:
        self._call("POST", f"/repos/{repo}/issues/comments/{comment_id}/reactions", {"content": content})

    def issues(self, repo: str) -> list[Issue]:
        found: list[Issue] = []
        for page in range(1, ISSUE_PAGES + 1):
            data = self._call("GET", f"/repos/{repo}/issues", params={
                "state": "all", "sort": "updated", "direction": "desc", "per_page": 100, "page": page})
            found.extend(_issue(i) for i in data if isinstance(i, dict) and "pull_request" not in i)
            if len(data) < 100:
                break
        return found

    def create_issue(self, repo: str, title: str, body: str) -> Issue:
        return _issue(self._call("POST", f"/repos/{repo}/issues", {"title": title, "body": body}))

    def edit_issue(self, repo: str, number: int, body: str) -> Issue:
        try:
            return _issue(self._call("PATCH", f"/repos/{repo}/issues/{number}", {"body": body}))
        except GithubException as exc:
            if exc.status in (404, 410):
                raise Gone(f"issue {number} of {repo}") from exc
            raise

    def review_keys(self, repo: str, number: int) -> list[tuple[str, str]]:
        return [
            (r.get("commit_id") or "", r.get("body") or "")
            for r in self._pages(f"/repos/{repo}/pulls/{number}/reviews")
        ]

    def create_review(
        self, repo: str, number: int, commit_sha: str, body: str, comments: list[InlineComment]
    ) -> int:
        data = self._call(
            "POST",
            f"/repos/{repo}/pulls/{number}/reviews",
            {
                "commit_id": commit_sha,
                "body": body,
                "event": "COMMENT",
                "comments": [_inline(c) for c in comments],
            },
        )
        return int(data["id"])

    def check_runs(self, repo: str, sha: str, name: str) -> list[CheckRun]:
        return [
            _check(c)
            for c in self._pages(
                f"/repos/{repo}/commits/{sha}/check-runs", {"check_name": name}, key="check_runs"
            )
        ]

    def create_check_run(self, repo: str, payload: dict[str, Any]) -> CheckRun:
        return _check(self._call("POST", f"/repos/{repo}/check-runs", payload))

    def update_check_run(self, repo: str, check_run_id: int, payload: dict[str, Any]) -> CheckRun:
        return _check(self._call("PATCH", f"/repos/{repo}/check-runs/{check_run_id}", payload))

    # permissions and workflows ---------------------------------------------

    def permission(self, repo: str, user: str) -> str:
        try:
            data = self._call("GET", f"/repos/{repo}/collaborators/{user}/permission")
        except GithubException as exc:
            if exc.status == 404:
                return "none"
            raise
        # `permission` is the legacy level (maintain reads as write, triage as read);
        # `role_name` is the role itself, custom roles aside.
        role = str(data.get("role_name") or "")
        return role if role in ("admin", "maintain", "write", "triage", "read") else str(
            data.get("permission") or "none")

    def team_member(self, org: str, team: str, user: str) -> bool:
        try:
            data = self._call("GET", f"/orgs/{org}/teams/{team}/memberships/{user}")
        except GithubException as exc:
            if exc.status == 404:
                return False
            raise
        return bool(data.get("state") == "active")

    def dispatch_workflow(self, repo: str, workflow: str, ref: str, inputs: dict[str, str]) -> int | None:
        path = f"/repos/{repo}/actions/workflows/{workflow.rsplit('/', 1)[-1]}/dispatches"
        data = self._call("POST", path, {"ref": ref, "inputs": inputs, "return_run_details": True})
        if isinstance(data, dict) and data.get("workflow_run_id"):
            return int(data["workflow_run_id"])
        return None

    def workflow_runs(
        self, repo: str, workflow: str, *, event: str = "workflow_dispatch"
    ) -> list[WorkflowRun]:
        data = self._call(
            "GET",
            f"/repos/{repo}/actions/workflows/{workflow.rsplit('/', 1)[-1]}/runs",
            params={"event": event, "per_page": 100},
        )
        return [_run(r) for r in data.get("workflow_runs", [])]

    def workflow_run(self, repo: str, run_id: int) -> WorkflowRun | None:
        try:
            return _run(self._call("GET", f"/repos/{repo}/actions/runs/{run_id}"))
        except GithubException as exc:
            if exc.status != 404:
                raise
            return None

    def run_jobs(self, repo: str, run_id: int) -> list[WorkflowJob]:
        pages = self._pages(f"/repos/{repo}/actions/runs/{run_id}/jobs", key="jobs")
        return [WorkflowJob.from_api(j) for j in pages]

    def job_log(self, repo: str, job_id: int, *, limit: int) -> bytes | None:
        """GitHub answers 302 to a link of its blob storage that lasts a minute and wants no
        token; the link's end is read (a range request when the log is longer than ``limit``
        and the storage answers ranges, else the whole stream with only its tail kept). A
        link that expired before it was read is asked for again, once."""
        what = f"GET /repos/{repo}/actions/jobs/{job_id}/logs"
        for _ in range(2):
            try:
                headers, _ = self._exchange(what, self._req.requestJsonAndCheck, "GET",
                                            f"/repos/{repo}/actions/jobs/{job_id}/logs",
                                            headers={"X-GitHub-Api-Version": API_VERSION})
            except GithubException as exc:
                if exc.status in (404, 410):
                    return None
                raise LogUnreadableError(f"GitHub answered {exc.status} for its link") from exc
            except requests.RequestException as exc:
                why = type(exc).__name__
                raise LogUnreadableError(f"GitHub could not be reached for its link ({why})") from exc
            link = {str(k).lower(): v for k, v in (headers or {}).items()}.get("location")
            if not link:
                raise LogUnreadableError("GitHub gave no link to it")
            try:
                return self._tail(str(link), limit)
            except _LinkExpiredError:
                continue
        raise LogUnreadableError("its link expired before it could be read")

    def _tail(self, link: str, limit: int) -> bytes | None:
        """The last ``limit`` bytes behind a link, retried as a read is (a 5xx, a lost or cut
        connection), within the delivery's deadline."""
        last: Exception | None = None
        with httpx.Client(timeout=self.timeout, follow_redirects=True, verify=_tls()) as client:
            for attempt in range(self.retries + 1):
                deadline.check(self.margin, "GET a job's log")
                try:
                    return _read_tail(client, link, limit)
                except (httpx.TransportError, _StorageError) as exc:
                    last = exc
                wait = self.backoff * (2 ** attempt)
                if attempt == self.retries or not deadline.fits(wait + self.margin):
                    break
                time.sleep(wait)
        if isinstance(last, httpx.RemoteProtocolError):
            raise LogUnreadableError("the download was cut short") from last
        if isinstance(last, _StorageError):
            raise LogUnreadableError(f"its storage answered {last.status}") from last
        raise LogUnreadableError(f"the download failed ({type(last).__name__})") from last

    def cancel_run(self, repo: str, run_id: int) -> bool:
        """Stop a run; one that has already completed (409) needs no stopping. Raising would fail
        the delivery again on every retry until its `workflow_run` webhook arrived, or for good if
        that one never does (found by bench/chaos.py)."""
        try:
            self._call("POST", f"/repos/{repo}/actions/runs/{run_id}/cancel")
            return True
        except GithubException as exc:
            if exc.status != 409:
                raise
            log.info("run already completed: nothing to cancel", extra={"repository": repo, "run_id": run_id})
        return False


def _inline(comment: InlineComment) -> dict[str, Any]:
    """A review comment as GitHub takes it: on the new side, over lines when it spans some."""
    out: dict[str, Any] = {"path": comment.path, "line": comment.line, "side": "RIGHT", "body": comment.body}
    if comment.start_line is not None and comment.start_line < comment.line:
        out.update(start_line=comment.start_line, start_side="RIGHT")
    return out


@functools.cache
def _tls() -> ssl.SSLContext:
    """The TLS context of log downloads, made once: reading the system's certificates costs
    more than a short download."""
    return ssl.create_default_context()
