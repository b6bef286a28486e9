"""The fault campaigns of bench/chaos.py, small: the service and its workers as real processes,
the GitHub simulator injecting faults, on loopback. Each asserts the targets: nothing lost, no
comment, review or dispatch made twice, no effect missing (every final head's check and summary,
every accepted dispatch's run and `rocmbot / rocm` check, no dispatch in flight without a run),
every PR's sticky comment describing its final head."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from bench.chaos import (
    EP_SIZES,
    NO_FAULTS,
    VALID_EP,
    Campaign,
    Table,
    Traffic,
    case_file,
    load_campaign,
    missed_campaign,
    pg_restart_campaign,
    postgres_service,
    run_traffic,
    service_env,
    settle,
    sqlite_service,
    world,
)
from bot.analysis.engine import audit
from bot.analysis.tree import FolderTree
from bot.cli.example import BASE_FILES
from tests.pg import postgres_instance


def assert_targets(table: Table) -> None:
    assert table.sent > 0 and table.stored == table.sent, table.notes["unprocessed"]
    assert table.lost == 0 and table.dead == 0, table.notes["unprocessed"]
    assert table.duplicate_comments == 0, table.notes["replies_twice"]
    assert (table.duplicate_reviews, table.duplicate_dispatches) == (0, 0)
    assert table.duplicate_check_runs == 0, table.notes["checks_twice"]
    assert table.missing == 0, (table.notes["missing"], table.notes["expected_missing"])
    assert table.sticky_matching == table.prs, table.notes["sticky_wrong"]


@pytest.mark.parametrize("ep", EP_SIZES)
def test_the_campaigns_idea_of_a_valid_head_is_the_analysis(tmp_path: Path, ep: int) -> None:
    """What must run is derived from the scenario: a head whose test's expert grid does not fit
    the runner is not run without `--force`. The campaign's table of valid sizes agrees with
    the analysis of such a head."""
    files = {**BASE_FILES, "tests/e2e/megatron/test_chaos_000.py": case_file(0, 0, ep)}
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    report = audit(FolderTree(tmp_path))
    path = "tests/e2e/megatron/test_chaos_000.py"
    errors = [f for f in report.findings if f.path == path and f.severity == "error"]
    assert (not errors) == (ep in VALID_EP), [f.rule for f in errors]


@pytest.mark.timeout(300)
def test_sqlite_service_killed_under_github_faults(tmp_path: Path) -> None:
    """`rocmbot serve` (SQLite, in-process worker) killed with SIGKILL three times while GitHub
    answers 20% 5xx (a quarter after making the write), secondary limits and slow answers.
    Deliveries sent while it is down fail; its reconciler has them redelivered on restart."""
    with world() as w, sqlite_service(w.sim, tmp_path, reconcile_minutes=0.05) as service:
        table = load_campaign("sqlite", "sqlite", w, service,
                              Campaign(deliveries=24, prs=4, kills=3, grace=4, rate=20))
    assert_targets(table)
    assert table.kills == 3 and table.failed_attempts > 0 and table.redelivered > 0
    assert table.faults.get("status", 0) > 0 and table.faults.get("status_after", 0) > 0
    assert table.retries > 0  # deliveries failed on GitHub's 5xx and were retried


@pytest.mark.timeout(300)
def test_postgres_workers_killed_under_github_faults(tmp_path: Path, postgres_url: str) -> None:
    """`rocmbot serve --no-worker` and three `rocmbot worker` processes on PostgreSQL; a worker
    killed with SIGKILL three times (and started again) under the same faults."""
    with world() as w, postgres_service(w.sim, postgres_url, tmp_path) as service:
        table = load_campaign("postgres", "postgresql", w, service,
                              Campaign(deliveries=24, prs=4, kills=3, grace=4, rate=20))
    assert_targets(table)
    assert table.kills == 3 and table.failed_attempts == 0  # the web process never went down
    assert table.faults.get("status", 0) > 0 and table.retries > 0


@pytest.mark.timeout(300)
def test_postgres_restarted_mid_run(tmp_path: Path) -> None:
    """PostgreSQL stops for three seconds under traffic: /readyz says not ready, deliveries get
    503 and are redelivered, nothing stored before is lost, everything is processed."""
    with postgres_instance() as pg, world() as w, \
            postgres_service(w.sim, pg.url, tmp_path, workers=1, reconcile_minutes=0.05) as service:
        table = pg_restart_campaign(w, service, pg, Campaign(deliveries=30, prs=4, kills=0, faults=NO_FAULTS,
                                                             grace=6, rate=20), down_seconds=2.0)
    assert_targets(table)
    notes = table.notes
    assert notes["readyz_probes_while_down"] > 0
    assert notes["readyz_not_ready_while_down"] == notes["readyz_probes_while_down"]
    assert notes["readyz_seconds_to_ready_after_start"] is not None
    assert notes["still_stored_after"] == notes["stored_before_restart"] > 0
    assert notes["webhook_503"] > 0 and table.redelivered >= notes["webhook_503"]


@pytest.mark.timeout(300)
def test_missed_deliveries_are_recovered_by_rocmbot_reconcile(tmp_path: Path) -> None:
    """The service down for a window: its deliveries fail to connect; `rocmbot reconcile` has
    GitHub redeliver them, each is processed once, and a second run asks for nothing."""
    with world() as w, sqlite_service(w.sim, tmp_path, reconcile_minutes=0) as service:
        env = service_env(w.sim, service.settings.database_url)
        size = Campaign(deliveries=24, prs=4, kills=0, faults=NO_FAULTS, rate=20)
        table = missed_campaign(w, service, size, env)
    assert_targets(table)
    failed = table.notes["failed_while_down"]
    assert failed > 0 and table.redelivered == failed == table.failed_attempts
    assert f"{failed} redelivery requests" in table.notes["first_reconcile"]
    assert table.notes["second_reconcile"].endswith(", 0 redelivery requests")
    assert table.notes["attempts_over_one"] == 0  # processed once each


@pytest.mark.timeout(300)
def test_the_service_reconciles_what_it_missed_when_it_starts(tmp_path: Path) -> None:
    """With ROCMBOT_RECONCILE_MINUTES, `rocmbot serve` asks for the deliveries that failed while
    it was down shortly after it starts again, without anyone running `rocmbot reconcile`."""
    with world() as w, sqlite_service(w.sim, tmp_path, reconcile_minutes=10) as service:
        NO_FAULTS.inject(w.sim)
        traffic = Traffic(w, service.url, random.Random(3), prs=3)
        run_traffic(traffic, service, 3, max_backlog=50, rate=20)
        for sent in traffic.futures:
            sent.result()
        (web,) = service.web
        web.stop()
        run_traffic(traffic, service, 12, max_backlog=50, rate=20)
        for sent in traffic.futures:
            sent.result()
        failed = {f.result().guid for f in traffic.futures[3:]}
        assert all(f.result().status_code == 0 for f in traffic.futures[3:])
        web.start()
        service.wait_ready()
        guids = {d.guid for d in traffic.close()}
        assert settle(service, guids, time.monotonic() + 60, grace=120) == 0  # no pass of the test's own
        assert service.store.stored_ids(list(guids)) == guids
        redelivered = [d for d in w.sim.state.deliveries if d.redelivery]
        assert {d.guid for d in redelivered} == failed and len(redelivered) == len(failed)
