"""What the repository's own CI runs: which workflows run each suite, on which events, and
which files the per-PR ROCm environment reads.

A suite is **per-PR** when a job of a workflow that runs for pull requests names it (in its
command, its `with:` inputs or its matrix), **nightly** when only scheduled (or other
non-PR) runs do, and **external** when no workflow of the repository names it. A reusable
workflow (`workflow_call`) runs on its callers' events; one that no workflow of the
repository calls is called from elsewhere and counts as run for pull requests, as does a
workflow without `on:` (a fragment GitHub would not run, kept as the tests wrote it).

The per-PR ROCm environment is what a pull request's ROCm jobs run in and read: the ROCm
workflows that run for pull requests (a name that says ROCm or AMD, the reusable workflows
they call, or the configured `environment:` globs) with every repository file their jobs
name (`git apply docker/amd_patch/x.patch`, `bash scripts/ci/install.sh`), and the ROCm
image (`Dockerfile.rocm`, or the configured globs) with the files it `COPY`s or `ADD`s.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection
from dataclasses import dataclass, field

from bot.analysis.dockerfile import parse_dockerfile
from bot.analysis.pins import is_rocm_name
from bot.analysis.report import Cadence
from bot.analysis.snapshot import Derived, Snapshot
from bot.analysis.tree import match
from bot.analysis.workflows import PR_EVENTS, Job, Workflow, job_events, parse_workflow

_CALLED = "workflow_call"
_DOCKERFILES = ["**/Dockerfile*", "**/*.dockerfile", "Dockerfile*", "*.dockerfile"]
# a word of a job that may name a repository file or folder: `docker/amd_patch/*.patch`
_WORD = re.compile(r"[\w.*?\[\]/-]+")
_WORKSPACE = re.compile(r"\$\{\{\s*github\.workspace\s*\}\}/|\$\{?GITHUB_WORKSPACE\}?/")
_NAME_CHAR = re.compile(r"[\w.-]")
_WHOLE = frozenset({"", ".", "./", "*", "**", "/", "..", "-"})


@dataclass
class _Read:
    """One workflow as read: its jobs, its text, and the events it runs on."""

    workflow: Workflow
    text: str
    events: frozenset[str] = frozenset()


@dataclass
class CiIndex:
    """The workflows of one revision with the events each job runs on."""

    workflows: dict[str, _Read]
    rocm_images: dict[str, tuple[str, ...]]  # ROCm Dockerfile -> the sources it copies
    environment_globs: tuple[str, ...]
    _suites: dict[str, frozenset[str] | None] = field(default_factory=dict)

    def events_naming(self, suite: str) -> frozenset[str] | None:
        """The events of every job that names the suite; None when no workflow names it."""
        if suite not in self._suites:
            found: set[str] | None = None
            for read in self.workflows.values():
                if not _named(read.text, suite, 0, len(read.text)):
                    continue
                found = found or set()
                in_job = False
                for job in read.workflow.jobs:
                    if _named(read.text, suite, job.span[0], job.span[1]):
                        found |= job_events(read.events, job.condition)
                        in_job = True
                if not in_job:  # named outside the jobs (a workflow-level input or env)
                    found |= read.events
            self._suites[suite] = None if found is None else frozenset(found)
        return self._suites[suite]

    def cadence(self, suite: str, nightly: bool) -> Cadence:
        """A marker's cadence from the workflows (the configured override aside)."""
        if nightly:
            return "nightly"
        events = self.events_naming(suite)
        if events is not None and events & PR_EVENTS:
            return "per-pr"
        if events is not None or suite.startswith("nightly-"):
            return "nightly"
        return "external"

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
        return sorted(p for p in rocm if self.workflows[p].events & PR_EVENTS)

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
                if job_events(read.events, job.condition) & PR_EVENTS:
                    out.update(p for p in changed if _names(_words(read.text, job), p))
        for image, sources in self.rocm_images.items():
            if image in changed:
                out.add(image)
            out.update(p for p in changed if _names(sources, p))
        out.update(p for p in changed if any(match(g, p) for g in self.environment_globs)
                   and not p.startswith(".github/workflows/"))
        return sorted(out)


def _named(text: str, word: str, start: int, end: int) -> bool:
    """Whether the word occurs whole in text[start:end], not as part of a longer name (no
    word character, dot or dash right before or after it). A plain substring search: a
    pattern that opens with a look-behind is tried at every position of every workflow."""
    at = text.find(word, start, end)
    while at != -1:
        after = at + len(word)
        if (at == 0 or not _NAME_CHAR.match(text, at - 1)) and \
                (after >= end or not _NAME_CHAR.match(text, after)):
            return True
        at = text.find(word, at + 1, end)
    return False


def _words(text: str, job: Job) -> tuple[str, ...]:
    region = _WORKSPACE.sub("", text[job.span[0]:job.span[1]])
    words = []
    for found in _WORD.findall(region):
        word = found.removeprefix("./")
        if word in _WHOLE or word.startswith(("/", "..")) or ("/" not in word and "." not in word):
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
    _events(reads)
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
    return CiIndex(reads, images, globs)


def _events(reads: dict[str, _Read]) -> None:
    """Each workflow's events: its own triggers, and for a reusable one its callers' jobs'."""
    callers: dict[str, list[tuple[str, Job]]] = {}
    for path, read in reads.items():
        for job in read.workflow.jobs:
            if job.calls:
                callers.setdefault(job.calls, []).append((path, job))
    done: dict[str, frozenset[str]] = {}

    def events(path: str, depth: int) -> frozenset[str]:
        if path in done:
            return done[path]
        triggers = reads[path].workflow.triggers or frozenset({"pull_request"})  # no `on:`
        out = set(triggers - {_CALLED})
        if _CALLED in triggers and depth < 8:
            calls = callers.get(path, [])
            if not calls:
                out.add("pull_request")  # called from another repository's workflows
            for caller, job in calls:
                if caller != path:
                    out |= job_events(events(caller, depth + 1), job.condition)
        done[path] = frozenset(out)
        return done[path]

    for path, read in reads.items():
        read.events = events(path, 0)


_CI: Derived[CiIndex] = Derived(_index)


def ci_index(snapshot: Snapshot) -> CiIndex:
    """The snapshot's CI, read once."""
    return snapshot.derived(_CI)
