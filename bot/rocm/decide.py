"""What to do about ROCm runs, decided from plain facts: who asks, what is selected, what was
spent, who approved. Nothing here reads or writes anything; `runs.py` gathers the facts and
carries the decisions out.

A decision is one of three values: :class:`DispatchTests`, :class:`AwaitApproval`, or a
:class:`Refusal` (an exception, so the code carrying a decision out can raise it as it is).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import yaml

from bot.formats.escape import code, prose
from bot.github import keys
from bot.rocm.command_table import FORCE, CommandSpec, Rights, spec
from bot.rocm.commands import slip_of_word
from bot.rocm.payloads import capped, minutes, moved, who_may
from bot.store.dispatch import UNACCEPTED, Dispatch, ParkedTest, SelectedTest, Selection, tests_hash
from config.repo import DispatchConfig, RepoConfig

LEVELS = {"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}
REQUIRED_INPUTS = ("tests", "suite", "pr_number", "head_sha", "dispatch_id")
# sent (as "true") only with parked tests (`/run-amd disabled`): run them although disabled
DISABLED_INPUT = "include_disabled"


# facts --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Actor:
    """Someone asking for runs, and their rights on the repository."""

    login: str
    permission: str
    trusted: bool  # may run
    maintainer: bool  # may approve and force

    def why(self) -> str:
        return f"@{self.login} has `{self.permission}` permission"


@dataclass(frozen=True)
class Head:
    """What a request for a PR head is weighed against."""

    sha: str
    author: str
    author_trusted: bool
    spent_on_head: float  # GPU-minutes already dispatched for this head
    spent_today: float  # by the repository in the last 24 hours
    approved_by: str | None  # who approved these tests on this head, if anyone


# decisions ------------------------------------------------------------------------------------


class Refusal(Exception):  # noqa: N818 - a refusal is an answer, not an error
    """Nothing is dispatched; ``reason`` is the one-paragraph reply."""

    def __init__(self, reason: str, *, rule: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.rule = rule


@dataclass(frozen=True)
class DispatchTests:
    tests: tuple[SelectedTest, ...]
    approve_as: str | None = None  # a maintainer's request approves the head as it goes


@dataclass(frozen=True)
class AwaitApproval:
    """Wait for a maintainer; with ``refusal``, also tell the requester why nothing ran."""

    tests: tuple[SelectedTest, ...]
    reason: str
    refusal: Refusal | None = None


Decision = DispatchTests | AwaitApproval | Refusal


# who may ------------------------------------------------------------------------------------------


def rank(permission: str) -> int:
    return LEVELS.get(permission, 0)


def allowed(who: Actor, rights: Rights) -> bool:
    """Whether ``who`` has the rights a command or an option asks for (see the command table)."""
    return rights == "anyone" or (who.maintainer if rights == "maintain" else who.trusted)


def may_give(who: Actor, rights: Rights, denied: str, config: DispatchConfig) -> Refusal | None:
    """Why ``who`` may not give a command (or use an option) that asks for ``rights``, or None;
    ``denied`` names what is refused (`ROCm runs may be started by`)."""
    if allowed(who, rights):
        return None
    return Refusal(f"{who.why()}; {denied} {who_may(config, approve=rights == 'maintain')}.")


def may_command(who: Actor, entry: CommandSpec, flags: Iterable[str], config: DispatchConfig
                ) -> Refusal | None:
    """Why ``who`` may not give this command with these options, or None: the rights the
    command table declares for the command first, then for each option."""
    refused = may_give(who, entry.rights, entry.denied, config)
    for option in entry.options:
        if refused is None and option.flag in flags:
            refused = may_give(who, option.rights, option.denied, config)
    return refused


def may_request(who: Actor, *, force: bool, config: DispatchConfig) -> Refusal | None:
    """Why the requester may not ask for runs (with ``force``: despite error findings), or None;
    asked before anything else is read for the request."""
    return may_command(who, spec("run"), [FORCE.flag] if force else [], config)


def may_approve(who: Actor, config: DispatchConfig) -> Refusal | None:
    return may_command(who, spec("approve"), [], config)


def screen(who: Actor, tests: Sequence[SelectedTest], *, force: bool, failing: Iterable[str],
           config: DispatchConfig) -> Refusal | None:
    """Why the requester may not have these tests run at all, or None."""
    refused = may_request(who, force=force, config=config)
    if refused is not None:
        return refused
    blocked = sorted({t.path for t in tests} & set(failing))
    if blocked and not force:
        return Refusal(
            f"{', '.join(capped([code(p) for p in blocked]))} ha{'ve' if len(blocked) > 1 else 's'} error "
            "findings (see the summary): the runs would fail after taking the GPUs. Fix them, or a "
            "maintainer can `/run-amd --force`."
        )
    if not tests:
        return Refusal(
            "there is nothing to run: no enabled ROCm test is selected for this head. "
            "`/run-amd all` runs every enabled ROCm test; `/run-amd <path>` runs one."
        )
    return None


def may_cancel(who: Actor, config: DispatchConfig) -> Refusal | None:
    return may_command(who, spec("cancel"), [], config)


def budget_problem(cost: float, head: Head, config: DispatchConfig) -> str | None:
    """Why ``cost`` more GPU-minutes would pass a budget, or None."""
    if head.spent_on_head + cost > config.budget_gpu_minutes_per_head:
        return (
            f"this head would use {minutes(head.spent_on_head + cost)}, over the "
            f"{minutes(config.budget_gpu_minutes_per_head)} budget per PR head"
        )
    if head.spent_today + cost > config.budget_gpu_minutes_per_day:
        return (
            f"the repository has used {minutes(head.spent_today)} in the last 24 hours; this would pass "
            f"the {minutes(config.budget_gpu_minutes_per_day)} daily budget"
        )
    return None


def request(who: Actor, tests: Sequence[SelectedTest], head: Head, config: DispatchConfig, *,
            seen: str | None = None) -> Decision:
    """A screened request (see :func:`screen`): dispatch, or wait for a maintainer when the PR's
    author is not trusted or a budget would be passed. ``seen``: the head the requester saw; a
    maintainer's request approves only that head."""
    chosen = tuple(tests)
    reasons = []
    if not head.author_trusted:
        reasons.append(f"the PR author @{head.author} is not trusted to run code on the ROCm runners")
    budget = budget_problem(sum(t.gpu_minutes for t in chosen), head, config)
    if budget:
        reasons.append(budget)
    if not reasons or head.approved_by is not None:
        return DispatchTests(chosen)
    reason = "; ".join(reasons)
    if who.maintainer and seen is not None and seen != head.sha:
        return AwaitApproval(chosen, reason, Refusal(moved(seen, head.sha)))
    if who.maintainer:
        return DispatchTests(chosen, approve_as=who.login)
    return AwaitApproval(chosen, reason)


