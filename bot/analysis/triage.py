"""A failed ROCm job's log, explained: the decisive lines, and the class of the failure.

The log is read from its end (the last few MB: the error is there), GitHub's timestamps and
terminal colours taken off. The decisive lines are the last Python exception with the frame of
the repository that raised it, pytest's short summary, a process killed by a signal and the
step that failed. The class, in this order:

1. ``predicted``: the error is one a finding of rocmbot foretold for that test at that head:
   a PAR rule's upstream message with the same numbers (`world_size (4) is not divisible by
   expert_tensor_model_pipeline_parallel size (8)`), a pattern tied to a rule that has a
   finding (`cannot be scheduled right now` for PAR003), or a missing module a PIN finding
   names. The finding's fix goes with it.
2. ``infrastructure``: a pattern of `config/failures.yml` says the runner or the machine failed
   (device out of memory, a collective timeout, a lost runner, a full disk, a download, a
   container): a retry may pass.
3. ``known``: the same error (its type and message, numbers aside) as a failure seen before:
   the base branch's last run of the test, or a run of this head that passed when re-run.
4. ``new``: anything else; the excerpt is what the author needs.

Nothing of the log is executed or trusted: it is text, and its lines are quoted inert by the
formats that show them.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from bot.analysis.findings import Finding
from config.repo import FailureRule

Class = Literal["predicted", "infrastructure", "known", "new"]

MAX_LOG_BYTES = 4 * 1024 * 1024  # the end of a log holds its error
MAX_LINE = 300  # an excerpt line longer than this is cut
MAX_EXCERPT = 8
DISABLED_PREFIX = "This test is disabled, and would fail this way when re-enabled: "

_TIMESTAMP = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_TRACEBACK = "Traceback (most recent call last):"
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)(?:, in (.+))?$')
_EXCEPTION = re.compile(r"^(?:\[rank\d+\]:\s*)?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|"
                        r"Failure|Warning|Timeout)|AssertionError|KeyboardInterrupt)(?::\s?(.*))?$")
_PYTEST_SUMMARY = re.compile(r"^=+ short test summary info =+$")
_PYTEST_LINE = re.compile(r"^(?:FAILED|ERROR) \S")
_SIGNAL = re.compile(r"(?i)\b(?:Killed|Segmentation fault|core dumped|signal (?:9|11|SIGKILL|SIGSEGV)|"
                     r"died with <Signals\.SIG\w+|"
                     r"exit(?:ed)? (?:with )?(?:code|status) (?:137|139|-9|-11))\b")
_STEP_FAILED = re.compile(r"^##\[error\](.*)$")
_NO_MODULE = re.compile(r"No module named '([\w.]+)'")
_NUMBER = re.compile(r"\d+")
_SITE = ("site-packages/", "dist-packages/", "/lib/python3", "<frozen ", "<string>")


@dataclass(frozen=True, slots=True)
class Decisive:
    """The lines of a log that say why the job failed."""

    exception: str | None = None  # `Type: message`, the last one of the log
    frame: str | None = None  # `path:line in function`, the repository's frame that raised it
    pytest: tuple[str, ...] = ()  # pytest's short summary lines
    signal: str | None = None  # a process killed by a signal
    step: str | None = None  # GitHub's `##[error]` line of the failed step

    def lines(self) -> list[str]:
        out = []
        if self.exception:
            out.append(self.exception)
        if self.frame:
            out.append(f"at {self.frame}")
        out.extend(self.pytest[:3])
        if self.signal:
            out.append(self.signal)
        if self.step:
            out.append(self.step)
        return [_cut(line) for line in out[:MAX_EXCERPT]]

    @property
    def signature(self) -> str | None:
        """The error with its numbers masked: what makes two failures the same."""
        what = self.exception or (self.pytest[0] if self.pytest else None) or self.signal
        return None if what is None else _NUMBER.sub("N", what)


@dataclass(frozen=True, slots=True)
class Triage:
    """Why a failed job failed: its class, what decided it and the lines to read."""

    kind: Class
    excerpt: tuple[str, ...]
    explanation: str
    rule: str | None = None  # `predicted`: the finding's rule
    pattern: str | None = None  # the `config/failures.yml` pattern that matched
    fix: str | None = None  # `predicted`: the finding's fix; `infrastructure`: a retry
    finding: Finding | None = field(default=None, compare=False)
    signature: str | None = None

    def as_json(self) -> dict[str, object]:
        return {"class": self.kind, "rule": self.rule, "pattern": self.pattern,
                "excerpt": list(self.excerpt), "explanation": self.explanation, "fix": self.fix}


class LogUnavailableError(Exception):
    """The log cannot be read as text (empty, binary, gone): say so, in one line."""


def read_log(data: bytes, limit: int = MAX_LOG_BYTES) -> str:
    """A log's last ``limit`` bytes as clean lines (LogUnavailableError when there is no text)."""
    if not data.strip():
        raise LogUnavailableError("the log is empty")
    tail = data[-limit:]
    sample = tail[:65536]
    if sample.count(b"\0") > len(sample) // 100 or _binary(sample):
        raise LogUnavailableError("the log is not text")
    text = tail.decode("utf-8", errors="replace")
    if len(data) > limit:
        text = text.split("\n", 1)[-1]  # the first line is cut
    lines = (_ANSI.sub("", _TIMESTAMP.sub("", line)).rstrip("\r") for line in text.split("\n"))
    return "\n".join(lines)


