"""Every Dockerfile, workflow, requirements file and shell script of a snapshot that the pin
rules need, each read and parsed once."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bot.analysis.dockerfile import (
    Dockerfile,
    commands_expanded,
    parse_dockerfile,
    substitute,
    substitute_known,
)
from bot.analysis.findings import Finding
from bot.analysis.requirements import (
    Entry,
    FileRef,
    Install,
    RequirementsFile,
    canonicalize_name,
    install_from,
    parse_requirements,
    parse_spec,
    relative_candidates,
)
from bot.analysis.shell import (
    PipCommand,
    assignments,
    newlines_before,
    pip_installs,
    script_runs,
    values_at,
)
from bot.analysis.source import Sources, Unreadable
from bot.analysis.workflows import Workflow, parse_workflow


class Files:
    """The snapshot's Dockerfiles, workflows and requirements files, each parsed once."""

    def __init__(self, sources: Sources) -> None:
        # the sources, not the snapshot: the snapshot keeps what is made from these files,
        # which then refers back to nothing that keeps the snapshot alive
        self.sources = sources
        self.problems: dict[str, Finding] = {}
        self._dockerfiles: dict[str, Dockerfile | None] = {}
        self._workflows: dict[str, Workflow | None] = {}
        self._requirements: dict[str, RequirementsFile | None] = {}
        self._scripts: dict[str, Script | None] = {}
        self._folders: frozenset[str] | None = None
        self._pyprojects: dict[str, tuple[str, dict[str, list[str]]] | None] = {}

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

    def script(self, path: str) -> Script | None:
        if path not in self._scripts:
            text = self.text(path)
            self._scripts[path] = None if text is None else parse_script(path, text)
        return self._scripts[path]

    def extras(self, entry: Entry) -> dict[str, Entry]:
        """The packages a local project's extras name (`pip install -e "python[all]"`), read
        from its `pyproject.toml` `[project.optional-dependencies]`; an extra naming the
        project itself (`all = ["sglang[srt]"]`) adds that extra's. Package -> its entry."""
        if not entry.extras:
            return {}
        path = next((posixpath.join(f, "pyproject.toml") for f in entry.folders
                     if self.exists(posixpath.join(f, "pyproject.toml"))), None)
        project = self.pyproject(path) if path is not None else None
        if project is None:
            return {}
        name, optional = project
        out: dict[str, Entry] = {}
        queue, seen = list(entry.extras), set()
        while queue:
            extra = canonicalize_name(queue.pop(0))
            if extra in seen:
                continue
            seen.add(extra)
            for text in optional.get(extra, ()):
                spec = parse_spec(text)
                if spec.name is not None and spec.name == name:
                    queue.extend(_listed_extras(text))
                elif spec.name is not None:
                    out.setdefault(spec.name, Entry(spec, 0))
        return out

    def pyproject(self, path: str) -> tuple[str, dict[str, list[str]]] | None:
        """A `pyproject.toml`'s project name and optional dependencies (extra -> specs)."""
        if path not in self._pyprojects:
            self._pyprojects[path] = _read_pyproject(self.text(path))
        return self._pyprojects[path]

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


def _listed_extras(text: str) -> list[str]:
    found = re.match(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*\[([^\]]*)\]", text)
    return [e.strip() for e in found.group(1).split(",") if e.strip()] if found else []


def _read_pyproject(text: str | None) -> tuple[str, dict[str, list[str]]] | None:
    """The project name and optional dependencies of a `pyproject.toml` text (None when it
    does not parse or has no `[project]`)."""
    if text is None:
        return None
    import tomllib

    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return None
    project = data.get("project")
    if not isinstance(project, dict) or not isinstance(project.get("name"), str):
        return None
    optional = project.get("optional-dependencies")
    extras: dict[str, list[str]] = {}
    if isinstance(optional, dict):
        for key, specs in optional.items():
            if isinstance(key, str) and isinstance(specs, list):
                extras[canonicalize_name(key)] = [x for x in specs if isinstance(x, str)]
    return canonicalize_name(project["name"]), extras


@dataclass(frozen=True, slots=True)
class Script:
    """A shell script's installs and the scripts it runs, as repository paths."""

    installs: tuple[Install, ...]
    scripts: tuple[FileRef, ...]
    new_env: bool = False  # it creates an environment and installs there


_NEW_ENV = re.compile(
    r"(?m)^[^#\n]*?(?:\b(?:micromamba|mamba|conda)\s+create\b|\bpython[\d.]*\s+-m\s+venv\b"
    r"|\bvirtualenv\s|\buv\s+venv\b)"
)


def parse_script(path: str, text: str) -> Script:
    """A shell script read with the parser of `run:` steps; paths relative to the checkout
    (where CI runs it from) or to the script's folder. Variables the script assigns before
    an install are substituted (`torch==${TORCH_VERSION}`); one it computes, or that comes
    from outside (an argument, the environment), leaves its pin unknown."""
    folder = posixpath.dirname(path)
    if "pip" in text and "$" in text:  # `PIP_INSTALL="uv pip install"` then `$PIP_INSTALL x`
        commands = {a.name: a.value for a in assignments(text) if a.value and "pip" in a.value}
        text = commands_expanded(text, commands) if commands else text
    newline = newlines_before(text)

    def line_of(pos: int) -> int:
        return 1 + newline(pos)

    def resolve(name: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*relative_candidates(".", name),
                                    *relative_candidates(folder, name)]))

    assigned = assignments(text) if "pip" in text else []

    def values(cmd: PipCommand) -> Callable[[str], str]:
        if not assigned:
            return lambda t: t
        known, unknown = values_at(assigned, cmd.start, cmd.branches, substitute)
        return lambda t: substitute_known(t, known, unknown)

    installs = tuple(install_from(cmd, line_of, values(cmd), resolve)
                     for cmd in (pip_installs(text) if "pip" in text else ()))
    scripts = tuple(FileRef(w.text, line_of(w.start), False, resolve(w.text))
                    for w in script_runs(text))
    return Script(installs, scripts, _NEW_ENV.search(text) is not None)
