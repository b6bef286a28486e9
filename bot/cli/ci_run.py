"""`rocmbot ci run`: run test files one by one with a timeout, as a dispatched ROCm job does."""

from __future__ import annotations

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


@dataclass(frozen=True)
class Outcome:
    path: str
    status: str  # passed | failed | timeout | missing
    seconds: float
    output: str

    @property
    def ok(self) -> bool:
        return self.status == "passed"


def run_one(path: str, runner: Sequence[str], timeout: float) -> Outcome:
    if not Path(path).is_file():
        return Outcome(path, "missing", 0.0, f"{path}: no such file at this commit")
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
    tail = "\n".join(output.splitlines()[-TAIL_LINES:])
    return Outcome(path, status, time.monotonic() - start, tail)


def junit(outcomes: Sequence[Outcome], suite: str) -> bytes:
    root = ET.Element("testsuite", name=suite, tests=str(len(outcomes)),
                      failures=str(sum(not o.ok for o in outcomes)),
                      time=f"{sum(o.seconds for o in outcomes):.3f}")
    for o in outcomes:
        case = ET.SubElement(root, "testcase", classname=suite, name=o.path, time=f"{o.seconds:.3f}")
        if not o.ok:
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
    icon = {"passed": "✅", "failed": "❌", "timeout": "⏱️", "missing": "❓"}
    lines = ["### ROCm tests", "", "| Test | Result | Time |", "| --- | --- | --- |"]
    lines.extend(f"| {_cell(o.path)} | {icon[o.status]} {o.status} | {o.seconds:.0f} s |" for o in outcomes)
    failed = [o for o in outcomes if not o.ok]
    for o in failed:
        lines.extend(["", f"<details><summary>{html_prose(o.path)}: last lines</summary>", "", "```",
                      "\n".join(o.output.splitlines()[-40:]).replace("```", "'''"), "```", "</details>"])
    return "\n".join(lines) + "\n"


def run(tests: Sequence[str], *, timeout: float, junit_path: str | None, runner: Sequence[str] | None = None,
        suite: str = "rocm") -> int:
    runner = list(runner or [sys.executable])
    outcomes = []
    for path in tests:
        sys.stderr.write(f"::group::{path}\n")
        outcome = run_one(path, runner, timeout)
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
