"""Dependency pins across Dockerfiles, workflow install paths, scripts and requirements (PIN).

A pin group is what runs together: an image (a Dockerfile), the workflow jobs that run in it
(a `container:` job, placed by its runner labels, image, names or the `with:` values of its
callers; of a job on the runner itself, only what it sends in with `docker exec`), the shell
scripts the image or those jobs run and the requirements files any of them install. What a job
installs on the runner itself (hosted or not), or for a hardware no image has, is a group of its
own; so is a script that makes its own environment. Different hardware images
are different groups. Within a group every named package is compared across its places: the
Dockerfile, each workflow step that runs `pip install` (an install path, with its scripts), and
each requirements file. Local installs (`-e python`, `.`, a folder of the checkout) are not
packages. The reference pin of a package is the image's (a Dockerfile, a script it runs, or a
requirements file it installs), else a workflow's, else another requirements file's; each rule
reports one finding per package and group, listing every place that disagrees, anchored at the
first (in `analyze`, at the first place the change touches).
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from packaging.utils import canonicalize_name

from bot.analysis.dockerfile import Dockerfile, parse_dockerfile
from bot.analysis.findings import Finding, Severity, finding, rule
from bot.analysis.report import Table
from bot.analysis.requirements import (
    Entry,
    FileRef,
    Install,
    RequirementsFile,
    Spec,
    allows,
    install_from,
    parse_requirements,
    relative_candidates,
    same_pin,
)
from bot.analysis.shell import newlines_before, pip_installs, script_runs
from bot.analysis.snapshot import Derived, Snapshot
from bot.analysis.source import Sources, Unreadable
from bot.analysis.tree import match
from bot.analysis.workflows import Job, Step, Workflow, parse_workflow, strip_expression

log = logging.getLogger(__name__)

DOCKERFILE_GLOBS = ("**/Dockerfile", "**/Dockerfile.*", "**/*.Dockerfile", "**/*.dockerfile",
                    "**/Containerfile")
MISMATCH = " ✗"
MAX_ROWS = 50
MAX_PLACES = 8

# -- the rules ---------------------------------------------------------------------------

@rule("PIN001", "version-conflict", Severity.ERROR,
      "One package is pinned to different versions (or git refs) within a pin group.")
class VersionConflict:
    """
    ## What it does
    Compares every pin (`==`, `===`, a git URL at a ref) of a package across the places of one
    group: its Dockerfile and the scripts it runs, the install paths of the jobs that run in
    the image (with their scripts) and, in a configured group, its other Dockerfiles. One
    finding per package lists every place whose pin differs from the image's, anchored at the
    first. A range that excludes the pinned version counts as a different pin. Images of
    different hardware (CUDA, ROCm, NPU, XPU, GB10) are different groups and never compared.

    ## Why is this bad?
    CI runs one version and the image another, so a test passes in one and fails in the other;
    which one a GPU job gets depends on which install ran last.

    ## Example
    ```dockerfile
    RUN pip install "numba==0.65.1"
    ```
    ```yaml
    - run: pip install "numba==0.64.0"
    ```
    Use instead: the same `numba==0.65.1` in both.
    """


@rule("PIN002", "pinned-here-loose-there", Severity.WARNING,
      "A package pinned in one place is installed unpinned or with a range in another.")
class PinnedHereLooseThere:
    """
    ## What it does
    Reports the install commands that name a package without a pin (or with a range that
    allows the pinned version) when another place of the group pins it: one finding per
    package, listing them all. Ranges written in requirements files are declarations, not
    installs, and are left alone; local installs (`-e python`, `.[extras]`) are no packages.

    ## Why is this bad?
    The unpinned install takes whatever is newest on the day the job runs: the pin protects
    one environment and not the other.

    ## Example
    ```dockerfile
    RUN pip install "numba==0.65.1"
    ```
    ```yaml
    - run: pip install numba
    ```
    Use instead: `pip install "numba==0.65.1"` in the workflow too.
    """


@rule("PIN003", "missing-from-install-path", Severity.ERROR,
      "A package installed by one install path is missing from an alternative path.")
class MissingFromInstallPath:
    """
    ## What it does
    Finds alternative install paths of a workflow: steps of one job whose `if:` conditions are
    complementary (`inputs.x` / `!inputs.x`, `== 'a'` / `!= 'a'`), and jobs whose conditions
    are. Each package one path installs must be installed by the others too (directly, through
    a requirements file or a script it runs). Two jobs that both always run are not
    alternatives, and a path that installs what cannot be listed (a local project with its
    dependencies, `$VAR`) is never said to miss anything. One finding per package.

    ## Why is this bad?
    Which path runs depends on an input: a pin added to one step and forgotten in the other
    is silently absent whenever the other path runs.

    ## Example
    ```yaml
    - name: Install (full)
      if: ${{ !inputs.skip_dependency_install }}
      run: pip install polars "numba==0.65.1"
    - name: Install (miles only)
      if: ${{ inputs.skip_dependency_install }}
      run: pip install polars
    ```
    Use instead: add `"numba==0.65.1"` to `Install (miles only)`.
    """


@rule("PIN004", "image-ci-divergence", Severity.WARNING,
      "The workflow pins a package the image never installs, or reinstalls an image pin.")
class ImageCiDivergence:
    """
    ## What it does
    Reports workflow installs (a step, or a script it runs, `docker exec` lines included) that
    pin a package no Dockerfile of its group installs (directly, through a script or a
    requirements file), and those that reinstall a package the Dockerfile pins with a range
    excluding that pin; one finding per package lists them all.

    ## Why is this bad?
    PR CI and the image built from the Dockerfile then differ: a test that passes in CI fails
    in the image users run, or the other way round.

    ## Example
    ```dockerfile
    RUN pip install polars
    ```
    ```yaml
    - run: pip install polars "xxhash==3.5.0"
    ```
    Use instead: add `"xxhash==3.5.0"` to the Dockerfile as well.
    """


@rule("PIN005", "requirements-drift", Severity.WARNING,
      "A requirements file's pin differs from the Dockerfile or workflow.")
class RequirementsDrift:
    """
    ## What it does
    Compares the pins of the requirements files a group installs (`pip install -r`, mapped
    back through `COPY`) with the Dockerfile and the workflows, and reports the installs that
    leave a package unpinned that a requirements file pins: one finding per package and group.
    A requirements file only a CPU job on a hosted runner installs is in that job's group, not
    in a GPU image's.

    ## Why is this bad?
    The requirements file is what contributors install locally; when it drifts from the
    image, local runs and CI test different code.

    ## Example
    ```text
    numba==0.64.0
    ```
    ```dockerfile
    COPY requirements.txt /tmp/
    RUN pip install -r /tmp/requirements.txt && pip install "numba==0.65.1"
    ```
    Use instead: `numba==0.65.1` in `requirements.txt`.
    """


@rule("PIN006", "git-ref-drift", Severity.WARNING,
      "The same git URL dependency is installed at different refs in two Dockerfiles.")
class GitRefDrift:
    """
    ## What it does
    Compares git URL installs (`git+https://github.com/org/repo.git@ref`) across every
    Dockerfile of the repository, including Dockerfiles of different pin groups (the CUDA
    `Dockerfile` and `Dockerfile.rocm`), by repository URL and ref: one finding per URL. The
    message says what each ref is: a commit (hex), a tag (`v1.2.0`) or a branch (`@bridge`),
    and that a branch or tag moves.

    ## Why is this bad?
    The two images build different commits of the same dependency, so a fix verified on one
    platform is missing on the other.

    ## Example
    ```dockerfile
    # Dockerfile
    RUN pip install "git+https://github.com/org/lib.git@1111111"
    # Dockerfile.rocm
    RUN pip install "git+https://github.com/org/lib.git@2222222"
    ```
    Use instead: the same commit in both.
    """

# -- places and groups -------------------------------------------------------------------

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

    @property
    def name(self) -> str:
        assert self.spec.name is not None
        return self.spec.name


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


def _takes(mode: Mode, install: Install) -> bool:
    """Whether an install of a job goes where ``mode`` says the group sees the job."""
    return mode == "all" or (mode == "exec") == (install.container is not None)


@dataclass(frozen=True, slots=True)
class _Result:
    """A finding and every file it names (what `analyze` matches against the changes)."""

    finding: Finding
    paths: frozenset[str]
    group: str | None
    package: str | None = None
    anchors: tuple[tuple[str, int, str], ...] = ()  # places a PR can fix: path, line, fix


@dataclass(frozen=True)
class PinOutcome:
    """Pin findings to report, the ROCm images and the requirements files they install (the
    environment tier: the scripts and workflows a job runs count only when a per-PR job runs
    them, which the engine judges), and matrices."""

    findings: list[Finding] = field(default_factory=list)
    environment: frozenset[str] = frozenset()
    tables: list[Table] = field(default_factory=list)


def is_rocm_name(path: str) -> bool:
    """A file name that says ROCm (or AMD, as a word): `Dockerfile.rocm`, `pr-test-amd.yml`."""
    name = posixpath.basename(path).lower()
    return "rocm" in name or re.search(r"(?<![a-z0-9])amd(?![a-z0-9])", name) is not None


# -- reading every file once -------------------------------------------------------------


class _Files:
    """The snapshot's Dockerfiles, workflows and requirements files, each parsed once."""

    def __init__(self, sources: Sources) -> None:
        # the sources, not the snapshot: the snapshot keeps what is made from these files,
        # which then refers back to nothing that keeps the snapshot alive
        self.sources = sources
        self.problems: dict[str, Finding] = {}
        self._dockerfiles: dict[str, Dockerfile | None] = {}
        self._workflows: dict[str, Workflow | None] = {}
        self._requirements: dict[str, RequirementsFile | None] = {}
        self._scripts: dict[str, _Script | None] = {}
        self._folders: frozenset[str] | None = None

    def text(self, path: str) -> str | None:
        text = self.sources.text(path)
        if isinstance(text, Unreadable):
            self.problems[path] = text.finding()
            return None
        return text

    def exists(self, path: str) -> bool:
        return self.sources.text(path) is not None

    def dockerfile(self, path: str) -> Dockerfile | None:
        if path not in self._dockerfiles:
            text = self.text(path)
            self._dockerfiles[path] = None if text is None else parse_dockerfile(path, text)
        return self._dockerfiles[path]

    def workflow(self, path: str) -> Workflow | None:
        if path not in self._workflows:
            text = self.text(path)
            parsed = None if text is None else self.sources.parsed(path, parse_workflow)
            if isinstance(parsed, Unreadable):
                self.problems[path] = parsed.finding()
                parsed = None
            self._workflows[path] = parsed
        return self._workflows[path]

    def requirements(self, path: str) -> RequirementsFile | None:
        if path not in self._requirements:
            text = self.text(path)
            self._requirements[path] = None if text is None else parse_requirements(path, text)
        return self._requirements[path]

    def script(self, path: str) -> _Script | None:
        if path not in self._scripts:
            text = self.text(path)
            self._scripts[path] = None if text is None else _parse_script(path, text)
        return self._scripts[path]

    def resolve(self, ref: FileRef) -> str | None:
        """The repository file a `-r`/`-c` names: its first candidate that exists."""
        return next((p for p in ref.candidates if self.exists(p)), None)

    def is_folder(self, path: str) -> bool:
        """Whether a repository folder of that path holds files (listed once, when asked)."""
        if self._folders is None:
            folders: set[str] = set()
            for file in self.sources.tree.list("**"):
                folder = posixpath.dirname(file)
                while folder and folder not in folders:
                    folders.add(folder)
                    folder = posixpath.dirname(folder)
            self._folders = frozenset(folders)
        return path in self._folders

    def local(self, entry: Entry) -> bool:
        """A bare name that is a folder of the repository where the command runs: a local
        project (`pip install python` in the checkout), not a package."""
        return any(self.is_folder(p) for p in entry.folders)

    def run_scripts(self, refs: Iterable[FileRef], seen: set[str],
                    envs: set[str] | None = None) -> list[tuple[str, Install]]:
        """The installs of the scripts a command runs, and of those they run, in order.

        A script that makes an environment of its own (`conda create`, `python -m venv`)
        installs into it, not where it runs: it is left out (and put in ``envs``).
        """
        out: list[tuple[str, Install]] = []
        for ref in refs:
            path = self.resolve(ref)
            if path is None or path in seen:
                continue
            seen.add(path)
            parsed = self.script(path)
            if parsed is None:
                continue
            if parsed.new_env:
                if envs is not None:
                    envs.add(path)
                continue
            out.extend((path, install) for install in parsed.installs)
            out.extend(self.run_scripts(parsed.scripts, seen, envs))
        return out


