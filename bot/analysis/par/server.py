"""The PAR rules on the second kind of view: an SGLang server a test starts
(:class:`bot.analysis.servers.Server`, read from the test's syntax), against its runner's GPUs.

A server rule is the server view of a rule declared once: PAR003 (:mod:`.placement`: its GPUs
against the runner's), PAR005 (:mod:`.sglang`: EP against TP, the same function as for the
rollout engines) and PAR020 (declared here: DP attention's split). A value the syntax does
not decide keeps the rules that need it from running, and PAR019 names it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.analysis.findings import Finding, Severity, finding, rule
from bot.analysis.par.placement import placement_exceeds_runner
from bot.analysis.par.sglang import ep_vs_tp, sglang_ep_vs_tp
from bot.analysis.par.view import A2A_EP_SPANNING, Check
from bot.analysis.servers import SYMBOLS, Scalar, Server, Unresolved

START = "The server fails when it starts, after the test has waited for it."

# what a server rule reports: the message, the symbol whose line it is anchored at, and a
# severity other than the rule's
Result = tuple[str, str, Severity | None] | None
ServerFn = Callable[[Server, "int | None"], Result]


@dataclass(frozen=True, slots=True)
class ServerRule:
    id: str
    fn: ServerFn


SERVER_RULES: list[ServerRule] = []


def on_servers(declared: Check) -> Callable[[ServerFn], ServerFn]:
    """The server view of a rule declared on launches (its findings take its id)."""

    def register(fn: ServerFn) -> ServerFn:
        SERVER_RULES.append(ServerRule(declared.id, fn))
        return fn

    return register


def check_servers(id: str, slug: str, severity: Severity, summary: str) -> Callable[[ServerFn], ServerFn]:
    """Declare a rule of servers only on the function that checks it (see :func:`findings.rule`)."""
    declare = rule(id, slug, severity, summary)

    def register(fn: ServerFn) -> ServerFn:
        SERVER_RULES.append(ServerRule(id, declare(fn)))
        return fn

    return register


@dataclass(slots=True)
class Checked:
    findings: list[Finding]
    state: str  # checked, partial or unchecked
    signature: tuple[tuple[str, object], ...]


def describe(server: Server) -> str:
    cells = []
    for name, symbol in (("TP", "tp"), ("PP", "pp"), ("DP", "dp"), ("EP", "ep")):
        value = server.value(symbol)
        cells.append(f"{name}{'?' if isinstance(value, Unresolved) else value}")
    attention = server.value("dp_attention")
    if attention is True:
        cells.append("DP attention")
    return " ".join(cells)


def check(server: Server, test: str, gpus: int | None) -> Checked:
    """The PAR rules on one server launch (:data:`SERVER_RULES`); PAR019 for what is not known."""
    where = f"Server launch of `{test}` ({server.form}): {describe(server)}"
    context = f"{where}, on a runner of {gpus if gpus is not None else 'unknown'} GPUs."
    signature = tuple((s, _plain(server.value(s))) for s in SYMBOLS)
    if server.guard is not None:
        return Checked([finding(
            "PAR019", server.path, server.line,
            f"Whether this server starts depends on `{server.guard}`, which cannot be resolved "
            "statically; its parallel layout was not checked.", test=test, details=(context,),
        )], "unchecked", signature)
    found: list[Finding] = []
    needs: dict[Unresolved, list[str]] = {}
    for declared in SERVER_RULES:
        try:
            result = declared.fn(server, gpus)
        except _Need as need:
            needs.setdefault(need.unknown, []).append(declared.id)
            continue
        if result is not None:
            message, symbol, severity = result
            found.append(finding(declared.id, server.path, server.lines.get(symbol, server.line),
                                 message, test=test, details=(context,), severity=severity))
    for unknown, ids in needs.items():
        found.append(finding(
            "PAR019", server.path, unknown.line,
            f"`{unknown.text}` cannot be resolved statically, so this server's parallel sizes "
            f"are not known; {', '.join(ids)} not checked.", test=test, details=(context,),
        ))
    state = "checked" if not needs else ("unchecked" if len(set().union(*needs.values())) >=
                                         len(SERVER_RULES) else "partial")
    return Checked(found, state, signature)


def _plain(value: Scalar) -> object:
    return f"? ({value.text})" if isinstance(value, Unresolved) else value


class _Need(Exception):  # noqa: N818 - a rule cannot be evaluated
    def __init__(self, unknown: Unresolved) -> None:
        super().__init__(unknown.text)
        self.unknown = unknown


def _number(server: Server, symbol: str) -> int:
    value = server.value(symbol)
    if isinstance(value, Unresolved):
        raise _Need(value)
    assert isinstance(value, int)
    return value


def _on(server: Server, symbol: str) -> bool:
    value = server.value(symbol)
    if isinstance(value, Unresolved):
        raise _Need(value)
    return value is True


def _spans_experts(server: Server) -> bool:
    backend = server.value("a2a")
    if isinstance(backend, Unresolved):
        raise _Need(backend)
    return backend in A2A_EP_SPANNING or _on(server, "waterfill")


@on_servers(placement_exceeds_runner)
def server_exceeds_runner(server: Server, gpus: int | None) -> Result:
    if not server.takes_gpus or gpus is None:
        return None
    tp, pp, dp, nodes = (_number(server, s) for s in ("tp", "pp", "dp", "nnodes"))
    attention = _on(server, "dp_attention")
    if nodes != 1 or tp < 1 or pp < 1 or dp < 1:
        return None  # a multi-node server is placed by its nodes, not by this runner
    # SGLang may turn DP attention on by itself (it is resolved from the model and the other
    # arguments): without the flag, the data parallel copies are not counted
    counted = "dp_attention" in server.settings and not attention
    need = tp * pp * (dp if counted else 1)
    if need <= gpus:
        return None
    how = f"TP {tp} x PP {pp}" + (f" x DP {dp}" if counted and dp > 1 else "")
    return (f"This server needs {need} GPUs ({how}) but its runner has {gpus}: it cannot "
            "start on this runner.", "tp", None)


@on_servers(sglang_ep_vs_tp)
def server_ep_vs_tp(server: Server, gpus: int | None) -> Result:
    ep = _number(server, "ep")
    if ep <= 1:
        return None  # (the TP size is not read: it may not be known)
    found = ep_vs_tp(_number(server, "tp"), ep, lambda: _spans_experts(server))
    return None if found is None else (found[0], "ep", found[1])


@check_servers("PAR020", "sglang-dp-attention-split", Severity.ERROR,
               "With DP attention, SGLang's data parallel size does not divide its tensor "
               "parallel size.")
def server_dp_attention_split(server: Server, gpus: int | None) -> Result:
    """
    ## What it does
    For an SGLang server started with `--enable-dp-attention` (or `enable_dp_attention=True`),
    checks that the data parallel size divides the tensor parallel size: DP attention splits
    the `tp` GPUs into `dp` attention groups.

    ## Why is this bad?
    SGLang's `ServerArgs` asserts `self.tp_size % self.dp_size == 0` when DP attention is on
    (`python/sglang/srt/server_args.py`), so the server stops with a bare `AssertionError`
    before it serves anything.

    ## Example
    ```python
    other_args=["--tp", "4", "--dp", "3", "--enable-dp-attention"]
    ```
    Use instead:
    ```python
    other_args=["--tp", "4", "--dp", "4", "--enable-dp-attention"]
    ```
    """
    if not _on(server, "dp_attention"):
        return None
    tp, dp = _number(server, "tp"), _number(server, "dp")
    if dp >= 1 and tp % dp == 0:
        return None
    return (f"With DP attention, dp_size {dp} must divide tp_size {tp}: SGLang's server "
            "arguments fail a bare assertion (`tp_size % dp_size == 0`).", "dp", None)
