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

:mod:`.groups` finds the groups (reading each file once through :mod:`.files`), :mod:`.collect`
lists what each place of a group installs, :mod:`.compare` checks and reports PIN001..PIN005,
:mod:`.gitrefs` PIN006 across every Dockerfile, and :mod:`.matrix` draws a group's table.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace

from bot.analysis.findings import Finding
from bot.analysis.pins.changes import PinChange, pin_changes
from bot.analysis.pins.collect import Inventory
from bot.analysis.pins.compare import Comparison
from bot.analysis.pins.conditions import complementary
from bot.analysis.pins.files import Files
from bot.analysis.pins.gitrefs import git_drift, ref_kind
from bot.analysis.pins.groups import DOCKERFILE_GLOBS, find_groups, hardware, is_rocm_name
from bot.analysis.pins.matrix import table
from bot.analysis.pins.places import PinGroup, Result
from bot.analysis.report import Table
from bot.analysis.requirements import canonicalize_name
from bot.analysis.snapshot import Derived, Snapshot

__all__ = ["DOCKERFILE_GLOBS", "PinChange", "PinGroup", "PinOutcome", "analyze_pins",
           "changes_between", "complementary",
           "describe_groups", "group_files", "hardware", "is_rocm_name", "ref_kind"]


@dataclass(frozen=True)
class PinOutcome:
    """Pin findings to report, the ROCm images and the requirements files they install (the
    environment tier: the scripts and workflows a job runs count only when a per-PR job runs
    them, which the engine judges), and matrices."""

    findings: list[Finding] = field(default_factory=list)
    environment: frozenset[str] = frozenset()
    tables: list[Table] = field(default_factory=list)


@dataclass
class _Analysis:
    groups: list[PinGroup]
    checked: list[Comparison]
    results: list[Result]


def _check_groups(snapshot: Snapshot) -> _Analysis:
    """Every group of a snapshot checked (once: see :data:`_ANALYSIS`)."""
    files = Files(snapshot.sources)
    groups = find_groups(snapshot, files)
    ignore: set[str] = {canonicalize_name(n) for n in snapshot.config.pins.ignore}
    checked = [Comparison(Inventory(files, g, ignore)) for g in groups]
    results: list[Result] = []
    seen: set[tuple[str, str | None, int | None, str]] = set()
    for compared in checked:
        compared.check()
        for r in compared.results:
            key = (r.finding.rule, r.finding.path, r.finding.line, r.package or r.finding.message)
            if key not in seen:
                seen.add(key)
                results.append(r)
    results.extend(git_drift(files, groups))
    for path, problem in sorted(files.problems.items()):  # only group files are ever read
        results.append(Result(problem, frozenset({path}), None))
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
        tables = [table(c) for c in analysis.checked if c.inventory.group.name in touched]
    else:
        changes = set(changed)
        findings = [_anchored(r, changes) for r in analysis.results if r.paths & changes]
        tables = [table(c) for c in analysis.checked if c.inventory.group.files & changes]
    return PinOutcome(findings, environment, tables)


def changes_between(base: Snapshot, head: Snapshot, changed: Collection[str]) -> list[PinChange]:
    """The pins the ``changed`` files add, change or remove, with whether their places agree
    at the head (see :mod:`.changes`)."""
    changes = set(changed)
    after = _analysis(head)
    if not any(g.files & changes for g in after.groups):
        return []
    before = _analysis(base)
    return pin_changes({c.inventory.group.name: c.inventory for c in before.checked},
                       {c.inventory.group.name: c.inventory for c in after.checked
                        if c.inventory.group.files & changes},
                       after.results, changes)


def _anchored(result: Result, changes: set[str]) -> Finding:
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
    return [
        {
            "name": g.name,
            "source": g.source,
            "rocm": g.rocm,
            "dockerfiles": list(g.dockerfiles),
            "workflows": list(g.workflows),
            "requirements": list(g.requirements),
            "scripts": list(g.scripts),
            "hardware": g.kind,
            "callers": list(g.callers),
            "install_paths": [loc.label for loc in inventory.locations if loc.kind == "workflow"],
        }
        for inventory in (c.inventory for c in _analysis(snapshot).checked)
        for g in (inventory.group,)
    ]
