"""What a repository's workflows do for one event: which jobs run, decided three-valued.

The workflows are evaluated as GitHub would run them for the event, not pattern-matched: each
workflow's trigger (its event, activity types and path filters), then its jobs in the order
their `needs:` give, each job's `if:` with the results and outputs of the jobs it needs, the
steps that compute those outputs (`dorny/paths-filter` filters decided by the changed paths,
`$GITHUB_OUTPUT` lines of scripts whose branches can be decided), and reusable workflows with
the inputs their callers pass. Every job comes out `runs` true, false or None (unknown, with
why): what cannot be evaluated stays unknown and is said, never guessed.

Two assumptions, both about the run and neither about the pull request: every job that runs
succeeds unless a step of it fails for a reason read here, and no run is cancelled. A step
that exits 1 unless the pull request carries a label (`contains(...labels..., 'run-ci')` in
its script, as SGLang's `pr-gate.yml` does) is a **label gate**: it fails without the label.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.analysis.ci.expressions import (
    UNKNOWN,
    Context,
    ExpressionError,
    Unknown,
    Value,
    condition,
    evaluate,
    interpolate,
    parse,
)
from bot.analysis.ci.globs import paths_trigger
from bot.analysis.ci.logic import and3, not3, or3
from bot.analysis.workflows import Job, Step, Workflow

if TYPE_CHECKING:
    from bot.analysis.ci.outputs import StepOutputs

# the activity types of `pull_request` a push to the PR's branch (or opening it) raises
_PUSH_TYPES = frozenset({"opened", "synchronize", "reopened"})
_DEFAULT_TYPES = {"pull_request": _PUSH_TYPES, "pull_request_target": _PUSH_TYPES}
MAX_DEPTH = 4  # reusable workflows calling reusable workflows (GitHub allows four levels)
# a test for a label: `contains(github.event.pull_request.labels.*.name, 'run-ci')`, or of a
# list of labels a step fetched (`contains(fromJson(steps.pr.outputs.labels), 'run-ci')`)
LABEL_TEST = re.compile(r"contains\(\s*[^,'\n]*labels[^,'\n]*,\s*'([^'\n]{1,100})'\s*\)", re.IGNORECASE)
_EXIT = re.compile(r"\bexit\s+[1-9]")

Result = str | Unknown  # "success" | "failure" | "skipped"
_STEP_READ = re.compile(r"steps\.([\w-]+)\.outputs")
# what a script writes to $GITHUB_OUTPUT, by its text once its expressions are substituted and
# the environment it is given: the same script is read once, whatever the event
_OUTPUTS: dict[tuple[str, tuple[tuple[str, str | None], ...]], StepOutputs] = {}


@dataclass(frozen=True, slots=True)
class Event:
    """The event the workflows are evaluated for. ``labels`` and ``changed`` are None when
    not known (an audit knows no changed paths)."""

    name: str = "pull_request"
    labels: frozenset[str] | None = frozenset()
    changed: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class Note:
    """Something of the workflows that could not be evaluated."""

    path: str
    line: int
    message: str


@dataclass(slots=True)
class JobRun:
    """One job as the event runs it (a reusable workflow's job: over all its callers)."""

    path: str
    job: Job
    runs: bool | None
    result: Result
    why: str  # one phrase: what decided ``runs`` (or left it unknown)
    labels: frozenset[str] = frozenset()  # labels its gate steps require


@dataclass
class _Frame:
    """One run of one workflow: the inputs it was given; whether it runs, given that the
    event triggers its top workflow (``runs``), and whether the event does (``trigger``):
    the jobs are evaluated as if triggered, so that what they decide among themselves stays
    known when only the trigger is not."""

    path: str
    inputs: dict[str, Value]
    runs: bool | None
    why: str
    depth: int
    trigger: bool | None = True
    trigger_why: str = ""


@dataclass
class Simulation:
    """The workflows of one revision run for one event."""

    workflows: Mapping[str, Workflow]
    read: Callable[[str], str | None]
    event: Event
    runs: dict[tuple[str, str], JobRun] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._noted: set[tuple[str, int, str]] = set()
        self._readers: dict[str, frozenset[str]] = {}
        self._done: set[str] = set()
        self._callers: dict[str, set[str]] = {}
        for path, workflow in self.workflows.items():
            for job in workflow.jobs:
                if job.calls:
                    self._callers.setdefault(job.calls, set()).add(path)

    def run(self, key: tuple[str, str]) -> JobRun | None:
        """How the event runs one job (workflow path, job id); None for no such job. Only
        the workflows asked about are evaluated (with their callers, for a reusable one)."""
        self._ensure(key[0])
        return self.runs.get(key)

    def run_all(self) -> None:
        """Evaluate every workflow (to collect every note)."""
        for path in sorted(self.workflows):
            self._ensure(path)

    def _ensure(self, path: str) -> None:
        if path in self._done or path not in self.workflows:
            return
        self._done.add(path)
        for caller in sorted(self._callers.get(path, ())):  # they run it, with their inputs
            self._ensure(caller)
        workflow = self.workflows[path]
        runs, why = self._triggered(workflow)
        if runs is not False:
            self._workflow(_Frame(path, self._dispatch_inputs(path), True, why, 0, runs, why))
        elif path not in self._callers and (call := workflow.trigger("workflow_call")) is not None:
            # reusable, and called by no workflow here: another repository's call it
            inputs: dict[str, Value] = {name: Unknown(why="set by an unknown caller")
                                        for name, _, _ in call.inputs}
            why = "it is a reusable workflow no workflow of this repository calls"
            self._workflow(_Frame(path, inputs, True, why, 0, None, why))
        else:
            for job in workflow.jobs:
                self._record(_Frame(path, {}, False, why, 0, False, why), job, False, "skipped", why,
                             frozenset())

    # -- triggers --------------------------------------------------------------------------

    def _triggered(self, workflow: Workflow) -> tuple[bool | None, str]:
        if not workflow.on:  # a fragment without `on:`: kept as the tests wrote it
            return True, "the workflow has no `on:`"
        trigger = workflow.trigger(self.event.name)
        if trigger is None:
            return False, f"the workflow does not run on `{self.event.name}`"
        types = _DEFAULT_TYPES.get(self.event.name)
        if types is not None and trigger.types is not None and not types & set(trigger.types):
            return False, f"the workflow runs only on `{', '.join(trigger.types)}`"
        if trigger.paths is None and trigger.paths_ignore is None:
            return True, f"the workflow runs on `{self.event.name}`"
        if self.event.changed is None:
            return None, "the workflow's path filter decides, and no changed paths are known"
        if paths_trigger(trigger.paths, trigger.paths_ignore, self.event.changed):
            return True, "the workflow's path filter matched"
        return False, "the workflow's path filter matched no changed file"

    def _dispatch_inputs(self, path: str) -> dict[str, Value]:
        if self.event.name != "workflow_dispatch":
            return {}
        trigger = self.workflows[path].trigger("workflow_dispatch")
        return _defaults(trigger.inputs if trigger else ())

    # -- contexts --------------------------------------------------------------------------

    def _github(self) -> dict[str, Value]:
        event: dict[str, Value] = {}
        if self.event.name in _DEFAULT_TYPES:
            labels: Value = UNKNOWN if self.event.labels is None else [
                {"name": name} for name in sorted(self.event.labels)]
            event = {"action": "synchronize", "pull_request": {
                "labels": labels, "number": UNKNOWN, "body": UNKNOWN, "title": UNKNOWN,
                "head": UNKNOWN, "base": UNKNOWN, "user": UNKNOWN, "draft": False}}
        elif self.event.name == "schedule":
            event = {"schedule": UNKNOWN}
        elif self.event.name == "workflow_dispatch":
            event = {"inputs": UNKNOWN}
        known: dict[str, Value] = {"event_name": self.event.name, "event": event}
        return _Open(known)

    def _context(self, frame: _Frame, needs: dict[str, Value], steps: dict[str, Value],
                 status: Mapping[str, bool | None]) -> Context:
        return Context(values={
            "github": self._github(), "inputs": frame.inputs, "needs": needs, "steps": steps,
            "matrix": UNKNOWN, "env": UNKNOWN, "vars": UNKNOWN, "secrets": UNKNOWN,
            "job": UNKNOWN, "runner": UNKNOWN, "strategy": UNKNOWN,
        }, status=status)

    def _note(self, path: str, line: int, message: str) -> None:
        key = (path, line, message)
        if key not in self._noted:
            self._noted.add(key)
            self.notes.append(Note(path, line, message))

    # -- jobs ------------------------------------------------------------------------------

    def _workflow(self, frame: _Frame) -> dict[str, tuple[bool | None, Result, dict[str, Value]]]:
        """Run a workflow's jobs; each job's (runs, result, outputs)."""
        workflow = self.workflows[frame.path]
        done: dict[str, tuple[bool | None, Result, dict[str, Value]]] = {}
        upstream: dict[str, bool | None] = {}  # whether a job an earlier job needs failed
        for job in _ordered(workflow.jobs):
            done[job.id] = self._job(frame, job, done, upstream)
        return done

    def _job(self, frame: _Frame, job: Job,
             done: dict[str, tuple[bool | None, Result, dict[str, Value]]],
             upstream: dict[str, bool | None]) -> tuple[bool | None, Result, dict[str, Value]]:
        needs: dict[str, Value] = {}
        results: list[Result] = []
        # `failure()` is true when any ancestor failed, not only a job this one needs
        ancestors: bool | None = False
        for name in job.needs:
            ancestors = or3(ancestors, upstream.get(name, False))
        for name in job.needs:
            if name not in done:
                self._note(frame.path, job.line, f"job `{job.id}` needs `{name}`, which is not a job "
                           "of this workflow (or its needs form a cycle)")
                needs[name] = {"result": UNKNOWN, "outputs": UNKNOWN}
                results.append(UNKNOWN)
                continue
            _, earlier, outputs = done[name]
            needs[name] = {"result": earlier, "outputs": outputs}
            results.append(earlier)
        failure = or3(_any_failure(results), ancestors)
        upstream[job.id] = failure
        status = {
            "success": _all_success(results), "failure": failure,
            "cancelled": False, "always": True,
        }
        context = self._context(frame, needs, {}, status)
        decision = condition(job.condition or "success()", context, job=True)  # implicit
        for message in decision.notes:
            self._note(frame.path, job.line, f"job `{job.id}` `if:`: {message}")
        runs = and3(frame.runs, decision.value)
        why = self._why(frame, job, decision.value, decision.why)
        if runs is False:
            self._record(frame, job, False, "skipped", why, frozenset())
            return False, "skipped", {}
        if job.calls is not None:
            called, outputs = self._call(frame, job, context, runs, why)
            return runs, called, outputs
        failed, outputs_of_steps, labels = self._steps(frame, job, context, status)
        result: Result = UNKNOWN if runs is None or failed is None else (
            "failure" if failed else "success")
        if labels and failed:
            why = f"it needs the label{'s' if len(labels) > 1 else ''} " + ", ".join(
                f"`{x}`" for x in sorted(labels))
        self._record(frame, job, runs, result, why, labels)
        return runs, result, self._outputs(frame, job, needs, outputs_of_steps, status)

    def _why(self, frame: _Frame, job: Job, value: bool | None, unknown: str) -> str:
        if frame.runs is not True:
            return frame.why
        if job.condition is None:
            if value is None:
                return "a job it needs may not succeed"
            return frame.why if value else "a job it needs was skipped or failed"
        if value is None:
            because = f": {unknown}" if unknown else ""
            return f"its `if:` cannot be decided statically (`{_short(job.condition)}`){because}"
        return f"its `if:` is {'true' if value else 'false'} for `{self.event.name}`"

    def _record(self, frame: _Frame, job: Job, runs: bool | None, result: Result, why: str,
                labels: frozenset[str]) -> None:
        key = (frame.path, job.id)
        if frame.trigger is not True and runs is not False:  # the event decides, or not known
            runs, why = and3(frame.trigger, runs), frame.trigger_why
            result = "skipped" if runs is False else UNKNOWN
        before = self.runs.get(key)
        if before is None:
            self.runs[key] = JobRun(frame.path, job, runs, result, why, labels)
            return
        # a reusable workflow called several times: it runs when any of its callers runs it
        merged = or3(before.runs, runs)
        if merged != before.runs and runs == merged:
            before.why, before.result = why, result
        before.runs = merged
        before.labels = before.labels | labels

    def _call(self, frame: _Frame, job: Job, context: Context, runs: bool | None,
              why: str) -> tuple[Result, dict[str, Value]]:
        assert job.calls is not None
        callee = self.workflows.get(job.calls)
        if callee is None or frame.depth >= MAX_DEPTH:
            if callee is None:
                self._note(frame.path, job.line, f"job `{job.id}` calls `{job.calls}`, which is "
                           "not a workflow of this revision")
            self._record(frame, job, runs, UNKNOWN, why, frozenset())
            return UNKNOWN, {}
        trigger = callee.trigger("workflow_call")
        declared = trigger.inputs if trigger else ()
        inputs = _defaults(declared)
        types = {name: kind for name, _, kind in declared}
        for name, text in job.params:
            inputs[name] = _typed(_value_of(text, context), types.get(name))
        jobs = self._workflow(_Frame(job.calls, inputs, runs, why, frame.depth + 1, frame.trigger,
                                     frame.trigger_why))
        results = [result for _, result, _ in jobs.values()]
        failed = _any_failure(results)
        result: Result = UNKNOWN if runs is None or failed is None else (
            "failure" if failed else "success")
        labels = frozenset().union(*(self.runs[(job.calls, j)].labels for j in jobs))
        if labels and failed:
            why = "the workflow it calls needs the label" + ("s " if len(labels) > 1 else " ") + \
                ", ".join(f"`{x}`" for x in sorted(labels))
        self._record(frame, job, runs, result, why, labels)
        return result, {}

    def _steps(self, frame: _Frame, job: Job, context: Context,
               status: Mapping[str, bool | None]) -> tuple[bool | None, dict[str, Value], frozenset[str]]:
        """Run a job's steps: whether one fails, their outputs by step id, gate labels."""
        steps: dict[str, Value] = {}
        failed: bool | None = False
        labels: set[str] = set()
        for step in job.steps:
            step_status = {**status, "success": and3(not3(failed), True), "failure": failed}
            here = self._context(frame, context.values["needs"], steps, step_status)  # type: ignore[arg-type]
            decision = condition(step.condition or "success()", here, job=False)
            for message in decision.notes:
                self._note(frame.path, step.line, f"step `{step.name}` `if:`: {message}")
            if decision.value is False:
                if step.id:
                    steps[step.id] = {"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}
                continue
            outputs, fails, gate = self._step(frame, step, here)
            labels |= gate
            if decision.value is None:
                outputs, fails = UNKNOWN, (None if fails is not False else False)
            failed = or3(failed, fails)
            if step.id:
                steps[step.id] = {"outputs": outputs, "outcome": UNKNOWN, "conclusion": UNKNOWN}
        return failed, steps, frozenset(labels)

    def _step(self, frame: _Frame, step: Step, context: Context) -> tuple[Value, bool | None, frozenset[str]]:
        """A step's outputs, whether it fails (a label gate), and the labels it requires."""
        uses = (step.uses or "").split("@", 1)[0].lower()
        if uses == "dorny/paths-filter":
            return self._paths_filter(frame, step), False, frozenset()
        if step.run is None:
            return UNKNOWN, False, frozenset()
        gate = _gate_labels(step.run)
        fails: bool | None = False
        if gate:
            have = self.event.labels
            fails = None if have is None else not gate <= have
        if step.id is None or step.id not in self._read_steps(frame.path):
            return UNKNOWN, fails, gate  # no one reads its outputs

        from bot.analysis.ci.outputs import interpolate as interpolate_script  # the shell reader
        from bot.analysis.ci.outputs import step_outputs

        def expression(text: str) -> str | None:
            return _string(interpolate("${{ " + text + " }}", context))

        script = interpolate_script(step.run, expression)
        env = tuple((name, _string(interpolate(text, context))) for name, text in step.env)
        key = (script, env)
        found = _OUTPUTS.get(key)
        if found is None:
            found = step_outputs(script, lambda _: None, env=dict(env))
            if len(_OUTPUTS) > 4096:
                _OUTPUTS.clear()
            _OUTPUTS[key] = found
        values: dict[str, Value] = {k: (UNKNOWN if v is None else v) for k, v in found.items()}
        return (values if found.complete else _Open(values)), fails, gate

    def _read_steps(self, path: str) -> frozenset[str]:
        """The step ids whose outputs a workflow reads (`steps.ID.outputs`)."""
        found = self._readers.get(path)
        if found is None:
            found = frozenset()
            for job in self.workflows[path].jobs:
                texts = [text for _, text in job.outputs]
                texts.extend(t for step in job.steps for t in (step.condition or "", step.run or "",
                                                               *(v for _, v in step.env),
                                                               *(v for _, v in step.params)))
                found |= frozenset(_STEP_READ.findall("\n".join(texts)))
            self._readers[path] = found
        return found

    def _paths_filter(self, frame: _Frame, step: Step) -> Value:
        from bot.analysis.ci.filters import FilterProblem, evaluate_filters, read_filters  # YAML

        text = step.param("filters")
        if text is None:
            return UNKNOWN
        read = read_filters(text, step.param("predicate-quantifier"), self.read)
        if isinstance(read, FilterProblem):
            where = read.path or frame.path
            self._note(where, read.line or step.line, f"paths filter of step `{step.name}`: {read.message}")
            return UNKNOWN
        if self.event.changed is None:
            return {name: Unknown(why="decided by the changed paths") for name in read.filters}
        decided = evaluate_filters(read, self.event.changed)
        out: dict[str, Value] = {name: "true" if hit else "false" for name, hit in decided.items()}
        out["changes"] = str([n for n, hit in decided.items() if hit]).replace("'", '"')
        return out

    def _outputs(self, frame: _Frame, job: Job, needs: dict[str, Value], steps: dict[str, Value],
                 status: Mapping[str, bool | None]) -> dict[str, Value]:
        context = self._context(frame, needs, steps, status)
        return {name: _value_of(text, context) for name, text in job.outputs}


class _Open(dict[str, Value]):
    """An object of which only some keys are known, the others unknown, not null: the
    `github` context, and the outputs of a step whose script may write others."""

    def __missing__(self, key: str) -> Value:
        return UNKNOWN

    def __contains__(self, key: object) -> bool:
        return True

    def get(self, key: str, default: Value = None) -> Value:  # type: ignore[override]
        return self[key]


def _defaults(inputs: Collection[tuple[str, str | None, str | None]]) -> dict[str, Value]:
    """Declared inputs with their defaults, typed as declared (an unset one is null)."""
    return {name: None if default is None else _typed(default, kind) for name, default, kind in inputs}


def _typed(value: Value, kind: str | None) -> Value:
    """An input as its declared type gives it to the workflow (`true` to a boolean)."""
    if not isinstance(value, str):
        return value
    if kind == "boolean" and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if kind == "number":
        try:
            return float(value)
        except ValueError:
            return Unknown(why=f"`{value}` is not a number")
    return value


def _value_of(text: str, context: Context) -> Value:
    """A `with:` or `outputs:` value: a lone expression keeps its type, else text."""
    stripped = text.strip()
    if stripped.startswith("${{") and stripped.endswith("}}") and stripped.count("${{") == 1:
        try:
            return evaluate(parse(stripped), context)
        except ExpressionError as exc:
            return Unknown(why=str(exc))
    return interpolate(text, context)


def _string(value: str | Unknown) -> str | None:
    return None if isinstance(value, Unknown) else value


def _gate_labels(script: str) -> frozenset[str]:
    """The labels a script fails without: it tests for them in an expression and exits."""
    if "labels" not in script or _EXIT.search(script) is None:
        return frozenset()
    return frozenset(LABEL_TEST.findall(script))


def _all_success(results: list[Result]) -> bool | None:
    out: bool | None = True
    for r in results:
        out = and3(out, None if isinstance(r, Unknown) else r == "success")
    return out


def _any_failure(results: list[Result]) -> bool | None:
    out: bool | None = False
    for r in results:
        out = or3(out, None if isinstance(r, Unknown) else r == "failure")
    return out


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 80 else flat[:79] + "…"


def _ordered(jobs: tuple[Job, ...]) -> Iterator[Job]:
    """Jobs in an order that runs each after what it needs (a cycle's jobs last, as found)."""
    by_id = {j.id: j for j in jobs}
    placed: set[str] = set()
    pending = list(jobs)
    while pending:
        ready = [j for j in pending if all(n in placed or n not in by_id for n in j.needs)]
        if not ready:  # a cycle: GitHub rejects the workflow; keep going, unknown
            ready = pending[:1]
        for job in ready:
            placed.add(job.id)
            pending.remove(job)
            yield job
