"""GitHub's JSON shapes for the simulator's objects, with URLs built on the simulator's own base URL."""

from __future__ import annotations

import base64
import urllib.parse
from dataclasses import dataclass
from typing import Any

from ghsim.diff import FileDiff
from ghsim.objects import Commit
from ghsim.state import (
    Account,
    CheckRun,
    HookDelivery,
    Installation,
    Issue,
    IssueComment,
    Label,
    PullRequest,
    Reaction,
    Repository,
    Review,
    ReviewComment,
    SimulatorState,
    Workflow,
    WorkflowJob,
    WorkflowRun,
    iso,
    node_id,
)

_REPO_TEMPLATES = {
    "archive_url": "/{archive_format}{/ref}",
    "assignees_url": "/assignees{/user}",
    "blobs_url": "/git/blobs{/sha}",
    "branches_url": "/branches{/branch}",
    "collaborators_url": "/collaborators{/collaborator}",
    "comments_url": "/comments{/number}",
    "commits_url": "/commits{/sha}",
    "compare_url": "/compare/{base}...{head}",
    "contents_url": "/contents/{+path}",
    "contributors_url": "/contributors",
    "deployments_url": "/deployments",
    "downloads_url": "/downloads",
    "events_url": "/events",
    "forks_url": "/forks",
    "git_commits_url": "/git/commits{/sha}",
    "git_refs_url": "/git/refs{/sha}",
    "git_tags_url": "/git/tags{/sha}",
    "hooks_url": "/hooks",
    "issue_comment_url": "/issues/comments{/number}",
    "issue_events_url": "/issues/events{/number}",
    "issues_url": "/issues{/number}",
    "keys_url": "/keys{/key_id}",
    "labels_url": "/labels{/name}",
    "languages_url": "/languages",
    "merges_url": "/merges",
    "milestones_url": "/milestones{/number}",
    "notifications_url": "/notifications{?since,all,participating}",
    "pulls_url": "/pulls{/number}",
    "releases_url": "/releases{/id}",
    "stargazers_url": "/stargazers",
    "statuses_url": "/statuses/{sha}",
    "subscribers_url": "/subscribers",
    "subscription_url": "/subscription",
    "tags_url": "/tags",
    "teams_url": "/teams",
    "trees_url": "/git/trees{/sha}",
}
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket")


