"""The rules that compare one group's pins (PIN001..PIN005), and the comparison that emits them."""

from __future__ import annotations

import posixpath

from bot.analysis.findings import Severity, finding, rule
from bot.analysis.pins.collect import InstallPath, Inventory
from bot.analysis.pins.gitrefs import ref_kind
from bot.analysis.pins.places import Location, Occurrence, Result
from bot.analysis.requirements import Spec, allows, same_pin

MAX_PLACES = 8
_PER_PR = frozenset({"pull_request", "pull_request_target", "merge_group"})
_EVENT_WORDS = {"schedule": "nightly, on a schedule", "workflow_dispatch": "run by hand",
                "push": "on push", "release": "on release"}


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
    different hardware (CUDA, ROCm, NPU, XPU, GB10) are different groups and never compared,
    and neither are two branches of one shell `if`/`elif`/`else` or `case` (in one `RUN` or
    one script): they are alternatives, of which a build runs one. A conflict inside one
    branch, or between a branch and a pin outside its construct, still counts.

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
    pin a package no Dockerfile of its group installs (directly, through a script, a
    requirements file or the extras of a local project it installs), and those that reinstall
    a package the Dockerfile pins with a range excluding that pin; one finding per package
    lists them all. The message says `PR CI` when a workflow of those installs runs for pull
    requests, else which workflow and triggers (`nightly, on a schedule`) run them.

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


class Comparison:
    """One pin group's packages compared across its places: the findings, and the places
    an alternative install path misses a package at."""

    def __init__(self, inventory: Inventory) -> None:
        self.inventory = inventory
        self.results: list[Result] = []
        self.missing: set[tuple[Location, str]] = set()  # PIN003 cells
        self._order: dict[Location, int] = {}

    def check(self) -> None:
        self._order = {loc: i for i, loc in enumerate(self.inventory.locations)}
        for paths in self.inventory.alternatives:
            self._check_alternatives(paths)
        for name in sorted(self.inventory.occurrences):
            self._check_package(name)

    def _key(self, place: tuple[Location, int]) -> tuple[int, int]:
        return (self._order.get(place[0], len(self._order)), place[1])

    def _emit(self, rule_id: str, name: str, places: list[tuple[Location, int, str]],
              message: str, *extra: str) -> None:
        """One finding for a package, anchored at its first place; ``places`` are where the
        PR can fix it, in order, each with its fix."""
        found = _distinct(self.inventory.occurrences.get(name, []))
        group = self.inventory.group
        if group.container is not None:
            images = "".join(f" (`{i}`)" for i in group.images if i != group.container)
            message = (f"{message[:-1]} (in the jobs' container `{group.container}`{images}, "
                       "which no Dockerfile of the repository is known to build).")
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
        self.results.append(Result(result, paths, self.inventory.group.name, name, anchors))

    def _check_alternatives(self, paths: list[InstallPath]) -> None:
        names = sorted({n for p in paths for n in p.names})
        for name in names:
            holders = [p for p in paths if name in p.names]
            donor = next((p for p in holders if p.names[name].spec.pin), holders[0])
            have = donor.names[name]
            lacking: list[tuple[InstallPath, Location, int]] = []
            for path in paths:
                if name in path.names or path.uncertain:
                    continue
                location, line = path.anchor({n for n in donor.names if n in path.names})
                self.missing.add((location, name))  # reported once: see _check_groups
                lacking.append((path, location, line))
            if lacking:
                self._missing(name, donor, have, lacking)

    def _missing(self, name: str, donor: InstallPath, have: Occurrence,
                 lacking: list[tuple[InstallPath, Location, int]]) -> None:
        image = [o for o in self.inventory.occurrences.get(name, []) if o.location.role == "dockerfile"]
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
            kind = 1 if loc.path in self.inventory.image_files else 3
        return (kind, self._order[loc], occurrence.line)

    def _check_package(self, name: str) -> None:
        occurrences = [o for o in self.inventory.occurrences[name] if o.spec.applies == "always"]
        pinned = [o for o in occurrences if o.spec.pin is not None]
        if self.inventory.group.dockerfiles and name not in self.inventory.image_names:
            off = [o for o in pinned if o.location.role == "workflow"]
            if off:
                self._not_in_image(name, off)
        if not pinned:
            return
        ranked = sorted(pinned, key=self._rank)
        problems: dict[tuple[str, Occurrence], list[tuple[Occurrence, str]]] = {}
        for o in occurrences:
            # the reference of a place: the first pin that can run with it (not in another
            # branch of the same shell `if`/`case`, which is an alternative); of two pins,
            # the better ranked is the reference
            ref = next((p for p in ranked if p is not o and not p.excludes(o)), None)
            if ref is None:
                continue
            first, other = (o, ref) if o.spec.pin is not None and \
                self._rank(o) < self._rank(ref) else (ref, o)
            compared = self._compare(first, other)
            if compared is not None:
                problems.setdefault((compared[0], first), []).append((other, compared[1]))
        for (rule_id, ref), items in problems.items():
            self._report(rule_id, name, ref, items)

    def _not_in_image(self, name: str, found: list[Occurrence]) -> None:
        group = self.inventory.group
        found = _distinct(found)
        dockerfiles = ", ".join(f"`{p}`" for p in group.dockerfiles)
        where = _joined([(_pin_text(o.spec), _where(o)) for o in found], "by")
        message = (
            f"`{name}` is pinned to {where}, but no Dockerfile of the `{group.name}` "
            f"group installs it ({dockerfiles}), so {self._runs(found)} and the image differ."
        )
        places = [(o.location, o.line,
                   f'add `"{o.spec.requirement}"` to `{group.dockerfiles[0]}` as well, '
                   "or drop the pin here") for o in found]
        self._emit("PIN004", name, places, message, *group.dockerfiles)

    def _runs(self, found: list[Occurrence]) -> str:
        """What runs these installs: `PR CI` when a workflow of theirs runs for pull
        requests, else the workflows by their triggers (`the nightly `X` workflow`)."""
        paths = list(dict.fromkeys(o.location.path for o in found if o.location.kind == "workflow"))
        described: list[str] = []
        for path in paths or self.inventory.group.workflows:
            events = self._events(path, set())
            if events & _PER_PR or not events:
                return "PR CI"
            workflow = self.inventory.files.workflow(path)
            title = workflow.name if workflow is not None and workflow.name else \
                posixpath.basename(path)
            how = ", ".join(_EVENT_WORDS.get(e, f"on `{e}`") for e in sorted(events))
            described.append(f"the `{title}` workflow (`{posixpath.basename(path)}`: {how})")
        return " and ".join(dict.fromkeys(described)) if described else "PR CI"

    def _events(self, path: str, seen: set[str]) -> set[str]:
        """The events that run a workflow: its own triggers, and for a reusable one those of
        the group's workflows that call it."""
        if path in seen:
            return set()
        seen.add(path)
        workflow = self.inventory.files.workflow(path)
        if workflow is None:
            return set()
        events = set(workflow.triggers) - {"workflow_call"}
        if "workflow_call" in workflow.triggers:
            group = self.inventory.group
            for other in dict.fromkeys([*group.workflows, *group.callers]):
                caller = self.inventory.files.workflow(other)
                if caller is not None and path in caller.calls:
                    events |= self._events(other, seen)
        return events

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
