"""GitHub Actions expressions (`if:`, `${{ }}`): parsed to GitHub's grammar and evaluated
three-valued, so what cannot be known before a run stays :class:`Unknown`, never guessed."""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any, NamedTuple, TypeAlias

MAX_LENGTH = 21_000  # GitHub's own limits on an expression
MAX_DEPTH = 50
STATUS_FUNCTIONS = frozenset({"success", "failure", "cancelled", "always"})
# what GitHub lets an `if:` read; any other name makes it reject the workflow
_JOB_CONTEXTS = frozenset({"github", "needs", "vars", "inputs"})
_STEP_CONTEXTS = _JOB_CONTEXTS | {"strategy", "matrix", "job", "runner", "env", "steps"}
_LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="))  # loosest first
_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge}
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_RADIX = re.compile(r"0(?:x[0-9a-fA-F]+|o[0-7]+)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_FORMAT = re.compile(r"(\{\{|\}\}|\{[0-9]+\}|[{}])")  # the pieces of a format() string
_OPERATORS = frozenset({"==", "!=", "<=", ">=", "&&", "||"})
_PUNCTUATION = frozenset("()[],!<>*")
_BOUNDARY = frozenset("()[],.!<>=&|")  # what ends a name or a number
_KEYWORDS: dict[str, bool | float | None] = {
    "null": None, "true": True, "false": False, "NaN": math.nan, "Infinity": math.inf}
_KINDS = (("null", type(None)), ("bool", bool), ("number", int | float), ("string", str), ("array", list))


class ExpressionError(ValueError):
    """An expression GitHub would reject: what is wrong and where (an offset into the text)."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at column {position + 1}")
        self.message = message
        self.position = position


@dataclass(frozen=True)
class Unknown:
    """A value not known statically; ``truthy`` is its truthiness when that alone is known."""

    truthy: bool | None = None
    why: str = ""


UNKNOWN = Unknown()
Value: TypeAlias = "bool | float | str | list[Value] | dict[str, Value] | Unknown | None"
Scalar: TypeAlias = "bool | float | str | None"


@dataclass(frozen=True)
class Node:
    """One operation of a parsed expression: ``op`` is an operator (`!`, `==`, `&&`, ...),
    `literal` (``value``), `context` (its name in ``value``), `index` (``args``: target and
    key), `*` (the filter of ``args[0]``) or `call` (``value``: the function, lower case)."""

    op: str
    args: tuple[Node, ...] = ()
    value: Scalar = None


@dataclass
class Context:
    """What an expression reads: the contexts, how earlier jobs or steps ended, the files."""

    values: Mapping[str, Value]
    status: Mapping[str, bool | None]
    files: Callable[[list[str]], Value] | None = None  # hashFiles; None: not known


@dataclass(frozen=True)
class Decision:
    """Whether an `if:` lets its job or step run (``None``: not known); ``notes`` are what is
    wrong with the `if:` itself (it does not parse, GitHub would reject it), ``why`` why a
    sound one is not known (it reads a value known only at run time)."""

    value: bool | None
    notes: tuple[str, ...] = ()
    why: str = ""


class _Filtered(list[Value]):
    """What a `*` filter gives: an array whose further accesses apply to each of its items."""


# -- parsing ---------------------------------------------------------------------------------


class _Token(NamedTuple):
    kind: str  # an operator or punctuation mark, "name", "literal" or "end"
    text: str
    position: int
    value: Scalar = None


def _tokens(text: str, offset: int) -> list[_Token]:
    out: list[_Token] = []
    i = 0
    while i < len(text):
        char, at, after = text[i], offset + i, out[-1].kind if out else ""
        end = i + (2 if text[i:i + 2] in _OPERATORS else 1)
        if char.isspace():
            pass
        elif end > i + 1 or char in _PUNCTUATION or (char == "." and after in ("name", "]", ")", "*")):
            out.append(_Token(text[i:end], text[i:end], at))
        elif char == "'":  # `''` is a quote inside a string
            while (end := text.find("'", end) + 1) and text.startswith("'", end):
                end += 1
            if not end:
                raise ExpressionError("unterminated string", at)
            out.append(_Token("literal", text[i:end], at, text[i + 1:end - 1].replace("''", "'")))
        else:
            number = char in "+-.0123456789"
            while end < len(text) and not text[end].isspace() and (
                    text[end] not in _BOUNDARY or (number and text[end] == ".")):
                end += 1
            word = text[i:end]
            if number and not math.isnan(value := _number(word)):
                out.append(_Token("literal", word, at, value))
            elif not number and after != "." and word in _KEYWORDS:
                out.append(_Token("literal", word, at, _KEYWORDS[word]))
            elif number or not _NAME.fullmatch(word):
                raise ExpressionError(f"unexpected {word!r}", at)
            else:
                out.append(_Token("name", word, at))
        i = end
    return [*out, _Token("end", "", offset + len(text))]


class _Parser:
    """Recursive descent: the binary operators by :data:`_LEVELS`, then `!`, then `.` and
    `[]` after a context, a call or a group."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens, self.at, self.depth = tokens, 0, 0

    def peek(self) -> str:
        return self.tokens[self.at].kind

    def take(self, kind: str = "") -> _Token:
        """The next token, which must be a ``kind`` when one is given."""
        token = self.tokens[self.at]
        if kind and token.kind != kind:
            raise _unexpected(token)
        self.at = min(self.at + 1, len(self.tokens) - 1)
        return token

    def nested(self, parse: Callable[[], Node]) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError(f"nested deeper than {MAX_DEPTH}", self.tokens[self.at].position)
        node = parse()
        self.depth -= 1
        return node

    def expression(self) -> Node:
        return self.nested(partial(self.binary, 0))

    def binary(self, level: int) -> Node:
        if level == len(_LEVELS):
            return self.unary()
        node, operands = self.binary(level + 1), []
        while self.peek() in _LEVELS[level]:
            op = self.take().kind
            if op in ("&&", "||"):  # kept flat: `a || b || c` is one node of three operands
                operands.append(self.binary(level + 1))
            else:
                node = Node(op, (node, self.binary(level + 1)))
        return Node(_LEVELS[level][0], (node, *operands)) if operands else node

    def unary(self) -> Node:
        token = self.take()
        if token.kind == "!":
            return Node("!", (self.nested(self.unary),))
        node = self.primary(token)
        while token.kind != "literal" and self.peek() in (".", "["):
            if self.take().kind == ".":
                name = self.take()
                if name.kind not in ("name", "*"):
                    raise _unexpected(name)
                key = None if name.kind == "*" else Node("literal", value=name.text)
            else:
                key = None if self.peek() == "*" else self.expression()
                self.take("*" if key is None else "]")
                if key is None:
                    self.take("]")
            node = Node("*", (node,)) if key is None else Node("index", (node, key))
        return node

    def primary(self, token: _Token) -> Node:
        if token.kind == "literal":
            return Node("literal", value=token.value)
        if token.kind == "(":
            node = self.expression()
            self.take(")")
            return node
        if token.kind != "name":
            raise _unexpected(token)
        if self.peek() != "(":
            return Node("context", value=token.text)
        self.take()
        args = [] if self.peek() == ")" else [self.expression()]
        while args and self.peek() == ",":
            self.take()
            args.append(self.expression())
        self.take(")")
        if (function := _FUNCTIONS.get(token.text.lower())) is None:
            raise ExpressionError(f"unknown function {token.text}", token.position)
        if not function[0] <= len(args) <= function[1]:
            raise ExpressionError(f"{token.text}() given {len(args)} arguments", token.position)
        return Node("call", tuple(args), token.text.lower())


def _unexpected(token: _Token) -> ExpressionError:
    what = "end of expression" if token.kind == "end" else repr(token.text)
    return ExpressionError(f"unexpected {what}", token.position)


@lru_cache(maxsize=8192)
def parse(text: str) -> Node:
    """The expression in ``text``, bare or wrapped in `${{ }}` (the same text is parsed once:
    a workflow is evaluated for several events)."""
    return _parse(text, 0)


def _parse(text: str, offset: int) -> Node:
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"longer than {MAX_LENGTH} characters", offset)
    start = len(text) - len(text.lstrip())
    if text.startswith("${{", start):
        if (end := _close(text, start + 3)) == -1:
            raise ExpressionError("${{ without a closing }}", offset + start)
        if text[end:].strip():
            raise ExpressionError("text after the closing }}", offset + end)
        text, offset = text[start + 3:end - 2], offset + start + 3
    parser = _Parser(_tokens(text, offset))
    node = parser.expression()
    parser.take("end")
    # `a.b.c...` and `a == b == c...` nest deeper than the parser recursed
    if any(depth > MAX_DEPTH for _, depth in _walk(node)):
        raise ExpressionError(f"nested deeper than {MAX_DEPTH}", offset)
    return node


