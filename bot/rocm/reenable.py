"""The re-enable sweep: the parked ROCm tests of each repository that asks for it
(`reenable.sweep` in `.github/rocmbot.yml`), tried on a schedule, and one issue that tracks them.

Each worker looks on a timer (`ROCMBOT_REENABLE_SECONDS`) at the repositories the service serves:
those its stored deliveries came from, each with the installation of its latest one. A
repository whose period (a UTC day, or an ISO week) is swept, and whose configuration was read
within the hour, is passed over without a request. Otherwise the worker takes the repository's
lease (:mod:`bot.store.reenable`: one worker at a time, across processes), renews it while it
works, reads the configuration at the default branch's head, and, when the sweep is on and its
period is not swept yet:

1. audits that head through the GitHub port, as the handlers read a revision, and takes its
   parked ROCm tests that have a suite; of those that could come back (``candidate``: the launch
   checked and valid), the cheapest first within `reenable.budget_gpu_minutes` (est_time x GPUs
   / 60 each, as every dispatch counts it);
2. records them all, then dispatches the chosen ones as parked tests (`include_disabled`), for
   no PR, under ids made from the period: a sweep taken up again after its worker died finds its
   dispatches, and sends nothing twice;
3. brings the "Parked ROCm tests" issue up to date (`reenable.issue`); the end of each of its runs
   does again (:func:`after_run`, from the runs' tracking).

The period is recorded as swept only once all of that is done; a failure leaves it due, tried
again after a while (sooner when GitHub named a wait).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType

from bot.analysis.engine import audit
from bot.analysis.report import Parked
from bot.analysis.unpark import unpark_patch
from bot.core.deadline import RetryLaterError, deadline_in
from bot.core.events import Event
from bot.formats.markdown import failure_class
from bot.formats.parked import verdict
from bot.formats.parked_issue import MARKER, TITLE, IssueRow, SweepFacts, render
from bot.github import keys
from bot.github.context import HandlerContext
from bot.github.issue import keep_issue, known_issue
from bot.github.policy import policy
from bot.github.tree import GitHubTree
from bot.rocm import decide
from bot.rocm.decide import Refusal
from bot.rocm.dispatch import Dispatcher
from bot.rocm.payloads import failure_of
from bot.store.dispatch import UNKNOWN, WITHDRAWN, Dispatch, DispatchStore, SelectedTest
from bot.store.reenable import KnownRepository, SweepRow, SweepStore, SweptRun, SweptTest
from bot.store.store import Store
from config.repo import LoadedConfig, ReenableConfig
from config.settings import Settings

log = logging.getLogger(__name__)

CONFIG_SECONDS = 3600.0  # a repository's cadence, as last read, is trusted this long
FAILURE_SECONDS = 900.0  # a sweep that failed is tried again after this, unless GitHub said when
REQUESTED_BY = "rocmbot"  # who the sweep's dispatches are recorded as requested by
SHOWN_AGAIN = 3  # the issue written again when what it shows changed while it was written

Clock = Callable[[], float]
Contexts = Callable[[Event], HandlerContext | None]


# when ------------------------------------------------------------------------------------------


def period_of(cadence: str, when: float) -> str:
    """The period a time falls in: its UTC day for a daily sweep (`2026-05-04`), its ISO week
    for a weekly one (`2026-W19`)."""
    day = datetime.fromtimestamp(when, UTC)
    if cadence == "daily":
        return day.strftime("%Y-%m-%d")
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def due(cadence: str | None, swept: str | None, now: float) -> bool:
    """Whether a repository with this cadence, whose last sweep was of period ``swept``, is due."""
    return cadence in ("daily", "weekly") and swept != period_of(cadence, now)


def worth_a_look(row: SweepRow | None, now: float) -> bool:
    """Whether a worker should take a repository's lease now: it was never looked at, or its
    configuration was not read for :data:`CONFIG_SECONDS`, or its period is due; never while
    another worker holds it or a failure asked to wait."""
    if row is None:
        return True
    if row.retry_at > now or (row.owner is not None and row.expires_at >= now):
        return False
    if row.checked_at is None or now - row.checked_at >= CONFIG_SECONDS:
        return True
    return due(row.cadence, row.period, now)


# what -------------------------------------------------------------------------------------------


def choose(tests: Sequence[SelectedTest], budget: float) -> tuple[list[SelectedTest], list[SelectedTest]]:
    """The tests one sweep runs, cheapest first while the total fits ``budget`` GPU-minutes, and
    those left over (ties by path and suite, so a sweep chooses as the one before it did)."""
    chosen: list[SelectedTest] = []
    left: list[SelectedTest] = []
    spent = 0.0
    for test in sorted(tests, key=lambda t: (t.gpu_minutes, t.path, t.suite)):
        if spent + test.gpu_minutes <= budget:
            chosen.append(test)
            spent += test.gpu_minutes
        else:
            left.append(test)
    return chosen, left


@dataclass(frozen=True)
class Result:
    """A test's result in one sweep, as the issue shows it."""

    word: str  # dispatched | passed | failed | another conclusion | not run: ...
    url: str | None = None

    @property
    def passed(self) -> bool:
        return self.word == "passed"


