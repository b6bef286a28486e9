"""The re-enable sweep's issue through the ledger: made once, found again by its marker after
an attempt that died, edited once per version of its body, made again if deleted."""

from __future__ import annotations

from pathlib import Path

from bot.github import keys
from bot.github.effects import Effects
from bot.github.issue import keep_issue, known_issue
from bot.github.local import LocalPort
from bot.store.store import Store

R = "octo/miles"
MARK = "<!-- rocmbot:parked-tests -->"


def _keep(store: Store, port: LocalPort, body: str, *, delivery: str = "d",
          dry_run: bool = False) -> int | None:
    return keep_issue(Effects(store, port, dry_run=dry_run, delivery_id=delivery), R, "Parked ROCm tests",
                      f"{MARK}\n{body}", MARK)


def _kinds(port: LocalPort) -> list[str]:
    return [w.kind for w in port.writes]


def test_the_issue_is_made_once_then_edited_only_when_its_body_changes(store: Store, tmp_path: Path) -> None:
    port = LocalPort(str(tmp_path))
    number = _keep(store, port, "A")
    assert number is not None and _kinds(port) == ["issue"]
    assert _keep(store, port, "A", delivery="again") == number and _kinds(port) == ["issue"]
    assert _keep(store, port, "B") == number and _kinds(port) == ["issue", "issue_edit"]
    assert _keep(store, port, "A") == number  # back to what it showed first: written again
    assert _kinds(port) == ["issue", "issue_edit", "issue_edit"]
    assert port.issues(R)[0].body.endswith("\nA")
    found = known_issue(Effects(store, port, dry_run=False, delivery_id="x"), R)
    assert found is not None and found[:2] == (number, f"{MARK}\nA")


def test_an_issue_made_by_an_attempt_that_died_is_found_by_its_marker(store: Store, tmp_path: Path) -> None:
    port = LocalPort(str(tmp_path))
    store.begin_effect(keys.parked_issue(R), "issue", R, "d1")  # pending: the attempt died mid-write
    made = port.create_issue(R, "Parked ROCm tests", f"{MARK}\nold")
    assert _keep(store, port, "new") == made.number
    assert _kinds(port) == ["issue", "issue_edit"] and port.issues(R)[0].body.endswith("\nnew")


def test_a_deleted_issue_is_made_again(store: Store, tmp_path: Path) -> None:
    port = LocalPort(str(tmp_path))
    first = _keep(store, port, "A")
    assert first is not None
    port._issues.clear()  # someone deleted it
    second = _keep(store, port, "B")
    assert second is not None and second != first and _kinds(port) == ["issue", "issue"]
    assert _keep(store, port, "C") == second and _kinds(port)[-1] == "issue_edit"


def test_dry_run_records_the_issue_and_sends_nothing(store: Store, tmp_path: Path) -> None:
    port = LocalPort(str(tmp_path))
    assert _keep(store, port, "A", dry_run=True) is None and port.writes == []
    assert known_issue(Effects(store, port, dry_run=True, delivery_id="x"), R) is None


def test_another_repositorys_issue_is_not_this_ones() -> None:
    assert keys.is_parked_issue_key(keys.parked_issue(R), R)
    assert keys.is_parked_issue_key(keys.parked_issue_edit(R, 3, "v"), R)
    assert keys.is_parked_issue_key(keys.parked_issue_again(R, 3), R)
    assert not keys.is_parked_issue_key(keys.parked_issue("octo/miles-2"), R)
    assert not keys.is_parked_issue_key(keys.parked_issue_edit("octo/miles-2", 3, "v"), R)