@dataclass(frozen=True, slots=True)
class _Script:
    """A shell script's installs and the scripts it runs, as repository paths."""

    installs: tuple[Install, ...]
    scripts: tuple[FileRef, ...]
    new_env: bool = False  # it creates an environment and installs there


_NEW_ENV = re.compile(
    r"(?m)^[^#\n]*?(?:\b(?:micromamba|mamba|conda)\s+create\b|\bpython[\d.]*\s+-m\s+venv\b"
    r"|\bvirtualenv\s|\buv\s+venv\b)"
)


def _parse_script(path: str, text: str) -> _Script:
    """A shell script read with the parser of `run:` steps; paths relative to the checkout
    (where CI runs it from) or to the script's folder."""
    folder = posixpath.dirname(path)
    newline = newlines_before(text)

    def line_of(pos: int) -> int:
        return 1 + newline(pos)

    def resolve(name: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*relative_candidates(".", name),
                                    *relative_candidates(folder, name)]))

    installs = tuple(install_from(cmd, line_of, lambda t: t, resolve)
                     for cmd in (pip_installs(text) if "pip" in text else ()))
    scripts = tuple(FileRef(w.text, line_of(w.start), False, resolve(w.text))
                    for w in script_runs(text))
    return _Script(installs, scripts, _NEW_ENV.search(text) is not None)


