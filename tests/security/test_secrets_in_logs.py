"""No secret is ever logged: not the webhook secret, not the App's private key, not the JWT
it signs, not an installation token; at DEBUG, for every logger (the service's, PyGithub's,
urllib3's, uvicorn's), through a signed delivery and an App-authenticated analysis end to end.

Each record is rendered the way the service writes it (`bot.service.logs.JsonFormatter`, extra fields
and tracebacks included) and also with its raw arguments, and searched for each secret.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import github
import pytest

from bot.cli.example import TEST_TEMPLATE
from bot.service.logs import JsonFormatter
from tests.e2e.conftest import SECRET, make_world

MOE = "tests/e2e/megatron/test_qwen35_moe.py"
JWT = re.compile(r"eyJ[\w-]{10,}\.eyJ[\w-]{10,}")  # a JSON Web Token's header and claims


def _rendered(record: logging.LogRecord) -> str:
    parts = [JsonFormatter().format(record), repr(record.args), repr(record.msg)]
    parts.extend(repr(v) for v in vars(record).values())
    return "\n".join(parts)


def test_no_secret_reaches_any_log_record(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    assert github.__name__ == "github"  # imported first: importing PyGithub sets its logger to INFO
    for name in ("github", "urllib3", "uvicorn", "uvicorn.error", "httpx", "httpcore", "bot", "handlers"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    for world in make_world(tmp_path):
        pr = world.open_pr({MOE: TEST_TEMPLATE.format(disabled="", ep=4)})
        world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
        world.settle()
        comment = world.sim.state.add_comment(world.repo, pr.number, "/run-amd help", author="dev")
        world.deliver("issue_comment", world.sim.payloads.issue_comment(comment))
        world.settle()
        assert world.bot_comments(pr), "the App did act on GitHub"
        pem = world.sim.state.app.private_key_pem
        tokens = list(world.sim.state.tokens)
    assert tokens, "an installation token was minted and used"

    logged = "\n".join(_rendered(r) for r in caplog.records)
    assert "delivery stored" in logged  # the capture saw the service ...
    assert "/access_tokens" in logged and "Authorization" in logged  # ... and PyGithub's requests
    secrets = {"webhook secret": SECRET, "private key": pem}
    secrets.update({f"token {i}": token for i, token in enumerate(tokens)})
    # Each line of the key's base64 body too: a key logged in pieces is still a key.
    body_lines = [line for line in pem.splitlines() if len(line) >= 32 and "PRIVATE KEY" not in line]
    secrets.update({f"key line {i}": line for i, line in enumerate(body_lines)})
    leaked = [name for name, value in secrets.items() if value in logged]
    assert leaked == []
    assert JWT.search(logged) is None, "an App JWT was logged"


@pytest.mark.parametrize(
    ("secret", "line"),
    [
        ("ghs_" + "a1" * 18, "POST /app/installations/1/access_tokens ==> 201 {{\"token\": \"{s}\"}}"),
        ("t0k3n-not-github-shaped", '{{"token":"{s}","expires_at":"2030-01-01T00:00:00Z"}}'),
        ("eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOjF9.c2ln", "Authorization: Bearer {s}"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow+/=\nAbC\n", "key={s}-----END RSA PRIVATE KEY-----"),
        ("github_pat_" + "B" * 30, "header {s} sent"),
    ],
)
def test_the_redaction_filter_removes_each_kind_of_credential(
    secret: str, line: str, caplog: pytest.LogCaptureFixture
) -> None:
    from bot.service.logs import RedactSecrets

    logger = logging.getLogger("tests.redaction")
    logger.addFilter(RedactSecrets())
    with caplog.at_level(logging.DEBUG, logger="tests.redaction"):
        logger.debug("%s", line.format(s=secret))
    (record,) = caplog.records
    assert secret.strip() not in record.getMessage() and "(redacted)" in record.getMessage()
