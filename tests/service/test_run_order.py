"""Run news in order, on SQLite and PostgreSQL: a dispatch's run and each test's job only move
forward (queued, in progress, completed, per attempt), whatever order the news arrive in."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

from alembic import command

from bot.store.dispatch import Dispatch, DispatchStore, JobOutcome, RunNews
from bot.store.store import Store

A = "tests/e2e/test_a.py"
T = TypeVar("T")


def _accepted(runs: DispatchStore, dispatch_id: str = "d1", run_id: int | None = 5) -> None:
    assert runs.add(dispatch_id, "octo/miles", 1, "a" * 40, "stage-c-4-gpu-mi350", [A], 40.0, "dev")
    runs.accept(dispatch_id, run_id)


def _state(runs: DispatchStore, dispatch_id: str = "d1") -> tuple[int | None, str, str | None, int | None]:
    record = runs.get(dispatch_id)
    assert record is not None
    return record.run_attempt, record.status, record.conclusion, record.news_at


def test_a_late_in_progress_does_not_undo_completed(store: Store) -> None:
    runs = DispatchStore(store)
    _accepted(runs)
    assert runs.advance("d1", RunNews(1, "queued", None, 100), run_id=5, run_url="https://x/5")
    assert runs.advance("d1", RunNews(1, "completed", "success", 104))
    assert not runs.advance("d1", RunNews(1, "in_progress", None, 102))  # delivered late
    assert not runs.advance("d1", RunNews(1, "queued", None, 110))  # a later second, an earlier state
    record = runs.get("d1")
    assert record is not None and not record.active
    assert (record.status, record.conclusion, record.run_url) == ("completed", "success", "https://x/5")
    assert runs.for_pr("octo/miles", 1)[0].active is False


def test_the_same_state_keeps_the_first_news_of_a_second_and_takes_a_later_one(store: Store) -> None:
    runs = DispatchStore(store)
    _accepted(runs)
    assert runs.advance("d1", RunNews(1, "completed", "failure", 104))
    assert not runs.advance("d1", RunNews(1, "completed", "failure", 104))  # redelivered: idempotent
    assert not runs.advance("d1", RunNews(1, "completed", "success", 104))  # the same second: first stays
    assert not runs.advance("d1", RunNews(1, "completed", "success", None))  # no time: not later
    assert _state(runs) == (1, "completed", "failure", 104)
    assert runs.advance("d1", RunNews(1, "completed", "success", 105))
    assert _state(runs) == (1, "completed", "success", 105)


def test_a_re_run_starts_over_and_an_earlier_attempts_news_is_ignored(store: Store) -> None:
    runs = DispatchStore(store)
    _accepted(runs)
    assert runs.advance("d1", RunNews(1, "completed", "failure", 104))
    assert runs.advance("d1", RunNews(2, "queued", None, 90))  # a re-run: earlier seconds do not matter
    record = runs.get("d1")
    assert record is not None and record.active and _state(runs) == (2, "queued", None, 90)
    assert not runs.advance("d1", RunNews(1, "completed", "failure", 300))  # the first attempt, late
    assert not runs.advance("d1", RunNews(1, "in_progress", None, 300))
    assert runs.advance("d1", RunNews(2, "in_progress"))  # a job's news: no time, a later state
    assert runs.advance("d1", RunNews(2, "completed", "success", 130))
    assert _state(runs) == (2, "completed", "success", 130)


def test_news_not_taken_still_names_the_run(store: Store) -> None:
    """A dispatch the bot cancelled before it learnt the run's id: a late `in_progress` moves
    nothing, but the run's id is learnt, so its jobs' news find the dispatch."""
    runs = DispatchStore(store)
    _accepted(runs, run_id=None)
    runs.update("d1", status="completed", conclusion="cancelled")
    assert not runs.advance("d1", RunNews(1, "in_progress", None, 100), run_id=7, run_url="https://x/7")
    record = runs.by_run("octo/miles", 7)
    assert record is not None and (record.status, record.conclusion, record.run_url) == (
        "completed", "cancelled", "https://x/7")
    assert runs.advance("d1", RunNews(1, "completed", "success", 101), run_id=7)  # GitHub's word wins
    assert _state(runs) == (1, "completed", "success", 101)


def test_a_withdrawn_or_unaccepted_dispatch_takes_its_runs_news(store: Store) -> None:
    runs = DispatchStore(store)
    assert runs.add("d1", "octo/miles", 1, "a" * 40, "s", [A], 40.0, "dev")  # `dispatching`
    assert runs.advance("d1", RunNews(1, "in_progress", None, 100), run_id=5)
    runs.accept("d1", 5)  # GitHub's answer, after the run's first news: stays in progress
    assert _state(runs) == (1, "in_progress", None, 100)


def test_a_dispatch_whose_run_news_came_first_is_not_withdrawn(store: Store) -> None:
    """Giving up a dispatch GitHub has not accepted (its PR moved on) races with its run's news:
    when the news came first, the run stays as it told; only a dispatch still unaccepted is
    withdrawn."""
    runs = DispatchStore(store)
    runs.add("d1", "octo/miles", 1, "a" * 40, "s", [A], 40.0, "dev")
    runs.add("d2", "octo/miles", 1, "a" * 40, "t", [A], 40.0, "dev")
    assert runs.advance("d1", RunNews(1, "queued", None, 100), run_id=5)
    assert not runs.withdraw("d1")
    assert _state(runs) == (1, "queued", None, 100)
    assert runs.withdraw("d2")
    record = runs.get("d2")
    assert record is not None and record.status == "withdrawn"


def _at_once(items: Sequence[T], apply: Callable[[T], object], workers: int = 4) -> None:
    """Apply ``items`` from ``workers`` threads started together, each taking every n-th."""
    start = threading.Barrier(workers)
    errors: list[BaseException] = []

    def work(share: Sequence[T]) -> None:
        try:
            start.wait()
            for item in share:
                apply(item)
        except BaseException as exc:  # raised below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(items[n::workers],)) for n in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def _news(attempts: int) -> list[RunNews]:
    out = []
    for attempt in range(1, attempts + 1):
        at = 100 * attempt
        out += [RunNews(attempt, "queued", None, at), RunNews(attempt, "in_progress", None, at + 1),
                RunNews(attempt, "in_progress"), RunNews(attempt, "completed", "failure", at + 5)]
    return out


def test_concurrent_news_of_one_run_end_at_its_last_state(store: Store) -> None:
    """Workers applying one run's news at once, in any order: the one conditional UPDATE leaves
    the last state, never an earlier one written after a later one."""
    runs = DispatchStore(store)
    rng = random.Random(7)
    for round_ in range(12):
        dispatch_id = f"r{round_}"
        _accepted(runs, dispatch_id, run_id=100 + round_)
        news = _news(2) * 2  # each delivered twice
        rng.shuffle(news)
        _at_once(news, partial(runs.advance, dispatch_id))
        assert _state(runs, dispatch_id) == (2, "completed", "failure", 205), round_


def test_concurrent_news_of_one_job_end_at_its_last_outcome(store: Store) -> None:
    runs = DispatchStore(store)
    rng = random.Random(11)
    last = JobOutcome(A, 20, "completed", "success", None, 9.0, 2, 160)
    for round_ in range(8):
        dispatch_id = f"j{round_}"
        news = [JobOutcome(A, 10, "queued", None, None, None, 1, 100),
                JobOutcome(A, 10, "in_progress", None, None, None, 1, 101),
                JobOutcome(A, 10, "completed", "failure", None, 4.0, 1, 105),
                JobOutcome(A, 20, "in_progress", None, None, None, 2, 150), last] * 2
        rng.shuffle(news)
        _at_once(news, partial(runs.record_outcome, dispatch_id))
        assert runs.outcomes(dispatch_id) == {A: last}, round_


def test_a_tests_outcome_moves_forward_per_attempt(store: Store) -> None:
    runs = DispatchStore(store)
    first = JobOutcome(A, 5, "completed", "failure", "https://x/5", 61.0, 1, 200)
    assert runs.record_outcome("d1", JobOutcome(A, 5, "in_progress", None, "https://x/5", None, 1, 150))
    assert runs.record_outcome("d1", first)
    assert not runs.record_outcome("d1", JobOutcome(A, 5, "in_progress", None, "https://x/5", None, 1, 150))
    assert not runs.record_outcome("d1", JobOutcome(A, 5, "queued", None, None, None, 1, 300))
    assert not runs.record_outcome("d1", JobOutcome(A, 5, "completed", "success", None, 1.0, 1, 200))
    assert runs.outcomes("d1") == {A: first}
    rerun = JobOutcome(A, 9, "in_progress", None, "https://x/9", None, 2, 100)
    assert runs.record_outcome("d1", rerun)  # the re-run's job: a new id, the next attempt
    assert not runs.record_outcome("d1", first)  # the first attempt's news, redelivered
    assert runs.outcomes("d1") == {A: rerun}
    done = JobOutcome(A, 9, "completed", "success", "https://x/9", 30.0, 2, 160)
    assert runs.record_outcome("d1", done)
    assert runs.outcomes("d1") == {A: done} and runs.outcomes("d2") == {}


def test_rows_from_before_the_migration_move_forward(tmp_path: Path) -> None:
    """A dispatch and an outcome stored at revision 0003 (no attempt, no time) read as the first
    attempt and take news after the upgrade."""
    db = Store(f"sqlite:///{tmp_path}/old.db")
    with db.engine.begin() as conn:
        command.upgrade(db._alembic_config(conn), "0003")
    runs = DispatchStore(db)
    _accepted(runs)
    runs.update("d1", status="in_progress", run_url="https://x/5")
    with db.engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO test_outcomes (dispatch_id, path, job_id, status, updated_at)"
                             f" VALUES ('d1', '{A}', 5, 'completed', 0)")
    assert db.upgrade() == db.head_revision()
    record = runs.get("d1")
    assert isinstance(record, Dispatch) and (record.run_attempt, record.news_at) == (None, None)
    assert runs.outcomes("d1")[A].run_attempt == 1
    assert not runs.advance("d1", RunNews(1, "queued", None, 100))
    assert runs.advance("d1", RunNews(1, "completed", "success", 104))
    assert not runs.record_outcome("d1", JobOutcome(A, 5, "in_progress", None, None, None, 1, 99))
    assert _state(runs) == (1, "completed", "success", 104)
    db.close()
