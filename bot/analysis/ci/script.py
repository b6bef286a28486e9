"""The structure of a workflow step's shell script, as far as deciding its branches needs.

Words keep their quoting (a quoted `*` is a letter, an unquoted one a pattern) and their
expansions (`$NAME`, and the ones not read: `$(...)`, `${x:-y}`, `$1`); commands are simple
commands with their redirections and heredocs, pipelines, `&&`/`||` lists, `if`/`elif`/`else`,
`case`, loops, `{ }` and `( )` groups, function definitions, `[[ ]]` tests and `(( ))`.

Hand-written rather than bashlex (`bot/analysis/shell.py`): bashlex rejects `if [[ a == b ||
c == d ]]`, the very test CI scripts write most, and `$(( ))`, and what it reads it flattens to
words. The reader is linear in the script and bounds its nesting; anything it cannot read is a
`ScriptError`, never another exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.analysis.shell import newlines_before

MARK = "\ue000"  # stands in the text for a value that is not known (an expression's)
MAX_NESTING = 50  # compound commands (and `[[ ( ) ]]`) inside one another

RESERVED = frozenset({
    "if", "then", "elif", "else", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "select", "in", "function", "{", "}", "!", "[[", "]]", "time",
})
_CLOSERS = frozenset({"then", "elif", "else", "fi", "do", "done", "esac", "}"})
_OPERATORS = (";;&", "&>>", "<<-", "<<<", ";;", ";&", "&&", "||", "|&", ">>", "<<", "<&", ">&",
              "<>", ">|", "&>", ";", "&", "|", "(", ")", "<", ">")
REDIRECTS = frozenset({">>", "<<", "<<-", "<<<", "<&", ">&", "<>", ">|", "&>", "&>>", "<", ">"})
_CASE_ENDS = frozenset({";;", ";&", ";;&"})
_SEPARATORS = frozenset({";", "&", "\n"})
_META = frozenset(" \t\n;&|()<>")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPECIAL = frozenset("0123456789@*#?$!-")
_FD = re.compile(r"[0-9]{1,4}")


class ScriptError(Exception):
    """A script the reader cannot read (bash would reject most of these too)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True, slots=True)
class Lit:
    """Literal text; quoted text is never a pattern nor split."""

    text: str
    quoted: bool


@dataclass(frozen=True, slots=True)
class Var:
    """`$NAME` or `${NAME}`."""

    name: str
    quoted: bool


@dataclass(frozen=True, slots=True)
class Opaque:
    """An expansion whose value is not read: `$(...)`, `` `...` ``, `${x:-y}`, `$1`, `~`."""

    quoted: bool


Part = Lit | Var | Opaque


