"""The outputs a workflow step's shell script writes to `$GITHUB_OUTPUT`, decided statically
where its branches can be decided.

The script's `${{ }}` expressions are put in first, as GitHub does (the caller says what each
gives; one it cannot say makes every word it touches unknown). The script is then read into
commands (`bot/analysis/ci/script.py`, a small hand-written reader: bashlex rejects the
`if [[ a == b || c == d ]]` these scripts are made of) and run abstractly: variables assigned
a literal (and the step's `env:`) are known, tests on known words are decided
(`bot/analysis/ci/words.py`: `[[ ]]`, `[ ]`, `test`, `case`), and every other condition
(a command's status) takes both ways, their states merged: an output written with the
same value on every way keeps it; one written differently, or only on some ways, or in a
loop (which runs any number of times), is None. What `echo`, `printf`, `cat <<EOF` and
`tee` write to the file is read as GitHub reads it (`name=value` lines and `name<<DELIM`
blocks; `>` empties it first); any other command that writes to it, or names it, makes every
output written so far unknown and the result incomplete.

Taken as given: the step succeeds (a way that ends in `exit 1` is dropped; `set -e` is not
modelled), a value that is not known holds no line break and is not a heredoc's delimiter,
and a program writing to the file writes whole, well-formed lines. A script that cannot be
read, over `MAX_SCRIPT` characters, nested deeper than the reader allows or costlier than
`MAX_STEPS` gives every output unknown (an empty, incomplete result). Never raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from bot.analysis.ci import script as sh
from bot.analysis.ci.script import MARK, ScriptError, parse_script
from bot.analysis.ci.words import (
    Expanded,
    Segs,
    case_match,
    double_bracket,
    expand,
    int_value,
    joined,
    single_bracket,
)

MAX_SCRIPT = 100_000  # characters, before and after the expressions are put in
MAX_STEPS = 10_000  # commands run (each loop pass and call counted), weighed by state size
MAX_DEPTH = 100  # compound commands and function calls inside one another, as run
MAX_PASSES = 8  # passes over a loop body before its effects must have settled
MAX_CALLS = 8  # function calls inside one another

_FILE = "\ue001"  # the value of $GITHUB_OUTPUT: the outputs file
_NAMED = "GITHUB_OUTPUT"
_ECHO_FLAGS = re.compile(r"-[neE]+")
_DECLARERS = frozenset({"export", "readonly", "declare", "typeset", "local"})
_READERS = frozenset({"read", "mapfile", "readarray", "getopts", "let"})
_EVALUATORS = frozenset({"eval", "source", "."})
_NEUTRAL = frozenset({":", "true"})
# programs that run no code of the repository's nor write the outputs file unless they name it;
# any other (`python -m tests.ci.ci_policy`, `bash x.sh`, `node`, `make`) inherits
# $GITHUB_OUTPUT and may write to it
_INERT = frozenset({
    "git", "grep", "egrep", "fgrep", "sed", "awk", "ls", "mkdir", "rm", "rmdir", "cp", "mv", "ln",
    "touch", "chmod", "chown", "cut", "tr", "sort", "uniq", "head", "tail", "wc", "jq", "yq", "date",
    "sleep", "curl", "wget", "find", "basename", "dirname", "realpath", "readlink", "nproc", "uname",
    "whoami", "id", "tar", "unzip", "zip", "gzip", "gunzip", "sha256sum", "sha1sum", "md5sum", "diff",
    "comm", "stat", "du", "df", "free", "pwd", "cd", "pushd", "popd", "shift", "set", "shopt",
    "hostname", "env", "printenv", "which", "type", "command", "rocm-smi", "nvidia-smi", "amd-smi",
})
_WRITERS = frozenset({"echo", "printf", "cat", "tee"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}


class StepOutputs(dict[str, str | None]):
    """Output name -> value (None: not known). ``complete`` is False when something wrote to
    the file that could not be read, so a name not listed may be set too."""

    def __init__(self, values: Mapping[str, str | None] | None = None,
                 complete: bool = True) -> None:
        super().__init__(values or {})
        self.complete = complete


def step_outputs(
    script: str, expression: Callable[[str], str | None], *,
    env: Mapping[str, str | None] | None = None,
) -> StepOutputs:
    """What a `run:` script leaves in `$GITHUB_OUTPUT`; ``expression`` gives what an
    `${{ }}` expression's text interpolates to (None: not known), ``env`` the step's
    environment (None: not known)."""
    if len(script) > MAX_SCRIPT:
        return StepOutputs(complete=False)
    text = interpolate(script, expression)
    if len(text) > MAX_SCRIPT:
        return StepOutputs(complete=False)
    try:
        program = parse_script(text)
        known = {k: v for k, v in (env or {}).items() if v is not None}
        return _result(_Run().program(program, _State({**known, _NAMED: _FILE}, {})))
    except (ScriptError, _TooCostlyError):
        return StepOutputs(complete=False)


def interpolate(script: str, expression: Callable[[str], str | None]) -> str:
    """The script with each `${{ expr }}` replaced by what it gives (MARK when not known)."""
    out: list[str] = []
    i = 0
    while True:
        start = script.find("${{", i)
        end = _expression_end(script, start + 3) if start != -1 else -1
        if end == -1:
            out.append(script[i:])
            return "".join(out)
        value = expression(script[start + 3:end].strip())
        out.append(script[i:start])
        out.append(MARK if value is None else value)
        i = end + 2


def _expression_end(text: str, i: int) -> int:
    """The offset of the `}}` that closes an expression, past its 'strings'; -1 if none."""
    while i < len(text):
        if text[i] == "'":
            close = text.find("'", i + 1)
            if close == -1:
                return -1
            i = close + 1
        elif text.startswith("}}", i):
            return i
        else:
            i += 1
    return -1


class _TooCostlyError(Exception):
    """The script is too costly (or too strange) to decide."""


# -- the outputs file ------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Pending:
    """An open `name<<DELIM` value and its lines so far (None: a line not known)."""

    name: str
    delimiter: str
    lines: tuple[str | None, ...] = ()


@dataclass(frozen=True, slots=True)
class _State:
    """What one way through the script knows: variables with known values, the outputs."""

    vars: Mapping[str, str]
    outputs: Mapping[str, str | None]  # a name not here is not set
    complete: bool = True
    pending: _Pending | None = None
    partial: Segs = ()  # the last line written, not yet ended
    lost: bool = False  # the file's lines can no longer be followed


def _merge(*states: _State | None) -> _State | None:
    """What holds on every one of several ways (None: no way gets here)."""
    found = [s for s in states if s is not None]
    if not found:
        return None
    merged = found[0]
    for other in found[1:]:
        merged = _merge_two(merged, other)
    return merged


def _merge_two(a: _State, b: _State) -> _State:
    # set operations on the items: merging is linear in C, not in Python
    vars = a.vars if a.vars is b.vars else dict(a.vars.items() & b.vars.items())
    outputs = a.outputs
    if a.outputs is not b.outputs:
        differ = {name for name, _ in a.outputs.items() ^ b.outputs.items()}
        outputs = {**a.outputs, **b.outputs, **dict.fromkeys(differ)}
    same_file = (a.pending, a.partial) == (b.pending, b.partial)
    return _State(vars, outputs, a.complete and b.complete, a.pending if same_file else None,
                  a.partial if same_file else (), not same_file or a.lost or b.lost)


def _truncate(state: _State) -> _State:
    return replace(state, outputs={}, complete=True, pending=None, partial=(), lost=False)


def _unreadable_write(state: _State) -> _State:
    file = _File(state)
    file.unreadable()
    return file.state(state)


def _write(state: _State, text: Segs | None) -> _State:
    file = _File(state)
    file.write(text)
    return file.state(state)


class _File:
    """The outputs file while one command writes to it, read line by line as GitHub reads
    it (each line costs the same however many outputs there are)."""

    def __init__(self, state: _State) -> None:
        self.values = dict(state.outputs)
        self.fresh: set[str] | None = None  # once wiped: the names set since, still known
        self.complete, self.lost = state.complete, state.lost
        self.pending = state.pending
        self.lines: list[str | None] = list(state.pending.lines) if state.pending else []
        self.partial: list[str | None] = list(state.partial)

    def state(self, base: _State) -> _State:
        outputs = self.values
        if self.fresh is not None:
            outputs = {k: v if k in self.fresh else None for k, v in outputs.items()}
        pending = replace(self.pending, lines=tuple(self.lines)) if self.pending else None
        return replace(base, outputs=outputs, complete=self.complete, pending=pending,
                       partial=tuple(s for s in self.partial if s != ""), lost=self.lost)

    def set(self, name: str, value: str | None) -> None:
        self.values[name] = value
        if self.fresh is not None:
            self.fresh.add(name)

    def unreadable(self) -> None:
        """Lines that cannot be read: inside an open value, a line of it; else any output
        may have been set (the lines are taken to be whole)."""
        self.partial = []
        if self.pending is not None:
            self.lines.append(None)
        else:
            self.fresh, self.complete = set(), False

    def write(self, text: Segs | None) -> None:
        if self.lost:
            return
        if text is None:
            self.unreadable()
            return
        for seg in text:
            if seg is None:
                self.partial.append(None)
                continue
            pieces = seg.split("\n")
            for piece in pieces[:-1]:
                self.partial.append(piece)
                self.line(tuple(s for s in self.partial if s != ""))
                self.partial = []
            self.partial.append(pieces[-1])

    def line(self, segs: Segs) -> None:
        whole = joined(segs)
        if self.pending is not None:
            if whole is not None and whole == self.pending.delimiter:
                known = [s for s in self.lines if s is not None]
                self.set(self.pending.name,
                         "\n".join(known) if len(known) == len(self.lines) else None)
                self.pending, self.lines = None, []
            else:
                self.lines.append(whole)
            return
        if not segs:
            return  # an empty line
        cut = next((k for k, s in enumerate(segs) if s is None), len(segs))
        head = "".join(s or "" for s in segs[:cut])  # the text before the first unknown
        equals, heredoc = head.find("="), head.find("<<")
        if equals != -1 and (heredoc == -1 or equals < heredoc):
            if equals:  # GitHub rejects a line without a name
                self.set(head[:equals], joined((head[equals + 1:], *segs[cut:])))
        elif heredoc != -1:
            delimiter = joined((head[heredoc + 2:], *segs[cut:]))
            if delimiter is None:
                self.lost = True
            else:
                self.pending = _Pending(head[:heredoc], delimiter)
        elif cut < len(segs):
            self.unreadable()  # the name is not known
        # else no `=`: GitHub rejects the line


def _result(state: _State | None) -> StepOutputs:
    if state is None:
        return StepOutputs()  # no way through the script succeeds
    if state.partial:
        file = _File(state)
        file.line(state.partial)
        state = file.state(state)
    if state.lost:
        return StepOutputs(complete=False)
    return StepOutputs({k: None if v is None or _FILE in v else v for k, v in state.outputs.items()},
                       state.complete)


def _mentions_file(word: sh.Word, vars: Mapping[str, str]) -> bool:
    return _NAMED in word.raw or any(s is not None and _FILE in s
                                     for s in expand(word, vars, False).segs)


# -- running ---------------------------------------------------------------------------------

Flow = tuple[_State | None, _State | None]  # the state where the status is 0 / is not
_OUT, _ELSEWHERE, _UNKNOWN, _PIPE = "out", "elsewhere", "unknown", "pipe"


@dataclass(frozen=True)
class _Scope:
    """Where things go: the exits of the script (or subshell), of the innermost loop and
    function, and where stdout and stderr lead."""

    exits: list[_State] = field(default_factory=list)
    breaks: list[_State] | None = None
    continues: list[_State] | None = None
    returns: list[Flow] | None = None
    stdout: str = _ELSEWHERE
    stderr: str = _ELSEWHERE
    calls: int = 0


def _status(status: bool | None, state: _State) -> Flow:
    return (state if status is not False else None, state if status is not True else None)


def _both(flow: Flow) -> _State | None:
    return _merge(*flow)


def _merge_flows(flows: Iterable[Flow]) -> Flow:
    found = list(flows)
    return _merge(*(f[0] for f in found)), _merge(*(f[1] for f in found))


def _forget(state: _State, names: Iterable[str]) -> _State:
    vars = dict(state.vars)
    for name in names:
        vars.pop(name, None)
    return replace(state, vars=vars)


def _forget_all(state: _State) -> _State:
    return replace(state, vars={k: v for k, v in state.vars.items() if k == _NAMED})


class _Run:
    """Runs a script abstractly (the functions it defines are kept here)."""

    def __init__(self) -> None:
        self.steps = 0
        self.depth = 0
        self.functions: dict[str, tuple[sh.Command, ...]] = {}

    def program(self, program: sh.Seq, state: _State) -> _State | None:
        scope = _Scope()
        return _merge(*self.seq(program, state, scope), *scope.exits)

    def step(self, state: _State) -> None:
        # a command copies or merges its state at most a few times: a big state costs more
        self.steps += 1 + (len(state.vars) + len(state.outputs)) // 1000
        if self.steps > MAX_STEPS:
            raise _TooCostlyError

    def seq(self, seq: sh.Seq, state: _State, scope: _Scope) -> Flow:
        flow: Flow = (state, None)
        for item in seq.items:
            current = _both(flow)
            if current is None:
                return None, None
            flow = self.and_or(item, current, scope)
        return flow

    def and_or(self, node: sh.AndOr, state: _State, scope: _Scope) -> Flow:
        yes, no = self.pipeline(node.first, state, scope)
        for op, pipeline in node.rest:
            if op == "&&" and yes is not None:
                yes, also = self.pipeline(pipeline, yes, scope)
                no = _merge(no, also)
            elif op == "||" and no is not None:
                also, no = self.pipeline(pipeline, no, scope)
                yes = _merge(yes, also)
        return yes, no

    def pipeline(self, node: sh.Pipeline, state: _State, scope: _Scope) -> Flow:
        if len(node.commands) == 1:
            flow = self.command(node.commands[0], state, scope)
        else:  # each command of a pipeline runs in a subshell: only the file carries over
            piped: Segs | None = None
            current: _State | None = state
            for k, command in enumerate(node.commands):
                if current is None:
                    break
                inner = replace(scope, exits=[], breaks=None, continues=None, returns=None,
                                stdout=_PIPE if k < len(node.commands) - 1 else scope.stdout)
                if isinstance(command, sh.Simple):
                    flow, piped = self.simple(command, current, inner, piped)
                else:
                    flow, piped = self.command(command, current, inner), None
                current = _merge(*flow, *inner.exits)
                if current is not None:
                    current = replace(current, vars=state.vars)
            flow = (current, current)
        return (flow[1], flow[0]) if node.negate else flow

    def command(self, node: sh.Command, state: _State, scope: _Scope) -> Flow:
        self.step(state)
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _TooCostlyError
        flow = self.dispatch(node, state, scope)
        self.depth -= 1
        return flow

    def dispatch(self, node: sh.Command, state: _State, scope: _Scope) -> Flow:
        if isinstance(node, sh.Simple):
            return self.simple(node, state, scope, None)[0]
        if isinstance(node, sh.Redirected):
            stdout, stderr, state, _ = self.redirects(node.redirects, state, scope)
            return self.command(node.command, state, replace(scope, stdout=stdout, stderr=stderr))
        if isinstance(node, sh.If):
            return self.if_(node, state, scope)
        if isinstance(node, sh.Loop):
            return self.loop(node, state, scope)
        if isinstance(node, sh.Case):
            return self.case(node, state, scope)
        if isinstance(node, sh.Group):
            if not node.subshell:
                return self.seq(node.body, state, scope)
            inner = replace(scope, exits=[], breaks=None, continues=None, returns=None)
            flow = self.seq(node.body, state, inner)
            after = _merge(*flow, *inner.exits)
            return (None, None) if after is None else _status(None, replace(after, vars=state.vars))
        if isinstance(node, sh.DoubleBracket):
            return _status(double_bracket(node, state.vars), state)
        if isinstance(node, sh.Arith):
            return _status(None, _forget_all(state))
        bodies = self.functions.get(node.name, ())
        if node.body not in bodies:
            self.functions[node.name] = (*bodies, node.body)
        return state, None

    def if_(self, node: sh.If, state: _State, scope: _Scope) -> Flow:
        ends: list[Flow] = []
        current: _State | None = state
        for cond, body in node.arms:
            if current is None:
                break
            yes, current = self.seq(cond, current, scope)
            if yes is not None:
                ends.append(self.seq(body, yes, scope))
        if current is not None:
            ends.append(self.seq(node.orelse, current, scope) if node.orelse else (current, None))
        return _merge_flows(ends)

    def loop(self, node: sh.Loop, state: _State, scope: _Scope) -> Flow:
        """Any number of passes: the states at the top of a pass, merged until they settle."""
        top = state
        inner = replace(scope, breaks=[], continues=[])
        for _ in range(MAX_PASSES):
            run, leave = self.loop_test(node, top, inner)
            end = _both(self.seq(node.body, run, inner)) if run is not None else None
            settled = _merge(top, end, *(inner.continues or ())) or top
            if settled == top:
                after = _merge(leave, *(inner.breaks or ()))
                return (after, after) if after is not None else (None, None)
            top = settled
        raise _TooCostlyError

    def loop_test(self, node: sh.Loop, top: _State, scope: _Scope) -> Flow:
        if node.cond is None:
            pass_state = _forget(top, [node.var]) if node.var is not None else top
            return pass_state, top
        yes, no = self.seq(node.cond, top, scope)
        return (no, yes) if node.until else (yes, no)

    def case(self, node: sh.Case, state: _State, scope: _Scope) -> Flow:
        value = expand(node.word, state.vars, False)
        subject = joined(value.segs)
        ends: list[Flow] = []
        current: _State | None = state
        for arm in node.arms:
            if current is None:
                break
            if arm.end in (";&", ";;&"):
                raise _TooCostlyError  # falling through: rare enough not to follow
            matches = [case_match(subject, p, state.vars) for p in arm.patterns]
            decided = True if True in matches else (False if all(m is False for m in matches)
                                                    else None)
            if decided is not False:
                ends.append(self.seq(arm.body, current, scope))
            if decided is not None:
                current = None if decided else current
        if current is not None:
            ends.append((current, None))
        return _merge_flows(ends)

    # -- simple commands

    def redirects(
        self, redirects: tuple[sh.Redirect, ...], state: _State, scope: _Scope,
    ) -> tuple[str, str, _State, Segs | None]:
        """Where stdout and stderr lead, the state once the files opened are emptied, and
        what the command reads on stdin (None: not known)."""
        if not redirects:
            return scope.stdout, scope.stderr, state, None
        fds = {1: scope.stdout, 2: scope.stderr}
        stdin: Segs | None = None
        for redirect in redirects:
            target = expand(redirect.target, state.vars, False)
            if redirect.op in ("<<", "<<-"):
                stdin = self.heredoc(redirect, state)
                continue
            if redirect.op == "<<<":
                stdin = (*target.segs, "\n")
                continue
            if redirect.op in ("<", "<&", "<>"):
                stdin = None
                continue
            fd = redirect.fd if redirect.fd is not None else 1
            text = joined(target.segs)
            if redirect.op == ">&" and (text == "-" or int_value(text) is not None):
                fds[fd] = fds.get(int_value(text) or 0, _ELSEWHERE)  # `>&2`; `>&-` closes
                continue
            dest = _ELSEWHERE
            if text == _FILE:
                dest = _OUT
                if redirect.op in (">", ">|", "&>", ">&"):
                    state = _truncate(state)
            elif text is None and _mentions_file(redirect.target, state.vars):
                dest = _UNKNOWN
            for into in ((1, 2) if redirect.op in ("&>", "&>>", ">&") else (fd,)):
                fds[into] = dest
        if any(dest in (_OUT, _UNKNOWN) for fd, dest in fds.items() if fd not in (1, 2)):
            raise _TooCostlyError  # the file on a descriptor of its own (`exec 3>>$GITHUB_OUTPUT`)
        return fds[1], fds[2], state, stdin

    def heredoc(self, redirect: sh.Redirect, state: _State) -> Segs:
        word = sh.Word(redirect.body or (), redirect.body_raw, redirect.target.start)
        return expand(word, state.vars, False).segs

    def simple(
        self, node: sh.Simple, state: _State, scope: _Scope, stdin: Segs | None,
    ) -> tuple[Flow, Segs | None]:
        """A simple command's flow and what it sends down a pipe (None: not known)."""
        stdout, stderr, state, redirected = self.redirects(node.redirects, state, scope)
        stdin = redirected if any(r.op.startswith("<") for r in node.redirects) else stdin
        if not node.words:
            return self.assignments(node, state, stdout, stderr), ()
        words = [expand(w, state.vars, True) for w in node.words]
        name, args = words[0].value, words[1:]
        if name is None or _FILE in name:
            return self.external(node, state, stdout, stderr), None
        if name in self.functions:
            return self.call(name, state, replace(scope, stdout=stdout, stderr=stderr)), None
        if name == "printf" and args[:1] and args[0].value == "-v":
            return _status(None, _forget(state, [args[1].value or ""] if args[1:] else [])), ()
        if name not in _WRITERS:
            return self.builtin(name, node, args, state, scope, stdout, stderr)
        status: bool | None = True
        if name == "echo":
            text = _echo(args)
        elif name == "printf":
            text = _printf(args[1:] if args[:1] and args[0].value == "--" else args)
        elif name == "cat":
            text = stdin if all(a.value == "-" for a in args) else None
            status = True if text is not None else None
        else:
            state = self.tee(node, args, state, stdin)
            text = stdin
        if stdout == _OUT:
            state = _write(state, text)
        elif stdout == _UNKNOWN:
            state = _unreadable_write(state)
        return _status(status, state), text if stdout == _PIPE else None

    def assignments(self, node: sh.Simple, state: _State, stdout: str, stderr: str) -> Flow:
        values = dict(state.vars)
        status: bool | None = True
        for assign in node.assigns:
            value = None
            if assign.value is not None:
                value = joined(expand(assign.value, values, False).segs)
                if any(isinstance(p, sh.Opaque) for p in assign.value.parts):
                    status = None  # `x=$(cmd)`: the status of cmd
            if value is None:
                values.pop(assign.name, None)
            else:
                values[assign.name] = value
        if _UNKNOWN in (stdout, stderr):
            state = _unreadable_write(state)
        return _status(status, replace(state, vars=values))

    def external(self, node: sh.Simple, state: _State, stdout: str, stderr: str) -> Flow:
        """A command not modelled: it may write anything where its output leads, to the file
        if it names it, and, unless it is a known inert program, to the file it inherits."""
        words = [*node.words, *(a.value for a in node.assigns if a.value is not None)]
        name = expand(node.words[0], state.vars, True).value if node.words else None
        touches = name not in _INERT or bool({stdout, stderr} & {_OUT, _UNKNOWN}) \
            or any(_mentions_file(w, state.vars) for w in words) \
            or any(_NAMED in r.body_raw for r in node.redirects)
        return _status(None, _unreadable_write(state) if touches else state)

    def builtin(
        self, name: str, node: sh.Simple, args: list[Expanded], state: _State, scope: _Scope,
        stdout: str, stderr: str,
    ) -> tuple[Flow, Segs | None]:
        values = [a.value for a in args]
        if name in _NEUTRAL:
            return (state, None), ()
        if name == "false":
            return (None, state), ()
        if name in ("[", "test"):
            if name == "[":
                if values[-1:] != ["]"]:  # `[` without `]` fails, if it is known not to be one
                    return _status(None if values[-1:] == [None] else False, state), ()
                values, args = values[:-1], args[:-1]
            decided = single_bracket(values) if all(a.single for a in args) else None
            return _status(decided, state), ()
        if name == "exit":
            code = int_value(values[0]) if values else None
            if not values or code is None or code % 256 == 0:
                scope.exits.append(state)  # the way ends here; one that fails is dropped
            return (None, None), None
        if name == "return" and scope.returns is not None:
            code = int_value(values[0]) if values else None
            scope.returns.append(_status(None if code is None else code % 256 == 0, state))
            return (None, None), None
        if name in ("break", "continue") and scope.breaks is not None \
                and scope.continues is not None:
            if values and values[0] != "1":
                raise _TooCostlyError  # `break 2`: leaving more than one loop
            (scope.breaks if name == "break" else scope.continues).append(state)
            return (None, None), None
        if name in _DECLARERS:
            return _status(True, self.declare(name, node.words[1:], state)), ()
        if name == "unset":
            return _status(True, self.unset(values, state)), ()
        if name in _READERS:
            names = [m.group() for v in values if (m := _NAME.match(v or ""))]
            return _status(None, _forget(state, [*names, "REPLY", "MAPFILE"])), None
        if name in _EVALUATORS:
            return self.external(node, _forget_all(state), stdout, stderr), None
        if (name in ("exec", "trap") and any(_mentions_file(w, state.vars) for w in node.words)) \
                or (name == "exec" and _OUT in (stdout, stderr)):
            raise _TooCostlyError  # writes to the file from now on, or when the script ends
        if name == "exec" and args:
            ended = _both(self.external(node, state, stdout, stderr))
            scope.exits.append(ended or state)
            return (None, None), None
        return self.external(node, state, stdout, stderr), None

    def declare(self, name: str, words: Iterable[sh.Word], state: _State) -> _State:
        values = dict(state.vars)
        options = False
        for word in words:
            split = sh.split_assignment(word)
            if word.plain is not None and word.plain.startswith("-"):
                options = True
            elif split is not None:
                key, value_word = split
                value = None if options or value_word is None else joined(
                    expand(value_word, values, False).segs)
                if value is None:
                    values.pop(key, None)
                else:
                    values[key] = value
            elif word.plain is not None and name not in ("export", "readonly"):
                values.pop(word.plain, None)  # `local x`: x is now unset
        return replace(state, vars=values)

    def unset(self, values: list[str | None], state: _State) -> _State:
        names = [v for v in values if v is not None and not v.startswith("-")]
        if "-f" in values:
            for name in names:
                self.functions.pop(name, None)
            return state
        return replace(state, vars={**state.vars, **dict.fromkeys(names, "")})

    def tee(self, node: sh.Simple, args: list[Expanded], state: _State,
            stdin: Segs | None) -> _State:
        append = any(a.value in ("-a", "--append") for a in args)
        for arg, word in zip(args, node.words[1:], strict=True):
            if arg.value == _FILE:
                state = _write(state if append else _truncate(state), stdin)
            elif arg.value is None and _mentions_file(word, state.vars):
                state = _unreadable_write(state)
        return state

    def call(self, name: str, state: _State, scope: _Scope) -> Flow:
        if scope.calls >= MAX_CALLS:
            raise _TooCostlyError
        flows: list[Flow] = []
        for body in self.functions[name]:
            inner = _Scope(scope.exits, None, None, [], scope.stdout, scope.stderr, scope.calls + 1)
            flows.append(self.command(body, state, inner))
            flows.extend(inner.returns or [])
        return _merge_flows(flows)


