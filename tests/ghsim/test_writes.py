"""Writing to a PR: issue comments, reactions, reviews with inline comments, check runs; all recorded."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import github
import pytest

from ghsim import Simulator
from tests.ghsim.conftest import World

SHORT = "tests/e2e/test_short.py"


def pull(gh: github.Github, world: World) -> Any:
    return gh.get_repo("rocm-org/miles").get_pull(world.pull.number)


def test_issue_comments_are_created_listed_edited_and_reacted_to(
    sim: Simulator, world: World, gh: github.Github
) -> None:
    pr = pull(gh, world)
    human = sim.state.add_comment(world.repo, world.pull.number, "/run-amd all", author="maintainer")
    created = pr.create_issue_comment("<!-- rocmbot:summary -->\nfirst")
    assert created.user.login == "rocmbot[bot]" and created.user.type == "Bot"
    created.edit("<!-- rocmbot:summary -->\nsecond")
    listed = list(pr.get_issue_comments())
    assert [c.id for c in listed] == [human.id, created.id]
    assert listed[1].body.endswith("second")
    reacted = gh.get_repo("rocm-org/miles").get_issue(world.pull.number).get_comment(human.id)
    reacted.create_reaction("eyes")
    reacted.create_reaction("eyes")
    assert [r.content for r in sim.state.issue_comments[human.id].reactions] == ["eyes"]
    writes = [(c.method, c.path, c.status) for c in sim.state.writes]
    base = "/repos/rocm-org/miles/issues"
    assert writes[-4:] == [
        ("POST", f"{base}/{world.pull.number}/comments", 201),
        ("PATCH", f"{base}/comments/{created.id}", 200),
        ("POST", f"{base}/comments/{human.id}/reactions", 201),
        ("POST", f"{base}/comments/{human.id}/reactions", 200),
    ]
    assert sim.state.writes[-3].body == {"body": "<!-- rocmbot:summary -->\nsecond"}


def _too_long(raised: pytest.ExceptionInfo[github.GithubException], resource: str) -> None:
    assert raised.value.status == 422
    (error,) = raised.value.data["errors"]
    assert (error["resource"], error["field"]) == (resource, "body")
    assert error["message"] == "body is too long (maximum is 65536 characters)"


def test_a_comment_body_over_65536_characters_is_refused(
    sim: Simulator, world: World, gh: github.Github
) -> None:
    """As GitHub does: an issue comment, its edit, a review's body and an inline comment's."""
    pr = pull(gh, world)
    made = pr.create_issue_comment("x" * 65536)  # at the limit: taken
    with pytest.raises(github.GithubException) as raised:
        pr.create_issue_comment("x" * 65537)
    _too_long(raised, "IssueComment")
    with pytest.raises(github.GithubException) as raised:
        made.edit("y" * 65537)
    _too_long(raised, "IssueComment")
    assert sim.state.issue_comments[made.id].body == "x" * 65536  # the edit changed nothing
    commit = gh.get_repo("rocm-org/miles").get_commit(world.pull.head_sha)
    with pytest.raises(github.GithubException) as raised:
        pr.create_review(commit=commit, body="x" * 65537, event="COMMENT")
    _too_long(raised, "PullRequestReview")
    with pytest.raises(github.GithubException) as raised:
        pr.create_review(commit=commit, body="one inline comment too long", event="COMMENT",
                         comments=[{"path": SHORT, "line": 20, "body": "x" * 65537}])
    _too_long(raised, "PullRequestReviewComment")
    assert sim.state.reviews_on(world.repo, world.pull.number) == []
    pr.create_review(commit=commit, body="at the limit", event="COMMENT",
                     comments=[{"path": SHORT, "line": 20, "body": "x" * 65536}])
    assert [len(r.comments) for r in sim.state.reviews_on(world.repo, world.pull.number)] == [1]
    assert len(sim.state.validation_failures) == 4


def test_a_review_with_inline_comments_on_diff_lines(sim: Simulator, world: World, gh: github.Github) -> None:
    pr = pull(gh, world)
    review = pr.create_review(
        commit=gh.get_repo("rocm-org/miles").get_commit(world.pull.head_sha),
        body="rocmbot found 2 problems",
        event="COMMENT",
        comments=[
            {"path": SHORT, "line": 20, "side": "RIGHT", "body": "TP does not divide"},
            {"path": SHORT, "line": 18, "body": "context lines in a hunk are fine too"},
            {"path": SHORT, "start_line": 19, "line": 21, "body": "a range in one hunk"},
            {"path": SHORT, "line": 20, "side": "LEFT", "body": "the removed line"},
            {"path": "tests/e2e/test_new.py", "position": 1, "body": "by position"},
        ],
    )
    assert review.state == "COMMENTED"
    comments = list(pr.get_review_comments())
    assert [(c.path, c.line) for c in comments] == [
        (SHORT, 20),
        (SHORT, 18),
        (SHORT, 21),
        (SHORT, 20),
        ("tests/e2e/test_new.py", 1),
    ]
    assert comments[0].commit_id == world.pull.head_sha
    assert comments[0].diff_hunk.startswith("@@ -17,7 +17,7 @@") and comments[0].diff_hunk.endswith(
        "+line twenty"
    )
    assert [r.id for r in pr.get_reviews()] == [review.id]
    assert sim.state.validation_failures == []


@pytest.mark.parametrize(
    ("comment", "error"),
    [
        (
            {"path": SHORT, "line": 2, "body": "outside every hunk"},
            "Pull request review thread line must be part of the diff",
        ),
        (
            {"path": "README.md", "line": 1, "body": "a file the PR does not touch"},
            "Path could not be resolved",
        ),
        (
            {"path": SHORT, "start_line": 21, "line": 19, "body": "backwards"},
            "Pull request review thread start line must precede the end line.",
        ),
        (
            {"path": SHORT, "line": 40, "body": "past the end of the hunk"},
            "Pull request review thread line must be part of the diff",
        ),
    ],
)
def test_inline_comments_off_the_diff_are_refused_like_github(
    sim: Simulator, world: World, gh: github.Github, comment: dict[str, Any], error: str
) -> None:
    with pytest.raises(github.GithubException) as raised:
        pull(gh, world).create_review(body="b", event="COMMENT", comments=[comment])
    assert raised.value.status == 422
    assert raised.value.data["errors"] == [error]
    assert sim.state.reviews == {}
    assert sim.state.validation_failures[-1].operation == "pulls/create-review"


def test_a_comment_review_needs_a_body(sim: Simulator, world: World, gh: github.Github) -> None:
    with pytest.raises(github.GithubException) as raised:
        pull(gh, world).create_review(event="COMMENT", comments=[{"path": SHORT, "line": 20, "body": "x"}])
    assert raised.value.status == 422
    assert pull(gh, world).create_review(event="APPROVE").state == "APPROVED"


def test_check_runs_are_created_updated_and_listed_for_a_ref(
    sim: Simulator, world: World, gh: github.Github
) -> None:
    repo = gh.get_repo("rocm-org/miles")
    annotation: dict[str, Any] = {
        "path": SHORT,
        "start_line": 20,
        "end_line": 20,
        "annotation_level": "failure",
        "message": "m",
    }
    run = repo.create_check_run(
        "rocmbot / analysis",
        world.pull.head_sha,
        status="in_progress",
        output={"title": "Analysing", "summary": "…", "annotations": [annotation] * 50},
    )
    run.edit(
        conclusion="failure",
        output={
            "title": "1 error",
            "summary": "TP=3 does not divide 4 GPUs",
            "annotations": [annotation] * 20,
        },
    )
    fetched = repo.get_check_run(run.id)
    assert (fetched.status, fetched.conclusion, fetched.output.title) == ("completed", "failure", "1 error")
    assert fetched.output.annotations_count == 70
    assert len(list(fetched.get_annotations())) == 70
    assert fetched.pull_requests[0].number == world.pull.number
    listed = repo.get_commit(world.pull.head_sha).get_check_runs(check_name="rocmbot / analysis")
    assert [r.id for r in listed] == [run.id]
    assert listed.totalCount == 1


def test_more_than_50_annotations_in_one_request_is_refused(
    sim: Simulator, world: World, gh: github.Github
) -> None:
    annotation: dict[str, Any] = {
        "path": SHORT,
        "start_line": 1,
        "end_line": 1,
        "annotation_level": "notice",
        "message": "m",
    }
    with pytest.raises(github.GithubException) as raised:
        gh.get_repo("rocm-org/miles").create_check_run(
            "rocmbot / analysis",
            world.pull.head_sha,
            output={"title": "t", "summary": "s", "annotations": [annotation] * 51},
        )
    assert raised.value.status == 422
    assert "50" in raised.value.data["message"]
    assert sim.state.check_runs == {}


def test_a_completed_check_run_needs_a_conclusion(sim: Simulator, world: World, gh: github.Github) -> None:
    with pytest.raises(github.GithubException) as raised:
        gh.get_repo("rocm-org/miles").create_check_run("x", world.pull.head_sha, status="completed")
    assert raised.value.status == 422


def test_labels_are_added_listed_shown_on_the_pull_and_removed(
    sim: Simulator, world: World, gh: github.Github
) -> None:
    issue = gh.get_repo("rocm-org/miles").get_issue(world.pull.number)
    issue.add_to_labels("run-ci")
    issue.add_to_labels("run-ci-extra", "run-ci")  # one it has: not twice
    assert [x.name for x in pull(gh, world).labels] == ["run-ci", "run-ci-extra"]
    assert [x.name for x in issue.get_labels()] == ["run-ci", "run-ci-extra"]
    shown = pull(gh, world).labels[1]
    assert (shown.color, shown.description) == ("ededed", None)
    assert shown.url == f"{sim.url}/repos/rocm-org/miles/labels/run-ci-extra"
    assert [x.name for x in world.repo.labels.values()] == ["run-ci", "run-ci-extra"]
    issue.remove_from_labels("run-ci")
    assert [x.name for x in sim.state.labels_on(world.repo, world.pull.number)] == ["run-ci-extra"]
    with pytest.raises(github.GithubException) as missing:
        issue.remove_from_labels("run-ci")
    assert (missing.value.status, missing.value.data["message"]) == (404, "Label does not exist")
    assert world.repo.labels["run-ci"].name == "run-ci"  # the repository keeps its label
    base = f"/repos/rocm-org/miles/issues/{world.pull.number}/labels"
    writes = [(c.method, c.path, c.status) for c in sim.state.writes if c.path.startswith(base)]
    assert writes == [("POST", base, 200), ("POST", base, 200), ("DELETE", f"{base}/run-ci", 200),
                      ("DELETE", f"{base}/run-ci", 404)]
    assert sim.state.find_calls("POST", base)[0].body == ["run-ci"]  # a bare array, as the prose allows


def test_labels_named_as_objects_are_added_and_suggestions_are_not(
    sim: Simulator, world: World, gh: github.Github
) -> None:
    base = f"/repos/rocm-org/miles/issues/{world.pull.number}/labels"
    requester = gh.requester
    _, added = requester.requestJsonAndCheck(
        "POST", base, input={"labels": [{"name": "run-ci"}, {"name": "perf", "suggest": True}]})
    assert [x["name"] for x in added] == ["run-ci"]
    with pytest.raises(github.GithubException) as empty:
        requester.requestJsonAndCheck("POST", base, input={"labels": []})
    assert empty.value.status == 422 and sim.state.validation_failures  # minItems: 1
    sim.state.reset_calls()
    with pytest.raises(github.GithubException) as absent:
        requester.requestJsonAndCheck("POST", base, input={})
    assert absent.value.status == 422 and "labels" in absent.value.data["message"]
    with pytest.raises(github.GithubException) as nowhere:
        requester.requestJsonAndCheck("POST", "/repos/rocm-org/miles/issues/999/labels",
                                      input={"labels": ["x"]})
    assert nowhere.value.status == 404


def test_issues_are_created_listed_newest_updated_first_and_edited(
    sim: Simulator, world: World, gh: github.Github
) -> None:
    repo = gh.get_repo("rocm-org/miles")
    human = sim.state.open_issue(world.repo, "A bug", body="it breaks", author="maintainer")
    made = repo.create_issue("Parked ROCm tests", body="<!-- marker -->\nfirst")
    assert made.user.login == "rocmbot[bot]" and made.number not in (human.number, world.pull.number)
    raw = made.raw_data
    assert raw["performed_via_github_app"]["id"] == sim.state.app.id
    assert sim.state.issue(world.repo, human.number) is not None
    human.updated_at = made.updated_at + timedelta(seconds=1)  # the person's issue was touched last
    listed = list(repo.get_issues(state="all", sort="updated", direction="desc"))
    assert [i.number for i in listed if i.pull_request is None] == [human.number, made.number]
    assert any(i.number == world.pull.number for i in listed)  # GitHub lists PRs among issues
    made.edit(body="<!-- marker -->\nsecond")
    assert sim.state.issue(world.repo, made.number).body.endswith("second")  # type: ignore[union-attr]
    made.edit(state="closed")
    assert [i.number for i in repo.get_issues(state="open")] == [human.number, world.pull.number]
    with pytest.raises(github.GithubException) as raised:
        repo.create_issue("too long", body="x" * 65537)
    _too_long(raised, "Issue")
    with pytest.raises(github.GithubException) as missing:
        repo.get_issue(9999).edit(body="x")
    assert missing.value.status == 404
    assert [f.operation for f in sim.state.validation_failures] == ["issues/create"]  # the long body