CONCLUSIONS = {"success": "passed", "failure": "failed"}


def result_of(run: SweptRun) -> Result:
    """What a sweep made of a test: why it did not run, or its run's state and, once its job
    (else its run) ended, how it ended, with the job's page (else the run's)."""
    test, dispatch, outcome = run.test, run.dispatch, run.outcome
    if test.dispatch_id is None or dispatch is None:
        return Result(test.note or "not run")
    url = (outcome.job_url if outcome is not None else None) or dispatch.run_url
    if outcome is not None and outcome.status == "completed" and outcome.conclusion:
        word = CONCLUSIONS.get(outcome.conclusion, outcome.conclusion)
        failure = failure_of(outcome)  # its log read: why it still fails
        return Result(f"{word}: {failure_class(failure)}" if failure is not None else word, url)
    if dispatch.status == "completed" and dispatch.conclusion:
        return Result(CONCLUSIONS.get(dispatch.conclusion, dispatch.conclusion), url)
    if dispatch.status == "dry_run":
        return Result("not run: recorded in dry-run")
    if dispatch.status in ("dispatching", WITHDRAWN):
        return Result("not run: its dispatch was not accepted")
    if dispatch.status == UNKNOWN:
        return Result("dispatched (GitHub did not answer; its run was not found)")
    return Result("dispatched", url)


def issue_rows(latest: Sequence[SweptRun], previous: Sequence[SweptRun]) -> list[IssueRow]:
    """The issue's table: each test of the latest sweep with its result, and its patch when it
    passed in the sweep before too."""
    before = {(r.test.path, r.test.suite): result_of(r) for r in previous}
    rows = []
    for run in latest:
        result = result_of(run)
        earlier = before.get((run.test.path, run.test.suite))
        ready = result.passed and earlier is not None and earlier.passed and run.test.patch
        rows.append(IssueRow(run.test.path, run.test.suite, run.test.reason, run.test.launch, result.word,
                             result.url, run.test.patch if ready else None))
    return rows


def swept_tests(parked: Sequence[Parked], chosen: Sequence[SelectedTest], left: Sequence[SelectedTest],
                costs: dict[tuple[str, str], float], text: Callable[[str], str | None]) -> list[SweptTest]:
    """What a sweep records of the head's parked ROCm tests: each with why it does not run (not
    a candidate, or over the budget), and, for one that could come back, the patch that takes its
    `disabled=` out (``text``: a file of the head)."""
    over = {(t.path, t.suite) for t in left}
    run = {(t.path, t.suite) for t in chosen}
    out = []
    for p in parked:
        if p.backend != "rocm" or p.suite is None:
            continue
        key = (p.path, p.suite)
        note = None
        if not p.candidate:
            note = f"not run: {p.why.rstrip('.')}" if p.why else "not run: its launch is not known valid"
        elif key in over:
            note = f"not run: {costs.get(key, 0.0):g} GPU-minutes, over the budget"
        elif key not in run:
            note = "not run"
        source = text(p.path) if p.candidate else None
        patch = unpark_patch(p.path, source, p.line, p.reason) if source is not None else None
        out.append(SweptTest(p.path, p.suite, p.reason, verdict(p), p.candidate, costs.get(key, 0.0), note,
                             None, patch))
    return out


# the issue --------------------------------------------------------------------------------------


