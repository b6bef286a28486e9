"""Repository command lines that start ranks: their parallel flags, read from their parsers.

A test may run one of the repository's own tools (``python -m pkg.tool run --tp 2 --pp 2``)
that starts its ranks itself. Which of its options are parallel sizes is read from the
tool's parser definitions, in its module and the repository modules it loads, never from
a list of flags: ``add_argument("--tp", type=int, default=1)`` (with ``dest``, and the
``for name in NAMES: add_argument(f"--{name}")`` form over a tuple of names), typer's
``Option(...)`` and click's ``option(...)``. An option's destination names its size:
``tp``/``tensor_model_parallel_size``, ``pp``, ``cp``, ``ep``, ``etp``, and ``nproc``/
``num_gpus`` for a rank count given outright.

Each group of those flags in the command is one launch: the flags on the command line
itself, and each quoted option value that holds some (``--target '--tp 2 --cp 2'``, a
configuration the tool parses with the same parser). A quoted value not known statically
may be such a configuration: it is a launch whose rank count is not known. Its rank count is ``nproc`` when
given, else ``tp x pp x cp`` (Megatron's world is a multiple of it: at least that many
ranks). A value not known is PAR019; a parser that cannot be read is PAR019 naming it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bot.analysis.evaluate import ExternalCall
from bot.analysis.flags import Opaque, Token, Word
from bot.analysis.ranks import Count, RankLaunch
from bot.analysis.runtime import module_file
from bot.analysis.snapshot import Derived, Snapshot
from bot.analysis.source import Module

__all__ = ["from_call"]

# an option's destination -> the size it gives
SIZES: dict[str, str] = {
    **dict.fromkeys(("tp", "tp_size", "tensor_parallel_size", "tensor_model_parallel_size"), "tp"),
    **dict.fromkeys(("pp", "pp_size", "pipeline_parallel_size", "pipeline_model_parallel_size"),
                    "pp"),
    **dict.fromkeys(("cp", "cp_size", "context_parallel_size"), "cp"),
    **dict.fromkeys(("ep", "ep_size", "expert_parallel_size", "expert_model_parallel_size"), "ep"),
    **dict.fromkeys(("etp", "etp_size", "expert_tensor_parallel_size"), "etp"),
    **dict.fromkeys(("nproc", "nproc_per_node", "num_gpus", "num_gpus_per_node", "ngpus"),
                    "nproc"),
}
_PYTHON = re.compile(r"(?:\S*/)?python(?:\d+(?:\.\d+)*)?")
_SEPARATORS = frozenset({";", "&&", "||", "|", "&"})
_OPTION_CALLS = frozenset({"add_argument", "Option", "option"})
MAX_FILES = 200  # parser definitions are looked for in at most this many modules


@dataclass(frozen=True, slots=True)
class Parser:
    """A tool's parallel flags: flag -> (size, default), or why they could not be read."""

    flags: dict[str, tuple[str, int | None]]
    problem: str | None = None


_PARSERS: Derived[dict[str, Parser]] = Derived(lambda snapshot: {})


def from_call(snapshot: Snapshot, call: ExternalCall, tokens: Sequence[Token]) -> list[RankLaunch]:
    """The launches of ranks a call makes by running a repository tool with parallel flags."""
    out: list[RankLaunch] = []
    for module, words in _tools(tokens):
        path = module_file(snapshot, module)
        if path is None:
            continue  # not the repository's
        parser = _parser(snapshot, path)
        form = f"python -m {module}"
        if parser.problem is not None:
            out.append(RankLaunch(form, call.path, call.line, call.guards, None, None,
                                  parser.problem))
            continue
        if not parser.flags:
            continue
        for group in _groups(words, parser):
            out.append(_launch(form, call, group, parser))
    return out


def _word(token: Token) -> str | None:
    return token.text if isinstance(token, Word) else None


def _flag(token: Token) -> str | None:
    """The option a word names (``--tp=2``: ``--tp``)."""
    word = _word(token)
    return word.partition("=")[0] if word is not None else None