def _close(text: str, start: int) -> int:
    """Just past the `}}` ending the expression whose body starts at ``start`` (not one in a
    quoted string), or -1. Linear: no character is looked at twice."""
    close = text.find("}}", start)
    while close != -1:
        if (quote := text.find("'", start, close)) == -1:
            return close + 2
        if not (start := text.find("'", quote + 1) + 1):  # `''` closes a string and opens one
            return -1
        if start > close:
            close = text.find("}}", start)
    return -1


def _is_template(text: str) -> bool:
    """GitHub reads a value holding `${{` as a string template unless it is one `${{ }}`."""
    body = text.strip()
    return "${{" in body and not (body.startswith("${{") and _close(body, 3) == len(body))


def _template(text: str) -> Node:
    """`a ${{ b }} c` as GitHub reads it: `format('a {0} c', b)`."""
    pieces: list[str] = []
    args: list[Node] = []
    i = 0
    while (start := text.find("${{", i)) != -1:
        if (end := _close(text, start + 3)) == -1:
            raise ExpressionError("${{ without a closing }}", start)
        pieces += [text[i:start].replace("{", "{{").replace("}", "}}"), f"{{{len(args)}}}"]
        args.append(_parse(text[start:end], start))
        i = end
    pieces.append(text[i:].replace("{", "{{").replace("}", "}}"))
    return Node("call", (Node("literal", value="".join(pieces)), *args), "format")