def _binary(sample: bytes) -> bool:
    controls = sum(1 for b in sample if b < 9 or (13 < b < 32 and b != 27))
    return controls > len(sample) // 20


def decisive(text: str) -> Decisive:
    """The decisive lines of a clean log (see :class:`Decisive`)."""
    lines = text.split("\n")
    exception, frame = _last_exception(lines)
    pytest: list[str] = []
    for index in range(len(lines) - 1, -1, -1):
        if _PYTEST_SUMMARY.match(lines[index].strip()):
            for line in lines[index + 1:]:
                if _PYTEST_LINE.match(line.strip()):
                    pytest.append(line.strip())
                elif line.strip().startswith("="):
                    break
            break
    signal = next((line.strip() for line in reversed(lines) if _SIGNAL.search(line)), None)
    step = next((m.group(1).strip() for line in reversed(lines) if (m := _STEP_FAILED.match(line.strip()))),
                None)
    return Decisive(exception, frame, tuple(pytest), signal, step)


def _last_exception(lines: list[str]) -> tuple[str | None, str | None]:
    """The last traceback's exception line and its deepest frame in the repository's code;
    else the last line that reads as an exception."""
    start = next((i for i in range(len(lines) - 1, -1, -1) if _TRACEBACK in lines[i]), None)
    if start is not None:
        frame: str | None = None
        for line in lines[start + 1:]:
            body = _unranked(line.split(_TRACEBACK, 1)[0].strip("\n"))
            found = _FRAME.match(body)
            if found:
                path, number, function = found.groups()
                if not any(s in path for s in _SITE):
                    frame = f"{_short_path(path)}:{number}" + (f" in {function}" if function else "")
                continue
            stripped = body.strip()
            match = _EXCEPTION.match(_unranked(stripped))
            if match:
                return _unranked(stripped), frame
    found_line = next((_unranked(line.strip()) for line in reversed(lines)
                       if _EXCEPTION.match(_unranked(line.strip()))), None)
    return found_line, None


_RANK = re.compile(r"^\[rank\d+\]: ?")


def _unranked(line: str) -> str:
    """A line without torch's `[rank3]: ` prefix (its indentation kept)."""
    return _RANK.sub("", line)


_CHECKOUT = re.compile(r"^.*?/(?:__w|work)/[^/]+/[^/]+/|^/github/workspace/")


def _short_path(path: str) -> str:
    """A frame's path from the repository's root when it is in a runner's checkout
    (`/__w/miles/miles/train.py` -> `train.py`), else as the log gives it."""
    return _CHECKOUT.sub("", path, count=1)


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE else line[:MAX_LINE - 1] + "…"


