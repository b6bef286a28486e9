"""Requirement specifiers and requirements files, read with `packaging` (PEP 503, 440, 508).

`packaging` is imported on the first requirement read, not with the module: an analysis that
reads no requirement (a PR changing one test) does not pay for it."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal
from urllib.parse import parse_qs, urlsplit

from bot.analysis.shell import PipCommand, Word

if TYPE_CHECKING:
    from packaging.markers import Marker
    from packaging.specifiers import SpecifierSet

Kind = Literal["named", "git", "local", "unresolved", "invalid"]
Applies = Literal["always", "sometimes", "never"]

# The CI images are Linux x86-64 CPython; markers are evaluated for each of these versions.
_PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
_ENVIRONMENTS = tuple(
    {
        "implementation_name": "cpython", "implementation_version": f"{v}.0",
        "os_name": "posix", "platform_machine": "x86_64", "platform_release": "",
        "platform_system": "Linux", "platform_version": "", "python_full_version": f"{v}.0",
        "platform_python_implementation": "CPython", "python_version": v,
        "sys_platform": "linux", "extra": "",
    }
    for v in _PYTHONS
)
_ARCHIVES = (".whl", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")
# Possessive quantifiers and a look-behind keep these linear: with plain `\s*\s*` or a
# `\s+` tried at every position of a long run of spaces, matching is quadratic in the line.
_NAME_AT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*+\s*+(?:\[[^\]]*+\])?+\s*+@")
_SCP = re.compile(r"(?P<user>[\w.-]+)@(?P<host>[\w.-]+):(?P<path>.+)")
_OPTION_TAIL = re.compile(r"(?<!\s)\s++--?[A-Za-z]")


@dataclass(frozen=True, slots=True)
class Spec:
    """One requirement as pip receives it: a named package, a git URL, a path, or unknown.

    ``name`` is normalised (PEP 503); ``pin`` is what the spec pins, when it pins one thing:
    ``("version", "0.65.1")`` for ``==0.65.1``, ``("git", url, ref)``, or ``("url", url)``.
    """

    text: str
    kind: Kind
    name: str | None = None
    specifier: str = ""
    url: str | None = None
    ref: str | None = None
    marker: str | None = None
    applies: Applies = "always"
    pin: tuple[str, ...] | None = None

    @property
    def is_package(self) -> bool:
        return self.name is not None and self.applies != "never"

    @property
    def shown(self) -> str:
        """The specifier for a table cell: `==0.65.1`, `>=1,<2`, `@abc123`, or `any`."""
        if self.kind == "git":
            return f"@{self.ref}" if self.ref else "git (no ref)"
        if self.url:
            return f"@ {self.url}"
        return self.specifier or "any"

    @property
    def requirement(self) -> str:
        """The spec as one would write it in a command (no marker)."""
        return self.text.split(";", 1)[0].strip()


def same_pin(a: Spec, b: Spec) -> bool:
    """Whether two pinned specs pin the same thing (versions compare per PEP 440)."""
    if a.pin is None or b.pin is None:
        return False
    if a.pin[0] == b.pin[0] == "version":
        from packaging.version import InvalidVersion, Version

        try:
            return Version(a.pin[1]) == Version(b.pin[1])
        except InvalidVersion:
            return a.pin[1] == b.pin[1]
    return a.pin == b.pin


def allows(loose: Spec, pinned: Spec) -> bool:
    """Whether an unpinned or ranged spec accepts what ``pinned`` pins (unknown: yes)."""
    if loose.kind != "named" or not loose.specifier or pinned.pin is None:
        return True
    if pinned.pin[0] != "version":
        return True
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return SpecifierSet(loose.specifier).contains(Version(pinned.pin[1]), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return True


@lru_cache(maxsize=4096)
def parse_spec(text: str) -> Spec:
    """Classify one argument of `pip install` or one line of a requirements file (cached)."""
    text = text.strip()
    if "$" in text:
        return Spec(text, "unresolved")
    if text.startswith("git+"):
        return _git_spec(text, None, text)
    if _is_local(text):
        return Spec(text, "local")
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return Spec(text, "invalid")
    marker = str(req.marker) if req.marker is not None else None
    applies = _applies(req.marker)
    if req.url is not None and req.url.startswith("git+"):
        return _git_spec(req.url, req.name, text, marker, applies)
    return Spec(
        text, "named", canonicalize_name(req.name), str(req.specifier), req.url or None,
        marker=marker, applies=applies, pin=_pin(req.specifier, req.url),
    )


def parse_editable(text: str) -> Spec:
    """The target of `-e`: a VCS URL (or `name @ url`) as usual, anything else a local path.

    pip accepts only a path or a VCS URL after `-e`, so a bare `python` or `"python[all]"`
    there is the folder `python` of the working directory, never a package of that name.
    """
    spec = parse_spec(text)
    if spec.kind in ("named", "invalid") and not spec.url:
        return Spec(spec.text, "local")
    return spec


def _is_local(text: str) -> bool:
    """A path, a wheel or an archive URL: something that is not a named requirement."""
    if _NAME_AT.match(text):  # `name @ url`: a named requirement with a direct reference
        return False
    if text in (".", "..") or text.startswith(("./", "../", "/", "~", "file:", ".[", "..[")):
        return True
    return text.lower().endswith(_ARCHIVES) or "/" in text


def _pin(specifier: SpecifierSet, url: str | None) -> tuple[str, ...] | None:
    if url:
        return ("url", url)
    clauses = list(specifier)
    if len(clauses) == 1 and clauses[0].operator in ("==", "===") and "*" not in clauses[0].version:
        return ("version", clauses[0].version)
    return None


def _applies(marker: Marker | None) -> Applies:
    if marker is None:
        return "always"
    try:
        results = {marker.evaluate(dict(env)) for env in _ENVIRONMENTS}
    except Exception:  # an unknown variable or a comparison packaging refuses
        return "sometimes"
    if results == {True}:
        return "always"
    return "never" if results == {False} else "sometimes"


_SEPARATORS = re.compile(r"[-_.]+")


def canonicalize_name(name: str) -> str:
    """A project name as PEP 503 normalises it: runs of `-`, `_` and `.` become one `-`, in
    lower case (what `packaging.utils.canonicalize_name` returns, without importing it)."""
    return _SEPARATORS.sub("-", name).lower()


def git_url(url: str) -> tuple[str, str | None, str | None, str]:
    """A git URL's normalised repository (host/path, lower case), ref, egg name, repo name."""
    body = url[4:] if url.startswith("git+") else url
    scp = _SCP.fullmatch(body)
    if scp and "://" not in body:
        body = f"ssh://{scp['user']}@{scp['host']}/{scp['path']}"
    try:
        parts = urlsplit(body)
        host = parts.hostname or ""
    except ValueError:
        return body.lower(), None, None, ""
    path = parts.path
    ref: str | None = None
    if "@" in path:
        path, ref = path.rsplit("@", 1)
        ref = ref or None
    path = path.rstrip("/")
    if path.endswith(".git"):
        path = path[:-4]
    egg = parse_qs(parts.fragment).get("egg", [None])[0]
    return f"{host}{path}".lower(), ref, egg, path.rsplit("/", 1)[-1]


