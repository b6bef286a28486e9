"""GitHub writes through the effects ledger: recorded before they are made, made once.

Each write has an idempotency key. A key already `done` is skipped; a key left `pending` by
an attempt that died mid-way is reconciled against GitHub (find the comment by its marker, the
review by its commit) before anything is written again. In dry-run the write is recorded as
``dry_run``, with what it would have sent (see :func:`recorded`), and logged, not sent; a live
service makes it as if it had never been recorded. One marked ``superseded`` (a dry-run write
for a head that moved on, see `bot.rocm.pending.go_live`) was never sent either: it is made
only when a later delivery makes the same write.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.core.deadline import DeadlineError, RetryLaterError
from bot.github import keys as ledger
from bot.github.port import Comment, GitHubPort, Gone, InlineComment
from bot.github.publish import batches, is_summary
from bot.store.store import ATTEMPT_ANSWER, ATTEMPT_ENDED, ATTEMPT_SENT, Effect, Store

log = logging.getLogger(__name__)

REVIEW_MARKER = "<!-- rocmbot:review -->"
NEVER_SENT = ("dry_run", "superseded")  # entries whose write was recorded, not made
RECORDED_CHARS = 65_536  # of one text a dry-run entry keeps (GitHub takes no longer body)


def recorded(content: Any) -> Any:
    """What a dry-run entry keeps of a write's content: texts over ``RECORDED_CHARS`` cut, with
    a marker saying how much is left out."""
    if isinstance(content, str) and len(content) > RECORDED_CHARS:
        return content[:RECORDED_CHARS] + f"\n[cut: {len(content) - RECORDED_CHARS} more characters]"
    if isinstance(content, dict):
        return {str(k): recorded(v) for k, v in content.items()}
    if isinstance(content, list | tuple):
        return [recorded(v) for v in content]
    return content


def check_content(payload: dict[str, Any], annotations: int = 0) -> dict[str, Any]:
    """What a check run's write carries, for a dry-run entry: its state and output, and how
    many annotations go with it."""
    output = payload.get("output") or {}
    shown = {k: payload[k] for k in ("name", "head_sha", "status", "conclusion", "external_id")
             if payload.get(k) is not None}
    shown.update({k: output[k] for k in ("title", "summary", "text") if output.get(k) is not None})
    if annotations or output.get("annotations"):
        shown["annotations"] = annotations or len(output["annotations"])
    return shown


def answered(exc: BaseException) -> bool:
    """Whether a write that raised ``exc`` is over: GitHub answered it (an HTTP status, a rate
    limit) or it was never sent (past the delivery's deadline). A timeout or a lost connection
    is not: the request may still reach GitHub."""
    if isinstance(exc, RetryLaterError | DeadlineError | Gone):
        return True
    return isinstance(getattr(exc, "status", None), int)


def ended(entry: Effect) -> bool:
    """Whether the attempt that left a pending entry saw its write end (see :func:`answered`)."""
    return isinstance(entry.result, dict) and entry.result.get(ATTEMPT_ENDED) is True


def in_doubt(entry: Effect) -> bool:
    """Whether GitHub may have made the write of a pending entry: its attempt saw no answer (a
    timeout, a lost connection, a killed worker), or a 5xx, which GitHub sometimes answers
    after doing the work. A 4xx, a rate limit or a request never sent made nothing."""
    if not ended(entry):
        return True
    answer = entry.result.get(ATTEMPT_ANSWER)
    return isinstance(answer, int) and answer >= 500


def sent_for(entry: Effect) -> float:
    """Seconds since the attempt that left a pending entry sent its write."""
    sent = entry.result.get(ATTEMPT_SENT) if ended(entry) else None
    return max(0.0, time.time() - sent) if isinstance(sent, int | float) else entry.age


@dataclass(frozen=True)
class Lookups:
    """How long, and how often, a write whose outcome is in doubt is looked for on GitHub before
    anything more is done: at ``first`` seconds after it was sent, then each time twice as long
    after, the last at the end of the ``window``."""

    window: float = 0.0
    first: float = 15.0

    def wait(self, since: float) -> float | None:
        """Seconds from ``since`` (seconds after the write was sent) to the next lookup; None
        when the window is over."""
        if since >= self.window:
            return None
        at = max(self.first, 1e-3)
        while at <= since:
            at *= 2
        return min(at, self.window) - since


class Effects:
    """The writes one handler makes for one delivery."""

    def __init__(self, store: Store, port: GitHubPort | None, *, dry_run: bool, delivery_id: str,
                 app_id: int | None = None, in_flight: float = 0.0, lookups: Lookups | None = None) -> None:
        self.store = store
        self.port = port
        self.dry_run = dry_run or port is None
        self.delivery_id = delivery_id
        self.app_id = app_id  # whose comments are this App's
        # how long a write another attempt began may still reach GitHub (the longest one
        # request may take): a killed worker's request can land after its lease was taken over
        self.in_flight = in_flight
        # a dispatch in doubt: GitHub finishes a request after its client gave up, and lists the
        # new run some seconds after answering; its run is looked for this long before it is
        # sent again or recorded `unknown`
        self.lookups = lookups or Lookups()

    def ours(self, comment: Comment) -> bool:
        """A comment this App made: made through its App id (any bot account's, without one)."""
        if self.app_id is not None:
            return comment.app_id == self.app_id
        return comment.author_is_bot

    def once(
        self,
        key: str,
        kind: str,
        target: str,
        act: Callable[[], Any],
        reconcile: Callable[[], Any] | None = None,
        *,
        defer_to_live: float = 0.0,
        look: bool = False,
        content: dict[str, Any] | None = None,
    ) -> Any:
        """Make the write ``act`` once under ``key``; None when it is left to another attempt.
        ``content``: what the write sends, kept by a dry-run entry (see :func:`recorded`).

        An entry another attempt began less than ``defer_to_live`` seconds ago is left to it:
        that attempt may be alive and mid-write, where reconciling finds nothing yet and a
        second write would be a duplicate. If it died, the worker's sweep completes it.

        Otherwise an entry another attempt left pending is reconciled against GitHub, but not
        while that attempt's request may still reach GitHub (less than :attr:`in_flight`
        seconds ago, unless the attempt saw GitHub's answer): the delivery is retried when it
        can no longer land (:class:`RetryLaterError`), so a late write is found, not repeated.

        With ``look`` (a dispatch: GitHub may finish it late and show its run later still), a
        write in doubt (see :func:`in_doubt`) that reconciling does not find is looked for again
        over :attr:`lookups` before it is made again (after a 5xx), or recorded ``unknown`` (no
        answer: GitHub may have made it) and not made: see :meth:`_unfound`."""
        entry = self.store.begin_effect(key, kind, target, self.delivery_id)
        if entry.status == "done" or (entry.status == "dry_run" and self.dry_run):
            log.info("effect already made", extra={"key": key, "delivery_id": self.delivery_id})
            return entry.result
        if entry.status == "unknown":  # never made again; found, it is done
            found = reconcile() if reconcile is not None and not self.dry_run else None
            if found is not None and self.store.finish_effect(key, found, was=("unknown",)):
                return found
            return entry.result
        if entry.status == "pending" and not entry.created and entry.age < defer_to_live:
            log.info("effect in flight elsewhere", extra={"key": key, "delivery_id": self.delivery_id})
            return None
        if entry.status in NEVER_SENT:  # live, it is made now, as a pending write
            if not self.dry_run:
                self.store.mark_effect(key, "pending", was=entry.status)
        elif not entry.created and reconcile is not None and not self.dry_run:
            if entry.age < self.in_flight and not ended(entry):
                raise RetryLaterError(self.in_flight - entry.age,
                                      f"a write another attempt began may still reach GitHub ({kind})")
            found = reconcile()
            if found is not None:
                self.store.finish_effect(key, found)
                return found
            if look:
                unknown = self._unfound(entry)
                if unknown is not None:
                    return unknown
        if self.dry_run:
            result: Any = {"dry_run": True}
            if content is not None:
                result["content"] = recorded(content)
            log.info("dry-run: effect not sent", extra={"key": key, "kind": kind, "target": target})
            # a pending entry of a live attempt stays pending for the live service
            if entry.created or entry.status == "superseded":
                self.store.finish_effect(key, result, "dry_run")
            return result
        if not entry.created:  # this attempt's request is the one in flight now
            self.store.effect_attempt(key, ended=False)
        sent = time.time()
        try:
            result = act()
        except Exception as exc:
            if answered(exc):
                self._ended(key, exc, sent)
            raise
        self.store.finish_effect(key, result)
        return result

    def made_meanwhile(self, key: str, wait: float, step: float = 0.05) -> Any:
        """The result of the write under ``key`` once another live attempt has made it, waiting
        up to ``wait`` seconds (that attempt is mid-request: usually a matter of moments); None
        when it is still not made then (it may have died: the caller comes back later)."""
        deadline = time.monotonic() + wait
        while True:
            for entry in self.store.effects_for([key]):
                if entry.status == "done" or (entry.status == "dry_run" and self.dry_run):
                    return entry.result
            if time.monotonic() >= deadline:
                return None
            time.sleep(step)

    def _unfound(self, entry: Effect) -> dict[str, Any] | None:
        """A write in doubt that was looked for and not found: wait for the next lookup while
        the window lasts (:class:`RetryLaterError`, so the delivery or the sweep comes back);
        after it, None to make it again when GitHub answered an error, or, when it never
        answered, record it ``unknown`` and return that: it is not made a second time (a
        `workflow_run` delivery that names it settles it, see :meth:`settle`)."""
        if not in_doubt(entry):
            return None
        since = sent_for(entry)
        wait = self.lookups.wait(since)
        if wait is not None:
            raise RetryLaterError(wait, f"looking for what a {entry.kind} whose answer was "
                                        f"{'an error' if ended(entry) else 'lost'} made")
        if ended(entry):
            log.info("not found after an error: made again", extra={
                "key": entry.key, "delivery_id": self.delivery_id, "seconds": round(since, 1)})
            return None
        unknown = {"unknown": True, "seconds": round(since, 1)}
        if not self.store.finish_effect(entry.key, unknown, "unknown", was=("pending",)):
            again = self.store.begin_effect(entry.key, entry.kind, entry.target, self.delivery_id)
            return again.result if isinstance(again.result, dict) else unknown  # settled meanwhile
        log.warning("a write GitHub never answered was not found: its outcome is unknown", extra={
            "key": entry.key, "kind": entry.kind, "target": entry.target, "delivery_id": self.delivery_id,
            "seconds": round(since, 1)})
        return unknown

    def _ended(self, key: str, exc: BaseException, sent: float) -> None:
        status = getattr(exc, "status", None)
        try:
            self.store.effect_attempt(key, ended=True, answer=status if isinstance(status, int) else None,
                                      sent_at=sent)
        except Exception:  # the database is away: a retry waits out the in-flight time instead
            log.warning("could not note the end of a write's attempt", extra={"key": key}, exc_info=True)

    def give_up(self, key: str, kind: str, target: str, result: dict[str, Any]) -> Any:
        """Record as not to be made (``result``) a write an earlier attempt left pending, once
        it cannot have been made unseen: while it may still land or show, RetryLaterError; a
        write GitHub never answered is recorded ``unknown`` instead (see :meth:`_unfound`). What
        is recorded, or was already (a write found meanwhile)."""
        entry = self.store.begin_effect(key, kind, target, self.delivery_id)
        if entry.status not in ("pending", "dry_run"):
            return entry.result
        if entry.status == "pending" and not entry.created:
            if entry.age < self.in_flight and not ended(entry):
                raise RetryLaterError(self.in_flight - entry.age,
                                      f"a write another attempt began may still reach GitHub ({kind})")
            unknown = self._unfound(entry)
            if unknown is not None:
                return unknown
        self.store.finish_effect(key, result)
        return result

    # check runs ------------------------------------------------------------

    def check_run(
        self,
        repo: str,
        head_sha: str,
        name: str,
        payload: dict[str, Any],
        annotations: list[dict[str, Any]],
        *,
        version: str,
    ) -> Any:
        """Create (or update) the named check run on a commit, annotations 50 a request.

        ``version`` distinguishes contents: the same version on the same commit is written once.
        """
        prefix = ledger.check_prefix(repo, head_sha, name)
        key = ledger.check(repo, head_sha, name, version)

        def act(*, look: bool = False) -> dict[str, Any]:
            assert self.port is not None
            parts = list(batches(annotations)) or [[]]
            output = {**payload.get("output", {}), "annotations": parts[0]}
            body = {**payload, "output": output}
            known, unsure = self._earlier_check(prefix, key)
            if known is None and (look or unsure):
                existing = self.port.check_runs(repo, head_sha, name)
                known = existing[0].id if existing else None
            if known is not None:
                run = self.port.update_check_run(
                    repo, known, {k: v for k, v in body.items() if k not in ("head_sha", "name")}
                )
            else:
                run = self.port.create_check_run(repo, {**body, "name": name, "head_sha": head_sha})
            for part in parts[1:]:
                self.port.update_check_run(
                    repo, run.id, {"output": {**payload.get("output", {}), "annotations": part}}
                )
            return {"id": run.id}

        return self.once(key, "check_run", f"{repo}@{head_sha}", act, lambda: act(look=True),
                         content=check_content({**payload, "name": name, "head_sha": head_sha},
                                               len(annotations)))

    def _earlier_check(self, prefix: str, key: str) -> tuple[int | None, bool]:
        """The check run an earlier version on the same commit made, from the ledger, and
        whether an earlier attempt may have made one the ledger has no id of (it died mid-way):
        then GitHub is asked. Otherwise a new commit's check is created without a lookup."""
        found: int | None = None
        unsure = False
        for effect in self.store.effects_starting(prefix):
            result = effect.result
            if effect.key == key or effect.status in NEVER_SENT:
                continue
            if effect.status == "done" and isinstance(result, dict) and isinstance(result.get("id"), int):
                found = result["id"]
            else:
                unsure = True
        return found, unsure

    # the sticky comment ----------------------------------------------------

    def find_summary(self, repo: str, number: int) -> tuple[int, str] | None:
        """The sticky comment (id, body): a comment this App made that starts with the marker.
        Anyone may write the marker in a comment of their own, another App's bot too; taking
        theirs would read a state they wrote and try to edit a comment that is not the App's."""
        if self.port is None:
            return None
        for comment in self.port.comments(repo, number):
            if self.ours(comment) and is_summary(comment.body):
                return comment.id, comment.body
        return None

    def known_summary(self, repo: str, number: int) -> tuple[int, str] | None:
        """The sticky comment as the ledger last wrote it (id, body), without asking GitHub:
        every write of it goes through the ledger, which keeps the body it wrote."""
        found: tuple[int, str] | None = None
        made, edited = ledger.summary(repo, number), ledger.summary_edit_prefix(repo, number)
        for effect in self.store.effects_starting(made, edited):
            if not ledger.is_summary_key(effect.key, repo, number):
                continue  # another PR's: #1 is a prefix of #12
            result = effect.result
            if effect.status == "done" and isinstance(result, dict) and isinstance(result.get("body"), str):
                found = int(result["id"]), str(result["body"])
        return found

    def summary(
        self, repo: str, number: int, body: str, existing: tuple[int, str] | None, *, version: str
    ) -> Any:
        """Create the summary comment once; afterwards edit it in place when it changes (and
        make it again if someone deleted it)."""
        if existing is not None:
            comment_id, old = existing
            if old == body:
                return {"id": comment_id, "unchanged": True}
            key = ledger.summary_edit(repo, number, comment_id, version)

            def edit() -> dict[str, Any]:
                assert self.port is not None
                try:
                    return {"id": self.port.edit_comment(repo, comment_id, body).id, "body": body}
                except Gone:
                    return {"id": comment_id, "gone": True}

            done = self.once(key, "comment_edit", f"{repo}#{number}", edit, content={"body": body})
            if not (isinstance(done, dict) and done.get("gone")):
                return done
            log.info("the summary comment was deleted: posting it again",
                     extra={"repository": repo, "pr": number, "comment_id": comment_id})
            return self._create_summary(ledger.summary_again(repo, number, comment_id), repo, number, body)
        return self._create_summary(ledger.summary(repo, number), repo, number, body)

    def _create_summary(self, key: str, repo: str, number: int, body: str) -> Any:
        def create() -> dict[str, Any]:
            assert self.port is not None
            return {"id": self.port.create_comment(repo, number, body).id, "body": body}

        def reconcile() -> dict[str, Any] | None:
            found = self.find_summary(repo, number)
            if found is None:
                return None
            assert self.port is not None
            self.port.edit_comment(repo, found[0], body)
            return {"id": found[0], "body": body}

        return self.once(key, "comment", f"{repo}#{number}", create, reconcile, content={"body": body})

    # the review ------------------------------------------------------------

    def review(
        self,
        repo: str,
        number: int,
        head_sha: str,
        body: str,
        comments: list[InlineComment],
        keys: Sequence[str] = (),
    ) -> Any:
        """One review per head commit, carrying the inline comments (``keys``: the fingerprints
        of the findings they carry, kept in the ledger for `posted_inline`)."""
        key = ledger.review(repo, number, head_sha)
        text = f"{REVIEW_MARKER}\n{body}"

        def act() -> dict[str, Any]:
            assert self.port is not None
            return {
                "id": self.port.create_review(repo, number, head_sha, text, comments),
                "comments": len(comments),
                "keys": list(keys),
            }

        def reconcile() -> dict[str, Any] | None:
            assert self.port is not None
            for sha, existing in self.port.review_keys(repo, number):
                if sha == head_sha and REVIEW_MARKER in existing:
                    # the review an earlier attempt made carries the same findings: keep
                    # their fingerprints, or the next head would comment on them again
                    return {"reconciled": True, "keys": list(keys)}
            return None

        return self.once(key, "review", f"{repo}#{number}@{head_sha}", act, reconcile, content={
            "commit_id": head_sha, "body": text,
            "comments": [{"path": c.path, "line": c.line, "body": c.body} for c in comments]})

    def marked_review(self, key: str, repo: str, number: int, head_sha: str, body: str, marker: str,
                      comment: InlineComment) -> Any:
        """A review of ``head_sha`` carrying one inline comment (a suggestion), made once under
        ``key``; an attempt that died after GitHub made it is found by the hidden ``marker`` in
        its body."""

        def act() -> dict[str, Any]:
            assert self.port is not None
            return {"id": self.port.create_review(repo, number, head_sha, body, [comment])}

        def reconcile() -> dict[str, Any] | None:
            assert self.port is not None
            for sha, existing in self.port.review_keys(repo, number):
                if sha == head_sha and marker in existing:
                    return {"reconciled": True}
            return None

        return self.once(key, "review", f"{repo}#{number}@{head_sha}", act, reconcile, content={
            "commit_id": head_sha, "body": body,
            "comments": [{"path": comment.path, "line": comment.line, "start_line": comment.start_line,
                          "body": comment.body}]})

    def posted_inline(self, repo: str, number: int) -> list[str]:
        """Fingerprints of the findings the ledger knows this PR's reviews commented on (on
        every head: a finding commented on once is not commented on again, however its file
        changes).

        The sticky comment records them too, but only once it is written: an attempt that
        reviewed a head and died before its summary, with the head moved on meanwhile, would
        otherwise have the next head's review repeat the same comments (found by bench/chaos.py).
        """
        heads = self.store.pr_heads(f"{repo}#{number}")
        found: list[str] = []
        for effect in self.store.effects_for([ledger.review(repo, number, h) for h in heads]):
            if isinstance(effect.result, dict):
                found.extend(str(k) for k in effect.result.get("keys") or [])
        return found

    # checks of ROCm runs ---------------------------------------------------

    def _github(self) -> GitHubPort:
        assert self.port is not None
        return self.port

    def make_check(self, key: str, repo: str, payload: dict[str, Any], *, defer_to_live: float = 0.0
                   ) -> int | None:
        """Create a check run once; its id, None in dry-run or when left to another attempt.

        A check an attempt made before it died (a 5xx after the write, a killed worker) is
        found by its external id: creating it again would show two checks, two approve buttons
        (found by bench/chaos.py)."""
        head, name, external_id = payload["head_sha"], payload["name"], payload["external_id"]

        def create() -> dict[str, Any]:
            return {"id": self._github().create_check_run(repo, payload).id}

        def reconcile() -> dict[str, Any] | None:
            for run in self._github().check_runs(repo, head, name):
                if run.external_id == external_id:
                    return {"id": run.id, "reconciled": True}
            return None

        done = self.once(key, "check_run", f"{repo}@{head}", create, reconcile, defer_to_live=defer_to_live,
                         content=check_content(payload))
        found = done.get("id") if isinstance(done, dict) else None
        return found if isinstance(found, int) else None

    def update_check(self, key: str, repo: str, check_id: int, payload: dict[str, Any], *,
                     defer_to_live: float = 0.0) -> Any:
        """Update a check run once per ``key`` (``defer_to_live``: see :meth:`once`; for an
        update carrying annotations, which GitHub adds to those the check has)."""
        return self.once(key, "check_run", f"{repo}/check-runs/{check_id}",
                         lambda: {"id": self._github().update_check_run(repo, check_id, payload).id},
                         defer_to_live=defer_to_live, content=check_content(payload))

    # replies and reactions -------------------------------------------------

    def marked_comment(
        self, key: str, repo: str, number: int, body: str, marker: str, *,
        made: dict[str, Any] | None = None, found: dict[str, Any] | None = None, refresh: bool = False,
    ) -> Any:
        """A comment carrying a hidden ``marker``, made once (``made``: kept with its id).

        An attempt that died after GitHub made it but before the ledger recorded it is found by
        its marker among the App's comments (``found``: kept with its id) and, with ``refresh``,
        brought up to date instead of being made twice."""

        def create() -> dict[str, Any]:
            return {"id": self._github().create_comment(repo, number, body).id, **(made or {})}

        def reconcile() -> dict[str, Any] | None:
            for comment in self._github().comments(repo, number):
                if self.ours(comment) and marker in comment.body:
                    if refresh and comment.body != body:
                        self._github().edit_comment(repo, comment.id, body)
                    return {"id": comment.id, **(found or {}), "reconciled": True}
            return None

        return self.once(key, "comment", f"{repo}#{number}", create, reconcile, content={"body": body})

    def edit_comment(self, key: str, repo: str, number: int, comment_id: int, body: str) -> Any:
        return self.once(key, "comment_edit", f"{repo}#{number}",
                         lambda: {"id": self._github().edit_comment(repo, comment_id, body).id},
                         content={"comment_id": comment_id, "body": body})

    def settle(self, key: str, result: dict[str, Any], *, unsure_only: bool = False) -> bool:
        """Record as done a write that an earlier attempt made, found afterwards; with
        ``unsure_only``, only one still pending or ``unknown``. False: nothing was changed."""
        return self.store.finish_effect(key, result, was=("pending", "unknown") if unsure_only else None)

    def made_starting(self, prefix: str) -> set[str]:
        """The keys in the ledger that start with ``prefix``."""
        return {effect.key for effect in self.store.effects_starting(prefix)}

    def done_starting(self, prefix: str) -> set[str]:
        """The keys starting with ``prefix`` whose write is made (in dry-run: recorded); a
        write left pending is not."""
        made = ("done", *NEVER_SENT) if self.dry_run else ("done",)
        return {e.key for e in self.store.effects_starting(prefix) if e.status in made}

    def react(self, repo: str, comment_id: int, content: str) -> None:
        def act() -> dict[str, str]:
            self._github().add_reaction(repo, comment_id, content)
            return {"content": content}

        self.once(ledger.reaction(repo, comment_id, content), "reaction", f"{repo}/{comment_id}", act,
                  content={"comment_id": comment_id, "content": content})

    # workflow runs ---------------------------------------------------------

    def dispatch(self, dispatch_id: str, target: str, repo: str, workflow: str, ref: str,
                 inputs: dict[str, str], reconcile: Callable[[], dict[str, Any] | None]) -> Any:
        """Dispatch the workflow once per dispatch id; ``reconcile`` finds the run an earlier
        attempt made, looked for over :attr:`lookups` when that attempt's outcome is in doubt.
        ``{"unknown": True}``: GitHub never answered an attempt and its run was not found."""
        return self.once(
            ledger.dispatch(dispatch_id), "dispatch", target,
            lambda: {"run_id": self._github().dispatch_workflow(repo, workflow, ref, inputs)}, reconcile,
            look=True, content={"workflow": workflow, "ref": ref, "inputs": inputs},
        )

    def cancel_run(self, dispatch_id: str, repo: str, run_id: int) -> bool:
        """Stop a dispatch's run, once; False when GitHub said it had already completed (its own
        `workflow_run` news says how), or when the cancel is left to another attempt."""
        def stop() -> dict[str, Any]:
            return {"cancelled": self._github().cancel_run(repo, run_id)}

        done = self.once(ledger.cancel(dispatch_id), "cancel", f"{repo} run {run_id}", stop,
                         content={"run_id": run_id})
        return isinstance(done, dict) and done.get("cancelled", True) is not False