@dataclass(frozen=True, slots=True)
class Pattern:
    """A pattern of `config/failures.yml` (or of a repository's `failures:`), compiled."""

    id: str
    regex: re.Pattern[str]
    kind: Literal["infrastructure", "predicted"]
    explanation: str
    rule: str | None
    vectors: tuple[str, ...]


def compile_rules(rules: Iterable[FailureRule]) -> list[Pattern]:
    return [Pattern(r.id, re.compile(r.pattern, re.MULTILINE), r.kind, r.explanation, r.rule,
                    tuple(r.vectors)) for r in rules]


@cache
def packaged() -> tuple[Pattern, ...]:
    """The patterns of `config/failures.yml`."""
    from importlib import resources

    import yaml

    text = resources.files("config").joinpath("failures.yml").read_text(encoding="utf-8")
    data = yaml.safe_load(text) or []
    from config.repo import validate_failures

    return tuple(compile_rules(validate_failures(data)))


def patterns(extra: Iterable[FailureRule] = ()) -> list[Pattern]:
    """The packaged patterns with a repository's own (an id of its replaces the packaged one)."""
    own = compile_rules(extra)
    ids = {p.id for p in own}
    return [*own, *(p for p in packaged() if p.id not in ids)]


def classify(text: str, findings: Collection[Finding], *, rules: Iterable[Pattern] | None = None,
             seen: Collection[str] = ()) -> Triage:
    """The class of a failed job's log (see the module's description). ``findings``: those
    rocmbot reported on the job's test at the job's head (its launch's, and the pin findings
    of its image); ``seen``: the signatures of the failures this test had before (the base
    branch's last run, a re-run of this head that passed)."""
    found = decisive(text)
    excerpt = tuple(found.lines()) or tuple(_cut(line) for line in _last_lines(text, 3))
    tail = "\n".join(text.split("\n")[-400:])
    where = "\n".join([*found.lines(), tail])
    flat = " ".join(where.split())
    for f in findings:
        upstream = f.message.removeprefix(DISABLED_PREFIX)
        if f.rule.startswith("PAR") and _NUMBER.search(upstream) and " ".join(upstream.split()) in flat:
            return Triage("predicted", excerpt, f"the failure {f.rule} foretold: {upstream}", rule=f.rule,
                          fix=f.fix, finding=f, signature=found.signature)
    chosen = list(rules) if rules is not None else patterns()
    by_rule = {f.rule: f for f in findings}
    for p in chosen:
        if p.kind == "predicted" and p.rule in by_rule and p.regex.search(where):
            f = by_rule[p.rule]
            return Triage("predicted", excerpt, f"the failure {p.rule} foretold: {p.explanation}",
                          rule=p.rule, pattern=p.id, fix=f.fix, finding=f, signature=found.signature)
    missing = _NO_MODULE.search(found.exception or "") or _NO_MODULE.search(tail)
    if missing:
        module = missing.group(1).split(".")[0]
        for f in findings:
            if f.rule.startswith("PIN") and _names_package(f.message, module):
                return Triage("predicted", excerpt, f"the failure {f.rule} foretold: the image lacks "
                              f"`{module}`, which a pin of its group names", rule=f.rule, fix=f.fix,
                              finding=f, signature=found.signature)
    for p in chosen:
        if p.kind == "infrastructure" and p.regex.search(where):
            return Triage("infrastructure", excerpt, p.explanation, pattern=p.id,
                          fix="`/run-amd retry` runs it again", signature=found.signature)
    if found.signature is not None and found.signature in set(seen):
        return Triage("known", excerpt, "the same error as an earlier failure of this test",
                      signature=found.signature)
    return Triage("new", excerpt, "an error rocmbot has no explanation for: the excerpt is its end",
                  signature=found.signature)


def _names_package(message: str, module: str) -> bool:
    wanted = re.sub(r"[-_.]+", "-", module).lower()
    return any(re.sub(r"[-_.]+", "-", word).lower() == wanted
               for word in re.findall(r"`([A-Za-z0-9._-]+)", message))


def _last_lines(text: str, count: int) -> list[str]:
    return [line for line in text.rstrip().split("\n") if line.strip()][-count:]