@dataclass(frozen=True, slots=True)
class Word:
    parts: tuple[Part, ...]
    raw: str
    start: int  # offset in the script

    @property
    def plain(self) -> str | None:
        """The word's text when it is all unquoted letters (a reserved word, an operator)."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Lit) and not self.parts[0].quoted:
            return self.parts[0].text
        return None


@dataclass(frozen=True, slots=True)
class Op:
    text: str
    start: int
    fd: int | None = None  # `2>`: the descriptor written before the operator
    body: tuple[Part, ...] | None = None  # a heredoc's text (`<<`, `<<-`)
    body_raw: str = ""


Token = Word | Op


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str
    fd: int | None
    target: Word  # a heredoc's delimiter for `<<`
    body: tuple[Part, ...] | None = None
    body_raw: str = ""


@dataclass(frozen=True, slots=True)
class Assign:
    name: str
    value: Word | None  # None: not read (an array, `+=`)


@dataclass(frozen=True, slots=True)
class Simple:
    assigns: tuple[Assign, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]


@dataclass(frozen=True, slots=True)
class Pipeline:
    commands: tuple[Command, ...]
    negate: bool


@dataclass(frozen=True, slots=True)
class AndOr:
    first: Pipeline
    rest: tuple[tuple[str, Pipeline], ...]


@dataclass(frozen=True, slots=True)
class Seq:
    items: tuple[AndOr, ...]


@dataclass(frozen=True, slots=True)
class If:
    arms: tuple[tuple[Seq, Seq], ...]  # (condition, body) of `if` and each `elif`
    orelse: Seq | None


@dataclass(frozen=True, slots=True)
class Loop:
    """`while`/`until` (with a condition), `for`/`select` (with a variable), `for (( ))`."""

    cond: Seq | None
    until: bool
    var: str | None
    body: Seq


@dataclass(frozen=True, slots=True)
class CaseArm:
    patterns: tuple[Word, ...]
    body: Seq
    end: str  # `;;`, or `;&`/`;;&` (falls through), or "" for the last arm


@dataclass(frozen=True, slots=True)
class Case:
    word: Word
    arms: tuple[CaseArm, ...]


@dataclass(frozen=True, slots=True)
class Group:
    body: Seq
    subshell: bool  # `( )` rather than `{ }`


@dataclass(frozen=True, slots=True)
class DoubleBracket:
    """`[[ ... ]]`: its words and operators (`&&`, `||`, `(`, `)`, `<`, `>`), in order."""

    items: tuple[Word | str, ...]


@dataclass(frozen=True, slots=True)
class Arith:
    """`(( ... ))`: may assign any variable."""


@dataclass(frozen=True, slots=True)
class FuncDef:
    name: str
    body: Command


@dataclass(frozen=True, slots=True)
class Redirected:
    command: Command
    redirects: tuple[Redirect, ...]


Command = Simple | If | Loop | Case | Group | DoubleBracket | Arith | FuncDef | Redirected


def parse_script(text: str) -> Seq:
    """The commands of a script; raises ScriptError when it cannot be read."""
    return _Parser(text, tokenize(text)).program()


def split_assignment(word: Word) -> tuple[str, Word | None] | None:
    """`NAME=value` -> (NAME, the value as a word); `NAME+=x` -> (NAME, None); else None."""
    first = word.parts[0] if word.parts else None
    if not isinstance(first, Lit) or first.quoted:
        return None
    match = _NAME.match(first.text)
    if match is None:
        return None
    rest = first.text[match.end():]
    if rest.startswith("+="):
        return match.group(), None
    if not rest.startswith("="):
        return None
    value = rest[1:]
    parts = ((Lit(value, False),) if value else ()) + word.parts[1:]
    return match.group(), Word(parts, word.raw[match.end() + 1:], word.start + match.end() + 1)


def tokenize(text: str) -> list[Token]:
    return _Lexer(text).tokens()


class _Parts:
    """Collects a word's parts, merging neighbouring letters of the same quoting."""

    def __init__(self) -> None:
        self.parts: list[Part] = []
        self._text: list[str] = []
        self._quoted = False

    def lit(self, text: str, quoted: bool) -> None:
        pieces = text.split(MARK)
        for k, piece in enumerate(pieces):
            if k:
                self.add(Opaque(quoted))
            if piece:
                if self._text and self._quoted != quoted:
                    self._flush()
                self._text.append(piece)
                self._quoted = quoted

    def add(self, part: Part) -> None:
        self._flush()
        self.parts.append(part)

    def _flush(self) -> None:
        if self._text:
            self.parts.append(Lit("".join(self._text), self._quoted))
            self._text = []

    def done(self) -> tuple[Part, ...]:
        self._flush()
        return tuple(self.parts)


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.line_of = newlines_before(text)

    def error(self, message: str, at: int) -> ScriptError:
        return ScriptError(message, self.line_of(at) + 1)

    def tokens(self) -> list[Token]:
        text, n = self.text, len(self.text)
        out: list[Token] = []
        heredocs: list[tuple[int, Op, Word]] = []  # each `<<` of the line: where, its delimiter
        opened: Op | None = None  # a `<<` waiting for its delimiter
        i = 0
        while i < n:
            c = text[i]
            if c in " \t":
                i += 1
            elif text.startswith("\\\n", i):
                i += 2
            elif c == "#":
                end = text.find("\n", i)
                i = n if end == -1 else end
            elif c == "\n":
                out.append(Op("\n", i))
                i = self.heredoc_bodies(out, heredocs, i + 1)
                heredocs = []
                opened = None
            elif c in ";&|()<>" and not (c in "<>" and text.startswith("(", i + 1)):
                op = next(o for o in _OPERATORS if text.startswith(o, i))
                fd = None
                last = out[-1] if out else None
                if op[0] in "<>" and isinstance(last, Word) and _FD.fullmatch(last.raw) and \
                        last.start + len(last.raw) == i and \
                        not (heredocs and heredocs[-1][2] is last):  # `<<1>x`: a delimiter
                    out.pop()
                    fd = int(last.raw)
                token = Op(op, i, fd)
                out.append(token)
                opened = token if op in ("<<", "<<-") else None
                i += len(op)
            else:
                word, i = self.word(i)
                if opened is not None:
                    heredocs.append((len(out) - 1, opened, word))
                    opened = None
                out.append(word)
        if heredocs:
            self.heredoc_bodies(out, heredocs, n)
        return out

    def heredoc_bodies(self, out: list[Token], heredocs: list[tuple[int, Op, Word]],
                       i: int) -> int:
        """Read the bodies of the heredocs opened on the line just ended; the offset after."""
        text = self.text
        for index, op, word in heredocs:
            strip = op.text == "<<-"
            delimiter = "".join(p.text for p in word.parts if isinstance(p, Lit))
            quoted = any(not isinstance(p, Lit) or p.quoted for p in word.parts)
            lines: list[str] = []
            while i < len(text):
                end = text.find("\n", i)
                end = len(text) if end == -1 else end
                line = text[i:end].lstrip("\t") if strip else text[i:end]
                i = end + 1
                if line == delimiter:
                    break
                lines.append(line + "\n")
            body = "".join(lines)
            if quoted:
                collect = _Parts()
                collect.lit(body, True)
                parts = collect.done()
            else:
                parts, _ = _Lexer(body).quoted(0, None)
            out[index] = Op(op.text, op.start, op.fd, parts, body)
        return min(i, len(text))

    def word(self, i: int) -> tuple[Word, int]:
        text, n = self.text, len(self.text)
        start = i
        parts = _Parts()
        while i < n:
            c = text[i]
            if c in _META and not (c in "<>" and i == start):
                break
            if c == "\\":
                if text.startswith("\\\n", i):
                    i += 2
                    continue
                parts.lit(text[i + 1:i + 2] or "\\", True)
                i += 2
            elif c == "'":
                end = text.find("'", i + 1)
                if end == -1:
                    raise self.error("a ' that no ' closes", i)
                parts.lit(text[i + 1:end], True)
                i = end + 1
            elif c == '"':
                inner, i = self.quoted(i + 1, '"')
                for part in inner:
                    if isinstance(part, Lit):
                        parts.lit(part.text, True)
                    else:
                        parts.add(part)
            elif c == "$":
                i = self.dollar(i, parts, False)
            elif c == "`":
                i = self.backtick(i)
                parts.add(Opaque(False))
            elif c in "<>" and i == start:  # `<(cmd)`, `>(cmd)`: a process substitution
                parts.add(Opaque(False))
                i = self.closing(i + 1, "(", ")")
            elif c == "~" and (i == start or text[i - 1] in "=:"):  # `~`, `a=~/x`: $HOME
                parts.add(Opaque(False))
                i += 1
            else:
                parts.lit(c, False)
                i += 1
        return Word(parts.done(), text[start:i], start), i

    def quoted(self, i: int, end: str | None) -> tuple[tuple[Part, ...], int]:
        """Double-quoted text up to ``end`` (a heredoc's body when None): the parts and the
        offset after the closing quote."""
        text, n = self.text, len(self.text)
        parts = _Parts()
        escapable = '$`"\\\n' if end else "$`\\\n"
        while i < n and text[i] != end:
            c = text[i]
            if c == "\\" and text[i + 1:i + 2] in tuple(escapable):
                if text[i + 1] != "\n":
                    parts.lit(text[i + 1], True)
                i += 2
            elif c == "$":
                i = self.dollar(i, parts, True)
            elif c == "`":
                i = self.backtick(i)
                parts.add(Opaque(True))
            else:
                parts.lit(c, True)
                i += 1
        if end is not None and i >= n:
            raise self.error('a " that no " closes', i)
        return parts.done(), i + 1

    def dollar(self, i: int, parts: _Parts, quoted: bool) -> int:
        text = self.text
        nxt = text[i + 1:i + 2]
        if nxt == "(":
            parts.add(Opaque(quoted))
            return self.closing(i + 1, "(", ")")
        if nxt == "{":
            end = self.closing(i + 1, "{", "}")
            inner = text[i + 2:end - 1]
            parts.add(Var(inner, quoted) if _NAME.fullmatch(inner) else Opaque(quoted))
            return end
        if nxt == "'" and not quoted:
            j = i + 2
            while j < len(text) and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            if j >= len(text):
                raise self.error("a $' that no ' closes", i)
            parts.add(Opaque(True))
            return j + 1
        match = _NAME.match(text, i + 1)
        if match is not None:
            parts.add(Var(match.group(), quoted))
            return match.end()
        if nxt and nxt in _SPECIAL:
            parts.add(Opaque(quoted))
            return i + 2
        parts.lit("$", quoted)
        return i + 1

    def closing(self, i: int, open_: str, close: str) -> int:
        """The offset after the ``close`` that matches the ``open_`` at ``i`` (quotes skipped)."""
        text, n = self.text, len(self.text)
        depth = 0
        start = i
        while i < n:
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c in "'\"`":
                end = i + 1
                while end < n and text[end] != c:
                    end += 2 if text[end] == "\\" and c != "'" else 1
                i = end + 1
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        raise self.error(f"a {open_} that no {close} closes", start)

    def backtick(self, i: int) -> int:
        j = i + 1
        while j < len(self.text) and self.text[j] != "`":
            j += 2 if self.text[j] == "\\" else 1
        if j >= len(self.text):
            raise self.error("a ` that no ` closes", i)
        return j + 1


