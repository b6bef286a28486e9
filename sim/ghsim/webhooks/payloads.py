"""Webhook payloads from octokit's examples, filled in with the simulator's repositories, PRs and users."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from ghsim.shapes import Shapes
from ghsim.state import (
    Account,
    CheckRun,
    Installation,
    IssueComment,
    Label,
    PullRequest,
    Repository,
    Review,
    SimulatorState,
    WorkflowJob,
    WorkflowRun,
    iso,
    utcnow,
)

HERE = Path(__file__).resolve().parent
DEFAULT_LABELS = ("self-hosted", "linux-mi350-gpu-4")


@cache
def _examples() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((HERE / "examples.json").read_text(encoding="utf-8"))
    return loaded


@cache
def webhook_schema() -> dict[str, Any]:
    """octokit's webhook schema (trimmed): ``definitions`` named ``event$action``."""
    loaded: dict[str, Any] = json.loads((HERE / "schema.json").read_text(encoding="utf-8"))
    return loaded


def example(event: str, action: str | None = None) -> dict[str, Any]:
    """A fresh copy of octokit's example payload for ``event`` (and ``action``)."""
    key = f"{event}.{action}" if action else event
    examples = _examples()
    if key not in examples:
        raise KeyError(f"no vendored example for {key}; see ghsim/webhooks/regenerate.py")
    found: dict[str, Any] = copy.deepcopy(examples[key])
    return found


def validate_payload(event: str, payload: dict[str, Any]) -> list[str]:
    """Schema errors of a payload (empty when it matches octokit's schema for its event and action)."""
    from jsonschema import Draft7Validator

    schema = webhook_schema()
    name = f"{event}${payload.get('action') or 'event'}"
    if name not in schema["definitions"]:
        return [f"no vendored schema for {name}"]
    validator = Draft7Validator({"$ref": f"#/definitions/{name}", "definitions": schema["definitions"]})
    return [
        f"{'/'.join(str(p) for p in e.absolute_path) or 'payload'}: {e.message}"
        for e in validator.iter_errors(payload)
    ]


def _replace_strings(node: Any, replacements: list[tuple[str, str]]) -> Any:
    if isinstance(node, dict):
        return {k: _replace_strings(v, replacements) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace_strings(v, replacements) for v in node]
    if isinstance(node, str):
        for old, new in replacements:
            node = node.replace(old, new)
    return node


