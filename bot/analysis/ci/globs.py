"""The globs of workflows: GitHub's `on.<event>.paths` filters and dorny/paths-filter's
picomatch patterns, matched by wcmatch and never raising.

Each pattern is rewritten into wcmatch's syntax (nothing is made into a regular expression
by hand) and compiled once (the matchers run for thousands of paths). A pattern that is not
valid in its syntax is taken literally: it matches only the path spelled as it is.
:func:`glob_problem` (the configuration's globs, :mod:`config.globs`) is here too.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise

from config.globs import (
    CharClass,
    Invalid,
    Matcher,
    compile_wcmatch,
    escape,
    glob_problem,
    literal,
    read_class,
)

__all__ = ["github_paths_match", "glob_problem", "paths_trigger", "picomatch"]

_STAR = "star"  # what the last piece of a GitHub pattern is: a star, a quantified atom ...
_ATOM = "atom"  # ... or one character (a class, an escaped character) that `?` or `+` repeats


# --- GitHub: on.<push|pull_request>.paths and paths-ignore ------------------------------------

def _github(pattern: str) -> str | Invalid:
    """A GitHub path pattern (no leading `!`) in wcmatch's `fnmatch` syntax, or why it is
    not valid, after GitHub's "filter pattern cheat sheet": ``*`` matches any characters but
    ``/``, ``**`` any characters (``**/`` any folders, none included), ``?`` and ``+`` make
    the preceding character optional or repeated, ``[...]`` is one alphanumeric character
    listed or in a range (``a-z``, ``A-Z``, ``0-9``), and a backslash escapes a character.
    """
    out: list[str] = []
    last: str | None = None
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("*(*([!/])/)")
            last, i = _STAR, i + 3
        elif pattern.startswith("**", i):
            out.append("*")
            last, i = _STAR, i + 2
        elif char == "*":
            out.append("*([!/])")
            last, i = _STAR, i + 1
        elif char in "?+" and last == _ATOM:
            out[-1] = f"{'?' if char == '?' else '+'}({out[-1]})"
            last, i = _STAR, i + 1
        elif char in "?+" and last is not None:
            if char == "+":
                return Invalid(f"`+` at {i} repeats nothing: it follows `*` or another `?` or `+`")
            i += 1  # a lazy `?`: it matches what the piece before it matches
        elif char == "[":
            cls = read_class(pattern, i, posix=False)
            if cls is None:
                return Invalid(f"the `[` at {i} has no `]`")
            problem = cls.problem() or _github_class_problem(cls.text, cls.ranges)
            if problem is not None:
                return Invalid(problem)
            out.append(cls.wcmatch())
            last, i = _ATOM, cls.end
        elif char == "\\":
            if i + 1 == len(pattern):
                return Invalid("the pattern ends with a lone `\\`")
            out.append(escape(pattern[i + 1]))
            last, i = _ATOM, i + 2
        else:
            out.append(escape(char))
            last, i = _ATOM, i + 1
    return "".join(out)


def _github_class_problem(text: str, ranges: tuple[tuple[str, str], ...]) -> str | None:
    if not ranges:
        return f"{text} lists no character"
    for low, high in ranges:
        kinds = {_alnum_kind(low), _alnum_kind(high)}
        if None in kinds or len(kinds) > 1:
            return f"{text} may hold only letters and digits, and ranges within a-z, A-Z or 0-9"
    return None


def _alnum_kind(char: str) -> str | None:
    for kind in ("az", "AZ", "09"):
        if kind[0] <= char <= kind[1]:
            return kind
    return None


@lru_cache(maxsize=4096)
def _github_matcher(pattern: str) -> tuple[bool, Matcher]:
    """Whether the pattern excludes (a leading `!`), and the matcher of the rest."""
    from wcmatch import fnmatch

    negative = pattern.startswith("!")
    body = pattern[negative:]
    translated = _github(body)
    if isinstance(translated, Invalid):
        return negative, literal(body)
    return negative, compile_wcmatch([translated], fnmatch.EXTMATCH | fnmatch.DOTMATCH, path=False)


def github_paths_match(patterns: Sequence[str], path: str) -> bool:
    """Whether a path is selected by an ordered list of GitHub path patterns: the last
    pattern that matches it decides, a pattern with a leading ``!`` excluding what earlier
    ones selected (and a later plain pattern selecting it again). An invalid pattern
    matches only the path equal to it (its `!` aside)."""
    selected = False
    for pattern in patterns:
        negative, matcher = _github_matcher(pattern)
        if matcher(path):
            selected = not negative
    return selected


def paths_trigger(
    paths: Sequence[str] | None, paths_ignore: Sequence[str] | None, changed: Collection[str]
) -> bool:
    """Whether a push or pull request changing ``changed`` runs a workflow with these filters.

    ``paths``: some changed file is selected by the patterns. ``paths-ignore``: not every
    changed file is selected by them (its patterns are read in the same way, a `!` pattern
    taking a file back). No filter (or an empty list): it runs. GitHub refuses both filters
    on one event; given both, both must let the change through.
    """
    if paths and not any(github_paths_match(paths, p) for p in changed):
        return False
    return not (paths_ignore and all(github_paths_match(paths_ignore, p) for p in changed))


# --- dorny/paths-filter: picomatch with `dot: true` -------------------------------------------

_EXT = re.compile(r"\.[^\\/.]+")  # picomatch's test for a file extension after `!(*...)`
_REGEX_CHARS = frozenset("-*+?.^${}(|)[]")  # a class holding none also matches its text


def _negation(pattern: str) -> tuple[bool, str]:
    """Picomatch's leading `!`s: an odd count negates; a `!(` is an extended glob instead."""
    count = 0
    while pattern[count:count + 1] == "!" and not _extglob_at(pattern, count):
        count += 1
    return count % 2 == 1, pattern[count:]


