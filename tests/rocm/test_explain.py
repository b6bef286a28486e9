"""A failed job explained from its log and what rocmbot knew of its test when it dispatched it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.analysis.findings import Finding, Severity
from bot.analysis.report import Report, TestEntry
from bot.rocm.explain import explain, findings_of, head_findings
from bot.rocm.runs import _runs
from bot.store.dispatch import DispatchStore, Explanation, JobOutcome, KnownFinding
from bot.store.store import Store
from config.repo import FailureRule

MOE = "tests/e2e/megatron/test_qwen35_moe.py"
FIX = "`ep_size=2` or `pp_size=1`"
UPSTREAM = "world_size (4) is not divisible by expert_tensor_model_pipeline_parallel size (8)"


def _finding(rule: str, message: str, *, backend: str | None = "rocm", test: str | None = MOE,
             severity: Severity = Severity.ERROR, fix: str | None = "`ep_size=2` or `pp_size=1`") -> Finding:
    return Finding(rule, severity, test or "docker/Dockerfile.rocm", 11, message, fix, test, backend=backend,
                   suite="stage-c-4-gpu-mi350" if backend == "rocm" else None)


def _entry(backend: str, line: int) -> TestEntry:
    return TestEntry(MOE, line, f"register_{backend}_ci", backend, "stage-c-4-gpu-mi350", 4, 1600, None,
                     "modified")


def test_a_heads_findings_are_kept_per_test_with_the_images_pins_and_the_rocm_markers_line() -> None:
    report = Report("analyze", "b" * 40, "h" * 40, [_entry("cuda", 3), _entry("rocm", 4)], [], [
        _finding("PAR002", UPSTREAM.replace("(4)", "(8)").replace("(8)", "(16)", 1), backend="cuda"),
        _finding("PAR002", UPSTREAM),
        _finding("PIN001", "`numba` is pinned to 0.65.1 here and 0.61 there", test=None, backend=None),
        _finding("REG004", "too large", test=None, backend=None),
    ])
    known = head_findings(report)
    (par,) = known.tests[MOE]
    assert (par.rule, par.message, par.fix, par.line) == ("PAR002", UPSTREAM, FIX, 11)
    assert par.fingerprint.startswith("PAR002:")
    assert [p.rule for p in known.pins] == ["PIN001"] and known.markers == {MOE: 4}
    assert [f.rule for f in known.of(MOE)] == ["PAR002", "PIN001"]
    assert findings_of(known.of(MOE))[0] == Finding("PAR002", Severity.ERROR, MOE, 11, UPSTREAM,
                                                    "`ep_size=2` or `pp_size=1`", MOE)


def _known(message: str = UPSTREAM, rule: str = "PAR002") -> list[KnownFinding]:
    return [KnownFinding(rule, "error", MOE, 11, message, "`ep_size=2` or `pp_size=1`", MOE, f"{rule}:x")]


def test_megatrons_world_size_error_is_the_one_the_finding_foretold() -> None:
    log = (b"\xef\xbb\xbf2026-12-02T10:00:00.0000000Z Traceback (most recent call last):\n"
           b"2026-12-02T10:00:00.0000000Z   File \"/__w/miles/miles/train.py\", line 9, in <module>\n"
           b"2026-12-02T10:00:00.0000000Z RuntimeError: " + UPSTREAM.encode() + b"\n")
    found = explain(7, log, _known(), [], ())
    assert (found.job_id, found.kind, found.rule, found.fix) == (7, "predicted", "PAR002", FIX)
    assert found.excerpt == (f"RuntimeError: {UPSTREAM}", "at train.py:9 in <module>")
    assert found.unavailable is None and found.signature is not None


def test_an_oom_is_infrastructure_and_a_repositorys_own_pattern_counts() -> None:
    log = b"torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB\n"
    oom = explain(7, log, _known(), [], ())
    assert (oom.kind, oom.pattern) == ("infrastructure", "device-out-of-memory")
    assert oom.fix == "`/run-amd retry` runs it again"
    own = FailureRule(id="flaky-nfs", pattern="Stale file handle", kind="infrastructure",
                      explanation="the runner's NFS mount went away")
    nfs = explain(7, b"OSError: [Errno 116] Stale file handle\n", [], [own], ())
    assert (nfs.kind, nfs.pattern, nfs.explanation) == ("infrastructure", "flaky-nfs",
                                                        "the runner's NFS mount went away")


def test_an_error_seen_before_is_known_and_anything_else_new() -> None:
    log = b"ValueError: bad shard 3 of 8\n"
    new = explain(7, log, _known(), [], ())
    assert (new.kind, new.excerpt, new.signature) == ("new", ("ValueError: bad shard 3 of 8",),
                                                      "ValueError: bad shard N of N")
    again = explain(8, b"ValueError: bad shard 5 of 8\n", _known(), [], [new.signature or ""])
    assert (again.kind, again.seen) == ("known", ("ValueError: bad shard N of N",))


@pytest.mark.parametrize(("log", "unreadable", "why"), [
    (None, None, "GitHub no longer has it (404 or 410)"),
    (b"", None, "the log is empty"),
    (b" \n\n", None, "the log is empty"),
    (bytes(range(256)) * 100, None, "the log is not text"),
    (b"x", "the download was cut short", "the download was cut short"),
])
def test_a_log_that_cannot_be_read_says_why_in_one_line(log: bytes | None, unreadable: str | None,
                                                        why: str) -> None:
    found = explain(7, log, _known(), [], ["earlier"], unreadable=unreadable)
    assert (found.kind, found.unavailable, found.excerpt, found.seen) == (None, why, (), ("earlier",))


def test_the_summary_shows_each_tests_failure_once_from_its_last_run(tmp_path: Path) -> None:
    db = Store(f"sqlite:///{tmp_path / 'rocmbot.db'}")
    db.upgrade()
    store = DispatchStore(db)
    other = "tests/e2e/test_other.py"
    for dispatch_id, tests in (("d1", [MOE, other]), ("d2", [MOE])):  # MOE run again on its own
        store.add(dispatch_id, "o/r", 1, "h" * 40, "stage-c-4-gpu-mi350", tests, 40.0, "dev")
    for dispatch_id, path, job in (("d1", MOE, 5), ("d1", other, 6), ("d2", MOE, 9)):
        store.record_outcome(dispatch_id, JobOutcome(path, job, "completed", "failure", None, 60.0))
        store.explain(dispatch_id, path, Explanation(job, "new", ("ValueError: x",), "why"))
    first, again = _runs(store, store.for_pr("o/r", 1, "h" * 40))
    assert [f.path for f in first.failures] == [other] and [f.path for f in again.failures] == [MOE]
    store.record_outcome("d2", JobOutcome(MOE, 9, "completed", "success", None, 60.0, 1, 10**10))
    first, again = _runs(store, store.for_pr("o/r", 1, "h" * 40))
    assert [f.path for f in first.failures] == [other] and again.failures == ()  # it passed when run again
    db.close()