def _list(snapshot: Snapshot, patterns: Iterable[str]) -> list[str]:
    found: set[str] = set()
    for pattern in patterns:
        found.update(snapshot.tree.list(pattern))
    return sorted(found)


def _groups(snapshot: Snapshot, files: _Files) -> list[PinGroup]:
    """The configured groups, else the inferred ones; then scripts and requirements."""
    config = snapshot.config.pins
    groups: list[PinGroup] = []
    if config.groups:
        for name, spec in config.groups.items():
            dockerfiles = _list(snapshot, spec.dockerfiles)
            rocm = "rocm" in name.lower() or any(is_rocm_name(p) for p in dockerfiles)
            groups.append(PinGroup(name, "config", rocm, dockerfiles,
                                   _list(snapshot, spec.workflows),
                                   _list(snapshot, spec.requirements)))
        assigned = {p for g in groups for p in g.workflows}
        for group in groups:
            _follow_calls(files, group, assigned)
    else:
        skip = [*snapshot.config.exclude, *config.exclude]
        dockerfiles = [p for p in _list(snapshot, DOCKERFILE_GLOBS)
                       if not any(match(g, p) for g in skip)]
        workflows = [p for p in snapshot.workflows() if not any(match(g, p) for g in skip)]
        groups = _infer(files, dockerfiles, workflows)
    envs: set[str] = set()
    for group in groups:
        _join_scripts(files, group, envs)
    for path in sorted(envs):  # an environment a script makes is a group of its own
        group = PinGroup(path, "inferred", False, [], [], roots=[path])
        _join_scripts(files, group, set())
        groups.append(group)
    for group in groups:
        _join_requirements(files, group)
    return groups


# Hardware named by a file name, a runner label or an image: the first kind that matches.
_KINDS = (
    ("rocm", r"rocm|amd(?!64)|mi[23]\d\d[a-z]*|gfx9\w*|hip"),
    ("npu", r"npu|ascend"),
    ("xpu", r"xpu"),
    ("musa", r"musa"),
    ("gb10", r"gb10"),
    ("cuda", r"cuda|cu\d{2,3}|nvidia|\d*gpus?|[hb]\d{2,3}|a100|gb[23]00|l40s?"),
    ("cpu", r"cpu|xeon"),
)
_KIND_PATTERNS = tuple((k, re.compile(rf"(?<![a-z])(?:{p})(?![a-z])")) for k, p in _KINDS)
_HOSTED = re.compile(r"(?<![\w-])(?:ubuntu|windows|macos)-(?:latest|[\d.]+)")


def hardware(text: str) -> str | None:
    """The hardware a text names (`Dockerfile.rocm`, `linux-mi300-gpu-1`, `npu.Dockerfile`)."""
    lower = text.lower()
    return next((kind for kind, pattern in _KIND_PATTERNS if pattern.search(lower)), None)


def _variant(path: str) -> str:
    """What a Dockerfile's name adds to `Dockerfile`: `rocm` for `rocm.Dockerfile`."""
    name = posixpath.basename(path).lower()
    for word in ("dockerfile", "containerfile"):
        name = name.replace(word, "")
    return name.strip("._-")


def _primary(path: str, kind: str | None) -> bool:
    """The main image of its hardware: `Dockerfile`, `Dockerfile.rocm`, `npu.Dockerfile`."""
    return _variant(path) in ("", kind)


def _aside(path: str) -> tuple[bool, int, str]:
    """Dockerfiles of examples, tests and dev containers rank after the others."""
    parts = path.lower().split("/")
    odd = any(p.startswith(".") or "example" in p or "test" in p for p in parts[:-1])
    return (odd, len(parts), path)


def _infer(files: _Files, dockerfiles: list[str], workflows: list[str]) -> list[PinGroup]:
    """One group per image, and one per job that installs into no known image.

    A job runs in the image of its hardware (its runner labels, its `container:` image, its
    name and its workflow's, or the `with:` values of the jobs calling its workflow): the
    main Dockerfile of that hardware. A job on a hosted runner (`ubuntu-latest`), or whose
    hardware has no image, is a group of its own.
    """
    kinds: dict[str, str | None] = {}
    for path in dockerfiles:
        parsed = files.dockerfile(path)
        kinds[path] = hardware(path) or hardware(" ".join(parsed.bases if parsed else ()))
    groups: dict[str, PinGroup] = {}  # by Dockerfile (or job) path
    for p in dockerfiles:  # the main image of a hardware is named after it: `rocm`
        kind = kinds[p]
        name = (kind or "default") if _image(kind, kinds) == p else p
        groups[p] = PinGroup(name, "inferred", kind == "rocm", [p], [], kind=kind)
    callers: dict[str, list[tuple[str, Job]]] = {}
    parsed_workflows: dict[str, Workflow] = {}
    for path in workflows:
        workflow = files.workflow(path)
        if workflow is None:
            continue
        parsed_workflows[path] = workflow
        for job in workflow.jobs:
            if job.calls:
                callers.setdefault(job.calls, []).append((path, job))
    for path, workflow in parsed_workflows.items():
        for job in workflow.jobs:
            if not any(step.installs or step.scripts for step in job.steps):
                continue
            for name, mode in _images_of(files, workflow, job, callers.get(path, []), kinds,
                                         groups):
                group = groups[name]
                if path not in group.workflows:
                    group.workflows.append(path)
                group.jobs.setdefault(path, {})[job.id] = mode
                named = hardware(_job_text(path, job)) is not None
                for caller, by in callers.get(path, []):
                    if caller in group.callers or caller == path:
                        continue
                    if named or _image(hardware(_job_text(caller, by)), kinds) in (name, None):
                        group.callers.append(caller)
    return list(groups.values())


