"""Dependency pins across Dockerfiles, workflow install paths and requirements (PIN rules).

A pin group is a Dockerfile, the workflows whose jobs run in its image, and the requirements
files either installs. Within a group every named package is compared across its places
(locations): the Dockerfile, each workflow step that runs `pip install` (an install path),
and each requirements file. The reference pin of a package is the image's (a Dockerfile, or a
requirements file a Dockerfile installs), else a workflow's, else another requirements file's;
each place that disagrees with it gets one finding, anchored at the spec that disagrees.
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Literal

from packaging.utils import canonicalize_name

from bot.analysis.dockerfile import Dockerfile, parse_dockerfile
from bot.analysis.findings import Finding, Severity, finding, rule
from bot.analysis.report import Table
from bot.analysis.requirements import (
    FileRef,
    Install,
    RequirementsFile,
    Spec,
    allows,
    parse_requirements,
    same_pin,
)
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

PIN001 = rule(
    "PIN001",
    "version-conflict",
    Severity.ERROR,
    "One package is pinned to different versions (or git refs) within a pin group.",
    """
    ## What it does
    Compares every pin (`==`, `===`, a git URL at a ref) of a package across the Dockerfile,
    the workflow install paths and, for workflows and Dockerfiles, the other Dockerfiles of the
    same group, and reports each place whose pin differs from the image's. A range that
    excludes the pinned version counts as a different pin.

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
    """,
)

PIN002 = rule(
    "PIN002",
    "pinned-here-loose-there",
    Severity.WARNING,
    "A package pinned in one place is installed unpinned or with a range in another.",
    """
    ## What it does
    Reports an install command that names a package without a pin (or with a range that
    allows the pinned version) when another place of the group pins it. Ranges written in
    requirements files are declarations, not installs, and are left alone.

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
    """,
)

PIN003 = rule(
    "PIN003",
    "missing-from-install-path",
    Severity.ERROR,
    "A package installed by one install path is missing from an alternative path.",
    """
    ## What it does
    Finds alternative install paths of a workflow: steps of one job whose `if:` conditions are
    complementary (`inputs.x` / `!inputs.x`, `== 'a'` / `!= 'a'`), jobs whose conditions are,
    and the same install step repeated across jobs. Each package one path installs must be
    installed by the others too (directly or through a requirements file).

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
    """,
)

PIN004 = rule(
    "PIN004",
    "image-ci-divergence",
    Severity.WARNING,
    "The workflow pins a package the image never installs, or reinstalls an image pin.",
    """
    ## What it does
    Reports a workflow install that pins a package no Dockerfile of its group installs
    (directly or through a requirements file), and one that reinstalls a package the
    Dockerfile pins with a range excluding that pin.

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
    """,
)

PIN005 = rule(
    "PIN005",
    "requirements-drift",
    Severity.WARNING,
    "A requirements file's pin differs from the Dockerfile or workflow.",
    """
    ## What it does
    Compares the pins of the requirements files a group installs (`pip install -r`, mapped
    back through `COPY`) with the Dockerfile and the workflows, and reports an install that
    leaves a package unpinned that a requirements file pins.

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
    """,
)

PIN006 = rule(
    "PIN006",
    "git-ref-drift",
    Severity.WARNING,
    "The same git URL dependency is pinned to different commits in two Dockerfiles.",
    """
    ## What it does
    Compares git URL installs (`git+https://github.com/org/repo.git@ref`) across every
    Dockerfile of the repository, including Dockerfiles of different pin groups (the CUDA
    `Dockerfile` and `Dockerfile.rocm`), by repository URL and ref.

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
    """,
)

# -- places and groups -------------------------------------------------------------------

Kind = Literal["dockerfile", "workflow", "requirements"]


@dataclass(frozen=True, slots=True)
class Location:
    """A place that installs or lists packages: a matrix column."""

    kind: Kind
    path: str
    label: str
    step: str | None = None
    line: int | None = None  # the step's line, for a workflow install path


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
    """A Dockerfile (or several), its workflows and the requirements files they install."""

    name: str
    source: Literal["config", "inferred"]
    rocm: bool
    dockerfiles: list[str]
    workflows: list[str]
    requirements: list[str] = field(default_factory=list)

    @property
    def files(self) -> frozenset[str]:
        return frozenset([*self.dockerfiles, *self.workflows, *self.requirements])


@dataclass(frozen=True, slots=True)
class _Result:
    """A finding and every file it names (what `analyze` matches against the changes)."""

    finding: Finding
    paths: frozenset[str]
    group: str | None
    package: str | None = None


@dataclass(frozen=True)
class PinOutcome:
    """Pin findings to report, the ROCm group's files (the environment tier), and matrices."""

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

    def resolve(self, ref: FileRef) -> str | None:
        """The repository file a `-r`/`-c` names: its first candidate that exists."""
        return next((p for p in ref.candidates if self.exists(p)), None)


