"""The authorization matrix, end to end: who comments x PR author trust x fork x approval
present x push after the approval, each combination a PR of its own in one simulated repository.

On every PR the commands come in order of rising permission, and after each the test checks
the reply, the reaction and whether a run exists for the current head, against the rule:
a run may be started by trusted people (write and up, or listed), runs an untrusted author's
code only once a maintainer approved that head, and an approval does not survive a push.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest

from ghsim.state import PullRequest
from tests.e2e.conftest import TEMPLATE, World, make_world
from tests.e2e.test_dispatch import GOOD, MOE, WORKFLOW, _comment, _reactions, _replies

CONFIG = """\
dispatch:
  budget_gpu_minutes_per_day: 1000000
  trusted_users: [helper]
  maintainer_teams: [octo/leads]
"""
# (login, permission on the repository, may run, may approve); `helper` is trusted by the
# config's list, `teamlead` a maintainer through a team, both with read permission only.
PEOPLE = {
    "outsider": (None, False, False),
    "reader": ("read", False, False),
    "triager": ("triage", False, False),
    "dev": ("write", True, False),
    "helper": ("read", True, False),
    "lead": ("maintain", True, True),
    "teamlead": ("read", True, True),
    "owner": ("admin", True, True),
}
AUTHORS = {"dev": True, "stranger": False}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("authz")
    for made in make_world(folder, {WORKFLOW: TEMPLATE, ".github/rocmbot.yml": CONFIG}):
        for login, (permission, _, _) in PEOPLE.items():
            if permission is not None and login not in ("helper", "teamlead"):
                made.sim.state.add_collaborator(made.repo, login, permission)
        made.sim.state.add_collaborator(made.repo, "helper", "read")
        made.sim.state.add_collaborator(made.repo, "teamlead", "read")
        made.sim.state.add_team_member("octo", "leads", "teamlead")
        yield made


def _head_runs(world: World, pr: PullRequest) -> list[Any]:
    return [r for r in world.sim.state.runs.values()
            if r.inputs.get("head_sha") == pr.head_sha and r.inputs.get("pr_number") == str(pr.number)
            and r.conclusion != "cancelled"]


CASES = list(itertools.product(AUTHORS, (False, True), (False, True), (False, True)))


@pytest.mark.parametrize(("author", "fork", "approved", "pushed"), CASES)
def test_who_may_start_a_rocm_run(
    world: World, author: str, fork: bool, approved: bool, pushed: bool
) -> None:
    index = CASES.index((author, fork, approved, pushed))
    # A file of its own gives each PR its own head commit (check runs belong to a commit).
    files: dict[str, str | None] = {MOE: GOOD, f"docs/case-{index}.md": f"case {index}\n"}
    pr = world.open_pr(files, author=author, fork=fork, branch=f"case-{index}")
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    trusted_author = AUTHORS[author]
    assert len(_head_runs(world, pr)) == (1 if trusted_author else 0)  # automatic for the trusted

    if approved:
        pending = world.checks(pr.head_sha, "rocmbot / rocm")
        if trusted_author:  # nothing waits: the approval is a no-op
            _comment(world, pr, "/approve-amd", "lead")
            assert "there is nothing waiting for approval on this head" in _replies(world, pr)[-1]
        else:
            (check,) = pending
            assert check.conclusion == "action_required"
            world.deliver("check_run", world.sim.payloads.check_run(
                check, "requested_action", identifier="approve-rocm", sender="lead"))
            world.settle()
        assert len(_head_runs(world, pr)) == 1

    if pushed:
        before = pr.head_sha
        world.sim.state.push(pr, {MOE: GOOD.replace("cp_size=1", "cp_size=1 ")})
        world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=before))
        world.settle()
        assert not _head_runs(world, pr) or trusted_author  # the approval was for the old head

    running = trusted_author or (approved and not pushed)
    assert len(_head_runs(world, pr)) == (1 if running else 0)

    # The maintainer who speaks first varies with the case, so each kind starts a run somewhere.
    maintainers = ["lead", "teamlead", "owner"]
    first = maintainers[index % 3]
    order = ["outsider", "reader", "triager", "dev", "helper", first,
             *[m for m in maintainers if m != first]]
    for login in order:
        permission, may_run, may_approve = PEOPLE[login]
        answered = len(_replies(world, pr))
        comment = _comment(world, pr, "/run-amd", login)
        replies, reactions = _replies(world, pr), _reactions(world, comment)
        reply = replies[-1] if len(replies) > answered else None  # a success posts no comment
        if not may_run:
            assert reply is not None and reply.startswith(
                f"Not dispatched: @{login} has `{permission or 'read'}` permission; ROCm runs may be "
                "started by people with write, maintain or admin permission"), reply
            assert "confused" in reactions
        elif running:
            assert reply is None and "+1" in reactions, reply  # already running
        elif not may_approve:  # one reply, edited for each commenter it answers
            assert any("Waiting for a maintainer's approval" in r for r in replies), replies
        else:
            assert reply is None and "rocket" in reactions, reply
            running = True
        assert len(_head_runs(world, pr)) == (1 if running else 0), (login, reply)
    assert running
    if not trusted_author and not (approved and not pushed):
        assert world.sim.state.find_calls("GET", f"/repos/*/collaborators/{first}/permission")


def _calls_for(world: World, pr: PullRequest, body: str, login: str) -> tuple[Any, list[Any]]:
    """Comment ``body`` as ``login``; the comment and the GitHub requests its handling made."""
    start = len(world.sim.state.calls)
    comment = _comment(world, pr, body, login)
    return comment, world.sim.state.calls[start:]


def _opened_for(world: World, name: str) -> PullRequest:
    pr = world.open_pr({MOE: GOOD, f"docs/{name}.md": f"{name}\n"}, branch=name)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    return pr


def _delivery_of(world: World, comment: Any) -> Any:
    """The stored delivery of a comment's `issue_comment`."""
    (sent,) = [d for d in world.sim.state.deliveries
               if d.event == "issue_comment" and json.loads(d.payload)["comment"]["id"] == comment.id]
    record = world.store.get(sent.guid)
    assert record is not None
    return record


