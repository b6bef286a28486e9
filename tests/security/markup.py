"""What GitHub would show for a markdown body, with GitHub's own renderer (cmark-gfm) as the
oracle: the tags it produces, its HTML comments, and the text that GitHub's later passes
(mentions, issue references) would act on.

Raw HTML is let through the renderer (``CMARK_OPT_UNSAFE``) so that any that leaks shows up
as a tag here, rather than being dropped silently as GitHub's sanitizer would.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser

import cmarkgfm  # type: ignore[import-untyped]
from cmarkgfm.cmark import Options  # type: ignore[import-untyped]

from bot.github.publish import STATE_PREFIX, STATE_SUFFIX

# Tags rocmbot's own templates produce; a link (`a`) or an image (`img`) is never one of them.
OURS = frozenset({
    "p", "code", "strong", "em", "h3", "ul", "li", "table", "thead", "tbody", "tr", "th", "td",
    "details", "summary", "br", "pre",
})
# What GitHub turns into a notification, a link or a cross-reference in rendered text.
MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")
REFERENCE = re.compile(r"(?<![\w&])#\d|\bGH-\d|[\w.-]+/[\w.-]+#\d", re.IGNORECASE)
BARE_URL = re.compile(r"(?i)\b(?:https?://|www\.|mailto:|ftp://)")
# rocmbot's own hidden markers: the summary's and its runs section's, the review's, a command
# reply's, a refusal's or waiting answer's (one per answer and head), and the reply to a review.
OWN_COMMENT = re.compile(
    r" rocmbot:(?:summary|review|runs|/runs|reply \d+:[0-9a-f]+|answer [0-9a-f]+:[0-9a-f]+"
    r"|review-reply \d+) ")


@dataclass
class Rendered:
    html: str
    tags: Counter[str] = field(default_factory=Counter)
    attributes: list[tuple[str, str, str | None]] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    declarations: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)  # outside code: what GitHub's passes read


class _Scanner(HTMLParser):
    def __init__(self, out: Rendered) -> None:
        super().__init__(convert_charrefs=True)
        self.out = out
        self.in_code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.tags[tag] += 1
        self.out.attributes.extend((tag, name, value) for name, value in attrs)
        if tag in ("code", "pre"):
            self.in_code += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.tags[tag] += 1
        self.out.attributes.extend((tag, name, value) for name, value in attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self.in_code = max(0, self.in_code - 1)

    def handle_data(self, data: str) -> None:
        if not self.in_code:
            self.out.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.out.comments.append(data)

    def handle_decl(self, decl: str) -> None:
        self.out.declarations.append(decl)

    def handle_pi(self, data: str) -> None:
        self.out.declarations.append(data)

    def unknown_decl(self, data: str) -> None:
        self.out.declarations.append(data)


def render(markdown: str) -> Rendered:
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    out = Rendered(html)
    scanner = _Scanner(out)
    scanner.feed(html)
    scanner.close()
    return out


def problems(markdown: str, logins: frozenset[str] = frozenset()) -> list[str]:
    """Everything in a body that PR text could have turned into markup that acts.

    ``logins``: accounts the template itself names (`@dev has read permission`), not PR text.
    """
    shown = render(markdown)
    found: list[str] = []
    for tag in shown.tags:
        if tag not in OURS:
            found.append(f"<{tag}> in the rendered body")
    for tag, name, value in shown.attributes:
        if not (tag in ("td", "th") and name == "align"):
            found.append(f"<{tag} {name}={value!r}> in the rendered body")
    for comment in shown.comments:
        if OWN_COMMENT.fullmatch(comment):
            continue
        full = f"<!--{comment}-->"
        if full.startswith(STATE_PREFIX) and full.endswith(STATE_SUFFIX):
            try:
                json.loads(full[len(STATE_PREFIX) : -len(STATE_SUFFIX)])
                continue
            except ValueError:
                pass
        found.append(f"an HTML comment that is not rocmbot's: {comment[:80]!r}")
    found.extend(f"a declaration {d[:40]!r}" for d in shown.declarations)
    text = "".join(shown.text)
    for login in logins:
        text = re.sub(rf"@{re.escape(login)}\b", "(login)", text)
    for name, pattern in (("a mention", MENTION), ("an issue reference", REFERENCE),
                          ("a bare URL", BARE_URL)):
        hit = pattern.search(text)
        if hit:
            found.append(f"{name} in the text: {text[max(0, hit.start() - 20):hit.end() + 20]!r}")
    return found


def structure(markdown: str) -> Counter[str]:
    """The tags of a body other than code spans: the same for any text in the same template."""
    tags = render(markdown).tags.copy()
    del tags["code"]
    return tags
