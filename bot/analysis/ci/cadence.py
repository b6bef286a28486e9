"""Which of the repository's CI jobs run a suite, and for which pull requests.

A suite is run by the jobs that name it (in their command, `with:` inputs or matrix) and
whose hardware fits the marker's backend (an AMD job for a ROCm marker). Those jobs are
evaluated with :mod:`bot.analysis.ci.model`:

- **per-pr**: a job runs for a pull request (or may: a path filter decides) without a label
  the repository's CI does not ask of every pull request;
- **on-label**: it runs only when the pull request carries a further label (`gate`);
- **nightly**: no job runs it for pull requests, one runs it on a schedule, a push or by hand;
- **external**: no job of this repository runs it.

The labels that at least half of the repository's per-PR GPU jobs need (SGLang's `run-ci`)
are its **CI label**: the switch of its CI as a whole, assumed present, not a gate of one
suite. Of the other labels a job needs, the gate named is the one the fewest GPU jobs need
(the most specific: `run-ci-extra`, not `run-ci`). When the
repository declares its suites' cadence (SGLang's `test/run_suite.py`), that declaration
says per-commit or nightly and the workflows say how a per-commit suite is gated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from bot.analysis.ci.logic import or3
from bot.analysis.ci.model import LABEL_TEST, Event, JobRun, Simulation
from bot.analysis.ci.registry import SuiteRegistry
from bot.analysis.pins import hardware
from bot.analysis.report import Cadence
from bot.analysis.workflows import Job, Workflow

_LABEL_NAME = re.compile(r"label\.name\s*==\s*'([^'\n]{1,100})'", re.IGNORECASE)
_MAX_LABELS = 24  # candidate labels tried one by one: each is a simulation of the whole CI
_OTHER_EVENTS = ("schedule", "push", "workflow_dispatch")
JobKey = tuple[str, str]  # (workflow path, job id)
NO_JOB = "no job of this repository's workflows runs it"


@dataclass(frozen=True, slots=True)
class SuiteCadence:
    """A suite's cadence on one backend, with the label that gates it and the jobs."""

    cadence: Cadence
    gate: str | None = None
    jobs: tuple[JobKey, ...] = ()
    why: str = ""


@dataclass(frozen=True, slots=True)
class RepoCiRun:
    """Whether the repository's own CI runs a suite for one pull request."""

    runs: bool | None
    job: JobKey | None  # the job that runs it (or might)
    why: str