def test_an_outsiders_run_amd_all_is_refused_before_the_head_is_read(world: World) -> None:
    """The commenter's permission is asked first: an outsider's `/run-amd all` lists no file of
    the head and audits nothing (7 requests, where it took 12)."""
    pr = _opened_for(world, "outsider-all")
    comment, calls = _calls_for(world, pr, "/run-amd all", "outsider")
    assert _replies(world, pr)[-1].startswith("Not dispatched: @outsider has `read` permission")
    assert "confused" in _reactions(world, comment)
    asked = next(i for i, c in enumerate(calls) if c.path.endswith("/collaborators/outsider/permission"))
    read = [c.path for c in calls[asked:] if c.path == "/graphql" or "/git/" in c.path
            or "/contents/" in c.path or c.path.endswith("/files")]
    assert read == []
    # the policy, the two reactions, the permission and the team, the PR's head, the reply
    assert len(calls) <= 7, [(c.method, c.path) for c in calls]


PATHS = [f"t/{n:04d}.py" for n in range(4300)]


@pytest.mark.parametrize("login", ["outsider", "dev"])
def test_a_run_amd_naming_4300_paths_gets_a_reply_github_takes(world: World, login: str) -> None:
    """A command naming thousands of paths: the outsider is refused for who they are; a trusted
    commenter's refusal names the first paths and counts the rest. Each reply stays under
    60,000 characters (GitHub refuses over 65,536) and the delivery is done, not dead."""
    body = "/run-amd " + " ".join(PATHS)
    assert len(body) <= 65_536  # a comment GitHub takes
    pr = _opened_for(world, f"many-{login}")
    runs = len(world.sim.state.runs)
    comment = _comment(world, pr, body, login)
    reply = _replies(world, pr)[-1]
    assert len(reply) < 60_000
    if login == "outsider":
        assert reply.startswith("Not dispatched: @outsider has `read` permission")
        assert "t/0000.py" not in reply
    else:
        assert reply.startswith(
            "Not dispatched: nothing was dispatched: `t/0000.py` is not a file at the head; ")
        assert reply.count("is not a file at the head") == 20 and "…and 4280 more." in reply
    assert _delivery_of(world, comment).status == "done"
    assert len(world.sim.state.runs) == runs
