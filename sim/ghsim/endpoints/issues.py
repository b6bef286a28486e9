"""Issues, issue comments and their reactions, pull request reviews and review comments."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi.responses import Response

from ghsim.diff import FileDiff
from ghsim.endpoints.base import ApiError, Ctx, handles, json_response, not_found, paginate, unprocessable
from ghsim.endpoints.repos import pull_of
from ghsim.state import Account, IssueComment, Reaction, Repository, Review, ReviewComment, utcnow

MAX_BODY = 65536
_REVIEW_STATES = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}


def author(ctx: Ctx) -> Account:
    """Who writes: the App's bot user for installation tokens."""
    return ctx.state.bot


def _too_long(resource: str, text: str | None) -> None:
    """GitHub's 422 for a comment body (an issue comment, a review's, an inline comment's, and
    their edits) over 65,536 characters."""
    if text is not None and len(text) > MAX_BODY:
        raise ApiError(
            422,
            "Validation Failed",
            [
                {
                    "resource": resource,
                    "code": "custom",
                    "field": "body",
                    "message": f"body is too long (maximum is {MAX_BODY} characters)",
                }
            ],
        )


@handles("issues/get")
def get_issue(ctx: Ctx) -> Response:
    issue = ctx.state.issue(ctx.repo(), ctx.int_param("issue_number"))
    if issue is None:
        raise not_found()
    return json_response(ctx.shapes.issue(issue))


@handles("issues/list-for-repo")
def list_issues(ctx: Ctx) -> Response:
    """A repository's issues and PRs (PRs carry `pull_request`), ``state`` open by default,
    newest first by ``sort`` (created or updated; comments as created)."""
    repo = ctx.repo()
    state = ctx.params.get("state", "open")
    found = [i for i in ctx.state.issues_of(repo) if state in ("all", i.state)]
    updated = ctx.params.get("sort") == "updated"
    found.sort(key=lambda i: (i.updated_at if updated else i.created_at, i.id),
               reverse=ctx.params.get("direction", "desc") != "asc")
    return paginate(ctx, [ctx.shapes.issue(i) for i in found])


@handles("issues/create")
def create_issue(ctx: Ctx) -> Response:
    repo = ctx.repo()
    _too_long("Issue", ctx.body.get("body"))
    issue = ctx.state.open_issue(repo, str(ctx.body["title"]), body=ctx.body.get("body"),
                                 author=author(ctx).login)
    shape = ctx.shapes.issue(issue)
    return json_response(shape, 201, {"Location": shape["url"]})


@handles("issues/update")
def update_issue(ctx: Ctx) -> Response:
    """Change an issue's title, body or state (the fields the bot writes)."""
    issue = ctx.state.issue(ctx.repo(), ctx.int_param("issue_number"))
    if issue is None:
        raise not_found()
    _too_long("Issue", ctx.body.get("body"))
    with ctx.state.lock:
        if "title" in ctx.body and ctx.body["title"] is not None:
            issue.title = str(ctx.body["title"])
        if "body" in ctx.body:
            issue.body = ctx.body["body"]
        if ctx.body.get("state") in ("open", "closed") and ctx.body["state"] != issue.state:
            issue.state = ctx.body["state"]
            issue.closed_at = utcnow() if issue.state == "closed" else None
        issue.updated_at = utcnow()
    return json_response(ctx.shapes.issue(issue))


@handles("issues/list-comments")
def list_comments(ctx: Ctx) -> Response:
    repo = ctx.repo()
    number = ctx.int_param("issue_number")
    if ctx.state.issue(repo, number) is None:
        raise not_found()
    comments = sorted(ctx.state.comments_on(repo, number), key=lambda c: c.id)
    since = ctx.params.get("since")
    if since:
        cutoff = datetime.fromisoformat(str(since).replace("Z", "+00:00"))
        comments = [c for c in comments if c.updated_at >= cutoff]
    return paginate(ctx, [ctx.shapes.issue_comment(c) for c in comments])


@handles("issues/create-comment")
def create_comment(ctx: Ctx) -> Response:
    repo = ctx.repo()
    number = ctx.int_param("issue_number")
    if ctx.state.issue(repo, number) is None:
        raise not_found()
    _too_long("IssueComment", ctx.body.get("body"))
    comment = IssueComment(7_000_000 + ctx.state.next_id(), repo, number, author(ctx), ctx.body["body"])
    ctx.state.issue_comments[comment.id] = comment
    shape = ctx.shapes.issue_comment(comment)
    return json_response(shape, 201, {"Location": shape["url"]})


