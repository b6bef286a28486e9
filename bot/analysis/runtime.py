"""What a test's launches run: the repository programs they start, and the files those load.

A launch starts a process, not an import: `execute_train` runs `python3 train.py`, a server
test runs `python -m sglang.launch_server` or a console script (`sglang serve`), a command
line names `torchrun x.py`. The program of each launch is read where it is written:

- a launch function (``launch.sinks``; or a launcher the evaluator could not follow) runs
  what its own definition's command lines name: a word ``{train_script}`` there stands for
  the value the call gives that parameter, or its default (a later rebinding inside the
  definition, such as joining it to the repository's folder, is not followed);
- a launch handed a command line (``subprocess.run(["python3", "train.py", ...])``) runs the
  program at the head of its words;
- a server launcher (``launch.servers``) runs what its definition's command lines name (a
  parameter there is not known: the server's call is read from its syntax, not evaluated);
  ``python -m sglang.launch_server`` in the test names its module; the keyword forms
  (``sgl.Engine``) run in the test's own process, whose imports hold them already.

A command line's program is ``python [options] x.py``, ``python -m module``, ``torchrun
[options] x.py`` (or ``-m module``; ``python -m torch.distributed.run`` too), or a console
script of the repository's ``pyproject.toml`` (``[project.scripts]``), where the line starts
a command (its head, after ``&&``, ``;``, ``|``, ``--`` or ``VAR=value``). A script path is
the repository's file at that path from its root; a module is found through
``python_roots``. A program outside the repository (an absolute path, a module no root
holds, a command that is not a console script of it) runs none of its files. A program
that cannot be known statically (a word built at run time, a relative script that is not a
file of the repository, a launch function whose definition names no program) gives no
entry point: :func:`unknown_launches` says which, so that the caller can say so.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from bot.analysis.evaluate import ExternalCall
from bot.analysis.flags import Opaque, Token, Word
from bot.analysis.servers import LAUNCH_SERVER
from bot.analysis.snapshot import Derived, Snapshot
from bot.analysis.source import Module
from bot.analysis.values import Alternatives, Choice, Chunk, Part, Text, Value

if TYPE_CHECKING:
    from bot.analysis.launch import LaunchOutcome

__all__ = ["EntryPoint", "LaunchCall", "entry_points", "launch_call", "launched_by",
           "module_file", "runtime_reach", "unknown_launches"]

# the strings a value may be, or None when it is not known
Strings = tuple[str, ...] | None
MAX_STRINGS = 8  # more possible strings than this: not known


@dataclass(frozen=True)
class EntryPoint:
    """A repository file a test's launch runs, and how the launch starts it."""

    path: str  # "train.py", "python/sglang/launch_server.py"
    how: str  # one phrase: "launched by `execute_train`", "`python -m sglang.launch_server`"
    module: str | None = None  # the module it runs as (`-m`, a console script): None for a script


@dataclass(frozen=True, slots=True)
class LaunchCall:
    """One launch call, as much of it as finding its program needs (plain values: no
    evaluator state is kept alive by an outcome)."""

    callee: str  # the callee's last name (`execute_train`)
    named: bool  # a configured launch function: what it runs is in its definition
    definition: tuple[str, int] | None  # the callee's file and `def` line, in the repository
    args: tuple[Strings, ...]  # what each positional argument may be
    keywords: tuple[tuple[str, Strings], ...]
    words: tuple[Strings, ...]  # the command line its arguments make, word by word
    partial: bool  # a `*args` or `**kwargs` whose items are not known


def launch_call(call: ExternalCall, tokens: Sequence[Token]) -> LaunchCall:
    """What a launch call the evaluator reported gives its program (``tokens``: the words
    of its arguments)."""
    return LaunchCall(
        callee=call.tail, named=call.named_sink, definition=call.definition,
        args=tuple(_strings(v) for v in call.args),
        keywords=tuple((k, _strings(v)) for k, v in call.keywords.items()),
        words=tuple(_token_strings(t) for t in tokens), partial=call.partial,
    )