def approval(who: Actor, seen: str | None, head: str, pending: Selection | None,
             config: DispatchConfig) -> DispatchTests | Refusal:
    """A maintainer releases the tests waiting on the current head; ``seen`` is the head the
    maintainer saw (an approval of another head releases nothing)."""
    refused = may_approve(who, config)
    if refused is not None:
        return refused
    if seen is not None and seen != head:
        return Refusal(moved(seen, head))
    if pending is None or pending.state != "pending" or not pending.tests:
        return Refusal("there is nothing waiting for approval on this head.")
    return DispatchTests(tuple(pending.tests), approve_as=who.login)


def automatic(config: DispatchConfig, tests: Sequence[SelectedTest], failing: Iterable[str]) -> bool:
    """Whether a head's selection is dispatched without a command: not when it is empty, or a
    test it would run has a new error (the run would fail on the runner)."""
    return config.auto != "off" and bool(tests) and not ({t.path for t in tests} & set(failing))


def untrusted_author(author: str) -> str:
    return f"@{author} may not start ROCm runs"


# what to run ---------------------------------------------------------------------------------------


class HeadTest(Protocol):
    """A marker of the head as the analysis reports it."""

    @property
    def path(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def suite(self) -> str | None: ...
    @property
    def disabled(self) -> str | None: ...
    @property
    def est_time(self) -> float | None: ...
    @property
    def gpus(self) -> int | None: ...
    @property
    def cadence(self) -> str | None: ...


def rocm_tests(found: Iterable[HeadTest], config: RepoConfig) -> list[tuple[SelectedTest, bool]]:
    """Every enabled ROCm test, and whether its suite is a per-PR one that PR runs may use."""
    out = []
    for t in found:
        if t.backend != "rocm" or t.disabled is not None or t.suite is None:
            continue
        suite = config.suites.get(t.suite)
        per_pr = t.cadence == "per-pr" and (suite is None or suite.per_pr)
        out.append((SelectedTest(t.path, t.suite, t.est_time, t.gpus, "direct"), per_pr))
    return out


def clean_path(path: str) -> str:
    """A test path as a command may write it: quoted, or starting with `./`."""
    return path.strip("`'\"").lstrip("./")


def named_tests(paths: Iterable[str], known: dict[str, SelectedTest], files: set[str]
                ) -> tuple[list[SelectedTest], list[str]]:
    """The named tests if each is an enabled ROCm marker at the head (``known``), whatever its
    suite's cadence; else why not, per path (``files``: the named paths that are files)."""
    tests, problems = [], []
    for path in paths:
        clean = clean_path(path)
        if clean in known:
            tests.append(known[clean])
        elif clean not in files:
            slip = slip_of_word(clean)
            hint = f" (did you mean `{slip}`?)" if slip else ""
            problems.append(f"{code(clean)} is not a file at the head{hint}")
        else:
            problems.append(f"{code(clean)} has no enabled ROCm marker")
    return tests, problems


def named_refusal(problems: list[str]) -> Refusal:
    return Refusal("nothing was dispatched: " + "; ".join(capped(problems)) + ".")


class HeadParked(Protocol):
    """A disabled GPU marker of the head as the analysis reports it (`parked[]`)."""

    @property
    def path(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def suite(self) -> str | None: ...
    @property
    def candidate(self) -> bool: ...
    @property
    def why(self) -> str: ...
    @property
    def problems(self) -> Sequence[HasRule]: ...


class HasRule(Protocol):
    @property
    def rule(self) -> str: ...


def parked_tests(found: Iterable[HeadTest], parked: Iterable[HeadParked]) -> list[ParkedTest]:
    """The head's parked ROCm tests (those with a suite to run them on), with the time and
    GPUs of their markers (``found``: the analysis' tests, disabled ones included)."""
    markers = {(t.path, t.suite): t for t in found if t.backend == "rocm" and t.disabled is not None}
    out = []
    for p in parked:
        if p.backend != "rocm" or p.suite is None:
            continue
        marker = markers.get((p.path, p.suite))
        test = SelectedTest(p.path, p.suite, marker.est_time if marker else None,
                            marker.gpus if marker else None, "direct", parked=True)
        out.append(ParkedTest(test, p.candidate, p.why, tuple(dict.fromkeys(q.rule for q in p.problems))))
    return out


def _why(p: ParkedTest) -> str:
    return f"{code(p.test.path)}: {prose(p.why.rstrip('.'))}"


def no_candidate(parked: Sequence[ParkedTest]) -> Refusal:
    """`/run-amd disabled` with no parked test that could come back: one line, with why for each."""
    if not parked:
        return Refusal("this PR has no parked ROCm test to run. `/run-amd disabled <path>` runs a named "
                       "parked test of the head.")
    whys = "; ".join(capped([_why(p) for p in parked]))
    return Refusal(f"no parked ROCm test of this PR can come back: {whys}. "
                   "`/run-amd disabled <path>` runs a named one.")


def nothing_failed(head: str, running: int, ran: bool) -> Refusal:
    """`/run-amd retry` with no test whose last run on ``head`` failed."""
    if running:
        tests = "test of head `{}` is" if running == 1 else "tests of head `{}` are"
        return Refusal(f"no ROCm test has failed in its last run: {running} ROCm "
                       f"{tests.format(head[:12])} still running. `/run-amd retry` after they end "
                       "runs again those that failed.")
    if ran:
        return Refusal(f"no ROCm test failed on head `{head[:12]}`: nothing to run again.")
    return Refusal(f"no ROCm test has run on head `{head[:12]}`: nothing to run again. "
                   "`/run-amd` runs the selection.")


def named_parked(paths: Iterable[str], parked: Sequence[ParkedTest], enabled: set[str], files: set[str], *,
                 force: bool) -> tuple[list[SelectedTest], list[str]]:
    """The named tests if each is a parked ROCm test of the head (candidate or not), on each
    suite it is parked in; else why not, per path (``enabled``: the paths of enabled ROCm
    tests; ``files``: the other named paths that are files). A test whose launch would fail
    is refused without ``force``."""
    by_path: dict[str, list[ParkedTest]] = defaultdict(list)
    for p in parked:
        by_path[p.test.path].append(p)
    tests: list[SelectedTest] = []
    problems: list[str] = []
    for path in paths:
        clean = clean_path(path)
        found = by_path.get(clean, [])
        failing = sorted({rule for p in found for rule in p.problems})
        if found and failing and not force:
            problems.append(f"the launch of {code(clean)} would fail ({', '.join(failing)}): a maintainer "
                            "can add `--force`")
        elif found:
            tests.extend(p.test for p in found)
        elif clean in enabled:
            problems.append(f"{code(clean)} is not parked: its ROCm marker is enabled "
                            "(`/run-amd <path>` runs it)")
        elif clean not in files:
            problems.append(f"{code(clean)} is not a file at the head")
        else:
            problems.append(f"{code(clean)} has no disabled ROCm marker")
    return tests, problems


# how to dispatch ------------------------------------------------------------------------------------


def workflow_problem(text: bytes | None, path: str, *, disabled: bool = False) -> str | None:
    """CFG002: why the dispatch workflow cannot take the bot's dispatch, or None; with
    ``disabled`` (a dispatch of parked tests), it must also declare `include_disabled`."""
    if text is None:
        return f"the dispatch workflow `{path}` does not exist on the default branch"
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        return f"`{path}` is not valid YAML{where}"
    if not isinstance(data, dict):
        return f"`{path}` is not a workflow"
    triggers = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on:` key as True
    if isinstance(triggers, str):
        triggers = {triggers: None}
    elif isinstance(triggers, list):
        triggers = dict.fromkeys(triggers)
    if not isinstance(triggers, dict) or "workflow_dispatch" not in triggers:
        return f"`{path}` has no `workflow_dispatch` trigger"
    declared = (triggers.get("workflow_dispatch") or {}).get("inputs") or {}
    wanted = (*REQUIRED_INPUTS, DISABLED_INPUT) if disabled else REQUIRED_INPUTS
    missing = [name for name in wanted if name not in declared]
    if missing:
        return (
            f"`{path}` does not declare the input{'s' if len(missing) > 1 else ''} "
            + ", ".join(f"`{m}`" for m in missing)
            + " that rocmbot sends"
        )
    return None


def workflow_refusal(problem: str) -> Refusal:
    return Refusal(f"CFG002: {problem}, so GitHub would refuse the dispatch. Nothing was dispatched.",
                   rule="CFG002")


def head_moved(current: str) -> Refusal:
    return Refusal(
        f"the PR's head moved to `{current[:12]}` while this was being handled; "
        "nothing was dispatched. Comment again to run the new head."
    )


def _passable(word: str) -> bool:
    """A test path or suite name that survives the workflow's `tests.split()` as itself."""
    return bool(word) and not word.startswith("-") and not any(c.isspace() for c in word)


def unsendable(tests: Sequence[SelectedTest]) -> Refusal | None:
    """Why these tests cannot be sent as the workflow's inputs, or None."""
    if not tests:
        return Refusal("there is nothing to run: no enabled ROCm test is selected for this head.")
    unsafe = sorted({t.path for t in tests if not _passable(t.path)} | {
        t.suite for t in tests if not _passable(t.suite)})
    if unsafe:
        return Refusal(
            f"{', '.join(capped([code(u) for u in unsafe]))}: the workflow's `tests` and `suite` inputs are "
            "space-separated words, so a test path or suite name with white space (or one that "
            "starts with `-`, which the runner would read as an option) would reach it as "
            "something else. Rename it; nothing was dispatched."
        )
    return None


@dataclass(frozen=True)
class Send:
    """One suite's tests to dispatch: a new dispatch, or one whose outcome is not known."""

    suite: str
    paths: list[str]
    gpu_minutes: float
    dispatch_id: str
    unsure: Dispatch | None = None  # the earlier dispatch of the same tests to complete
    include_disabled: bool = False  # parked tests among them: the workflow must run them


def plan(repo: str, number: int | None, head: str, tests: Sequence[SelectedTest], origin: str,
         earlier: Sequence[Dispatch]) -> list[Send | Dispatch]:
    """Per suite, what to send, or the dispatch of the same tests already running. A dispatch
    of the same tests whose outcome is not known (GitHub answered 5xx, the worker died) is
    completed under its own id, not sent again under a new one."""
    by_suite: dict[str, list[SelectedTest]] = defaultdict(list)
    for t in tests:
        by_suite[t.suite].append(t)
    steps: list[Send | Dispatch] = []
    for suite, group in sorted(by_suite.items()):
        paths = sorted({t.path for t in group})
        same = [d for d in earlier if d.suite == suite and sorted(d.tests) == paths]
        active = [d for d in same if d.active]
        if active:
            steps.append(active[0])
            continue
        unsure = [d for d in same if d.status in UNACCEPTED]
        steps.append(Send(suite, paths, sum(t.gpu_minutes for t in group),
                          keys.dispatch_id(repo, number, head, suite, paths, origin),
                          unsure[0] if unsure else None, any(t.parked for t in group)))
    return steps


def digest(tests: Sequence[SelectedTest]) -> str:
    """What an approval is bound to, besides the PR and its head."""
    return tests_hash(list(tests))


# which dispatch a run is --------------------------------------------------------------------------

# The targeted workflow's run name carries the dispatch id: `rocmbot <id>`, or in parentheses,
# as the workflow template has always written it (`ROCm PR #7 stage-c-4-gpu-mi350 (<id>)`).
_RUN_NAME = re.compile(r"\brocmbot ([0-9a-f]{16})\b|\(([0-9a-f]{16})\)")


def run_dispatch_id(*names: str) -> str | None:
    """The dispatch id a run's name (or title) carries, or None."""
    for name in names:
        found = _RUN_NAME.search(name)
        if found:
            return found.group(1) or found.group(2)
    return None