def _git_spec(
    url: str, name: str | None, text: str, marker: str | None = None, applies: Applies = "always",
) -> Spec:
    repo, ref, egg, last = git_url(url)
    label = name or (egg.split("[", 1)[0] if egg else last)
    normal = canonicalize_name(label) if label else None
    pin = ("git", repo, ref) if ref else None
    return Spec(text, "git", normal, "", repo, ref, marker, applies, pin)


@dataclass(frozen=True, slots=True)
class Entry:
    """A spec and the line it is written on."""

    spec: Spec
    line: int
    folders: tuple[str, ...] = ()  # repository folders a bare name may be (`pip install python`)
    # the extras a local project is installed with (`python[all]`: its folders are `folders`)
    extras: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FileRef:
    """A requirements (`-r`) or constraints (`-c`) file named by a command or a file."""

    text: str
    line: int
    constraint: bool
    candidates: tuple[str, ...] = ()  # the repository paths it may be, best first


@dataclass(frozen=True, slots=True)
class Install:
    """One install command: its line, the specs it names and the files it installs."""

    line: int
    tool: str
    entries: tuple[Entry, ...]
    files: tuple[FileRef, ...]
    flags: tuple[str, ...] = ()
    container: str | None = None  # installed into this container (`docker exec`)
    # the shell `if`/`case` branches the command is in: (line, offset of the construct in its
    # script, branch); two installs of one file in different branches of a construct are
    # alternatives, never both run
    branches: tuple[tuple[int, int, int], ...] = ()


