"""The workflows of one revision: the CI model over them (:mod:`bot.analysis.ci.cadence`:
each suite's cadence, what the CI runs for a PR), and which files the per-PR ROCm
environment reads.

The per-PR ROCm environment is what a pull request's ROCm jobs run in and read: the ROCm
workflows that run for pull requests (a name that says ROCm or AMD, the reusable workflows
they call, or the configured `environment:` globs) with every repository file their jobs
name (`git apply docker/amd_patch/x.patch`, `bash scripts/ci/install.sh`), and the ROCm
image (`Dockerfile.rocm`, or the configured globs) with the files it `COPY`s or `ADD`s.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from bot.analysis.ci.cadence import HOSTED, CiModel, SuiteCadence
from bot.analysis.ci.matrix import MatrixTests, read_matrices
from bot.analysis.ci.model import Event
from bot.analysis.ci.registry import SuiteRegistry, find_registry
from bot.analysis.dockerfile import parse_dockerfile
from bot.analysis.pins import is_rocm_name
from bot.analysis.snapshot import Derived, Snapshot
from bot.analysis.source import Sources
from bot.analysis.tree import match
from bot.analysis.workflows import Job, Step, Workflow, parse_workflow

_DOCKERFILES = ["**/Dockerfile*", "**/*.dockerfile", "Dockerfile*", "*.dockerfile"]
# a word of a job that may name a repository file or folder: `docker/amd_patch/*.patch`
_WORD = re.compile(r"[\w.*?\[\]/-]+")
_WORKSPACE = re.compile(r"\$\{\{\s*github\.workspace\s*\}\}/|\$\{?GITHUB_WORKSPACE\}?/")
# `docker build -f X` / `docker buildx build --file X` (no -f: the Dockerfile of the context)
_DOCKER_BUILD = re.compile(r"docker\s+(?:buildx\s+)?build\b([^\n]*)")
_FILE_FLAG = re.compile(r"(?:^|\s)(?:-f|--file)[\s=]+[\"']?([^\s\"';|&]+)")
_WHOLE = frozenset({"", ".", "./", "*", "**", "/", "..", "-"})


@dataclass
class _Read:
    """One workflow as read: its jobs and its text."""

    workflow: Workflow
    text: str


@dataclass
class CiIndex:
    """The workflows of one revision with the events each job runs on."""

    workflows: dict[str, _Read]
    rocm_images: dict[str, tuple[str, ...]]  # ROCm Dockerfile -> the sources it copies
    environment_globs: tuple[str, ...]
    model: CiModel
    registry_problem: tuple[str, int | None, str] | None = None
    matrix: MatrixTests = field(default_factory=MatrixTests)  # tests the job matrices list
    read: Callable[[str], str | None] = lambda path: None
    _built: frozenset[str] | None = None
    _suites: dict[str, frozenset[str] | None] = field(default_factory=dict)

    def cadence(self, suite: str, nightly: bool, backend: str = "rocm") -> SuiteCadence:
        """A marker's cadence from the workflows, evaluated (the configured override aside)."""
        if nightly:
            return SuiteCadence("nightly", None, (), "the marker says `nightly=True`")
        found = self.model.cadence(suite, backend)
        if found.cadence == "external" and suite.startswith("nightly-"):
            return SuiteCadence("nightly", None, (), "a `nightly-` suite")
        return found

    def warm(self) -> None:
        """Evaluate the workflows for the events every cadence asks about (before a fork,
        so that the processes share the work)."""
        self.model.warm()

    def problems(self) -> list[tuple[str, int | None, str]]:
        """What of the CI could not be evaluated (REG005): (file, line, message)."""
        self.warm()
        out: dict[tuple[str, int | None, str], None] = {}
        for sim in list(self.model._sims.values()):
            sim.run_all()
            for note in sim.notes:
                out[(note.path, note.line, note.message)] = None
        if self.registry_problem is not None:
            path, line, message = self.registry_problem
            out[(path, line, message)] = None
        return list(out)

    def runs_for_pull_requests(self, path: str, job: Job) -> bool:
        """Whether a job may run for a pull request (carrying any label its CI tests for)."""
        run = self.model.simulate(Event(labels=self.model.labels)).run((path, job.id))
        return run is not None and run.runs is not False

    def built_for_pull_requests(self) -> frozenset[str]:
        """The Dockerfiles a job that runs for pull requests builds (`docker build -f X`,
        `docker/build-push-action` with `file: X`, in a step or a script it runs)."""
        if self._built is None:
            built: set[str] = set()
            for path, read in self.workflows.items():
                for job in read.workflow.jobs:
                    if not self.runs_for_pull_requests(path, job):
                        continue
                    for step in job.steps:
                        built.update(self._builds(step))
            self._built = frozenset(built)
        return self._built

    def _builds(self, step: Step) -> set[str]:
        out: set[str] = set()
        if (step.uses or "").lower().startswith("docker/build-push-action"):
            out.add(posixpath.normpath(step.param("file") or "Dockerfile"))
        texts = [step.run or ""]
        texts.extend(t for ref in step.scripts for c in ref.candidates
                     if (t := self.read(c)) is not None)
        for text in texts:
            for command in _DOCKER_BUILD.finditer(text):
                flag = _FILE_FLAG.search(command.group(1))
                out.add(posixpath.normpath(flag.group(1) if flag else "Dockerfile"))
        return out

    def unreached_images(self, changed: Collection[str]) -> dict[str, str]:
        """The changed ROCm Dockerfiles that no per-PR job builds: the PR's jobs run a
        prebuilt image, which the change reaches only when it is rebuilt; why, per file."""
        built = self.built_for_pull_requests()
        jobs = [job for path in self.rocm_workflows() for job in self.workflows[path].workflow.jobs
                if job.calls is None and job.steps and not _hosted(job)
                and self.runs_for_pull_requests(path, job)]
        if not jobs or any(job.container is None for job in jobs):
            return {}  # a job runs on the runner itself, or in what a script starts: not known
        images = sorted({job.container for job in jobs if job.container and "${{" not in job.container})
        shown = ", ".join(f"`{i}`" for i in images[:2]) if images else "a prebuilt image"
        out: dict[str, str] = {}
        for image in sorted(self.rocm_images):
            if image in changed and image not in built and not any(
                    posixpath.basename(b) == posixpath.basename(image) for b in built):
                out[image] = (f"`{image}` changed; the PR's ROCm jobs run {shown}, which no job "
                              "of this PR's CI builds, so the change reaches them only when that "
                              "image is rebuilt")
        return out

    def rocm_workflows(self) -> list[str]:
        """The ROCm workflows that run for pull requests."""
        rocm = {p for p in self.workflows if is_rocm_name(p) or any(
            match(g, p) for g in self.environment_globs)}
        todo = list(rocm)
        while todo:  # what a ROCm workflow calls is part of it
            for job in self.workflows[todo.pop()].workflow.jobs:
                if job.calls in self.workflows and job.calls not in rocm:
                    rocm.add(job.calls)
                    todo.append(job.calls)
        return sorted(p for p in rocm if any(self.runs_for_pull_requests(p, job)
                                             for job in self.workflows[p].workflow.jobs))

    def environment(self, changed: Collection[str]) -> list[str]:
        """The changed files that the per-PR ROCm environment reads."""
        if not changed:
            return []
        out: set[str] = set()
        for path in self.rocm_workflows():
            read = self.workflows[path]
            if path in changed:
                out.add(path)
            for job in read.workflow.jobs:
                if not _hosted(job) and self.runs_for_pull_requests(path, job):
                    out.update(p for p in changed if _names(_words(read.text, job), p))
        for image, sources in self.rocm_images.items():
            if image in changed:
                out.add(image)
            out.update(p for p in changed if _names(sources, p))
        out.update(p for p in changed if any(match(g, p) for g in self.environment_globs)
                   and not p.startswith(".github/workflows/"))
        return sorted(out)




