"""The pin groups of a snapshot: the configured ones, else one per image and one per job that
installs into no known image; then the scripts and requirements files each installs."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from bot.analysis.pins.conditions import complementary
from bot.analysis.pins.files import Files, Script
from bot.analysis.pins.images import Built, built_by, built_images, job_images
from bot.analysis.pins.places import Mode, PinGroup, takes
from bot.analysis.requirements import Install
from bot.analysis.snapshot import Snapshot
from bot.analysis.tree import match
from bot.analysis.workflows import Job, Step, Workflow

DOCKERFILE_GLOBS = ("**/Dockerfile", "**/Dockerfile.*", "**/*.Dockerfile", "**/*.dockerfile",
                    "**/Containerfile")


def is_rocm_name(path: str) -> bool:
    """A file name that says ROCm (or AMD, as a word): `Dockerfile.rocm`, `pr-test-amd.yml`."""
    name = posixpath.basename(path).lower()
    return "rocm" in name or re.search(r"(?<![a-z0-9])amd(?![a-z0-9])", name) is not None


def _list(snapshot: Snapshot, patterns: Iterable[str]) -> list[str]:
    found: set[str] = set()
    for pattern in patterns:
        found.update(snapshot.tree.list(pattern))
    return sorted(found)


def find_groups(snapshot: Snapshot, files: Files) -> list[PinGroup]:
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


def _infer(files: Files, dockerfiles: list[str], workflows: list[str]) -> list[PinGroup]:
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
    built = built_images(files, workflows, set(dockerfiles))
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
                                         groups, built):
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


def _images_of(files: Files, workflow: Workflow, job: Job, callers: list[tuple[str, Job]],
               kinds: dict[str, str | None], groups: dict[str, PinGroup],
               built: list[Built] | None = None) -> list[tuple[str, Mode]]:
    """The groups a job installs into, with what of it each takes.

    A job in a `container:` installs into the image it names: when the repository's
    workflows build images (``built``), the Dockerfile that builds one of that name; an image
    none of them builds, or one given by an expression that cannot be followed, makes the
    job a group of its own (its container noted), never an image guessed from a name.
    Otherwise (no workflow builds an image) a `container:` job installs into the image of
    its hardware. A job on the runner
    itself installs there, into no known image: a group of its own (shared with the jobs whose
    `if:` is complementary to its own); only what it sends into a container with `docker exec`
    goes to the image of its hardware. A hosted runner's job is always a group of its own.
    """
    path = workflow.path
    if job.container is not None and built:
        named = job_images(workflow, job, callers)
        tied = [d for image in named or () for d in built_by(image, built)]
        if named is not None and tied:
            return [(name, "all") for name in dict.fromkeys(tied)]
        return [(_own(workflow, job, groups, job.container, tuple(named or ())), "all")]
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


def _own(workflow: Workflow, job: Job, groups: dict[str, PinGroup],
         container: str | None = None, images: tuple[str, ...] = ()) -> str:
    """The group of a job that installs into no known image (``container``: the image it
    names, which no Dockerfile of the repository is known to build)."""
    path = workflow.path
    for key, group in groups.items():  # jobs of one workflow in one such container: together
        if container is not None and group.container == container and \
                key.startswith(f"{path} / "):
            return key
    for other in workflow.jobs:  # jobs that are alternatives of each other stay together
        key = f"{path} / {other.id}"
        if other.condition and job.condition and key in groups and \
                complementary(other.condition, job.condition):
            return key
    name = f"{path} / {job.id}"
    kind = hardware(" ".join([job.runs_on, job.container or "", posixpath.basename(path)]))
    groups[name] = PinGroup(name, "inferred", kind == "rocm", [], [], kind=kind,
                            container=container, images=images)
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


def _follow_calls(files: Files, group: PinGroup, assigned: set[str]) -> None:
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


def _installs(files: Files, group: PinGroup) -> Iterable[Install]:
    for path in group.dockerfiles:
        parsed = files.dockerfile(path)
        if parsed is not None:
            yield from parsed.installs
            yield from (i for _, i in files.run_scripts(parsed.scripts, set()))
    for step, mode in _steps(files, group):
        yield from (i for i in step.installs if takes(mode, i))
        yield from (i for _, i in files.run_scripts(step.scripts, set()) if takes(mode, i))
    for path, script in roots(files, group):
        yield from script.installs
        yield from (i for _, i in files.run_scripts(script.scripts, {path}))


def roots(files: Files, group: PinGroup) -> list[tuple[str, Script]]:
    """The scripts a group is made of (an environment a script makes), parsed."""
    parsed = [(path, files.script(path)) for path in group.roots]
    return [(path, script) for path, script in parsed if script is not None]


def _steps(files: Files, group: PinGroup) -> Iterable[tuple[Step, Mode]]:
    """The steps of the group's jobs, with what of each the group takes."""
    for path in group.workflows:
        workflow = files.workflow(path)
        if workflow is not None:
            for job in workflow.jobs:
                if group.runs(path, job.id):
                    mode = group.mode(path, job.id)
                    yield from ((step, mode) for step in job.steps)


def _join_scripts(files: Files, group: PinGroup, envs: set[str]) -> None:
    """Shell scripts the group's image or steps run (and those they run) join it; those
    that make an environment of their own go to ``envs``."""
    seen: set[str] = set(group.roots)
    for path in group.dockerfiles:
        parsed = files.dockerfile(path)
        if parsed is not None:
            files.run_scripts(parsed.scripts, seen, envs)
    for step, _ in _steps(files, group):
        files.run_scripts(step.scripts, seen, envs)
    for _, script in roots(files, group):
        files.run_scripts(script.scripts, seen, envs)
    group.scripts = sorted(seen - envs)


def _join_requirements(files: Files, group: PinGroup) -> None:
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