def _strings(value: Value) -> Strings:
    if isinstance(value, Text):
        return _text_strings(value.parts)
    if isinstance(value, Alternatives):
        out: list[str] = []
        for option in value.options:
            found = _strings(option)
            if found is None:
                return None
            out.extend(found)
        return _bounded(out)
    return None


def _text_strings(parts: Sequence[Part]) -> Strings:
    options = [""]
    for part in parts:
        if isinstance(part, Chunk):
            options = [o + part.text for o in options]
            continue
        if not isinstance(part, Choice):
            return None  # a hole: not known
        choices: list[str] = []
        for option in part.options:
            found = _text_strings(option)
            if found is None:
                return None
            choices.extend(found)
        options = [o + c for o in options for c in choices]
        if len(options) > MAX_STRINGS:
            return None
    return _bounded(options)


def _bounded(options: list[str]) -> Strings:
    unique = tuple(dict.fromkeys(options))
    return unique if len(unique) <= MAX_STRINGS else None


def _token_strings(token: Token) -> Strings:
    if isinstance(token, Word):
        return (token.text,)
    if isinstance(token, Opaque) and token.text == "sys.executable":
        return ("python3",)  # the interpreter running the test
    return None


# ----- command lines -----------------------------------------------------------------------

_PYTHON = re.compile(r"(?:\S*/)?python(?:\d+(?:\.\d+)*)?")
_TORCHRUN = re.compile(r"(?:\S*/)?torchrun")
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=\S*")
_MODULE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_PREFIXES = frozenset({"exec", "nohup", "env", "time", "sudo", "command", "then", "do", "else"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "--"})
_SHELLS = frozenset({"bash", "sh"})
_QUOTES = "'\"()"
_TORCH_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch"})
# torchrun's options that take no value (every other `--option` takes one)
_TORCHRUN_SWITCHES = frozenset({"--standalone", "--run-path", "--run_path",
                                "--virtual-local-rank", "--virtual_local_rank"})
_PYTHON_VALUED = frozenset({"-X", "-W", "--check-hash-based-pycs"})

Kind = Literal["script", "module", "command", "unknown"]


@dataclass(frozen=True, slots=True)
class _Program:
    """A program a command line starts: a script, a module, a command (perhaps a console
    script of the repository), or one that cannot be known (``names`` None, and why)."""

    kind: Kind
    names: Strings
    prefix: str  # the words before the name, as written ("python3 -m")
    why: str = "starts a program built at run time"


def _one(word: Strings) -> str | None:
    return word[0].strip(_QUOTES) if word is not None and len(word) == 1 else None


def _programs(words: Sequence[Strings]) -> list[_Program]:
    """The programs a command line starts, in order."""
    out: list[_Program] = []
    head = True
    at = 0
    while at < len(words):
        word = _one(words[at])
        at += 1
        if word is None:
            head = False
            continue
        if head and (_ASSIGNMENT.fullmatch(word) or word in _PREFIXES):
            continue
        if head:
            found: _Program | None
            if _PYTHON.fullmatch(word):
                found, at = _python(words, at, word)
            elif _TORCHRUN.fullmatch(word):
                found, at = _torchrun(words, at, word)
            elif word in _SHELLS and at + 1 < len(words) and _one(words[at]) == "-c":
                for line in words[at + 1] or ():  # `bash -c "python3 x.py"`: its own line
                    out.extend(_programs([(w,) for w in line.split()]))
                at += 2
                found = None
            elif not word.startswith("-"):
                found = _Program("command", (word,), "")
            else:
                found = None  # an option: the words are a program's arguments
            if found is not None:
                out.append(found)
        head = word in _SEPARATORS or word.endswith(";")
    return out


def _operand(kind: Kind, names: Strings, prefix: str) -> _Program | None:
    """The program an interpreter's operand names; a script written as a word must be a
    ``.py`` file (``python3 is required`` is a sentence, not a launch)."""
    if names is None:
        return _Program("unknown", None, prefix)
    names = tuple(n.strip(_QUOTES) for n in names)
    if kind == "script" and not all(n.endswith(".py") for n in names):
        return None
    return _Program(kind, names, prefix)


