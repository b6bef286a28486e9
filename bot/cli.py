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
    from bot.analysis.tree import GitRepository, Tree
    from config.repo import LoadedConfig

log = logging.getLogger("rocmbot")

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FORMAT_NAMES = ("text", "markdown", "json", "sarif", "github")


class UsageError(Exception):
    """A problem with what the user asked for: one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _add_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMAT_NAMES, default="text",
                   help="output format (default: text)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--config", metavar="FILE",
                   help="use this configuration file instead of the repository's .github/rocmbot.yml")


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
    p.add_argument("--base", required=True, metavar="REV", help="the revision the change starts from")
    p.add_argument("--head", default="HEAD", metavar="REV", help="the revision it ends at (default: HEAD)")
    _add_output(p)

    p = sub.add_parser("audit", help="every finding at one revision")
    p.add_argument("--repo", default=".", metavar="PATH", help="a repository or folder (default: .)")
    p.add_argument("--rev", metavar="REV", help="a git revision (default: the files as they are)")
    _add_output(p)

    p = sub.add_parser("config", help="the effective configuration and where each key comes from")
    p.add_argument("--repo", default=".", metavar="PATH", help="a repository or folder (default: .)")
    p.add_argument("--rev", metavar="REV", help="a git revision (default: the files as they are)")
    p.add_argument("--config", metavar="FILE", help="a configuration file to show instead")

    p = sub.add_parser("demo", help="build a small example repository with a PR and analyse it")
    p.add_argument("--dir", metavar="PATH", help="where to build it (default: a temporary folder)")
    p.add_argument("--format", choices=FORMAT_NAMES, default="markdown",
                   help="output format (default: markdown)")
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
        parser.print_help(sys.stderr)
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
    return parse_config(text, path)


def _cmd_analyze(args: argparse.Namespace) -> int:
    from bot.analysis.engine import analyze
    from bot.analysis.tree import GitRepository, TreeError
    from bot.formats import FORMATS

    loaded = _config_file(args.config)
    try:
        with GitRepository(args.repo) as repo:
            base, head = repo.tree(args.base), repo.tree(args.head)
            report = analyze(base, head, loaded=loaded)
            _emit(FORMATS[args.format](report), args.output)
    except TreeError as exc:
        raise UsageError(str(exc)) from exc
    return report.exit_code


def _open_tree(repo_path: str, rev: str | None) -> tuple[Tree, GitRepository | None]:
    from bot.analysis.tree import FolderTree, GitRepository, TreeError

    try:
        if rev is None:
            return FolderTree(repo_path), None
        repo = GitRepository(repo_path)
        try:
            return repo.tree(rev), repo
        except TreeError:
            repo.close()
            raise
    except TreeError as exc:
        raise UsageError(str(exc)) from exc


def _cmd_audit(args: argparse.Namespace) -> int:
    from bot.analysis.engine import audit
    from bot.formats import FORMATS

    loaded = _config_file(args.config)
    tree, repo = _open_tree(args.repo, args.rev)
    try:
        report = audit(tree, loaded=loaded)
        _emit(FORMATS[args.format](report), args.output)
    finally:
        if repo is not None:
            repo.close()
    return report.exit_code


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
    from bot.demo import run_demo

    sys.stdout.write(run_demo(args.dir, args.format))
    return EXIT_OK


_COMMANDS = {
    "analyze": _cmd_analyze,
    "audit": _cmd_audit,
    "config": _cmd_config,
    "demo": _cmd_demo,
}


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
