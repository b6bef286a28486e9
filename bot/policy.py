"""The repository's policy, read from its default branch (never from a PR's head)."""

from __future__ import annotations

from bot.port import BlobRequest, GitHubPort
from config.repo import CONFIG_PATHS, DEFAULT_SOURCE, LoadedConfig, default_data, defaults, parse_config


def policy(gh: GitHubPort, repo: str, default_branch: str | None = None) -> LoadedConfig:
    """`.github/rocmbot.yml` on the default branch, validated; the defaults when absent.

    With the branch's name (webhook payloads carry it) both spellings of the file are asked
    for in one request.
    """
    if default_branch:
        found = gh.blobs(repo, [BlobRequest(default_branch, p) for p in CONFIG_PATHS])
        contents = [(p, found.get(BlobRequest(default_branch, p))) for p in CONFIG_PATHS]
    else:
        contents = [(p, gh.default_branch_file(repo, p)) for p in CONFIG_PATHS]
    for path, data in contents:
        if data is not None:
            return parse_config(data.decode("utf-8", errors="replace"), path)
    return LoadedConfig(defaults(), None, dict.fromkeys(default_data(), DEFAULT_SOURCE))
