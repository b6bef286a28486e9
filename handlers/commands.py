"""Answer `/run-amd` and `/approve-amd` comments on pull requests."""

from __future__ import annotations

import logging
from datetime import datetime

from bot.core.events import Event
from bot.github import keys
from bot.github.context import HandlerContext
from bot.rocm import payloads
from bot.rocm.command_table import FORCE, spec
from bot.rocm.commands import VALID, Command, command_line, parse
from bot.rocm.decide import Actor, Refusal, may_command
from bot.rocm.runs import RocmRuns
from bot.service.router import Router

router = Router()
log = logging.getLogger(__name__)


def _head_when_written(runs: RocmRuns, event: Event) -> str:
    """The head the commenter could have seen when writing (an edited comment: when editing):
    the last head the bot saw arrive before the comment's second began. An approval covers
    that head only; empty when there is none, or when the comment carries no time."""
    comment = event.payload.get("comment") or {}
    stamp = comment.get("updated_at") if event.action == "edited" else comment.get("created_at")
    try:
        when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return ""  # GitHub always says; a delivery that does not approves nothing
    return runs.head_at(when)


def _may(who: Actor, command: Command, runs: RocmRuns) -> Refusal | None:
    """Why the commenter may not give this command at all, or None: the rights the command
    table declares for it and for its options."""
    flags = [FORCE.flag] if command.force else []
    return may_command(who, spec(command.kind), flags, runs.config.dispatch)


def _handle(runs: RocmRuns, event: Event, command: Command, comment_id: int, login: str) -> None:
    written = str((event.payload.get("comment") or {}).get("body") or "")
    if command.kind == "unknown":
        runs.react(comment_id, "confused")
        runs.reply(comment_id, written, "unknown", payloads.unknown_reply(command.text, command.suggestion))
        return
    if command.kind == "help":
        runs.reply(comment_id, written, "help", runs.help_reply())
        return
    who = runs.actor(login)
    refused = _may(who, command, runs)
    if refused is not None:  # before anything is listed or read for the command
        raise refused
    if command.kind == "cancel":
        if runs.cancel():
            runs.react(comment_id, "+1")  # the `rocmbot / rocm` checks say cancelled
        else:
            runs.reply(comment_id, written, "cancel", payloads.NOTHING_IN_FLIGHT)
        return
    seen = _head_when_written(runs, event)
    selection = runs.analysed_selection()  # answered after the analysis of the head it acts on
    if command.kind == "approve":
        outcome = runs.approve(who, "command", head=seen)
    else:
        failing = selection.failing if selection is not None else []
        if command.kind == "run":
            tests = selection.tests if selection is not None else []
            held = selection.held if selection is not None else []
            if command.force and held:
                # what a new error held back, a maintainer runs anyway; with what of the
                # selection has not been sent for this head (what has keeps running)
                tests = [*runs.not_sent(tests), *held]
            elif not tests and held:
                raise Refusal(payloads.held_reason(held))
        elif command.kind == "all":
            tests = runs.all_tests()
        elif command.kind == "retry":
            tests = runs.failed_tests()  # as their run sent them, parked ones as parked
        elif command.kind == "disabled":
            # parked tests: the PR's that could come back, or those named (candidate or not)
            tests = (runs.named_parked(command.paths, force=command.force) if command.paths
                     else runs.parked_candidates(selection))
        else:
            tests = runs.named_tests(command.paths)
        outcome = runs.request(
            who, tests, force=command.force, origin=keys.by_comment(comment_id), failing=failing, seen=seen
        )
    if outcome.decision == "pending":
        runs.answer(comment_id, payloads.waiting_reply(outcome.reason, runs.config.dispatch))
        return
    # Done: the reaction, the summary's runs section and the `rocmbot / rocm` checks say so;
    # no comment.
    assert outcome.result is not None
    runs.react(comment_id, "rocket" if outcome.result.dispatched else "+1")
    if outcome.result.dispatched:
        runs.refresh_summary()


@router.register("issue_comment", "created")
@router.register("issue_comment", "edited")
def answer_command(event: Event, ctx: HandlerContext) -> None:
    """Parse the comment; acknowledge, authorize the commenter, then act or say why not."""
    payload = event.payload
    comment = payload.get("comment") or {}
    body = str(comment.get("body") or "")
    command = parse(body)
    if event.pr_number is None or event.repository is None or ctx.github is None or (
            command is None and command_line(body) is None):
        return
    runs = RocmRuns(ctx, event.repository, event.pr_number)
    if command is None:  # another bot's `/command`, unless the repository makes it rocmbot's
        prefixes = runs.config.dispatch.command_prefixes
        command = parse(body, prefixes) if prefixes else None
        if command is None:
            return
    user = comment.get("user") or {}
    if (user.get("type") == "Bot" and not runs.config.dispatch.allow_bots) or (
        event.action == "edited" and not runs.config.dispatch.allow_edited
    ):
        log.info("command ignored (bot or edited comment)", extra={"delivery_id": event.delivery_id})
        return
    comment_id = int(comment["id"])
    runs.react(comment_id, "eyes")
    try:
        _handle(runs, event, command, comment_id, str(user.get("login") or event.sender or ""))
    except Refusal as refusal:
        runs.react(comment_id, "confused")
        runs.answer(comment_id, payloads.refused_reply(refusal.reason))


__all__ = ["VALID", "answer_command", "router"]