def _hosted(job: Job) -> bool:
    """A job on a GitHub-hosted runner with no container: a helper job (a monitor, a paths
    filter), not a ROCm test job; what it reads is not the ROCm environment."""
    return job.container is None and HOSTED.match(job.runs_on.strip()) is not None


def _words(text: str, job: Job) -> tuple[str, ...]:
    """The words of a job that may name repository files: not the patterns of its path
    filters (`!(*.md)` names no file the job reads), nor a glob without a folder."""
    region = _WORKSPACE.sub("", text[job.span[0]:job.span[1]])
    for step in job.steps:
        if (step.uses or "").lower().startswith("dorny/paths-filter"):
            for line in (step.param("filters") or "").splitlines():
                if line.strip():
                    region = region.replace(line.strip(), " ")
    words = []
    for found in _WORD.findall(region):
        word = found.removeprefix("./")
        if word in _WHOLE or word.startswith(("/", "..")) or ("/" not in word and "." not in word):
            continue
        if "/" not in word and any(c in word for c in "*?[]"):
            continue
        words.append(word)
    return tuple(dict.fromkeys(words))


def _names(words: Collection[str], path: str) -> bool:
    """Whether one of the words names the path, a folder holding it, or a glob matching it."""
    for word in words:
        if word == path or (word.endswith("/") and path.startswith(word)) or \
                ("/" in word and path.startswith(word + "/")):
            return True
        if any(c in word for c in "*?[") and match(word.rstrip("/"), path):
            return True
    return False


