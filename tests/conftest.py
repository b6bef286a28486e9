from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from tests.gitrepo import GitRepo

settings.register_profile("ci", deadline=None, max_examples=200)
settings.register_profile("dev", deadline=None, max_examples=60)
settings.load_profile("ci")


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "repo")
