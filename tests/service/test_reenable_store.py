"""The re-enable sweep's store on SQLite and PostgreSQL: the repositories served, the schedule's
lease (one worker at a time, one sweep a period), and what each sweep found."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from bot.store.dispatch import DispatchStore, JobOutcome, RunNews
from bot.store.reenable import KnownRepository, SweepStore, SweptTest
from bot.store.store import Store
from tests.service.helpers import event_of, pr_payload

LEASE = 30.0
SUITE = "stage-c-4-gpu-mi350"


def _deliver(store: Store, delivery_id: str, repo: str, *, installation: int | None = 42,
             branch: str | None = "main") -> None:
    payload: dict[str, Any] = pr_payload(repo=repo)
    if branch is not None:
        payload["repository"]["default_branch"] = branch
    if installation is None:
        del payload["installation"]
    else:
        payload["installation"] = {"id": installation}
    assert store.add_delivery(event_of("pull_request", delivery_id, payload), json.dumps(payload))


def test_the_repositories_served_are_those_of_deliveries_with_an_installation(store: Store) -> None:
    _deliver(store, "d1", "octo/miles", installation=42)
    _deliver(store, "d2", "octo/slime", installation=None)  # no installation: nothing to act as
    _deliver(store, "d3", "octo/miles", installation=43, branch="trunk")  # the App was installed again
    _deliver(store, "d4", "octo/sglang", branch=None)
    assert SweepStore(store).known() == [
        KnownRepository("octo/miles", 43, "trunk"), KnownRepository("octo/sglang", 42, None)]


def test_one_owner_holds_a_repositorys_lease_until_it_gives_it_back_or_it_expires(store: Store) -> None:
    sweeps = SweepStore(store)
    assert sweeps.row("octo/miles") is None
    first = sweeps.take("octo/miles", "w1", now=1000.0, lease_seconds=LEASE)
    assert first is not None and (first.owner, first.expires_at, first.period) == ("w1", 1030.0, None)
    assert sweeps.take("octo/miles", "w2", now=1010.0, lease_seconds=LEASE) is None
    assert sweeps.renew("octo/miles", "w1", now=1020.0, lease_seconds=LEASE)
    assert sweeps.take("octo/miles", "w2", now=1040.0, lease_seconds=LEASE) is None  # renewed to 1050
    assert not sweeps.renew("octo/miles", "w2", now=1040.0, lease_seconds=LEASE)
    assert sweeps.release("octo/miles", "w1", now=1041.0, cadence="weekly", period="2026-W19")
    row = sweeps.row("octo/miles")
    assert row is not None and (row.owner, row.cadence, row.period, row.swept_at, row.checked_at) == (
        None, "weekly", "2026-W19", 1041.0, 1041.0)
    again = sweeps.take("octo/miles", "w2", now=1042.0, lease_seconds=LEASE)
    assert again is not None and again.period == "2026-W19"  # taken, and seen to be swept already
    assert not sweeps.release("octo/miles", "w1", now=1043.0)  # w1's lease is gone
    assert sweeps.release("octo/miles", "w2", now=1043.0, retry_at=2000.0, error="GitHub said 502")
    assert sweeps.take("octo/miles", "w1", now=1500.0, lease_seconds=LEASE) is None  # a failure waits
    late = sweeps.take("octo/miles", "w1", now=2000.0, lease_seconds=LEASE)
    assert late is not None and late.last_error == "GitHub said 502" and late.period == "2026-W19"
    expired = sweeps.take("octo/miles", "w2", now=2031.0, lease_seconds=LEASE)  # w1 died: its lease ran out
    assert expired is not None and expired.owner == "w2"


def test_two_workers_on_one_database_sweep_a_repository_once_a_period(store: Store) -> None:
    """Each worker does what the sweep does: take the lease, sweep when the row says the period
    is not swept, record it, give the lease back. However they interleave, one sweeps."""
    url = store.engine.url.render_as_string(hide_password=False)
    swept: list[str] = []
    start = threading.Barrier(4)

    def worker(name: str) -> None:
        own = Store(url)
        try:
            sweeps = SweepStore(own)
            start.wait()
            for _ in range(25):
                row = sweeps.take("octo/miles", name, now=1000.0, lease_seconds=LEASE)
                if row is None:
                    continue
                if row.period != "2026-W19":
                    swept.append(name)
                    sweeps.release("octo/miles", name, now=1000.0, cadence="weekly", period="2026-W19")
                else:
                    sweeps.release("octo/miles", name, now=1000.0, cadence="weekly")
        finally:
            own.close()

    threads = [threading.Thread(target=worker, args=(f"w{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(swept) == 1
    row = SweepStore(store).row("octo/miles")
    assert row is not None and row.period == "2026-W19" and row.owner is None


def _tests() -> list[SweptTest]:
    return [
        SweptTest("tests/a.py", SUITE, "FIXME: a", "valid", True, 60.0, patch="--- a/tests/a.py\n"),
        SweptTest("tests/b.py", SUITE, "FIXME: b", "valid", True, 240.0,
                  note="not run: 240 GPU-minutes, over the budget"),
        SweptTest("tests/c.py", SUITE, "FIXME: c", "PAR002", False, 60.0, note="not run: PAR002"),
    ]


def test_a_sweeps_tests_are_recorded_with_their_dispatch_and_its_outcome(store: Store) -> None:
    sweeps, runs = SweepStore(store), DispatchStore(store)
    sweeps.record("octo/miles", "2026-W19", "h" * 40, _tests())
    assert sweeps.head_of("octo/miles", "2026-W19") == "h" * 40 and sweeps.head_of("octo/miles", "x") is None
    assert runs.add("d1", "octo/miles", None, "h" * 40, SUITE, ["tests/a.py"], 60.0, "rocmbot",
                    include_disabled=True)
    sweeps.ran("octo/miles", "2026-W19", "tests/a.py", SUITE, dispatch_id="d1")
    (record,) = runs.for_pr("octo/miles", None)  # a dispatch of no PR
    assert record.pr_number is None and record.include_disabled and runs.for_pr("octo/miles", 1) == []
    runs.accept("d1", 55)
    runs.advance("d1", RunNews(1, "completed", "success", 1_700_000_000), run_url="https://x/runs/55")
    runs.record_outcome("d1", JobOutcome("tests/a.py", 7, "completed", "success", "https://x/jobs/7", 60.0))
    found = sweeps.tests("octo/miles", "2026-W19")
    assert [r.test.path for r in found] == ["tests/a.py", "tests/b.py", "tests/c.py"]
    a, b, c = found
    assert a.test.dispatch_id == "d1" and a.dispatch is not None and a.dispatch.conclusion == "success"
    assert a.outcome is not None and a.outcome.job_url == "https://x/jobs/7"
    assert a.test.patch == "--- a/tests/a.py\n"
    assert (b.dispatch, b.outcome, b.test.note) == (None, None, "not run: 240 GPU-minutes, over the budget")
    assert not c.test.candidate and c.head_sha == "h" * 40
    assert sweeps.sweep_of("d1") == ("octo/miles", "2026-W19") and sweeps.sweep_of("d2") is None


def test_a_sweep_recorded_again_keeps_its_dispatches_and_drops_what_is_no_longer_parked(store: Store) -> None:
    sweeps = SweepStore(store)
    sweeps.record("octo/miles", "2026-W19", "h" * 40, _tests())
    sweeps.ran("octo/miles", "2026-W19", "tests/a.py", SUITE, dispatch_id="d1")
    sweeps.record("octo/miles", "2026-W19", "h" * 40, _tests()[:2])  # taken up again after its worker died
    found = sweeps.tests("octo/miles", "2026-W19")
    assert [(r.test.path, r.test.dispatch_id) for r in found] == [("tests/a.py", "d1"), ("tests/b.py", None)]


def test_the_periods_of_a_repository_come_latest_first(store: Store) -> None:
    sweeps = SweepStore(store)
    for period in ("2026-W18", "2026-W19", "2026-W20"):
        sweeps.record("octo/miles", period, "h" * 40, _tests()[:1])
    sweeps.record("octo/slime", "2026-W21", "h" * 40, _tests()[:1])
    assert sweeps.periods("octo/miles") == ["2026-W20", "2026-W19"]
    assert sweeps.periods("octo/miles", 5) == ["2026-W20", "2026-W19", "2026-W18"]
    assert sweeps.periods("octo/nothing") == []


@pytest.mark.parametrize("repo", ["octo/miles", "o/" + "r" * 290])
def test_a_long_repository_name_fits(store: Store, repo: str) -> None:
    sweeps = SweepStore(store)
    assert sweeps.take(repo, "w1", now=1.0, lease_seconds=LEASE) is not None
    sweeps.record(repo, "2026-W19", "h" * 40, _tests()[:1])
    assert sweeps.periods(repo) == ["2026-W19"]


def test_the_migration_goes_down_and_up_again(store: Store) -> None:
    """Down, the sweep's tables go and dispatches need a PR again (the sweep's own are dropped)."""
    from alembic import command
    from sqlalchemy import inspect

    runs = DispatchStore(store)
    runs.add("d1", "octo/miles", None, "h" * 40, "s", ["tests/a.py"], 1.0, "rocmbot")
    runs.add("d2", "octo/miles", 7, "h" * 40, "s", ["tests/a.py"], 1.0, "dev")
    with store.engine.begin() as conn:
        command.downgrade(store._alembic_config(conn), "-1")  # the sweep's, the last migration
    tables = set(inspect(store.engine).get_table_names())
    assert "reenable_sweeps" not in tables and "reenable_tests" not in tables
    assert [d.dispatch_id for d in runs.for_pr("octo/miles", 7)] == ["d2"] and runs.get("d1") is None
    store.upgrade()
    assert store.revision() == store.head_revision()
    assert runs.add("d3", "octo/miles", None, "h" * 40, "s", ["tests/a.py"], 1.0, "rocmbot")