def refresh_issue(ctx: HandlerContext, repo: str, config: ReenableConfig, *, branch: str | None = None,
                  empty: tuple[str, str] | None = None) -> int | None:
    """Bring the issue up to date with what the store holds of the last two sweeps; its number
    (None in dry-run, or when there is nothing to show and no issue yet). ``empty`` (period,
    head): the last sweep, which found no parked test.

    Two runs may end at once, each delivery writing the table as it read it: after writing, the
    table is read again and written once more when it shows something else."""
    sweeps = SweepStore(ctx.store)
    effects = ctx.effects()

    def body() -> str | None:
        periods = sweeps.periods(repo, 2)
        if empty is not None:
            latest: list[SweptRun] = []
            previous = sweeps.tests(repo, periods[0]) if periods else []
            period, head = empty
        elif periods:
            latest = sweeps.tests(repo, periods[0])
            previous = sweeps.tests(repo, periods[1]) if len(periods) > 1 else []
            period, head = periods[0], latest[0].head_sha if latest else ""
        else:
            return None
        if not latest and known_issue(effects, repo) is None:  # nothing parked, and no issue to say so
            return None
        facts = SweepFacts(head, period, config.sweep, config.budget_gpu_minutes,
                           branch or ctx.default_branch)
        return render(issue_rows(latest, previous), facts)

    number = written = None
    for _ in range(SHOWN_AGAIN):
        text = body()
        if text is None or text == written:
            break
        number = keep_issue(effects, repo, TITLE, text, MARKER)
        if number is None:
            break
        written = text
    return number


def after_run(ctx: HandlerContext, record: Dispatch) -> None:
    """A run of a sweep's dispatch ended: the issue shows its results, when the sweep it ran for
    is one the table shows (the last, or the one before it). Not while a sweep is under way, nor
    after one that found nothing parked: the table is that sweep's to write."""
    if record.pr_number is not None or record.status != "completed":
        return
    sweeps = SweepStore(ctx.store)
    found = sweeps.sweep_of(record.dispatch_id)
    if found is None:
        return
    repo, period = found
    periods = sweeps.periods(repo, 2)
    row = sweeps.row(repo)
    if period not in periods or row is None or row.period != periods[0]:
        return
    config = ctx.policy(repo).config.reenable
    if config.issue:
        refresh_issue(ctx, repo, config)


# the sweep ---------------------------------------------------------------------------------------


class LeaseLostError(Exception):
    """Another worker took the repository's lease: this one stops writing."""


class Held:
    """A repository's lease while a worker sweeps it, renewed on a thread of its own; ``check``
    raises once it was lost (the renewal found another owner, or the database went away for
    longer than the lease)."""

    def __init__(self, sweeps: SweepStore, repo: str, owner: str, lease_seconds: float, clock: Clock) -> None:
        self.sweeps, self.repo, self.owner = sweeps, repo, owner
        self.lease_seconds, self.clock = lease_seconds, clock
        self.lost = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._renew, name="rocmbot-reenable-lease", daemon=True)

    def __enter__(self) -> Held:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._done.set()
        self._thread.join()

    def _renew(self) -> None:
        interval = max(0.05, self.lease_seconds / 3)
        while not self._done.wait(interval):
            try:
                if not self.sweeps.renew(self.repo, self.owner, now=self.clock(),
                                         lease_seconds=self.lease_seconds):
                    self.lost = True
                    return
            except Exception:  # the database is away: try again; the lease may run out meanwhile
                log.exception("could not renew a re-enable sweep's lease", extra={"repository": self.repo})

    def check(self) -> None:
        if self.lost:
            raise LeaseLostError(f"the re-enable sweep of {self.repo} was taken over")


@dataclass
class Swept:
    """What a worker did with one repository: ``state`` is `swept`, `not due`, `off`, `no access`
    (no GitHub for it), `empty` (a repository without commits), `lost` or `failed`."""

    repository: str
    state: str
    period: str | None = None
    dispatched: list[str] = field(default_factory=list)
    error: str | None = None


def _event(known: KnownRepository) -> Event:
    """What the sweep of a repository acts as: no delivery, but its installation and repository."""
    repository: dict[str, object] = {"full_name": known.repository}
    if known.default_branch:
        repository["default_branch"] = known.default_branch
    payload = {"repository": repository, "installation": {"id": known.installation_id}}
    return Event.from_payload("reenable_sweep", f"reenable:{known.repository}"[:100], payload)


def sweep_due(store: Store, contexts: Contexts, settings: Settings, owner: str, clock: Clock) -> list[Swept]:
    """One pass over the repositories the service serves: sweep those that are due."""
    sweeps = SweepStore(store)
    done: list[Swept] = []
    for known in sweeps.known():
        if not worth_a_look(sweeps.row(known.repository), clock()):
            continue
        taken = sweeps.take(known.repository, owner, now=clock(), lease_seconds=settings.lease_seconds)
        if taken is not None:
            done.append(_sweep_repository(sweeps, contexts, settings, owner, clock, known, taken))
    for swept in done:
        if swept.state in ("swept", "failed", "lost"):
            log.info("re-enable sweep", extra={"repository": swept.repository, "state": swept.state,
                                               "period": swept.period, "dispatched": swept.dispatched,
                                               "error": swept.error})
    return done