def _walk(node: Node) -> Iterator[tuple[Node, int]]:
    """Every node under ``node`` with its depth, without recursing."""
    stack = [(node, 1)]
    while stack:
        yield (current := stack.pop())
        stack.extend((child, current[1] + 1) for child in current[0].args)


def references(node: Node) -> set[str]:
    """The context paths ``node`` reads, dotted: `needs.changes.outputs.x`,
    `github.event.pull_request.labels.*.name`, `matrix.list[0]`; a computed key reads as `*`."""
    if (path := _path(node)) is None:
        return set[str]().union(*map(references, node.args))
    out = {path}
    while node.op in ("index", "*"):  # the keys along the path may read contexts themselves
        out |= set[str]().union(*map(references, node.args[1:]))
        node = node.args[0]
    return out


def _path(node: Node) -> str | None:
    if node.op == "context":
        return str(node.value)
    if node.op not in ("index", "*") or (base := _path(node.args[0])) is None:
        return None
    key = node.args[1] if node.op == "index" else Node("*")
    if key.op != "literal" or key.value is None or isinstance(key.value, bool):
        return f"{base}.*"
    return f"{base}.{key.value}" if isinstance(key.value, str) else f"{base}[{_str(key.value)}]"


# -- values ----------------------------------------------------------------------------------


def _kind(value: Value) -> str:
    return next((kind for kind, types in _KINDS if isinstance(value, types)), "object")


def _primitive(value: Value) -> bool:
    return _kind(value) not in ("array", "object")


