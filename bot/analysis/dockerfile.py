"""Dockerfiles, read with dockerfile-parse: the `pip install`s of every stage.

`ARG` and `ENV` values are substituted (with `${X:-default}` forms), and the files a
`pip install -r` names inside the image are mapped back through `COPY`/`ADD` and bind mounts
to repository paths.
"""

from __future__ import annotations

import fnmatch
import io
import json
import logging
import posixpath
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dockerfile_parse import DockerfileParser
from dockerfile_parse.util import WordSplitter

from bot.analysis.requirements import FileRef, Install, install_from
from bot.analysis.shell import assignments, newlines_before, pip_installs, script_runs, values_at

log = logging.getLogger(__name__)

_VAR = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_]\w*)(?:(?P<op>:?[-+=])(?P<word>[^}$]*))?\}|(?P<plain>[A-Za-z_]\w*))"
)
_ESCAPE = re.compile(r"\s*#\s*escape\s*=\s*([\\`])\s*$", re.IGNORECASE)
_RUN_FLAGS = re.compile(r"(?:\s|\\\n)*(?:--[a-z][\w-]*(?:=\S*)?(?:\s|\\\n)+)*")
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
MAX_ROUNDS = 4
MAX_EXPANSION = 1 << 16  # characters a substituted value may grow to (ARG A=$B$B$B... chains)


class _TooLongError(Exception):
    pass


def substitute_known(text: str, values: Mapping[str, str | None],
                     unknown: frozenset[str] = frozenset()) -> str:
    """:func:`substitute`, except that a text naming a variable of ``unknown`` (one a script
    sets to what only the shell computes) stays as written: its pin is not known."""
    if unknown and any((m["braced"] or m["plain"]) in unknown for m in _VAR.finditer(text)):
        return text
    return substitute(text, values)


def substitute(text: str, values: Mapping[str, str | None]) -> str:
    """Expand `$X`, `${X}`, `${X:-d}`, `${X-d}`, `${X:+a}`; unknown variables stay as written.

    Inner expansions go first (`${A:-${B}}`), a few rounds at most. A text whose expansion
    would pass ``MAX_EXPANSION`` characters (and its own length) stays as written: each
    `ARG A2=$A1$A1...` could otherwise multiply the length of the one before, a Dockerfile
    of a few lines standing for gigabytes.
    """
    cap = max(MAX_EXPANSION, len(text))
    size = 0

    def one(m: re.Match[str]) -> str:
        nonlocal size
        out = _one(m)
        size += len(out) - len(m.group(0))
        if size > cap:
            raise _TooLongError
        return out

    def _one(m: re.Match[str]) -> str:
        name = m["braced"] or m["plain"]
        value = values.get(name)
        op = m["op"]
        if op in (":-", "-", ":=", "="):  # `${X:=d}` also sets X: the same value here
            return m["word"] if value is None or (op == ":-" and not value) else value
        if op in (":+", "+"):
            present = value is not None and (op == "+" or bool(value))
            return m["word"] if present else ""
        return value if value is not None else m.group(0)

    original = text
    for _ in range(MAX_ROUNDS):
        size = len(text)
        try:
            expanded = _VAR.sub(one, text)
        except _TooLongError:
            return original
        if expanded == text:
            break
        text = expanded
    return text


@dataclass(frozen=True, slots=True)
class Copy:
    """Files put into the image: `COPY src... dest`, `ADD`, or a `RUN --mount` bind."""

    sources: tuple[str, ...]
    dest: str  # absolute path in the image
    into_dir: bool  # the destination is a folder the sources go into


@dataclass
class _Stage:
    args: dict[str, str | None] = field(default_factory=dict)
    envs: dict[str, str | None] = field(default_factory=dict)
    workdir: str = "/"
    copies: list[Copy] = field(default_factory=list)

    def values(self) -> dict[str, str | None]:
        return {**self.args, **self.envs}