def _index(snapshot: Snapshot) -> CiIndex:
    reads: dict[str, _Read] = {}
    paths = snapshot.workflows()
    snapshot.sources.hint(paths)
    for path in paths:
        parsed = snapshot.sources.parsed(path, parse_workflow)
        text = snapshot.sources.text(path)
        if isinstance(parsed, Workflow) and isinstance(text, str):
            reads[path] = _Read(parsed, text)
    globs = tuple(snapshot.config.environment)
    images: dict[str, tuple[str, ...]] = {}
    for path in sorted(snapshot.matching(_DOCKERFILES)):
        if not (is_rocm_name(path) or any(match(g, path) for g in globs)):
            continue
        text = snapshot.sources.text(path)
        if isinstance(text, str):
            sources = (posixpath.normpath(s) + ("/" if s.endswith("/") else "")
                       for c in parse_dockerfile(path, text).copies for s in c.sources)
            images[path] = tuple(s for s in sources if s not in _WHOLE and not s.startswith(".."))
    model = CiModel({p: r.workflow for p, r in reads.items()}, {p: r.text for p, r in reads.items()},
                    _reader(snapshot.sources))
    problem = None
    found = find_registry(sorted(snapshot.matching(["**/run_suite.py"])), model.read)
    if isinstance(found, SuiteRegistry):
        model.registry = found
    elif found is not None:
        problem = (found.path, found.line, f"the suite registry `{found.path}` cannot be read: "
                   f"{found.message}")
    tree = snapshot.tree
    matrix = read_matrices({p: r.workflow for p, r in reads.items()}, snapshot.config,
                           lambda path: tree.blob_id(path) is not None)
    model.declared = matrix.jobs
    return CiIndex(reads, images, globs, model, problem, matrix, model.read)


def _reader(sources: Sources) -> Callable[[str], str | None]:
    """The text of a file of the revision (None: not a readable text file); it holds the
    sources, not the snapshot, which a cache of the snapshot's must not keep alive."""

    def read(path: str) -> str | None:
        text = sources.text(path)
        return text if isinstance(text, str) else None

    return read


_CI: Derived[CiIndex] = Derived(_index)


def ci_index(snapshot: Snapshot) -> CiIndex:
    """The snapshot's CI, read once."""
    return snapshot.derived(_CI)


def suite_gpus(snapshot: Snapshot, suite: str | None, backend: str) -> int | None:
    """The GPUs of a suite's runner: the configuration's suite table, the suite's name
    (`-4-gpu-`), else the `runs-on:` label of the jobs that run it on the backend."""
    if not suite:
        return None
    found = snapshot.config.suite_gpus(suite)
    if found is not None:
        return found
    return ci_index(snapshot).model.runner_gpus(suite, backend)