class Payloads:
    """Payload builders over one simulator's state; URLs use ``state.base_url``."""

    def __init__(self, state: SimulatorState) -> None:
        self.state = state

    @property
    def base(self) -> str:
        return self.state.base_url

    # -- common parts ----------------------------------------------------------------------------
    def _start(self, event: str, action: str | None, repo: Repository | None) -> dict[str, Any]:
        payload = example(event, action)
        replacements = [("https://api.github.com", self.base), ("https://github.com", self.base)]
        old = payload.get("repository") or {}
        if repo is not None and old.get("full_name"):
            replacements.insert(0, (f"/{old['full_name']}", f"/{repo.full_name}"))
        payload = dict(_replace_strings(payload, replacements))
        if repo is not None and "repository" in payload:
            self._repository(payload["repository"], repo)
            installed = self.state.installation_for(repo)
            if installed is not None:
                payload["installation"] = {
                    "id": installed.id,
                    "node_id": f"MDIzOkludGVncmF0aW9u{installed.id}",
                }
            if repo.owner.type == "Organization":
                payload["organization"] = self._organization(repo.owner)
            else:
                payload.pop("organization", None)
        return payload

    def _organization(self, account: Account) -> dict[str, Any]:
        api = f"{self.base}/orgs/{account.login}"
        return {
            "login": account.login,
            "id": account.id,
            "node_id": account.node_id,
            "url": api,
            "repos_url": f"{api}/repos",
            "events_url": f"{api}/events",
            "hooks_url": f"{api}/hooks",
            "issues_url": f"{api}/issues",
            "members_url": f"{api}/members{{/member}}",
            "public_members_url": f"{api}/public_members{{/member}}",
            "avatar_url": f"{self.base}/avatars/u/{account.id}?v=4",
            "description": None,
        }

    def _user(self, target: dict[str, Any], account: Account) -> None:
        old = target.get("login")
        for key, value in list(target.items()):
            if isinstance(value, str) and old and key.endswith("url"):
                target[key] = value.replace(f"/{old}", f"/{account.login}")
        target.update(
            {"login": account.login, "id": account.id, "node_id": account.node_id, "type": account.type}
        )

    def _repository(self, target: dict[str, Any], repo: Repository) -> None:
        target.update(
            {
                "id": repo.id,
                "node_id": repo.node_id,
                "name": repo.name,
                "full_name": repo.full_name,
                "private": repo.private,
                "fork": repo.fork_of is not None,
                "html_url": f"{self.base}/{repo.full_name}",
                "url": f"{self.base}/repos/{repo.full_name}",
            }
        )
        if "default_branch" in target:
            target["default_branch"] = repo.default_branch
        if isinstance(target.get("owner"), dict):
            self._user(target["owner"], repo.owner)

    def _sender(self, payload: dict[str, Any], sender: Account | str | None) -> None:
        if sender is None:
            return
        account = self.state.account(sender) if isinstance(sender, str) else sender
        self._user(payload["sender"], account)

    # -- events ----------------------------------------------------------------------------------
    def pull_request(
        self,
        pull: PullRequest,
        action: str = "opened",
        *,
        sender: Account | str | None = None,
        before: str | None = None,
        label: str | None = None,
    ) -> dict[str, Any]:
        """``pull_request`` with ``action``; for synchronize, ``before`` is the previous head; for
        labeled and unlabeled, ``label`` is the label added or taken off."""
        if action in ("labeled", "unlabeled") and label is None:
            raise ValueError(f"a pull_request {action} payload names its label")
        payload = self._start("pull_request", action, pull.repo)
        payload["number"] = pull.number
        target = payload["pull_request"]
        self._pull(target, pull)
        if action == "synchronize":
            payload["before"] = before or pull.base_sha
            payload["after"] = pull.head_sha
        if label is not None:
            payload["label"] = self._label(pull.repo, self.state.label(pull.repo, label))
        # The action implies the state GitHub reports even if the test has not changed the PR itself.
        if action == "closed":
            target.update({"state": "closed", "closed_at": iso(pull.closed_at or utcnow())})
        elif action in ("opened", "reopened", "synchronize", "ready_for_review"):
            target.update({"state": "open", "closed_at": None, "merged_at": None})
        if action == "ready_for_review":
            target["draft"] = False
        self._sender(payload, sender or pull.user)
        return payload

    def _pull(self, target: dict[str, Any], pull: PullRequest) -> None:
        files = pull.files()
        values = {
            "id": pull.id,
            "number": pull.number,
            "title": pull.title,
            "body": pull.body,
            "state": pull.state,
            "draft": pull.draft,
            "merged": pull.merged,
            "merged_at": iso(pull.merged_at),
            "closed_at": iso(pull.closed_at),
            "created_at": iso(pull.created_at),
            "updated_at": iso(pull.updated_at),
            "html_url": f"{self.base}/{pull.repo.full_name}/pull/{pull.number}",
            "url": f"{self.base}/repos/{pull.repo.full_name}/pulls/{pull.number}",
            "additions": sum(f.additions for f in files),
            "deletions": sum(f.deletions for f in files),
            "changed_files": len(files),
        }
        target.update({k: v for k, v in values.items() if k in target})  # shapes differ between events
        if "labels" in target:
            carried = self.state.labels_on(pull.repo, pull.number)
            target["labels"] = [self._label(pull.repo, label) for label in carried]
        self._user(target["user"], pull.user)
        for side, repo, ref, sha in (
            ("head", pull.head_repo, pull.head_ref, pull.head_sha),
            ("base", pull.repo, pull.base_ref, pull.base_sha),
        ):
            end = target[side]
            end.update({"ref": ref, "sha": sha, "label": f"{repo.owner.login}:{ref}"})
            self._user(end["user"], repo.owner)
            self._repository(end["repo"], repo)

    def _label(self, repo: Repository, label: Label) -> dict[str, Any]:
        return Shapes(self.state, self.base).label(repo, label)  # webhooks carry the REST shape

    def issue_comment(
        self, comment: IssueComment, action: str = "created", *, previous_body: str | None = None
    ) -> dict[str, Any]:
        """``issue_comment`` created or edited (``previous_body`` fills ``changes.body.from``)."""
        payload = self._start("issue_comment", action, comment.repo)
        issue = self.state.issue(comment.repo, comment.number)
        target = payload["issue"]
        if issue is not None:
            target.update(
                {
                    "id": issue.id,
                    "number": issue.number,
                    "title": issue.title,
                    "body": issue.body,
                    "state": issue.state,
                    "html_url": f"{self.base}/{comment.repo.full_name}/"
                    f"{'pull' if issue.pull else 'issues'}/{issue.number}",
                }
            )
            self._user(target["user"], issue.user)
            if issue.pull is not None:
                api = f"{self.base}/repos/{comment.repo.full_name}/pulls/{issue.number}"
                target["pull_request"] = {
                    "url": api,
                    "html_url": target["html_url"],
                    "diff_url": target["html_url"] + ".diff",
                    "patch_url": target["html_url"] + ".patch",
                    "merged_at": None,
                }
                target["draft"] = issue.pull.draft
            else:
                target.pop("pull_request", None)
        body = payload["comment"]
        body.update(
            {
                "id": comment.id,
                "body": comment.body,
                "created_at": iso(comment.created_at),
                "updated_at": iso(comment.updated_at),
                "html_url": f"{target.get('html_url')}#issuecomment-{comment.id}",
                "url": f"{self.base}/repos/{comment.repo.full_name}/issues/comments/{comment.id}",
                "issue_url": f"{self.base}/repos/{comment.repo.full_name}/issues/{comment.number}",
                "author_association": _association(comment.repo, comment.user),
            }
        )
        self._user(body["user"], comment.user)
        if action == "edited":
            payload["changes"] = {"body": {"from": previous_body if previous_body is not None else ""}}
        self._sender(payload, comment.user)
        return payload

    def pull_request_review(self, review: Review, action: str = "submitted") -> dict[str, Any]:
        pull = self.state.pull(review.repo, review.number)
        if pull is None:
            raise KeyError(review.number)
        payload = self._start("pull_request_review", action, review.repo)
        self._pull(payload["pull_request"], pull)
        target = payload["review"]
        target.update(
            {
                "id": review.id,
                "body": review.body or None,
                "commit_id": review.commit_id,
                "state": review.state.lower(),
                "submitted_at": iso(review.submitted_at),
                "html_url": f"{self.base}/{review.repo.full_name}/pull/{review.number}"
                f"#pullrequestreview-{review.id}",
                "pull_request_url": f"{self.base}/repos/{review.repo.full_name}/pulls/{review.number}",
            }
        )
        self._user(target["user"], review.user)
        self._sender(payload, review.user)
        return payload

    def check_run(
        self,
        run: CheckRun,
        action: str = "rerequested",
        *,
        identifier: str | None = None,
        sender: Account | str = "maintainer",
    ) -> dict[str, Any]:
        """``check_run`` rerequested or requested_action (``identifier`` is the action's id)."""
        payload = self._start("check_run", action, run.repo)
        target = payload["check_run"]
        target.update(
            {
                "id": run.id,
                "name": run.name,
                "head_sha": run.head_sha,
                "status": run.status,
                "conclusion": run.conclusion,
                "external_id": run.external_id or "",
                "details_url": run.details_url or f"{self.base}/{run.repo.full_name}/runs/{run.id}",
                "started_at": iso(run.started_at),
                "completed_at": iso(run.completed_at),
                "url": f"{self.base}/repos/{run.repo.full_name}/check-runs/{run.id}",
                "html_url": f"{self.base}/{run.repo.full_name}/runs/{run.id}",
            }
        )
        app = self.state.app
        target["app"].update({"id": app.id, "slug": app.slug, "name": app.name})
        target["check_suite"].update({"id": run.check_suite_id, "head_sha": run.head_sha})
        # GitHub lists only the open PRs whose head is in the repository itself: a fork's PR is
        # left out, so an App must know from its own records which PR a check belongs to.
        pulls = [
            i.pull
            for i in self.state.issues.values()
            if i.pull and i.repo is run.repo and i.pull.head_sha == run.head_sha and not i.pull.fork
            and i.pull.state == "open"
        ]
        target["pull_requests"] = [self._pull_minimal(p) for p in pulls]
        target["check_suite"]["pull_requests"] = copy.deepcopy(target["pull_requests"])
        if action == "rerequested" and run.status != "completed":  # only a completed run can be re-run
            target.update(
                {
                    "status": "completed",
                    "conclusion": run.conclusion or "neutral",
                    "completed_at": iso(run.completed_at or utcnow()),
                }
            )
        if action == "requested_action":
            payload["requested_action"] = {"identifier": identifier or "rerun"}
        self._sender(payload, sender)
        return payload

    def _pull_minimal(self, pull: PullRequest) -> dict[str, Any]:
        def end(repo: Repository, ref: str, sha: str) -> dict[str, Any]:
            return {
                "ref": ref,
                "sha": sha,
                "repo": {"id": repo.id, "name": repo.name, "url": f"{self.base}/repos/{repo.full_name}"},
            }

        return {
            "id": pull.id,
            "number": pull.number,
            "url": f"{self.base}/repos/{pull.repo.full_name}/pulls/{pull.number}",
            "head": end(pull.head_repo, pull.head_ref, pull.head_sha),
            "base": end(pull.repo, pull.base_ref, pull.base_sha),
        }

    def workflow_run(self, run: WorkflowRun, action: str = "completed") -> dict[str, Any]:
        """``workflow_run`` requested, in_progress (built from the requested example) or completed."""
        repo = self.state.repo_of_run(run)
        payload = self._start("workflow_run", "requested" if action == "in_progress" else action, repo)
        payload["action"] = action
        target = payload["workflow_run"]
        api = f"{self.base}/repos/{repo.full_name}/actions/runs/{run.id}"
        previous = f"{api}/attempts/{run.run_attempt - 1}" if run.run_attempt > 1 else None
        target.update(
            {
                "id": run.id,
                "name": run.name,
                "display_title": run.display_title,
                "head_branch": run.head_branch,
                "head_sha": run.head_sha,
                "path": run.path,
                "run_number": run.run_number,
                "run_attempt": run.run_attempt,
                "event": run.event,
                "status": run.status,
                "conclusion": run.conclusion,
                "workflow_id": run.workflow_id,
                "url": api,
                "html_url": f"{self.base}/{repo.full_name}/actions/runs/{run.id}",
                "jobs_url": f"{api}/jobs",
                "logs_url": f"{api}/logs",
                "cancel_url": f"{api}/cancel",
                "rerun_url": f"{api}/rerun",
                "artifacts_url": f"{api}/artifacts",
                "previous_attempt_url": previous,
                "created_at": iso(run.created_at),
                "updated_at": iso(run.updated_at),
                "run_started_at": iso(run.created_at),
                "pull_requests": [],
            }
        )
        head = repo.store.commits.get(run.head_sha)
        if head is not None and isinstance(target.get("head_commit"), dict):
            target["head_commit"].update(
                {
                    "id": head.sha,
                    "tree_id": head.tree,
                    "message": head.message,
                    "timestamp": iso(head.committer.date),
                }
            )
        for key in ("actor", "triggering_actor"):
            if isinstance(target.get(key), dict):
                self._user(target[key], run.actor)
        for key in ("repository", "head_repository"):
            if isinstance(target.get(key), dict):
                self._repository(target[key], repo)
        if action == "completed":  # the action implies the state, as for pull requests
            target.update({"status": "completed", "conclusion": run.conclusion or "success"})
        else:
            target.update(
                {"status": "queued" if action == "requested" else "in_progress", "conclusion": None}
            )
        workflow = repo.workflows[run.workflow_id]
        payload["workflow"].update(
            {
                "id": workflow.id,
                "name": workflow.name,
                "path": workflow.path,
                "state": workflow.state,
                "url": f"{self.base}/repos/{repo.full_name}/actions/workflows/{workflow.id}",
            }
        )
        self._sender(payload, run.actor)
        return payload

    def workflow_job(
        self,
        run: WorkflowRun,
        action: str = "queued",
        *,
        job: WorkflowJob | None = None,
        job_id: int | None = None,
        name: str = "test",
        labels: list[str] | None = None,
    ) -> dict[str, Any]:
        """``workflow_job`` queued, in_progress or completed for one job of ``run`` (``job``: one the
        simulator's state holds, see :meth:`Simulator.advance_job`)."""
        repo = self.state.repo_of_run(run)
        payload = self._start("workflow_job", action, repo)
        ident = job.id if job is not None else job_id or run.id * 10 + 1
        api = f"{self.base}/repos/{repo.full_name}"
        payload["workflow_job"].update(
            {
                "id": ident,
                "run_id": run.id,
                "run_attempt": job.run_attempt if job is not None else run.run_attempt,
                "head_sha": run.head_sha,
                "head_branch": run.head_branch,
                "name": job.name if job is not None else name,
                "workflow_name": run.name,
                "labels": list(job.labels) if job is not None else labels or list(DEFAULT_LABELS),
                "run_url": f"{api}/actions/runs/{run.id}",
                "url": f"{api}/actions/jobs/{ident}",
                "html_url": f"{self.base}/{repo.full_name}/actions/runs/{run.id}/job/{ident}",
                "check_run_url": f"{api}/check-runs/{ident}",
            }
        )
        if job is not None:  # the job's own times, not the example's
            payload["workflow_job"].update(
                {"created_at": iso(job.created_at), "started_at": iso(job.started_at or job.created_at)}
            )
        if action == "completed":
            conclusion = job.conclusion if job is not None else None
            payload["workflow_job"].update(
                {
                    "status": "completed",
                    "conclusion": conclusion or run.conclusion or "success",
                    "completed_at": iso((job.completed_at if job is not None else None) or utcnow()),
                }
            )
        self._sender(payload, run.actor)
        return payload

    def ping(self) -> dict[str, Any]:
        payload = self._start("ping", None, None)
        payload.pop("repository", None)  # an App's ping is about its hook, not a repository
        payload.pop("organization", None)
        payload["hook"].update({"type": "App", "app_id": self.state.app.id, "name": "web"})
        payload["hook"].setdefault("config", {})["url"] = self.state.app.webhook_url or f"{self.base}/webhook"
        return payload

    def installation(self, installed: Installation, action: str = "created") -> dict[str, Any]:
        payload = self._start("installation", action, None)
        target = payload["installation"]
        app = self.state.app
        target.update(
            {
                "id": installed.id,
                "app_id": app.id,
                "app_slug": app.slug,
                "target_id": installed.account.id,
                "target_type": installed.account.type,
                "access_tokens_url": f"{self.base}/app/installations/{installed.id}/access_tokens",
                "repository_selection": "all" if installed.repositories is None else "selected",
            }
        )
        self._user(target["account"], installed.account)
        repos = [r for r in self.state.repos.values() if self.state.installation_for(r) is installed]
        payload["repositories"] = [
            {"id": r.id, "node_id": r.node_id, "name": r.name, "full_name": r.full_name, "private": r.private}
            for r in repos
        ]
        return payload


def _association(repo: Repository, account: Account) -> str:
    if account.login.lower() == repo.owner.login.lower():
        return "OWNER"
    return "COLLABORATOR" if account.login.lower() in repo.collaborators else "NONE"