def _list(snapshot: Snapshot, patterns: Iterable[str]) -> list[str]:
    found: set[str] = set()
    for pattern in patterns:
        found.update(snapshot.tree.list(pattern))
    return sorted(found)


def _groups(snapshot: Snapshot, files: _Files) -> list[PinGroup]:
    """The configured groups, else the inferred ones; then called workflows and requirements."""
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
        rocm_d = [p for p in dockerfiles if is_rocm_name(p)]
        rocm_w, other_w = _infer_workflows(files, workflows)
        if rocm_d or rocm_w:
            groups.append(PinGroup("rocm", "inferred", True, rocm_d, rocm_w))
        other_d = [p for p in dockerfiles if p not in rocm_d]
        if other_d or other_w:
            groups.append(PinGroup("default", "inferred", False, other_d, other_w))
    for group in groups:
        _join_requirements(files, group)
    return groups


def _infer_workflows(files: _Files, workflows: list[str]) -> tuple[list[str], list[str]]:
    """ROCm and other workflows: a top-level workflow by its name, a called one by its callers.

    A reusable workflow runs where the workflow calling it runs, so it joins the group of
    every top-level workflow that reaches it; one whose name says ROCm stays ROCm only.
    """
    known = set(workflows)
    calls: dict[str, list[str]] = {}
    for path in workflows:
        parsed = files.workflow(path)
        calls[path] = [c for c in parsed.calls if c in known] if parsed is not None else []
    called = {c for targets in calls.values() for c in targets}
    member: dict[str, set[bool]] = {p: set() for p in workflows}
    for root in (p for p in workflows if p not in called):
        rocm = is_rocm_name(root)
        queue, seen = [root], {root}
        while queue:
            path = queue.pop()
            member[path].add(rocm)
            for callee in calls[path]:
                if callee not in seen:
                    seen.add(callee)
                    queue.append(callee)
    for path in workflows:
        if is_rocm_name(path):
            member[path] = {True}
        elif not member[path]:  # only reached through a cycle
            member[path] = {False}
    return ([p for p in workflows if True in member[p]],
            [p for p in workflows if False in member[p]])


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
    for path in group.workflows:
        workflow = files.workflow(path)
        if workflow is not None:
            for job in workflow.jobs:
                for step in job.steps:
                    yield from step.installs


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
        self._seen: set[tuple[str, str, int, str]] = set()
        self._order: dict[Location, int] = {}
        self._read()

    # -- collecting ------------------------------------------------------------------------

    def _add(self, location: Location, spec: Spec, line: int) -> Occurrence | None:
        if spec.name is None or not spec.is_package or spec.name in self.ignore:
            return None
        occurrence = Occurrence(location, spec, line)
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

    def _installed(self, installs: Iterable[Install], location: Location) -> dict[str, Occurrence]:
        names: dict[str, Occurrence] = {}
        for install in installs:
            for entry in install.entries:
                occurrence = self._add(location, entry.spec, entry.line)
                if occurrence is not None:
                    names.setdefault(occurrence.name, occurrence)
            for ref in install.files:
                if not ref.constraint:
                    for name, occ in self._from_file(self.files.resolve(ref), set()).items():
                        names.setdefault(name, occ)
        return names

    def _read(self) -> None:
        for path in self.group.dockerfiles:
            parsed = self.files.dockerfile(path)
            if parsed is None:
                continue
            location = Location("dockerfile", path, path)
            self.locations.append(location)
            names = self._installed(parsed.installs, location)
            self.via[location] = names
            self.image_names.update(names)
            for install in parsed.installs:
                for ref in install.files:
                    self._from_file(self.files.resolve(ref), self.image_files)
        for path in self.group.workflows:
            workflow = self.files.workflow(path)
            if workflow is not None:
                self._read_workflow(workflow)
        for path in self.group.requirements:
            listed = self.files.requirements(path)
            if listed is None:
                continue
            location = Location("requirements", path, path)
            self.locations.append(location)
            for entry in listed.entries:
                self._add(location, entry.spec, entry.line)

    def _read_workflow(self, workflow: Workflow) -> None:
        jobs: list[tuple[Job, _Path]] = []
        by_name: dict[str, list[_Path]] = {}
        for job in workflow.jobs:
            steps: list[tuple[Step, _Path]] = []
            for step in job.steps:
                if not step.installs:
                    continue
                location = Location(
                    "workflow", workflow.path,
                    f"{posixpath.basename(workflow.path)} / {job.id} / {step.name}",
                    step.name, step.line,
                )
                self.locations.append(location)
                names = self._installed(step.installs, location)
                self.via[location] = names
                path = _Path(f"step `{step.name}`", workflow.path,
                             [(location, i) for i in step.installs], names, job.id,
                             any(self._uncertain(i) for i in step.installs))
                steps.append((step, path))
                by_name.setdefault(step.name.lower(), []).append(path)
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
        for paths in by_name.values():
            if len(paths) >= 2 and len({p.job for p in paths}) == len(paths) and _alike(paths):
                self.alternatives.append(paths)

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
        return "unresolved" in kinds or ("local" in kinds and "--no-deps" not in install.flags)

    # -- checking --------------------------------------------------------------------------

    def check(self) -> None:
        self._order = {loc: i for i, loc in enumerate(self.locations)}
        for paths in self.alternatives:
            self._check_alternatives(paths)
        for name in sorted(self.occurrences):
            self._check_package(name)

    def _emit(self, rule_id: str, path: str, line: int, name: str, message: str, fix: str,
              *extra: str) -> None:
        found = self.occurrences.get(name, [])
        result = finding(rule_id, path, line, message, fix=fix,
                         details=tuple(f"{_where(o)}: `{o.spec.requirement}`" for o in found))
        paths = frozenset([path, *extra, *(o.location.path for o in found)])
        self.results.append(_Result(result, paths, self.group.name, name))

    def _check_alternatives(self, paths: list[_Path]) -> None:
        names = sorted({n for p in paths for n in p.names})
        for name in names:
            holders = [p for p in paths if name in p.names]
            donor = next((p for p in holders if p.names[name].spec.pin), holders[0])
            have = donor.names[name]
            for path in paths:
                if name in path.names or path.uncertain:
                    continue
                ours, theirs = path.label, donor.label
                if ours == theirs:  # the same step repeated in two jobs
                    ours, theirs = f"{ours} of job `{path.job}`", f"{theirs} of job `{donor.job}`"
                location, line = path.anchor({n for n in donor.names if n in path.names})
                key = (location.path, location.label, line, name)
                if key in self._seen:
                    continue
                self._seen.add(key)
                self.missing.add((location, name))
                image = [o for o in self.occurrences.get(name, [])
                         if o.location.kind == "dockerfile"]
                also = f"; the image installs it at {_where(image[0])}" if image else ""
                message = (
                    f"`{name}` is installed by the {theirs} "
                    f"(`{have.location.path}:{have.line}`) but not by the alternative "
                    f"{ours} (`{path.path}:{line}`){also}."
                )
                fix = f'add `"{have.spec.requirement}"` to the {ours}, line {line}'
                self._emit("PIN003", path.path, line, name, message, fix, donor.path)

    def _rank(self, occurrence: Occurrence) -> tuple[int, int, int]:
        loc = occurrence.location
        if loc.kind == "dockerfile":
            kind = 0
        elif loc.kind == "workflow":
            kind = 2
        else:
            kind = 1 if loc.path in self.image_files else 3
        return (kind, self._order[loc], occurrence.line)

    def _check_package(self, name: str) -> None:
        occurrences = [o for o in self.occurrences[name] if o.spec.applies == "always"]
        pinned = [o for o in occurrences if o.spec.pin is not None]
        if self.group.dockerfiles and name not in self.image_names:
            for o in pinned:
                if o.location.kind == "workflow":
                    self._not_in_image(name, o)
        if not pinned:
            return
        ref = min(pinned, key=self._rank)
        for o in occurrences:
            if o is not ref:
                self._compare(name, ref, o)

    def _not_in_image(self, name: str, o: Occurrence) -> None:
        dockerfiles = ", ".join(f"`{p}`" for p in self.group.dockerfiles)
        message = (
            f"`{name}` is pinned to {_pin_text(o.spec)} by {_where(o)}, but no Dockerfile of "
            f"the `{self.group.name}` group installs it ({dockerfiles}), so PR CI and the "
            "image differ."
        )
        fix = (f'add `"{o.spec.requirement}"` to `{self.group.dockerfiles[0]}` as well, '
               "or drop the pin here")
        self._emit("PIN004", o.location.path, o.line, name, message, fix,
                   *self.group.dockerfiles)

    def _compare(self, name: str, ref: Occurrence, o: Occurrence) -> None:
        kinds = {ref.location.kind, o.location.kind}
        found = self.occurrences[name]
        places = f" (all places: {_places(found)})" if len(found) > 2 else ""
        fix = f'use `"{ref.spec.requirement}"` {_at(o)}, as {_where(ref)} does'
        if o.spec.pin is not None:
            if same_pin(ref.spec, o.spec):
                return
            rule_id = "PIN005" if "requirements" in kinds else "PIN001"
            message = (
                f"`{name}` is pinned to {_pin_text(o.spec)} at {_where(o)} but to "
                f"{_pin_text(ref.spec)} at {_where(ref)}{places}."
            )
        elif not allows(o.spec, ref.spec):
            if "requirements" in kinds:
                rule_id = "PIN005"
            elif ref.location.kind == "dockerfile" and o.location.kind == "workflow":
                rule_id = "PIN004"
            else:
                rule_id = "PIN001"
            message = (
                f"`{name}` is required as `{o.spec.specifier}` at {_where(o)}, which excludes "
                f"{_pin_text(ref.spec)} pinned at {_where(ref)}{places}."
            )
        elif o.location.kind == "requirements":
            return  # a range a requirements file declares, and it allows the pin
        else:
            rule_id = "PIN005" if ref.location.kind == "requirements" else "PIN002"
            how = f"as `{o.spec.specifier}`" if o.spec.specifier else "unpinned"
            message = (
                f"`{name}` is installed {how} at {_where(o)} but pinned to "
                f"{_pin_text(ref.spec)} at {_where(ref)}{places}."
            )
            fix = f'pin it here too: `"{ref.spec.requirement}"` {_at(o)}'
        self._emit(rule_id, o.location.path, o.line, name, message, fix, ref.location.path)

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
    return f"`{o.location.path}:{o.line}`"