@dataclass(frozen=True, slots=True)
class Dockerfile:
    """The `pip install` commands of a Dockerfile, every stage, in order."""

    path: str
    installs: tuple[Install, ...]
    stages: int
    copies: tuple[Copy, ...] = ()  # every stage's, from the build context only
    env: tuple[tuple[str, str | None], ...] = ()  # `ENV` of the final stage, as the image has it
    scripts: tuple[FileRef, ...] = ()  # repository shell scripts a `RUN` runs (through COPY)
    bases: tuple[str, ...] = ()  # the `FROM` images, variables substituted


def _words(value: str) -> list[str]:
    return list(WordSplitter(value).split(dequote=False))


def _dequote(value: str) -> str:
    return str(WordSplitter(value).dequote())


def parse_dockerfile(path: str, text: str) -> Dockerfile:
    """Read a Dockerfile's installs; never raises (what it cannot read it skips)."""
    lines = text.split("\n")
    escape = "\\"
    for line in lines:
        found = _ESCAPE.match(line)
        if found:
            escape = found.group(1)
        if not line.strip().startswith("#"):
            break
    continued = False
    last = -1
    for i, line in enumerate(lines):  # Docker skips blank lines inside a continued instruction
        stripped = line.strip()
        if not stripped and continued:
            lines[i] = "#"
        elif stripped and not stripped.startswith("#"):
            continued = stripped.endswith(escape)
            last = i
    if continued:  # the file ends inside an instruction: Docker ends it there too
        lines[last] = lines[last].rstrip()[:-1]
    parser = DockerfileParser(fileobj=io.BytesIO("\n".join(lines).encode("utf-8", "surrogatepass")))
    reader = _Reader(path, lines, escape)
    for instruction in parser.structure:
        try:
            reader.instruction(instruction)
        except Exception:  # a malformed instruction is skipped, never fatal
            log.debug("%s:%s: instruction skipped", path, instruction["startline"] + 1,
                      exc_info=True)
    env = tuple(reader.stage.envs.items()) if reader.stage is not None else ()
    return Dockerfile(path, tuple(reader.installs), reader.stage_count, copies=tuple(reader.copies),
                      env=env, scripts=tuple(reader.scripts), bases=tuple(reader.bases))


