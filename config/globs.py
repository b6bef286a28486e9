"""The glob syntax of `.github/rocmbot.yml` (and of the analysis's own globs): what a glob
matches, and why one is not valid.

``**/`` matches any number of folders (none included) and ``**`` elsewhere any characters;
``*`` and ``?`` stay within one path segment; ``[...]`` is a character class (``!`` or ``^``
first negates it, a ``]`` first is a member, ``a-z`` a range). A ``[`` without its ``]`` and a
backslash are ordinary characters. A class whose range runs backwards (``[z-a]``) makes the
glob invalid: :func:`glob_problem` says why, and :func:`glob_matcher` takes such a glob
literally, so that it matches only the path spelled as it is.

A glob is rewritten into wcmatch's syntax and matched by wcmatch, which is imported with the
first glob matched (it costs some 20 ms): nothing here turns a glob into a regular expression
by hand. The class reader and the wcmatch helpers also serve the workflow globs
(:mod:`bot.analysis.ci.globs`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

Matcher = Callable[[str], object]  # None when the text does not match

# wcmatch's syntax characters (extended globs and braces included), escaped when literal
_SYNTAX = frozenset("*?[]\\()|!@+{}")
_CLASS_SYNTAX = frozenset("\\]-[^!")


@dataclass(frozen=True, slots=True)
class CharClass:
    """A ``[...]`` read from a pattern: its members as ranges, and where it ends."""

    text: str  # as written, brackets included
    end: int  # the index after its `]`
    negated: bool
    ranges: tuple[tuple[str, str], ...]  # (low, high); a single character is (c, c)

    def problem(self) -> str | None:
        """Why the class is not valid: a range that runs backwards."""
        for low, high in self.ranges:
            if low > high:
                return f"the range {low}-{high} in {self.text} runs backwards"
        return None

    def wcmatch(self) -> str:
        """The class in wcmatch's syntax (every member literal)."""
        members = "".join(
            _class_char(low) if low == high else f"{_class_char(low)}-{_class_char(high)}"
            for low, high in self.ranges
        )
        return f"[{'!' if self.negated else ''}{members}]"


def _class_char(char: str) -> str:
    return "\\" + char if char in _CLASS_SYNTAX else char


def read_class(pattern: str, start: int, *, posix: bool = True, escapes: bool = False) -> CharClass | None:
    """The class opening at ``pattern[start]`` (a ``[``), or None when it has no ``]``.

    ``posix``: a leading ``!`` or ``^`` negates it, and a ``]`` right after the opening (and
    negation) is a member; otherwise a ``]`` always closes. ``escapes``: a backslash makes
    the next character a plain member.
    """
    if pattern.find("]", start + 1) < 0:  # at once: a pattern of many `[` stays linear to read
        return None
    i = start + 1
    negated = posix and pattern[i:i + 1] in ("!", "^")
    i += negated
    members: list[tuple[str, bool]] = []  # (character, escaped)
    first = posix
    while i < len(pattern) and (pattern[i] != "]" or first):
        first = False
        escaped = escapes and pattern[i] == "\\" and i + 1 < len(pattern)
        i += escaped
        members.append((pattern[i], escaped))
        i += 1
    if i >= len(pattern):
        return None
    ranges: list[tuple[str, str]] = []
    k = 0
    while k < len(members):
        if k + 2 < len(members) and members[k + 1] == ("-", False):
            ranges.append((members[k][0], members[k + 2][0]))
            k += 3
        else:
            ranges.append((members[k][0], members[k][0]))
            k += 1
    return CharClass(pattern[start:i + 1], i + 1, negated, tuple(ranges))


def escape(text: str) -> str:
    """Text that wcmatch reads literally."""
    return "".join("\\" + c if c in _SYNTAX else c for c in text)


def compile_wcmatch(patterns: Sequence[str], flags: int, *, path: bool) -> Matcher:
    """A matcher of any of ``patterns`` (wcmatch's syntax): ``path`` matches them as path
    globs (``wcmatch.glob``), otherwise as plain strings (``wcmatch.fnmatch``).

    wcmatch translates them (its ``translate``); the regular expressions it gives are
    compiled once, here, so that a match costs what one regular expression's does. Raises
    what wcmatch raises for a pattern it refuses (too many brace expansions, say).
    """
    from wcmatch import fnmatch, glob

    translate = glob.translate if path else fnmatch.translate
    include, _ = translate(list(patterns), flags=flags)  # no NEGATE flag: nothing excluded
    return re.compile("|".join(f"(?:{source})" for source in include)).fullmatch


def literal(pattern: str) -> Matcher:
    """The matcher of an invalid pattern: the path spelled as the pattern is (True for it,
    None for any other, as a regular expression's ``fullmatch`` answers)."""
    return {pattern: True}.get


@dataclass(frozen=True, slots=True)
class Invalid:
    """Why a pattern is not valid in its syntax."""

    reason: str


def glob_problem(pattern: str) -> str | None:
    """Why a glob of the configuration is not valid, or None when it is."""
    found = _translate(pattern)
    return found.reason if isinstance(found, Invalid) else None


def _translate(pattern: str) -> str | Invalid:
    """The glob in wcmatch's `fnmatch` syntax, or why it is not valid."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("*(*([!/])/)")  # any folders, none included
            i += 3
        elif pattern.startswith("**", i):
            out.append("*")  # anything, across folders
            i += 2
        elif char == "*":
            out.append("*([!/])")
            i += 1
        elif char == "?":
            out.append("[!/]")
            i += 1
        elif char == "[" and (cls := read_class(pattern, i)) is not None:
            problem = cls.problem()
            if problem is not None:
                return Invalid(problem)
            out.append(cls.wcmatch())
            i = cls.end
        else:
            out.append(escape(char))
            i += 1
    return "".join(out)


@lru_cache(maxsize=1024)
def glob_matcher(pattern: str) -> Matcher:
    """Whether a path matches a glob of the configuration (an invalid glob: the path equal to it)."""
    from wcmatch import fnmatch

    translated = _translate(pattern)
    if isinstance(translated, Invalid):
        return literal(pattern)
    return compile_wcmatch([translated], fnmatch.EXTMATCH | fnmatch.DOTMATCH, path=False)
