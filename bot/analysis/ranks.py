"""Launches of ranks: ``torchrun`` and ``torch.multiprocessing.spawn``.

A test may start its ranks itself rather than through the trainer: a command line it runs
(``subprocess.run([...])``, ``os.system(...)``, ``os.execvp("torchrun", [...])``) that names
``torchrun`` or ``python -m torch.distributed.run`` (``.launch`` too), or a call of
``torch.multiprocessing.spawn(fn, nprocs=N)`` (``mp.spawn``, ``start_processes``). Each is
one launch of ``--nproc-per-node`` ranks on each of ``--nnodes`` nodes (``nprocs`` for a
spawn; 1 when not given), every rank on its own GPU: PAR003 holds when the ranks of one
node fit the runner's GPUs. A launch under a condition that cannot be decided (a cached
checkpoint is converted only when missing) is checked all the same: a rank count that fits
fits whether it runs or not, and one that does not fails whenever it runs.

A launch whose rank count is not a number known statically, or whose arguments are not of
a kind a launcher takes, is ``unchecked``, with a
PAR019 naming the expression or the place; it is never taken for checked.
"""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from bot.analysis import shell
from bot.analysis.evaluate import ExternalCall
from bot.analysis.findings import Finding, finding
from bot.analysis.flags import Branches, Opaque, Token, Word
from bot.analysis.par.placement import placement_exceeds_runner
from bot.analysis.shell import newlines_before
from bot.analysis.snapshot import Snapshot
from bot.analysis.source import Module
from bot.analysis.values import Const, ListV, Origin, Text, TupleV, Unknown, Value

__all__ = ["MENTIONS", "Checked", "RankLaunch", "check", "from_call", "is_spawn"]

# what a file that may start ranks mentions (a pattern): one that does not starts none
MENTIONS = (r"torchrun|torch\.distributed\.(?:run|launch)\b|\b(?:spawn|start_processes)\("
            r"|[\s'\"]-m\s"  # a module run as a program, which may be a tool of ranks
            r"|\.sh\b")  # a shell script, which may start them
SPAWNS = frozenset({"spawn", "start_processes"})
_TORCHRUN = re.compile(r"(?:\S*/)?torchrun")
_TORCH_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch"})
_NPROC = frozenset({"--nproc-per-node", "--nproc_per_node"})
_NNODES = frozenset({"--nnodes"})
_SWITCHES = frozenset({"--standalone", "--run-path", "--run_path", "--virtual-local-rank",
                       "--virtual_local_rank", "-m", "--module", "--no-python", "--no_python"})
# `--nproc-per-node gpu` / `auto`: one rank per GPU the machine has, which always fits
_PER_GPU = frozenset({"gpu", "auto"})
_MP_MODULE = "torch.multiprocessing"


@dataclass(frozen=True, slots=True)
class Count:
    """A rank or node count: a number, one rank per GPU (``per_gpu``), or the text of an
    expression that cannot be resolved (``unknown``), each with where it is written."""

    value: int | None
    path: str
    line: int
    unknown: str | None = None
    per_gpu: bool = False
    at_most: int | None = None  # the bound of a count not known (`min(4, n)`)


@dataclass(frozen=True, slots=True)
class RankLaunch:
    """One launch of ranks; ``problem`` says why it could not be read (then no count)."""

    form: str  # "torchrun", "torch.multiprocessing.spawn"
    path: str
    line: int
    guards: tuple[str, ...]
    nproc: Count | None
    nnodes: Count | None
    problem: str | None = None

    def signature(self) -> tuple[tuple[str, object], ...]:
        def show(count: Count | None) -> object:
            if count is None:
                return None
            if count.unknown is not None:
                return f"? ({count.unknown})"
            return "per GPU" if count.per_gpu else count.value

        out: list[tuple[str, object]] = [("launcher", self.form),
                                         ("ranks per node", show(self.nproc)),
                                         ("nodes", show(self.nnodes))]
        if self.guards:
            out.append(("runs when", " and ".join(self.guards)))
        return tuple(out)


def is_spawn(tail: str) -> bool:
    """Whether a call's last name may be a spawn of ranks (the evaluator reports it)."""
    return tail in SPAWNS


def from_call(snapshot: Snapshot, call: ExternalCall, tokens: Sequence[Token]) -> list[RankLaunch]:
    """The launches of ranks one call makes (none for most calls)."""
    if call.tail in SPAWNS:
        spawn = _spawn(snapshot, call)
        return [spawn] if spawn is not None else []
    return [*_torchruns(call, tokens), *_scripts(snapshot, call, tokens)]


# ----- shell scripts ------------------------------------------------------------------------

