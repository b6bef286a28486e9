"""`rocmbot ci run`: run test files one by one with a timeout, as a dispatched ROCm job does.

A test whose ROCm marker is disabled (`register_rocm_ci(..., disabled="reason")`) is not run,
as the repositories' own runners skip it, unless the run is told to include disabled tests:
a dispatch of `/run-amd disabled` names its parked tests and says so (`--include-disabled`)."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.formats.escape import code, html_prose

TAIL_LINES = 200
# The marker functions that register a test for ROCm runners (rocmbot's default `markers`);
# sglang's `register_amd_ci(est_time, suite, nightly, disabled)` may pass both by position.
ROCM_MARKERS = ("register_rocm_ci", "register_amd_ci")
_POSITION = {"suite": 1, "disabled": 3}


@dataclass(frozen=True)
class Outcome:
    path: str
    status: str  # passed | failed | timeout | missing | disabled (not run)
    seconds: float
    output: str

    @property
    def ok(self) -> bool:
        return self.status in ("passed", "disabled")


def _called(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _reason(node: ast.expr | None) -> str | None:
    """A marker's `disabled` argument as a reason: None when absent or None (enabled); an
    argument that is not a literal reads as disabled, so it is run only when asked for."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return None
    if isinstance(node, ast.Constant):
        return str(node.value)
    return "(its reason is not a literal)"


def disabled_reason(path: str, suite: str | None = None) -> str | None:
    """Why a test file's ROCm marker says it is disabled, or None when it is enabled or has no
    ROCm marker. The file is parsed, never imported. With several ROCm markers, those that
    register it in ``suite`` decide when there are any; the test is disabled when all of those
    are. (Read here with the standard library alone: the job image holds nothing else.)"""
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None  # the run says what is wrong with it
    markers: list[tuple[object, str | None]] = []
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            continue
        call = stmt.value
        if _called(call) not in ROCM_MARKERS:
            continue
        given: dict[str, ast.expr] = {k.arg: k.value for k in call.keywords if k.arg is not None}
        for name, index in _POSITION.items():
            if name not in given and len(call.args) > index:
                given[name] = call.args[index]
        where = given.get("suite")
        named = where.value if isinstance(where, ast.Constant) else None
        markers.append((named, _reason(given.get("disabled"))))
    chosen = [reason for where, reason in markers if where == suite] or [reason for _, reason in markers]
    if chosen and all(reason is not None for reason in chosen):
        return chosen[0]
    return None


def run_one(path: str, runner: Sequence[str], timeout: float, *, include_disabled: bool = False,
            suite: str | None = None) -> Outcome:
    if not Path(path).is_file():
        return Outcome(path, "missing", 0.0, f"{path}: no such file at this commit")
    reason = disabled_reason(path, suite)
    if reason is not None and not include_disabled:
        return Outcome(path, "disabled", 0.0,
                       f"{path}: not run: its ROCm marker is disabled ({reason}); "
                       "`--include-disabled` (the workflow's `include_disabled` input) runs it")
    start = time.monotonic()
    proc = subprocess.Popen([*runner, path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
        status = "passed" if proc.returncode == 0 else "failed"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the test and whatever it started
        output, _ = proc.communicate()
        status = "timeout"
        output += f"\n[rocmbot] timed out after {timeout:g} s"
    if reason is not None:
        output = f"[rocmbot] run although its ROCm marker is disabled ({reason})\n" + output
    tail = "\n".join(output.splitlines()[-TAIL_LINES:])
    return Outcome(path, status, time.monotonic() - start, tail)


def junit(outcomes: Sequence[Outcome], suite: str) -> bytes:
    root = ET.Element("testsuite", name=suite, tests=str(len(outcomes)),
                      failures=str(sum(not o.ok for o in outcomes)),
                      skipped=str(sum(o.status == "disabled" for o in outcomes)),
                      time=f"{sum(o.seconds for o in outcomes):.3f}")
    for o in outcomes:
        case = ET.SubElement(root, "testcase", classname=suite, name=o.path, time=f"{o.seconds:.3f}")
        if o.status == "disabled":
            ET.SubElement(case, "skipped", message=o.output)
        elif not o.ok:
            failure = ET.SubElement(case, "failure", message=o.status, type=o.status)
            failure.text = o.output
        else:
            out = ET.SubElement(case, "system-out")
            out.text = o.output
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data


def _cell(path: str) -> str:
    """A path in a table cell: a code span, its pipes escaped (GFM splits cells on them)."""
    return code(path).replace("|", "\\|")


def summary(outcomes: Sequence[Outcome]) -> str:
    icon = {"passed": "✅", "failed": "❌", "timeout": "⏱️", "missing": "❓", "disabled": "⏸️"}
    lines = ["### ROCm tests", "", "| Test | Result | Time |", "| --- | --- | --- |"]
    lines.extend(f"| {_cell(o.path)} | {icon[o.status]} {o.status} | {o.seconds:.0f} s |" for o in outcomes)
    failed = [o for o in outcomes if not o.ok]
    for o in failed:
        lines.extend(["", f"<details><summary>{html_prose(o.path)}: last lines</summary>", "", "```",
                      "\n".join(o.output.splitlines()[-40:]).replace("```", "'''"), "```", "</details>"])
    return "\n".join(lines) + "\n"


def run(tests: Sequence[str], *, timeout: float, junit_path: str | None, runner: Sequence[str] | None = None,
        suite: str = "rocm", include_disabled: bool = False) -> int:
    """Run each test; exit status 0 when none failed, timed out or was missing (a disabled
    test left out is none of those). ``include_disabled``: run a named test even when its ROCm
    marker is disabled."""
    runner = list(runner or [sys.executable])
    outcomes = []
    for path in tests:
        sys.stderr.write(f"::group::{path}\n")
        outcome = run_one(path, runner, timeout, include_disabled=include_disabled, suite=suite)
        sys.stderr.write(outcome.output + "\n::endgroup::\n")
        sys.stderr.write(f"{path}: {outcome.status} in {outcome.seconds:.0f} s\n")
        outcomes.append(outcome)
    if junit_path:
        Path(junit_path).write_bytes(junit(outcomes, suite))
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as handle:
            handle.write(summary(outcomes))
    return 0 if outcomes and all(o.ok for o in outcomes) else 1
