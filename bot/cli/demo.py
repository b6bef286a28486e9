"""`rocmbot demo`: build a small example repository with a PR, analyse it, and show what the
App would post on the PR (through the local port, which records writes instead of sending)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bot.analysis.engine import analyze
from bot.analysis.tree import GitRepository
from bot.cli.example import BASE_FILES, HEAD_FILES
from bot.formats import FORMATS
from bot.github.local import LocalPort, Write

if TYPE_CHECKING:
    from bot.service.router import Router

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "rocmbot demo",
    "GIT_AUTHOR_EMAIL": "demo@rocmbot.invalid",
    "GIT_COMMITTER_NAME": "rocmbot demo",
    "GIT_COMMITTER_EMAIL": "demo@rocmbot.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
DEMO_REPO = "example/miles"
DEMO_PR = 1


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True,
                          env={**os.environ, **_GIT_ENV})
    return proc.stdout.strip()


def _commit(root: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", message)
    return _git(root, "rev-parse", "HEAD")


def build_example(root: Path) -> tuple[str, str]:
    """Write the example repository at ``root``: a base commit and a PR head commit."""
    root.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q", "-b", "main")
    base = _commit(root, BASE_FILES, "Example repository")
    head = _commit(root, HEAD_FILES, "Re-enable the Qwen3.5 MoE test with EP4")
    return base, head


def describe_writes(writes: list[Write]) -> str:
    """What the App would have sent to GitHub, one line a write."""
    lines = []
    for w in writes:
        p = w.payload
        if w.kind == "check_run":
            title = (p.get("output") or {}).get("title", "")
            lines.append(f"- check run `{p.get('name')}`: {p.get('conclusion') or p.get('status')} ({title})")
        elif w.kind == "comment":
            lines.append(f"- summary comment on PR #{DEMO_PR} ({len(p['body'])} characters: the report)")
        elif w.kind == "review":
            where = ", ".join(f"`{c['path']}:{c['line']}`" for c in p["comments"])
            lines.append(f"- review on the head with {len(p['comments'])} inline comment(s): {where}")
        elif w.kind == "dispatch":
            lines.append(f"- workflow dispatch of `{w.target}` with tests `{p['inputs']['tests']}`")
        else:
            lines.append(f"- {w.kind} on {w.target}")
    return "\n".join(lines) or "- nothing"


def post_through_local_port(root: Path, base: str, head: str, router: Router) -> list[Write]:
    """Run the router's pull_request handlers against the example, recording their writes."""
    from bot.core.events import Event
    from bot.github.context import HandlerContext
    from bot.store.store import Store
    from config.settings import Settings

    port = LocalPort(str(root), repo=DEMO_REPO, prs={DEMO_PR: (base, head)}, default_ref=base,
                     author="contributor", permissions={"contributor": "write"})
    with tempfile.TemporaryDirectory(prefix="rocmbot-demo-db-") as tmp:
        store = Store(f"sqlite:///{Path(tmp) / 'demo.db'}")
        try:
            store.upgrade()
            event = Event.from_payload("pull_request", "demo", {
                "action": "opened", "number": DEMO_PR,
                "pull_request": {"number": DEMO_PR, "head": {"sha": head}},
                "repository": {"full_name": DEMO_REPO}, "installation": {"id": 1}})
            router.dispatch(event, HandlerContext(Settings(dry_run=False), store, event, port))
        finally:
            store.close()
            port.close()
    return port.writes


class DemoFolderError(Exception):
    """The folder asked for holds something already: the demo writes only where it made the folder."""


def check_folder(folder: Path) -> None:
    """Refuse a folder that exists and is not empty (another repository, say): the demo commits
    onto the current branch of whatever repository it builds in."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise DemoFolderError(f"{folder} exists and is not empty: give a new or empty folder "
                              "(the demo builds a git repository of its own there)")


def run_demo(folder: str | None, fmt: str, build_router: Callable[[], Router]) -> str:
    """Analyse the example PR and return the rendered report, and what the handlers of the
    router ``build_router`` makes would post (built only for the formats that show it)."""
    if folder:
        check_folder(Path(folder))
    with tempfile.TemporaryDirectory(prefix="rocmbot-demo-") as tmp:
        root = Path(folder) if folder else Path(tmp) / "repo"
        base, head = build_example(root)
        with GitRepository(root) as repo:
            report = analyze(repo.tree(base), repo.tree(head))
        out = FORMATS[fmt](report)
        if fmt in ("markdown", "text"):
            writes = post_through_local_port(root, base, head, build_router())
            out += "\n---\nWhat the App would post on the PR:\n\n" + describe_writes(writes) + "\n"
        return out