def truth(value: Value) -> bool | None:
    """GitHub's truthiness: false, 0, NaN, '' and null are false; an Unknown's is its own."""
    if isinstance(value, Unknown):
        return value.truthy
    if isinstance(value, float):
        return value != 0 and not math.isnan(value)
    return bool(value) if _primitive(value) else True


def _number(value: Value) -> float:
    """GitHub's number of a value: null 0, booleans 1 and 0, a string as JSON writes numbers
    (or hex `0x`, octal `0o`; blank is 0), arrays and objects NaN."""
    if value is None or isinstance(value, bool):
        return float(value or 0)
    if not isinstance(value, str):  # an int stays one: a huge one has no float
        return value if isinstance(value, int | float) else math.nan
    text = value.strip()
    if not text or _DECIMAL.fullmatch(text):
        return float(text or 0)
    if _RADIX.fullmatch(text):
        whole = int(text[2:], 16 if text[1] == "x" else 8)
        return float(whole) if whole.bit_length() < 1024 else math.inf
    return {"Infinity": math.inf, "-Infinity": -math.inf}.get(text, math.nan)


def _str(value: Value) -> str:
    """GitHub's string of a value: null '', `true`, whole numbers without `.0`, `Array`."""
    if isinstance(value, float) and math.isfinite(value):
        rounded = float(f"{value:.15f}")  # as GitHub writes numbers: at most 15 decimals
        return str(int(rounded)) if rounded.is_integer() else repr(rounded)
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    if value is None or isinstance(value, bool):
        return "" if value is None else str(value).lower()
    return str(value) if _primitive(value) else "Array" if isinstance(value, list) else "Object"


def _compare(op: str, left: Value, right: Value) -> bool:
    """GitHub's loose comparison: mixed primitives as numbers, strings case-insensitively,
    an array or object equal only to itself."""
    if _kind(left) != _kind(right) and _primitive(left) and _primitive(right):
        left, right = _number(left), _number(right)
    if isinstance(left, str) and isinstance(right, str):
        left, right = left.upper(), right.upper()
    elif left is None or _kind(left) != _kind(right) or not _primitive(left):
        same = left is right
        return same if op in ("==", "<=", ">=") else op == "!=" and not same
    return _ORDER[op](left, right)


def _doubt(*values: Value) -> Unknown | None:
    """An Unknown for a result that depends on ``values``, when one of them is unknown."""
    unknown = [v for v in values if isinstance(v, Unknown)]
    return Unknown(why=next((v.why for v in unknown if v.why), "")) if unknown else None


# -- evaluation ------------------------------------------------------------------------------


def evaluate(node: Node, context: Context) -> Value:
    """The value of ``node``; never raises: what is not known is :class:`Unknown`."""
    op, args = node.op, node.args
    if op == "literal":
        return node.value
    if op == "context":
        found = _members(context.values, node.value)
        return found[0] if found else Unknown(why=f"unknown context {node.value}")
    if op in ("&&", "||"):
        return _logic(op == "&&", args, context)
    values = [evaluate(arg, context) for arg in args]
    if op == "call":
        return _FUNCTIONS[str(node.value)][2](values, context)
    if op == "!":
        known = truth(values[0])
        return _doubt(values[0]) if known is None else not known
    if op in ("index", "*"):
        return _access(values[0], values[1] if op == "index" else None, star=op == "*")
    return _doubt(*values) or _compare(op, *values)


def _members(target: Value | Mapping[str, Value], key: Value, *, star: bool = False) -> Sequence[Value]:
    """What `target[key]` (`target[*]` when ``star``) gives, as a list: empty when nothing
    is there. Keys of objects match case-insensitively, as in GitHub."""
    if star:
        return target if isinstance(target, list) else (
            list(target.values()) if isinstance(target, Mapping) else [])
    if not _primitive(key):
        return []
    if isinstance(target, list):
        index = _number(key)
        return [target[int(index)]] if 0 <= index < len(target) else []
    if not isinstance(target, Mapping):
        return []
    if (name := _str(key)) in target:
        return [target[name]]
    return [v for k, v in target.items() if isinstance(k, str) and k.upper() == name.upper()][:1]