@dataclass(frozen=True)
class Shapes:
    """Builds answers for one base URL (``http://127.0.0.1:PORT``); html URLs share it."""

    state: SimulatorState
    base: str

    # -- people ----------------------------------------------------------------------------------
    def user(self, account: Account) -> dict[str, Any]:
        api = f"{self.base}/users/{account.login}"
        return {
            "login": account.login,
            "id": account.id,
            "node_id": account.node_id,
            "avatar_url": f"{self.base}/avatars/u/{account.id}?v=4",
            "gravatar_id": "",
            "url": api,
            "html_url": f"{self.base}/{account.login}",
            "followers_url": f"{api}/followers",
            "following_url": f"{api}/following{{/other_user}}",
            "gists_url": f"{api}/gists{{/gist_id}}",
            "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api}/subscriptions",
            "organizations_url": f"{api}/orgs",
            "repos_url": f"{api}/repos",
            "events_url": f"{api}/events{{/privacy}}",
            "received_events_url": f"{api}/received_events",
            "type": account.type,
            "user_view_type": "public",
            "site_admin": False,
        }

    def app(self) -> dict[str, Any]:
        app = self.state.app
        return {
            "id": app.id,
            "slug": app.slug,
            "node_id": node_id("A", app.id),
            "client_id": f"Iv1.{app.id:016x}",
            "owner": self.user(app.owner),
            "name": app.name,
            "description": "rocmbot under the GitHub simulator",
            "external_url": f"{self.base}/apps/{app.slug}",
            "html_url": f"{self.base}/apps/{app.slug}",
            "created_at": iso(app.created_at),
            "updated_at": iso(app.created_at),
            "permissions": dict(app.permissions),
            "events": list(app.events),
            "installations_count": 1,
        }

    def installation(self, installed: Installation) -> dict[str, Any]:
        app = self.state.app
        return {
            "id": installed.id,
            "account": self.user(installed.account),
            "access_tokens_url": f"{self.base}/app/installations/{installed.id}/access_tokens",
            "repositories_url": f"{self.base}/installation/repositories",
            "html_url": f"{self.base}/organizations/{installed.account.login}/settings/installations/"
            f"{installed.id}",
            "app_id": app.id,
            "app_slug": app.slug,
            "client_id": f"Iv1.{app.id:016x}",
            "target_id": installed.account.id,
            "target_type": installed.account.type,
            "permissions": dict(app.permissions),
            "events": list(app.events),
            "repository_selection": "all" if installed.repositories is None else "selected",
            "single_file_name": None,
            "has_multiple_single_files": False,
            "single_file_paths": [],
            "created_at": iso(installed.created_at),
            "updated_at": iso(installed.created_at),
            "suspended_by": None,
            "suspended_at": None,
        }

    # -- repositories ----------------------------------------------------------------------------
    def repo_url(self, repo: Repository) -> str:
        return f"{self.base}/repos/{repo.full_name}"

    def html(self, repo: Repository) -> str:
        return f"{self.base}/{repo.full_name}"

    def repository(self, repo: Repository, *, full: bool = True) -> dict[str, Any]:
        api = self.repo_url(repo)
        host = self.base.split("://", 1)[-1]
        head = repo.resolve(repo.default_branch)
        stamp = iso(head.committer.date) if head else iso(repo.created_at)
        shape: dict[str, Any] = {
            "id": repo.id,
            "node_id": repo.node_id,
            "name": repo.name,
            "full_name": repo.full_name,
            "private": repo.private,
            "owner": self.user(repo.owner),
            "html_url": self.html(repo),
            "description": None,
            "fork": repo.fork_of is not None,
            "url": api,
            **{key: api + suffix for key, suffix in _REPO_TEMPLATES.items()},
            "git_url": f"git://{host}/{repo.full_name}.git",
            "ssh_url": f"git@{host}:{repo.full_name}.git",
            "clone_url": f"{self.html(repo)}.git",
            "svn_url": self.html(repo),
            "mirror_url": None,
            "homepage": None,
            "language": "Python",
            "size": 1,
            "default_branch": repo.default_branch,
            "forks_count": 0,
            "forks": 0,
            "stargazers_count": 0,
            "watchers_count": 0,
            "watchers": 0,
            "open_issues_count": 0,
            "open_issues": 0,
            "archived": False,
            "disabled": False,
            "visibility": "private" if repo.private else "public",
            "is_template": False,
            "topics": [],
            "has_issues": True,
            "has_projects": False,
            "has_wiki": False,
            "has_pages": False,
            "has_downloads": True,
            "has_discussions": False,
            "allow_forking": True,
            "web_commit_signoff_required": False,
            "license": None,
            "pushed_at": stamp,
            "created_at": iso(repo.created_at),
            "updated_at": stamp,
        }
        if full:
            shape.update(
                {
                    "network_count": 0,
                    "subscribers_count": 0,
                    "temp_clone_token": None,
                    "permissions": {
                        "admin": False,
                        "maintain": False,
                        "push": False,
                        "triage": False,
                        "pull": True,
                    },
                }
            )
            if repo.fork_of is not None:
                shape["parent"] = shape["source"] = self.repository(repo.fork_of, full=False)
        return shape

    # -- git -------------------------------------------------------------------------------------
    def commit(
        self, repo: Repository, commit: Commit, *, files: list[FileDiff] | None = None
    ) -> dict[str, Any]:
        api = self.repo_url(repo)
        shape: dict[str, Any] = {
            "sha": commit.sha,
            "node_id": node_id("C", int(commit.sha[:12], 16)),
            "url": f"{api}/commits/{commit.sha}",
            "html_url": f"{self.html(repo)}/commit/{commit.sha}",
            "comments_url": f"{api}/commits/{commit.sha}/comments",
            "commit": {
                "url": f"{api}/git/commits/{commit.sha}",
                "message": commit.message,
                "comment_count": 0,
                "author": {
                    "name": commit.author.name,
                    "email": commit.author.email,
                    "date": iso(commit.author.date),
                },
                "committer": {
                    "name": commit.committer.name,
                    "email": commit.committer.email,
                    "date": iso(commit.committer.date),
                },
                "tree": {"sha": commit.tree, "url": f"{api}/git/trees/{commit.tree}"},
                "verification": {
                    "verified": False,
                    "reason": "unsigned",
                    "signature": None,
                    "payload": None,
                    "verified_at": None,
                },
            },
            "author": {},
            "committer": {},
            "parents": [
                {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{self.html(repo)}/commit/{p}"}
                for p in commit.parents
            ],
        }
        if files is not None:
            shape["files"] = [self.diff_entry(repo, commit.sha, f) for f in files]
            shape["stats"] = {
                "additions": sum(f.additions for f in files),
                "deletions": sum(f.deletions for f in files),
                "total": sum(f.changes for f in files),
            }
        return shape

    def simple_commit(self, commit: Commit) -> dict[str, Any]:
        return {
            "id": commit.sha,
            "tree_id": commit.tree,
            "message": commit.message,
            "timestamp": iso(commit.committer.date),
            "author": {"name": commit.author.name, "email": commit.author.email},
            "committer": {"name": commit.committer.name, "email": commit.committer.email},
        }

    def diff_entry(self, repo: Repository, ref: str, diff: FileDiff) -> dict[str, Any]:
        shape: dict[str, Any] = {
            "sha": diff.sha,
            "filename": diff.filename,
            "status": diff.status,
            "additions": diff.additions,
            "deletions": diff.deletions,
            "changes": diff.changes,
            "blob_url": f"{self.html(repo)}/blob/{ref}/{diff.filename}",
            "raw_url": f"{self.html(repo)}/raw/{ref}/{diff.filename}",
            "contents_url": f"{self.repo_url(repo)}/contents/{diff.filename}?ref={ref}",
        }
        if diff.patch is not None:
            shape["patch"] = diff.patch
        if diff.previous_filename:
            shape["previous_filename"] = diff.previous_filename
        return shape

    def blob(self, repo: Repository, sha: str, data: bytes) -> dict[str, Any]:
        return {
            "sha": sha,
            "node_id": node_id("B", int(sha[:12], 16)),
            "size": len(data),
            "url": f"{self.repo_url(repo)}/git/blobs/{sha}",
            "content": _base64_lines(data),
            "encoding": "base64",
        }

    def content_file(
        self, repo: Repository, path: str, sha: str, data: bytes, ref: str, kind: str = "file"
    ) -> dict[str, Any]:
        api = self.repo_url(repo)
        links = {
            "self": f"{api}/contents/{path}?ref={ref}",
            "git": f"{api}/git/blobs/{sha}",
            "html": f"{self.html(repo)}/blob/{ref}/{path}",
        }
        shape: dict[str, Any] = {
            "type": kind,
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "size": len(data),
            "url": links["self"],
            "html_url": links["html"],
            "git_url": links["git"],
            "download_url": f"{self.base}/raw/{repo.full_name}/{ref}/{path}",
            "_links": links,
        }
        if kind == "file":
            too_big = len(data) > 1024 * 1024
            shape.update(
                {
                    "encoding": "none" if too_big else "base64",
                    "content": "" if too_big else _base64_lines(data),
                }
            )
        elif kind == "symlink":
            shape["target"] = data.decode("utf-8", "replace")
        return shape

    def content_entry(
        self, repo: Repository, path: str, kind: str, sha: str, size: int, ref: str
    ) -> dict[str, Any]:
        api = self.repo_url(repo)
        html = f"{self.html(repo)}/{'tree' if kind == 'dir' else 'blob'}/{ref}/{path}"
        git = f"{api}/git/{'trees' if kind == 'dir' else 'blobs'}/{sha}"
        links = {"self": f"{api}/contents/{path}?ref={ref}", "git": git, "html": html}
        download = None if kind == "dir" else f"{self.base}/raw/{repo.full_name}/{ref}/{path}"
        return {
            "type": kind,
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "size": size,
            "url": links["self"],
            "html_url": html,
            "git_url": git,
            "download_url": download,
            "_links": links,
        }

    # -- issues, pulls, comments -----------------------------------------------------------------
    def label(self, repo: Repository, label: Label) -> dict[str, Any]:
        return {
            "id": label.id,
            "node_id": node_id("LA", label.id),
            "url": f"{self.repo_url(repo)}/labels/{urllib.parse.quote(label.name, safe='')}",
            "name": label.name,
            "color": label.color,
            "default": label.default,
            "description": label.description,
        }

    def labels(self, repo: Repository, number: int) -> list[dict[str, Any]]:
        """The labels issue or PR ``number`` carries."""
        return [self.label(repo, label) for label in self.state.labels_on(repo, number)]

    def reactions_rollup(self, url: str, reactions: list[Reaction]) -> dict[str, Any]:
        counts = {name: sum(1 for r in reactions if r.content == name) for name in REACTIONS}
        return {"url": url, "total_count": len(reactions), **counts}

    def issue(self, issue: Issue) -> dict[str, Any]:
        api = f"{self.repo_url(issue.repo)}/issues/{issue.number}"
        comments = self.state.comments_on(issue.repo, issue.number)
        shape: dict[str, Any] = {
            "id": issue.id,
            "node_id": node_id("I", issue.id),
            "url": api,
            "repository_url": self.repo_url(issue.repo),
            "labels_url": f"{api}/labels{{/name}}",
            "comments_url": f"{api}/comments",
            "events_url": f"{api}/events",
            "html_url": f"{self.html(issue.repo)}/{'pull' if issue.pull else 'issues'}/{issue.number}",
            "number": issue.number,
            "state": issue.state,
            "title": issue.title,
            "body": issue.body,
            "user": self.user(issue.user),
            "labels": self.labels(issue.repo, issue.number),
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "locked": False,
            "active_lock_reason": None,
            "comments": len(comments),
            "created_at": iso(issue.created_at),
            "updated_at": iso(issue.updated_at),
            "closed_at": iso(issue.closed_at),
            "author_association": self.association(issue.repo, issue.user),
            "reactions": self.reactions_rollup(f"{api}/reactions", []),
            # Only the App's own bot acts through this App, as for comments.
            "performed_via_github_app": self.app() if issue.user is self.state.bot else None,
        }
        if issue.pull:
            pulls = f"{self.repo_url(issue.repo)}/pulls/{issue.number}"
            shape["pull_request"] = {
                "url": pulls,
                "html_url": shape["html_url"],
                "diff_url": f"{shape['html_url']}.diff",
                "patch_url": f"{shape['html_url']}.patch",
                "merged_at": iso(issue.pull.merged_at),
            }
            shape["draft"] = issue.pull.draft
        return shape

    def association(self, repo: Repository, account: Account) -> str:
        if account.login.lower() == repo.owner.login.lower():
            return "OWNER"
        if account.login.lower() in repo.collaborators:
            return "COLLABORATOR" if repo.collaborators[account.login.lower()] != "admin" else "MEMBER"
        return "NONE"

    def issue_comment(self, comment: IssueComment) -> dict[str, Any]:
        api = f"{self.repo_url(comment.repo)}/issues/comments/{comment.id}"
        issue = self.state.issue(comment.repo, comment.number)
        kind = "pull" if issue and issue.pull else "issues"
        return {
            "id": comment.id,
            "node_id": node_id("IC", comment.id),
            "url": api,
            "html_url": f"{self.html(comment.repo)}/{kind}/{comment.number}#issuecomment-{comment.id}",
            "issue_url": f"{self.repo_url(comment.repo)}/issues/{comment.number}",
            "body": comment.body,
            "user": self.user(comment.user),
            "created_at": iso(comment.created_at),
            "updated_at": iso(comment.updated_at),
            "author_association": self.association(comment.repo, comment.user),
            # Only the App's own bot acts through this App; another bot account is another App.
            "performed_via_github_app": self.app() if comment.user is self.state.bot else None,
            "reactions": self.reactions_rollup(f"{api}/reactions", comment.reactions),
        }

    def reaction(self, reaction: Reaction) -> dict[str, Any]:
        return {
            "id": reaction.id,
            "node_id": node_id("REA", reaction.id),
            "user": self.user(reaction.user),
            "content": reaction.content,
            "created_at": iso(reaction.created_at),
        }

    def branch_end(self, pull: PullRequest, side: str) -> dict[str, Any]:
        repo = pull.head_repo if side == "head" else pull.repo
        ref, sha = (pull.head_ref, pull.head_sha) if side == "head" else (pull.base_ref, pull.base_sha)
        return {
            "label": f"{repo.owner.login}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": self.user(repo.owner),
            "repo": self.repository(repo, full=False),
        }

    def pull(self, pull: PullRequest) -> dict[str, Any]:
        api = f"{self.repo_url(pull.repo)}/pulls/{pull.number}"
        issue_api = f"{self.repo_url(pull.repo)}/issues/{pull.number}"
        html = f"{self.html(pull.repo)}/pull/{pull.number}"
        statuses = f"{self.repo_url(pull.repo)}/statuses/{pull.head_sha}"
        files = pull.files()
        commits = pull.repo.store.ancestors(pull.head_sha)
        base_side = set(pull.repo.store.ancestors(pull.base_sha))
        review_comments = sum(len(r.comments) for r in self.state.reviews_on(pull.repo, pull.number))
        return {
            "url": api,
            "id": pull.id,
            "node_id": node_id("PR", pull.id),
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": issue_api,
            "commits_url": f"{api}/commits",
            "review_comments_url": f"{api}/comments",
            "review_comment_url": f"{self.repo_url(pull.repo)}/pulls/comments{{/number}}",
            "comments_url": f"{issue_api}/comments",
            "statuses_url": statuses,
            "number": pull.number,
            "state": pull.state,
            "locked": False,
            "title": pull.title,
            "user": self.user(pull.user),
            "body": pull.body,
            "labels": self.labels(pull.repo, pull.number),
            "milestone": None,
            "active_lock_reason": None,
            "created_at": iso(pull.created_at),
            "updated_at": iso(pull.updated_at),
            "closed_at": iso(pull.closed_at),
            "merged_at": iso(pull.merged_at),
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": self.branch_end(pull, "head"),
            "base": self.branch_end(pull, "base"),
            "_links": {
                "self": {"href": api},
                "html": {"href": html},
                "issue": {"href": issue_api},
                "comments": {"href": f"{issue_api}/comments"},
                "review_comments": {"href": f"{api}/comments"},
                "review_comment": {"href": f"{self.repo_url(pull.repo)}/pulls/comments{{/number}}"},
                "commits": {"href": f"{api}/commits"},
                "statuses": {"href": statuses},
            },
            "author_association": self.association(pull.repo, pull.user),
            "auto_merge": None,
            "draft": pull.draft,
            "merged": pull.merged,
            "mergeable": None if pull.merged else True,
            "rebaseable": None,
            "mergeable_state": "unknown" if pull.merged else "clean",
            "merged_by": None,
            "comments": len(self.state.comments_on(pull.repo, pull.number)),
            "review_comments": review_comments,
            "maintainer_can_modify": pull.fork,
            "commits": len([c for c in commits if c not in base_side]),
            "additions": sum(f.additions for f in files),
            "deletions": sum(f.deletions for f in files),
            "changed_files": len(files),
        }

    def review(self, review: Review) -> dict[str, Any]:
        pulls = f"{self.repo_url(review.repo)}/pulls/{review.number}"
        html = f"{self.html(review.repo)}/pull/{review.number}#pullrequestreview-{review.id}"
        shape: dict[str, Any] = {
            "id": review.id,
            "node_id": node_id("PRR", review.id),
            "user": self.user(review.user),
            "body": review.body,
            "state": review.state,
            "html_url": html,
            "pull_request_url": pulls,
            "author_association": self.association(review.repo, review.user),
            "_links": {"html": {"href": html}, "pull_request": {"href": pulls}},
            "commit_id": review.commit_id,
        }
        if review.submitted_at is not None:
            shape["submitted_at"] = iso(review.submitted_at)
        return shape

    def review_comment(self, comment: ReviewComment) -> dict[str, Any]:
        api = f"{self.repo_url(comment.repo)}/pulls/comments/{comment.id}"
        pulls = f"{self.repo_url(comment.repo)}/pulls/{comment.number}"
        html = f"{self.html(comment.repo)}/pull/{comment.number}#discussion_r{comment.id}"
        return {
            "url": api,
            "pull_request_review_id": comment.review_id,
            "id": comment.id,
            "node_id": node_id("PRRC", comment.id),
            "diff_hunk": comment.diff_hunk,
            "path": comment.path,
            "position": comment.position,
            "original_position": comment.position,
            "commit_id": comment.commit_id,
            "original_commit_id": comment.commit_id,
            "user": self.user(comment.user),
            "body": comment.body,
            "created_at": iso(comment.created_at),
            "updated_at": iso(comment.created_at),
            "html_url": html,
            "pull_request_url": pulls,
            "author_association": self.association(comment.repo, comment.user),
            "_links": {"self": {"href": api}, "html": {"href": html}, "pull_request": {"href": pulls}},
            "start_line": comment.start_line,
            "original_start_line": comment.start_line,
            "start_side": comment.start_side,
            "line": comment.line,
            "original_line": comment.line,
            "side": comment.side,
            "subject_type": "line",
            "reactions": self.reactions_rollup(f"{api}/reactions", []),
        }

    # -- checks and actions ----------------------------------------------------------------------
    def check_run(self, run: CheckRun) -> dict[str, Any]:
        api = f"{self.repo_url(run.repo)}/check-runs/{run.id}"
        pulls = [
            {
                "id": issue.pull.id,
                "number": issue.pull.number,
                "url": f"{self.repo_url(run.repo)}/pulls/{issue.pull.number}",
                "head": {
                    "ref": issue.pull.head_ref,
                    "sha": issue.pull.head_sha,
                    "repo": {
                        "id": issue.pull.head_repo.id,
                        "url": self.repo_url(issue.pull.head_repo),
                        "name": issue.pull.head_repo.name,
                    },
                },
                "base": {
                    "ref": issue.pull.base_ref,
                    "sha": issue.pull.base_sha,
                    "repo": {"id": run.repo.id, "url": self.repo_url(run.repo), "name": run.repo.name},
                },
            }
            for issue in self.state.issues.values()
            if issue.pull
            and issue.repo is run.repo
            and issue.pull.head_sha == run.head_sha
            and not issue.pull.fork
            and issue.pull.state == "open"
        ]
        return {
            "id": run.id,
            "node_id": node_id("CR", run.id),
            "head_sha": run.head_sha,
            "external_id": run.external_id,
            "url": api,
            "html_url": f"{self.html(run.repo)}/runs/{run.id}",
            "details_url": run.details_url,
            "status": run.status,
            "conclusion": run.conclusion,
            "started_at": iso(run.started_at),
            "completed_at": iso(run.completed_at),
            "name": run.name,
            "output": {
                "title": run.title,
                "summary": run.summary,
                "text": run.text,
                "annotations_count": len(run.annotations),
                "annotations_url": f"{api}/annotations",
            },
            "check_suite": {"id": run.check_suite_id},
            "app": self.app(),
            "pull_requests": pulls,
        }

    def annotation(self, run: CheckRun, raw: dict[str, Any]) -> dict[str, Any]:
        return {
            "path": raw["path"],
            "blob_href": f"{self.html(run.repo)}/blob/{run.head_sha}/{raw['path']}",
            "start_line": raw["start_line"],
            "end_line": raw["end_line"],
            "start_column": raw.get("start_column"),
            "end_column": raw.get("end_column"),
            "annotation_level": raw.get("annotation_level"),
            "title": raw.get("title"),
            "message": raw.get("message"),
            "raw_details": raw.get("raw_details"),
        }

    def workflow(self, repo: Repository, workflow: Workflow) -> dict[str, Any]:
        return {
            "id": workflow.id,
            "node_id": node_id("W", workflow.id),
            "name": workflow.name,
            "path": workflow.path,
            "state": workflow.state,
            "created_at": iso(workflow.created_at),
            "updated_at": iso(workflow.created_at),
            "url": f"{self.repo_url(repo)}/actions/workflows/{workflow.id}",
            "html_url": f"{self.html(repo)}/blob/{repo.default_branch}/{workflow.path}",
            "badge_url": f"{self.html(repo)}/workflows/{workflow.name}/badge.svg",
        }

    def workflow_job(self, repo: Repository, run: WorkflowRun, job: WorkflowJob) -> dict[str, Any]:
        api = self.repo_url(repo)
        return {
            "id": job.id,
            "run_id": run.id,
            "run_url": f"{api}/actions/runs/{run.id}",
            "run_attempt": job.run_attempt,
            "node_id": node_id("WFJ", job.id),
            "head_sha": run.head_sha,
            "head_branch": run.head_branch,
            "url": f"{api}/actions/jobs/{job.id}",
            "html_url": f"{self.html(repo)}/actions/runs/{run.id}/job/{job.id}",
            "status": job.status,
            "conclusion": job.conclusion,
            "created_at": iso(job.created_at),
            "started_at": iso(job.started_at or job.created_at),
            "completed_at": iso(job.completed_at),
            "name": job.name,
            "steps": [],
            "check_run_url": f"{api}/check-runs/{job.id}",
            "labels": list(job.labels),
            "runner_id": 7 if job.runner_name else None,
            "runner_name": job.runner_name,
            "runner_group_id": 1 if job.runner_name else None,
            "runner_group_name": "rocm" if job.runner_name else None,
            "workflow_name": run.name,
        }

    def workflow_run(self, repo: Repository, run: WorkflowRun) -> dict[str, Any]:
        api = f"{self.repo_url(repo)}/actions/runs/{run.id}"
        head = repo.store.commits.get(run.head_sha)
        return {
            "id": run.id,
            "name": run.name,
            "node_id": node_id("WFR", run.id),
            "head_branch": run.head_branch,
            "head_sha": run.head_sha,
            "path": run.path,
            "display_title": run.display_title,
            "run_number": run.run_number,
            "event": run.event,
            "status": run.status,
            "conclusion": run.conclusion,
            "workflow_id": run.workflow_id,
            "check_suite_id": run.id + 1,
            "check_suite_node_id": node_id("CS", run.id),
            "url": api,
            "html_url": f"{self.html(repo)}/actions/runs/{run.id}",
            "pull_requests": [],
            "created_at": iso(run.created_at),
            "updated_at": iso(run.updated_at),
            "run_started_at": iso(run.created_at),
            "actor": self.user(run.actor),
            "triggering_actor": self.user(run.actor),
            "run_attempt": run.run_attempt,
            "referenced_workflows": [],
            "jobs_url": f"{api}/jobs",
            "logs_url": f"{api}/logs",
            "check_suite_url": f"{self.repo_url(repo)}/check-suites/{run.id + 1}",
            "artifacts_url": f"{api}/artifacts",
            "cancel_url": f"{api}/cancel",
            "rerun_url": f"{api}/rerun",
            "previous_attempt_url": f"{api}/attempts/{run.run_attempt - 1}" if run.run_attempt > 1 else None,
            "workflow_url": f"{self.repo_url(repo)}/actions/workflows/{run.workflow_id}",
            "head_commit": self.simple_commit(head) if head else None,
            "repository": self.repository(repo, full=False),
            "head_repository": self.repository(repo, full=False),
        }

    def delivery(self, delivery: HookDelivery, *, detail: bool = False) -> dict[str, Any]:
        shape: dict[str, Any] = {
            "id": delivery.id,
            "guid": delivery.guid,
            "delivered_at": iso(delivery.delivered_at),
            "redelivery": delivery.redelivery,
            "duration": round(delivery.duration, 3),
            "status": delivery.status,
            "status_code": delivery.status_code,
            "event": delivery.event,
            "action": delivery.action,
            "installation_id": delivery.installation_id,
            "repository_id": delivery.repository_id,
            "throttled_at": None,
        }
        if detail:
            import json

            try:
                payload = json.loads(delivery.payload)
            except ValueError:
                payload = None
            shape["url"] = delivery.url
            shape["request"] = {"headers": dict(delivery.request_headers), "payload": payload}
            shape["response"] = {
                "headers": dict(delivery.response_headers),
                "payload": delivery.response_body,
            }
        return shape


def _base64_lines(data: bytes) -> str:
    """Base64 in 60-character lines, each ending in a newline, as the contents and blobs APIs send it."""
    encoded = base64.b64encode(data).decode()
    return "".join(encoded[i : i + 60] + "\n" for i in range(0, len(encoded), 60))
