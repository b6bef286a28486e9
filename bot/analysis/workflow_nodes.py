"""The YAML of GitHub Actions workflows, read into :mod:`bot.analysis.workflows`.

The YAML is composed into nodes, never constructed into Python values: every node keeps its
line, and keys stay strings (YAML 1.1 would turn the `on:` key into `True`).
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Callable
from dataclasses import replace

import yaml

from bot.analysis.requirements import FileRef, Install, install_from, relative_candidates
from bot.analysis.shell import (
    PipCommand,
    Word,
    assignments,
    newlines_before,
    pip_installs,
    script_runs,
    values_at,
)
from bot.analysis.source import Unreadable
from bot.analysis.workflows import (
    EnvSetting,
    Job,
    Matrix,
    MatrixRow,
    Step,
    Trigger,
    Workflow,
    expression_spans,
    strip_expression,
)
from config.yamlload import ExpansionError, check_expansion
from config.yamlload import Loader as _Loader

_WORKSPACE = re.compile(r"^(?:\$\{\{\s*github\.workspace\s*\}\}|\$\{?GITHUB_WORKSPACE\}?)/")
_MERGE = "tag:yaml.org,2002:merge"
_POSIX_SHELLS = ("bash", "sh")
MAX_MERGE_DEPTH = 8


def parse_workflow(path: str, text: str) -> Workflow | Unreadable:
    """See :func:`bot.analysis.workflows.parse_workflow`."""
    try:
        root = yaml.compose(text, Loader=_Loader)
        if root is not None:
            check_expansion(root, text)  # before anything walks it: no "billion laughs"
    except ExpansionError as exc:
        return Unreadable(path, None, f"skipped: {exc.problem}")
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
            span=(int(node.start_mark.index), int(node.end_mark.index)),
            runs_on=" ".join(_scalars(job.get("runs-on"))),
            container=_container(job.get("container")),
            inputs=" ".join(_scalars(job.get("with"))),
            needs=tuple(_scalars(job.get("needs"))),
            outputs=_pairs(job.get("outputs")),
            params=_pairs(job.get("with")),
            raw_name=_text(job.get("name")),
            matrix=_matrix(_mapping(job.get("strategy")).get("matrix")),
        ))
    on = top.get("on")
    return Workflow(path, tuple(jobs), _triggers(on), _trigger_details(on), _text(top.get("name")))


MAX_COMBINATIONS = 256  # GitHub runs at most 256 jobs of one matrix

# one value of a combination: its plain form (to compare, as GitHub does, by value), its
# line, and whether it is an object
_Cell = tuple[object, int, bool]


def _plain_value(node: yaml.Node, depth: int = 0) -> object:
    if isinstance(node, yaml.ScalarNode) or depth > MAX_MERGE_DEPTH:
        return str(getattr(node, "value", ""))
    if isinstance(node, yaml.SequenceNode):
        return tuple(_plain_value(item, depth + 1) for item in node.value)
    return tuple(sorted((k, _plain_value(v, depth + 1)) for k, v in _mapping(node).items()))


def _cell(node: yaml.Node) -> _Cell:
    return (_plain_value(node), int(node.start_mark.line) + 1, isinstance(node, yaml.MappingNode))


def _matrix(node: yaml.Node | None) -> Matrix | None:
    """A job's `strategy.matrix` expanded into its combinations (see :class:`Matrix`)."""
    if node is None:
        return None
    line = int(node.start_mark.line) + 1
    if isinstance(node, yaml.ScalarNode):  # `matrix: ${{ fromJSON(needs.x.outputs.y) }}`
        return Matrix((), line, computed=str(node.value))
    entries = _mapping(node)
    computed: str | None = None
    combos: list[dict[str, _Cell]] = [{}]
    axes = [k for k in entries if k not in ("include", "exclude")]
    truncated = False
    for axis in axes:
        values = entries[axis]
        if not isinstance(values, yaml.SequenceNode):
            computed = computed or f"{axis}: {_text(values) or '...'}"
            continue
        combos = [{**c, axis: _cell(v)} for c in combos for v in values.value]
        if len(combos) > MAX_COMBINATIONS:
            combos, truncated = combos[:MAX_COMBINATIONS], True
    if not axes:
        combos = []
    for exclude in _sequence(entries.get("exclude")):
        drop = {k: _plain_value(v) for k, v in _mapping(exclude).items()}
        combos = [c for c in combos if not all(k in c and c[k][0] == v for k, v in drop.items())]
    include = entries.get("include")
    if include is not None and not isinstance(include, yaml.SequenceNode):
        computed = computed or f"include: {_text(include) or '...'}"
    original = len(combos)  # an `include` extends these; the combinations it adds, never
    for item in _sequence(include):
        extra = {k: _cell(v) for k, v in _mapping(item).items()}
        own = int(item.start_mark.line) + 1
        merged = False
        for combo in combos[:original]:
            if all(combo[k][0] == v[0] for k, v in extra.items() if k in axes and k in combo):
                combo.update({k: v for k, v in extra.items() if k not in axes or k not in combo})
                merged = True
        if not merged and len(combos) < MAX_COMBINATIONS:
            combos.append({**extra, "": ("", own, True)})
    rows = tuple(_row(c) for c in combos if any(k for k in c))
    return Matrix(rows, line, computed, truncated)