def _access(target: Value, key: Value, *, star: bool) -> Value:
    """`target[key]` or `target[*]`; of each item of what a `*` filter gave; null if missing."""
    if isinstance(target, _Filtered):
        out = _Filtered()
        for item in target:
            if doubt := _doubt(item, key):
                return Unknown(True, doubt.why)  # an array, whatever its items
            out.extend(_members(item, key, star=star))
        return out
    if doubt := _doubt(target, key):
        return Unknown(True if star else None, doubt.why)
    found = _members(target, key, star=star)
    return _Filtered(found) if star else found[0] if found else None


def _logic(conjunction: bool, operands: tuple[Node, ...], context: Context) -> Value:
    """`&&` gives its first falsy operand, `||` its first truthy one, else the last. When an
    operand of unknown truthiness may have been that one, the result is known only as far
    as every possibility agrees."""
    stop = not conjunction
    doubt: Unknown | None = None  # an earlier operand that may have stopped the walk
    value: Value = None
    for position, operand in enumerate(operands):
        value = evaluate(operand, context)
        known = truth(value)
        if known is stop:
            return value if doubt is None else Unknown(stop, doubt.why)
        if known is None and doubt is None and position < len(operands) - 1:
            doubt = _doubt(value)
    return value if doubt is None else Unknown(why=doubt.why)


# -- functions -------------------------------------------------------------------------------


def _contains(search: Value, item: Value) -> Value:
    if not isinstance(search, list):
        return _affix(lambda text, part: part in text, search, item)
    if not isinstance(item, Unknown) and any(
            not isinstance(v, Unknown) and _compare("==", v, item) for v in search):
        return True
    return (_doubt(*search, item) if search else None) or False


def _affix(test: Callable[[str, str], bool], text: Value, part: Value) -> Value:
    """``test`` of two strings, case-insensitively; false when either is not a primitive."""
    if not all(_primitive(v) for v in (text, part) if not isinstance(v, Unknown)):
        return False
    return _doubt(text, part) or test(_str(text).upper(), _str(part).upper())


def _format(template: Value, *args: Value) -> Value:
    """`format('{0} and {{braces}}', x)`; an invalid template is Unknown, not an error."""
    if isinstance(template, Unknown):
        return Unknown(why=template.why)
    text, out, doubt = _str(template), [], None
    for i, piece in enumerate(_FORMAT.split(text)):
        if i % 2 == 0 or piece in ("{{", "}}"):
            out.append(piece[:1] if i % 2 else piece)
        elif len(piece) < 3:
            return Unknown(why=f"format string {text!r} is invalid")
        elif len(piece) > 5 or int(piece[1:-1]) >= len(args):
            return Unknown(why=f"format string {text!r} needs more arguments")
        else:
            arg = args[int(piece[1:-1])]
            doubt = doubt or _doubt(arg)
            out.append("" if isinstance(arg, Unknown) else _str(arg))
    if doubt is not None:  # known text in it means it is not empty
        return Unknown(True if "".join(out) else None, doubt.why)
    return "".join(out)


def _join(items: Value, separator: Value = ",") -> Value:
    if not isinstance(items, list):
        return _doubt(items) or (_str(items) if _primitive(items) else "")
    if doubt := _doubt(*items, *([separator] if len(items) > 1 else [])):
        return doubt
    return (_str(separator) if _primitive(separator) else ",").join(map(_str, items))


def _plain(value: Value) -> object:
    """``value`` as :mod:`json` writes it (whole numbers without `.0`); an Unknown in it
    raises ValueError with its reason."""
    if isinstance(value, Unknown):
        raise ValueError(value.why)
    if isinstance(value, list | Mapping):
        return [_plain(v) for v in value] if isinstance(value, list) else {
            k: _plain(v) for k, v in value.items()}
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _to_json(value: Value) -> Value:
    try:
        return json.dumps(_plain(value), indent=2, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError) as error:
        return Unknown(why=str(error))


