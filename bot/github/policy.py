"""The repository's policy, read from its default branch (never from a PR's head)."""

from __future__ import annotations

from bot.github.port import BlobRequest, GitHubPort
from config.repo import CONFIG_PATHS, DEFAULT_SOURCE, LoadedConfig, default_data, defaults, parse_config


def policy(gh: GitHubPort, repo: str, default_branch: str | None = None) -> LoadedConfig:
    """`.github/rocmbot.yml` on the default branch, validated; the defaults when absent.

    With the branch's name (webhook payloads carry it) both spellings of the file are asked
    for in one request.
    """
    if default_branch:
        wanted = requests(default_branch)
        return from_files(default_branch, gh.blobs(repo, wanted))
    return _parse([(p, gh.default_branch_file(repo, p)) for p in CONFIG_PATHS])


def requests(default_branch: str) -> list[BlobRequest]:
    """What to read for the policy, so another batch can carry it."""
    return [BlobRequest(default_branch, p) for p in CONFIG_PATHS]


def from_files(default_branch: str, found: dict[BlobRequest, bytes | None]) -> LoadedConfig:
    """The policy from a batch that carried :func:`requests`."""
    return _parse([(p, found.get(BlobRequest(default_branch, p))) for p in CONFIG_PATHS])


def _parse(contents: list[tuple[str, bytes | None]]) -> LoadedConfig:
    for path, data in contents:
        if data is not None:
            return parse_config(data.decode("utf-8", errors="replace"), path)
    return LoadedConfig(defaults(), None, dict.fromkeys(default_data(), DEFAULT_SOURCE))