def install_from(
    cmd: PipCommand,
    line_of: Callable[[int], int],
    substitute: Callable[[str], str],
    resolve: Callable[[str], tuple[str, ...]],
) -> Install:
    """An :class:`Install` from a parsed command, with variables substituted and files found."""

    def entry(word: Word, editable: bool = False) -> Entry:
        text = substitute(word.text)
        spec = parse_editable(text) if editable else parse_spec(text)
        folders: tuple[str, ...] = ()
        extras: tuple[str, ...] = ()
        if spec.kind == "named" and not spec.specifier and not spec.url:
            folders = resolve(text.split("[", 1)[0].strip())
        elif spec.kind == "local" and text.rstrip().endswith("]") and "[" in text:
            base, _, listed = text.rstrip()[:-1].partition("[")
            extras = tuple(e.strip().lower() for e in listed.split(",") if e.strip())
            folders = resolve(base.strip() or ".")
        return Entry(spec, line_of(word.start), folders, extras)

    def ref(word: Word, constraint: bool) -> FileRef:
        text = substitute(word.text)
        return FileRef(text, line_of(word.start), constraint, resolve(text))

    return Install(
        line=line_of(cmd.start),
        tool=cmd.tool,
        entries=tuple([*(entry(w) for w in cmd.specs),
                       *(entry(w, editable=True) for w in cmd.editables)]),
        files=tuple([*(ref(w, False) for w in cmd.requirements),
                     *(ref(w, True) for w in cmd.constraints)]),
        flags=cmd.flags,
        container=cmd.container,
        branches=tuple((line_of(at), at, branch) for at, branch in cmd.branches),
    )


def alternatives(a: tuple[tuple[int, int, int], ...], b: tuple[tuple[int, int, int], ...]) -> bool:
    """Whether two commands of one file sit in different branches of one shell `if`/`case`
    (see :attr:`Install.branches`): no run executes both."""
    theirs = {(line, at): branch for line, at, branch in b}
    return any(theirs.get((line, at), branch) != branch for line, at, branch in a)


def relative_candidates(base: str, text: str) -> tuple[str, ...]:
    """A path written relative to a folder, as a repository path (none if it leaves it)."""
    if "$" in text or not text or text.startswith("/"):
        return ()
    path = posixpath.normpath(posixpath.join(base, text))
    if path == ".." or path.startswith("../"):
        return ()
    return (path,)


@dataclass(frozen=True, slots=True)
class RequirementsFile:
    """A parsed `requirements*.txt`: its specs and the files it includes (`-r`, `-c`)."""

    path: str
    entries: tuple[Entry, ...]
    files: tuple[FileRef, ...]


_FILE_OPTIONS = {"-r": False, "--requirement": False, "-c": True, "--constraint": True}


def parse_requirements(path: str, text: str) -> RequirementsFile:
    """Read a requirements file the way pip does, line by line; never raises."""
    entries: list[Entry] = []
    files: list[FileRef] = []
    folder = posixpath.dirname(path)
    for line, content in _logical_lines(text):
        if content.startswith("-"):
            option, value = _option(content)
            if option in _FILE_OPTIONS and value:
                files.append(FileRef(value, line, _FILE_OPTIONS[option],
                                     relative_candidates(folder, value)))
            elif option in ("-e", "--editable") and value:
                entries.append(Entry(parse_editable(value), line))
            continue
        cut = _OPTION_TAIL.search(content)
        spec = content[: cut.start()] if cut else content
        entries.append(Entry(parse_spec(spec), line))
    return RequirementsFile(path, tuple(entries), tuple(files))


def _option(content: str) -> tuple[str, str]:
    head, _, rest = content.partition(" ")
    if "=" in head and head.startswith("--"):
        head, _, value = head.partition("=")
        return head, value.strip()
    if len(head) > 2 and not head.startswith("--"):
        return head[:2], head[2:].lstrip("=")
    return head, rest.strip()


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, content) with comments removed and `\\` continuations joined."""
    out: list[tuple[int, str]] = []
    pending: list[str] = []
    first = 0
    for number, physical in enumerate(text.split("\n"), 1):
        raw = physical.rstrip("\r")
        if not pending:
            first = number
        if raw.endswith("\\"):
            pending.append(raw[:-1])
            continue
        pending.append(raw)
        content = re.sub(r"(^|\s)#.*", "", "".join(pending)).strip()
        pending = []
        if content:
            out.append((first, content))
    if pending:
        content = re.sub(r"(^|\s)#.*", "", "".join(pending)).strip()
        if content:
            out.append((first, content))
    return out
