"""The re-enable sweep's tracking issue, written through the ledger: made once (found again by
the hidden marker in its body when an attempt died between GitHub making it and the ledger
recording it), then edited in place, once per version of its body, and made again if someone
deleted it."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from bot.github import keys
from bot.github.effects import Effects
from bot.github.port import Gone, Issue

log = logging.getLogger(__name__)


def _ours(effects: Effects, issue: Issue) -> bool:
    """An issue this App made (any bot account's, without the App's id), as for comments."""
    if effects.app_id is not None:
        return issue.app_id == effects.app_id
    return issue.author_is_bot


def known_issue(effects: Effects, repo: str) -> tuple[int, str, str] | None:
    """The issue as the ledger last wrote it: (number, body, the key of that write); None when
    it made none (or only recorded one, in dry-run)."""
    found: tuple[int, str, str] | None = None
    for effect in effects.store.effects_starting(*keys.parked_issue_prefixes(repo)):
        result = effect.result
        if not keys.is_parked_issue_key(effect.key, repo) or effect.status != "done":
            continue
        if isinstance(result, dict) and isinstance(result.get("number"), int) and not result.get("gone"):
            found = int(result["number"]), str(result.get("body") or ""), effect.key
    return found


def _version(last_key: str, body: str) -> str:
    """A body's version, chained to the write it follows: the same body after another is a new
    version (a table that went back to what it showed before is written again)."""
    return hashlib.sha1(f"{last_key}\n{body}".encode(), usedforsecurity=False).hexdigest()[:12]


def keep_issue(effects: Effects, repo: str, title: str, body: str, marker: str) -> int | None:
    """Make the issue, or bring its body up to date; its number (None in dry-run)."""
    known = known_issue(effects, repo)
    if known is None:
        return _create(effects, keys.parked_issue(repo), repo, title, body, marker)
    number, old, last_key = known
    if old == body:
        return number
    gh = effects.port
    assert gh is not None

    def edit() -> dict[str, Any]:
        try:
            return {"number": gh.edit_issue(repo, number, body).number, "body": body}
        except Gone:
            return {"number": number, "gone": True}

    done = effects.once(keys.parked_issue_edit(repo, number, _version(last_key, body)), "issue_edit",
                        f"{repo}#{number}", edit, content={"number": number, "body": body})
    if isinstance(done, dict) and done.get("gone"):
        log.info("the parked tests' issue was deleted: making it again",
                 extra={"repository": repo, "issue": number})
        return _create(effects, keys.parked_issue_again(repo, number), repo, title, body, marker)
    return number if isinstance(done, dict) and not done.get("dry_run") else None


def _create(effects: Effects, key: str, repo: str, title: str, body: str, marker: str) -> int | None:
    def create() -> dict[str, Any]:
        assert effects.port is not None
        return {"number": effects.port.create_issue(repo, title, body).number, "body": body}

    def reconcile() -> dict[str, Any] | None:
        assert effects.port is not None
        for issue in effects.port.issues(repo):
            if _ours(effects, issue) and marker in issue.body:
                if issue.body != body:
                    effects.port.edit_issue(repo, issue.number, body)
                return {"number": issue.number, "body": body, "reconciled": True}
        return None

    done = effects.once(key, "issue", repo, create, reconcile, content={"title": title, "body": body})
    number = done.get("number") if isinstance(done, dict) else None
    return number if isinstance(number, int) else None