def _images_of(files: _Files, workflow: Workflow, job: Job, callers: list[tuple[str, Job]],
               kinds: dict[str, str | None], groups: dict[str, PinGroup],
               ) -> list[tuple[str, Mode]]:
    """The groups a job installs into, with what of it each takes.

    A job in a `container:` installs into the image of its hardware. A job on the runner
    itself installs there, into no known image: a group of its own (shared with the jobs whose
    `if:` is complementary to its own); only what it sends into a container with `docker exec`
    goes to the image of its hardware. A hosted runner's job is always a group of its own.
    """
    path = workflow.path
    sent = [i.container is not None for step in job.steps
            for i in (*step.installs, *(i for _, i in files.run_scripts(step.scripts, set())))]
    images: list[str] = []
    hosted = _HOSTED.search(job.runs_on) is not None
    if (job.container is not None or any(sent)) and not (job.container is None and hosted):
        kind = hardware(_job_text(path, job))
        wanted: set[str | None] = {kind}
        if kind is None and callers:
            wanted = {hardware(_job_text(p, c)) for p, c in callers}
        if hosted:  # a hosted runner's container (`python:3.12`) is the image it names only
            wanted.discard(None)
        found = [_image(k, kinds) for k in sorted(wanted, key=str)]
        images = list(dict.fromkeys(name for name in found if name is not None))
    if images and job.container is not None:
        return [(name, "all") for name in images]
    out: list[tuple[str, Mode]] = [(name, "exec") for name in images]
    if not images or not all(sent):
        out.append((_own(workflow, job, groups), "host" if images else "all"))
    return out


def _own(workflow: Workflow, job: Job, groups: dict[str, PinGroup]) -> str:
    """The group of a job that installs into no known image."""
    path = workflow.path
    for other in workflow.jobs:  # jobs that are alternatives of each other stay together
        key = f"{path} / {other.id}"
        if other.condition and job.condition and key in groups and \
                complementary(other.condition, job.condition):
            return key
    name = f"{path} / {job.id}"
    kind = hardware(" ".join([job.runs_on, job.container or "", posixpath.basename(path)]))
    groups[name] = PinGroup(name, "inferred", kind == "rocm", [], [], kind=kind)
    return name


def _job_text(path: str, job: Job) -> str:
    """What may name a job's hardware: runner labels, image, names, `with:` values."""
    return " ".join([job.runs_on, job.container or "", job.id, job.name, job.inputs,
                     posixpath.basename(path)])


def _image(kind: str | None, kinds: dict[str, str | None]) -> str | None:
    """The main Dockerfile of a hardware (for a job that names none: the repository's main
    image, CUDA or unnamed)."""
    wanted = {kind} if kind not in (None, "cuda") else {None, "cuda"}
    found = [p for p, k in kinds.items() if k in wanted]
    if len(found) == 1:
        return found[0]
    primary = sorted((p for p in found if _primary(p, kinds[p])), key=_aside)
    return primary[0] if primary else None


def _follow_calls(files: _Files, group: PinGroup, assigned: set[str]) -> None:
    """Reusable workflows a group's workflows call join it, unless another group holds them."""
    queue = list(group.workflows)
    while queue:
        workflow = files.workflow(queue.pop(0))
        if workflow is None:
            continue
        for callee in workflow.calls:
            if callee in assigned or callee in group.workflows or not files.exists(callee):
                continue
            group.workflows.append(callee)
            queue.append(callee)
    group.workflows.sort()


def _installs(files: _Files, group: PinGroup) -> Iterable[Install]:
    for path in group.dockerfiles:
        parsed = files.dockerfile(path)
        if parsed is not None:
            yield from parsed.installs
            yield from (i for _, i in files.run_scripts(parsed.scripts, set()))
    for step, mode in _steps(files, group):
        yield from (i for i in step.installs if _takes(mode, i))
        yield from (i for _, i in files.run_scripts(step.scripts, set()) if _takes(mode, i))
    for path, script in _roots(files, group):
        yield from script.installs
        yield from (i for _, i in files.run_scripts(script.scripts, {path}))


def _roots(files: _Files, group: PinGroup) -> list[tuple[str, _Script]]:
    """The scripts a group is made of (an environment a script makes), parsed."""
    parsed = [(path, files.script(path)) for path in group.roots]
    return [(path, script) for path, script in parsed if script is not None]


def _steps(files: _Files, group: PinGroup) -> Iterable[tuple[Step, Mode]]:
    """The steps of the group's jobs, with what of each the group takes."""
    for path in group.workflows:
        workflow = files.workflow(path)
        if workflow is not None:
            for job in workflow.jobs:
                if group.runs(path, job.id):
                    mode = group.mode(path, job.id)
                    yield from ((step, mode) for step in job.steps)


def _join_scripts(files: _Files, group: PinGroup, envs: set[str]) -> None:
    """Shell scripts the group's image or steps run (and those they run) join it; those
    that make an environment of their own go to ``envs``."""
    seen: set[str] = set(group.roots)
    for path in group.dockerfiles:
        parsed = files.dockerfile(path)
        if parsed is not None:
            files.run_scripts(parsed.scripts, seen, envs)
    for step, _ in _steps(files, group):
        files.run_scripts(step.scripts, seen, envs)
    for _, script in _roots(files, group):
        files.run_scripts(script.scripts, seen, envs)
    group.scripts = sorted(seen - envs)


def _join_requirements(files: _Files, group: PinGroup) -> None:
    """Requirements files the group installs (and those they include) join it."""
    found = set(group.requirements)
    queue = [files.resolve(ref) for install in _installs(files, group) for ref in install.files]
    queue.extend(group.requirements)
    while queue:
        path = queue.pop(0)
        if path is None:
            continue
        found.add(path)
        parsed = files.requirements(path)
        if parsed is None:
            continue
        for ref in parsed.files:
            nested = files.resolve(ref)
            if nested is not None and nested not in found:
                queue.append(nested)
    group.requirements = sorted(found)


# -- install paths and their alternatives ------------------------------------------------


@dataclass
class _Path:
    """An install path: one step (or one job's install steps) and what it installs."""

    label: str  # "step `Install (full)`" or "job `test`"
    path: str
    steps: list[tuple[Location, Install]]
    names: dict[str, Occurrence]  # package -> an occurrence installing it (maybe via a file)
    job: str = ""
    uncertain: bool = False  # installs what cannot be listed: `.` with its dependencies, `$X`

    def anchor(self, like: set[str]) -> tuple[Location, int]:
        """Where to add a package: the install most like ``like`` (the last on a tie)."""
        best = max(
            enumerate(self.steps),
            key=lambda item: (len({e.spec.name for e in item[1][1].entries} & like), item[0]),
        )
        location, install = best[1]
        return location, install.line


