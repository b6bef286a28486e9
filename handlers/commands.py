"""Answer `/run-amd` and `/approve-amd` comments on pull requests."""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime

from bot.formats.escape import code
from bot.rocm.authz import who_may
from bot.rocm.commands import VALID, Command, parse
from bot.rocm.dispatch import Refusal, minutes
from bot.rocm.runs import RocmRuns
from bot.service.context import HandlerContext
from bot.service.events import Event
from bot.service.router import Router
from handlers.review import refresh_summary_runs

router = Router()
log = logging.getLogger(__name__)

HELP = """**rocmbot commands** (the first line of a PR comment):

- `/run-amd`: run the ROCm tests this PR affects (its current selection)
- `/run-amd all`: run every enabled ROCm test of the per-PR suites
- `/run-amd <test path> [...]`: run those tests
- `/run-amd cancel`: cancel this PR's ROCm runs in flight
- `/run-amd --force`: run despite error findings (maintainers)
- `/approve-amd`: approve the waiting ROCm runs of the current head (maintainers)
- `/run-amd help`: this message"""


def _reply(runs: RocmRuns, event: Event, comment_id: int, kind: str, text: str) -> None:
    """One reply per command (a comment and its text: an edit is a new command).

    The reply carries a hidden marker, so an attempt that died after GitHub made the comment
    but before the ledger recorded it (a 5xx after the write, a killed worker) finds it and
    brings it up to date instead of answering twice; a retry may have reached another outcome.
    """
    command = str((event.payload.get("comment") or {}).get("body") or "")
    digest = hashlib.sha1(command.encode(), usedforsecurity=False).hexdigest()[:12]
    marker = f"<!-- rocmbot:reply {comment_id}:{digest} -->"
    body = f"{text}\n\n{marker}"

    def create() -> dict[str, object]:
        return {"id": runs.gh.create_comment(runs.repo, runs.number, body).id, "kind": kind}

    def reconcile() -> dict[str, object] | None:
        for found in runs.gh.comments(runs.repo, runs.number):
            if runs.effects.ours(found) and marker in found.body:
                if found.body != body:
                    runs.gh.edit_comment(runs.repo, found.id, body)
                return {"id": found.id, "kind": kind, "reconciled": True}
        return None

    runs.effects.once(
        f"reply:{event.repository}:{comment_id}:{digest}",
        "comment",
        f"{event.repository}#{event.pr_number}",
        create,
        reconcile,
    )


def _answer(runs: RocmRuns, comment_id: int, text: str) -> None:
    """A refusal or a "waiting for approval": one reply per answer and head. The same answer to
    a later command on the same head edits that reply (it counts the commands) instead of
    adding a comment: five refused `/run-amd` make one reply, not five."""
    head = runs.pr.head_sha
    digest = hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:12]
    group = f"{runs.repo}#{runs.number}:{head[:12]}:{digest}"
    marker = f"<!-- rocmbot:answer {head[:12]}:{digest} -->"
    target = f"{runs.repo}#{runs.number}"

    def create() -> dict[str, object]:
        return {"id": runs.gh.create_comment(runs.repo, runs.number, f"{text}\n\n{marker}").id,
                "command": comment_id}

    def reconcile() -> dict[str, object] | None:
        for found in runs.gh.comments(runs.repo, runs.number):
            if runs.effects.ours(found) and marker in found.body:
                return {"id": found.id, "command": None, "reconciled": True}
        return None

    first = runs.effects.once(f"answer:{group}", "comment", target, create, reconcile)
    if not isinstance(first, dict) or first.get("command") == comment_id or first.get("dry_run"):
        return
    reply_id = int(first["id"])
    prefix = f"answer-edit:{group}:"
    earlier = {e.key for e in runs.effects.store.effects_starting(prefix)} - {f"{prefix}{comment_id}"}
    count = len(earlier) + 2
    body = f"{text}\n\n_The same answer to {count} commands on this head._\n\n{marker}"

    def edit() -> dict[str, object]:
        return {"id": runs.gh.edit_comment(runs.repo, reply_id, body).id}

    runs.effects.once(f"{prefix}{comment_id}", "comment_edit", target, edit)


def _react(runs: RocmRuns, comment_id: int, content: str) -> None:
    def act() -> dict[str, str]:
        runs.gh.add_reaction(runs.repo, comment_id, content)
        return {"content": content}

    runs.effects.once(
        f"reaction:{runs.repo}:{comment_id}:{content}", "reaction", f"{runs.repo}/{comment_id}", act
    )