# -- labels --------------------------------------------------------------------------------------
def _labelled(ctx: Ctx) -> tuple[Repository, int]:
    repo = ctx.repo()
    number = ctx.int_param("issue_number")
    if ctx.state.issue(repo, number) is None:
        raise not_found()
    return repo, number


@handles("issues/list-labels-on-issue")
def list_labels(ctx: Ctx) -> Response:
    repo, number = _labelled(ctx)
    return paginate(ctx, ctx.shapes.labels(repo, number))


@handles("issues/add-labels")
def add_labels(ctx: Ctx) -> Response:
    """Add to the labels an issue or PR carries (a name the repository lacks makes a label);
    the answer lists all it carries. Nothing sends a webhook: see `Simulator.add_label`."""
    repo, number = _labelled(ctx)
    given = ctx.body if isinstance(ctx.body, list) else (ctx.body or {}).get("labels")
    if not given:
        raise ApiError(422, 'Invalid request.\n\n"labels" wasn\'t supplied.')
    # a suggestion waits for a person to accept it: not applied
    names = [item if isinstance(item, str) else item["name"]
             for item in given if isinstance(item, str) or not item.get("suggest")]
    ctx.state.add_labels(repo, number, names)
    return json_response(ctx.shapes.labels(repo, number))


@handles("issues/remove-label")
def remove_label(ctx: Ctx) -> Response:
    repo, number = _labelled(ctx)
    if ctx.state.remove_label(repo, number, str(ctx.params["name"])) is None:
        raise ApiError(404, "Label does not exist")
    return json_response(ctx.shapes.labels(repo, number))


def _comment(ctx: Ctx) -> IssueComment:
    repo = ctx.repo()
    comment = ctx.state.issue_comments.get(ctx.int_param("comment_id"))
    if comment is None or comment.repo is not repo:
        raise not_found()
    return comment


@handles("issues/get-comment")
def get_comment(ctx: Ctx) -> Response:
    return json_response(ctx.shapes.issue_comment(_comment(ctx)))


@handles("issues/update-comment")
def update_comment(ctx: Ctx) -> Response:
    comment = _comment(ctx)
    _too_long("IssueComment", ctx.body.get("body"))
    comment.body = ctx.body["body"]
    comment.updated_at = utcnow()
    return json_response(ctx.shapes.issue_comment(comment))


@handles("reactions/list-for-issue-comment")
def list_reactions(ctx: Ctx) -> Response:
    comment = _comment(ctx)
    content = ctx.params.get("content")
    reactions = [r for r in comment.reactions if content in (None, r.content)]
    return paginate(ctx, [ctx.shapes.reaction(r) for r in reactions])


@handles("reactions/create-for-issue-comment")
def create_reaction(ctx: Ctx) -> Response:
    comment = _comment(ctx)
    user = author(ctx)
    for existing in comment.reactions:
        if existing.user is user and existing.content == ctx.body["content"]:
            return json_response(ctx.shapes.reaction(existing), 200)
    reaction = Reaction(9_000_000 + ctx.state.next_id(), user, ctx.body["content"])
    comment.reactions.append(reaction)
    return json_response(ctx.shapes.reaction(reaction), 201)


# -- reviews -------------------------------------------------------------------------------------
def _sentence(messages: list[str]) -> str:
    """Rails' ``to_sentence``, as GitHub joins several review errors into one."""
    if len(messages) <= 2:
        return " and ".join(messages)
    return ", ".join(messages[:-1]) + ", and " + messages[-1]


