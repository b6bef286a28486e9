"""The repository's policy, read from its default branch (never from a PR's head)."""

from __future__ import annotations

from bot.port import GitHubPort
from config.repo import CONFIG_PATHS, DEFAULT_SOURCE, LoadedConfig, default_data, defaults, parse_config


def policy(gh: GitHubPort, repo: str) -> LoadedConfig:
    """`.github/rocmbot.yml` on the default branch, validated; the defaults when absent."""
    for path in CONFIG_PATHS:
        data = gh.default_branch_file(repo, path)
        if data is not None:
            return parse_config(data.decode("utf-8", errors="replace"), path)
    return LoadedConfig(defaults(), None, dict.fromkeys(default_data(), DEFAULT_SOURCE))