def _from_json(value: Value) -> Value:
    try:
        parsed: Value = _doubt(value) or json.loads(_str(value), parse_int=float)
    except (ValueError, RecursionError):
        return Unknown(why=f"fromJSON of {_str(value)[:60]!r}, which is not JSON")
    return parsed


def _hash_files(args: list[Value], context: Context) -> Value:
    if context.files is None:
        return Unknown(why="hashFiles() reads the repository's files")
    return _doubt(*args) or context.files(list(map(_str, args)))


def _status(name: str, args: list[Value], context: Context) -> Value:
    result = context.status.get(name, True if name == "always" else None)
    return Unknown(why=f"{name}() depends on how earlier work ends") if result is None else result


# each function: the fewest and most arguments it takes, and what it does with their values
_FUNCTIONS: dict[str, tuple[int, int, Callable[[list[Value], Context], Value]]] = {
    "contains": (2, 2, lambda a, c: _contains(*a)),
    "startswith": (2, 2, lambda a, c: _affix(str.startswith, *a)),
    "endswith": (2, 2, lambda a, c: _affix(str.endswith, *a)),
    "format": (1, 255, lambda a, c: _format(*a)),
    "join": (1, 2, lambda a, c: _join(*a)),
    "tojson": (1, 1, lambda a, c: _to_json(*a)),
    "fromjson": (1, 1, lambda a, c: _from_json(*a)),
    "hashfiles": (1, 255, _hash_files),
} | {name: (0, 0, partial(_status, name)) for name in sorted(STATUS_FUNCTIONS)}


# -- what the model of a repository's CI asks ------------------------------------------------


def condition(text: Scalar, context: Context, *, job: bool) -> Decision:
    """Whether an `if:` (a job's when ``job``, else a step's) lets it run. Without a status
    function GitHub runs it only after success; text around `${{ }}` makes it a string."""
    if text is None:
        return Decision(True)
    source = text if isinstance(text, str) else _str(text)
    template = _is_template(source)
    try:
        node = _template(source) if template else parse(source)
    except ExpressionError as error:
        return Decision(None, (f"the if: does not parse: {error}",))
    nodes = [n for n, _ in _walk(node)]
    allowed = _JOB_CONTEXTS if job else _STEP_CONTEXTS
    barred = {str(n.value) for n in nodes if n.op == "context" and str(n.value).lower() not in allowed}
    barred |= {"hashFiles()" for n in nodes if job and n.op == "call" and n.value == "hashfiles"}
    if barred:
        where = "a job's" if job else "a step's"
        return Decision(None, (f"GitHub rejects the workflow: {', '.join(sorted(barred))} in {where} if:",))
    notes = ["text around ${{ }} makes the if: a string, true unless empty"] if template else []
    if not any(n.op == "call" and n.value in STATUS_FUNCTIONS for n in nodes):
        node = Node("&&", (Node("call", (), "success"), node))
    value = evaluate(node, context)
    why = ""
    if isinstance(value, Unknown) and value.truthy is None:
        why = value.why or "it reads a value not known before the run"
    return Decision(truth(value), tuple(notes), why)


def interpolate(text: str, context: Context) -> str | Unknown:
    """``text`` with each `${{ expr }}` replaced by its value as a string (a `runs-on:`, a
    `with:` value, a job output); Unknown when a part is, or when one does not parse."""
    try:
        value = evaluate(_template(text), context)
    except ExpressionError as error:
        return Unknown(why=str(error))
    return value if isinstance(value, Unknown) else _str(value)


def resolve(text: str, context: Context) -> Value:
    """A `with:` or `runs-on:` value as GitHub passes it on: one whole `${{ }}` keeps its
    type (`${{ fromJSON('["a", "b"]') }}` is an array); anything else is a string."""
    if not _is_template(text) and "${{" in text:
        try:
            return evaluate(parse(text), context)
        except ExpressionError as error:
            return Unknown(why=str(error))
    return interpolate(text, context)
