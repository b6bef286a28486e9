"""The pull_request handler against the local port: what it would post, and that it posts once."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot.analysis.findings import finding
from bot.analysis.report import Report
from bot.cli.demo import build_example
from bot.core.events import Event
from bot.github import publish
from bot.github.context import HandlerContext
from bot.github.effects import REVIEW_MARKER, Effects
from bot.github.local import LocalPort
from bot.github.port import CheckRun
from bot.github.publish import SUMMARY_MARKER, SummaryState
from bot.store.dispatch import DispatchStore
from bot.store.store import Store
from config.settings import Settings
from handlers.review import relabel_pull_request, review_pull_request


@pytest.fixture
def setup(tmp_path: Path) -> tuple[LocalPort, Store, str, str]:
    base, head = build_example(tmp_path / "repo")
    port = LocalPort(str(tmp_path / "repo"), repo="octo/miles", prs={7: (base, head)}, default_ref=base)
    store = Store(f"sqlite:///{tmp_path}/db.sqlite")
    store.upgrade()
    return port, store, base, head


def _event(head: str, delivery: str = "d1", action: str = "synchronize") -> Event:
    return Event.from_payload("pull_request", delivery, {
        "action": action, "number": 7, "pull_request": {"number": 7, "head": {"sha": head}},
        "repository": {"full_name": "octo/miles"}, "installation": {"id": 1}})


def _ctx(port: LocalPort, store: Store, event: Event) -> HandlerContext:
    return HandlerContext(Settings(dry_run=False), store, event, port)


def test_publishes_a_check_run_a_summary_and_no_duplicate_on_redelivery(
    setup: tuple[LocalPort, Store, str, str],
) -> None:
    port, store, _, head = setup
    review_pull_request(_event(head), _ctx(port, store, _event(head)))
    kinds = [w.kind for w in port.writes]
    assert kinds[0] == "check_run" and "comment" in kinds
    check = port.writes[0].payload
    assert check["head_sha"] == head and check["name"] == "rocmbot / analysis"
    assert check["status"] == "completed" and check["conclusion"] in ("success", "neutral", "failure")
    (comment,) = [w for w in port.writes if w.kind == "comment"]
    assert comment.payload["body"].startswith(SUMMARY_MARKER)
    assert "test_qwen35_moe.py" in comment.payload["body"]
    assert SummaryState.load(comment.payload["body"]).head == head
    before = len(port.writes)
    again = _event(head, "d2")
    review_pull_request(again, _ctx(port, store, again))
    assert len(port.writes) == before  # same head, same content: nothing new


def test_a_label_analyses_the_head_again_and_leaves_an_unchanged_selection_where_it_stands(
    setup: tuple[LocalPort, Store, str, str],
) -> None:
    port, store, _, head = setup
    review_pull_request(_event(head), _ctx(port, store, _event(head)))
    selections = DispatchStore(store)
    chosen = selections.selection("octo/miles", 7, head)
    assert chosen is not None and chosen.held  # the PR's test has a new error: held
    selections.set_selection("octo/miles", 7, head, state="pending")  # waiting for a maintainer
    before = len(port.writes)
    port.labels = ("run-ci-extra",)  # no job of this repository is gated on it
    labeled = _event(head, "d2", action="labeled")
    relabel_pull_request(labeled, _ctx(port, store, labeled))
    again = selections.selection("octo/miles", 7, head)
    assert again is not None and again.state == "pending" and again.holds(chosen.tests)
    # the report names the PR's labels: the check and the summary say so; nothing else is made
    assert [w.kind for w in port.writes[before:]] == ["check_run_update", "comment_edit"]
    assert "for this PR (with `run-ci-extra`)" in port.writes[-1].payload["body"]
    relabel_pull_request(labeled, _ctx(port, store, labeled))  # delivered twice: nothing new
    assert len(port.writes) == before + 2


def test_a_stale_delivery_does_nothing(setup: tuple[LocalPort, Store, str, str]) -> None:
    port, store, base, _ = setup
    stale = _event(base)
    review_pull_request(stale, _ctx(port, store, stale))
    assert port.writes == []


def test_dry_run_records_but_does_not_write(setup: tuple[LocalPort, Store, str, str]) -> None:
    port, store, _, head = setup
    event = _event(head)
    review_pull_request(event, HandlerContext(Settings(dry_run=True), store, event, port))
    assert port.writes == []
    kinds = {e.kind for e in store.effects()}
    assert "check_run" in kinds and "comment" in kinds
    assert all(e.status == "dry_run" and e.result["dry_run"] is True for e in store.effects())
    # what each write would have sent is kept, for `rocmbot deliveries show`
    (check,) = [e.result["content"] for e in store.effects() if e.kind == "check_run"]
    assert check["name"] == "rocmbot / analysis" and check["head_sha"] == head
    assert check["conclusion"] in ("success", "neutral", "failure") and check["title"] and check["summary"]
    (comment,) = [e.result["content"] for e in store.effects() if e.kind == "comment"]
    assert comment["body"].startswith("<!-- rocmbot:summary -->")


def test_an_earlier_attempt_the_ledger_cannot_vouch_for_sends_it_to_github(
    setup: tuple[LocalPort, Store, str, str],
) -> None:
    port, store, _, head = setup
    effects = Effects(store, port, dry_run=False, delivery_id="d1")
    first = effects.check_run("octo/miles", head, "rocmbot / analysis", {"status": "queued"}, [], version="a")
    effects.check_run("octo/miles", head, "rocmbot / analysis", {"status": "completed"}, [], version="b")
    assert [w.kind for w in port.writes] == ["check_run", "check_run_update"]
    assert port.writes[1].target == f"octo/miles/check-runs/{first['id']}"
    looked: list[str] = []
    real = port.check_runs

    def check_runs(repo: str, sha: str, name: str) -> list[CheckRun]:
        looked.append(sha)
        return real(repo, sha, name)

    port.check_runs = check_runs  # type: ignore[method-assign]
    effects.check_run("octo/miles", head, "rocmbot / analysis", {"status": "completed"}, [], version="c")
    assert looked == []  # the ledger knows the check: updated by id
    other = "f" * 40
    store.begin_effect(f"check:octo/miles:{other}:rocmbot / analysis:a", "check_run", "x")  # died mid-way
    effects.check_run("octo/miles", other, "rocmbot / analysis", {"status": "completed"}, [], version="b")
    assert looked == [other]  # it may have made one: GitHub is asked (none: created)
    assert [w.kind for w in port.writes] == ["check_run", "check_run_update", "check_run_update", "check_run"]


def test_a_summary_the_ledger_does_not_know_is_looked_for_unless_the_pr_was_just_opened(
    setup: tuple[LocalPort, Store, str, str],
) -> None:
    port, store, _, head = setup
    theirs = port.create_comment("octo/miles", 7, SUMMARY_MARKER + "\nwritten before the ledger")
    port.writes.clear()
    review_pull_request(_event(head, action="opened"), _ctx(port, store, _event(head, action="opened")))
    assert [w.kind for w in port.writes].count("comment") == 1  # opened: not looked for
    other = Store(f"sqlite:///{store.engine.url.database}.2")
    other.upgrade()
    port.writes.clear()
    review_pull_request(_event(head, "d2"), _ctx(port, other, _event(head, "d2")))
    assert "comment" not in [w.kind for w in port.writes]  # found and edited instead
    assert any(w.kind == "comment_edit" and w.target.endswith(f"/{theirs.id}") for w in port.writes)
    other.close()
    effects = Effects(store, port, dry_run=False, delivery_id="d3")
    mine = effects.known_summary("octo/miles", 7)
    assert mine is not None and mine[1].startswith(SUMMARY_MARKER)
    store.begin_effect("comment:octo/miles#70", "comment", "octo/miles#70")
    store.finish_effect("comment:octo/miles#70", {"id": 99, "body": "PR 70's"})
    assert effects.known_summary("octo/miles", 7) == mine  # #7 is a prefix of #70
    assert effects.known_summary("octo/miles", 71) is None


@pytest.mark.parametrize(("baselines", "conclusion", "title"), [
    (["new", "unchanged"], "failure", "1 new error (1 error already on the base)"),
    (["unchanged"], "neutral", "no new problems · no ROCm tests selected (1 error already on the base)"),
    ([], "success", "no new problems · no ROCm tests selected"),
])
def test_only_errors_the_pr_brought_fail_the_check(baselines: list[str], conclusion: str, title: str) -> None:
    found = [replace(finding("PAR002", "t.py", i + 1, f"W={i}.", test="t.py"), baseline=b)  # type: ignore[arg-type]
             for i, b in enumerate(baselines)]
    report = Report("analyze", "a" * 40, "b" * 40, [], [], found)
    assert publish.conclusion(report) == conclusion
    assert publish.check_output(report)["title"] == title


def test_a_review_found_on_github_keeps_the_fingerprints_it_carries(
    setup: tuple[LocalPort, Store, str, str],
) -> None:
    """An attempt made the review and died before the ledger knew: the next attempt finds the
    review instead of making another, and records the fingerprints of its comments, or a later
    head would comment on the same findings again."""
    port, store, _, head = setup
    key = f"review:octo/miles#7:{head}"
    port.create_review("octo/miles", 7, head, f"{REVIEW_MARKER}\nearlier attempt", [])
    store.begin_effect(key, "review", f"octo/miles#7@{head}", "d0")  # left pending
    effects = Effects(store, port, dry_run=False, delivery_id="d1")
    effects.review("octo/miles", 7, head, "body", [], keys=["PAR002:" + "0" * 32])
    assert len([w for w in port.writes if w.kind == "review"]) == 1
    (effect,) = store.effects_for([key])
    assert effect.result == {"reconciled": True, "keys": ["PAR002:" + "0" * 32]}