_OPPOSITE = {"is": "not", "not": "is", "eq": "ne", "ne": "eq"}


def _condition(text: str) -> tuple[str, ...]:
    """A canonical form of an `if:` condition, for telling complementary ones apart."""
    expr = re.sub(r"\s+", " ", strip_expression(text)).strip().replace('"', "'")
    while _wrapped(expr):
        expr = expr[1:-1].strip()
    negated = re.fullmatch(r"! ?(.+)", expr)
    if negated and _operand(negated.group(1)):
        inner = _condition(negated.group(1))
        return (_OPPOSITE[inner[0]], *inner[1:])
    compared = re.fullmatch(r"([^\s=!<>()]+) ?(==|!=) ?([^\s=!<>()]+)", expr)
    if compared:
        left, op, right = compared.groups()
        if right in ("true", "false") or left in ("true", "false"):
            subject, value = (left, right) if right in ("true", "false") else (right, left)
            return ("is" if (value == "true") == (op == "==") else "not", subject)
        return ("eq" if op == "==" else "ne", *sorted((left, right)))
    return ("is", expr)


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


def _wrapped(text: str) -> bool:
    return text.startswith("(") and text.endswith(")") and _balanced(text[1:-1])


def _operand(text: str) -> bool:
    """A name, a call or a parenthesised expression: what `!` applies to as a whole."""
    if text.startswith("!"):
        return _operand(text[1:].lstrip())
    if re.fullmatch(r"[\w.\-\[\]']+", text) or _wrapped(text):
        return True
    call = re.fullmatch(r"[\w.]+\((.*)\)", text)
    return call is not None and _balanced(call.group(1))


def complementary(a: str, b: str) -> bool:
    """Whether exactly one of two `if:` conditions holds, whatever the inputs."""
    x, y = _condition(a), _condition(b)
    return _OPPOSITE[x[0]] == y[0] and x[1:] == y[1:]


