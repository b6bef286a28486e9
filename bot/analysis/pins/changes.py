"""What a change did to the pins: each package whose pin a changed file adds, changes or
removes, where it is pinned now across its group, and whether every place agrees.

The summary of a PR says it in one line per package ("`numba==0.65.1`: `docker/Dockerfile.rocm:170`,
`_run-ci-rocm.yml` (steps `Install dependencies`, `Install (miles only)`): consistent"); the
findings of the PIN rules say what disagrees, and this names them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from bot.analysis.pins.collect import Inventory
from bot.analysis.pins.places import Occurrence, Result

Kind = Literal["added", "changed", "removed"]
# the rules that say a package's places disagree within a group
_DISAGREE = frozenset({"PIN001", "PIN002", "PIN004", "PIN005"})


@dataclass(frozen=True, slots=True)
class PinChange:
    """One package whose pin the change touched, in one pin group."""

    package: str
    group: str
    kind: Kind
    requirement: str  # the pin at the head (`numba==0.65.1`), or the one removed
    places: tuple[str, ...]  # where it is pinned at the head, one per file
    disagree: tuple[str, ...]  # the PIN rules that find its places disagree (none: consistent)

    @property
    def consistent(self) -> bool:
        return not self.disagree

    def as_json(self) -> dict[str, object]:
        return {"package": self.package, "group": self.group, "kind": self.kind,
                "requirement": self.requirement, "places": list(self.places),
                "consistent": self.consistent, "rules": list(self.disagree)}


def _pinned(inventory: Inventory, package: str) -> list[Occurrence]:
    return [o for o in inventory.occurrences.get(package, []) if o.spec.pin is not None]


def _key(o: Occurrence) -> tuple[str, str | None, str]:
    return (o.location.path, o.location.step, o.spec.requirement)


def _places(found: list[Occurrence]) -> tuple[str, ...]:
    """One entry per file: a Dockerfile, script or requirements file by its line, a
    workflow by its name and the install steps that pin it."""
    steps: dict[str, list[str]] = {}
    out: dict[str, str] = {}
    for o in found:
        path = o.location.path
        if o.location.kind == "workflow" and o.location.step:
            steps.setdefault(path, [])
            if o.location.step not in steps[path]:
                steps[path].append(o.location.step)
            out[path] = ""
        else:
            out.setdefault(path, f"`{path}:{o.line}`")
    for path, names in steps.items():
        label = "step" if len(names) == 1 else "steps"
        out[path] = f"`{posixpath.basename(path)}` ({label} " + ", ".join(f"`{n}`" for n in names) + ")"
    return tuple(out.values())


def pin_changes(base: dict[str, Inventory], head: dict[str, Inventory], results: list[Result],
                changed: Collection[str]) -> list[PinChange]:
    """The packages whose pins the ``changed`` files add, change or remove, per group (by
    name, at the base and the head), with the PIN rules ``results`` at the head that find
    their places disagree."""
    changes = set(changed)
    out: list[PinChange] = []
    for name, inventory in head.items():
        before = base.get(name)
        packages = set(inventory.occurrences)
        if before is not None:
            packages |= set(before.occurrences)
        for package in sorted(packages):
            now = _pinned(inventory, package)
            was = _pinned(before, package) if before is not None else []
            touched_now = {_key(o) for o in now if o.location.path in changes}
            touched_was = {_key(o) for o in was if o.location.path in changes}
            if touched_now == touched_was:
                continue
            kind: Kind = "removed" if not now else ("added" if not was else "changed")
            shown = now or [o for o in was if _key(o) in touched_was - touched_now]
            requirement = shown[0].spec.requirement if shown else package
            disagree = tuple(sorted({r.finding.rule for r in results
                                     if r.group == name and r.package == package
                                     and r.finding.rule in _DISAGREE}))
            out.append(PinChange(package, name, kind, requirement, _places(now) if now else
                                 _places(shown), disagree))
    return out
