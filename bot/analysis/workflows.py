"""GitHub Actions workflows with line numbers: jobs, steps, `if:` conditions, pip installs.

The YAML is composed into nodes, never constructed into Python values: every node keeps its
line, and keys stay strings (YAML 1.1 would turn the `on:` key into `True`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import yaml

from bot.analysis.requirements import Install, install_from, relative_candidates
from bot.analysis.shell import PipCommand, Word, pip_installs
from bot.analysis.source import Unreadable

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)
_WORKSPACE = re.compile(r"^(?:\$\{\{\s*github\.workspace\s*\}\}|\$\{?GITHUB_WORKSPACE\}?)/")
_MERGE = "tag:yaml.org,2002:merge"
_POSIX_SHELLS = ("bash", "sh")
MAX_MERGE_DEPTH = 8


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a job; ``installs`` are the `pip install` commands its `run:` holds."""

    index: int
    name: str  # as GitHub shows it: the `name:`, else `Run <first line>`
    line: int
    condition: str | None
    installs: tuple[Install, ...]


@dataclass(frozen=True, slots=True)
class Job:
    """One job; ``calls`` is the local reusable workflow it runs (`uses: ./.github/...`)."""

    id: str
    name: str
    line: int
    condition: str | None
    steps: tuple[Step, ...]
    calls: str | None = None


@dataclass(frozen=True, slots=True)
class Workflow:
    path: str
    jobs: tuple[Job, ...]

    @property
    def calls(self) -> tuple[str, ...]:
        """The local reusable workflows this one calls, in order."""
        return tuple(dict.fromkeys(j.calls for j in self.jobs if j.calls))


def parse_workflow(path: str, text: str) -> Workflow | Unreadable:
    """Read a workflow; malformed YAML is an :class:`Unreadable` with its line."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        return Unreadable(path, _error_line(exc, text), f"not valid YAML: {_error_reason(exc)}")
    except RecursionError:
        return Unreadable(path, None, "not valid YAML: nested too deeply")
    top = _mapping(root)
    lines = text.split("\n")
    base_dir = _working_directory(top)
    jobs: list[Job] = []
    jobs_node = top.get("jobs")
    key_lines = {
        str(k.value): int(k.start_mark.line) + 1
        for k, _ in (jobs_node.value if isinstance(jobs_node, yaml.MappingNode) else [])
        if isinstance(k, yaml.ScalarNode)
    }
    for job_id, node in _mapping(jobs_node).items():
        job = _mapping(node)
        uses = _text(job.get("uses"))
        calls = None
        if uses is not None and uses.startswith("./"):
            calls = posixpath.normpath(uses.split("@", 1)[0])
        job_dir = _working_directory(job) or base_dir
        steps = tuple(
            _step(i, item, lines, job_dir) for i, item in enumerate(_sequence(job.get("steps")))
        )
        jobs.append(Job(
            id=job_id,
            name=_text(job.get("name")) or job_id,
            line=key_lines.get(job_id, node.start_mark.line + 1),
            condition=_text(job.get("if")),
            steps=steps,
            calls=calls,
        ))
    return Workflow(path, tuple(jobs))


def _error_line(exc: yaml.YAMLError, text: str) -> int | None:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return int(mark.line) + 1
    position = getattr(exc, "position", None)
    if isinstance(position, int):
        return text.count("\n", 0, position) + 1
    return None


def _error_reason(exc: yaml.YAMLError) -> str:
    reason = getattr(exc, "problem", None) or getattr(exc, "reason", None)
    if reason:
        return str(reason)
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _mapping(node: yaml.Node | None, depth: int = 0) -> dict[str, yaml.Node]:
    """A mapping node's entries by key (merge keys `<<` applied, later keys win)."""
    out: dict[str, yaml.Node] = {}
    if not isinstance(node, yaml.MappingNode) or depth > MAX_MERGE_DEPTH:
        return out
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        if key.tag == _MERGE:
            merged = value.value if isinstance(value, yaml.SequenceNode) else [value]
            for item in merged:
                for k, v in _mapping(item, depth + 1).items():
                    out.setdefault(k, v)
            continue
        out[key.value] = value
    return out


