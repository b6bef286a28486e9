"""Escaping text taken from a PR before it reaches rendered markdown: no mentions, links or HTML."""

from __future__ import annotations

import html
import re

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~$])")  # `$` starts math on GitHub
# What starts a list, a rule or a heading underline when text begins a line: `- x`, `1. x`, `===`.
_BLOCK_START = re.compile(r"^(\s*|\s*\d{1,9})([-=.)])")
_ZERO_WIDTH = "\u200b"
_REFERENCE = re.compile(r"(#|\bGH-)(?=\d)", re.IGNORECASE)


def inline(text: str) -> str:
    """Plain markdown text, one line: markup characters escaped, HTML entities made inert,
    `@name` and `#123` unable to notify or link."""
    text = re.sub(r"\s+", " ", str(text))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _SPECIAL.sub(r"\\\1", text)
    text = _BLOCK_START.sub(r"\1\\\2", text)
    text = text.replace("@", "@" + _ZERO_WIDTH)
    # GitHub links `#12`, `GH-12` and `owner/repo#12` in rendered text, and a link to an issue
    # puts a "mentioned this" event on it: escaping `#` does not stop that, breaking the run does.
    text = _REFERENCE.sub(rf"\1{_ZERO_WIDTH}", text)
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
    """A table cell: like ``prose`` (`backticked` parts as code), one line, and no bare `|`:
    GitHub ends a cell at one even inside a code span, unless it is escaped."""
    return re.sub(r"(?<!\\)\|", r"\\|", prose(str(text).strip())) or " "


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def prose(text: str) -> str:
    """A sentence whose `backticked` parts become code spans and whose rest is escaped.

    Safe whatever the text holds: code spans are inert on GitHub, and everything outside
    them goes through ``inline``. Two code spans side by side get a zero-width space between
    them: touching fences would run together into one longer backtick string, close nothing,
    and leave the text of the first span outside code, unescaped.
    """
    out: list[str] = []
    last = 0
    text = " ".join(str(text).split())
    for found in _CODE_SPAN.finditer(text):
        between = inline(text[last : found.start()])
        out.append(between or (_ZERO_WIDTH if out else ""))
        out.append(code(found.group(1)))
        last = found.end()
    out.append(inline(text[last:]))
    return "".join(out)


def _html_inline(text: str) -> str:
    # Whitespace is collapsed, never stripped: this text sits between code elements, and
    # the spaces around them are part of the sentence.
    text = html.escape(re.sub(r"\s+", " ", str(text)), quote=True).replace("@", "@" + _ZERO_WIDTH)
    text = _REFERENCE.sub(rf"\1{_ZERO_WIDTH}", text)
    return re.sub(r"(https?|ftp|mailto|www)([:.])", rf"\1{_ZERO_WIDTH}\2", text, flags=re.IGNORECASE)


def html_prose(text: str) -> str:
    """``prose`` for a place where markdown is not read: inside an HTML block (a line that
    starts with `<details>`, say), where text is HTML as written. Markup characters are made
    entities, `backticked` parts become `<code>` elements, and mentions and references are
    broken as ``inline`` breaks them (GitHub still looks for those in HTML text)."""
    out: list[str] = []
    last = 0
    text = " ".join(str(text).split())
    for found in _CODE_SPAN.finditer(text):
        out.append(_html_inline(text[last : found.start()]))
        out.append(f"<code>{_html_inline(found.group(1))}</code>")
        last = found.end()
    out.append(_html_inline(text[last:]))
    return "".join(out)


# Bidirectional overrides, isolates and marks (they can make quoted text read as something else),
# and control characters but tab.
_INVISIBLE = re.compile(r"[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\x00-\x08\x0a-\x1f\x7f-\x9f]")


def code_block(lines: list[str] | tuple[str, ...], indent: str = "") -> list[str]:
    """Lines of foreign text (a log's) as a fenced code block, each line kept as it is but
    inert: GitHub renders neither markup, mentions nor HTML inside it, the fence is longer than
    any run of backticks in the text, bidirectional and control characters are dropped, and
    `<!--` is broken so no line can pass for one of rocmbot's hidden markers. ``indent`` puts
    the block in a list item."""
    clean = [_INVISIBLE.sub("", part.replace("\t", "    ")).replace("<!--", f"<!-{_ZERO_WIDTH}-")
             for line in lines for part in str(line).split("\n")]
    longest = max((len(run) for line in clean for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{indent}{fence}", *(f"{indent}{line}".rstrip() for line in clean), f"{indent}{fence}"]

