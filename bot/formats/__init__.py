"""Renderers: a report in, text out (terminal, markdown, JSON, SARIF, workflow commands)."""

from __future__ import annotations

from collections.abc import Callable

from bot.analysis.report import Report
from bot.formats import github_actions, json_format, markdown, sarif, text

FORMATS: dict[str, Callable[[Report], str]] = {
    "text": text.render,
    "markdown": markdown.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github_actions.render,
}
