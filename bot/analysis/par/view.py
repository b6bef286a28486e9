"""A launch as the PAR rules see it: the launch (:class:`Launch`), its effective values
(:class:`View`), what a rule reports (:class:`Violation`) and the checks, declared with
:func:`check`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from bot.analysis.findings import Severity, rule
from bot.analysis.flags import Opaque, Setting
from bot.analysis.values import Unknown

# When a job fails the way a violation says (its ``when``)
PARSING = "It fails at argument parsing, before any GPU work."
AFTER_GPUS = "It fails only after Ray has started and the job has taken its GPUs."
MODEL_BUILD = "It fails when the model is built, after the job has taken its GPUs."
ENGINE_START = "It fails when SGLang starts its engines, after the job has taken its GPUs."
NEVER_STARTS = "The job never starts: it waits for its placement group forever."
IDLE = "The job runs, but not as written."

# Symbols whose absence means a default (and so an unresolved word on the command line
# could be setting them).
DEFAULTED = frozenset({
    "nodes", "gpus_per_node", "tp", "pp", "cp", "ep", "etp", "vpp", "vpp_layers", "colocate",
    "engine_gpus", "sglang_pp", "sglang_dp", "sglang_ep", "dp_attention", "backend",
    "dp_replicate", "sequence_parallel", "overlap_p2p", "rollout_gpus", "sglang_a2a",
    "sglang_waterfill",
})
# SGLang's all-to-all MoE backends that make expert parallelism span the TP group: with one,
# SGLang sets its expert parallel size to its TP size, whatever was asked
# (`python/sglang/srt/arg_groups/overrides.py`: `_A2A_EP_SPANNING_BACKENDS`, `_a2a_ep_size`);
# Waterfill turns the backend to `deepep` when it is none of `deepep`, `megamoe`.
A2A_EP_SPANNING = frozenset({
    "megamoe", "deepep", "mooncake", "nixl", "ascend_fuseep", "flashinfer", "mori", "pplx",
})


@dataclass(slots=True)
class Launch:
    """One resolved launch of a test: its flag settings and where it comes from."""

    test: str
    path: str  # where the launch call is
    line: int
    settings: dict[str, Setting]
    opaque: list[Opaque] = field(default_factory=list)
    gpus: int | None = None  # the runner's GPU count G
    guards: tuple[str, ...] = ()
    label: str | None = None
    flavor: str = "miles"
    nodes_default: int = 1
    gpus_default: int = 8
    engine_default: int = 1


class Need(Exception):  # noqa: N818 - a rule cannot be evaluated
    """A rule needs a value that is not known."""

    def __init__(self, symbol: str, unknown: Unknown) -> None:
        super().__init__(symbol)
        self.symbol = symbol
        self.unknown = unknown


_FSDP_ONE = frozenset({"tp", "pp", "ep", "etp"})  # forced to 1 under FSDP
_DEFAULTS = {"nodes": "nodes_default", "gpus_per_node": "gpus_default",
             "engine_gpus": "engine_default"}  # symbol -> the Launch field with its default


class View:
    """Effective values of a launch (defaults applied), with optional overrides for fixes."""

    def __init__(self, launch: Launch, overrides: dict[str, int | bool] | None = None) -> None:
        self.launch = launch
        self.overrides = overrides or {}
        # known once read (a launch does not change while a view of it is in use)
        self._fsdp: bool | None = None
        self._got: dict[str, int] = {}

    def raw(self, symbol: str) -> int | bool | str | None:
        if symbol in self.overrides:
            return self.overrides[symbol]
        setting = self.launch.settings.get(symbol)
        if setting is not None:
            if isinstance(setting.value, Unknown):
                raise Need(symbol, setting.value)
            return setting.value
        if symbol in DEFAULTED and self.launch.opaque:
            first = self.launch.opaque[0]
            raise Need(symbol, Unknown(first.text, first.origin))
        return None

    def number(self, symbol: str, default: int | None = None) -> int | None:
        value = self.raw(symbol)
        if value is None or isinstance(value, bool) or not isinstance(value, int):
            return default
        return value

    def flag(self, symbol: str) -> bool:
        return self.raw(symbol) is True

    @property
    def fsdp(self) -> bool:
        if self._fsdp is None:
            self._fsdp = self.raw("backend") == "fsdp"  # raises Need (then not kept) if unknown
        return self._fsdp

    def get(self, symbol: str) -> int:
        """An integer value with its default (TP, PP, EP forced to 1 under FSDP)."""
        found = self._got.get(symbol)
        if found is None:  # (a value that needs what is not known raises Need every time)
            found = self._get(symbol)
            self._got[symbol] = found
        return found

    def _get(self, symbol: str) -> int:
        if symbol in _FSDP_ONE and self.fsdp:
            return 1
        if symbol == "etp":
            return self.number("etp") or self.get("tp")
        default = _DEFAULTS.get(symbol)
        return self.number(symbol, getattr(self.launch, default) if default else 1) or 0

    @property
    def world(self) -> int:
        return self.get("nodes") * self.get("gpus_per_node")

    def rollout(self) -> int | None:
        """``R``: the rollout GPUs (the world size when colocated)."""
        if self.flag("colocate"):
            if self.launch.flavor == "slime":
                return self.number("rollout_gpus") or self.world
            return self.world
        return self.number("rollout_gpus")

    def sglang_tp(self) -> int | None:
        g = self.get("engine_gpus")
        if self.launch.flavor == "slime":
            spp = self.get("sglang_pp")
            return g // spp if spp and g % spp == 0 else None
        return g

    def sglang_ep(self) -> int:
        """SGLang's expert parallel size as it runs: the TP size with an all-to-all backend
        that spans the experts over it (:data:`A2A_EP_SPANNING`, or Waterfill)."""
        sep = self.get("sglang_ep")
        if sep <= 1:
            return sep  # (nothing to adjust: the backend is not read)
        return (self.sglang_tp() or sep) if self.a2a_spans_experts() else sep

    def a2a_spans_experts(self) -> bool:
        """Whether SGLang's all-to-all MoE backend sets its EP size to its TP size."""
        return self.raw("sglang_a2a") in A2A_EP_SPANNING or self.flag("sglang_waterfill")

    def model(self, symbol: str) -> int | None:
        if symbol == "query_groups":
            return self.number("query_groups") or self.model("heads")
        return self.number(symbol)


@dataclass(frozen=True, slots=True)
class Violation:
    """What a check reports; ``rule`` is the id of the check's declaration (filled in by
    :func:`check`: a rule function never writes its own id)."""

    message: str
    reason: str
    when: str
    symbols: tuple[str, ...]  # what a fix may change, most direct first
    severity: Severity | None = None
    rule: str = ""


RuleFn = Callable[[View], Violation | None]


@dataclass(frozen=True, slots=True)
class Check:
    """A declared PAR rule: its id and the function that checks it on a launch."""

    id: str
    fn: RuleFn

    def __call__(self, view: View) -> Violation | None:
        found = self.fn(view)
        return None if found is None else replace(found, rule=self.id)


CHECKS: dict[str, Check] = {}


def check(id: str, slug: str, severity: Severity, summary: str) -> Callable[[RuleFn], Check]:
    """Declare a PAR rule on the function that checks it (see :func:`findings.rule`); the
    declaration is what the rule's findings name it by, on every view (``.id``)."""
    declare = rule(id, slug, severity, summary)

    def register(fn: RuleFn) -> Check:
        declared = Check(id, declare(fn))
        CHECKS[id] = declared
        return declared

    return register