def _python(words: Sequence[Strings], at: int, prefix: str) -> tuple[_Program | None, int]:
    while at < len(words):
        word = words[at]
        arg = _one(word)
        at += 1
        if arg is None or not arg.startswith("-"):
            return _operand("script", word, prefix), at
        if arg.startswith("-c"):
            return _Program("unknown", None, f"{prefix} -c",
                            "runs code given on its command line"), at + (arg == "-c")
        if arg.startswith("-m"):
            name = (arg[2:],) if arg != "-m" else (words[at] if at < len(words) else None)
            at += arg == "-m"
            module = _one(name)
            if module in _TORCH_MODULES:
                return _torchrun(words, at, f"{prefix} -m {module}")
            return _operand("module", name, f"{prefix} -m"), at
        at += arg in _PYTHON_VALUED
    return None, at  # an interpreter reading its standard input


def _torchrun(words: Sequence[Strings], at: int, prefix: str) -> tuple[_Program | None, int]:
    kind: Kind = "script"
    while at < len(words):
        word = words[at]
        arg = _one(word)
        at += 1
        if arg is None or not arg.startswith("-"):
            return _operand(kind, word, f"{prefix} -m" if kind == "module" else prefix), at
        if arg in ("-m", "--module"):
            kind = "module"
        elif arg in ("--no-python", "--no_python"):
            return _Program("unknown", None, f"{prefix} {arg}", "runs a program that is not "
                            "Python, which is not followed"), at
        elif "=" not in arg and arg not in _TORCHRUN_SWITCHES:
            at += 1  # the option's value
    return None, at


def _quoted(text: str) -> str:
    return f"`{text}`"


# ----- definitions -----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Param:
    name: str


# a word of a command line written in a function: text and parameters' values; None when
# part of it is neither
Template = tuple["str | _Param", ...] | None


@dataclass(frozen=True, slots=True)
class _Definition:
    """A function's parameters, their literal defaults and its command lines' words."""

    positional: tuple[str, ...]
    defaults: tuple[tuple[str, Strings], ...]  # every parameter, with its default's strings
    commands: tuple[tuple[Template, ...], ...]