class _Reader:
    def __init__(self, path: str, lines: list[str], escape: str) -> None:
        self.path = path
        self.lines = lines
        self.escape = escape
        self.globals: dict[str, str | None] = {}
        self.stage: _Stage | None = None
        self.named: dict[str, _Stage] = {}
        self.stage_count = 0
        self.copies: list[Copy] = []
        self.installs: list[Install] = []
        self.scripts: list[FileRef] = []
        self.bases: list[str] = []
        self.skip_until = -1
        folder = posixpath.dirname(path)
        roots = ["."]
        while folder:
            roots.append(folder)
            folder = posixpath.dirname(folder)
        self.roots = roots

    def instruction(self, instr: dict[str, object]) -> None:
        start = int(str(instr["startline"]))
        if start <= self.skip_until:
            return
        kind = str(instr["instruction"])
        value = str(instr["value"])
        handler: Callable[[str, dict[str, object]], None] | None = getattr(
            self, "on_" + kind.lower(), None
        )
        if handler is not None:
            handler(value, instr)

    # -- instructions ------------------------------------------------------------------

    def on_from(self, value: str, instr: dict[str, object]) -> None:
        words = [w for w in value.split() if not w.startswith("--")]
        image = substitute(words[0], self.globals).lower() if words else ""
        base = self.named.get(image)
        if base is None and image:
            self.bases.append(image)
        self.stage = _Stage(envs=dict(base.envs), workdir=base.workdir, copies=list(base.copies)) \
            if base is not None else _Stage()
        self.stage_count += 1
        if len(words) >= 3 and words[1].lower() == "as":
            self.named[words[2].lower()] = self.stage

    def on_arg(self, value: str, instr: dict[str, object]) -> None:
        for word in _words(value):
            key, eq, raw = word.partition("=")
            if self.stage is None:
                self.globals[key] = substitute(_dequote(raw), self.globals) if eq else None
            elif eq:
                self.stage.args[key] = substitute(_dequote(raw), self.stage.values())
            else:
                self.stage.args[key] = self.globals.get(key)

    def on_env(self, value: str, instr: dict[str, object]) -> None:
        if self.stage is None:
            return
        words = _words(value)
        if words and "=" not in words[0]:
            key, *rest = re.split(r"\s+", value.strip(), maxsplit=1)
            pairs = [(key, rest[0] if rest else "")]
        else:
            pairs = [(k, v) for k, _, v in (w.partition("=") for w in words)]
        for key, raw in pairs:
            self.stage.envs[key] = substitute(_dequote(raw), self.stage.values())

    def on_workdir(self, value: str, instr: dict[str, object]) -> None:
        if self.stage is not None:
            folder = substitute(_dequote(value.strip()), self.stage.values())
            self.stage.workdir = posixpath.normpath(posixpath.join(self.stage.workdir, folder))

    def on_copy(self, value: str, instr: dict[str, object]) -> None:
        if self.stage is None:
            return
        words = _exec_form(value)
        if words is None:
            words = [_dequote(w) for w in _words(value)]
        if any(w.startswith("--from") for w in words):
            return  # from another stage or image: not the build context
        words = [substitute(w, self.stage.values()) for w in words if not w.startswith("--")]
        if len(words) < 2:
            return
        *sources, dest = words
        into_dir = dest.endswith("/") or len(sources) > 1
        dest = posixpath.normpath(posixpath.join(self.stage.workdir, dest))
        self.stage.copies.append(Copy(tuple(sources), dest, into_dir))
        self.copies.append(self.stage.copies[-1])

    on_add = on_copy

    def on_run(self, value: str, instr: dict[str, object]) -> None:
        start = int(str(instr["startline"]))
        end = int(str(instr["endline"]))
        stage = self.stage or _Stage()
        raw = self.lines[start:end + 1]
        raw[0] = re.sub(r"^\s*\S+", "", raw[0], count=1)
        for i in range(1, len(raw)):
            if re.match(r"\s*#", raw[i]):
                raw[i] = "\\"  # a comment inside a continued instruction: Docker drops it
        cleaned = []
        for physical in raw:
            line = physical.rstrip("\r")
            if self.escape == "`" and line.rstrip().endswith("`"):
                line = line.rstrip()[:-1] + "\\"
            cleaned.append(line)
        script = "\n".join(cleaned)
        flags = _RUN_FLAGS.match(script)
        assert flags is not None  # every part of the pattern is optional
        region = script[: flags.end()]
        mounts = [m for m in map(_mount, re.findall(r"--mount=(\S+)", region)) if m]
        script = "\n" * region.count("\n") + script[flags.end():]
        words = _exec_form(script.strip())
        exec_form = words is not None
        script = _exec_script(words) if words is not None else self._heredoc(script, start, end)
        script = commands_expanded(script, stage.values())
        if "pip" not in script and ".sh" not in script:
            return

        newline = newlines_before(script)

        def line_of(pos: int) -> int:
            return start + 1 if exec_form else start + 1 + newline(pos)

        values = stage.values()
        copies = [*stage.copies, *mounts]

        def resolve(text: str) -> tuple[str, ...]:
            return self._resolve(text, stage.workdir, copies)

        assigned = assignments(script) if "pip" in script else []
        for cmd in pip_installs(script) if "pip" in script else ():
            known, unknown = values_at(assigned, cmd.start, cmd.branches, substitute, values)
            self.installs.append(install_from(cmd, line_of, _expander(known, unknown), resolve))
        for word in script_runs(script):
            text = substitute(word.text, values)
            self.scripts.append(FileRef(text, line_of(word.start), False, resolve(text)))

    # -- helpers -----------------------------------------------------------------------

    def _heredoc(self, script: str, start: int, end: int) -> str:
        """The script a `RUN <<EOF` runs (its body), or the script itself when not one."""
        found = _HEREDOC.search(script)
        if found is None or start != end:
            return script
        command = (script[: found.start()] + script[found.end():]).split()
        terminator = found.group(3)
        body: list[str] = []
        i = start + 1
        while i < len(self.lines):
            line = self.lines[i].rstrip("\r")
            if (line.lstrip("\t") if found.group(1) else line) == terminator:
                break
            body.append(line)
            i += 1
        self.skip_until = i
        runs_body = not command or (
            command[0].rsplit("/", 1)[-1] in _SHELLS
            and all(w.startswith("-") for w in command[1:])
        )
        if not runs_body:
            return script[: found.start()]
        return "\n" + "\n".join(body)

    def _resolve(self, text: str, workdir: str, copies: list[Copy]) -> tuple[str, ...]:
        if "$" in text:
            return ()
        inside = posixpath.normpath(posixpath.join(workdir, text))
        out: list[str] = []
        for context in _map_back(inside, copies):
            for root in self.roots:
                path = posixpath.normpath(posixpath.join(root, context.lstrip("/")))
                if path != ".." and not path.startswith("../") and path not in out:
                    out.append(path)
        return tuple(out)