def _help(runs: RocmRuns) -> str:
    d = runs.config.dispatch
    lines = [
        HELP,
        "",
        f"Runs may be started by {who_may(d, approve=False)}; "
        f"approvals and `--force` are for {who_may(d, approve=True)}.",
    ]
    selection = runs.selection()
    if selection is None or not selection.tests:
        lines.append("\nThis head has no selected ROCm tests.")
    else:
        lines.append(
            f"\nThis head's selection: {len(selection.tests)} tests, about {minutes(selection.gpu_minutes)}:"
        )
        lines.extend(f"- {code(t.path)} on {code(t.suite)}" for t in selection.tests)
    return "\n".join(lines)


def _head_when_written(runs: RocmRuns, event: Event) -> str:
    """The PR's head when the comment was written (an edited one: when it was edited), as the
    bot saw the heads arrive; an approval applies to that head only."""
    comment = event.payload.get("comment") or {}
    stamp = comment.get("updated_at") if event.action == "edited" else comment.get("created_at")
    try:
        when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return runs.pr.head_sha  # GitHub always says; a hand-made delivery may not
    return runs.runs.head_at(runs.repo, runs.number, when) or ""  # before any head it knows


def _handle(runs: RocmRuns, event: Event, command: Command, comment_id: int, login: str) -> None:
    if command.kind == "unknown":
        _react(runs, comment_id, "confused")
        _reply(
            runs,
            event,
            comment_id,
            "unknown",
            f"{code(command.text[:80])} is not a rocmbot command; did you mean `{command.suggestion}`? "
            "`/run-amd help` lists them.",
        )
        return
    if command.kind == "help":
        _reply(runs, event, comment_id, "help", _help(runs))
        return
    who = runs.actor(login)
    if command.kind == "cancel":
        if not who.trusted:
            raise Refusal(
                f"{who.why()}; runs may be cancelled by {who_may(runs.config.dispatch, approve=False)}."
            )
        if runs.dispatcher.cancel(runs.repo, runs.number):
            _react(runs, comment_id, "+1")  # the `rocmbot / rocm` checks say cancelled
        else:
            _reply(runs, event, comment_id, "cancel", "No ROCm run of this PR is in flight.")
        return
    seen = _head_when_written(runs, event)
    if command.kind == "approve":
        outcome = runs.approve(who, "command", head=seen)
    else:
        selection = runs.selection()
        failing = selection.failing if selection is not None else []
        if command.kind == "run":
            tests = selection.tests if selection is not None else []
        elif command.kind == "all":
            tests = runs.all_tests()
        else:
            tests, problems = runs.named_tests(command.paths)
            if problems:
                raise Refusal("nothing was dispatched: " + "; ".join(problems) + ".")
        outcome = runs.request(
            who, tests, force=command.force, origin=f"comment:{comment_id}", failing=failing, seen=seen
        )
    if outcome.decision == "pending":
        _answer(
            runs,
            comment_id,
            f"Waiting for a maintainer's approval: {outcome.reason}. "
            f"{who_may(runs.config.dispatch, approve=True).capitalize()} can approve with `/approve-amd` "
            "or the button on the `rocmbot / rocm` check.",
        )
        return
    # Done: the reaction, the summary's runs section and the `rocmbot / rocm` checks say so;
    # no comment.
    assert outcome.result is not None
    _react(runs, comment_id, "rocket" if outcome.result.dispatched else "+1")
    if outcome.result.dispatched:
        refresh_summary_runs(runs.ctx, runs.repo, runs.number, runs.pr.head_sha)


@router.register("issue_comment", "created")
@router.register("issue_comment", "edited")
def answer_command(event: Event, ctx: HandlerContext) -> None:
    """Parse the comment; acknowledge, authorize the commenter, then act or say why not."""
    payload = event.payload
    comment = payload.get("comment") or {}
    command = parse(str(comment.get("body") or ""))
    if command is None or event.pr_number is None or event.repository is None or ctx.github is None:
        return
    runs = RocmRuns(ctx, event.repository, event.pr_number)
    user = comment.get("user") or {}
    if (user.get("type") == "Bot" and not runs.config.dispatch.allow_bots) or (
        event.action == "edited" and not runs.config.dispatch.allow_edited
    ):
        log.info("command ignored (bot or edited comment)", extra={"delivery_id": event.delivery_id})
        return
    comment_id = int(comment["id"])
    _react(runs, comment_id, "eyes")
    try:
        _handle(runs, event, command, comment_id, str(user.get("login") or event.sender or ""))
    except Refusal as refusal:
        _react(runs, comment_id, "confused")
        _answer(runs, comment_id, f"Not dispatched: {refusal.reason}")


__all__ = ["VALID", "answer_command", "router"]