class _Group:
    """One pin group's places, occurrences and findings."""

    def __init__(self, files: _Files, group: PinGroup, ignore: set[str]) -> None:
        self.files = files
        self.group = group
        self.ignore = ignore
        self.locations: list[Location] = []
        self.occurrences: dict[str, list[Occurrence]] = {}
        self.image_files: set[str] = set()  # requirements files a Dockerfile installs
        self.image_names: set[str] = set()  # packages the Dockerfiles install
        self.via: dict[Location, dict[str, Occurrence]] = {}  # all a place installs
        self.alternatives: list[list[_Path]] = []
        self.results: list[_Result] = []
        self.missing: set[tuple[Location, str]] = set()  # PIN003 cells
        self._order: dict[Location, int] = {}
        self._read()

    # -- collecting ------------------------------------------------------------------------

    def _add(self, location: Location, entry: Entry) -> Occurrence | None:
        spec = entry.spec
        if spec.name is None or not spec.is_package or spec.name in self.ignore:
            return None
        if entry.folders and self.files.local(entry):
            return None
        occurrence = Occurrence(location, spec, entry.line)
        self.occurrences.setdefault(spec.name, []).append(occurrence)
        return occurrence

    def _from_file(self, path: str | None, seen: set[str]) -> dict[str, Occurrence]:
        """Packages a requirements file installs, with those of the files it includes."""
        if path is None or path in seen:
            return {}
        seen.add(path)
        parsed = self.files.requirements(path)
        out: dict[str, Occurrence] = {}
        if parsed is None:
            return out
        location = Location("requirements", path, path)
        for entry in parsed.entries:
            name = entry.spec.name
            if name is not None and entry.spec.is_package and name not in self.ignore:
                out.setdefault(name, Occurrence(location, entry.spec, entry.line))
        for ref in parsed.files:
            if not ref.constraint:
                for name, occ in self._from_file(self.files.resolve(ref), seen).items():
                    out.setdefault(name, occ)
        return out

    def _installed(self, installs: Iterable[tuple[Location, Install]]) -> dict[str, Occurrence]:
        names: dict[str, Occurrence] = {}
        for location, install in installs:
            for entry in install.entries:
                occurrence = self._add(location, entry)
                if occurrence is not None:
                    names.setdefault(occurrence.name, occurrence)
            for ref in install.files:
                if not ref.constraint:
                    for name, occ in self._from_file(self.files.resolve(ref), set()).items():
                        names.setdefault(name, occ)
        return names

    def _with_scripts(self, location: Location, installs: Iterable[Install],
                      scripts: Iterable[FileRef], mode: Mode = "all",
                      ) -> list[tuple[Location, Install]]:
        """A place's own installs, then those of the scripts it runs (each its own column);
        of a job, only those ``mode`` takes."""
        out = [(location, install) for install in installs if _takes(mode, install)]
        columns: dict[str, Location] = {}
        runner: Kind = "dockerfile" if location.kind == "dockerfile" else "workflow"
        for path, install in self.files.run_scripts(scripts, set()):
            if not _takes(mode, install):
                continue
            if path not in columns:
                label = f"{path} (run by {location.label})"
                columns[path] = Location("script", path, label, location.step, location.line,
                                         runner)
                self.locations.append(columns[path])
            out.append((columns[path], install))
        return out

    def _read(self) -> None:
        for path in self.group.dockerfiles:
            parsed = self.files.dockerfile(path)
            if parsed is None:
                continue
            location = Location("dockerfile", path, path)
            self.locations.append(location)
            installs = self._with_scripts(location, parsed.installs, parsed.scripts)
            names = self._installed(installs)
            self.via[location] = names
            self.image_names.update(names)
            for _, install in installs:
                for ref in install.files:
                    self._from_file(self.files.resolve(ref), self.image_files)
        for path in self.group.workflows:
            workflow = self.files.workflow(path)
            if workflow is not None:
                self._read_workflow(workflow)
        for path, script in _roots(self.files, self.group):
            location = Location("script", path, path, runner="workflow")
            self.locations.append(location)
            self.via[location] = self._installed(
                self._with_scripts(location, script.installs, script.scripts))
        for path in self.group.requirements:
            listed = self.files.requirements(path)
            if listed is None:
                continue
            location = Location("requirements", path, path)
            self.locations.append(location)
            for entry in listed.entries:
                self._add(location, entry)

    def _read_workflow(self, workflow: Workflow) -> None:
        jobs: list[tuple[Job, _Path]] = []
        for job in workflow.jobs:
            if not self.group.runs(workflow.path, job.id):
                continue
            steps: list[tuple[Step, _Path]] = []
            for step in job.steps:
                if not step.installs and not step.scripts:
                    continue
                location = Location(
                    "workflow", workflow.path,
                    f"{posixpath.basename(workflow.path)} / {job.id} / {step.name}",
                    step.name, step.line,
                )
                at = len(self.locations)
                installs = self._with_scripts(location, step.installs, step.scripts,
                                              self.group.mode(workflow.path, job.id))
                if not installs:
                    continue
                self.locations.insert(at, location)
                names = self._installed(installs)
                self.via[location] = names
                path = _Path(f"step `{step.name}`", workflow.path, installs, names, job.id,
                             any(self._uncertain(i) for _, i in installs))
                steps.append((step, path))
            if not steps:
                continue
            always = _Path("", workflow.path, [], {})
            for step, path in steps:
                if step.condition is None:
                    always.names.update(path.names)
                    always.uncertain = always.uncertain or path.uncertain
            self._pair([(s.condition, p) for s, p in steps if s.condition is not None], always)
            merged: dict[str, Occurrence] = {}
            for _, path in steps:
                for name, occ in path.names.items():
                    merged.setdefault(name, occ)
            jobs.append((job, _Path(f"job `{job.id}`", workflow.path,
                                    [pair for _, p in steps for pair in p.steps], merged, job.id,
                                    any(p.uncertain for _, p in steps))))
        self._pair([(j.condition, p) for j, p in jobs if j.condition is not None],
                   _Path("", workflow.path, [], {}))

    def _pair(self, candidates: list[tuple[str, _Path]], always: _Path) -> None:
        """Alternative sets from complementary conditions (``always``: what every path runs)."""
        for i, (cond_a, a) in enumerate(candidates):
            for cond_b, b in candidates[i + 1:]:
                if complementary(cond_a, cond_b):
                    self.alternatives.append([
                        _Path(p.label, p.path, p.steps, {**always.names, **p.names}, p.job,
                              p.uncertain or always.uncertain)
                        for p in (a, b)
                    ])

    def _uncertain(self, install: Install) -> bool:
        """An install whose packages cannot all be named: a local project with dependencies,
        a spec or requirements file that is not known statically."""
        if any(not ref.constraint and self.files.resolve(ref) is None
               for ref in install.files):
            return True
        kinds = {e.spec.kind for e in install.entries}
        if "local" not in kinds and any(e.folders and self.files.local(e)
                                         for e in install.entries):
            kinds.add("local")
        return "unresolved" in kinds or ("local" in kinds and "--no-deps" not in install.flags)

    # -- checking --------------------------------------------------------------------------

    def check(self) -> None:
        self._order = {loc: i for i, loc in enumerate(self.locations)}
        for paths in self.alternatives:
            self._check_alternatives(paths)
        for name in sorted(self.occurrences):
            self._check_package(name)

    def _key(self, place: tuple[Location, int]) -> tuple[int, int]:
        return (self._order.get(place[0], len(self._order)), place[1])

    def _emit(self, rule_id: str, name: str, places: list[tuple[Location, int, str]],
              message: str, *extra: str) -> None:
        """One finding for a package, anchored at its first place; ``places`` are where the
        PR can fix it, in order, each with its fix."""
        found = _distinct(self.occurrences.get(name, []))
        unique: dict[tuple[str, int], tuple[Location, int, str]] = {}
        for place in places:
            unique.setdefault((place[0].path, place[1]), place)
        places = list(unique.values())
        first = places[0]
        result = finding(rule_id, first[0].path, first[1], message, fix=first[2],
                         details=tuple(f"{_where(o)}: `{o.spec.requirement}`" for o in found))
        paths = frozenset([*(p[0].path for p in places), *extra,
                           *(o.location.path for o in found)])
        anchors = tuple((loc.path, line, fix) for loc, line, fix in places)
        self.results.append(_Result(result, paths, self.group.name, name, anchors))

    def _check_alternatives(self, paths: list[_Path]) -> None:
        names = sorted({n for p in paths for n in p.names})
        for name in names:
            holders = [p for p in paths if name in p.names]
            donor = next((p for p in holders if p.names[name].spec.pin), holders[0])
            have = donor.names[name]
            lacking: list[tuple[_Path, Location, int]] = []
            for path in paths:
                if name in path.names or path.uncertain:
                    continue
                location, line = path.anchor({n for n in donor.names if n in path.names})
                self.missing.add((location, name))  # reported once: see _check_groups
                lacking.append((path, location, line))
            if lacking:
                self._missing(name, donor, have, lacking)

    def _missing(self, name: str, donor: _Path, have: Occurrence,
                 lacking: list[tuple[_Path, Location, int]]) -> None:
        image = [o for o in self.occurrences.get(name, []) if o.location.role == "dockerfile"]
        also = f"; the image installs it at {_where(image[0])}" if image else ""
        where = ", ".join(f"{p.label} (`{loc.path}:{line}`)" for p, loc, line in lacking)
        many = "paths" if len(lacking) > 1 else "path"
        message = (
            f"`{name}` is installed by the {donor.label} "
            f"(`{have.location.path}:{have.line}`) but not by the alternative {many} "
            f"{where}{also}."
        )
        places = [(loc, line, f'add `"{have.spec.requirement}"` to the {p.label}, line {line}')
                  for p, loc, line in lacking]
        self._emit("PIN003", name, places, message, donor.path)

    def _rank(self, occurrence: Occurrence) -> tuple[int, int, int]:
        loc = occurrence.location
        if loc.role == "dockerfile":
            kind = 0
        elif loc.role == "workflow":
            kind = 2
        else:
            kind = 1 if loc.path in self.image_files else 3
        return (kind, self._order[loc], occurrence.line)

    def _check_package(self, name: str) -> None:
        occurrences = [o for o in self.occurrences[name] if o.spec.applies == "always"]
        pinned = [o for o in occurrences if o.spec.pin is not None]
        if self.group.dockerfiles and name not in self.image_names:
            off = [o for o in pinned if o.location.role == "workflow"]
            if off:
                self._not_in_image(name, off)
        if not pinned:
            return
        ref = min(pinned, key=self._rank)
        problems: dict[str, list[tuple[Occurrence, str]]] = {}
        for o in occurrences:
            if o is not ref:
                compared = self._compare(ref, o)
                if compared is not None:
                    problems.setdefault(compared[0], []).append((o, compared[1]))
        for rule_id, items in problems.items():
            self._report(rule_id, name, ref, items)

    def _not_in_image(self, name: str, found: list[Occurrence]) -> None:
        found = _distinct(found)
        dockerfiles = ", ".join(f"`{p}`" for p in self.group.dockerfiles)
        where = _joined([(_pin_text(o.spec), _where(o)) for o in found], "by")
        message = (
            f"`{name}` is pinned to {where}, but no Dockerfile of the `{self.group.name}` "
            f"group installs it ({dockerfiles}), so PR CI and the image differ."
        )
        places = [(o.location, o.line,
                   f'add `"{o.spec.requirement}"` to `{self.group.dockerfiles[0]}` as well, '
                   "or drop the pin here") for o in found]
        self._emit("PIN004", name, places, message, *self.group.dockerfiles)

    def _compare(self, ref: Occurrence, o: Occurrence) -> tuple[str, str] | None:
        """The rule a place breaks against the reference pin, and what it does there."""
        roles = {ref.location.role, o.location.role}
        if o.spec.pin is not None:
            if same_pin(ref.spec, o.spec):
                return None
            rule_id = "PIN005" if "requirements" in roles else "PIN001"
            return rule_id, _pin_text(o.spec)
        if not allows(o.spec, ref.spec):
            if "requirements" in roles:
                rule_id = "PIN005"
            elif ref.location.role == "dockerfile" and o.location.role == "workflow":
                rule_id = "PIN004"
            else:
                rule_id = "PIN001"
            return rule_id, f"`{o.spec.specifier}` (which excludes {_pin_text(ref.spec)})"
        if o.location.role == "requirements":
            return None  # a range a requirements file declares, and it allows the pin
        rule_id = "PIN005" if ref.location.role == "requirements" else "PIN002"
        return rule_id, f"`{o.spec.specifier}`" if o.spec.specifier else "unpinned"

    def _report(self, rule_id: str, name: str, ref: Occurrence,
                items: list[tuple[Occurrence, str]]) -> None:
        items.sort(key=lambda item: self._key((item[0].location, item[0].line)))
        distinct: dict[tuple[str, int], tuple[Occurrence, str]] = {}
        for o, how in items:
            distinct.setdefault((o.location.path, o.line), (o, how))
        items = list(distinct.values())
        loose = all(o.spec.pin is None and allows(o.spec, ref.spec) for o, _ in items)
        pins = {o.spec.pin is not None for o, _ in items}
        verb = "installed" if loose else (
            "pinned to" if pins == {True} else "required as" if pins == {False}
            else "pinned or required as")
        shown = _joined([(how, _where(o)) for o, how in items], "at")
        message = f"`{name}` is pinned to {_pin_text(ref.spec)} at {_where(ref)}, but {verb} {shown}."
        places = [
            (o.location, o.line,
             (f'pin it here too: `"{ref.spec.requirement}"` {_at(o)}' if loose else
              f'use `"{ref.spec.requirement}"` {_at(o)}, as {_where(ref)} does')
             + (" (and at the other places listed)" if len(items) > 1 else ""))
            for o, _ in items
        ]
        self._emit(rule_id, name, places, message, ref.location.path)

    # -- the matrix ------------------------------------------------------------------------

    def table(self) -> Table:
        marked = {(r.finding.path, r.finding.line, r.package) for r in self.results}
        missing_names = {name for _, name in self.missing}
        shown: list[str] = []
        for name, found in sorted(self.occurrences.items()):
            places = {o.location for o in found}
            flagged = any((o.location.path, o.line, name) in marked for o in found)
            if len(places) >= 2 or flagged or name in missing_names:
                shown.append(name)
        alone = len(self.occurrences) - len(shown)
        rows = [self._row(name, marked) for name in shown[:MAX_ROWS]]
        used = [i for i in range(len(self.locations)) if any(row[i + 1] for row in rows)]
        notes = [f"{MISMATCH.strip()} marks a mismatch (see the findings)."]
        if len(shown) > MAX_ROWS:
            notes.append(f"{len(shown) - MAX_ROWS} more packages are not shown.")
        if alone:
            notes.append(f"{alone} packages installed in one place only are not shown.")
        for paths in self.alternatives:
            notes.append("Alternative install paths: " + " / ".join(p.label for p in paths) + ".")
        kind = "ROCm image" if self.group.rocm else "image"
        return Table(
            title=f"Dependency pins: `{self.group.name}` group ({kind})",
            header=("package", *(self.locations[i].label for i in used)),
            rows=tuple((row[0], *(row[i + 1] for i in used)) for row in rows),
            note=" ".join(notes),
        )

    def _row(self, name: str, marked: set[tuple[str | None, int | None, str | None]],
             ) -> tuple[str, ...]:
        cells = [name]
        by_place: dict[Location, list[Occurrence]] = {}
        for o in self.occurrences[name]:
            by_place.setdefault(o.location, []).append(o)
        for column in self.locations:
            here = by_place.get(column)
            if here:
                cells.append(", ".join(
                    o.spec.shown + (MISMATCH if (o.location.path, o.line, name) in marked else "")
                    for o in here
                ))
            elif (column, name) in self.missing:
                cells.append("missing" + MISMATCH)
            elif name in self.via.get(column, {}):
                via = self.via[column][name]
                cells.append(f"{via.spec.shown} (via `{via.location.path}`)")
            else:
                cells.append("")
        return tuple(cells)