def _sequence(node: yaml.Node | None) -> list[yaml.Node]:
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _text(node: yaml.Node | None) -> str | None:
    if isinstance(node, yaml.ScalarNode):
        return str(node.value)
    return None


def _working_directory(node: dict[str, yaml.Node]) -> str | None:
    return _text(_mapping(_mapping(node.get("defaults")).get("run")).get("working-directory"))


def _step(index: int, node: yaml.Node, lines: list[str], job_dir: str | None) -> Step:
    step = _mapping(node)
    run = step.get("run")
    script = _text(run) or ""
    title = _text(step.get("name"))
    if title is None:
        first = script.strip().split("\n", 1)[0]
        title = "Run " + (first if len(first) <= 40 else first[:39] + "…") if first else (
            _text(step.get("uses")) or f"step {index + 1}"
        )
    condition = _text(step.get("if"))
    installs: tuple[Install, ...] = ()
    shell = (_text(step.get("shell")) or "bash").split()
    runs_shell = bool(shell) and shell[0].rsplit("/", 1)[-1] in _POSIX_SHELLS
    if isinstance(run, yaml.ScalarNode) and runs_shell and "pip" in script and \
            not _never(condition):
        folder = _text(step.get("working-directory")) or job_dir or "."
        installs = _installs(run, script, lines, folder)
    return Step(index, title, node.start_mark.line + 1, condition, installs)


def _never(condition: str | None) -> bool:
    """A step or job switched off with `if: false`."""
    if condition is None:
        return False
    return strip_expression(condition) == "false"


def strip_expression(condition: str) -> str:
    """A condition without its `${{ }}` wrapper and surrounding space."""
    text = condition.strip()
    if text.startswith("${{") and text.endswith("}}") and text.count("${{") == 1:
        text = text[3:-2].strip()
    return text


def _mask(script: str) -> str:
    """Hide `${{ ... }}` from the shell parser as `$xxx`, without moving any character."""

    def hide(m: re.Match[str]) -> str:
        return "$" + "".join("\n" if c == "\n" else "x" for c in m.group()[1:])

    return _EXPRESSION.sub(hide, script)


def _restore(cmd: PipCommand, script: str, masked: str) -> PipCommand:
    """Put the hidden expressions back into the words that hold them."""

    def fix(words: tuple[Word, ...]) -> tuple[Word, ...]:
        out = []
        for w in words:
            text = w.text
            for m in _EXPRESSION.finditer(script, 0, w.end):
                if m.end() > w.start:
                    text = text.replace(masked[m.start():m.end()], m.group(), 1)
            out.append(Word(text, w.start, w.end))
        return tuple(out)

    return replace(cmd, specs=fix(cmd.specs), requirements=fix(cmd.requirements),
                   constraints=fix(cmd.constraints), editables=fix(cmd.editables))


def _installs(
    run: yaml.ScalarNode, script: str, lines: list[str], folder: str,
) -> tuple[Install, ...]:
    masked = _mask(script)
    line_of = _line_finder(run, masked, lines)

    def resolve(text: str) -> tuple[str, ...]:
        return relative_candidates(folder, _WORKSPACE.sub("", text, count=1))

    return tuple(
        install_from(_restore(cmd, script, masked), line_of, lambda t: t, resolve)
        for cmd in pip_installs(masked)
    )


def _line_finder(node: yaml.ScalarNode, script: str, lines: list[str]) -> Callable[[int], int]:
    """Map an offset in a `run:` value to a line of the file."""
    first = node.start_mark.line
    if node.style == "|":
        return lambda pos: first + 2 + script.count("\n", 0, pos)
    last = min(node.end_mark.line, len(lines) - 1)

    def search(pos: int) -> int:
        token = re.match(r"[^\s'\"\\]+", script[pos:])
        if token is not None:
            for i in range(first, last + 1):
                if token.group() in lines[i]:
                    return i + 1
        return first + 1

    return search
