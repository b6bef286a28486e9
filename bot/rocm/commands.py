"""Slash commands in PR comments: `/run-amd ...` and `/approve-amd`, parsed from text only.

What each command looks like is declared once, in :mod:`bot.rocm.command_table`; the parser
and the near-miss suggestions here are made from that table."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.rocm.command_table import COMMANDS, NAMES, CommandSpec, Kind, options

VALID = tuple(c.usage for c in COMMANDS) + tuple(o.example for o in options())
_FENCE = re.compile(r"^\s*(```|~~~)")
OWN = NAMES  # the words rocmbot's commands start with
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
    found = difflib.get_close_matches(head, list(NAMES), n=1, cutoff=0.0)
    name = found[0] if found else NAMES[0]
    specs = [c for c in COMMANDS if c.name == name]
    follow = list(dict.fromkeys([*(c.word for c in specs if c.word is not None),
                                 *(o.flag for c in specs for o in c.options)]))
    if follow and len(words) > 1:
        sub = difflib.get_close_matches(words[1].lower(), follow, n=1, cutoff=0.6)
        if sub:
            return f"{name} {sub[0]}"
    return name


def _distance(a: str, b: str) -> int:
    """Levenshtein distance of two short words."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def slip_of_word(word: str) -> str | None:
    """The command whose word (`cancel`, `disabled`) ``word`` is a slip of, at most two edits
    away, written out (`/run-amd cancel`); None when it is none's. A test path named by
    `/run-amd <path>` that is no file may be one."""
    lowered = word.lower()
    if len(lowered) < 3:
        return None
    near = sorted((_distance(lowered, c.word), c.stem) for c in COMMANDS if c.word is not None)
    return near[0][1] if near and near[0][0] <= 2 else None


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


def _unknown(line: str, suggestion: str) -> Command:
    return Command("unknown", text=line, suggestion=suggestion)


def _entry(specs: Sequence[CommandSpec], args: list[str]) -> tuple[CommandSpec, list[str]] | None:
    """The command the words after the first one make, and its test paths: the command whose
    word comes first, when it takes the paths that follow; else the one without a word that
    takes that many paths (`/run-amd all x.py` names the paths `all` and `x.py`)."""
    first = args[0] if args else None
    for c in specs:
        if c.word is not None and c.word == first and c.takes(len(args) - 1):
            return c, args[1:]
    for c in specs:
        if c.word is None and c.takes(len(args)):
            return c, args
    return None


def parse(body: str, prefixes: Sequence[str] = ()) -> Command | None:
    """The command a comment carries, or None when it carries none of rocmbot's (another
    bot's command is not rocmbot's to answer: see :func:`is_near`)."""
    line = command_line(body or "")
    if line is None:
        return None
    words = line.split()
    head = words[0].lower()
    specs = [c for c in COMMANDS if c.name == head]
    if not specs:
        if is_near(head, prefixes):
            return _unknown(line, _closest(line))
        return None
    flags = {o.flag for c in specs for o in c.options}
    given = {a for a in words[1:] if a in flags}
    args = [a for a in words[1:] if a not in flags]
    if any(a.startswith("-") for a in args):  # an option no command takes
        return _unknown(line, _closest(line))
    found = _entry(specs, args)
    if found is None:
        return _unknown(line, specs[0].stem)
    entry, paths = found
    if given - {o.flag for o in entry.options}:
        return _unknown(line, entry.stem)
    return Command(entry.kind, paths=tuple(dict.fromkeys(paths)), force="--force" in given, text=line)