def _where(o: Occurrence) -> str:
    if o.location.kind == "workflow":
        return f"step `{o.location.step}` (`{o.location.path}:{o.line}`)"
    if o.location.kind == "script" and o.location.step is not None:
        return f"`{o.location.path}:{o.line}` (run by step `{o.location.step}`)"
    return f"`{o.location.path}:{o.line}`"


def _at(o: Occurrence) -> str:
    """Where a fix edits: a workflow's step by its name and line, another file by its line."""
    if o.location.kind == "workflow":
        return f"in the step `{o.location.step}`, line {o.line}"
    if o.location.kind == "script":
        return f"in `{o.location.path}`, line {o.line}"
    return f"at line {o.line}"


def _distinct(found: list[Occurrence]) -> list[Occurrence]:
    """One occurrence per file and line (a script run by several steps is one place)."""
    seen: dict[tuple[str, int], Occurrence] = {}
    for o in found:
        seen.setdefault((o.location.path, o.line), o)
    return list(seen.values())


def _joined(items: list[tuple[str, str]], word: str) -> str:
    """`unpinned at A and B; `>=1` at C`: places that share what they do, together."""
    parts: list[tuple[str, list[str]]] = []
    for how, where in items[:MAX_PLACES]:
        if parts and parts[-1][0] == how:
            parts[-1][1].append(where)
        else:
            parts.append((how, [where]))
    text = "; ".join(f"{how} {word} " + (", ".join(places[:-1]) + " and " + places[-1]
                                          if len(places) > 1 else places[0])
                     for how, places in parts)
    more = len(items) - MAX_PLACES
    return text + (f"; and {more} more places" if more > 0 else "")


