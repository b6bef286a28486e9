"""The environment a test sees in CI, per backend: what the workflows and the image set.

CI runs tests in a known environment: the `env:` of the workflows (workflow, job and step
level), the names a step writes to `$GITHUB_ENV`, the container's `--env` options, and the
image's `ENV`. A variable none of them sets is unset there, so
``os.environ.get("X", "0")`` takes its default. A backend's places are its own: the ROCm
workflows (file name says ROCm or AMD, and the reusable workflows they call) and ROCm
images for ROCm markers, the others for the others. A backend with no workflow of its own
has an environment that is not known (nothing is taken as unset).

A variable set to one plain value everywhere it is set (at the workflow or job level, or in
the image) has that value; one set to several values, to an expression, only by some steps,
or through `$GITHUB_ENV` or `--env`, is set to what cannot be known.

The **platform variable** is inferred: a variable the ROCm places set to a ROCm-ish value
(``rocm``, ``amd``, ``hip``) that a test file compares, such as
``os.getenv("MILES_HARDWARE_PLATFORM") == "rocm"``. It has that value for ROCm markers and
is unset for the others, whatever their workflows say. ``launch.platform_env`` overrides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.analysis.dockerfile import parse_dockerfile
from bot.analysis.pins import DOCKERFILE_GLOBS, is_rocm_name
from bot.analysis.snapshot import Derived, Snapshot
from bot.analysis.source import Unreadable
from bot.analysis.values import Unknown
from bot.analysis.workflows import EnvSetting, parse_workflow, workflow_env

BACKENDS = ("cpu", "cuda", "rocm")
_ROCM_VALUES = re.compile(r"(?i)\A(?:rocm|amd|hip)\Z")


@dataclass(frozen=True)
class CiEnvironment:
    """Per backend: the variables CI sets (None: unset; an Unknown: set, to what cannot be
    known), whether every other variable is unset (``closed``), and the names whose value
    differs between backends (what a run that reads them depends on)."""

    values: dict[str, dict[str, str | Unknown | None]] = field(default_factory=dict)
    closed: dict[str, bool] = field(default_factory=dict)
    differing: frozenset[str] = frozenset()
    platform: tuple[str, ...] = ()  # inferred platform variables


def _make(snapshot: Snapshot) -> CiEnvironment:
    settings = snapshot.config.launch
    workflows = snapshot.workflows()
    rocm_workflows = _rocm_workflows(snapshot, workflows)
    dockerfiles = sorted(snapshot.matching(list(DOCKERFILE_GLOBS)))
    places: dict[str, tuple[list[str], list[str]]] = {
        "rocm": ([w for w in workflows if w in rocm_workflows],
                 [d for d in dockerfiles if is_rocm_name(d)]),
    }
    others = ([w for w in workflows if w not in rocm_workflows],
              [d for d in dockerfiles if not is_rocm_name(d)])
    places["cuda"] = places["cpu"] = others
    values: dict[str, dict[str, str | Unknown | None]] = {}
    closed: dict[str, bool] = {}
    for backend in BACKENDS:
        found, known = _environment(snapshot, *places[backend])
        values[backend] = found
        closed[backend] = known and bool(places[backend][0])
    platform = tuple(sorted(_platform(snapshot, values["rocm"])))
    for name in platform:
        for backend in BACKENDS:
            values[backend][name] = values["rocm"][name] if backend == "rocm" else None
    for name, by_backend in settings.platform_env.items():  # the configuration wins
        for backend in BACKENDS:
            values[backend][name] = by_backend.get(backend)  # type: ignore[call-overload]
    for name, value in settings.env.items():
        for backend in BACKENDS:
            values[backend][name] = value
    names = {n for v in values.values() for n in v}
    differing = frozenset(n for n in names if len({_key(values[b], n, closed[b])
                                                   for b in BACKENDS}) > 1)
    return CiEnvironment(values, closed, differing, platform)


def _key(values: dict[str, str | Unknown | None], name: str, closed: bool) -> object:
    if name not in values:
        return None if closed else "<open>"
    value = values[name]
    return "<unknown>" if isinstance(value, Unknown) else value


def _rocm_workflows(snapshot: Snapshot, workflows: list[str]) -> set[str]:
    """ROCm workflows by name, and the local reusable workflows they call."""
    out = {w for w in workflows if is_rocm_name(w)}
    queue = sorted(out)
    while queue:
        text = snapshot.sources.text(queue.pop())
        if not isinstance(text, str):
            continue
        parsed = parse_workflow("", text)
        for callee in parsed.calls if not isinstance(parsed, Unreadable) else ():
            if callee in workflows and callee not in out:
                out.add(callee)
                queue.append(callee)
    return out


def _environment(snapshot: Snapshot, workflows: list[str],
                 dockerfiles: list[str]) -> tuple[dict[str, str | Unknown | None], bool]:
    """What the places set, and whether the names they set are all known."""
    broad: dict[str, set[str | None]] = {}
    narrow: dict[str, set[str | None]] = {}
    settings: list[EnvSetting] = []
    texts = {p: snapshot.sources.text(p) for p in [*workflows, *dockerfiles]}
    for path in workflows:
        text = texts[path]
        settings.extend(workflow_env(text) if isinstance(text, str) else [EnvSetting(None, None, "job")])
    for path in dockerfiles:
        text = texts[path]
        image = parse_dockerfile(path, text).env if isinstance(text, str) else ()
        settings.extend(EnvSetting(n, None if v is None or "$" in v else v, "image") for n, v in image)
        if not isinstance(text, str):
            settings.append(EnvSetting(None, None, "image"))
    known = True
    for setting in settings:
        if not _note(setting, broad, narrow):
            known = False
    out: dict[str, str | Unknown | None] = {}
    for name in dict.fromkeys([*broad, *narrow]):
        seen = broad.get(name, set()) | narrow.get(name, set())
        value = next(iter(seen)) if len(seen) == 1 else None
        if value is None or (name in narrow and name not in broad):
            out[name] = Unknown(f"${name} (set in CI to what cannot be known)")
        else:
            out[name] = value
    return out, known


def _note(setting: EnvSetting, broad: dict[str, set[str | None]],
          narrow: dict[str, set[str | None]]) -> bool:
    if setting.name is None:
        return False
    target = narrow if setting.level == "step" else broad
    target.setdefault(setting.name, set()).add(setting.value)
    return True


def _platform(snapshot: Snapshot, rocm: dict[str, str | Unknown | None]) -> set[str]:
    """Variables the ROCm places set to a ROCm-ish value that a test file names."""
    candidates = {n for n, v in rocm.items() if isinstance(v, str) and _ROCM_VALUES.match(v)}
    if not candidates:
        return set()
    found: set[str] = set()
    for path in snapshot.test_paths():
        text = snapshot.sources.text(path)
        if not isinstance(text, str):
            continue
        found.update(n for n in candidates if n in text)
        if found == candidates:
            break
    return found


_CI_ENV: Derived[CiEnvironment] = Derived(_make)


def ci_environment(snapshot: Snapshot) -> CiEnvironment:
    """The CI environment of a snapshot (worked out once)."""
    return snapshot.derived(_CI_ENV)
