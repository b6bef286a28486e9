"""Tables of the durable store: deliveries, per-PR leases, the effects ledger, ROCm runs, and
the re-enable sweep."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)

metadata = MetaData()

# SQLite only makes INTEGER PRIMARY KEY an auto-incrementing row id.
_ID = BigInteger().with_variant(Integer(), "sqlite")

deliveries = Table(
    "deliveries",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("delivery_id", String(100), nullable=False, unique=True),
    Column("event", String(100), nullable=False),
    Column("action", String(100)),
    Column("installation_id", BigInteger),
    Column("repository", String(300)),
    Column("pr_number", Integer),
    Column("pr_key", String(320)),
    Column("head_sha", String(64)),
    Column("payload", Text, nullable=False),
    Column("status", String(20), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", Float, nullable=False),
    Column("lease_owner", String(200)),
    Column("lease_expires_at", Float),
    Column("last_error", Text),
    Column("received_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("finished_at", Float),
    Index("ix_deliveries_due", "status", "next_attempt_at"),
    Index("ix_deliveries_pr", "pr_key", "id"),
)

pr_leases = Table(
    "pr_leases",
    metadata,
    Column("pr_key", String(320), primary_key=True),
    Column("owner", String(200), nullable=False),
    Column("expires_at", Float, nullable=False),
)

effects = Table(
    "effects",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("key", String(512), nullable=False, unique=True),
    Column("kind", String(50), nullable=False),
    Column("target", String(500), nullable=False),
    Column("status", String(20), nullable=False),
    Column("result", Text),
    Column("delivery_id", String(100)),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)

selections = Table(
    "selections",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("repository", String(300), nullable=False),
    Column("pr_number", Integer, nullable=False),
    Column("head_sha", String(64), nullable=False),
    Column("author", String(100), nullable=False),
    Column("tests", Text, nullable=False),  # JSON: [{path, suite, est_time, gpus, tier}]
    Column("errors", Integer, nullable=False),
    Column("gpu_minutes", Float, nullable=False),
    Column("check_run_id", BigInteger),
    Column("state", String(30), nullable=False),  # selected | pending | approved | dispatched | blocked
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    # JSON: what the analysis of the head found on each ROCm test, to explain a failed run by
    # (bot.store.dispatch.HeadFindings); NULL when the head was analysed before it was kept
    Column("findings", Text),
    UniqueConstraint("repository", "pr_number", "head_sha", name="uq_selection_head"),
)

approvals = Table(
    "approvals",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("repository", String(300), nullable=False),
    Column("pr_number", Integer, nullable=False),
    Column("head_sha", String(64), nullable=False),
    Column("tests_hash", String(64), nullable=False),
    Column("approver", String(100), nullable=False),
    Column("via", String(30), nullable=False),  # command | button | review
    Column("created_at", Float, nullable=False),
    UniqueConstraint("repository", "pr_number", "head_sha", "tests_hash", name="uq_approval"),
)

dispatches = Table(
    "dispatches",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("dispatch_id", String(40), nullable=False, unique=True),
    Column("repository", String(300), nullable=False),
    Column("pr_number", Integer),  # NULL: a run of the default branch's head (the re-enable sweep)
    Column("head_sha", String(64), nullable=False),
    Column("suite", String(200), nullable=False),
    Column("tests", Text, nullable=False),  # space-separated paths
    Column("gpu_minutes", Float, nullable=False),
    Column("requested_by", String(100), nullable=False),
    Column("status", String(30), nullable=False),  # requested | queued | in_progress | completed
    Column("conclusion", String(30)),
    Column("run_id", BigInteger),
    Column("run_url", String(500)),
    Column("check_run_id", BigInteger),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    # The run news the status shows: its attempt (NULL: none yet, taken as the first) and GitHub's
    # time of it (whole seconds since the epoch), so late news of an earlier state is ignored.
    Column("run_attempt", Integer),
    Column("news_at", BigInteger),
    # Its tests are parked (disabled markers, `/run-amd disabled`): the workflow is dispatched
    # with `include_disabled`, again so when the dispatch is completed or re-run.
    Column("include_disabled", Boolean, nullable=False, server_default=false()),
    Index("ix_dispatches_pr", "repository", "pr_number", "head_sha"),
    Index("ix_dispatches_run", "repository", "run_id"),
    Index("ix_dispatches_created", "repository", "created_at"),
)

# One row per test of a dispatch that ran as a job of its own (the targeted workflow's matrix):
# rows of different tests never contend, so concurrent `workflow_job` deliveries need no lock.
test_outcomes = Table(
    "test_outcomes",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("dispatch_id", String(40), nullable=False),
    Column("path", String(500), nullable=False),
    Column("job_id", BigInteger, nullable=False),
    Column("status", String(30), nullable=False),  # queued | in_progress | completed
    Column("conclusion", String(30)),
    Column("job_url", String(500)),
    Column("seconds", Float),
    Column("updated_at", Float, nullable=False),
    Column("run_attempt", Integer),  # as in dispatches: the job's run attempt and time
    Column("news_at", BigInteger),
    # JSON: a failed job's log, explained (bot.store.dispatch.Explanation), and the job it is
    # of: a re-run's job keeps the earlier job's until its own failure is explained
    Column("triage", Text),
    Column("triage_job", BigInteger),
    UniqueConstraint("dispatch_id", "path", name="uq_test_outcome"),
)

# The re-enable sweep (bot/rocm/reenable.py): one row per repository the service has swept or
# looked at, with its schedule and the lease that lets one worker at a time sweep it.
reenable_sweeps = Table(
    "reenable_sweeps",
    metadata,
    Column("repository", String(300), primary_key=True),
    Column("cadence", String(10)),  # off | daily | weekly, as last read; NULL: never read
    Column("period", String(20)),  # the last period swept (`2026-05-04`, `2026-W19`)
    Column("swept_at", Float),  # when that sweep ended
    Column("checked_at", Float),  # when the repository's configuration was last read
    Column("owner", String(200)),  # the lease: who is at it, until expires_at
    Column("expires_at", Float, nullable=False, server_default="0"),
    Column("retry_at", Float, nullable=False, server_default="0"),  # after a failure: not before
    Column("last_error", Text),
)

# What each sweep found: every parked ROCm test of the head it audited, whether it ran (its
# dispatch) or why not, and the patch that brings it back. Its result is its dispatch's.
reenable_tests = Table(
    "reenable_tests",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("repository", String(300), nullable=False),
    Column("period", String(20), nullable=False),
    Column("head_sha", String(64), nullable=False),
    Column("path", String(500), nullable=False),
    Column("suite", String(200), nullable=False),
    Column("reason", Text, nullable=False),
    Column("launch", Text, nullable=False),  # the launch's verdict: `valid`, `PAR002; fix: ...`
    Column("candidate", Boolean, nullable=False),
    Column("gpu_minutes", Float, nullable=False),
    Column("note", Text),  # why it did not run: not a candidate, over the budget, refused
    Column("dispatch_id", String(40)),
    Column("patch", Text),  # a diff that takes its `disabled=` out
    Column("created_at", Float, nullable=False),
    UniqueConstraint("repository", "period", "path", "suite", name="uq_reenable_test"),
    Index("ix_reenable_tests_dispatch", "dispatch_id"),
)
