"""Slash commands in PR comments: `/run-amd ...` and `/approve-amd`, parsed from text only."""

from __future__ import annotations

import difflib
import re
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
_NEAR = re.compile(r"^/(run|approve|rerun|amd|rocm)[\w-]*", re.IGNORECASE)


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


def parse(body: str) -> Command | None:
    """The command a comment carries, or None when it carries none."""
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
        if _NEAR.match(head):
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
