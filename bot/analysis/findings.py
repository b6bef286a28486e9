"""Findings and the rule catalogue: every rule has a stable id, a slug, a severity and docs.

A rule is declared once, with :func:`rule`, in the module that checks it; this module declares
the rules of marker registration (REG) and of the configuration (CFG).
"""

from __future__ import annotations

import inspect
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, TypeVar


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: ``doc`` follows ruff's shape (What it does / Why is this bad? / Example);
    ``module`` is where it is declared."""

    id: str
    slug: str
    severity: Severity
    summary: str
    doc: str
    module: str


RULES: dict[str, Rule] = {}

Baseline = Literal["new", "unchanged"]

_Declared = TypeVar("_Declared", bound=Callable[..., object])


def rule(id: str, slug: str, severity: Severity, summary: str) -> Callable[[_Declared], _Declared]:
    """Declare a rule on what stands for it, whose docstring is the rule's documentation: the
    function that checks it or, for a rule emitted from several places, a class of its own.

    Ids are stable (never renumbered or reused) and each is declared once.
    """

    def declare(target: _Declared) -> _Declared:
        if not (target.__doc__ or "").strip():
            raise ValueError(f"rule {id} has no documentation: {target.__qualname__} has no docstring")
        if id in RULES:
            raise ValueError(f"rule id {id} already names {RULES[id].slug} (in {RULES[id].module})")
        RULES[id] = Rule(id, slug, severity, summary, inspect.cleandoc(target.__doc__ or ""),
                         target.__module__)
        return target

    return declare


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found: ``message`` is the first sentence, ``details`` the rest."""

    rule: str
    severity: Severity
    path: str | None
    line: int | None
    message: str
    fix: str | None = None
    test: str | None = None
    details: tuple[str, ...] = field(default=())
    # `analyze` only: whether the base already had this finding (see `fingerprint`)
    baseline: Baseline | None = None
    # the marker a launch finding is about: its backend and suite (None for any other)
    backend: str | None = None
    suite: str | None = None

    @property
    def slug(self) -> str:
        entry = RULES.get(self.rule)
        return entry.slug if entry else ""

    def sort_key(self) -> tuple[int, str, int, str, str]:
        return (self.severity.rank, self.path or "", self.line or 0, self.rule, self.message)


# A line reference in a message: `docker/Dockerfile.rocm:12`, "line 12", "lines 3-5".
_LINE_REFERENCE = re.compile(r"(?<=[\w.)`])(:\d+)+(?![\d.])|\b(lines?) \d+(?:-\d+)?")


def fingerprint(f: Finding) -> str:
    """What makes a finding the same across revisions: rule, file, test and message, with
    the line numbers the message names left out (a finding that only moved keeps it)."""
    message = _LINE_REFERENCE.sub(lambda m: m.group(2) or "", f.message)
    whole = "\0".join([f.rule, f.path or "", f.test or "", message])
    import hashlib  # here: loading OpenSSL would add 2 ms to every start

    return f"{f.rule}:{hashlib.sha256(whole.encode()).hexdigest()[:32]}"


def fingerprints(findings: Iterable[Finding]) -> list[str]:
    """Each finding's fingerprint, in order; the second finding of one fingerprint (a
    test's CUDA and ROCm launches failing alike) gets `:2`, the third `:3`, so that each
    is one alert and counts once against the base."""
    seen: Counter[str] = Counter()
    out: list[str] = []
    for f in findings:
        key = fingerprint(f)
        seen[key] += 1
        out.append(key if seen[key] == 1 else f"{key}:{seen[key]}")
    return out


def finding(
    rule_id: str,
    path: str | None,
    line: int | None,
    message: str,
    *,
    fix: str | None = None,
    test: str | None = None,
    details: tuple[str, ...] = (),
    severity: Severity | None = None,
) -> Finding:
    """A finding of a catalogued rule, with the rule's severity unless one is given."""
    entry = RULES[rule_id]
    return Finding(
        rule=rule_id,
        severity=severity or entry.severity,
        path=path,
        line=line,
        message=message,
        fix=fix,
        test=test,
        details=details,
    )


@rule("REG001", "suite-not-run", Severity.INFO,
      "No workflow of this repository runs the marker's suite (an external suite).")
class SuiteNotRun:
    """
    ## What it does
    Looks for the suite a marker registers its test in among the workflows of the
    repository (a job's command, `with:` inputs or matrix naming it) and the configuration's
    suite table. A suite no workflow names is **external**: its test is never selected for
    a PR's ROCm runs. A `nightly-` prefix does not exempt it: a nightly suite is one that a
    scheduled workflow names.

    ## Why is this bad?
    A test registered in a suite no job of this repository runs is not run by its CI: it
    looks covered and may not be. When another repository's CI runs the suite, say so in
    the configuration and this goes quiet.

    ## Example
    ```python
    register_rocm_ci(1600, "stage-c-4-gpu-mi305")  # the workflows run stage-c-4-gpu-mi350
    ```
    Use instead: a suite a workflow runs, or declare it run elsewhere:
    ```yaml
    suites:
      stage-c-4-gpu-mi305: {cadence: external}
    ```
    """