class _Parser:
    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0
        self.depth = 0
        self.line_of = newlines_before(text)
        self.end = len(text)

    # -- tokens

    def peek(self, ahead: int = 0) -> Token | None:
        k = self.i + ahead
        return self.tokens[k] if k < len(self.tokens) else None

    def error(self, message: str) -> ScriptError:
        token = self.peek()
        at = token.start if token is not None else self.end
        return ScriptError(message, self.line_of(at) + 1)

    def at_op(self, *texts: str) -> bool:
        token = self.peek()
        return isinstance(token, Op) and token.text in texts

    def at_word(self, *texts: str) -> bool:
        token = self.peek()
        return isinstance(token, Word) and token.plain in texts

    def take(self) -> Token:
        token = self.peek()
        if token is None:
            raise self.error("the script ends too early")
        self.i += 1
        return token

    def expect_word(self, text: str) -> None:
        if not self.at_word(text):
            raise self.error(f"`{text}` expected")
        self.i += 1

    def expect_op(self, text: str) -> None:
        if not self.at_op(text):
            raise self.error(f"`{text}` expected")
        self.i += 1

    def newlines(self) -> None:
        while self.at_op("\n"):
            self.i += 1

    def nested(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error("nested too deeply")

    # -- grammar

    def program(self) -> Seq:
        body = self.seq()
        if self.peek() is not None:
            raise self.error("unexpected token")
        return body

    def seq(self) -> Seq:
        items: list[AndOr] = []
        while True:
            while self.at_op(*_SEPARATORS):
                self.i += 1
            token = self.peek()
            if token is None or self.at_word(*_CLOSERS) or self.at_op(")", *_CASE_ENDS):
                return Seq(tuple(items))
            items.append(self.and_or())
            if not self.at_op(*_SEPARATORS):
                return Seq(tuple(items))

    def and_or(self) -> AndOr:
        first = self.pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while self.at_op("&&", "||"):
            op = self.take()
            assert isinstance(op, Op)
            self.newlines()
            rest.append((op.text, self.pipeline()))
        return AndOr(first, tuple(rest))

    def pipeline(self) -> Pipeline:
        negate = False
        while self.at_word("!", "time"):
            negate ^= self.at_word("!")
            self.i += 1
        commands = [self.command()]
        while self.at_op("|", "|&"):
            self.i += 1
            self.newlines()
            commands.append(self.command())
        return Pipeline(tuple(commands), negate)

    def command(self) -> Command:
        self.nested()
        token = self.peek()
        after = self.peek(1)
        compound: Command | None = None
        if isinstance(token, Op) and token.text == "(":
            if isinstance(after, Op) and after.text == "(" and after.start == token.start + 1:
                self.arithmetic()
                compound = Arith()
            else:
                self.i += 1
                compound = Group(self.seq(), True)
                self.expect_op(")")
        elif isinstance(token, Word) and token.plain in _COMPOUND:
            compound = _COMPOUND[token.plain](self)
        elif isinstance(token, Word) and token.plain is not None and token.plain not in RESERVED \
                and isinstance(after, Op) and after.text == "(" and self.at_op_ahead(2, ")"):
            self.i += 3
            compound = self.function_body(token.plain)
        if compound is None:
            found: Command = self.simple()
        else:
            redirects = self.redirects()
            found = Redirected(compound, redirects) if redirects else compound
        self.depth -= 1
        return found

    def at_op_ahead(self, ahead: int, text: str) -> bool:
        token = self.peek(ahead)
        return isinstance(token, Op) and token.text == text

    def redirects(self) -> tuple[Redirect, ...]:
        found: list[Redirect] = []
        while self.at_op(*REDIRECTS):
            found.append(self.redirect())
        return tuple(found)

    def redirect(self) -> Redirect:
        op = self.take()
        target = self.peek()
        assert isinstance(op, Op)
        if not isinstance(target, Word):
            raise self.error(f"a word expected after `{op.text}`")
        self.i += 1
        return Redirect(op.text, op.fd, target, op.body, op.body_raw)

    def simple(self) -> Simple:
        assigns: list[Assign] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        while True:
            token = self.peek()
            if isinstance(token, Op) and token.text in REDIRECTS:
                redirects.append(self.redirect())
            elif isinstance(token, Word):
                self.i += 1
                split = None if words else split_assignment(token)
                if split is None:
                    words.append(token)
                    continue
                name, value = split
                if token.raw.endswith("=") and self.at_op("(") and \
                        self.tokens[self.i].start == token.start + len(token.raw):
                    self.skip_parenthesised()  # `a=(1 2)`, `a+=(3)`: an array
                    value = None
                assigns.append(Assign(name, value))
            else:
                break
        if not (assigns or words or redirects):
            raise self.error("a command expected")
        return Simple(tuple(assigns), tuple(words), tuple(redirects))

    def skip_parenthesised(self) -> None:
        depth = 0
        while True:
            token = self.take()
            if isinstance(token, Op) and token.text == "(":
                depth += 1
            elif isinstance(token, Op) and token.text == ")":
                depth -= 1
                if depth == 0:
                    return

    def arithmetic(self) -> None:
        """`(( ... ))`, and the head of `for (( ; ; ))`: skipped to the matching `))`."""
        self.skip_parenthesised()

    def group(self) -> Command:
        self.i += 1
        body = self.seq()
        self.expect_word("}")
        return Group(body, False)

    def if_(self) -> Command:
        arms: list[tuple[Seq, Seq]] = []
        orelse = None
        self.i += 1
        while True:
            cond = self.seq()
            self.expect_word("then")
            arms.append((cond, self.seq()))
            if self.at_word("elif"):
                self.i += 1
                continue
            if self.at_word("else"):
                self.i += 1
                orelse = self.seq()
            self.expect_word("fi")
            return If(tuple(arms), orelse)

    def while_(self) -> Command:
        until = self.at_word("until")
        self.i += 1
        cond = self.seq()
        return Loop(cond, until, None, self.do_done())

    def do_done(self) -> Seq:
        self.expect_word("do")
        body = self.seq()
        self.expect_word("done")
        return body

    def for_(self) -> Command:
        self.i += 1
        if self.at_op("("):
            self.arithmetic()
            var = None
        else:
            name = self.take()
            if not isinstance(name, Word) or name.plain is None or not _NAME.fullmatch(name.plain):
                raise self.error("a variable name expected after `for`")
            var = name.plain
            self.newlines()
            if self.at_word("in"):
                self.i += 1
                while isinstance(self.peek(), Word):
                    self.i += 1
        while self.at_op(*_SEPARATORS):
            self.i += 1
        return Loop(None, False, var, self.do_done())

    def case(self) -> Command:
        self.i += 1
        word = self.take()
        if not isinstance(word, Word):
            raise self.error("a word expected after `case`")
        self.newlines()
        self.expect_word("in")
        arms: list[CaseArm] = []
        while True:
            self.newlines()
            if self.at_word("esac"):
                self.i += 1
                return Case(word, tuple(arms))
            if self.at_op("("):
                self.i += 1
            patterns = [self.pattern()]
            while self.at_op("|"):
                self.i += 1
                patterns.append(self.pattern())
            self.expect_op(")")
            body = self.seq()
            end = ""
            token = self.peek()
            if isinstance(token, Op) and token.text in _CASE_ENDS:
                end = token.text
                self.i += 1
            elif not self.at_word("esac"):
                raise self.error("`;;` or `esac` expected")
            arms.append(CaseArm(tuple(patterns), body, end))

    def pattern(self) -> Word:
        token = self.take()
        if not isinstance(token, Word):
            raise self.error("a pattern expected")
        return token

    def test(self) -> Command:
        self.i += 1
        items: list[Word | str] = []
        while not self.at_word("]]"):
            token = self.take()
            if isinstance(token, Word):
                items.append(token)
            elif token.text in ("&&", "||", "(", ")", "<", ">"):
                items.append(token.text)
            elif token.text != "\n":
                raise self.error(f"`{token.text}` inside [[ ]]")
        self.i += 1
        return DoubleBracket(tuple(items))

    def function(self) -> Command:
        self.i += 1
        name = self.take()
        if not isinstance(name, Word) or name.plain is None:
            raise self.error("a function name expected")
        if self.at_op("(") and self.at_op_ahead(1, ")"):
            self.i += 2
        return self.function_body(name.plain)

    def function_body(self, name: str) -> Command:
        self.newlines()
        return FuncDef(name, self.command())


_COMPOUND = {
    "{": _Parser.group, "if": _Parser.if_, "while": _Parser.while_, "until": _Parser.while_,
    "for": _Parser.for_, "select": _Parser.for_, "case": _Parser.case, "[[": _Parser.test,
    "function": _Parser.function,
}