def _tools(tokens: Sequence[Token]) -> Iterator[tuple[str, list[Token]]]:
    """Each ``python -m module`` of a command line, with the words that follow it."""
    at = 0
    while at < len(tokens):
        word = _word(tokens[at])
        at += 1
        if word is None or not _PYTHON.fullmatch(word.strip("'\"")):
            continue
        if at + 1 < len(tokens) and _word(tokens[at]) == "-m":
            module = _word(tokens[at + 1])
            at += 2
            if module is None:
                continue
            rest: list[Token] = []
            while at < len(tokens) and _word(tokens[at]) not in _SEPARATORS:
                rest.append(tokens[at])
                at += 1
            yield module, rest


def _groups(words: list[Token], parser: Parser) -> list[list[Token]]:
    """The flags on the line itself, then those of each quoted value that holds some."""
    top: list[Token] = []
    groups: list[list[Token]] = []
    at = 0
    while at < len(words):
        token = words[at]
        text = _word(token)
        if isinstance(token, Word) and text is not None and text[:1] in "'\"" and \
                not (len(text) > 1 and text.endswith(text[0])):
            quote = text[0]
            inner: list[Token] = [Word(text[1:], token.origins[1:])]
            at += 1
            while at < len(words):
                item = words[at]
                at += 1
                end = _word(item)
                if isinstance(item, Word) and end is not None and end.endswith(quote):
                    inner.append(Word(end[:-1], item.origins[:-1]))
                    break
                inner.append(item)
            if any(_flag(t) in parser.flags for t in inner):
                groups.append(inner)
            continue
        if isinstance(token, Opaque) and token.known and set(token.known) <= set("'\""):
            groups.append([token])  # a quoted value not known: it may be a configuration
            at += 1
            continue
        top.append(token)
        at += 1
    if any(_flag(t) in parser.flags or (isinstance(t, Opaque) and t.known.startswith("--"))
           for t in top):
        groups.insert(0, top)
    return groups


def _launch(form: str, call: ExternalCall, group: list[Token], parser: Parser) -> RankLaunch:
    one = Count(1, call.path, call.line)
    if len(group) == 1 and isinstance(group[0], Opaque) and not group[0].known.startswith("-"):
        return RankLaunch(form, call.path, call.line, call.guards, _unknown(group[0], call), one)
    sizes: dict[str, Count] = {}
    for size, default in parser.flags.values():
        if default is not None:
            sizes.setdefault(size, Count(default, call.path, call.line))
    problem = None
    at = 0
    while at < len(group):
        token = group[at]
        at += 1
        if isinstance(token, Opaque) and token.known.partition("=")[0] in parser.flags:
            size = parser.flags[token.known.partition("=")[0]][0]
            sizes[size] = _unknown(token, call)
            continue
        text = _word(token)
        if not isinstance(token, Word) or text is None:
            continue
        name, eq, value = text.partition("=")
        if name not in parser.flags:
            continue
        size = parser.flags[name][0]
        given: Token | None = Word(value, token.origins[len(name) + 1:]) if eq else (
            group[at] if at < len(group) else None)
        at += not eq
        if isinstance(given, Word) and re.fullmatch(r"\d{1,6}", given.text):
            origin = next((o for o in given.origins if o is not None), None)
            sizes[size] = Count(int(given.text), origin.path if origin else call.path,
                                origin.line if origin else call.line)
        elif isinstance(given, Opaque):
            sizes[size] = _unknown(given, call)
        else:
            problem = f"`{name}` is given {given.text if isinstance(given, Word) else 'nothing'!r}, " \
                      "not a number"
    if problem is not None:
        return RankLaunch(form, call.path, call.line, call.guards, None, None, problem)
    return RankLaunch(form, call.path, call.line, call.guards, _ranks(sizes, call), one)


def _unknown(token: Opaque, call: ExternalCall) -> Count:
    origin = token.origin
    return Count(None, origin.path if origin else call.path, origin.line if origin else call.line,
                 unknown=token.text, at_most=token.at_most)


def _ranks(sizes: dict[str, Count], call: ExternalCall) -> Count:
    """``nproc`` when given, else ``tp x pp x cp`` (where the largest is written)."""
    if "nproc" in sizes:
        return sizes["nproc"]
    product = 1
    where = Count(1, call.path, call.line)
    for size in ("tp", "pp", "cp"):
        count = sizes.get(size)
        if count is None:
            continue
        if count.value is None:
            return count  # not known: the rank count is not
        product *= count.value
        if count.value > 1:
            where = count
    return Count(product, where.path, where.line)