def _pin_text(spec: Spec) -> str:
    """What a pinned spec pins, for a message."""
    assert spec.pin is not None
    if spec.pin[0] == "git":
        return f"{ref_kind(spec.pin[2])} of `{spec.pin[1]}`"
    return f"`{spec.pin[1]}`"


# -- git refs across Dockerfiles (PIN006) ------------------------------------------------


def _git_drift(files: _Files, groups: list[PinGroup]) -> list[_Result]:
    """One finding per git URL that Dockerfiles of different groups install at different refs,
    anchored at the first Dockerfile that differs from the first one installing it."""
    member: dict[str, set[str]] = {}
    for group in groups:
        for path in group.dockerfiles:
            member.setdefault(path, set()).add(group.name)
    by_url: dict[str, list[tuple[str, int, Spec]]] = {}
    for path in sorted(member):
        parsed = files.dockerfile(path)
        if parsed is None:
            continue
        for install in parsed.installs:
            for entry in install.entries:
                if entry.spec.kind == "git" and entry.spec.ref and entry.spec.url:
                    by_url.setdefault(entry.spec.url, []).append((path, entry.line, entry.spec))
    out: list[_Result] = []
    for url, found in sorted(by_url.items()):
        ref_path, ref_line, ref_spec = found[0]
        differ = [
            (path, line, spec) for path, line, spec in found[1:]
            if path != ref_path and spec.ref != ref_spec.ref
            and not member.get(path, set()) & member.get(ref_path, set())  # PIN001 says it
        ]
        if not differ:
            continue
        where = "; ".join(f"{ref_kind(spec.ref)} in `{path}:{line}`"
                          for path, line, spec in differ)
        message = (
            f"`{url}` is installed at {ref_kind(ref_spec.ref)} in `{ref_path}:{ref_line}` "
            f"but at {where}."
        )
        branch = [p for p, _, s in [found[0], *differ] if not _commit(s.ref)]
        if branch:
            message += " A branch or tag moves: the images may build different code on " \
                       "different days even where the names agree; pin a commit."
        anchors = tuple((path, line, f"use `@{ref_spec.ref}` on line {line}, as `{ref_path}` "
                                     "does") for path, line, _ in differ)
        first = differ[0]
        result = finding("PIN006", first[0], first[1], message, fix=anchors[0][2])
        out.append(_Result(result, frozenset({ref_path, *(p for p, _, _ in differ)}), None,
                           None, anchors))
    return out


def _commit(ref: str | None) -> bool:
    return ref is not None and re.fullmatch(r"[0-9a-f]{7,40}", ref) is not None


def ref_kind(ref: str | None) -> str:
    """A git ref as a message names it: `commit `abc1234``, `tag `v1.2``, `branch `main``."""
    if _commit(ref):
        return f"commit `{ref}`"
    if ref is not None and re.fullmatch(r"v?\d+(?:\.\d+)+\S*", ref):
        return f"tag `{ref}`"
    return f"branch `{ref}`"


# -- the entry points --------------------------------------------------------------------


@dataclass
class _Analysis:
    groups: list[PinGroup]
    checked: list[_Group]
    results: list[_Result]


def _check_groups(snapshot: Snapshot) -> _Analysis:
    """Every group of a snapshot checked (once: see :data:`_ANALYSIS`)."""
    files = _Files(snapshot.sources)
    groups = _groups(snapshot, files)
    ignore: set[str] = {canonicalize_name(n) for n in snapshot.config.pins.ignore}
    checked = [_Group(files, g, ignore) for g in groups]
    results: list[_Result] = []
    seen: set[tuple[str, str | None, int | None, str]] = set()
    for group in checked:
        group.check()
        for r in group.results:
            key = (r.finding.rule, r.finding.path, r.finding.line, r.package or r.finding.message)
            if key not in seen:
                seen.add(key)
                results.append(r)
    results.extend(_git_drift(files, groups))
    for path, problem in sorted(files.problems.items()):  # only group files are ever read
        results.append(_Result(problem, frozenset({path}), None))
    return _Analysis(groups, checked, results)


_ANALYSIS: Derived[_Analysis] = Derived(_check_groups)


def _analysis(snapshot: Snapshot) -> _Analysis:
    """Every group of a snapshot checked once, kept as long as the snapshot."""
    return snapshot.derived(_ANALYSIS)


def analyze_pins(snapshot: Snapshot, changed: Collection[str] | None) -> PinOutcome:
    """Check the pin groups at one revision; with ``changed``, only findings touching it."""
    analysis = _analysis(snapshot)
    environment = frozenset(p for g in analysis.groups if g.rocm for p in (*g.dockerfiles, *g.requirements))
    if changed is None:
        findings = [r.finding for r in analysis.results]
        touched = {r.group for r in analysis.results}
        tables = [g.table() for g in analysis.checked if g.group.name in touched]
    else:
        changes = set(changed)
        findings = [_anchored(r, changes) for r in analysis.results if r.paths & changes]
        tables = [g.table() for g in analysis.checked if g.group.files & changes]
    return PinOutcome(findings, environment, tables)


def _anchored(result: _Result, changes: set[str]) -> Finding:
    """A finding anchored at the first of its places that the change touches, if any."""
    first = next((a for a in result.anchors if a[0] in changes), None)
    if first is None or (first[0] == result.finding.path and first[1] == result.finding.line):
        return result.finding
    return replace(result.finding, path=first[0], line=first[1], fix=first[2])


def group_files(snapshot: Snapshot) -> frozenset[str]:
    """Every file of every pin group: Dockerfiles, workflows and the requirements files they
    install, whatever those are named."""
    return frozenset(p for g in _analysis(snapshot).groups for p in g.files)


def describe_groups(snapshot: Snapshot) -> list[dict[str, object]]:
    """The pin groups (configured or inferred) as plain data, for `rocmbot config`."""
    analysis = _analysis(snapshot)
    return [
        {
            "name": g.group.name,
            "source": g.group.source,
            "rocm": g.group.rocm,
            "dockerfiles": list(g.group.dockerfiles),
            "workflows": list(g.group.workflows),
            "requirements": list(g.group.requirements),
            "scripts": list(g.group.scripts),
            "hardware": g.group.kind,
            "callers": list(g.group.callers),
            "install_paths": [loc.label for loc in g.locations if loc.kind == "workflow"],
        }
        for g in analysis.checked
    ]
