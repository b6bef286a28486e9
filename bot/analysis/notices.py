"""What an analysis saw and did not understand: the notices of a report.

A finding says something is wrong; a notice says rocmbot could not tell. Each names what was
seen and where, and, when a setting would make rocmbot understand it, that setting: a call
that looks like a marker of a function the configuration does not map
(`register_hcu_ci`), a test list it cannot use (a matrix computed when the workflow runs, a
listed file that is not there), a workflow it cannot read, a GPU job none of whose tests it
knows, files it cannot read. A report with no test says what was looked for and where, so
that "0 markers" never stands alone.
"""

from __future__ import annotations

import re

from bot.analysis.ci import ci_index
from bot.analysis.ci.cadence import HOSTED, _kind
from bot.analysis.findings import Finding
from bot.analysis.pins.groups import hardware
from bot.analysis.report import Notice, TestEntry
from bot.analysis.snapshot import Snapshot
from bot.analysis.source import Unreadable
from bot.analysis.workflows import parse_workflow

# a line of a job's script that runs a program: python, pytest, torchrun, a shell script
_RUNS = re.compile(r"^\s*(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:python[\d.]*|pytest|torchrun|bash|sh|"
                   r"\S+\.sh|\S+\.py)(?:\s|$)")
_TEST_JOB = re.compile(r"(?i)test|e2e|accuracy|bench|eval")
_OTHER_HARDWARE = frozenset({"npu", "xpu", "musa"})
_OTHER_WORDS = ("mlx", "mps", "tpu", "hpu", "npu", "xpu", "musa")
_ORDER = ("unknown-marker", "no-tests", "test-list", "unmapped-job", "hardware", "workflow",
          "unreadable")
_SHOWN = 3  # files named in a notice that counts many


def notices(snap: Snapshot, tests: list[TestEntry], findings: list[Finding]) -> list[Notice]:
    """The notices of one revision's report (see the module's description)."""
    index = ci_index(snap)
    out: list[Notice] = list(index.matrix.notices)
    out.extend(_unknown_markers(snap))
    out.extend(_unread_workflows(snap))
    unreadable = sorted({f.path for f in findings if f.rule == "REG004" and f.path})
    if unreadable:
        out.append(Notice(
            "unreadable", f"{len(unreadable)} file{'s' if len(unreadable) != 1 else ''} could not "
            f"be read or parsed (REG004): {_names(unreadable)}; what they hold is not analysed",
            unreadable[0]))
    out.extend(_unmapped_jobs(snap, tests))
    if not tests:
        out.append(_nothing_found(snap))
    return sorted(out, key=lambda n: _ORDER.index(n.kind) if n.kind in _ORDER else len(_ORDER))


def _names(paths: list[str]) -> str:
    shown = ", ".join(f"`{p}`" for p in paths[:_SHOWN])
    return shown + (f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else "")


def _unknown_markers(snap: Snapshot) -> list[Notice]:
    out = []
    elsewhere: list[str] = []  # markers of hardware rocmbot does not check (NPU, XPU, ...)
    for name, paths in sorted(snap.unknown_markers.items()):
        calls = f"{len(paths)} test file{'s' if len(paths) != 1 else ''}"
        kind = hardware(name.replace("_", "-"))
        if kind in _OTHER_HARDWARE or any(f"_{word}_" in name for word in _OTHER_WORDS):
            elsewhere.append(f"`{name}` ({calls})")
            continue
        backend = kind if kind in ("cpu", "cuda", "rocm") else "rocm"
        out.append(Notice(
            "unknown-marker", f"`{name}(...)` looks like a CI marker, called at the top level of "
            f"{calls} ({_names(paths)}), but no backend is configured for it: those tests are "
            "not read", paths[0],
            fix=f"`markers: {{{name}: {backend}}}` in `.github/rocmbot.yml` (cpu, cuda or rocm: "
            "the hardware its tests run on)"))
    if elsewhere:
        out.append(Notice(
            "unknown-marker", "Markers of hardware rocmbot does not check are not read: "
            + ", ".join(elsewhere)))
    return out


def _unread_workflows(snap: Snapshot) -> list[Notice]:
    out = []
    for path in snap.workflows():
        parsed = snap.sources.parsed(path, parse_workflow)
        if isinstance(parsed, Unreadable):
            out.append(Notice("workflow", f"`{path}` could not be read ({parsed.reason}): when its "
                              "jobs run and what they run is not known", path, parsed.line))
    return out


def _unmapped_jobs(snap: Snapshot, tests: list[TestEntry]) -> list[Notice]:
    """A notice per GPU job that runs something and that no known test's suite maps to."""
    index = ci_index(snap)
    covered: set[tuple[str, str]] = set()
    for key in {(t.suite, t.backend) for t in tests if t.suite and t.backend != "cpu"}:
        covered.update(index.model.jobs_naming(*key))
    # a reusable workflow that a covered job calls runs the same tests
    called: set[str] = set()
    for path, job_id in sorted(covered):
        read = index.workflows.get(path)
        job = next((j for j in read.workflow.jobs if j.id == job_id), None) if read else None
        if job is not None and job.calls is not None:
            called.add(job.calls)
    found: list[tuple[str, str, int, str]] = []  # (workflow, job, line, command)
    for path, read in sorted(index.workflows.items()):
        workflow = read.workflow
        if path in called:
            continue
        for job in workflow.jobs:
            if (path, job.id) in covered or job.calls is not None:
                continue
            if job.container is None and HOSTED.match(job.runs_on.strip()):
                continue
            if _kind(path, workflow, job) != "rocm":  # other hardware is another CI's
                continue
            if not _TEST_JOB.search(f"{job.id} {job.raw_name or ''}"):
                continue  # a build, a release: no test to check
            command = next((line.strip() for step in job.steps for line in (step.run or "").splitlines()
                            if _RUNS.match(line)), None)
            if command is not None:
                found.append((path, job.id, job.line, command))
    if not found:
        return []
    shown = ", ".join(f"`{job}` in `{path}`" for path, job, _, _ in found[:_SHOWN])
    more = f" and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
    first = found[0]
    return [Notice(
        "unmapped-job", f"{len(found)} ROCm test job{'s' if len(found) != 1 else ''} run no test "
        f"rocmbot knows, so what {'they launch' if len(found) != 1 else 'it launches'} is not "
        f"checked: {shown}{more}", first[0], first[2],
        fix="register their tests with a marker call, or list them in a job matrix "
        "(`matrix_tests:` in `.github/rocmbot.yml`)")]


def _nothing_found(snap: Snapshot) -> Notice:
    config = snap.config
    if config.tests:
        where = "the files the `tests:` globs match (" + ", ".join(f"`{g}`" for g in config.tests) + ")"
    else:
        where = "the `.py` files under " + ", ".join(f"`{r}/`" for r in config.test_roots)
    names = ", ".join(f"`{m}`" for m in sorted(config.markers)) or "no marker function"
    workflows = len(snap.workflows())
    matrices = (f"and job matrices with a {' / '.join(f'`{k}`' for k in config.matrix_tests.file_keys)}"
                f" key in {workflows} workflow{'s' if workflows != 1 else ''}"
                if config.matrix_tests.enabled else "(job matrices not read: `matrix_tests.enabled`)")
    return Notice(
        "no-tests", f"No registered test found: looked for top-level calls of {names} in {where}, "
        f"{matrices}", fix="map the repository's marker functions under `markers:`, point "
        "`test_roots:` or `tests:` at its tests, or name the matrix keys under `matrix_tests:`")