# ----- parser definitions -------------------------------------------------------------------

def _parser(snapshot: Snapshot, path: str) -> Parser:
    known = snapshot.derived(_PARSERS)
    found = known.get(path)
    if found is None:
        found = _read(snapshot, path)
        known[path] = found
    return found


def _read(snapshot: Snapshot, path: str) -> Parser:
    loaded, _ = snapshot.graph.closure(path)
    flags: dict[str, tuple[str, int | None]] = {}
    for file in [path, *sorted(loaded)][:MAX_FILES]:
        module = snapshot.sources.module(file)
        if not isinstance(module, Module):
            text = snapshot.sources.text(file)
            if isinstance(text, str) and any(w in text for w in _OPTION_CALLS):
                return Parser({}, f"the parser definitions in `{file}` cannot be read (it does "
                                  "not parse)")
            continue
        if not any(w in module.text for w in _OPTION_CALLS):
            continue
        try:
            for flag, size, default in _definitions(module.tree):
                flags.setdefault(flag, (size, default))
        except (ValueError, TypeError, RecursionError):
            return Parser({}, f"the parser definitions in `{file}` cannot be read")
    return Parser(flags)


def _names(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    """The module's top-level tuples and lists of strings."""
    out: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Tuple | ast.List) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
            out[target.id] = tuple(str(e.value) for e in value.elts  # type: ignore[attr-defined]
                                   )
    return out


def _definitions(tree: ast.Module) -> Iterator[tuple[str, str, int | None]]:
    """Each parallel flag the module's parsers define: (flag, size, default)."""
    names = _names(tree)
    loops: dict[int, tuple[str, tuple[str, ...]]] = {}  # add_argument call -> loop variable
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and \
                isinstance(node.iter, ast.Name) and node.iter.id in names:
            for inner in ast.walk(node):
                loops[id(inner)] = (node.target.id, names[node.iter.id])
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _tail(node.func) in _OPTION_CALLS:
            yield from _option(node, loops.get(id(node)))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _typer_params(node)


def _tail(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _option(node: ast.Call, loop: tuple[str, tuple[str, ...]] | None) -> Iterator[
        tuple[str, str, int | None]]:
    flags: list[str] = []
    for arg in node.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("-"):
            flags.append(arg.value)
        elif isinstance(arg, ast.JoinedStr) and loop is not None:
            flags.extend(_expand(arg, loop))
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    default = _int(keywords.get("default"))
    dest = keywords.get("dest")
    longs = [f for f in flags if f.startswith("--")]
    if not longs:
        return
    named = dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else None
    for flag in longs:  # each flag of a loop is its own option
        size = SIZES.get(named or flag[2:].replace("-", "_"))
        if size is not None:
            yield flag, size, default


def _expand(node: ast.JoinedStr, loop: tuple[str, tuple[str, ...]]) -> list[str]:
    """``f"--{name}"`` for each name of the loop over a tuple of names."""
    variable, values = loop
    out = []
    for value in values:
        text = ""
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                text += part.value
            elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) and \
                    part.value.id == variable and part.format_spec is None:
                text += value
            else:
                return []
        out.append(text)
    return [t for t in out if t.startswith("-")]


def _typer_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[
        tuple[str, str, int | None]]:
    """A typer command's parameters: ``tp: Annotated[int, typer.Option()] = 1`` is ``--tp``."""
    arguments = fn.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: dict[str, ast.expr] = dict(zip(
        (a.arg for a in reversed(positional)), reversed(arguments.defaults), strict=False))
    defaults.update((a.arg, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults,
                                              strict=True) if d is not None)
    for arg in [*positional, *arguments.kwonlyargs]:
        annotation = arg.annotation
        if not (isinstance(annotation, ast.Subscript) and _tail(annotation.value) == "Annotated"):
            continue
        inner = annotation.slice
        items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        option = next((i for i in items[1:] if isinstance(i, ast.Call) and
                       _tail(i.func) == "Option"), None)
        size = SIZES.get(arg.arg)
        if option is None or size is None:
            continue
        given = [a.value for a in option.args if isinstance(a, ast.Constant) and
                 isinstance(a.value, str) and a.value.startswith("--")]
        for flag in given or [f"--{arg.arg.replace('_', '-')}"]:
            yield flag, size, _int(defaults.get(arg.arg))


def _int(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None