@dataclass
class CiModel:
    """The repository's CI evaluated for pull requests, once per set of labels."""

    workflows: Mapping[str, Workflow]
    texts: Mapping[str, str]
    read: Callable[[str], str | None]
    registry: SuiteRegistry | None = None
    declared: Mapping[str, tuple[JobKey, ...]] = field(default_factory=dict)  # matrix suites
    _sims: dict[tuple[str, frozenset[str] | None, frozenset[str] | None], Simulation] = field(
        default_factory=dict)
    _jobs: dict[tuple[str, str], tuple[JobKey, ...]] = field(default_factory=dict)
    _labels: frozenset[str] | None = None
    _ci_labels: frozenset[str] | None = None
    _required: dict[JobKey, frozenset[str]] = field(default_factory=dict)
    _gpu: list[JobKey] | None = None
    _cadences: dict[tuple[str, str], SuiteCadence] = field(default_factory=dict)

    # -- simulations -----------------------------------------------------------------------

    def simulate(self, event: Event) -> Simulation:
        key = (event.name, event.labels, event.changed)
        found = self._sims.get(key)
        if found is None:
            found = Simulation(self.workflows, self.read, event)
            self._sims[key] = found
        return found

    @property
    def labels(self) -> frozenset[str]:
        """Every label a workflow tests for (the candidates a gate may need)."""
        if self._labels is None:
            found: set[str] = set()
            for text in self.texts.values():
                found.update(LABEL_TEST.findall(text))
                found.update(_LABEL_NAME.findall(text))
            self._labels = frozenset(sorted(found)[:_MAX_LABELS])
        return self._labels

    def required(self, key: JobKey) -> frozenset[str]:
        """The labels without which the job does not run for a pull request."""
        if key not in self._required:
            self._required[key] = self._without(key)
        return self._required[key]

    def _without(self, key: JobKey) -> frozenset[str]:
        everything = self.simulate(Event(labels=self.labels)).run(key)
        if everything is None or everything.runs is False:
            return frozenset()
        out = set()
        for label in self.labels:
            without = self.simulate(Event(labels=self.labels - {label})).run(key)
            if without is not None and without.runs is False:
                out.add(label)
        return frozenset(out)

    @property
    def ci_labels(self) -> frozenset[str]:
        """The labels at least half of the per-PR GPU jobs need: the switch of the CI."""
        if self._ci_labels is None:
            needed = [self.required(k) for k in self._gpu_jobs()]
            self._ci_labels = frozenset(
                label for label in self.labels
                if needed and 2 * sum(label in n for n in needed) >= len(needed))
        return self._ci_labels

    def _gpu_jobs(self) -> list[JobKey]:
        """The jobs on GPU hardware that run for a pull request carrying every label."""
        if self._gpu is not None:
            return self._gpu
        sim = self.simulate(Event(labels=self.labels))
        out = []
        for path, workflow in sorted(self.workflows.items()):
            for job in workflow.jobs:
                kind = hardware(" ".join([job.runs_on, job.container or "", job.id, job.raw_name or ""]))
                if job.calls is None and kind not in (None, "cpu") and \
                        (run := sim.run((path, job.id))) is not None and run.runs is not False:
                    out.append((path, job.id))
        self._gpu = out
        return out

    def _gate(self, key: JobKey) -> str | None:
        """The most specific label a job needs beyond the CI label."""
        extra = self.required(key) - self.ci_labels
        if not extra:
            return None
        share = {label: sum(label in self.required(k) for k in self._gpu_jobs()) for label in extra}
        return min(sorted(extra), key=lambda label: share[label])

    def warm(self) -> None:
        """Work out what every cadence reads: the CI labels, and each event's run."""
        _ = self.ci_labels
        for event in _OTHER_EVENTS:
            self.simulate(Event(name=event, labels=frozenset()))

    # -- suites ----------------------------------------------------------------------------

    def jobs_naming(self, suite: str, backend: str) -> tuple[JobKey, ...]:
        """The jobs that name the suite, whose hardware fits the backend."""
        key = (suite, backend)
        if suite in self.declared:  # a job matrix lists the suite's tests: that job runs them
            return self.declared[suite]
        if key not in self._jobs:
            found: list[JobKey] = []
            for path, workflow in self.workflows.items():
                text = self.texts[path]
                if not named(text, suite, 0, len(text)):
                    continue
                naming = [job for job in workflow.jobs if _names_suite(text, job, suite)]
                if not naming and not any(named(text, suite, *job.span) for job in workflow.jobs):
                    naming = list(workflow.jobs)  # named outside the jobs: a workflow's `env:`
                    if not naming and _fits(path, workflow, None, backend):
                        found.append((path, ""))  # a workflow with no jobs: its triggers tell
                found.extend((path, job.id) for job in naming if _fits(path, workflow, job, backend))
            self._jobs[key] = tuple(found)
        return self._jobs[key]

    def runner_gpus(self, suite: str, backend: str) -> int | None:
        """The GPUs of the runners of the jobs that run a suite, from their `runs-on:` labels
        (`linux-mi325-gpu-8`, `linux-mi300-1gpu-sglang`, `...-8-gpu-...`): the fewest, when
        every such job's label says; None when one does not (a `${{ matrix.runner }}`)."""
        counts: list[int] = []
        for path, job_id in self.jobs_naming(suite, backend):
            job = next((j for j in self.workflows[path].jobs if j.id == job_id), None)
            if job is not None and job.container is None and HOSTED.match(job.runs_on.strip()):
                continue  # a GitHub-hosted runner has no GPU: it names the suite, another runs it
            found = runner_gpus(job.runs_on) if job is not None else None
            if found is None:
                return None
            counts.append(found)
        return min(counts) if counts else None

    def cadence(self, suite: str, backend: str) -> SuiteCadence:
        """How the repository's CI runs a suite on a backend (worked out once per suite)."""
        key = (suite, backend)
        if key not in self._cadences:
            self._cadences[key] = self._cadence(suite, backend)
        return self._cadences[key]

    def _cadence(self, suite: str, backend: str) -> SuiteCadence:
        jobs = self.jobs_naming(suite, backend)
        declared = self.registry.cadence(backend, suite) if self.registry is not None else None
        if not jobs:
            where = f"`{self._registry_path()}`"
            if declared == "per-pr":
                return SuiteCadence("per-pr", None, (), f"{where} lists it per-commit (no job names "
                                    "it literally)")
            if declared == "nightly":
                return SuiteCadence("nightly", None, (), f"{where} lists it as nightly")
            others = sorted(self.registry.backends_of(suite) - {backend}) if self.registry else []
            if others:
                return SuiteCadence("external", None, (), f"{where} lists it for "
                                    f"{', '.join(others)} only, and no {backend} job runs it")
            return SuiteCadence("external", None, (), NO_JOB)
        every = self.simulate(Event(labels=self.labels))
        gates: list[tuple[str, JobKey]] = []
        for path, _ in [k for k in jobs if not k[1]]:  # named by a workflow with no jobs
            workflow = self.workflows[path]
            if not workflow.on or workflow.trigger("pull_request") or workflow.trigger("pull_request_target"):
                return SuiteCadence("per-pr", None, (), f"`{path}` runs for pull requests")
        for key in jobs:
            run = every.run(key)
            if run is None or run.runs is False:
                continue
            gate = self._gate(key)
            if gate is None:
                return SuiteCadence("per-pr", None, (key,), _describe(key, run))
            gates.append((gate, key))
        if gates:
            label, key = gates[0]
            return SuiteCadence("on-label", label, tuple(k for _, k in gates),
                                f"`{key[1]}` in `{key[0]}` runs only with the label `{label}`")
        for event in _OTHER_EVENTS:
            sim = self.simulate(Event(name=event, labels=frozenset()))
            for key in jobs:
                run = sim.run(key)
                if run is not None and run.runs is not False:
                    return SuiteCadence("nightly", None, (key,), f"`{key[1]}` runs on `{event}`, "
                                        "not for pull requests")
        return SuiteCadence("nightly", None, jobs, "no job that names it runs for pull requests")

    def repo_ci(self, suite: str, backend: str, labels: frozenset[str] | None,
                changed: frozenset[str]) -> RepoCiRun:
        """Whether the repository's CI runs the suite for a PR with these labels and files
        (``labels`` None: the CI label and no other)."""
        have = self.ci_labels if labels is None else labels
        sim = self.simulate(Event(labels=have, changed=changed))
        best: RepoCiRun = RepoCiRun(False, None, NO_JOB)
        for key in self.jobs_naming(suite, backend):
            run = sim.run(key)
            if run is None:
                continue
            merged = or3(best.runs, run.runs)
            if merged is not best.runs:
                best = RepoCiRun(merged, key, _describe(key, run))
        return best

    def _registry_path(self) -> str:
        return self.registry.path if self.registry is not None else ""