def _at(o: Occurrence) -> str:
    """Where a fix edits: a workflow's step by its name and line, another file by its line."""
    if o.location.kind == "workflow":
        return f"in the step `{o.location.step}`, line {o.line}"
    return f"at line {o.line}"


def _places(found: list[Occurrence]) -> str:
    shown = ", ".join(f"{_where(o)} `{o.spec.shown}`" for o in found[:MAX_PLACES])
    more = len(found) - MAX_PLACES
    return shown + (f" and {more} more" if more > 0 else "")


def _pin_text(spec: Spec) -> str:
    """What a pinned spec pins, for a message."""
    assert spec.pin is not None
    if spec.pin[0] == "git":
        return f"commit `{spec.pin[2]}` of `{spec.pin[1]}`"
    return f"`{spec.pin[1]}`"


def _alike(paths: list[_Path]) -> bool:
    """Same-named steps in several jobs are one step repeated when they mostly agree."""
    union: set[str] = set()
    for p in paths:
        union.update(p.names)
    return bool(union) and all(2 * len(p.names) >= len(union) for p in paths)


# -- git refs across Dockerfiles (PIN006) ------------------------------------------------


def _git_drift(files: _Files, groups: list[PinGroup]) -> list[_Result]:
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
        for path, line, spec in found[1:]:
            if path == ref_path or spec.ref == ref_spec.ref:
                continue
            if member.get(path, set()) & member.get(ref_path, set()):
                continue  # one group: PIN001 says it
            message = (
                f"`{url}` is installed at commit `{spec.ref}` in `{path}:{line}` but at "
                f"`{ref_spec.ref}` in `{ref_path}:{ref_line}`."
            )
            fix = f"use `@{ref_spec.ref}` on line {line}, as `{ref_path}` does"
            result = finding("PIN006", path, line, message, fix=fix)
            out.append(_Result(result, frozenset({path, ref_path}), None))
    return out


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
            key = (r.finding.rule, r.finding.path, r.finding.line, r.finding.message)
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
    environment = frozenset(p for g in analysis.groups if g.rocm for p in g.files)
    if changed is None:
        findings = [r.finding for r in analysis.results]
        touched = {r.group for r in analysis.results}
        tables = [g.table() for g in analysis.checked if g.group.name in touched]
    else:
        changes = set(changed)
        findings = [r.finding for r in analysis.results if r.paths & changes]
        tables = [g.table() for g in analysis.checked if g.group.files & changes]
    return PinOutcome(findings, environment, tables)


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
            "install_paths": [loc.label for loc in g.locations if loc.kind == "workflow"],
        }
        for g in analysis.checked
    ]