@rule("REG002", "marker-not-literal", Severity.ERROR,
      "A marker argument is not a literal, or the marker's definition would reject the call.")
class MarkerNotLiteral:
    """
    ## What it does
    Checks that every argument of a CI registration marker is a literal, and that the call
    fits the repository's own definition of the marker function (the `def` in the module the
    test imports it from): no keyword it lacks, no more positional arguments than it takes,
    every parameter without a default given. When no definition is found, the built-in
    signature `(est_time, suite, nightly, disabled, *, labels)` is used.

    ## Why is this bad?
    The repository's own collector reads markers from the syntax tree without running the
    file; it rejects anything else, so the test silently leaves CI.

    ## Example
    ```python
    register_rocm_ci(EST_TIME, "stage-c-4-gpu-mi350")
    ```
    Use instead:
    ```python
    register_rocm_ci(1600, "stage-c-4-gpu-mi350")
    ```
    """


@rule("REG003", "gpu-count-unknown", Severity.WARNING,
      "The suite's GPU count cannot be read from its name or the configuration.")
class GpuCountUnknown:
    """
    ## What it does
    Reads the runner's GPU count from the configuration's suite table, the suite name
    (`stage-c-4-gpu-mi350`: 4), or else the `runs-on:` label of the jobs that run the suite
    (`linux-mi325-gpu-8`, `linux-mi300-1gpu-sglang`; the fewest when they differ, not known
    when one job's label names none, as `${{ matrix.runner }}`).

    ## Why is this bad?
    Without it, no launch of the suite's tests can be checked against the runner's capacity.
    One finding per suite, at its first test, lists the suite's tests.

    ## Example
    ```python
    register_rocm_ci(1600, "stage-c-big")
    ```
    Use instead: name the GPU count (`stage-c-8-gpu-mi350`), or add the suite to
    `.github/rocmbot.yml` under `suites:` with `gpus: 8`.
    """


@rule("REG004", "unparsable-file", Severity.WARNING,
      "A file the analysis needs does not parse or is too large.")
class UnparsableFile:
    """
    ## What it does
    Reports a test, harness, script, Dockerfile or workflow that the analysis needs but
    cannot read: a syntax error (with its line and the parser's message), binary content, or
    a file over the size limit (1 MiB by default). The rest of the analysis goes on.

    ## Why is this bad?
    What cannot be read cannot be checked; a syntax error in a test also breaks its
    collection in CI.

    ## Example
    ```python
    register_rocm_ci(1600, "stage-c-4-gpu-mi350"
    ```
    Use instead: close the call.
    """


@rule("REG005", "ci-undecided", Severity.INFO,
      "A condition of the repository's CI could not be evaluated: the job's decision is unknown.")
class CiUndecided:
    """
    ## What it does
    Reports a workflow expression that does not parse (or names an unknown function), a
    `dorny/paths-filter` filter set that is missing or malformed, a job that needs a job the
    workflow does not have, and a suite registry (`test/run_suite.py`) that cannot be read,
    with the file and line.

    ## Why is this bad?
    What the repository's own CI runs for a pull request is decided from these conditions; one
    that cannot be evaluated leaves the decision unknown, so the tests it gates are selected
    conservatively and `dispatch.mode: complement` dispatches as `targeted`.

    ## Example
    ```yaml
    if: contains(github.event.pull_request.labels.*.name, 'run-ci'
    ```
    Use instead: close the call (GitHub rejects the workflow as well).
    """


@rule("CFG001", "invalid-config", Severity.ERROR,
      "`.github/rocmbot.yml` fails validation; the defaults are used for that key.")
class InvalidConfig:
    """
    ## What it does
    Validates the repository configuration (unknown keys are errors) and names the key that
    fails; that key falls back to its default, the others are kept.

    ## Why is this bad?
    A typo in the policy silently changes what is checked and what is dispatched.

    ## Example
    ```yaml
    suite:            # unknown key: did you mean `suites`?
      stage-c-big: {gpus: 8}
    ```
    """


@rule("CFG002", "dispatch-contract", Severity.ERROR,
      "The dispatch workflow lacks the `workflow_dispatch` trigger or an input the bot sends.")
class DispatchContract:
    """
    ## What it does
    Checks the configured dispatch workflow on the default branch before dispatching.

    ## Why is this bad?
    GitHub answers such a dispatch with 422 and no run starts.

    ## Example
    ```yaml
    on:
      workflow_dispatch:
        inputs: {tests: {type: string}}   # missing suite, pr_number, head_sha, dispatch_id
    ```
    """