def _echo(args: list[Expanded]) -> Segs | None:
    newline, escapes = True, False
    k = 0
    while k < len(args) and args[k].value is not None and _ECHO_FLAGS.fullmatch(args[k].value or ""):
        flags = args[k].value or ""
        newline = newline and "n" not in flags
        escapes = "e" in flags
        k += 1
    segs: list[str | None] = []
    for n, arg in enumerate(args[k:]):
        if n:
            segs.append(" ")
        segs.extend(arg.segs)
    if escapes and any(s is None or "\\" in s for s in segs):
        return None
    return (*segs, "\n") if newline else tuple(segs)


def _printf(args: list[Expanded]) -> Segs | None:
    """What `printf FORMAT ARGS` prints, for `%s`, `%b`, `%%` and `\\n`-style escapes; None
    for anything else."""
    fmt = args[0].value if args else None
    if fmt is None or not all(a.single for a in args):
        return None
    rest = [a.segs for a in args[1:]]
    out: list[str | None] = []
    used = 0
    while True:
        converted = False
        i = 0
        while i < len(fmt):
            c, nxt = fmt[i], fmt[i + 1:i + 2]
            i += 2 if c in "\\%" else 1
            if c == "\\" and nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
            elif c == "%" and nxt == "%":
                out.append("%")
            elif c == "%" and nxt in ("s", "b"):
                arg = rest[used] if used < len(rest) else ("",)
                if nxt == "b" and any(s is None or "\\" in s for s in arg):
                    return None
                out.extend(arg)
                used += 1
                converted = True
            elif c in "\\%":
                return None
            else:
                out.append(c)
        if not converted or used >= len(rest):
            return tuple(out)
