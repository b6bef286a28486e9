"""What one pin group installs where: its places in order (the matrix's columns), every
occurrence of each package, and the install paths that are alternatives of each other."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

from bot.analysis.pins.conditions import complementary
from bot.analysis.pins.files import Files
from bot.analysis.pins.groups import roots
from bot.analysis.pins.places import Kind, Location, Mode, Occurrence, PinGroup, takes
from bot.analysis.requirements import Entry, FileRef, Install
from bot.analysis.workflows import Job, Step, Workflow


@dataclass
class InstallPath:
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


class Inventory:
    """One pin group's places, what each installs, and its alternative install paths."""

    def __init__(self, files: Files, group: PinGroup, ignore: set[str]) -> None:
        self.files = files
        self.group = group
        self.ignore = ignore
        self.locations: list[Location] = []
        self.occurrences: dict[str, list[Occurrence]] = {}
        self.image_files: set[str] = set()  # requirements files a Dockerfile installs
        self.image_names: set[str] = set()  # packages the Dockerfiles install
        self.via: dict[Location, dict[str, Occurrence]] = {}  # all a place installs
        self.alternatives: list[list[InstallPath]] = []
        self._read()

    def _add(self, location: Location, entry: Entry,
             branches: tuple[tuple[int, int, int], ...] = ()) -> Occurrence | None:
        spec = entry.spec
        if spec.name is None or not spec.is_package or spec.name in self.ignore:
            return None
        if entry.folders and self.files.local(entry):
            return None
        occurrence = Occurrence(location, spec, entry.line, branches)
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
                occurrence = self._add(location, entry, install.branches)
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
        out = [(location, install) for install in installs if takes(mode, install)]
        columns: dict[str, Location] = {}
        runner: Kind = "dockerfile" if location.kind == "dockerfile" else "workflow"
        for path, install in self.files.run_scripts(scripts, set()):
            if not takes(mode, install):
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
            for _, install in installs:  # a local project's extras: what its pyproject lists
                for entry in install.entries:
                    self.image_names.update(self.files.extras(entry))
            for _, install in installs:
                for ref in install.files:
                    self._from_file(self.files.resolve(ref), self.image_files)
        for path in self.group.workflows:
            workflow = self.files.workflow(path)
            if workflow is not None:
                self._read_workflow(workflow)
        for path, script in roots(self.files, self.group):
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
        jobs: list[tuple[Job, InstallPath]] = []
        for job in workflow.jobs:
            if not self.group.runs(workflow.path, job.id):
                continue
            steps: list[tuple[Step, InstallPath]] = []
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
                path = InstallPath(f"step `{step.name}`", workflow.path, installs, names, job.id,
                             any(self._uncertain(i) for _, i in installs))
                steps.append((step, path))
            if not steps:
                continue
            always = InstallPath("", workflow.path, [], {})
            for step, path in steps:
                if step.condition is None:
                    always.names.update(path.names)
                    always.uncertain = always.uncertain or path.uncertain
            self._pair([(s.condition, p) for s, p in steps if s.condition is not None], always)
            merged: dict[str, Occurrence] = {}
            for _, path in steps:
                for name, occ in path.names.items():
                    merged.setdefault(name, occ)
            jobs.append((job, InstallPath(f"job `{job.id}`", workflow.path,
                                    [pair for _, p in steps for pair in p.steps], merged, job.id,
                                    any(p.uncertain for _, p in steps))))
        self._pair([(j.condition, p) for j, p in jobs if j.condition is not None],
                   InstallPath("", workflow.path, [], {}))

    def _pair(self, candidates: list[tuple[str, InstallPath]], always: InstallPath) -> None:
        """Alternative sets from complementary conditions (``always``: what every path runs)."""
        for i, (cond_a, a) in enumerate(candidates):
            for cond_b, b in candidates[i + 1:]:
                if complementary(cond_a, cond_b):
                    self.alternatives.append([
                        InstallPath(p.label, p.path, p.steps, {**always.names, **p.names}, p.job,
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
