"""Markdown injection end to end: hostile PR text reaches the GitHub simulator through the
real service (uvicorn, SQLite, worker, PyGithub with App credentials), and what the bot
posted there carries no mention, link, image, reference or HTML of the PR's making.

The PR disables a test with a hostile reason, and adds a test at a hostile path in a
hostile suite; then commands quote hostile text back. Every body GitHub would render (the
sticky comment, the review comments, the check runs' summaries, the replies) is rendered
with cmark-gfm and inspected (tests/security/markup.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.cli.example import TEST_TEMPLATE
from ghsim.state import PullRequest
from tests.e2e.conftest import TEMPLATE, World, make_world
from tests.security.markup import problems

MOE = "tests/e2e/megatron/test_qwen35_moe.py"
WORKFLOW = ".github/workflows/rocm-targeted.yml"
REASON = (
    "flaky ` @octocat <img src=x onerror=alert(1)> `` [x](https://e.example) ![i](https://e.example/i.png) "
    "<https://e.example> www.e.example #1 GH-2 octo/miles#3 --> <details> $x$ ```"
)
FOLDER = "tests/e2e/megatron/x `@octocat` <img src=x> [l](javascript:alert(1)) #1 www.e.example -->"
EVIL = f"{FOLDER}/test_evil.py"
SUITE = "stage-c-4-gpu-mi350 `@octocat` <img src=x> [s](https://e.example)"
# For dispatch, the same without white space: the workflow's inputs are space-separated words,
# and the dispatcher refuses a path or suite that would not reach the runner as itself.
WORD_FOLDER = "tests/e2e/megatron/x`@octocat`<img/src=x>[l](javascript:alert(1))#1-->"
WORD_EVIL = f"{WORD_FOLDER}/test_evil.py"
WORD_SUITE = "stage-c-4-gpu-mi350`@octocat`<img/src=x>[s](https://e.example)"
LOGINS = frozenset({"dev", "lead", "stranger"})


def _evil_test(ep: int, suite: str = SUITE) -> str:
    return TEST_TEMPLATE.format(disabled="", ep=ep).replace('"stage-c-4-gpu-mi350"', repr(suite))


def _bodies(world: World, pr: PullRequest) -> dict[str, str]:
    """Every markdown body the bot has made on the PR and its head commit."""
    out = {f"comment {c.id}": c.body for c in world.bot_comments(pr)}
    for review in world.reviews(pr):
        out[f"review {review.id}"] = review.body
        out.update({f"review comment {c.id}": c.body for c in review.comments})
    for check in world.sim.state.check_runs_for(world.repo, pr.head_sha):
        out[f"check {check.name} {check.id}"] = f"{check.summary or ''}\n\n{check.text or ''}"
    return out


def _assert_inert(world: World, pr: PullRequest) -> dict[str, str]:
    bodies = _bodies(world, pr)
    found = {name: problems(body, LOGINS) for name, body in bodies.items()}
    assert {name: p for name, p in found.items() if p} == {}, bodies
    return bodies


def _opened(world: World, files: dict[str, str | None], **kw: Any) -> PullRequest:
    pr = world.open_pr(files, **kw)
    world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    world.settle()
    return pr


def _comment(world: World, pr: PullRequest, body: str, author: str) -> None:
    comment = world.sim.state.add_comment(world.repo, pr.number, body, author=author)
    world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
    world.settle()


def test_a_hostile_reason_path_and_suite_reach_github_inert(tmp_path: Path) -> None:
    for world in make_world(tmp_path):
        pr = _opened(world, {
            MOE: TEST_TEMPLATE.format(disabled=f", disabled={REASON!r}", ep=2),
            EVIL: _evil_test(ep=4),  # a PAR error on a line of the diff: an inline comment
        })
        bodies = _assert_inert(world, pr)
        shown = "\n".join(bodies.values())
        assert "octocat" in shown and "onerror" in shown and "e.example" in shown  # it did get there
        assert any(name.startswith("review comment") for name in bodies)
        (review,) = world.reviews(pr)
        assert any(c.path == EVIL for c in review.comments)

        before = pr.head_sha  # fix the error: the summary lists it as resolved, with its path
        world.sim.state.push(pr, {EVIL: _evil_test(ep=2)})
        world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=before))
        world.settle()
        bodies = _assert_inert(world, pr)
        (summary,) = world.bot_comments(pr)
        resolved = summary.body.split("Resolved since")
        assert len(resolved) == 2 and "test\\_evil.py" in resolved[1]


@pytest.fixture
def dispatching(tmp_path: Path) -> Iterator[World]:
    # a workflow that runs the hostile suite for pull requests: its tests are selected
    per_pr = f"on: pull_request\njobs:\n  t:\n    steps:\n      - run: 'run_suite --suite \"{WORD_SUITE}\"'\n"
    yield from make_world(tmp_path, {WORKFLOW: TEMPLATE, ".github/workflows/pr-test-rocm.yml": per_pr})


def test_command_replies_and_run_checks_quote_hostile_text_inert(dispatching: World) -> None:
    world = dispatching
    pr = _opened(world, {WORD_EVIL: _evil_test(ep=2, suite=WORD_SUITE)})  # trusted: dispatched at once
    (run,) = world.sim.state.runs.values()
    assert (run.inputs["tests"], run.inputs["suite"]) == (WORD_EVIL, WORD_SUITE)
    _comment(world, pr, "/run-amdx " + REASON, "dev")  # not a command: quoted back
    _comment(world, pr, "/run-amd help", "stranger")  # lists the selection: path and suite
    _comment(world, pr, "/run-amd tests/`@octocat`<img/src=x>[l](//e.example).py", "dev")  # no such file
    _comment(world, pr, "/run-amd --force", "lead")  # already running: a reaction, no comment
    _comment(world, pr, "/run-amd cancel", "stranger")  # refused: names the commenter only
    bodies = _assert_inert(world, pr)
    replies = [b for name, b in bodies.items() if name.startswith("comment")]
    assert any("not a rocmbot command" in r for r in replies)
    assert any("This head's selection" in r and "test_evil.py" in r for r in replies)
    assert any("is not a file at the head" in r for r in replies)

    fork = _opened(world, {WORD_EVIL: _evil_test(ep=2, suite=WORD_SUITE) + "\n"}, author="stranger",
                   fork=True, branch="fork-branch")  # untrusted: a pending check lists the tests
    (pending,) = world.checks(fork.head_sha, "rocmbot / rocm")
    assert pending.conclusion == "action_required" and "test_evil.py" in (pending.summary or "")
    _assert_inert(world, fork)


def test_a_path_with_white_space_is_never_dispatched(dispatching: World) -> None:
    """`tests` reaches the runner as space-separated words: `a b/test_x.py` would be two."""
    world = dispatching
    pr = _opened(world, {EVIL: _evil_test(ep=2, suite="stage-c-4-gpu-mi350")}, branch="spaced")
    assert world.sim.state.runs == {}
    (refused,) = world.checks(pr.head_sha, "rocmbot / rocm")
    assert refused.conclusion == "failure" and "white space" in (refused.summary or "")
    _comment(world, pr, "/run-amd --force", "lead")
    assert world.sim.state.runs == {}
    assert any("white space" in b for b in _assert_inert(world, pr).values())


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


def test_bidi_and_control_characters_of_a_comment_are_not_quoted_back(tmp_path: Path) -> None:
    """A right-to-left override quoted back would make the reply read as something else
    (`\u202egnp.exe` shows as `exe.png`): replies carry no bidirectional or control character."""
    for world in make_world(tmp_path):
        pr = _opened(world, {"docs/note.md": "a note\n"})
        _comment(world, pr, "/run-amdx \u202egnp.exe\x07\x1b[31m", "dev")  # not a command: quoted back
        _comment(world, pr, "/run-amd tests/\u202eyp.tset\u2066x\u2069\u200f.py", "dev")  # no such file
        replies = [c.body for c in world.bot_comments(pr)
                   if "rocmbot:reply" in c.body or "rocmbot:answer" in c.body]
        assert len(replies) == 2, replies
        assert any("gnp.exe" in r and "not a rocmbot command" in r for r in replies), replies
        assert any("yp.tsetx.py" in r and "is not a file at the head" in r for r in replies), replies
        for reply in replies:
            assert not set(reply) & set(BIDI), reply
            assert not [c for c in reply if ord(c) < 32 and c not in "\n\t"], reply
            assert "\x7f" not in reply
