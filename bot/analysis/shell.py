"""`pip install` commands in shell text: bashlex first, then shlex per `&&`/`;`/`|` segment."""

from __future__ import annotations

import bisect
import io
import logging
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

log = logging.getLogger(__name__)

MAX_DEPTH = 4  # `bash -c "..."` nested inside one another


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word: its text with quotes removed, and where it sits in the script."""

    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class PipCommand:
    """One `pip install` (or `python -m pip install`, `uv pip install`) and its arguments."""

    start: int  # offset of the command's first word (`pip`, `python`, `uv`)
    tool: str  # "pip", "python -m pip" or "uv pip"
    specs: tuple[Word, ...]  # requirement specifiers, URLs and paths, as the shell passes them
    requirements: tuple[Word, ...]  # `-r FILE`
    constraints: tuple[Word, ...]  # `-c FILE`
    editables: tuple[Word, ...]  # `-e TARGET`
    flags: tuple[str, ...]  # every option given, without its value (`--no-deps`, `-i`)
    container: str | None = None  # `docker exec CONTAINER pip install`: where it installs
    branches: tuple[tuple[int, int], ...] = ()  # the `if`/`case` branches it is in: see branches()


# Options of `pip install` and `uv pip install` that take a value (the next word, or `=value`).
VALUE_OPTIONS = frozenset({
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
    "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--src",
    "--upgrade-strategy", "--platform", "--python-version", "--implementation", "--abi",
    "--progress-bar", "--cache-dir", "--log", "--log-file", "--proxy", "--retries", "--timeout",
    "--exists-action", "--trusted-host", "--cert", "--client-cert", "--global-option",
    "--install-option", "-C", "--config-settings", "--no-binary", "--only-binary", "--python",
    "--report", "--root-user-action", "--keyring-provider", "--use-feature", "--use-deprecated",
    "--index", "--default-index", "-p", "--index-strategy", "-o", "--override", "--resolution",
    "--prerelease", "-P", "--upgrade-package", "--reinstall-package", "--python-platform",
    "--exclude-newer", "--link-mode", "--torch-backend", "--config-file", "--directory",
    "--project", "--refresh-package", "--no-build-isolation-package", "--build-constraint", "-b",
})
# Short options whose value may be attached (`-rrequirements.txt`).
_ATTACHED = frozenset("rceiftCoPpb")
# Words that may come before the command without being it.
_PREFIXES = frozenset({
    "sudo", "env", "time", "nice", "nohup", "exec", "command", "then", "do", "else", "{", "(",
    "!", "xargs",
})
_PIP = re.compile(r"(?:.*/)?pip(?:\d+(?:\.\d+)*)?")
_PYTHON = re.compile(r"(?:.*/)?python(?:\d+(?:\.\d+)*)?")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")
_SEPARATORS = ("&&", "||", ";", "|", "&", "\n")
_REDIRECT = re.compile(r"\d*(?:&>|[<>]+)&?(.*)")
_OPTION_ARGUMENT = frozenset({"-u", "-g", "-C", "--user", "--group", "--chdir"})  # sudo, env
_DOCKER_VALUES = frozenset({"-w", "--workdir", "-e", "--env", "-u", "--user", "--env-file"})


def newlines_before(text: str) -> Callable[[int], int]:
    """How many line breaks come before an offset of ``text``, by bisection: counting them
    afresh for each word of a long script would be quadratic in its length."""
    breaks = [m.start() for m in re.finditer("\n", text)]
    return lambda pos: bisect.bisect_left(breaks, pos)


_FUNCTION = re.compile(r"(?m)^[ \t]*(?:function[ \t]+([A-Za-z_][\w:-]*)|([A-Za-z_][\w:-]*)[ \t]*\(\))")


def pip_installs(script: str) -> list[PipCommand]:
    """Every `pip install` command in a shell script, in order; never raises.

    A function the script defines may wrap a command (`retry docker exec c pip install x`):
    its name is skipped like `sudo`. A command sent into a container with `docker exec`
    (also as `docker exec c bash -c "..."`) keeps the container's name.
    """
    return list(_installs_of(script))


@lru_cache(maxsize=256)
def _installs_of(script: str) -> tuple[PipCommand, ...]:
    # workflows repeat the same steps (SGLang: 157 `run:` scripts naming pip, 91 distinct),
    # and parsing shell is most of what reading a workflow costs
    wrappers = frozenset(a or b for a, b in _FUNCTION.findall(script)) if "(" in script or \
        "function" in script else frozenset()
    return tuple(_installs(script, 0, 0, wrappers, None, ()))


def _installs(script: str, offset: int, depth: int, wrappers: frozenset[str],
              container: str | None, outer: tuple[Branch, ...]) -> list[PipCommand]:
    out: list[PipCommand] = []
    where = branches(script) if "if" in script or "case" in script else (lambda pos: ())
    for words in commands(script):
        inner = _shell_c(words, script, wrappers)
        first = words[min(_command_index(words, wrappers), len(words) - 1)].start
        here = (*outer, *((offset + at, b) for at, b in where(first)))
        if inner is not None and depth < MAX_DEPTH:
            text, start = inner
            out.extend(_installs(text, offset + start, depth + 1, wrappers,
                                 container or _container(words, wrappers), here))
            continue
        found = parse_pip(words, wrappers)
        if found is not None:
            if container is not None and found.container is None:
                found = replace(found, container=container)
            if here:
                found = replace(found, branches=here)
            out.append(_shift(found, offset) if offset else found)
    return out


def _shift(cmd: PipCommand, offset: int) -> PipCommand:
    def move(words: tuple[Word, ...]) -> tuple[Word, ...]:
        return tuple(Word(w.text, w.start + offset, w.end + offset) for w in words)

    return PipCommand(
        cmd.start + offset, cmd.tool, move(cmd.specs), move(cmd.requirements),
        move(cmd.constraints), move(cmd.editables), cmd.flags, cmd.container, cmd.branches,
    )


def _shell_c(words: list[Word], script: str,
             wrappers: frozenset[str] = frozenset()) -> tuple[str, int] | None:
    """The script of `bash -c "..."`, with its offset, when the command is one."""
    i = _command_index(words, wrappers)
    if i + 2 >= len(words) or words[i].text.rsplit("/", 1)[-1] not in _SHELLS:
        return None
    option = words[i + 1].text
    if not (option.startswith("-") and not option.startswith("--") and option.endswith("c")):
        return None
    word = words[i + 2]
    raw = script[word.start:word.end]
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1], word.start + 1
    return word.text, word.start


def commands(script: str) -> list[list[Word]]:
    """The simple commands of a script as word lists (assignments and redirects left out)."""
    return [list(words) for words in _commands(script)]


@lru_cache(maxsize=512)
def _commands(script: str) -> tuple[tuple[Word, ...], ...]:
    # the pin groups read a script for its installs and for the scripts it runs, and
    # workflows repeat steps: parsing shell is most of what reading a repository's CI costs
    return tuple(tuple(words) for words in _parse_commands(script))


def _parse_commands(script: str) -> list[list[Word]]:
    if not script.strip():
        return []
    try:
        return _bashlex_commands(script, 0)
    except Exception:  # bashlex raises many kinds (ParsingError, NotImplementedError, ...)
        log.debug("bashlex cannot parse the script; splitting it", exc_info=True)
    out: list[list[Word]] = []
    for start, end in segments(script):
        part = script[start:end]
        if not part.strip():
            continue
        try:
            out.extend(_bashlex_commands(part, start))
        except Exception:  # same as above: fall back to shlex for this segment
            out.append(shlex_words(part, start))
    return out


def _bashlex_commands(script: str, offset: int) -> list[list[Word]]:
    import bashlex  # its parser tables take ~80 ms to load: only when a script names pip

    _guard_bashlex()
    found: list[list[Word]] = []
    for tree in bashlex.parse(script):
        _collect(tree, offset, found)
    return found


def _guard_bashlex() -> None:
    """Make bashlex refuse a `${` that no `}` closes, instead of looping for ever.

    bashlex 0.18 expands `${` inside a word with ``string.find("}")``; when there is none it
    restarts the word from its first character, forever: `X='${'` in any `run:` step or
    `RUN` line would hold a worker for good. With the guard it raises the ParsingError it
    raises for other bad substitutions, and the script is read by the fallback.
    """
    from bashlex import errors, subst

    expand = subst._paramexpand
    if getattr(expand, "guarded", False):
        return

    def guarded(parser: Any, string: str, index: int) -> Any:
        if string.startswith("${", index) and string.find("}", index + 2) == -1:
            raise errors.ParsingError("bad substitution: no closing '}'", string, index)
        return expand(parser, string, index)

    guarded.guarded = True  # type: ignore[attr-defined]
    subst._paramexpand = guarded


def _collect(node: Any, offset: int, found: list[list[Word]]) -> None:
    """Simple commands of a bashlex tree, in source order (nested ones after their parent)."""
    if node.kind == "command":
        words = [Word(p.word, p.pos[0] + offset, p.pos[1] + offset)
                 for p in node.parts if p.kind == "word"]
        if words:
            found.append(words)
    for value in vars(node).values():
        for child in value if isinstance(value, list) else [value]:
            if hasattr(child, "kind"):
                _collect(child, offset, found)


def segments(script: str) -> list[tuple[int, int]]:
    """Spans of the script between `&&`, `||`, `;`, `|`, `&` and newlines, outside quotes.

    A comment (`#` at the start of a word) runs to the end of its line and is left out.
    """
    spans: list[tuple[int, int]] = []
    start = i = 0
    n = len(script)
    quote: str | None = None
    while i < n:
        c = script[i]
        if quote is not None:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
            i += 1
            continue
        if c == "\\":
            i += 2
            continue
        if c in "'\"":
            quote = c
            i += 1
            continue
        if c == "#" and (i == 0 or script[i - 1] in " \t\n;&|("):
            spans.append((start, i))
            end = script.find("\n", i)
            i = start = n if end == -1 else end
            continue
        sep = next((s for s in _SEPARATORS if script.startswith(s, i)), None)
        if sep == "&" and (script[i - 1:i] in ("<", ">") or script[i + 1:i + 2] == ">"):
            sep = None  # a redirection: `2>&1`, `&>`
        if sep is not None:
            spans.append((start, i))
            i = start = i + len(sep)
            continue
        i += 1
    spans.append((start, n))
    return [(a, b) for a, b in spans if b > a]


def shlex_words(text: str, offset: int) -> list[Word]:
    """Words of one command with shlex; plain whitespace splitting when quotes do not close."""
    stream = io.StringIO(text)
    lexer = shlex.shlex(stream, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    words: list[Word] = []
    previous = 0
    try:
        while True:
            token = lexer.get_token()
            if token is None:
                break
            end = stream.tell()
            start = previous
            while start < len(text) and text[start].isspace():
                start += 1
            words.append(Word(token, start + offset, end + offset))
            previous = end
    except ValueError:
        return [Word(m.group(), m.start() + offset, m.end() + offset)
                for m in re.finditer(r"\S+", text)]
    return words


def _command_index(words: list[Word], wrappers: frozenset[str] = frozenset()) -> int:
    """The index of the word that names the command, after `sudo -E`, `env X=1` and the like
    (and after a wrapper function of the script: ``wrappers``)."""
    i = 0
    wrapped = False
    while i < len(words):
        text = words[i].text
        if not text.strip():  # a line continuation, as shlex leaves it (a backslash, a newline)
            pass
        elif text in _PREFIXES or text in wrappers:
            wrapped = wrapped or text in ("sudo", "env", "nice", "time", "xargs")
        elif text == "case":  # `case WORD in PATTERN) command`
            while i < len(words) and words[i].text != "in":
                i += 1
        elif wrapped and text in _OPTION_ARGUMENT:
            i += 1
        elif text == "docker" and i + 1 < len(words) and words[i + 1].text == "exec":
            i = _after_docker_exec(words, i + 2) - 1  # the command runs in the container
        elif not (
            _ASSIGNMENT.match(text)
            or (wrapped and text.startswith("-"))
            or (text.endswith(")") and "(" not in text)  # a `case` pattern
        ):
            return i
        i += 1
    return i


def _container(words: list[Word], wrappers: frozenset[str]) -> str | None:
    """The container a command runs in: `docker exec [options] CONTAINER ...`."""
    end = _command_index(words, wrappers)
    for k in range(min(end, len(words)) - 1):
        if words[k].text == "docker" and words[k + 1].text == "exec":
            at = _after_docker_exec(words, k + 2) - 1
            if at < len(words):
                return words[at].text
    return None


def script_runs(script: str) -> list[Word]:
    """The shell scripts a script runs: `bash x.sh`, `sh -e x.sh`, `./x.sh`, `source x.sh`."""
    if ".sh" not in script:
        return []
    out: list[Word] = []
    for words in commands(script):
        i = _command_index(words)
        if i >= len(words):
            continue
        name = words[i].text
        target: Word | None = None
        if name.rsplit("/", 1)[-1] in _SHELLS or name in ("source", "."):
            j = i + 1
            while j < len(words) and words[j].text.startswith("-") and \
                    not words[j].text.endswith("c"):
                j += 1
            if j < len(words) and not words[j].text.startswith("-"):
                target = words[j]
        elif "/" in name or name.endswith(".sh"):
            target = words[i]
        if target is not None and target.text.endswith(".sh"):
            out.append(target)
    return out


def _after_docker_exec(words: list[Word], i: int) -> int:
    """The index after `docker exec [options] CONTAINER`."""
    while i < len(words) and words[i].text.startswith("-"):
        option = words[i].text
        i += 2 if option in _DOCKER_VALUES else 1
    return i + 1


def parse_pip(words: list[Word], wrappers: frozenset[str] = frozenset()) -> PipCommand | None:
    """The `pip install` a simple command runs, if it runs one."""
    i = _command_index(words, wrappers)
    if i >= len(words):
        return None
    first = words[i]
    name = first.text
    if _PIP.fullmatch(name):
        tool, j = "pip", i + 1
    elif name == "uv" and i + 1 < len(words) and words[i + 1].text == "pip":
        tool, j = "uv pip", i + 2
    elif _PYTHON.fullmatch(name):
        j = i + 1
        while j < len(words) and words[j].text.startswith("-") and words[j].text != "-m":
            j += 1
        if j + 1 >= len(words) or words[j].text != "-m" or words[j + 1].text != "pip":
            return None
        tool, j = "python -m pip", j + 2
    else:
        return None
    while j < len(words) and words[j].text.startswith("-"):  # global options: `pip -q install`
        j += 1
    if j >= len(words) or words[j].text != "install":
        return None
    found = _arguments(first.start, tool, words[j + 1:])
    container = _container(words, wrappers)
    return found if container is None else replace(found, container=container)


def _arguments(start: int, tool: str, words: list[Word]) -> PipCommand:
    specs: list[Word] = []
    taken: dict[str, list[Word]] = {"r": [], "c": [], "e": []}
    flags: list[str] = []
    i = 0
    only_specs = False
    while i < len(words):
        word = words[i]
        text = word.text
        i += 1
        redirect = None if only_specs else _REDIRECT.fullmatch(text)
        if redirect is not None:  # only seen when shlex split the command
            i += 0 if redirect.group(1) else 1
            continue
        if only_specs or not text.startswith("-") or text == "-":
            specs.append(word)
            continue
        if text == "--":
            only_specs = True
            continue
        option, value = _split_option(text)
        flags.append(option)
        if option not in VALUE_OPTIONS:
            continue
        if value is None:
            if i >= len(words):
                break
            value_word = words[i]
            i += 1
        else:
            value_word = Word(value, word.end - len(value), word.end)
        kind = {"-r": "r", "--requirement": "r", "-c": "c", "--constraint": "c",
                "-e": "e", "--editable": "e"}.get(option)
        if kind is not None:
            taken[kind].append(value_word)
    return PipCommand(start, tool, tuple(specs), tuple(taken["r"]), tuple(taken["c"]),
                      tuple(taken["e"]), tuple(flags))


def _split_option(text: str) -> tuple[str, str | None]:
    """`--opt=value` and `-rFILE` into the option and its attached value."""
    if text.startswith("--"):
        option, sep, value = text.partition("=")
        return option, value if sep else None
    if len(text) > 2 and text[1] in _ATTACHED:
        value = text[2:]
        return text[:2], value[1:] if value.startswith("=") else value
    return text, None


# -- alternatives: the branches of `if`/`elif`/`else` and `case` ---------------------------

Branch = tuple[int, int]  # (offset of the `if`/`case` word, which of its branches: 1, 2, ...)
_OPENS_COMMAND = frozenset({"if", "then", "elif", "else", "do", "while", "until", "!", "{",
                            "time"})


def branches(script: str) -> Callable[[int], tuple[Branch, ...]]:
    """Where each offset of a script sits among its `if`/`case` branches.

    The function returned gives, for an offset, the branches of the enclosing `if`/`case`
    constructs, outermost first: two commands of one construct in different branches never
    both run. The condition of an `if` is in none of its branches (it always runs); an
    `elif` starts a branch (with its condition), and so does `else`; each pattern of a
    `case` does. Never raises: a script it cannot follow has no branches.
    """
    if not re.search(r"\b(?:if|case)\b", script):
        return lambda pos: ()
    try:
        marks = _branch_marks(script)
    except Exception:  # an unexpected shape: no alternatives known, every command counts
        log.debug("cannot follow the branches of a script", exc_info=True)
        return lambda pos: ()
    starts = [m[0] for m in marks]

    def at(pos: int) -> tuple[Branch, ...]:
        i = bisect.bisect_right(starts, pos) - 1
        return marks[i][1] if i >= 0 else ()

    return at


def _branch_marks(script: str) -> list[tuple[int, tuple[Branch, ...]]]:
    """(offset, branches from there on), each time the branches change."""
    stack: list[list[Any]] = []  # [kind, start, branch, state]; state "pattern" in a `case`
    marks: list[tuple[int, tuple[Branch, ...]]] = [(0, ())]

    def mark(pos: int) -> None:
        current = tuple((s[1], s[2]) for s in stack if s[2] > 0)
        if marks[-1][1] != current:
            marks.append((pos, current))

    n = len(script)
    i = 0
    command_start = True
    case_word = 0  # words still to skip after `case` (the subject, then `in`)
    while i < n:
        c = script[i]
        if c == "\\" and i + 1 < n and script[i + 1] == "\n":
            i += 2
            continue
        if c in " \t\r":
            i += 1
            continue
        if c == "#" and (i == 0 or script[i - 1] in " \t\n;&|()"):
            end = script.find("\n", i)
            i = n if end == -1 else end
            continue
        top = stack[-1] if stack else None
        if top is not None and top[0] == "case" and top[3] == "pattern" and case_word == 0:
            j = _pattern_end(script, i)
            if script.startswith("esac", i) and _word_end(script, i) == i + 4:
                stack.pop()
                mark(i)
                i += 4
                command_start = False
                continue
            if j is None:
                i += 1
                continue
            top[2] += 1
            top[3] = "body"
            mark(j)
            i = j + 1
            command_start = True
            continue
        if script.startswith(";;", i) or script.startswith(";&", i):
            i += 3 if script.startswith(";;&", i) else 2
            if top is not None and top[0] == "case":
                top[3] = "pattern"
            command_start = True
            continue
        if c in ";&|\n()":
            i += 1
            command_start = True
            continue
        end = _word_end(script, i)
        word = script[i:end]
        if case_word:
            case_word -= 1
            if case_word == 0 and stack:
                stack[-1][3] = "pattern"
            i = end
            continue
        if command_start:
            if word == "if":
                stack.append(["if", i, 0, ""])
            elif word == "case":
                stack.append(["case", i, 0, "subject"])
                case_word = 2
            elif word in ("then", "elif", "else") and top is not None and top[0] == "if":
                if word == "then" and top[2] == 0:
                    top[2] = 1
                elif word != "then":
                    top[2] += 1
                mark(i)
            elif top is not None and (word, top[0]) in (("fi", "if"), ("esac", "case")):
                stack.pop()
                mark(i)
            command_start = word in _OPENS_COMMAND or (_ASSIGNMENT.match(word) is not None)
        i = end
    return marks


def _word_end(script: str, i: int) -> int:
    """The end of the shell word that starts at ``i`` (quotes, `$(...)`, `${...}` skipped)."""
    n = len(script)
    depth = 0
    while i < n:
        c = script[i]
        if c == "\\":
            i += 2
            continue
        if c in "'\"`":
            close = script.find(c, i + 1)
            while c == '"' and close != -1 and script[close - 1] == "\\":
                close = script.find(c, close + 1)
            i = n if close == -1 else close + 1
            continue
        if c == "$" and script.startswith(("$(", "${"), i):
            depth += 1
            i += 2
            continue
        if depth and c in ")}":
            depth -= 1
            i += 1
            continue
        if depth and c == "(":
            depth += 1
            i += 1
            continue
        if not depth and (c in " \t\r\n;&|()" or script.startswith("\\\n", i)):
            return i
        i += 1
    return n


def _pattern_end(script: str, i: int) -> int | None:
    """The `)` that ends a `case` pattern starting at ``i`` (`a|b)`, `(x)`), or None."""
    n = len(script)
    if i < n and script[i] == "(":
        i += 1
    while i < n:
        c = script[i]
        if c == "\\":
            i += 2
            continue
        if c in "'\"":
            close = script.find(c, i + 1)
            i = n if close == -1 else close + 1
            continue
        if c == ")":
            return i
        if c in ";\n" and not script.startswith("\\\n", i - 1):
            return None
        i += 1
    return None


# -- variables a script assigns ----------------------------------------------------------

_ASSIGNED = re.compile(r"([A-Za-z_]\w*)=(.*)", re.DOTALL)
_DECLARES = frozenset({"export", "readonly", "local", "declare", "typeset"})
_KEYWORDS = frozenset({"then", "else", "do", "{", "(", "!"})


@dataclass(frozen=True, slots=True)
class Assignment:
    """`NAME=value` in a script: where, its value as written (quotes removed; None when the
    shell computes it: `$(...)`, backquotes), and the `if`/`case` branches it is in."""

    name: str
    value: str | None
    start: int
    branches: tuple[Branch, ...]


def assignments(script: str) -> list[Assignment]:
    """The plain variable assignments of a script, in order: `X=1`, `export X="a b"`; an
    assignment that prefixes a command (`X=1 cmd`) sets the variable for that command only
    and is left out."""
    if "=" not in script:
        return []
    where = branches(script)
    out: list[Assignment] = []
    for start, end in segments(script):
        words = shlex_words(script[start:end], start)
        k = 0
        while k < len(words) and words[k].text in _KEYWORDS:
            k += 1
        if k < len(words) and words[k].text in _DECLARES:
            k += 1
            while k < len(words) and words[k].text.startswith("-"):
                k += 1
        found = [_ASSIGNED.fullmatch(w.text) for w in words[k:]]
        if not found or not all(found):
            continue
        for word, m in zip(words[k:], found, strict=True):
            assert m is not None
            value: str | None = m.group(2)
            raw = script[word.start:word.end]
            if "$(" in raw or "`" in raw or "(" in raw[:len(m.group(1)) + 2]:
                value = None  # computed by the shell, or an array
            out.append(Assignment(m.group(1), value, word.start, where(word.start)))
    return out


def values_at(found: list[Assignment], pos: int, branched: tuple[Branch, ...],
              expand: Callable[[str, dict[str, str]], str],
              outer: Mapping[str, str | None] | None = None,
              ) -> tuple[dict[str, str | None], frozenset[str]]:
    """The variables known at an offset (in the ``branched`` branches): ``outer`` (`ARG`,
    `ENV`), then the last assignment of each before the offset, its value written with the
    variables known then expanded by ``expand``. A variable whose value the shell computes,
    that names an unknown one, or that a branch not enclosing the offset sets, is None:
    unknown, never guessed: it is returned among the names to leave as written."""
    known: dict[str, str | None] = dict(outer or {})
    unknown: set[str] = set()
    enclosing = set(branched)
    for a in found:
        if a.start >= pos:
            break
        value = a.value
        if value is not None and "$" in value:
            value = expand(value, {k: v for k, v in known.items() if v is not None})
            if "$" in value:
                value = None
        if not set(a.branches) <= enclosing:
            value = None  # set in a branch the offset is not in: maybe, maybe not
        known[a.name] = value
        if value is None:
            unknown.add(a.name)
        else:
            unknown.discard(a.name)
    return known, frozenset(unknown)
