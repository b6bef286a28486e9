"""Temporary git repositories for tests: write files, commit, get SHAs."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


class GitRepo:
    """A git working copy under ``root``; ``write`` dedents text, ``commit`` returns the SHA."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True,
            env={**os.environ, **_ENV}, check=True,
        )
        return proc.stdout.strip()

    def write(self, path: str, text: str | bytes) -> None:
        full = self.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            full.write_bytes(text)
        else:
            full.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")

    def write_all(self, files: dict[str, str]) -> None:
        for path, text in files.items():
            self.write(path, text)

    def remove(self, path: str) -> None:
        (self.root / path).unlink()

    def commit(self, message: str = "change") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")