def _sweep_repository(sweeps: SweepStore, contexts: Contexts, settings: Settings, owner: str, clock: Clock,
                      known: KnownRepository, taken: SweepRow) -> Swept:
    """Sweep one repository under its lease, then give the lease back, recording the period as
    swept, or, after a failure, when to try again."""
    repo = known.repository
    try:
        with Held(sweeps, repo, owner, settings.lease_seconds, clock) as held, \
                deadline_in(settings.delivery_deadline_seconds):
            swept, cadence = _sweep(sweeps, contexts, held, clock, known, taken)
            held.check()
    except LeaseLostError as exc:
        return Swept(repo, "lost", error=str(exc))
    except Exception as exc:
        wait = exc.seconds if isinstance(exc, RetryLaterError) else FAILURE_SECONDS
        if not isinstance(exc, RetryLaterError):
            log.exception("re-enable sweep failed", extra={"repository": repo})
        error = f"{type(exc).__name__}: {exc}"
        sweeps.release(repo, owner, now=clock(), retry_at=clock() + max(1.0, wait), error=error)
        return Swept(repo, "failed", error=error)
    sweeps.release(repo, owner, now=clock(), cadence=cadence,
                   period=swept.period if swept.state == "swept" else None)
    return swept


def _sweep(sweeps: SweepStore, contexts: Contexts, held: Held, clock: Clock, known: KnownRepository,
           taken: SweepRow) -> tuple[Swept, str | None]:
    """What became of the repository, and the cadence its configuration says (None: not read)."""
    repo = known.repository
    ctx = contexts(_event(known))
    if ctx is None or ctx.github is None:
        return Swept(repo, "no access"), None
    found = ctx.github.default_branch_head(repo)
    if found is None:
        return Swept(repo, "empty"), None
    branch, head = found
    now = clock()
    loaded = policy(ctx.github, repo, head)
    ctx.remember_policy(repo, loaded)
    cadence = loaded.config.reenable.sweep
    if not due(cadence, taken.period, now):
        return Swept(repo, "off" if cadence == "off" else "not due"), cadence
    period = period_of(cadence, now)
    dispatched = _run(ctx, sweeps, held, repo, branch, sweeps.head_of(repo, period) or head, period, loaded)
    return Swept(repo, "swept", period, dispatched), cadence


def _run(ctx: HandlerContext, sweeps: SweepStore, held: Held, repo: str, branch: str, head: str, period: str,
         loaded: LoadedConfig) -> list[str]:
    """Audit ``head``, record its parked tests, dispatch those chosen, show them on the issue."""
    assert ctx.github is not None
    config = loaded.config.reenable
    tree = GitHubTree(ctx.github, repo, head)
    report = audit(tree, loaded=loaded)
    parked = decide.parked_tests(report.tests, report.parked)
    costs = {(p.test.path, p.test.suite): p.test.gpu_minutes for p in parked}
    chosen, left = choose([p.test for p in parked if p.candidate], config.budget_gpu_minutes)

    def text(path: str) -> str | None:
        data = tree.read(path)
        return None if data is None else data.decode("utf-8", errors="replace")

    recorded = swept_tests(report.parked, chosen, left, costs, text)
    sweeps.record(repo, period, head, recorded)
    held.check()
    dispatched: list[str] = []
    if chosen:
        dispatcher = Dispatcher(ctx.github, ctx.effects(), DispatchStore(ctx.store), loaded.config, branch)
        try:
            result = dispatcher.run(repo, None, head, chosen, REQUESTED_BY, keys.by_sweep(period))
        except Refusal as refusal:
            for t in chosen:
                sweeps.ran(repo, period, t.path, t.suite, note=f"not run: {refusal.reason}")
        else:
            for d in [*result.dispatched, *result.already]:
                dispatched.append(d.dispatch_id)
                for path in d.tests:
                    sweeps.ran(repo, period, path, d.suite, dispatch_id=d.dispatch_id)
    held.check()
    if config.issue:
        refresh_issue(ctx, repo, config, branch=branch, empty=None if recorded else (period, head))
    return dispatched