def _scripts(snapshot: Snapshot, call: ExternalCall, tokens: Sequence[Token]) -> list[RankLaunch]:
    """The launches of ranks in the repository's shell scripts the command line runs
    (``bash tests/run.sh``, ``./run.sh``), read with :mod:`bot.analysis.shell`."""
    out: list[RankLaunch] = []
    for token in tokens:
        word = _word(token)
        if word is None or not word.endswith(".sh"):
            continue
        path = posixpath.normpath(word.removeprefix("./"))
        if path.startswith(("/", "..")) or not snapshot.sources.exists(path):
            continue
        text = snapshot.sources.text(path)
        line = _where(token, call)[1]
        if not isinstance(text, str):
            out.append(RankLaunch("shell script", call.path, line, call.guards, None, None,
                                  f"`{path}` cannot be read"))
            continue
        try:
            shlex.split(text, comments=True)
        except ValueError as error:
            out.append(RankLaunch("shell script", path, 1, call.guards, None, None,
                                  f"`{path}` does not parse as shell ({error})"))
            continue
        lines = newlines_before(text)
        for command in shell.commands(text):
            if not command:
                continue
            at = lines(command[0].start) + 1
            words: list[Token] = []
            for item in command:
                origin = Origin(path, lines(item.start) + 1)
                if "$" in item.text:
                    words.append(Opaque(item.text, origin, known=item.text.split("$", 1)[0]))
                else:
                    words.append(Word(item.text, (origin,) * len(item.text)))
            out.extend(_torchruns(replace(call, path=path, line=at), words))
    return out


def exec_tokens(call: ExternalCall) -> ExternalCall | None:
    """``os.execvp(file, argv)`` and its kin: the call without the program's file (its
    words are the argv that follows); None for any other call."""
    if call.tail.startswith(("execv", "execl", "spawnv", "spawnl")) and call.args:
        return replace(call, args=call.args[1:])
    return None


# ----- torchrun ---------------------------------------------------------------------------

def _word(token: Token) -> str | None:
    return token.text.strip("'\"") if isinstance(token, Word) else None


def _torchruns(call: ExternalCall, tokens: Sequence[Token]) -> list[RankLaunch]:
    out: list[RankLaunch] = []
    at = 0
    while at < len(tokens):
        word = _word(tokens[at])
        at += 1
        if word is None:
            continue
        form = None
        if _TORCHRUN.fullmatch(word):
            form = "torchrun"
        elif word == "-m" and at < len(tokens) and _word(tokens[at]) in _TORCH_MODULES:
            form = f"python -m {_word(tokens[at])}"
            at += 1
        elif word.startswith("-m") and word[2:] in _TORCH_MODULES:
            form = f"python -m {word[2:]}"
        if form is not None:
            launch, at = _options(call, tokens, at, form)
            out.append(launch)
    return out


def _options(call: ExternalCall, tokens: Sequence[Token], at: int,
             form: str) -> tuple[RankLaunch, int]:
    """A launcher's options up to its program: the rank and node counts (a later one
    wins, as in argparse)."""
    nproc: Count | None = None
    nnodes: Count | None = None
    problem = None
    while at < len(tokens):
        token = tokens[at]
        word = _word(token)
        if isinstance(token, Branches):
            problem = f"`{token.cond}` chooses between command lines here"
            at += 1
            continue
        if isinstance(token, Opaque):
            at += 1
            name = token.known.partition("=")[0]
            if name in _NPROC or name in _NNODES:  # `--nproc-per-node={n}`
                count = _count(token, token, call)
                nproc, nnodes = (count, nnodes) if name in _NPROC else (nproc, count)
                continue
            if token.known.startswith("-"):
                continue  # another option, with its value
            if nproc is None:  # options not known (`{dist_args}`) or the program
                nproc = _count(token, token, call)
            break
        if word is None or not word.startswith("-"):
            break  # the program
        at += 1
        name, eq, value = word.partition("=")
        if name in _SWITCHES or not name.startswith("--"):
            continue
        given: Token | str | None = value if eq else (tokens[at] if at < len(tokens) else None)
        if not eq:
            at += 1
        if name in _NPROC:
            nproc = _count(given, token, call)
        elif name in _NNODES:
            nnodes = _count(given, token, call)
    default = Count(1, call.path, call.line)
    if problem is not None:
        return RankLaunch(form, call.path, call.line, call.guards, None, None, problem), at
    return RankLaunch(form, call.path, call.line, call.guards, nproc or default,
                      nnodes or default), at


def _count(given: Token | str | None, flag: Token, call: ExternalCall) -> Count:
    path, line = _where(flag, call)
    if isinstance(given, Word | str):
        text = given.text if isinstance(given, Word) else given
        text = text.strip("'\"")
        if text in _PER_GPU:
            return Count(None, path, line, per_gpu=True)
        if re.fullmatch(r"\d{1,6}", text):
            return Count(int(text), path, line)
        if isinstance(given, Word):
            path, line = _where(given, call)
        return Count(None, path, line, unknown=text)
    if isinstance(given, Opaque):
        origin = given.origin
        return Count(None, origin.path if origin else path, origin.line if origin else line,
                     unknown=given.text, at_most=given.at_most)
    if isinstance(given, Branches):
        return Count(None, path, line, unknown=given.cond)
    return Count(None, path, line, unknown="(no value)")


