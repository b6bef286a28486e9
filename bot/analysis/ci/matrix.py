"""Tests a workflow job lists in its `strategy.matrix` rather than by marker calls.

slime registers its GPU tests so: a job gated by a label runs one combination per test,
`{"test_file": "test_qwen3_4B_ppo.py", "num_gpus": 8}`, and a script runs that file with that
many GPUs. Each combination whose file is found becomes a marker of its own: the suite is the
job id (the job's trigger and `if:` give its cadence), the GPUs are the entry's, and the
backend is the job's hardware (its runner labels, its image, its docker flags, else the
configuration). What cannot be used this way (a matrix computed when the workflow runs, a
file that is not in the repository, `.py` files under a key that is not configured) is a
notice, never a guess.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from bot.analysis.markers import Marker
from bot.analysis.pins.groups import hardware
from bot.analysis.report import Notice
from bot.analysis.workflows import Job, Matrix, MatrixRow, Workflow
from config.repo import RepoConfig

JobKey = tuple[str, str]  # (workflow path, job id)

# docker flags that give a container a GPU: AMD's device files, NVIDIA's runtime
_AMD_FLAGS = re.compile(r"--device[= ]+/dev/kfd\b|/dev/kfd\b")
_NVIDIA_FLAGS = re.compile(r"--gpus[= ]|--runtime[= ]+nvidia\b")
_TESTISH = re.compile(r"(?i)test")
_EXPRESSION = "${{"
MAX_NOTICES = 20  # per kind: a repository with hundreds says so in a count


@dataclass
class MatrixTests:
    """The tests of one revision's job matrices: markers by test file, the jobs each suite
    (job id) names, and notices for what could not be used."""

    markers: dict[str, list[Marker]] = field(default_factory=dict)
    jobs: dict[str, tuple[JobKey, ...]] = field(default_factory=dict)
    notices: list[Notice] = field(default_factory=list)
    registered_by: dict[str, set[str]] = field(default_factory=dict)  # test file -> workflows


def read_matrices(workflows: dict[str, Workflow], config: RepoConfig,
                  exists: Callable[[str], bool]) -> MatrixTests:
    """The matrix tests of these workflows (path -> parsed workflow); ``exists`` says
    whether the revision has a file, against which the listed names are resolved."""
    out = MatrixTests()
    settings = config.matrix_tests
    if not settings.enabled:
        return out
    jobs: dict[str, list[JobKey]] = {}
    seen: dict[tuple[str, str], int] = {}
    for path, workflow in sorted(workflows.items()):
        if path == config.dispatch.workflow:  # rocmbot's own: it runs what rocmbot sends it
            continue
        for job in workflow.jobs:
            matrix = job.matrix
            if matrix is None or _elsewhere(path, workflow, job, config):
                continue
            if matrix.computed is not None:
                if _TESTISH.search(f"{job.id} {job.raw_name or ''}"):
                    out.notices.append(Notice(
                        "test-list", f"`{job.id}` in `{path}` runs a matrix computed when the "
                        f"workflow runs (`{_short(matrix.computed)}`): the tests it runs are not "
                        "known before it runs, so none of them is listed", path, matrix.line))
                if not matrix.rows:
                    continue
            _other_keys(out, path, job, matrix, settings.file_keys)
            backend: str | None = None
            for row in matrix.rows:
                name = _first(row, settings.file_keys)
                if name is None:
                    continue
                if _EXPRESSION in name:
                    out.notices.append(Notice(
                        "test-list", f"`{job.id}` in `{path}` names a test file by an expression "
                        f"(`{_short(name)}`), which is known only when the workflow runs",
                        path, row.line))
                    continue
                test = _resolve(name, config.test_roots, exists)
                if test is None:
                    places = ", ".join(f"`{c}`" for c in _candidates(name, config.test_roots))
                    out.notices.append(Notice(
                        "test-list", f"`{job.id}` in `{path}` lists `{name}`, which is not in the "
                        f"repository (looked for {places})", path, row.line))
                    continue
                gpus = _gpus(row, settings.gpu_keys)
                if gpus == 0:
                    kind = "cpu"
                else:
                    if backend is None:
                        backend = _backend(out, config, path, workflow, job)
                    kind = backend
                func = f"matrix:{job.id}"
                index = seen.get((test, func), 0)
                seen[(test, func)] = index + 1
                out.markers.setdefault(test, []).append(Marker(
                    path=test, line=1, func=func, backend=kind, index=index, est_time=None,
                    suite=job.id, labels=(), nightly=False, disabled=None, disabled_line=None,
                    gpus=gpus, origin=(path, row.line)))
                out.registered_by.setdefault(test, set()).add(path)
                if (path, job.id) not in jobs.setdefault(job.id, []):
                    jobs[job.id].append((path, job.id))
            if matrix.truncated:
                out.notices.append(Notice(
                    "test-list", f"`{job.id}` in `{path}` has more matrix combinations than "
                    "GitHub runs (256): only the first are read", path, matrix.line))
    out.jobs = {suite: tuple(keys) for suite, keys in jobs.items()}
    out.notices = _capped(out.notices)
    return out


def _elsewhere(path: str, workflow: Workflow, job: Job, config: RepoConfig) -> bool:
    """Whether a job runs on hardware rocmbot does not check (NPU, XPU, ...)."""
    if job.id in config.matrix_tests.backends:
        return False
    kind = hardware(" ".join([job.runs_on, job.container or "", job.id, job.raw_name or "",
                              posixpath.basename(path), workflow.name or ""]))
    return kind is not None and kind not in ("cpu", "cuda", "rocm")


def _first(row: MatrixRow, keys: list[str]) -> str | None:
    return next((v for k in keys if (v := row.get(k)) is not None and v.strip()), None)


def _gpus(row: MatrixRow, keys: list[str]) -> int | None:
    value = _first(row, keys)
    if value is None or not value.strip().isdigit():
        return None
    return int(value.strip())


def _candidates(name: str, roots: list[str]) -> list[str]:
    clean = posixpath.normpath(name.strip().removeprefix("./"))
    out = [clean]
    out.extend(f"{root}/{clean}" for root in roots
               if root != "." and not clean.startswith(f"{root}/"))
    return out


def _resolve(name: str, roots: list[str], exists: Callable[[str], bool]) -> str | None:
    """The path a listed test file names: as written from the repository root, else under
    a test root (slime's job prefixes `tests/` to a bare name)."""
    return next((c for c in _candidates(name, roots) if not c.startswith("..") and exists(c)),
                None)


def _backend(out: MatrixTests, config: RepoConfig, path: str, workflow: Workflow, job: Job) -> str:
    """The backend a job's GPU tests run on (see the module's description)."""
    configured = config.matrix_tests.backends.get(job.id)
    if configured is not None:
        return configured
    kind = hardware(" ".join([job.runs_on, job.container or "", job.id, job.raw_name or "",
                              posixpath.basename(path), workflow.name or ""]))
    if kind in ("cuda", "rocm"):
        return kind
    scripts = "\n".join(step.run or "" for step in job.steps)
    if _AMD_FLAGS.search(scripts):
        return "rocm"
    if _NVIDIA_FLAGS.search(scripts):
        return "cuda"
    out.notices.append(Notice(
        "hardware", f"`{job.id}` in `{path}` runs GPU tests, but its runner (`{job.runs_on}`), "
        "image and docker flags do not say which GPUs: its tests are read as CUDA tests",
        path, job.line, fix=f"`matrix_tests: {{backends: {{{job.id}: rocm}}}}` (or cuda) in "
        "`.github/rocmbot.yml`"))
    return "cuda"


def _other_keys(out: MatrixTests, path: str, job: Job, matrix: Matrix, keys: list[str]) -> None:
    """A notice for a matrix key that lists `.py` files but is not a configured file key."""
    if any(row.get(k) is not None for row in matrix.rows for k in keys):
        return
    for key in _py_keys(matrix):
        out.notices.append(Notice(
            "test-list", f"`{job.id}` in `{path}` lists `.py` files under the matrix key "
            f"`{key}`, which is not read as a test file key", path, matrix.line,
            fix=f"`matrix_tests: {{file_keys: [{', '.join([*keys, key])}]}}` in "
            "`.github/rocmbot.yml`"))


def _py_keys(matrix: Matrix) -> Iterator[str]:
    found: dict[str, None] = {}
    for row in matrix.rows:
        for key, value in row.values:
            if "." not in key and value.strip().endswith(".py") and _EXPRESSION not in value:
                found[key] = None
    yield from found


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _capped(notices: list[Notice]) -> list[Notice]:
    """At most MAX_NOTICES of each kind and message start, then one that counts the rest."""
    kept: list[Notice] = []
    counts: dict[str, int] = {}
    for notice in notices:
        counts[notice.kind] = counts.get(notice.kind, 0) + 1
        if counts[notice.kind] <= MAX_NOTICES:
            kept.append(notice)
    for kind, count in counts.items():
        if count > MAX_NOTICES:
            kept.append(Notice(kind, f"{count - MAX_NOTICES} more `{kind}` notices like these"))
    return kept
