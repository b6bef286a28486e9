"""Logging: one JSON object a line, with the delivery's fields when a record carries them."""

from __future__ import annotations

import json
import logging
import re
import sys
import time

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message", "asctime", "color_message",
}


class JsonFormatter(logging.Formatter):
    """``{"ts": ..., "level": ..., "logger": ..., "message": ..., <extra fields>}``."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


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


class RedactSecrets(logging.Filter):
    """Replace credentials in a record's message with `(redacted)`; the record is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = _SECRETS.sub("(redacted)", message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def redact_secrets() -> None:
    """Put :class:`RedactSecrets` on the loggers that log HTTP bodies (once each)."""
    for name in REDACTED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(RedactSecrets())


def configure(level: str = "INFO", fmt: str = "json") -> None:
    """Log to stderr, replacing any handler already installed on the root logger."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("alembic").setLevel(max(logging.WARNING, root.level))
    redact_secrets()
