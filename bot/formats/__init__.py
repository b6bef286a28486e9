"""Renderers: a report in, text out (terminal, markdown, JSON, SARIF, workflow commands)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.analysis.report import Report

    FORMATS: dict[str, Callable[[Report], str]]


def __getattr__(name: str) -> dict[str, Callable[[Report], str]]:
    """``FORMATS``, built on first use: importing ``bot.formats.escape`` alone (as `rocmbot ci
    run` does, in a job image with nothing but the standard library) loads no renderer."""
    if name != "FORMATS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from bot.formats import github_actions, json_format, markdown, sarif, text

    formats: dict[str, Callable[[Report], str]] = {
        "text": text.render,
        "markdown": markdown.render,
        "json": json_format.render,
        "sarif": sarif.render,
        "github": github_actions.render,
    }
    globals()["FORMATS"] = formats
    return formats