# a GPU count in a runner label: `-8-gpu-`, `-1gpu-`, `-gpu-8`, `-gpus-4` (between `-`, `_`,
# quotes, spaces or the ends, so `gb200` or `h100` are not counts)
_EDGE = r"(?:^|(?<=[-_\s'\"]))"
_END = r"(?=$|[-_\s'\"])"
_RUNNER_GPUS = re.compile(rf"{_EDGE}(?:(\d{{1,3}})-?gpus?|gpus?-(\d{{1,3}})){_END}", re.IGNORECASE)


HOSTED = re.compile(r"^(?:ubuntu|windows|macos)-(?:latest|[\d.]+)$")  # GitHub's own runners


def runner_gpus(label: str) -> int | None:
    """The GPU count a `runs-on:` text names (None for none, or for two that differ)."""
    counts = {int(m.group(1) or m.group(2)) for m in _RUNNER_GPUS.finditer(label)}
    return counts.pop() if len(counts) == 1 else None


def _describe(key: JobKey, run: JobRun) -> str:
    return f"`{key[1]}` in `{key[0]}`: {run.why}"


def _kind(path: str, workflow: Workflow, job: Job | None) -> str | None:
    """The hardware a job runs on, by its runner, image, name and workflow."""
    own = [job.runs_on, job.container or "", job.id, job.raw_name or ""] if job else []
    return hardware(" ".join([*own, path.rsplit("/", 1)[-1], workflow.name or ""]))


def _fits(path: str, workflow: Workflow, job: Job | None, backend: str) -> bool:
    """Whether a job's hardware fits a backend (a job that names none fits any)."""
    kind = _kind(path, workflow, job)
    return kind is None or kind == backend


def _names_suite(text: str, job: Job, suite: str) -> bool:
    """Whether a job names the suite, other than as a job it needs (`needs: [stage-a]`)."""
    start, end = job.span
    if suite not in job.needs:
        return named(text, suite, start, end)
    return sum(1 for _ in _whole(text, suite, start, end)) > job.needs.count(suite)


_NAME_CHAR = re.compile(r"[\w.-]")


def named(text: str, word: str, start: int, end: int) -> bool:
    """Whether the word occurs whole in text[start:end], not as part of a longer name (no
    word character, dot or dash right before or after it). A plain substring search: a
    pattern that opens with a look-behind is tried at every position of every workflow."""
    return next(_whole(text, word, start, end), None) is not None


def _whole(text: str, word: str, start: int, end: int) -> Iterator[int]:
    """Where the word occurs whole in text[start:end]."""
    at = text.find(word, start, end)
    while at != -1:
        after = at + len(word)
        if (at == 0 or not _NAME_CHAR.match(text, at - 1)) and \
                (after >= end or not _NAME_CHAR.match(text, after)):
            yield at
        at = text.find(word, at + 1, end)
