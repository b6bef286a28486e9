"""Escaping text taken from a PR before it reaches rendered markdown: no mentions, links or HTML."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~])")
_ZERO_WIDTH = "\u200b"


def inline(text: str) -> str:
    """Plain markdown text, one line: markup characters escaped, HTML entities made inert,
    `@name` and `#123` unable to notify or link."""
    text = re.sub(r"\s+", " ", str(text))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _SPECIAL.sub(r"\\\1", text)
    text = text.replace("@", "@" + _ZERO_WIDTH)
    return re.sub(r"(https?|ftp|mailto|www)([:.])", rf"\1{_ZERO_WIDTH}\2", text, flags=re.IGNORECASE)


def code(text: str) -> str:
    """A code span holding any text on one line (GitHub renders neither mentions nor HTML
    inside code)."""
    text = " ".join(str(text).split())
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def cell(text: str) -> str:
    """A table cell: like ``inline``, and never more than one line."""
    return inline(str(text).strip()) or " "


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def prose(text: str) -> str:
    """A sentence whose `backticked` parts become code spans and whose rest is escaped.

    Safe whatever the text holds: code spans are inert on GitHub, and everything outside
    them goes through ``inline``.
    """
    out: list[str] = []
    last = 0
    text = " ".join(str(text).split())
    for found in _CODE_SPAN.finditer(text):
        out.append(inline(text[last : found.start()]))
        out.append(code(found.group(1)))
        last = found.end()
    out.append(inline(text[last:]))
    return "".join(out)
