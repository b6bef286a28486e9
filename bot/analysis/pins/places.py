"""The places of a pin group (a Dockerfile, a workflow install path, a script, a requirements
file), the packages they name, the groups themselves and the findings made of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from bot.analysis.findings import Finding
from bot.analysis.requirements import Install, Spec, alternatives

Kind = Literal["dockerfile", "workflow", "requirements", "script"]
Mode = Literal["all", "host", "exec"]


@dataclass(frozen=True, slots=True)
class Location:
    """A place that installs or lists packages: a matrix column."""

    kind: Kind
    path: str
    label: str
    step: str | None = None
    line: int | None = None  # the step's line, for a workflow install path
    runner: Kind | None = None  # a script: run by a Dockerfile or a workflow step

    @property
    def role(self) -> Kind:
        """What the place counts as: a script run by the image is the image, one run by a
        workflow step is that step."""
        return self.runner or self.kind


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One package spec at one place and line."""

    location: Location
    spec: Spec
    line: int
    branches: tuple[tuple[int, int, int], ...] = ()  # shell branches: see Install.branches

    @property
    def name(self) -> str:
        assert self.spec.name is not None
        return self.spec.name

    def excludes(self, other: Occurrence) -> bool:
        """Whether the two sit in different branches of one shell `if`/`case` of one file:
        alternatives, of which a build or a job runs one."""
        return (self.location.path == other.location.path
                and alternatives(self.branches, other.branches))


@dataclass
class PinGroup:
    """An image (Dockerfile) and what runs in it: the workflow jobs, the shell scripts and the
    requirements files they install. ``jobs`` limits a workflow to some of its jobs (none
    listed: all of them), each with what of it installs here: ``all``, only the commands sent
    into a container (``exec``) or only the others (``host``); ``callers`` are workflows that
    only call the group's workflows."""

    name: str
    source: Literal["config", "inferred"]
    rocm: bool
    dockerfiles: list[str]
    workflows: list[str]
    requirements: list[str] = field(default_factory=list)
    kind: str | None = None  # the hardware: rocm, cuda, npu, ...; None when nothing says
    jobs: dict[str, dict[str, Mode]] = field(default_factory=dict)
    scripts: list[str] = field(default_factory=list)
    callers: list[str] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)  # scripts read as places of their own
    container: str | None = None  # a job's image that no Dockerfile here is known to build
    images: tuple[str, ...] = ()  # what that image text is known to give, when it is

    @property
    def files(self) -> frozenset[str]:
        return frozenset([*self.dockerfiles, *self.workflows, *self.requirements,
                          *self.scripts, *self.callers])

    def runs(self, workflow: str, job: str) -> bool:
        """Whether a job of one of the group's workflows installs into this group."""
        wanted = self.jobs.get(workflow)
        return wanted is None or job in wanted

    def mode(self, workflow: str, job: str) -> Mode:
        return self.jobs.get(workflow, {}).get(job, "all")


def takes(mode: Mode, install: Install) -> bool:
    """Whether an install of a job goes where ``mode`` says the group sees the job."""
    return mode == "all" or (mode == "exec") == (install.container is not None)


@dataclass(frozen=True, slots=True)
class Result:
    """A finding and every file it names (what `analyze` matches against the changes)."""

    finding: Finding
    paths: frozenset[str]
    group: str | None
    package: str | None = None
    anchors: tuple[tuple[str, int, str], ...] = ()  # places a PR can fix: path, line, fix