def _extglob_at(pattern: str, i: int) -> bool:
    return pattern[i + 1:i + 2] == "(" and pattern[i + 2:i + 3] != "?"


@dataclass(frozen=True, slots=True)
class _Shape:
    """Where a picomatch pattern's parts are: top-level slashes, `!(...)` groups (the index of
    the `!`, of the `)` and of each top-level `|`) and character classes."""

    slashes: list[int] = field(default_factory=list)
    negations: list[tuple[int, int, list[int]]] = field(default_factory=list)
    classes: list[CharClass] = field(default_factory=list)


def _shape(pattern: str) -> _Shape | Invalid:
    """The pattern's :class:`_Shape`, or why it is not valid (a range that runs backwards)."""
    shape = _Shape()
    open_groups: list[tuple[int, list[int]]] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "[" and (cls := read_class(pattern, i, escapes=True)) is not None:
            problem = cls.problem()
            if problem is not None:
                return Invalid(problem)
            shape.classes.append(cls)
            i = cls.end
            continue
        if char == "(":
            open_groups.append((i, []))
        elif char == "|" and open_groups:
            open_groups[-1][1].append(i)
        elif char == ")" and open_groups:
            start, bars = open_groups.pop()
            if start > 0 and pattern[start - 1] == "!":
                shape.negations.append((start - 1, i, bars))
        elif char == "/" and not open_groups:
            shape.slashes.append(i)
        i += 1
    return shape


