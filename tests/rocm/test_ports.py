"""Each consumer takes only the GitHub methods it uses; both ports provide them structurally."""

from __future__ import annotations

from pathlib import Path

from bot.cli.demo import build_example
from bot.core.events import Event
from bot.github.adapter import PyGithubPort
from bot.github.context import local_ports
from bot.github.local import LocalPort
from bot.github.port import Checks, Conversation, GitHubPort, Permissions, Workflows
from bot.rocm.authz import actor
from config.repo import DispatchConfig


def narrow(port: PyGithubPort | LocalPort) -> tuple[Permissions, Workflows, Checks, Conversation, GitHubPort]:
    """What mypy checks: the PyGithub adapter and the local port satisfy each narrow protocol."""
    return port, port, port, port, port


class Teams:
    """Only what deciding who may run reads: a permission, and team memberships (counted)."""

    def __init__(self, permission: str, teams: set[str]) -> None:
        self._permission = permission
        self.teams = teams
        self.asked: list[str] = []

    def permission(self, repo: str, user: str) -> str:
        return self._permission

    def team_member(self, org: str, team: str, user: str) -> bool:
        self.asked.append(f"{org}/{team}")
        return f"{org}/{team}" in self.teams


def test_rights_come_from_the_permission_then_the_lists_then_the_teams() -> None:
    config = DispatchConfig(trusted_teams=["octo/gpu"], maintainer_teams=["octo/leads"],
                            trusted_users=["Pal"])
    writer = Teams("write", set())
    assert (actor(writer, "o/r", "dev", config).trusted, writer.asked) == (True, ["octo/leads"])
    admin = Teams("admin", set())
    assert actor(admin, "o/r", "boss", config).maintainer and admin.asked == []  # settled without teams
    listed = Teams("read", set())
    assert actor(listed, "o/r", "pal", config).trusted and listed.asked == ["octo/leads"]
    member = Teams("read", {"octo/gpu"})
    found = actor(member, "o/r", "x", config)
    assert (found.trusted, found.maintainer, member.asked) == (True, False, ["octo/leads", "octo/gpu"])
    stranger = Teams("none", set())
    assert not actor(stranger, "o/r", "y", config).trusted


def test_the_local_port_answers_who_may_run(tmp_path: Path) -> None:
    local = LocalPort(str(tmp_path), permissions={"lead": "maintain"})
    permissions, *_ = narrow(local)
    assert actor(permissions, "local/repo", "lead", DispatchConfig()).maintainer
    assert not actor(permissions, "local/repo", "anyone", DispatchConfig()).trusted


def test_the_local_port_reads_the_prs_labels_from_its_delivery(tmp_path: Path) -> None:
    base, head = build_example(tmp_path / "repo")
    pull = {"number": 7, "base": {"sha": base}, "head": {"sha": head},
            "labels": [{"name": "run-ci"}, {"name": "run-ci-extra"}, {"id": 3}]}
    event = Event.from_payload("pull_request", "d1", {
        "action": "labeled", "number": 7, "pull_request": pull, "repository": {"full_name": "octo/miles"}})
    port = local_ports(str(tmp_path / "repo"))(event)
    assert port is not None
    pr = port.pull_request("octo/miles", 7)
    assert (pr.head_sha, pr.labels) == (head, ("run-ci", "run-ci-extra"))