def _read_definition(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> _Definition:
    arguments = fn.args
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    given = dict(zip(reversed(positional), reversed(arguments.defaults), strict=False))
    given.update((a.arg, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults,
                                            strict=True) if d is not None)
    names = [*positional, *(a.arg for a in arguments.kwonlyargs)]
    defaults = tuple((name, _literal(given.get(name))) for name in names)
    if positional and positional[0] in ("self", "cls"):
        positional = positional[1:]  # a method: its call does not pass the instance
    return _Definition(tuple(positional), defaults, _command_lines(fn, frozenset(names)))


def _literal(node: ast.expr | None) -> Strings:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    return None


def _command_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef,
                   params: frozenset[str]) -> tuple[tuple[Template, ...], ...]:
    """Every list of words and every string of the function's code, its docstring aside:
    a list is one word per item, a string is split at whitespace (as a shell would)."""
    done: set[int] = set()
    first = fn.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
            isinstance(first.value.value, str):
        done.add(id(first.value))
    out: list[tuple[Template, ...]] = []
    for node in ast.walk(fn):
        if id(node) in done:
            continue
        if isinstance(node, ast.List | ast.Tuple):  # an f-string item is one word: its
            done.update(id(n) for e in node.elts  # text is no command line of its own
                        for n in (ast.walk(e) if isinstance(e, ast.JoinedStr) else (e,)))
            out.append(tuple(_item(e, params) for e in node.elts))
        elif isinstance(node, ast.JoinedStr):
            done.update(id(n) for n in ast.walk(node))
            out.append(tuple(_split(node.values, params)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(tuple((w,) for w in node.value.split()))
    return tuple(words for words in out if words)


def _item(node: ast.expr, params: frozenset[str]) -> Template:
    """One item of a list of words."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, ast.JoinedStr):
        return _template([_piece(v, params) for v in node.values])
    piece = _piece(node, params)
    return None if piece is None else (piece,)


def _piece(node: ast.expr, params: frozenset[str]) -> str | _Param | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.FormattedValue):
        if node.conversion != -1 or node.format_spec is not None:
            return None
        node = node.value
    if isinstance(node, ast.Name) and node.id in params:
        return _Param(node.id)
    if isinstance(node, ast.Attribute) and node.attr == "executable" and \
            isinstance(node.value, ast.Name) and node.value.id == "sys":
        return "python3"
    return None


def _split(values: Sequence[ast.expr], params: frozenset[str]) -> Iterator[Template]:
    """The words of an f-string: its text split at whitespace, each value part of the
    word it stands in."""
    word: list[str | _Param | None] = []
    for value in values:
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            word.append(_piece(value, params))
            continue
        for match in re.finditer(r"\s+|\S+", value.value):
            if match.group().isspace():
                yield from _word(word)
            else:
                word.append(match.group())
    yield from _word(word)


def _word(pieces: list[str | _Param | None]) -> Iterator[Template]:
    if pieces:
        yield _template(pieces)
        pieces.clear()


def _template(pieces: Sequence[str | _Param | None]) -> Template:
    """A word from its pieces; one with a part not known is not known, unless it is an
    option (``--nproc_per_node={gpus}``: an option still, whatever its value)."""
    if all(p is not None for p in pieces):
        return tuple(p for p in pieces if p is not None)
    first = pieces[0]
    return (first,) if isinstance(first, str) and first.startswith("-") else None


def _bind(definition: _Definition, call: LaunchCall | None) -> dict[str, Strings]:
    """What each parameter is in a call: the argument given, else the default. Without the
    call (a server launcher's, read from syntax) no parameter is known."""
    if call is None:
        return {}
    bound = dict(definition.defaults)
    given = set()
    for name, value in zip(definition.positional, call.args, strict=False):
        bound[name] = value
        given.add(name)
    for name, value in call.keywords:
        if name in bound:
            bound[name] = value
            given.add(name)
    if call.partial:  # `*args` / `**kwargs` may set any other
        for name in [n for n in bound if n not in given]:
            bound[name] = None
    return bound


def _fill(template: Template, bound: dict[str, Strings]) -> Strings:
    if template is None:
        return None
    options = [""]
    for piece in template:
        values = (piece,) if isinstance(piece, str) else bound.get(piece.name)
        if values is None:
            return None
        options = [o + v for o in options for v in values]
        if len(options) > MAX_STRINGS:
            return None
    return _bounded(options)


# ----- per snapshot ------------------------------------------------------------------------

class _Cache:
    """Per snapshot: function definitions read, where functions are defined, the console
    scripts, and each entry point's reach."""

    def __init__(self) -> None:
        self.definitions: dict[tuple[str, int], _Definition | None] = {}
        self.defined: dict[tuple[str, str], tuple[int, ...]] = {}
        self.scripts: dict[str, str] | None = None
        self.reach: dict[tuple[str, str | None], tuple[tuple[str, ...], frozenset[str]]] = {}


_CACHE: Derived[_Cache] = Derived(lambda snapshot: _Cache())


def _definition(snapshot: Snapshot, path: str, line: int) -> _Definition | None:
    cache = snapshot.derived(_CACHE)
    key = (path, line)
    if key not in cache.definitions:
        module = snapshot.sources.module(path)
        found = None
        if isinstance(module, Module):
            found = next((_read_definition(n) for n in ast.walk(module.tree) if isinstance(
                n, ast.FunctionDef | ast.AsyncFunctionDef) and n.lineno == line), None)
        cache.definitions[key] = found
    return cache.definitions[key]


def _defined(snapshot: Snapshot, test_path: str, name: str) -> list[tuple[str, int]]:
    """Where the test, or a module it loads, defines a function ``name`` at its top level
    (every such place: which one a call reaches is not decided here)."""
    cache = snapshot.derived(_CACHE)
    loaded, _ = snapshot.graph.closure(test_path)
    out: list[tuple[str, int]] = []
    for path in (test_path, *sorted(loaded)):
        key = (path, name)
        lines = cache.defined.get(key)
        if lines is None:
            module = snapshot.sources.module(path)
            lines = tuple(n.lineno for n in module.tree.body if isinstance(
                n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name) \
                if isinstance(module, Module) and name in module.text else ()
            cache.defined[key] = lines
        out.extend((path, line) for line in lines)
    return out


def _console_scripts(snapshot: Snapshot) -> dict[str, str]:
    """The console scripts the repository's ``pyproject.toml`` files declare: name ->
    module (at the root, in each python root and in the folder holding it)."""
    import tomllib  # read only when a launch names a command that may be a console script

    cache = snapshot.derived(_CACHE)
    if cache.scripts is None:
        places = ["pyproject.toml"]
        for root in snapshot.config.python_roots:
            places.extend(f"{folder}/pyproject.toml" for folder in
                          (root, posixpath.dirname(root)) if folder not in ("", "."))
        scripts: dict[str, str] = {}
        for place in dict.fromkeys(places):
            text = snapshot.sources.text(place)
            if not isinstance(text, str):
                continue
            try:
                data = tomllib.loads(text)
            except (ValueError, RecursionError):  # not TOML: it declares nothing
                continue
            project = data.get("project")
            declared = project.get("scripts") if isinstance(project, dict) else None
            for name, target in (declared.items() if isinstance(declared, dict) else ()):
                module = target.split(":")[0].split() if isinstance(target, str) else []
                if module:  # "package.module:function [extra]"
                    scripts.setdefault(name, module[0])
        cache.scripts = scripts
    return cache.scripts


def module_file(snapshot: Snapshot, module: str) -> str | None:
    """The repository file ``python -m module`` runs, through the python roots."""
    if not _MODULE.fullmatch(module):
        return None
    base = module.replace(".", "/")
    for root in snapshot.config.python_roots:
        for path in (f"{base}.py", f"{base}/__main__.py"):
            full = path if root == "." else f"{root}/{path}"
            if snapshot.sources.exists(full):
                return full
    return None


# ----- entry points ------------------------------------------------------------------------

@dataclass
class _Survey:
    entries: dict[tuple[str, str | None], EntryPoint]
    unknown: dict[str, None]

    def add(self, snapshot: Snapshot, program: _Program, how: str | None) -> None:
        """Resolve one program; ``how`` says how it is started (None: by its own words)."""
        if program.names is None:
            self.unknown[f"{how or _quoted(program.prefix)} {program.why}"] = None
            return
        for name in program.names:
            shown = how or _quoted(f"{program.prefix} {name}".strip())
            if program.kind == "script":
                self._script(snapshot, name, shown)
            elif program.kind == "module":
                self._module(snapshot, name, shown)
            else:
                module = _console_scripts(snapshot).get(name)
                if module is not None:  # else a program of the system's
                    self._module(snapshot, module, shown)

    def _script(self, snapshot: Snapshot, name: str, how: str) -> None:
        if name.startswith("/"):
            return  # outside the repository
        path = posixpath.normpath(name)
        if path == ".." or path.startswith("../"):
            return
        if snapshot.sources.exists(path):
            self.entries.setdefault((path, None), EntryPoint(path, how))
        else:
            self.unknown[f"{how}: `{name}` is not a file of the repository (from its "
                         "root)"] = None

    def _module(self, snapshot: Snapshot, name: str, how: str) -> None:
        path = module_file(snapshot, name)
        if path is not None:  # else a module installed, not the repository's
            self.entries.setdefault((path, name), EntryPoint(path, how, name))


def _survey(snapshot: Snapshot, outcome: LaunchOutcome, test_path: str) -> _Survey:
    survey = _Survey({}, {})
    for call in outcome.calls:
        found = [] if call.named else _programs(call.words)
        for program in found:
            survey.add(snapshot, program, None)
        if call.definition is not None:  # the repository's function: what its code runs too
            _from_definitions(snapshot, survey, call.callee, [call.definition], call, found)
        elif call.named:  # a launch function the evaluator did not resolve
            _from_definitions(snapshot, survey, call.callee,
                              _defined(snapshot, test_path, call.callee), call, found)
        elif not found:
            survey.unknown[f"`{call.callee}` is given a command line that names no program "
                           "it starts"] = None
    for server in outcome.servers:
        if server.form == LAUNCH_SERVER:  # `python -m sglang.launch_server` in the test
            survey.add(snapshot, _Program("module", (LAUNCH_SERVER,), "python -m"), None)
        elif server.form in snapshot.config.launch.servers:
            _from_definitions(snapshot, survey, server.form,
                              _defined(snapshot, test_path, server.form), None, [])
    if outcome.stopped:
        survey.unknown["the evaluation of the test stopped before its end: a launch past that "
                       "point is not known"] = None
    return survey


def _from_definitions(snapshot: Snapshot, survey: _Survey, callee: str,
                      places: list[tuple[str, int]], call: LaunchCall | None,
                      given: list[_Program]) -> None:
    """The programs the definitions of a launch function name, for one call of it (``given``:
    those its arguments named already)."""
    how = f"launched by `{callee}`"
    found = bool(given)
    for path, line in places:
        definition = _definition(snapshot, path, line)
        if definition is None:
            continue
        bound = _bind(definition, call)
        for words in definition.commands:
            for program in _programs([_fill(w, bound) for w in words]):
                found = True
                survey.add(snapshot, program, how)
    if not places:
        survey.unknown[f"{how}, which is not defined in the files the test loads"] = None
    elif not found:
        survey.unknown[f"{how}, whose code names no program it starts"] = None


def entry_points(snapshot: Snapshot, outcome: LaunchOutcome,
                 test_path: str) -> tuple[EntryPoint, ...]:
    """The repository files a test's launches run, each once, in the order its launches
    name them."""
    return tuple(_survey(snapshot, outcome, test_path).entries.values())


def unknown_launches(snapshot: Snapshot, outcome: LaunchOutcome,
                     test_path: str) -> tuple[str, ...]:
    """One sentence per launch of the test whose program cannot be known statically (what
    it runs may load any file of the repository)."""
    return tuple(_survey(snapshot, outcome, test_path).unknown)


def runtime_reach(snapshot: Snapshot,
                  entry: EntryPoint) -> tuple[tuple[str, ...], frozenset[str]]:
    """The files an entry point loads, itself first (a module's parent packages too), and
    every candidate path on the way: its import closure, worked out once per snapshot and
    entry point and shared by every test that launches it."""
    cache = snapshot.derived(_CACHE)
    key = (entry.path, entry.module)
    found = cache.reach.get(key)
    if found is None:
        starts, candidates = [entry.path], {entry.path}
        if entry.module is not None:
            starts, candidates = _packages(snapshot, entry.path, entry.module)
        files = dict.fromkeys(starts)
        for start in starts:
            loaded, reached = snapshot.graph.closure(start)
            files.update(dict.fromkeys(loaded))
            candidates.update(reached)
        found = (tuple(files), frozenset(candidates))
        cache.reach[key] = found
    return found


def _packages(snapshot: Snapshot, path: str, module: str) -> tuple[list[str], set[str]]:
    """What ``python -m module`` runs from ``path``: its parent packages' ``__init__.py``
    (the package's own, for a ``__main__.py``), then the file; and the paths that could
    have been it or them."""
    parts = module.split(".")
    folders = [".".join(parts[:depth]).replace(".", "/") for depth in range(1, len(parts))]
    if path.endswith("/__main__.py"):
        folders.append(module.replace(".", "/"))
    base = module.replace(".", "/")
    candidates: set[str] = set()
    starts: list[str] = []
    for root in snapshot.config.python_roots:
        prefix = "" if root == "." else f"{root}/"
        candidates.update(f"{prefix}{p}" for p in (f"{base}.py", f"{base}/__main__.py"))
        inits = [f"{prefix}{folder}/__init__.py" for folder in folders]
        candidates.update(inits)
        if path in (f"{prefix}{base}.py", f"{prefix}{base}/__main__.py"):
            starts = [i for i in inits if snapshot.sources.exists(i)]
    return [*starts, path], candidates


def launched_by(snapshot: Snapshot, outcome: LaunchOutcome, test_path: str,
                changed: Collection[str]) -> dict[str, EntryPoint]:
    """Each changed file a test's launches run, and the first entry point (in the order of
    :func:`entry_points`) whose reach holds it."""
    out: dict[str, EntryPoint] = {}
    wanted = sorted(changed)
    for entry in entry_points(snapshot, outcome, test_path):
        _, candidates = runtime_reach(snapshot, entry)
        for path in wanted:
            if path not in out and path in candidates:
                out[path] = entry
    return out