def _picomatch_globs(pattern: str) -> list[str] | Invalid:
    """Patterns in wcmatch's glob syntax that together match what picomatch's does.

    Picomatch reads most of bash's extended globs as wcmatch does; four of its readings are
    rewritten: a ``!(a|b)`` with more pattern after it only refuses names that *start* with
    ``a`` or ``b`` (its look-ahead is not anchored); a class without `-`, `^` or another
    character special to regular expressions also matches its own text, and ``!`` does not
    negate it (``[!b]`` is the text ``[!b]``, ``!`` or ``b``; ``[^b]`` negates); a leading
    ``**`` that is not a whole segment spans folders (``**.md`` is ``**/*.md``); and ``x/**``
    matches ``x`` itself, as does ``x/**/T`` when ``T`` can match nothing (``!(*.md)``,
    ``?(..)``, ``*(..)``). A leading ``./`` is dropped. Patterns that put extended globs side
    by side (``!(a)!(b)``) can still differ from picomatch's reading.
    """
    shape = _shape(pattern)
    if isinstance(shape, Invalid):
        return shape
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
    for bang, close, bars in shape.negations:
        rest = pattern[close + 1:]
        inner = pattern[bang + 2:close]
        at_end = not rest.strip(")")
        extension = "*" in inner and _EXT.fullmatch(rest) is not None
        spans_folders = "/" in inner and len(inner) > 1
        if not (at_end or extension or spans_folders):
            edits.extend((index, index, "*") for index in [*bars, close])
    for cls in shape.classes:
        members = cls.text[1:-1]
        if not _REGEX_CHARS & set(members):
            members = "\\" + members if members.startswith("!") else members
            edits.append((cls.end - len(cls.text), cls.end, f"@({escape(cls.text)}|[{members}])"))
    rewritten = pattern
    for start, end, text in sorted(edits, reverse=True):
        rewritten = rewritten[:start] + text + rewritten[end:]
    if rewritten.startswith("**") and rewritten[2:3] not in ("", "/"):
        rewritten = "**/*" + rewritten[2:]
    globs = [rewritten]
    segments = _segments(rewritten)
    for k, segment in enumerate(segments):
        if segment == "**" and k > 0:
            tail = segments[k + 1:]
            if not tail or (len(tail) == 1 and _may_be_empty(tail[0])):
                globs.append("/".join(segments[:k]))
    return globs


def _segments(pattern: str) -> list[str]:
    shape = _shape(pattern)
    assert not isinstance(shape, Invalid)  # the same classes as the pattern read before
    cuts = [-1, *shape.slashes, len(pattern)]
    return [pattern[a + 1:b] for a, b in pairwise(cuts)]


def _may_be_empty(segment: str) -> bool:
    """Whether a segment is only extended globs that can match nothing: `!(..)`, `?(..)`, `*(..)`."""
    i = 0
    while i < len(segment):
        if segment[i] not in "!?*" or segment[i + 1:i + 2] != "(":
            return False
        depth, i = 1, i + 2
        while i < len(segment) and depth:
            depth += {"(": 1, ")": -1}.get(segment[i], 0)
            i += 1
    return bool(segment)


@lru_cache(maxsize=4096)
def _picomatch_matcher(pattern: str) -> Matcher:
    from wcmatch import glob
    from wcmatch._wcparse import PatternLimitException  # wcmatch exports it from no public module

    negated, body = _negation(pattern)
    globs = _picomatch_globs(body.removeprefix("./"))
    if isinstance(globs, Invalid):
        return literal(pattern)
    try:
        matcher = compile_wcmatch(globs, glob.GLOBSTAR | glob.EXTGLOB | glob.BRACE | glob.DOTGLOB, path=True)
    except PatternLimitException:  # a brace expanding to more than wcmatch's 1,000 patterns
        return literal(pattern)
    return (lambda path: not matcher(path)) if negated else matcher


def picomatch(pattern: str, path: str) -> bool:
    """Whether dorny/paths-filter's picomatch (``dot: true``) matches a path to a pattern.

    ``**`` spans folders, ``*`` and names match dot files, extended globs (``!(a|b)``,
    ``@(..)``, ``*(..)``, ``+(..)``, ``?(..)``) and braces work, and a leading ``!`` negates
    the whole pattern (an odd number of them): ``!**/*.md`` matches every path that is not
    Markdown. As picomatch does, a path spelled as the pattern matches it, and an invalid
    pattern (``[z-a]``) matches only that path. Unlike picomatch, a brace range of numbers
    (``{1..10}``) is expanded as bash does.
    """
    return path == pattern or bool(_picomatch_matcher(pattern)(path))
