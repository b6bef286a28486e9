"""What a shell word or test comes to, given what is known of the script's variables.

A word expands to pieces of text, each known or not (`$X` unknown, `$(cmd)`, an expression's
value not known); an unquoted expansion may split into several words or name files, and then
the whole word is unknown where that matters. `[[ ]]`, `[ ]`/`test` and `case` patterns are
decided three-valued (True, False, None: not known): `==`, `=`, `!=`, `-z`, `-n`, integer
comparisons, `!`, `( )`, `&&`/`||` and `-a`/`-o`; any other test (`=~`, `-f`, `<`) is unknown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from bot.analysis.ci import script as sh
from bot.analysis.ci.logic import and3, not3, or3
from bot.analysis.ci.script import MARK

Segs = tuple[str | None, ...]  # text in pieces; None: a piece that is not known

_INT = re.compile(r"[+-]?[0-9]+")
_UNARY = frozenset("-" + c for c in "abcdefghknoprstuvwxzGLNORS")
_BINARY = frozenset({"==", "=", "!=", "=~", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge",
                     "-nt", "-ot", "-ef"})
_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__,
    "-gt": int.__gt__, "-ge": int.__ge__,
}


def joined(segs: Iterable[str | None]) -> str | None:
    """The text when every piece is known."""
    pieces = list(segs)
    if any(s is None or MARK in s for s in pieces):
        return None
    return "".join(s for s in pieces if s is not None)


@dataclass(frozen=True, slots=True)
class Expanded:
    """A word as expanded."""

    segs: Segs
    single: bool  # exactly one word (no splitting or globbing that may change the count)
    pattern: bool  # has unquoted glob characters (a pattern in `[[ == ]]` and `case`)

    @property
    def value(self) -> str | None:
        return joined(self.segs) if self.single else None


def expand(word: sh.Word, vars: Mapping[str, str], split: bool) -> Expanded:
    """A word with the variables known (``vars``); ``split``: where bash splits words and
    expands file names (a command's arguments, not an assignment nor `[[ ]]`)."""
    segs: list[str | None] = []
    single = True
    pattern = False
    for part in word.parts:
        if isinstance(part, sh.Lit):
            segs.append(part.text)
            pattern = pattern or (not part.quoted and _globby(part.text))
        elif isinstance(part, sh.Var):
            value = vars.get(part.name)
            if not part.quoted and (not value or any(c in value for c in " \t\n")):
                single = single and not split
                value = None if split else value
            pattern = pattern or (not part.quoted and value is not None and _globby(value))
            segs.append(value)
        else:
            segs.append(None)
            single = single and (part.quoted or not split)
    if split and pattern:  # unquoted glob characters name files
        return Expanded((None,), False, True)
    return Expanded(tuple(segs), single, pattern)


def _globby(text: str) -> bool:
    """Whether unquoted text is a pattern: `*`, `?`, or a `[` that a `]` closes."""
    bracket = text.find("[")
    return "*" in text or "?" in text or (bracket != -1 and "]" in text[bracket + 1:])


def int_value(text: str | None) -> int | None:
    """A decimal integer's value (not one of thousands of digits)."""
    return int(text) if text is not None and len(text) < 19 and _INT.fullmatch(text) else None



@dataclass(frozen=True, slots=True)
class _Item:
    op: str | None  # the operator this item may be
    value: str | None
    pattern: str | None = None  # as a pattern: its literal text; None when it has glob chars
    anything: bool = False  # the pattern `*`


class _TestParser:
    """`[[ ]]` and `[ ]` expressions over items, three-valued; malformed ones are unknown."""

    def __init__(self, items: list[_Item], and_: str, or_: str, patterns: bool) -> None:
        self.items, self.and_, self.or_, self.patterns = items, and_, or_, patterns
        self.i = 0
        self.depth = 0

    def decide(self) -> bool | None:
        try:
            value = self.or_expr()
        except (IndexError, ValueError):
            return None
        return value if self.i == len(self.items) else None

    def at(self, op: str) -> bool:
        return self.i < len(self.items) and self.items[self.i].op == op

    def or_expr(self) -> bool | None:
        value = self.and_expr()
        while self.at(self.or_):
            self.i += 1
            value = or3(value, self.and_expr())
        return value

    def and_expr(self) -> bool | None:
        value = self.not_expr()
        while self.at(self.and_):
            self.i += 1
            value = and3(value, self.not_expr())
        return value

    def not_expr(self) -> bool | None:
        self.depth += 1
        if self.depth > sh.MAX_NESTING:
            raise ValueError("nested too deeply")
        if self.at("!") and self.i + 1 < len(self.items):
            self.i += 1
            value = not3(self.not_expr())
        else:
            value = self.primary()
        self.depth -= 1
        return value

    def primary(self) -> bool | None:
        items, i = self.items, self.i
        if items[i].op == "(":
            self.i += 1
            value = self.or_expr()
            if not self.at(")"):
                raise ValueError("`)` expected")
            self.i += 1
            return value
        if items[i].op in _UNARY and i + 1 < len(items):
            self.i += 2
            operand = items[i + 1].value
            if items[i].op not in ("-z", "-n") or operand is None:
                return None
            return (operand == "") == (items[i].op == "-z")
        if i + 2 < len(items) and items[i + 1].op in _BINARY:
            self.i += 3
            return self.binary(items[i + 1].op, items[i], items[i + 2])
        self.i += 1
        return None if items[i].value is None else items[i].value != ""

    def binary(self, op: str | None, left: _Item, right: _Item) -> bool | None:
        if op in ("==", "=", "!="):
            if self.patterns and right.anything:
                equal: bool | None = True
            else:
                other = right.pattern if self.patterns else right.value
                equal = None if left.value is None or other is None else left.value == other
            return not3(equal) if op == "!=" else equal
        a, b = int_value(left.value), int_value(right.value)
        if op in _COMPARE and a is not None and b is not None and not (
                self.patterns and _octal(left.value or "", right.value or "")):
            return _COMPARE[op](a, b)
        return None


def _octal(*values: str) -> bool:
    """`[[ 010 -eq 8 ]]` reads 010 as octal: leave such numbers undecided."""
    return any(v.lstrip("+-").startswith("0") and len(v.lstrip("+-")) > 1 for v in values)


def double_bracket(test: sh.DoubleBracket, vars: Mapping[str, str]) -> bool | None:
    """Whether `[[ ... ]]` holds: operators are read from the syntax, an unquoted right side
    of `==`/`!=` is a pattern."""
    items: list[_Item] = []
    for item in test.items:
        if isinstance(item, str):
            items.append(_Item(item, item))
            continue
        found = expand(item, vars, False)
        value = joined(found.segs)
        items.append(_Item(item.plain, value, None if found.pattern else value,
                           item.plain == "*"))
    return _TestParser(items, "&&", "||", True).decide() if items else None


def single_bracket(values: list[str | None]) -> bool | None:
    """Whether `[ ... ]` (or `test`) holds, given its arguments as expanded (without `]`)."""
    if not values:
        return False
    if any(v is None for v in values):
        return None
    return _TestParser([_Item(v, v) for v in values], "-a", "-o", False).decide()


def case_match(value: str | None, pattern: sh.Word, vars: Mapping[str, str]) -> bool | None:
    """Whether a `case` pattern matches: `*`, or literal text; other patterns are unknown."""
    if pattern.plain == "*":
        return True
    found = expand(pattern, vars, False)
    literal = None if found.pattern else joined(found.segs)
    return None if value is None or literal is None else value == literal
