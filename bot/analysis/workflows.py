"""GitHub Actions workflows with line numbers: jobs, steps, `if:` conditions, pip installs.

What a workflow is made of, and the reading of its text that needs no YAML. The YAML itself
is read by :mod:`bot.analysis.workflow_nodes`, imported with the first workflow read, so
that a command that reads none never loads PyYAML.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.analysis.requirements import FileRef, Install

if TYPE_CHECKING:
    from bot.analysis.source import Unreadable


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a job; ``installs`` are the `pip install` commands its `run:` holds."""

    index: int
    name: str  # as GitHub shows it: the `name:`, else `Run <first line>`
    line: int
    condition: str | None
    installs: tuple[Install, ...]
    scripts: tuple[FileRef, ...] = ()  # shell scripts the step runs (`bash scripts/x.sh`)
    id: str | None = None
    uses: str | None = None  # an action (`dorny/paths-filter@v3`)
    run: str | None = None  # the `run:` script, expressions included
    params: tuple[tuple[str, str], ...] = ()  # the `with:` values that are plain text
    env: tuple[tuple[str, str], ...] = ()  # the `env:` values that are plain text

    def param(self, name: str) -> str | None:
        """A `with:` value of the step."""
        return next((v for k, v in self.params if k == name), None)


@dataclass(frozen=True, slots=True)
class Job:
    """One job; ``calls`` is the local reusable workflow it runs (`uses: ./.github/...`).

    ``runs_on`` and ``container`` are the texts of `runs-on:` and `container:` (its image),
    expressions included; ``inputs`` the `with:` values passed to a called workflow.
    """

    id: str
    name: str
    line: int
    condition: str | None
    steps: tuple[Step, ...]
    calls: str | None = None
    span: tuple[int, int] = (0, 0)  # where the job's node is in the file's text
    runs_on: str = ""
    container: str | None = None
    inputs: str = ""
    needs: tuple[str, ...] = ()
    outputs: tuple[tuple[str, str], ...] = ()  # `outputs:` name -> expression text
    params: tuple[tuple[str, str], ...] = ()  # the `with:` of a called workflow, as text
    raw_name: str | None = None  # the `name:` as written (expressions included)
    # `strategy.matrix` expanded (see :class:`Matrix`); None when the job has none
    matrix: Matrix | None = None


@dataclass(frozen=True, slots=True)
class MatrixRow:
    """One combination of a job's matrix: its values by key, an object's keys flattened
    (`{info: {test_file: x}}` gives both `info.test_file` and `test_file`), plain text only;
    ``line`` is where the combination is written (its object, else its first value)."""

    values: tuple[tuple[str, str], ...]
    line: int

    def get(self, key: str) -> str | None:
        return next((v for k, v in self.values if k == key), None)


@dataclass(frozen=True, slots=True)
class Matrix:
    """A job's `strategy.matrix`, expanded as GitHub does (axes multiplied, `exclude`
    removed, `include` added or merged); ``computed`` says where a part of it is an
    expression (`${{ fromJSON(...) }}`), whose rows cannot be known."""

    rows: tuple[MatrixRow, ...]
    line: int
    computed: str | None = None
    truncated: bool = False  # more combinations than are expanded


@dataclass(frozen=True, slots=True)
class Trigger:
    """One event of `on:` with the filters GitHub applies to it; ``inputs`` are the declared
    inputs of `workflow_call`/`workflow_dispatch` with their defaults (None: no default)."""

    event: str
    paths: tuple[str, ...] | None = None
    paths_ignore: tuple[str, ...] | None = None
    types: tuple[str, ...] | None = None
    inputs: tuple[tuple[str, str | None, str | None], ...] = ()


@dataclass(frozen=True, slots=True)
class Workflow:
    path: str
    jobs: tuple[Job, ...]
    triggers: frozenset[str] = frozenset()  # the events of `on:` (`pull_request`, `schedule`)
    on: tuple[Trigger, ...] = ()
    name: str | None = None

    def trigger(self, event: str) -> Trigger | None:
        return next((t for t in self.on if t.event == event), None)

    @property
    def calls(self) -> tuple[str, ...]:
        """The local reusable workflows this one calls, in order."""
        return tuple(dict.fromkeys(j.calls for j in self.jobs if j.calls))


def parse_workflow(path: str, text: str) -> Workflow | Unreadable:
    """Read a workflow; malformed YAML is an :class:`Unreadable` with its line."""
    from bot.analysis import workflow_nodes

    return workflow_nodes.parse_workflow(path, text)


def workflow_env(text: str) -> list[EnvSetting]:
    """The environment variables a workflow sets: `env:` at every level, names a step
    writes to `$GITHUB_ENV`, and `--env`/`-e` options of a job's container (their values
    come from outside: not known). Malformed YAML sets nothing."""
    from bot.analysis import workflow_nodes

    return workflow_nodes.workflow_env(text)


def strip_expression(condition: str) -> str:
    """A condition without its `${{ }}` wrapper and surrounding space."""
    text = condition.strip()
    if text.startswith("${{") and text.endswith("}}") and text.count("${{") == 1:
        text = text[3:-2].strip()
    return text


def expression_spans(script: str) -> list[tuple[int, int]]:
    """Where the `${{ ... }}` expressions are, in order (each ends at the first `}}`).

    Found with ``str.find``, so linear whatever the text: a regular expression searched
    from every `${{` of a script with no `}}` would rescan the rest of it each time.
    """
    spans: list[tuple[int, int]] = []
    start = script.find("${{")
    while start != -1:
        end = script.find("}}", start + 3)
        if end == -1:
            break
        spans.append((start, end + 2))
        start = script.find("${{", end + 2)
    return spans


@dataclass(frozen=True, slots=True)
class EnvSetting:
    """An environment variable a workflow sets: at `level` `workflow`, `job` or `step`;
    ``value`` None when it is not a plain string (an expression, a secret, a matrix value);
    ``name`` None when which variables are set cannot be read (an `env:` that is an
    expression, a `$GITHUB_ENV` write of a computed name)."""

    name: str | None
    value: str | None
    level: str
