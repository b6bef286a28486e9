"""The `rocmbot` command line. Analysis commands import no part of the web stack."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from bot import __version__

if TYPE_CHECKING:
    from bot.analysis.report import Report
    from bot.analysis.tree import GitRepository, Tree
    from bot.store.store import Store
    from config.repo import LoadedConfig
    from config.settings import Settings

log = logging.getLogger("rocmbot")

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FORMAT_NAMES = ("text", "markdown", "json", "sarif", "github")


class UsageError(Exception):
    """A problem with what the user asked for: one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes, 1 or more: {text!r}")
    return value


def _add_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMAT_NAMES, default="text",
                   help="output format (default: text)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--config", metavar="FILE",
                   help="use this configuration file instead of the repository's .github/rocmbot.yml")
    p.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                   help="text format: also list the tests, the ROCm runs and the tables")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rocmbot", description=(
        "Check GPU ML training repositories for launches that do not fit their runners and "
        "dependency pins that drift; select the ROCm tests a change affects."
    ))
    parser.add_argument("--version", action="version", version=f"rocmbot {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (repeatable)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("analyze", help="what a change from BASE to HEAD touches, and its findings")
    p.add_argument("--repo", default=".", metavar="PATH", help="a git repository, bare or not (default: .)")
    _add_revisions(p)
    p.add_argument("--labels", metavar="A,B", type=_labels, default=None,
                   help="the PR's labels, for what the repository's own CI runs "
                   "(default: its CI label, if it has one, and no other)")
    _add_output(p)

    p = sub.add_parser("explain", help="for one test, why a change from BASE to HEAD runs it or not")
    p.add_argument("--repo", default=".", metavar="PATH", help="a git repository, bare or not (default: .)")
    _add_revisions(p)
    p.add_argument("--labels", metavar="A,B", type=_labels, default=None,
                   help="the PR's labels (default: its CI label, if it has one, and no other)")
    p.add_argument("--config", metavar="FILE",
                   help="use this configuration file instead of the repository's .github/rocmbot.yml")
    p.add_argument("test", metavar="TEST", help="the test file (its path, or the end of it)")

    p = sub.add_parser("audit", help="every finding at one revision")
    p.add_argument("--repo", default=".", metavar="PATH", help="a repository or folder (default: .)")
    p.add_argument("--rev", metavar="REV", help="a git revision (default: the files as they are)")
    p.add_argument("-j", "--jobs", type=_jobs, default=0, metavar="N",
                   help="processes to spread a large revision's test files over "
                   "(default: one per CPU, at most 8; 1 runs everything in this process)")
    _add_output(p)

    p = sub.add_parser("parked", help="the parked (disabled) GPU tests: reason, age, launch, and "
                       "which can come back")
    p.add_argument("--repo", default=".", metavar="PATH", help="a repository or folder (default: .)")
    p.add_argument("--rev", metavar="REV", help="a git revision (default: the files as they are)")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                   help="output format (default: text)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the table to FILE instead of stdout")
    p.add_argument("--config", metavar="FILE",
                   help="use this configuration file instead of the repository's .github/rocmbot.yml")

    p = sub.add_parser("triage", help="explain a failed ROCm job from its saved log, as the service "
                       "would: predicted by a finding, infrastructure, or new")
    p.add_argument("--repo", default=".", metavar="PATH", help="a repository or folder (default: .)")
    p.add_argument("--rev", metavar="REV", help="the revision the job ran (default: the files as they are)")
    p.add_argument("--test", required=True, metavar="TEST",
                   help="the test the job ran (its path, or the end of it)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    p.add_argument("--config", metavar="FILE",
                   help="use this configuration file instead of the repository's .github/rocmbot.yml")
    p.add_argument("log", metavar="LOGFILE", help="the job's log, as GitHub serves it")

    p = sub.add_parser("config", help="the effective configuration and where each key comes from")
    p.add_argument("--repo", default=".", metavar="PATH", help="a repository or folder (default: .)")
    p.add_argument("--rev", metavar="REV", help="a git revision (default: the files as they are)")
    p.add_argument("--config", metavar="FILE", help="a configuration file to show instead")

    p = sub.add_parser("serve", help="run the webhook service (with an in-process worker)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8000, help="port to listen on (default: 8000)")
    p.add_argument("--no-worker", action="store_true",
                   help="only accept and store deliveries; run `rocmbot worker` to process them")

    p = sub.add_parser("worker", help="process stored deliveries")
    p.add_argument("--concurrency", type=int, metavar="N", help="worker threads (default: settings)")

    p = sub.add_parser("db", help="database maintenance")
    db = p.add_subparsers(dest="db_command", metavar="ACTION", parser_class=_Parser, required=True)
    db.add_parser("upgrade", help="apply the schema migrations")
    db.add_parser("current", help="print the schema revision")

    p = sub.add_parser("deliveries", help="inspect and retry stored deliveries")
    dl = p.add_subparsers(dest="deliveries_command", metavar="ACTION", parser_class=_Parser, required=True)
    q = dl.add_parser("list", help="the newest deliveries")
    q.add_argument("--status", choices=["queued", "processing", "done", "failed", "dead", "superseded"])
    q.add_argument("--limit", type=int, default=50)
    q.add_argument("--json", action="store_true", help="one JSON object per line")
    q = dl.add_parser("show", help="one delivery, with its effects (in dry-run, what they would send) "
                                   "and its payload")
    q.add_argument("id", help="the X-GitHub-Delivery id")
    q = dl.add_parser("retry", help="queue a delivery again")
    q.add_argument("id", help="the X-GitHub-Delivery id")

    p = sub.add_parser("reconcile", help="ask GitHub to redeliver deliveries the service missed")
    p.add_argument("--since", type=float, metavar="MINUTES",
                   help="look this far back (default: ROCMBOT_RECONCILE_WINDOW_MINUTES, 180; at most 4320)")
    p.add_argument("--dry-run", action="store_true", help="list what would be redelivered; ask nothing")

    p = sub.add_parser("replay", help="send a captured or stored payload to a service, or process it here")
    p.add_argument("file", nargs="?", help="a JSON payload file (or use --delivery)")
    p.add_argument("--delivery", metavar="ID", help="replay a stored delivery instead of a file")
    p.add_argument("--event", help="the X-GitHub-Event name (required with a file)")
    p.add_argument("--repo", metavar="PATH",
                   help="with --dry-run: a local clone to read instead of GitHub; writes are listed")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="POST it, signed, to this webhook URL")
    where.add_argument("--dry-run", action="store_true", help="process it in this process; print the effects")

    p = sub.add_parser("ci", help="commands for the CI side (the dispatched ROCm job)")
    ci = p.add_subparsers(dest="ci_command", metavar="ACTION", parser_class=_Parser, required=True)
    q = ci.add_parser("run", help="run test files one by one, with a timeout, JUnit XML and a step summary")
    q.add_argument("--tests", required=True, help="space-separated test files")
    q.add_argument("--timeout", type=float, default=3600, help="seconds per test (default: 3600)")
    q.add_argument("--junit", metavar="FILE", help="write JUnit XML here")
    q.add_argument("--suite", default="rocm", help="the suite name for the report")
    q.add_argument("--runner", default=None,
                   help="command that runs one test file (default: this Python), e.g. 'python -m pytest -x'")
    q.add_argument("--include-disabled", action="store_true",
                   help="run a named test even when its ROCm marker is disabled (default: leave it out)")

    p = sub.add_parser("demo", help="build a small example repository with a PR and analyse it")
    p.add_argument("--dir", metavar="PATH", help="where to build it (default: a temporary folder)")
    p.add_argument("--format", choices=FORMAT_NAMES, default="markdown",
                   help="output format (default: markdown)")

    p = sub.add_parser("sandbox", help="the GitHub simulator, the service as its App, an example PR: "
                       "see rocmbot work and talk to it from standard input")
    p.add_argument("--dir", metavar="PATH", help="where to keep its database (default: a temporary folder)")
    p.add_argument("--port", type=int, default=0, help="the service's port (default: any free one)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING - 10 * min(args.verbose, 2),
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if args.command is None:
        sys.stderr.write(f"usage: rocmbot COMMAND [OPTIONS] (commands: {', '.join(_COMMANDS)}; "
                         "see `rocmbot --help` or `rocmbot COMMAND --help`)\n")
        return EXIT_USAGE
    try:
        return int(_COMMANDS[args.command](args))
    except UsageError as exc:
        sys.stderr.write(f"rocmbot: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if os.environ.get("ROCMBOT_DEBUG"):
            raise
        log.debug("unexpected error", exc_info=True)
        sys.stderr.write(f"rocmbot: error: {type(exc).__name__}: {exc} (set ROCMBOT_DEBUG=1 for details)\n")
        return EXIT_USAGE


def _emit(text: str, output: str | None) -> None:
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {output}: {exc.strerror}") from exc
    else:
        sys.stdout.write(text)


def _render(args: argparse.Namespace, report: Report) -> str:
    from bot.formats import FORMATS, text

    if args.format != "text":
        return FORMATS[args.format](report)
    colour = (not args.output and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
              and os.environ.get("TERM") != "dumb")
    return text.render(report, verbose=args.verbose > 0, color=colour)


def _config_file(path: str | None) -> LoadedConfig | None:
    """A LoadedConfig from a local file, or None to read the repository's own."""
    if path is None:
        return None
    from config.repo import parse_config

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise UsageError(f"cannot read config {path}: {reason}") from exc
    loaded = parse_config(text, path)
    for problem in loaded.problems:
        if problem.key == "(file)":  # the file as a whole is unusable: not a report on defaults
            where = f"{path}:{problem.line}" if problem.line else path
            raise UsageError(f"config {where}: {problem.message}")
    return loaded


def _require_files(tree: Tree, what: str, hint: str = "") -> None:
    """A tree with no file at all is a mistake in what was asked, not a clean report."""
    if not tree.list("**"):
        raise UsageError(f"{what} has no files to analyse{hint}")


_REV_HINT = "pass `--rev HEAD` to read its last commit"


def _folder(path: str) -> Tree:
    """The files of a working tree, refusing a git folder that has none to read."""
    from bot.analysis.tree import FolderTree

    root = Path(path)
    if (root / "HEAD").is_file() and (root / "objects").is_dir() and (root / "refs").is_dir():
        raise UsageError(f"{path} is a bare git repository, with no files checked out: {_REV_HINT}")
    folder = FolderTree(path)
    _require_files(folder, path, f" (nothing checked out): {_REV_HINT}" if (root / ".git").exists() else "")
    return folder


def _labels(text: str) -> frozenset[str]:
    return frozenset(label.strip() for label in text.split(",") if label.strip())


def _add_revisions(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base", required=True, metavar="REV",
                   help="the branch the change goes into: it is compared from where HEAD left "
                   "it (their merge base), as a pull request is")
    p.add_argument("--head", default="HEAD", metavar="REV", help="the revision it ends at (default: HEAD)")
    p.add_argument("--exact-base", action="store_true",
                   help="compare from BASE itself, not from the merge base")


def _analysis(args: argparse.Namespace) -> Report:
    from bot.analysis.engine import analyze
    from bot.analysis.tree import GitRepository, TreeError

    loaded = _config_file(args.config)
    try:
        with GitRepository(args.repo) as repo:
            head = repo.tree(args.head)
            _require_files(head, f"revision {args.head} of {args.repo}")
            start = args.base
            if not args.exact_base:
                start = repo.merge_base(args.base, args.head)
                if start is None:
                    raise UsageError(f"{args.base} and {args.head} share no history: give "
                                     "--exact-base to compare them as they are")
            base = repo.tree(start)
            report = analyze(base, head, loaded=loaded, labels=args.labels)
            _since(repo, head.rev, report)
            return report
    except TreeError as exc:
        raise UsageError(str(exc)) from exc


def _cmd_analyze(args: argparse.Namespace) -> int:
    report = _analysis(args)
    _emit(_render(args, report), args.output)
    return report.exit_code


def _cmd_explain(args: argparse.Namespace) -> int:
    from bot.formats.explain import explain, matching

    report = _analysis(args)
    entries = matching(report, args.test)
    if not entries:
        raise UsageError(f"no registered test {args.test!r} at {args.head} or {args.base}")
    sys.stdout.write("".join(explain(report, e) for e in entries))
    return EXIT_OK


def _open_tree(repo_path: str, rev: str | None) -> tuple[Tree, GitRepository | None]:
    from bot.analysis.tree import GitRepository, TreeError

    try:
        if rev is None:
            return _folder(repo_path), None
        repo = GitRepository(repo_path)
        try:
            tree = repo.tree(rev)
            _require_files(tree, f"revision {rev} of {repo_path}")
        except (TreeError, UsageError):
            repo.close()
            raise
        return tree, repo
    except TreeError as exc:
        raise UsageError(str(exc)) from exc


def _cmd_audit(args: argparse.Namespace) -> int:
    from bot.analysis.pool import default_jobs

    loaded = _config_file(args.config)
    report = _audited(args.repo, args.rev, loaded, args.jobs or default_jobs())
    _emit(_render(args, report), args.output)
    return report.exit_code


def _audited(path: str, rev: str | None, loaded: LoadedConfig | None, jobs: int) -> Report:
    """`audit` of a folder or a revision, its parked tests dated from the history."""
    from bot.analysis.engine import audit
    from bot.analysis.tree import GitRepository, TreeError

    tree, repo = _open_tree(path, rev)
    try:
        report = audit(tree, loaded=loaded, jobs=jobs)
        if report.parked:
            if repo is not None:
                _since(repo, tree.rev or "HEAD", report)
            elif (Path(path) / ".git").exists():  # a working copy: its history up to HEAD
                try:
                    with GitRepository(path) as history:
                        _since(history, "HEAD", report)
                except TreeError:
                    pass
        return report
    finally:
        if repo is not None:
            repo.close()


def _since(repo: GitRepository, rev: str, report: Report) -> None:
    """Each parked test's `since`: the commit that added its `disabled=` reason (the git
    processes run a few at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    if not report.parked:
        return
    with ThreadPoolExecutor(max_workers=4) as workers:
        found = list(workers.map(lambda p: repo.added(rev, p.path, p.reason), report.parked))
    for parked, since in zip(report.parked, found, strict=True):
        parked.since = since


def _cmd_triage(args: argparse.Namespace) -> int:
    import json

    from bot.analysis import triage
    from bot.analysis.engine import read_config

    try:
        data = Path(args.log).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {args.log}: {exc.strerror}") from exc
    loaded = _config_file(args.config)
    report = _audited(args.repo, args.rev, loaded, 1)
    paths = sorted({t.path for t in report.tests})
    wanted = [p for p in paths if p == args.test or p.endswith("/" + args.test.lstrip("/"))]
    if len(wanted) != 1:
        raise UsageError(f"no registered test {args.test!r} at {args.rev or 'the working tree'}"
                         if not wanted else f"{args.test!r} names {len(wanted)} tests: "
                         + ", ".join(wanted[:5]))
    (test,) = wanted
    findings = [f for f in report.findings if test in (f.test, f.path) or f.rule.startswith("PIN")]
    if loaded is None:
        tree, repo = _open_tree(args.repo, args.rev)
        try:
            loaded = read_config(tree)
        finally:
            if repo is not None:
                repo.close()
    try:
        text = triage.read_log(data)
    except triage.LogUnavailableError as exc:
        sys.stdout.write(json.dumps({"test": test, "class": None, "available": False, "why": str(exc)})
                         + "\n" if args.format == "json" else f"{test}: log not available: {exc}\n")
        return EXIT_OK
    result = triage.classify(text, findings, rules=triage.patterns(loaded.config.failures))
    if args.format == "json":
        sys.stdout.write(json.dumps({"test": test, "available": True, **result.as_json()}, indent=2) + "\n")
        return EXIT_OK
    what = {"predicted": f"predicted by {result.rule}", "known": "known (seen before)", "new": "new",
            "infrastructure": f"infrastructure ({result.pattern})"}[result.kind]
    lines = [f"{test}: {what}: {result.explanation}"]
    lines.extend(f"  | {line}" for line in result.excerpt)
    if result.fix:
        lines.append(f"  fix: {result.fix}")
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def _cmd_parked(args: argparse.Namespace) -> int:
    from bot.analysis.pool import default_jobs
    from bot.formats import parked

    report = _audited(args.repo, args.rev, _config_file(args.config), default_jobs())
    render = {"text": parked.render_text, "markdown": parked.render_markdown,
              "json": parked.render_json}[args.format]
    _emit(render(report), args.output)
    return EXIT_OK


def _cmd_config(args: argparse.Namespace) -> int:
    from bot.analysis.configview import describe
    from bot.analysis.engine import read_config

    tree, repo = _open_tree(args.repo, args.rev)
    try:
        loaded = _config_file(args.config) or read_config(tree)
        sys.stdout.write(describe(tree, loaded))
    finally:
        if repo is not None:
            repo.close()
    return EXIT_FINDINGS if loaded.problems else EXIT_OK


def _cmd_demo(args: argparse.Namespace) -> int:
    from bot.cli.demo import DemoFolderError, run_demo
    from bot.cli.wiring import build_router

    try:
        report = run_demo(args.dir, args.format, build_router)
    except DemoFolderError as exc:
        raise UsageError(str(exc)) from exc
    sys.stdout.write(report)
    if args.dir:  # on stderr: stdout stays the report, parseable in every format
        sys.stderr.write(f"rocmbot: example repository at {args.dir} (kept)\n")
    return EXIT_OK


# What `rocmbot sandbox` needs beyond rocmbot: the simulator and its one dependency of its own.
SANDBOX_MODULES = ("ghsim", "jsonschema", "referencing")


def _cmd_sandbox(args: argparse.Namespace) -> int:
    try:
        from bot.cli.sandbox import run_sandbox
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in SANDBOX_MODULES:
            raise
        raise UsageError(f"the sandbox needs the GitHub simulator, which is not installed ({exc.name}): "
                         "from a rocmbot checkout, pip install -e '.[sandbox]' -e sim "
                         "(or run bin/run sandbox)") from exc
    return run_sandbox(sys.stdin, sys.stdout, folder=args.dir, port=args.port)


def _settings() -> Settings:
    from pydantic import ValidationError

    from config.settings import Settings

    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        message = str(first["msg"]).removeprefix("Value error, ")
        if not first["loc"]:  # settings that do not go together: the message names them
            raise UsageError(f"invalid settings: {message}") from exc
        name = "ROCMBOT_" + "_".join(str(p) for p in first["loc"]).upper()
        raise UsageError(f"invalid setting {name}: {message}") from exc


def _cmd_serve(args: argparse.Namespace) -> int:
    from bot.cli.serve import serve
    from bot.cli.wiring import build_router, dead_letter, go_live, pending_sweep, reenable_sweep
    from bot.service import logs
    from config.settings import SettingsError

    settings = _settings()
    try:
        settings.check_servable()
    except SettingsError as exc:
        raise UsageError(str(exc)) from exc
    _check_port(args.host, args.port)
    _check_startup(settings)
    logs.configure(settings.log_level, settings.log_format)
    serve(settings, args.host, args.port, build_router(), pending_sweep(), with_worker=not args.no_worker,
          dead_letter=dead_letter(), go_live=go_live(), reenable=reenable_sweep())
    return EXIT_OK


def _check_startup(settings: Settings) -> None:
    from bot.cli.serve import startup_problem

    problem = startup_problem(settings)
    if problem is not None:
        raise UsageError(problem)


def _port(text: str) -> int:
    """An argparse type: a TCP port."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:  # (0: any free one)
        raise argparse.ArgumentTypeError(f"{value} is not a port (0-65535)")
    return value


def _check_port(host: str, port: int) -> None:
    """Bind the address once, as the server will (SO_REUSEADDR), so a busy port is one line."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc


def _cmd_worker(args: argparse.Namespace) -> int:
    from bot.cli.serve import run_workers
    from bot.cli.wiring import build_router, dead_letter, go_live, pending_sweep, reenable_sweep
    from bot.service import logs

    settings = _settings()
    _check_startup(settings)
    logs.configure(settings.log_level, settings.log_format)
    run_workers(settings, args.concurrency or settings.worker_concurrency, build_router(), pending_sweep(),
                dead_letter=dead_letter(), go_live=go_live(), reenable=reenable_sweep())
    return EXIT_OK


def _store(*, existing: bool = False) -> Store:
    """The configured store; ``existing``: for a command that reads what the service stored,
    which must not make an empty database as it looks (a SQLite file is made on connecting)."""
    from sqlalchemy.engine import make_url

    from bot.store.store import Store

    url = _settings().database_url
    if existing:
        parsed = make_url(url)
        name = parsed.database or ""
        if parsed.get_backend_name() == "sqlite" and name not in ("", ":memory:") and \
                not Path(name).exists():
            raise UsageError(f"no database at {name}: the service makes it when it starts "
                             "(`rocmbot db upgrade` makes an empty one); ROCMBOT_DATABASE_URL "
                             "names another")
    store = Store(url)
    if existing and store.revision() is None:
        store.close()
        raise UsageError("the database holds no rocmbot tables: `rocmbot db upgrade` makes them")
    return store


def _cmd_db(args: argparse.Namespace) -> int:
    store = _store()
    try:
        if args.db_command == "upgrade":
            revision = store.upgrade()
            sys.stdout.write(f"database at revision {revision}\n")
        else:
            sys.stdout.write(f"{store.revision() or 'empty'} (latest: {store.head_revision()})\n")
    finally:
        store.close()
    return EXIT_OK


def _when(ts: float | None) -> str:
    import time

    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ts))


def _cmd_deliveries(args: argparse.Namespace) -> int:
    import json

    store = _store(existing=True)
    try:
        if args.deliveries_command == "list":
            for d in store.recent(args.status, args.limit):
                if args.json:
                    sys.stdout.write(json.dumps(d.summary()) + "\n")
                else:
                    where = f"{d.repository or '-'}#{d.pr_number}" if d.pr_number else (d.repository or "-")
                    sys.stdout.write(f"{d.delivery_id}  {_when(d.received_at)}  {d.status:<10} "
                                     f"{d.attempts}x  {d.event}.{d.action or '-'}  {where}\n")
            return EXIT_OK
        record = store.get(args.id)
        if record is None:
            raise UsageError(f"no delivery {args.id}")
        if args.deliveries_command == "show":
            made = [{"key": e.key, "kind": e.kind, "target": e.target, "status": e.status, "result": e.result}
                    for e in store.effects_of(args.id)]
            sys.stdout.write(json.dumps({**record.summary(), "effects": made, "payload": record.payload()},
                                        indent=2) + "\n")
            return EXIT_OK
        if not store.retry(args.id):
            raise UsageError(f"delivery {args.id} is being processed; retry it once it ends")
        sys.stdout.write(f"{args.id} queued again\n")
        return EXIT_OK
    finally:
        store.close()


def _cmd_replay(args: argparse.Namespace) -> int:
    from bot.cli.replay import replay_dry_run, replay_to_url
    from bot.cli.wiring import build_router

    settings = _settings()
    if args.delivery:
        store = _store(existing=True)
        try:
            record = store.get(args.delivery)
        finally:
            store.close()
        if record is None:
            raise UsageError(f"no delivery {args.delivery}")
        event, body = record.event, record.payload_text.encode()
    else:
        if not args.file or not args.event:
            raise UsageError("give a payload FILE with --event NAME, or --delivery ID")
        try:
            body = Path(args.file).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {args.file}: {exc.strerror}") from exc
        event = args.event
    if args.url:
        status, answer = replay_to_url(settings, args.url, event, body)
        sys.stdout.write(f"{status} {answer}\n")
        return EXIT_OK if status < 300 else EXIT_FINDINGS
    try:
        sys.stdout.write(replay_dry_run(settings, build_router(), event, body, args.repo))
    except ValueError as exc:  # a body the service would refuse: nothing to replay
        raise UsageError(f"{args.file or args.delivery}: {exc}") from exc
    return EXIT_OK


def _cmd_reconcile(args: argparse.Namespace) -> int:
    from bot.github.reconcile import ReconcileError, run_once

    settings = _settings()
    if args.since is not None and not 0 < args.since <= 3 * 24 * 60:
        raise UsageError("--since takes minutes between 0 and 4320 (GitHub keeps deliveries three days)")
    store = _store()
    try:
        result = run_once(settings, store, since_minutes=args.since, dry_run=args.dry_run)
    except ReconcileError as exc:
        raise UsageError(str(exc)) from exc
    finally:
        store.close()
    verb = "would redeliver" if args.dry_run else "redelivered"
    for guid in result.redelivered:
        sys.stdout.write(f"{verb} {guid}\n")
    for problem in result.errors:
        sys.stdout.write(f"failed {problem}\n")
    sys.stdout.write(f"reconcile: {result.summary()}\n")
    return EXIT_FINDINGS if result.errors else EXIT_OK


def _cmd_ci(args: argparse.Namespace) -> int:
    import shlex

    from bot.cli.ci_run import run

    tests = args.tests.split()
    if not tests:
        raise UsageError("--tests names no test file")
    runner = shlex.split(args.runner) if args.runner else None
    return run(tests, timeout=args.timeout, junit_path=args.junit, runner=runner, suite=args.suite,
               include_disabled=args.include_disabled)


_COMMANDS = {
    "analyze": _cmd_analyze,
    "explain": _cmd_explain,
    "audit": _cmd_audit,
    "config": _cmd_config,
    "demo": _cmd_demo,
    "sandbox": _cmd_sandbox,
    "serve": _cmd_serve,
    "worker": _cmd_worker,
    "db": _cmd_db,
    "deliveries": _cmd_deliveries,
    "reconcile": _cmd_reconcile,
    "replay": _cmd_replay,
    "ci": _cmd_ci,
    "parked": _cmd_parked,
    "triage": _cmd_triage,
}


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
