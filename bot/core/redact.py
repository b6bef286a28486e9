"""Redaction of credentials from log records: the service's log setup and the GitHub port
both put it on the loggers that write HTTP bodies."""

from __future__ import annotations

import logging
import re

# Credentials as they would appear in a log line: GitHub tokens (`ghs_...` installation tokens
# and the like), a JSON `"token": "..."` field, a JSON Web Token (the App's), a PEM private key.
# Each pattern is linear: no part of it can match what the next part starts with.
_SECRETS = re.compile(
    r"\b(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{16,}"
    r'|(?<="token": ")[^"]+|(?<="token":")[^"]+'
    r"|\beyJ[\w-]+\.eyJ[\w-]+\.[\w-]*"
    r"|-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[A-Za-z0-9+/=\s\\]*"
)
# Loggers that write request and response bodies: PyGithub logs every response at DEBUG,
# including the one that carries a new installation token.
REDACTED_LOGGERS = ("github.Requester", "github.GithubRetry", "urllib3.connectionpool")


def redacted(text: str) -> str:
    """``text`` with each credential in it replaced by `(redacted)`."""
    return _SECRETS.sub("(redacted)", text)


class RedactSecrets(logging.Filter):
    """Replace credentials in a record's message with `(redacted)`; the record is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redacted(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def redact_secrets() -> None:
    """Put :class:`RedactSecrets` on the loggers that log HTTP bodies (once each)."""
    for name in REDACTED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(RedactSecrets())
