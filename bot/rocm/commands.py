"""Slash commands in PR comments: `/run-amd ...` and `/approve-amd`, parsed from text only."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Kind = Literal["run", "all", "paths", "cancel", "help", "approve", "unknown"]

VALID = (
    "/run-amd",
    "/run-amd all",
    "/run-amd <test path> ...",
    "/run-amd cancel",
    "/run-amd help",
    "/run-amd --force",
    "/approve-amd",
)
_FENCE = re.compile(r"^\s*(```|~~~)")
OWN = ("/run-amd", "/approve-amd")  # the words rocmbot's commands start with
# a word part that makes a command rocmbot's to answer, whatever else it says (`/rerun-amd`)
_OWN_PARTS = frozenset({"amd", "rocm"})


@dataclass(frozen=True)
class Command:
    kind: Kind
    paths: tuple[str, ...] = ()
    force: bool = False
    text: str = ""  # the command line as written
    suggestion: str | None = None  # for unknown commands: the closest valid one


def command_line(body: str) -> str | None:
    """The first line that is neither in a code block nor quoted, if it starts with `/`."""
    in_fence = False
    for raw in body.splitlines():
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        line = raw.strip()
        if not line or line.startswith(">") or raw.startswith(("    ", "\t")):
            continue
        return line if line.startswith("/") else None
    return None


def _closest(text: str) -> str:
    words = text.split()
    head = words[0].lower() if words else text
    options = ["/run-amd", "/approve-amd"]
    found = difflib.get_close_matches(head, options, n=1, cutoff=0.0)
    if found and found[0] == "/run-amd" and len(words) > 1:
        word = words[1].lower()
        sub = difflib.get_close_matches(word, ["all", "cancel", "help", "--force"], n=1, cutoff=0.6)
        if sub:
            return f"/run-amd {sub[0]}"
    return found[0] if found else "/run-amd"


def _distance(a: str, b: str) -> int:
    """Levenshtein distance of two short words."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def is_near(head: str, prefixes: Sequence[str] = ()) -> bool:
    """Whether a `/word` that is none of rocmbot's commands is still rocmbot's to answer (with
    the closest command): a slip of one of its words (`/runamd`, `/aprove-amd`: at most two
    edits), a word with `amd` or `rocm` as a part (`/rerun-amd`, `/run-rocm`), or one of the
    repository's ``prefixes`` (`dispatch.command_prefixes`). Any other bot's command
    (`/rerun-failed-ci`, `/run-ci`, `/approve`) is not."""
    word = head.lower().replace("_", "-")
    if any(_distance(word, own) <= 2 for own in OWN):
        return True
    if _OWN_PARTS & set(re.split(r"[-.]", word[1:])):
        return True
    return any(word.startswith(p.lower()) for p in prefixes if p.startswith("/") and len(p) > 1)


def parse(body: str, prefixes: Sequence[str] = ()) -> Command | None:
    """The command a comment carries, or None when it carries none of rocmbot's (another
    bot's command is not rocmbot's to answer: see :func:`is_near`)."""
    line = command_line(body or "")
    if line is None:
        return None
    words = line.split()
    head = words[0].lower()
    if head == "/approve-amd":
        if len(words) == 1:
            return Command("approve", text=line)
        return Command("unknown", text=line, suggestion="/approve-amd")
    if head != "/run-amd":
        if is_near(head, prefixes):
            return Command("unknown", text=line, suggestion=_closest(line))
        return None
    args = words[1:]
    force = "--force" in args
    args = [a for a in args if a != "--force"]
    options = [a for a in args if a.startswith("-")]
    if options:
        return Command("unknown", text=line, suggestion=_closest(line))
    if not args:
        return Command("run", force=force, text=line)
    if args == ["all"]:
        return Command("all", force=force, text=line)
    if args in (["cancel"], ["help"]):
        if force:
            return Command("unknown", text=line, suggestion=f"/run-amd {args[0]}")
        return Command(args[0], text=line)  # type: ignore[arg-type]
    return Command("paths", paths=tuple(dict.fromkeys(args)), force=force, text=line)
