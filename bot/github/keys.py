"""Every key of the effect ledger, made in one place.

A key names one GitHub write: the ledger records it before the write and marks it done after,
so the same key is never written twice. Keys are stored, so their spelling is part of the
database: change one and every write it named would be made again.
"""

from __future__ import annotations

import hashlib

# the analysis: its check run, the sticky summary comment, the inline review ---------------


def check_prefix(repo: str, head: str, name: str) -> str:
    """Every version of a named check run on a commit."""
    return f"check:{repo}:{head}:{name}:"


def check(repo: str, head: str, name: str, version: str) -> str:
    return check_prefix(repo, head, name) + version


def summary(repo: str, number: int) -> str:
    """The sticky comment, made."""
    return f"comment:{repo}#{number}"


def summary_again(repo: str, number: int, deleted: int) -> str:
    """The sticky comment, made again after someone deleted comment ``deleted``."""
    return f"{summary(repo, number)}:after:{deleted}"


def summary_edit_prefix(repo: str, number: int) -> str:
    return f"comment-edit:{repo}#{number}:"


def summary_edit(repo: str, number: int, comment_id: int, version: str) -> str:
    return f"{summary_edit_prefix(repo, number)}{comment_id}:{version}"


def is_summary_key(key: str, repo: str, number: int) -> bool:
    """A key of this PR's sticky comment (#1's prefix is also #12's)."""
    made = summary(repo, number)
    return key == made or key.startswith((made + ":", summary_edit_prefix(repo, number)))


def review(repo: str, number: int, head: str) -> str:
    """The one review of a head."""
    return f"review:{repo}#{number}:{head}"


def unpark(repo: str, number: int, head: str, path: str) -> str:
    """The one suggestion (or patch) that brings a parked test back, after its run passed on a
    PR's head."""
    return f"unpark:{repo}#{number}:{head}:{path}"


# ROCm runs: a dispatch, its `rocmbot / rocm` check, its cancellation ------------------------

DISPATCH = "dispatch:"
ROCM_CHECK = "rocm-check:"


def dispatch(dispatch_id: str) -> str:
    """Sending a dispatch: every attempt at it shares the key."""
    return f"{DISPATCH}{dispatch_id}"


def rocm_check(dispatch_id: str) -> str:
    """Making a dispatch's `rocmbot / rocm` check."""
    return f"{ROCM_CHECK}{dispatch_id}"


def run_news(dispatch_id: str, status: str, conclusion: object, attempt: int | None = None) -> str:
    """A run's status shown on its dispatch's check: once per status of each attempt (a re-run's
    states are shown again), however often delivered."""
    again = f":attempt-{attempt}" if attempt is not None and attempt > 1 else ""
    return f"rocm-check-update:{dispatch_id}:{status}:{conclusion}{again}"


def check_shown_again(key: str, payload_digest: str) -> str:
    """A dispatch's check written again after the write ``key``, because the run moved on while
    that write was made: a write rendered from an earlier state may have landed last."""
    return f"{key}:then:{payload_digest}"


def job_news(dispatch_id: str, job_id: object, status: object, conclusion: object) -> str:
    """A job's status (one test of the run) shown on the dispatch's check."""
    return f"rocm-check-update:{dispatch_id}:job:{job_id}:{status}:{conclusion}"


def failure_prefix(dispatch_id: str) -> str:
    return f"rocm-check-failure:{dispatch_id}:"


def failure(dispatch_id: str, job_id: int) -> str:
    """A failed test's job explained on its dispatch's check, with its annotation: once per job
    (a job runs one test of one head; a re-run's job is another), however often delivered."""
    return f"{failure_prefix(dispatch_id)}{job_id}"


def cancel(dispatch_id: str) -> str:
    return f"cancel:{dispatch_id}"


def cancelled_check(dispatch_id: str) -> str:
    """A cancelled dispatch's check, marked cancelled."""
    return f"cancel-check:{dispatch_id}"


def pending_check(repo: str, number: int, head: str, digest: str) -> str:
    """The check that waits for a maintainer's approval of a head's tests (``digest``)."""
    return f"pending-check:{repo}#{number}:{head}:{digest}"


def approved_check(repo: str, number: int, head: str, digest: str) -> str:
    """That check, marked approved."""
    return f"approved-check:{repo}#{number}:{head}:{digest}"


def refusal_check(repo: str, number: int, head: str, rule: str | None) -> str:
    """The failed check of an automatic dispatch that could not happen."""
    return f"refusal-check:{repo}#{number}:{head}:{rule}"


def dispatch_id(repo: str, number: int | None, head: str, suite: str, tests: list[str], origin: str) -> str:
    """A dispatch's id: the same request (same tests of a suite, same origin) has the same one."""
    raw = "\n".join([repo, str(number), head, suite, *sorted(tests), origin])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


# what asks for a dispatch: part of its id ----------------------------------------------------

AUTOMATIC = "auto"


def by_comment(comment_id: int) -> str:
    return f"comment:{comment_id}"


def by_rerun(delivery_id: str) -> str:
    return f"rerun:{delivery_id}"


def by_approval(digest: str) -> str:
    return f"approval:{digest}"


# replies and reactions ---------------------------------------------------------------------


def reply(repo: str, comment_id: int, digest: str) -> str:
    """The reply to a command (``digest``: of the comment's text; an edit is a new command)."""
    return f"reply:{repo}:{comment_id}:{digest}"


def answer_group(repo: str, number: int, head: str, answer_digest: str) -> str:
    """The commands on a head that received the same answer."""
    return f"{repo}#{number}:{head[:12]}:{answer_digest}"


def answer(group: str) -> str:
    """The one reply carrying the same answer to a group of commands."""
    return f"answer:{group}"


def answer_edit_prefix(group: str) -> str:
    return f"answer-edit:{group}:"


def answer_edit(group: str, comment_id: int) -> str:
    """That reply, edited to count command ``comment_id``."""
    return f"{answer_edit_prefix(group)}{comment_id}"


def reaction(repo: str, comment_id: int, content: str) -> str:
    return f"reaction:{repo}:{comment_id}:{content}"


def review_reply(repo: str, review_id: int) -> str:
    """The reply to a maintainer's review whose approval released nothing."""
    return f"review-reply:{repo}:{review_id}"


# the re-enable sweep: its dispatches and its tracking issue -----------------------------------


def by_sweep(period: str) -> str:
    """What asks for a re-enable sweep's dispatch: the sweep of one period."""
    return f"reenable:{period}"


def parked_issue(repo: str) -> str:
    """The "Parked ROCm tests" issue, made."""
    return f"parked-issue:{repo}"


def parked_issue_again(repo: str, gone: int) -> str:
    """That issue, made again after someone deleted issue ``gone``."""
    return f"{parked_issue(repo)}:after:{gone}"


def parked_issue_edit(repo: str, number: int, version: str) -> str:
    """That issue's body, brought up to date (``version``: of the body and what it replaced)."""
    return f"parked-issue-edit:{repo}#{number}:{version}"


def parked_issue_prefixes(repo: str) -> tuple[str, str]:
    return parked_issue(repo), f"parked-issue-edit:{repo}#"


def is_parked_issue_key(key: str, repo: str) -> bool:
    """A key of this repository's issue (`octo/miles` is a prefix of `octo/miles-2`)."""
    made, edited = parked_issue_prefixes(repo)
    return key == made or key.startswith((made + ":after:", edited))
