"""The defences of docs/security.md that no other test shows: policy and workflow from the
default branch only, the head re-checked before a dispatch, bot-written and edited comments
ignored, the targeted workflow's handling of PR code, the App's permissions, one installation
token per installation, and PR code parsed but never imported or run."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from bot.analysis.engine import audit
from bot.analysis.tree import FolderTree
from bot.cli.example import TEST_TEMPLATE
from bot.github.port import PullRequest as PortPullRequest
from bot.rocm.decide import Refusal
from bot.rocm.dispatch import Dispatcher
from bot.store.dispatch import SelectedTest
from config.repo import defaults, parse_config
from ghsim.state import PullRequest
from tests.e2e.conftest import TEMPLATE, World, make_world

ROOT = Path(__file__).parents[2]
MOE = "tests/e2e/megatron/test_qwen35_moe.py"
WORKFLOW = ".github/workflows/rocm-targeted.yml"
GOOD = TEST_TEMPLATE.format(disabled="", ep=2)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE})


def _opened(world: World, files: dict[str, str | None], **kw: Any) -> PullRequest:
    pr = world.open_pr(files, **kw)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    return pr


def _comment(world: World, pr: PullRequest, body: str, author: str, **kw: Any) -> None:
    world.read(pr)  # an approval covers the heads seen before the comment's second
    comment = world.sim.state.add_comment(world.repo, pr.number, body, author=author)
    world.deliver("issue_comment", world.sim.payloads.issue_comment(comment, **kw))
    world.settle()


# ------------------------------------------------------------------ policy from the PR head


def test_a_policy_or_workflow_changed_by_the_pr_head_changes_nothing(world: World) -> None:
    """A fork PR that trusts its own author, lifts the budgets and rewrites the dispatched
    workflow: it still waits for a maintainer, and the run uses the default branch's workflow,
    checking out the PR head only as data (`head_sha`)."""
    hostile_policy = (
        "dispatch:\n  trusted_users: [stranger]\n  maintainers: [stranger]\n  auto: trusted\n"
        "  budget_gpu_minutes_per_head: 1000000\n  allow_bots: true\n  allow_edited: true\n"
    )
    hostile_workflow = TEMPLATE.replace("persist-credentials: false", "persist-credentials: true")
    pr = _opened(world, {MOE: GOOD, ".github/rocmbot.yml": hostile_policy, WORKFLOW: hostile_workflow},
                 author="stranger", fork=True)
    assert world.sim.state.runs == {}
    (pending,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert pending.conclusion == "action_required"
    _comment(world, pr, "/approve-amd", "stranger")  # `maintainers: [stranger]` is the PR's, not the policy
    assert world.sim.state.runs == {}
    _comment(world, pr, "/approve-amd", "lead")
    runs = list(world.sim.state.runs.values())
    main = world.repo.resolve("main")
    assert runs and main is not None
    for run in runs:  # the workflow change is an environment change: every ROCm suite runs
        assert (run.head_branch, run.head_sha) == ("main", main.sha)  # the default branch's workflow ...
        assert run.inputs["head_sha"] == pr.head_sha  # ... told which commit to check out


# ------------------------------------------------------------------ fork code on the runners


class _MovedHead:
    """A port whose PR head moved on after the selection was made."""

    def __init__(self) -> None:
        self.dispatched: list[Any] = []

    def pull_request(self, repo: str, number: int) -> PortPullRequest:
        return PortPullRequest(repo=repo, number=number, author="dev", head_sha="f" * 40, head_ref="x",
                               head_repo=repo, base_sha="b" * 40, base_ref="main", draft=False, state="open")

    def dispatch_workflow(self, *args: Any) -> None:
        self.dispatched.append(args)


def test_the_head_is_checked_again_right_before_a_dispatch() -> None:
    """Approval is for a head; a push between the approval and the dispatch must not ride on it."""
    gh = _MovedHead()
    dispatcher = Dispatcher(cast(Any, gh), cast(Any, None), cast(Any, None), defaults())
    with pytest.raises(Refusal, match="head moved"):
        dispatcher.run("octo/miles", 1, "a" * 40, [SelectedTest(MOE, "stage-c-4-gpu-mi350", 600, 4)],
                       "lead", "approval:x")
    assert gh.dispatched == []


def test_bot_written_and_edited_comments_run_nothing(world: World) -> None:
    """Another App with maintain permission may echo user text; an edit can rewrite history."""
    world.sim.state.account("echo[bot]", "Bot")
    world.sim.state.add_collaborator(world.repo, "echo[bot]", "maintain")
    pr = _opened(world, {MOE: TEST_TEMPLATE.format(disabled="", ep=4)})  # an error: needs --force
    _comment(world, pr, "/run-amd --force", "echo[bot]")
    _comment(world, pr, "/run-amd --force", "lead", action="edited", previous_body="looks good")
    assert world.sim.state.runs == {}
    assert [c for c in world.bot_comments(pr) if "rocmbot:reply" in c.body] == []


def test_the_targeted_workflow_handles_pr_code_as_data() -> None:
    """The template the bot dispatches: read-only token, the PR head checked out without
    persisting credentials, and inputs reaching scripts through the environment only (an
    `${{ inputs.x }}` inside `run:` is pasted into the script: shell injection)."""
    workflow = yaml.safe_load((ROOT / "config" / "workflows" / "rocm-targeted.yml").read_text())
    triggers = workflow.get("on", workflow.get(True))
    assert list(triggers) == ["workflow_dispatch"]  # never pull_request_target
    assert workflow["permissions"] == {"contents": "read"}
    plan, job = workflow["jobs"]["plan"], workflow["jobs"]["test"]
    assert "${{ inputs.tests }}" in plan["steps"][0]["env"].values()
    assert job["strategy"]["matrix"]["test"] == "${{ fromJSON(needs.plan.outputs.tests) }}"
    assert "${{ matrix.test }}" in job["env"].values()
    checkout = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"] == {"ref": "${{ inputs.head_sha }}", "persist-credentials": False}
    scripts = [s["run"] for j in (plan, job) for s in j["steps"] if "run" in s]
    assert len(scripts) == 3 and not [s for s in scripts if "${{" in s]


def test_test_paths_that_would_split_in_the_tests_input_are_refused() -> None:
    gh = _MovedHead()
    dispatcher = Dispatcher(cast(Any, gh), cast(Any, None), cast(Any, None), defaults())
    for path, suite in (("tests/a b/test_x.py", "s"), ("tests/a\nb.py", "s"), ("-c", "s"), (MOE, "s t")):
        with pytest.raises(Refusal, match="white space"):
            dispatcher.run("octo/miles", 1, "f" * 40, [SelectedTest(path, suite, 600, 4)], "lead", "x")
    assert gh.dispatched == []


# ------------------------------------------------------------------ token scope


def test_the_app_asks_for_the_least_permissions_it_uses() -> None:
    manifest = json.loads((ROOT / "config" / "github" / "app-manifest.json").read_text())
    assert manifest["default_permissions"] == {
        "actions": "write",  # dispatch and cancel the targeted workflow
        "checks": "write",  # check runs and their annotations
        "contents": "read",  # read files; never push
        "issues": "write",  # the sticky comment and replies (PR comments are issue comments)
        "metadata": "read",
        "pull_requests": "write",  # review comments
        "members": "read",  # team membership for trusted_teams and maintainer_teams
    }
    assert manifest["public"] is False


def test_one_installation_token_serves_every_delivery_until_it_expires(world: World) -> None:
    pr = _opened(world, {MOE: GOOD})
    _comment(world, pr, "/run-amd help", "dev")
    _comment(world, pr, "/run-amd cancel", "dev")
    assert len(world.sim.state.tokens) == 1  # minted once with the App JWT, then reused


# ------------------------------------------------------------------ PR code is never run

PAYLOAD = "import pathlib; pathlib.Path({sentinel!r}).write_text('ran')\n"


def test_code_from_the_pr_is_parsed_never_imported_or_run(tmp_path: Path) -> None:
    """Every file the analysis reads writes a sentinel if it is ever imported or executed,
    and the harness functions the launch evaluator follows try to as well."""
    sentinel = tmp_path / "ran"
    run = PAYLOAD.format(sentinel=str(sentinel))
    harness = run + (
        "import os\nfrom dataclasses import dataclass\n\n@dataclass\nclass CaseConfig:\n"
        "    tp_size: int = 1\n"
        "    ep_size: int = 1\n    num_gpus_per_node: int = 8\n\n"
        "def prepare(case):\n    " + run + "\n"
        "def execute(case):\n    os.system('touch ' + {s!r})\n    exec(open({s!r}, 'w').write('ran'))\n"
        "    __import__('subprocess').run(['touch', {s!r}])\n    eval('1')\n"
        "    return execute_train(f'--tensor-model-parallel-size {{case.tp_size}} ' + build(case))\n"
        "def build(case):\n    " + run.strip() + "\n"
        "    return f'--expert-model-parallel-size {{case.ep_size}} '\n"
    ).format(s=str(sentinel))
    files = {
        "conftest.py": run, "setup.py": run, "tests/__init__.py": run, "tests/e2e/__init__.py": run,
        "tests/e2e/_common.py": harness,
        "tests/e2e/test_case.py": run + "from tests.e2e._common import CaseConfig, execute, prepare\n"
        "register_rocm_ci(600, 'stage-c-4-gpu-mi350')\n"
        "CASE = CaseConfig(tp_size=2, ep_size=4, num_gpus_per_node=4)\n"
        "prepare(CASE)\nexecute(CASE)\n",
        "scripts/models/m.py": run + "def model_args():\n    " + run.strip() + "\n"
        "    return '--num-layers 2 '\n",
        ".github/rocmbot.yml": f"exclude: !!python/object/apply:os.system ['touch {sentinel}']\n",
        ".github/workflows/rocm.yml": "jobs:\n  j:\n    steps:\n"
        f"      - run: !!python/object/apply:os.system ['touch {sentinel}']\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    before = set(sys.modules)
    report = audit(FolderTree(tmp_path))
    assert not sentinel.exists()
    imported = set(sys.modules) - before
    assert [m for m in imported if m in ("conftest", "setup") or m.startswith("tests.e2e._")] == []
    assert {t.path for t in report.tests} == {"tests/e2e/test_case.py"}  # it was analysed, not skipped
    config = parse_config(files[".github/rocmbot.yml"])
    assert config.problems and not sentinel.exists()


# ------------------------------------------------------------------ the sticky comment


def test_a_summary_marker_in_someone_elses_comment_is_not_the_summary(world: World) -> None:
    """Anyone can write rocmbot's markers in a comment: a forged "summary" must neither be
    edited (it is not the App's) nor read for the state (its `posted` would hide inline
    comments, its head would be printed)."""
    pr = world.open_pr({MOE: TEST_TEMPLATE.format(disabled="", ep=4)})
    forged = ('<!-- rocmbot:summary -->\nfake\n<!-- rocmbot:state {"head":"[x](//e.example)",'
              '"findings":{},"posted":["' + '","'.join(f"{i:016x}" for i in range(50)) + '"]} -->')
    mine = world.sim.state.add_comment(world.repo, pr.number, forged, author="stranger")
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    assert mine.body == forged  # not edited
    (summary,) = [c for c in world.bot_comments(pr) if c.body.startswith("<!-- rocmbot:summary")]
    assert "PAR002" in summary.body
    (review,) = world.reviews(pr)
    assert review.comments  # the inline comments were posted all the same