def _row(combo: dict[str, _Cell]) -> MatrixRow:
    values: list[tuple[str, str]] = []
    objects = [line for key, (_, line, is_object) in combo.items() if is_object]
    for key, (value, _, _) in combo.items():
        if not key:
            continue
        if isinstance(value, str):
            values.append((key, value))
        elif isinstance(value, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
            for inner, item in value:
                if isinstance(item, str):
                    values.append((f"{key}.{inner}", item))
                    values.append((inner, item))
    lines = [line for _, line, _ in combo.values()]
    return MatrixRow(tuple(values), min(objects) if objects else min(lines))


def _triggers(node: yaml.Node | None) -> frozenset[str]:
    """The events of `on:`, in any of its three forms (a name, a list, a mapping)."""
    if isinstance(node, yaml.ScalarNode):
        return frozenset({str(node.value)})
    if isinstance(node, yaml.SequenceNode):
        return frozenset(str(n.value) for n in node.value if isinstance(n, yaml.ScalarNode))
    return frozenset(_mapping(node))


def _trigger_details(node: yaml.Node | None) -> tuple[Trigger, ...]:
    """Each event of `on:` with its path filters, activity types and declared inputs."""
    out: list[Trigger] = []
    for event in sorted(_triggers(node)):
        spec = _mapping(_mapping(node).get(event))
        inputs = tuple(
            (name, _text(_mapping(value).get("default")), _text(_mapping(value).get("type")))
            for name, value in _mapping(spec.get("inputs")).items()
        )
        out.append(Trigger(
            event,
            _optional_list(spec.get("paths")),
            _optional_list(spec.get("paths-ignore")),
            _optional_list(spec.get("types")),
            inputs,
        ))
    return tuple(out)


def _optional_list(node: yaml.Node | None) -> tuple[str, ...] | None:
    if node is None:
        return None
    return tuple(_scalars(node))


def _pairs(node: yaml.Node | None) -> tuple[tuple[str, str], ...]:
    """A mapping's plain-text values by key (nested values left out)."""
    return tuple((k, str(v.value)) for k, v in _mapping(node).items() if isinstance(v, yaml.ScalarNode))


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


def _scalars(node: yaml.Node | None, depth: int = 0) -> list[str]:
    """Every scalar value under a node (mapping values, sequence items), in order."""
    if isinstance(node, yaml.ScalarNode):
        return [str(node.value)]
    if depth > MAX_MERGE_DEPTH:
        return []
    if isinstance(node, yaml.SequenceNode):
        return [t for item in node.value for t in _scalars(item, depth + 1)]
    return [t for value in _mapping(node).values() for t in _scalars(value, depth + 1)]


def _container(node: yaml.Node | None) -> str | None:
    """A job's container image: `container: IMAGE` or `container: {image: IMAGE}`."""
    if node is None:
        return None
    if isinstance(node, yaml.MappingNode):
        return _text(_mapping(node).get("image")) or ""
    return _text(node) or ""


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
    scripts: tuple[FileRef, ...] = ()
    shell = (_text(step.get("shell")) or "bash").split()
    runs_shell = bool(shell) and shell[0].rsplit("/", 1)[-1] in _POSIX_SHELLS
    if isinstance(run, yaml.ScalarNode) and runs_shell and ("pip" in script or ".sh" in script) \
            and not _never(condition):
        folder = _WORKSPACE.sub("", (_text(step.get("working-directory")) or job_dir or ".")
                                + "/", count=1).rstrip("/") or "."
        installs, scripts = _installs(run, script, lines, folder)
    return Step(index, title, node.start_mark.line + 1, condition, installs, scripts,
                id=_text(step.get("id")), uses=_text(step.get("uses")),
                run=script if isinstance(run, yaml.ScalarNode) else None,
                params=_pairs(step.get("with")), env=_pairs(step.get("env")))


def _never(condition: str | None) -> bool:
    """A step or job switched off with `if: false`."""
    if condition is None:
        return False
    return strip_expression(condition) == "false"


def _mask(script: str, spans: list[tuple[int, int]]) -> str:
    """Hide `${{ ... }}` from the shell parser as `$xxx`, without moving any character."""
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(script[last:start])
        parts.append("$" + "".join("\n" if c == "\n" else "x" for c in script[start + 1:end]))
        last = end
    parts.append(script[last:])
    return "".join(parts)


def _restore(cmd: PipCommand, script: str, masked: str, spans: list[tuple[int, int]]) -> PipCommand:
    """Put the hidden expressions back into the words that hold them."""
    ends = [end for _, end in spans]

    def fix(words: tuple[Word, ...]) -> tuple[Word, ...]:
        out = []
        for w in words:
            text = w.text
            i = bisect.bisect_right(ends, w.start)  # the first expression ending inside the word
            while i < len(spans) and spans[i][1] <= w.end:
                start, end = spans[i]
                text = text.replace(masked[start:end], script[start:end], 1)
                i += 1
            out.append(Word(text, w.start, w.end))
        return tuple(out)

    return replace(cmd, specs=fix(cmd.specs), requirements=fix(cmd.requirements),
                   constraints=fix(cmd.constraints), editables=fix(cmd.editables))


def _installs(
    run: yaml.ScalarNode, script: str, lines: list[str], folder: str,
) -> tuple[tuple[Install, ...], tuple[FileRef, ...]]:
    """The step's `pip install`s and the shell scripts it runs (repository paths)."""
    spans = expression_spans(script)
    masked = _mask(script, spans)
    line_of = _line_finder(run, masked, lines)

    def resolve(text: str) -> tuple[str, ...]:
        return relative_candidates(folder, _WORKSPACE.sub("", text, count=1))

    assigned = assignments(masked) if "pip" in script else []

    def values(cmd: PipCommand) -> Callable[[str], str]:
        """Variables the script assigns before the command, substituted (see
        :func:`bot.analysis.shell.values_at`)."""
        if not assigned:
            return lambda t: t
        from bot.analysis.dockerfile import substitute, substitute_known  # dockerfile-parse: lazily

        known, unknown = values_at(assigned, cmd.start, cmd.branches, substitute)
        return lambda t: substitute_known(t, known, unknown)

    installs = tuple(
        install_from(_restore(cmd, script, masked, spans), line_of, values(cmd), resolve)
        for cmd in (pip_installs(masked) if "pip" in script else ())
    )
    scripts = tuple(
        FileRef(w.text, line_of(w.start), False,
                tuple(dict.fromkeys((*resolve(w.text), *relative_candidates(".", w.text)))))
        for w in script_runs(_restore_words(masked, script, spans))
        if "$" not in _WORKSPACE.sub("", w.text, count=1)
    )
    return installs, scripts


def _restore_words(masked: str, script: str, spans: list[tuple[int, int]]) -> str:
    """The masked script with `${{ github.workspace }}/` put back (a script's folder)."""
    if not any(_WORKSPACE.match(script[start:end + 1]) for start, end in spans):
        return masked
    return script


_TOKEN = re.compile(r"[^\s'\"\\]+")


def _line_finder(node: yaml.ScalarNode, script: str, lines: list[str]) -> Callable[[int], int]:
    """Map an offset in a `run:` value to a line of the file.

    A literal block (`|`) keeps the file's line breaks, so counting them is exact. Other
    styles fold lines, so the word at the offset is looked for in the scalar's lines: from
    where the last word was found (installs come in order), then from the top. The search
    has a budget of a few passes over the scalar in all; past it, the last line found
    stands, so a scalar of many words unlike their source (escapes, masked expressions)
    costs linear time, not quadratic.
    """
    first = node.start_mark.line
    if node.style == "|":
        newline = newlines_before(script)
        return lambda pos: first + 2 + newline(pos)
    last = min(node.end_mark.line, len(lines) - 1)
    region = "\n".join(lines[first:last + 1])
    line_in_region = newlines_before(region)
    cursor = 0
    budget = 4 * len(region) + 4096

    def search(pos: int) -> int:
        nonlocal cursor, budget
        token = _TOKEN.match(script, pos)
        if token is None or budget <= 0:
            return first + 1 + line_in_region(cursor)
        word = token.group()
        found = region.find(word, cursor)
        budget -= (found if found != -1 else len(region)) - cursor
        if found == -1:
            found = region.find(word, 0, cursor + len(word))
            budget -= cursor
        if found == -1:
            return first + 1
        cursor = found
        return first + 1 + line_in_region(found)

    return search


_GITHUB_ENV = re.compile(
    r"""(?:echo|printf)\s+["']?([A-Za-z_][A-Za-z0-9_]*)=[^\n]*>>\s*["']?\$\{?GITHUB_ENV""")
_DOCKER_ENV = re.compile(r"(?:^|\s)(?:--env|-e)[\s=]+([A-Za-z_][A-Za-z0-9_]*)(=\S*)?")


def workflow_env(text: str) -> list[EnvSetting]:
    """See :func:`bot.analysis.workflows.workflow_env`."""
    try:
        root = yaml.compose(text, Loader=_Loader)
        if root is not None:
            check_expansion(root, text)
    except (yaml.YAMLError, RecursionError):
        return []
    top = _mapping(root)
    out = _env_block(top.get("env"), "workflow")
    for job in (_mapping(node) for node in _mapping(top.get("jobs")).values()):
        out.extend(_env_block(job.get("env"), "job"))
        container = _mapping(job.get("container"))
        options = _text(container.get("options")) or ""
        out.extend(EnvSetting(m.group(1), None, "job") for m in _DOCKER_ENV.finditer(options))
        out.extend(_env_block(container.get("env"), "job"))
        for step in (_mapping(node) for node in _sequence(job.get("steps"))):
            out.extend(_env_block(step.get("env"), "step"))
            script = _text(step.get("run")) or ""
            if "GITHUB_ENV" in script:
                names = _GITHUB_ENV.findall(script)
                out.extend(EnvSetting(n, None, "job") for n in names)
                if script.count("GITHUB_ENV") > len(names):
                    out.append(EnvSetting(None, None, "job"))
    return out


def _env_block(node: yaml.Node | None, level: str) -> list[EnvSetting]:
    if node is None:
        return []
    if not isinstance(node, yaml.MappingNode):
        return [EnvSetting(None, None, level)]  # `env: ${{ fromJSON(...) }}`
    out = []
    for name, value in _mapping(node).items():
        text = _text(value)
        plain = None if text is None or "${{" in text else text
        out.append(EnvSetting(name, plain, level))
    return out