def _expander(known: dict[str, str | None], unknown: frozenset[str]) -> Callable[[str], str]:
    return lambda text: substitute_known(text, known, unknown)


def commands_expanded(script: str, values: Mapping[str, str | None]) -> str:
    """The script with `$PIP_INSTALL`-like variables expanded: an `ARG`/`ENV` whose value is
    a one-line `pip install` command, used as the command (other variables stay for later)."""
    if "$" not in script:
        return script
    commands = {k: v for k, v in values.items() if v and "pip" in v and "\n" not in v}
    if not commands:
        return script

    def one(m: re.Match[str]) -> str:
        name = m["braced"] or m["plain"]
        if m["op"] is None and name in commands:
            return commands[name] or ""
        return m.group(0)

    return _VAR.sub(one, script)


def _exec_form(value: str) -> list[str] | None:
    """The words of a JSON (exec) form like `["pip", "install", "x"]`, or None."""
    if not value.startswith("["):
        return None
    try:
        words = json.loads(value)
    except ValueError:
        return None
    if isinstance(words, list) and all(isinstance(w, str) for w in words):
        return words
    return None


def _exec_script(words: list[str]) -> str:
    if (len(words) >= 3 and words[0].rsplit("/", 1)[-1] in _SHELLS
            and words[1].startswith("-") and words[1].endswith("c")):
        return " ".join(words[2].split("\n"))
    return shlex.join(words)


def _mount(spec: str) -> Copy | None:
    """A `RUN --mount=type=bind,source=S,target=T` as a copy of S to T."""
    fields = dict(part.partition("=")[::2] for part in spec.split(","))
    if fields.get("type", "bind") != "bind" or "from" in fields:
        return None
    target = fields.get("target") or fields.get("dst") or fields.get("destination")
    if not target:
        return None
    source = fields.get("source") or fields.get("src") or "."
    return Copy((source,), posixpath.normpath(posixpath.join("/", target)), False)


def _under(path: str, folder: str) -> str | None:
    if folder == "/":
        return path.lstrip("/") or "."
    if path.startswith(folder + "/"):
        return path[len(folder) + 1:]
    return None


def _map_back(inside: str, copies: list[Copy]) -> list[str]:
    """Build-context paths that a path inside the image was copied from (latest copy first).

    A source named like the file wins over a source that may be a folder holding it. Only
    copies into the path itself or a folder above it can match, so the others are set aside
    first, cheaply: a Dockerfile of thousands of COPYs and RUNs would otherwise cost their
    product in path arithmetic.
    """
    folders = {inside, "/", posixpath.dirname(inside)}
    folders.update(inside[:i] for i, c in enumerate(inside) if c == "/")
    for copy in reversed([c for c in copies if c.dest in folders]):
        exact: list[str] = []
        nested: list[str] = []
        for written in copy.sources:
            source = written.strip("/") or "."
            name = posixpath.basename(source)
            if copy.into_dir and any(c in name for c in "*?["):
                if posixpath.dirname(inside) == copy.dest and fnmatch.fnmatchcase(
                    posixpath.basename(inside), name
                ):
                    exact.append(posixpath.join(posixpath.dirname(source),
                                                posixpath.basename(inside)))
                continue
            target = posixpath.join(copy.dest, name) if copy.into_dir else copy.dest
            if inside == target and source != ".":
                exact.append(source)
            rel = _under(inside, copy.dest)
            if rel is not None:
                nested.append(posixpath.normpath(posixpath.join(source, rel)))
        if exact or nested:
            return exact or nested
    return []
