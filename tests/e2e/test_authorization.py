"""The authorization matrix, end to end: who comments x PR author trust x fork x approval
present x push after the approval, each combination a PR of its own in one simulated repository.

On every PR the commands come in order of rising permission, and after each the test checks
the reply, the reaction and whether a run exists for the current head, against the rule:
a run may be started by trusted people (write and up, or listed), runs an untrusted author's
code only once a maintainer approved that head, and an approval does not survive a push.
"""

from __future__ import annotations

import itertools
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
