"""A parked test whose ROCm run passed on its PR's head, ready to come back.

When a run sent with `include_disabled` (`/run-amd disabled`) ends and a test of it passed, on
the head the PR still has, rocmbot offers the edit that brings the test back, once per PR head
and test: a review comment on the marker with a GitHub suggestion that removes `disabled=`
when those lines are in the PR's diff (GitHub takes review comments there only), else a
comment with the exact patch. The summary's runs section says "ready to re-enable" from what is
stored (see :func:`passed`), so a push moves it to the new head, where it is not said until a
run of that head passes. A failed run keeps the test parked; its job is explained as any.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from bot.analysis.markers import Marker, find_markers
from bot.analysis.source import Module, parse_python
from bot.analysis.unpark import Removal, removal
from bot.formats.markdown import ready_line
from bot.github import keys
from bot.github.context import HandlerContext
from bot.github.port import InlineComment
from bot.github.publish import diff_lines
from bot.github.tree import GitHubTree
from bot.rocm import payloads
from bot.store.dispatch import Dispatch, DispatchStore, JobOutcome

log = logging.getLogger(__name__)


def passed(record: Dispatch, outcomes: dict[str, JobOutcome]) -> list[str]:
    """The parked tests of an ended `include_disabled` run that passed: their job's last news
    is a success of the run's last attempt (a run that ended in success with no news of a
    test's job passed it too)."""
    if not record.include_disabled or record.status != "completed":
        return []
    out = []
    for path in record.tests:
        found = outcomes.get(path)
        if found is None:
            if record.conclusion == "success":
                out.append(path)
        elif (found.status == "completed" and found.conclusion == "success"
              and found.run_attempt >= (record.run_attempt or 1)):
            out.append(path)
    return out


def offer(ctx: HandlerContext, record: Dispatch) -> int:
    """Offer the removal of `disabled=` for each parked test of ``record`` that passed on its
    PR's current head (once per head and test); how many offers were made now."""
    if record.pr_number is None or ctx.github is None or not record.include_disabled \
            or record.status != "completed":  # most runs' news: nothing read for them
        return 0
    store = DispatchStore(ctx.store)
    tests = passed(record, store.outcomes(record.dispatch_id))
    if not tests:
        return 0
    repo, number, head = record.repository, record.pr_number, record.head_sha
    effects = ctx.effects()
    wanted = {path: keys.unpark(repo, number, head, path) for path in tests}
    made = effects.done_starting(keys.unpark(repo, number, head, ""))
    todo = [path for path, key in wanted.items() if key not in made]
    if not todo:
        return 0
    pr = ctx.github.pull_request(repo, number)
    if pr.head_sha != head or pr.state != "open":
        log.info("a parked test passed on a head its PR has left: nothing offered",
                 extra={"delivery_id": ctx.event.delivery_id, "dispatch_id": record.dispatch_id})
        return 0
    names = ctx.policy(repo).config.markers
    tree = GitHubTree(ctx.github, repo, head)
    shown: dict[str, set[int]] | None = None
    offered = 0
    for path in todo:
        edit = _edit(path, tree.read(path), names, record.suite)
        if edit is None:
            log.info("a parked test passed, but no `disabled=` could be cut from its marker",
                     extra={"delivery_id": ctx.event.delivery_id, "path": path})
            continue
        if shown is None:
            shown = {f.path: diff_lines(f.patch) for f in ctx.github.pull_files(repo, number)}
        marker_text = payloads.unpark_marker(head, path)
        said = ready_line(path, record.suite, head, record.run_url)
        if all(n in shown.get(path, set()) for n in range(edit.start, edit.end + 1)):
            body = f"{marker_text}\n{said}"
            effects.marked_review(wanted[path], repo, number, head, body, marker_text,
                                  InlineComment(path, edit.end, payloads.suggestion(edit),
                                                edit.start if edit.start < edit.end else None))
        else:
            effects.marked_comment(wanted[path], repo, number,
                                   payloads.marked(payloads.patch_comment(said, edit), marker_text),
                                   marker_text)
        offered += 1
    return offered


def _edit(path: str, data: bytes | None, names: Mapping[str, str], suite: str) -> Removal | None:
    """The removal of `disabled=` from the test's parked ROCm marker (see :func:`_marker`), as
    the head has the file; None when there is no such file, marker or argument to cut."""
    parsed = parse_python(path, data.decode("utf-8", "replace")) if data is not None else None
    marker = _marker(parsed, names, suite) if isinstance(parsed, Module) else None
    if marker is None or not isinstance(parsed, Module):
        return None
    return removal(path, parsed.text, marker.line, marker.disabled)


def _marker(module: Module, names: Mapping[str, str], suite: str) -> Marker | None:
    """The disabled ROCm marker of the suite the run was on; the file's only disabled ROCm
    marker when none names that suite (a suite it computes)."""
    markers, _ = find_markers(module, names)
    parked = [m for m in markers if m.backend == "rocm" and m.disabled is not None]
    exact = [m for m in parked if m.suite == suite]
    if exact:
        return exact[0]
    return parked[0] if len(parked) == 1 else None


__all__ = ["offer", "passed"]