def _where(token: Token, call: ExternalCall) -> tuple[str, int]:
    if isinstance(token, Word):
        origin = next((o for o in token.origins if o is not None), None)
    elif isinstance(token, Opaque | Branches):
        origin = token.origin
    else:
        origin = None
    return (origin.path, origin.line) if origin is not None else (call.path, call.line)


# ----- torch.multiprocessing.spawn ----------------------------------------------------------

def _spawn(snapshot: Snapshot, call: ExternalCall) -> RankLaunch | None:
    """``mp.spawn(fn, args, nprocs)`` when ``mp`` is ``torch.multiprocessing`` in the module
    that calls it (read from its imports); None for another ``spawn``."""
    head = call.name.rpartition(".")[0]
    if not head or _module_of(snapshot, call.module, head) != _MP_MODULE:
        return None
    form = f"{_MP_MODULE}.{call.tail}"
    value: Value | None = call.keywords.get("nprocs")
    if value is None and len(call.args) > 2:
        value = call.args[2]
    if value is None and call.partial:
        value = Unknown(f"{call.name}(*args, **kwargs)")
    if value is None:
        count = Count(1, call.path, call.line)
    elif isinstance(value, Const) and type(value.value) is int:
        origin = value.origin
        count = Count(value.value, origin.path if origin else call.path,
                      origin.line if origin else call.line)
    elif isinstance(value, Unknown):
        origin = value.origin
        count = Count(None, origin.path if origin else call.path,
                      origin.line if origin else call.line, unknown=value.text,
                      at_most=value.at_most)
    else:
        return RankLaunch(form, call.path, call.line, call.guards, None, None,
                          f"`nprocs` of `{call.name}` is {_kind(value)}, not a whole number")
    return RankLaunch(form, call.path, call.line, call.guards, count, Count(1, call.path, call.line))


def _kind(value: Value) -> str:
    """What a value is, in words."""
    if isinstance(value, Const):
        return "`None`" if value.value is None else f"a {type(value.value).__name__}"
    if isinstance(value, Text):
        return "a string"
    if isinstance(value, ListV | TupleV):
        return "a list" if isinstance(value, ListV) else "a tuple"
    return "not a plain value"


def _module_of(snapshot: Snapshot, path: str, name: str) -> str | None:
    """The module a dotted name stands for in a file, from its imports (any scope)."""
    module = snapshot.sources.module(path)
    if not isinstance(module, Module):
        return None
    first, _, rest = name.partition(".")
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname == first:
                    return ".".join(filter(None, (alias.name, rest)))
                if alias.asname is None and alias.name.split(".")[0] == first and \
                        name.startswith(alias.name) and (name == alias.name or
                                                         name[len(alias.name)] == "."):
                    return name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if (alias.asname or alias.name) == first:
                    return ".".join(filter(None, (f"{node.module}.{alias.name}", rest)))
    return None


# ----- the rule -----------------------------------------------------------------------------

@dataclass(slots=True)
class Checked:
    findings: list[Finding]
    state: Literal["checked", "unchecked"]
    signature: tuple[tuple[str, object], ...]


def describe(launch: RankLaunch) -> str:
    def show(count: Count | None) -> str:
        if count is None:
            return "?"
        if count.unknown is not None:
            return "?"
        return "one per GPU" if count.per_gpu else str(count.value)

    return f"`{launch.form}`, {show(launch.nproc)} ranks per node on {show(launch.nnodes)} node(s)"


def check(launch: RankLaunch, test: str, gpus: int | None) -> Checked:
    """PAR003 on one launch of ranks: the ranks of one node against the runner's GPUs;
    PAR019 for what is not known."""
    context = (f"Launch of ranks in `{test}`: {describe(launch)}, on a runner of "
               f"{gpus if gpus is not None else 'unknown'} GPUs.")
    signature = launch.signature()
    if launch.problem is not None or launch.nproc is None:
        return Checked([finding(
            "PAR019", launch.path, launch.line,
            f"This launch of ranks (`{launch.form}`) cannot be read statically: "
            f"{launch.problem}; its rank count was not checked.", test=test,
            details=(context,))], "unchecked", signature)
    nproc = launch.nproc
    if nproc.unknown is not None and (gpus is None or nproc.at_most is None or
                                      nproc.at_most > gpus):
        return Checked([finding(
            "PAR019", nproc.path, nproc.line,
            f"`{nproc.unknown}` cannot be resolved statically, so the ranks per node of this "
            f"`{launch.form}` launch are not known; PAR003 not checked.", test=test,
            details=(context,))], "unchecked", signature)
    found: list[Finding] = []
    if gpus is not None and nproc.value is not None and nproc.value > gpus:
        when = f" when `{launch.guards[0]}`" if launch.guards else ""
        found.append(finding(
            placement_exceeds_runner.id, nproc.path, nproc.line,
            f"This launch starts {nproc.value} ranks per node (`{launch.form}`) but its runner "
            f"has {gpus} GPUs: the ranks past the last GPU fail when they take their device"
            f"{when}.",
            test=test, details=(context, f"{nproc.value} GPUs requested, {gpus} available."),
            fix=f"at most {gpus} ranks per node",
        ))
    return Checked(found, "checked", signature)
