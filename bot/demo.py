"""`rocmbot demo`: build a small example repository with a PR, and analyse the PR."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from bot.analysis.engine import analyze
from bot.analysis.tree import GitRepository
from bot.example import BASE_FILES, HEAD_FILES
from bot.formats import FORMATS

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "rocmbot demo",
    "GIT_AUTHOR_EMAIL": "demo@rocmbot.invalid",
    "GIT_COMMITTER_NAME": "rocmbot demo",
    "GIT_COMMITTER_EMAIL": "demo@rocmbot.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


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


def run_demo(folder: str | None, fmt: str) -> str:
    """Analyse the example PR and return the rendered report."""
    with tempfile.TemporaryDirectory(prefix="rocmbot-demo-") as tmp:
        root = Path(folder) if folder else Path(tmp) / "repo"
        base, head = build_example(root)
        with GitRepository(root) as repo:
            report = analyze(repo.tree(base), repo.tree(head))
        intro = (
            f"Example repository at {root} (kept)\n" if folder else ""
        )
        return intro + FORMATS[fmt](report)