def _place(raw: dict[str, Any], files: dict[str, FileDiff]) -> tuple[list[str], dict[str, Any]]:
    """Check one inline comment against the diff; (errors, resolved placement)."""
    diff = files.get(raw["path"])
    if diff is None:
        return ["Path could not be resolved"], {}
    side = raw.get("side") or "RIGHT"
    if "position" in raw and "line" not in raw:
        position = raw["position"]
        if not 1 <= position <= len(diff.lines) or diff.lines[position - 1].kind == "@":
            return ["Position could not be resolved"], {}
        found = diff.lines[position - 1]
        side = "LEFT" if found.kind == "-" else "RIGHT"
        line = found.old if side == "LEFT" else found.new
        return [], {"side": side, "line": line, "start_line": None, "start_side": None, "position": position}
    line = raw.get("line")
    if line is None:
        return ["Pull request review thread line must be part of the diff"], {}
    errors = []
    if line not in diff.commentable(side):
        errors.append("Pull request review thread line must be part of the diff")
    start_line, start_side = raw.get("start_line"), raw.get("start_side")
    if start_line is not None:
        start_side = start_side or side
        if start_line >= line and start_side == side:
            errors.append("Pull request review thread start line must precede the end line.")
        elif start_line not in diff.commentable(start_side):
            errors.append("Pull request review thread start line must be part of the diff")
        elif diff.hunk_of(start_side, start_line) != diff.hunk_of(side, line):
            errors.append("Pull request review thread start line must be part of the same hunk as the line.")
    if errors:
        return errors, {}
    return [], {
        "side": side,
        "line": line,
        "start_line": start_line,
        "start_side": start_side,
        "position": diff.position_of(side, line),
    }


@handles("pulls/create-review")
def create_review(ctx: Ctx) -> Response:
    repo, pull = pull_of(ctx)
    body: dict[str, Any] = ctx.body or {}
    event = body.get("event")
    text = body.get("body") or ""
    commit_id = body.get("commit_id") or pull.head_sha
    if commit_id not in repo.store.ancestors(pull.head_sha):
        raise unprocessable("Commit id is not part of the pull request")
    if event in ("COMMENT", "REQUEST_CHANGES") and not text.strip():
        raise unprocessable(
            f"Body is required for {event} reviews"
            if event == "REQUEST_CHANGES"
            else "Body can't be blank for a COMMENT review"
        )
    _too_long("PullRequestReview", text)
    for raw in body.get("comments") or []:
        _too_long("PullRequestReviewComment", raw.get("body"))
    user = author(ctx)
    if event is None and any(
        r.user is user and r.state == "PENDING" for r in ctx.state.reviews_on(repo, pull.number)
    ):
        raise unprocessable("User can only have one pending review per pull request")
    files = {f.filename: f for f in pull.files(commit_id)}
    errors: list[str] = []
    placed = []
    for raw in body.get("comments") or []:
        problems, placement = _place(raw, files)
        errors += [p for p in problems if p not in errors]
        placed.append((raw, placement))
    if errors:
        raise unprocessable(_sentence(errors))
    review = Review(
        8_000_000 + ctx.state.next_id(),
        repo,
        pull.number,
        user,
        text,
        _REVIEW_STATES.get(event or "", "PENDING"),
        commit_id,
        utcnow() if event else None,
    )
    for raw, placement in placed:
        diff = files[raw["path"]]
        position = placement["position"]
        review.comments.append(
            ReviewComment(
                8_500_000 + ctx.state.next_id(),
                review.id,
                repo,
                pull.number,
                user,
                raw["body"],
                raw["path"],
                commit_id,
                placement["side"],
                placement["line"],
                placement["start_line"],
                placement["start_side"],
                position,
                diff.diff_hunk(position) if position else "",
            )
        )
    ctx.state.reviews[review.id] = review
    return json_response(ctx.shapes.review(review))


@handles("pulls/list-reviews")
def list_reviews(ctx: Ctx) -> Response:
    repo, pull = pull_of(ctx)
    reviews = sorted(ctx.state.reviews_on(repo, pull.number), key=lambda r: r.id)
    return paginate(ctx, [ctx.shapes.review(r) for r in reviews])


@handles("pulls/list-review-comments")
def list_review_comments(ctx: Ctx) -> Response:
    repo, pull = pull_of(ctx)
    comments = [
        c
        for r in sorted(ctx.state.reviews_on(repo, pull.number), key=lambda r: r.id)
        for c in r.comments
        if r.state != "PENDING"
    ]
    if ctx.params.get("direction") == "desc":
        comments.reverse()
    return paginate(ctx, [ctx.shapes.review_comment(c) for c in comments])


@handles("pulls/list-comments-for-review")
def list_comments_for_review(ctx: Ctx) -> Response:
    repo, pull = pull_of(ctx)
    review = ctx.state.reviews.get(ctx.int_param("review_id"))
    if review is None or review.repo is not repo or review.number != pull.number:
        raise not_found()
    return paginate(ctx, [ctx.shapes.review_comment(c) for c in review.comments])
