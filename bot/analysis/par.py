"""The parallelism rules (PAR001..PAR019): does a resolved launch fit its runner and model?

Each rule is a small function over a :class:`View` of one launch; a rule that needs a value
the evaluator could not decide is not evaluated, and PAR019 says which value and why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.analysis.findings import Severity, rule
from bot.analysis.flags import CANONICAL, Opaque, Setting
from bot.analysis.values import Origin, Unknown

log = logging.getLogger(__name__)

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
    "dp_replicate", "sequence_parallel", "overlap_p2p", "rollout_gpus",
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

    def model(self, symbol: str) -> int | None:
        if symbol == "query_groups":
            return self.number("query_groups") or self.model("heads")
        return self.number(symbol)


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    message: str
    reason: str
    when: str
    symbols: tuple[str, ...]  # what a fix may change, most direct first
    severity: Severity | None = None


Check = Callable[[View], Violation | None]
CHECKS: dict[str, Check] = {}


def check(id: str, slug: str, severity: Severity, summary: str) -> Callable[[Check], Check]:
    """Declare a PAR rule on the function that checks it (see :func:`findings.rule`)."""
    declare = rule(id, slug, severity, summary)

    def register(fn: Check) -> Check:
        CHECKS[id] = declare(fn)
        return fn

    return register


# ----- rules -------------------------------------------------------------------------------

@check("PAR001", "dense-model-parallel", Severity.ERROR,
       "The world size is not divisible by TP x PP x CP.")
def dense_model_parallel(v: View) -> Violation | None:
    """
    ## What it does
    Checks that the actor's world size `W = actor_num_nodes * actor_num_gpus_per_node` is a
    multiple of `TP * PP * CP` (Megatron's `total_model_size`).

    ## Why is this bad?
    Megatron-LM's `validate_args` stops the job at argument parsing with
    `world size (W) is not divisible by total_model_size (total_model_size=N)`.

    ## Example
    ```python
    CASE = CaseConfig(num_gpus_per_node=4, tp_size=2, cp_size=4)  # 2*1*4 = 8 does not divide 4
    ```
    Use instead:
    ```python
    CASE = CaseConfig(num_gpus_per_node=4, tp_size=2, cp_size=2)
    ```
    """
    if v.fsdp:
        return None
    tp, pp, cp, w = v.get("tp"), v.get("pp"), v.get("cp"), v.world
    total = tp * pp * cp
    if total and w % total == 0:
        return None
    return Violation(
        "PAR001", f"world size ({w}) is not divisible by total_model_size (total_model_size={total})",
        f"TP x PP x CP = {tp} x {pp} x {cp} = {total} does not divide W = {w}.", PARSING,
        ("tp", "pp", "cp", "gpus_per_node", "nodes"))


@check("PAR002", "expert-grid", Severity.ERROR,
       "The world size is not divisible by ETP x EP x PP.")
def expert_grid(v: View) -> Violation | None:
    """
    ## What it does
    Checks that the world size is a multiple of `ETP * EP * PP` (expert tensor parallel size,
    which defaults to TP, times expert parallel size times pipeline parallel size).

    ## Why is this bad?
    Megatron-LM's `initialize_model_parallel` raises
    `world_size (W) is not divisible by expert_tensor_model_pipeline_parallel size (N)` only
    after Ray has started and the job has taken its GPUs: an expensive, late failure.

    ## Example
    ```python
    # 4 GPUs, TP2 PP2 EP4 ETP1: 1*4*2 = 8 does not divide 4
    CASE = CaseConfig(num_gpus_per_node=4, tp_size=2, pp_size=2, ep_size=4)
    ```
    Use instead:
    ```python
    CASE = CaseConfig(num_gpus_per_node=4, tp_size=2, pp_size=2, ep_size=2)
    ```
    """
    if v.fsdp:
        return None
    etp, ep, pp, w = v.get("etp"), v.get("ep"), v.get("pp"), v.world
    size = etp * ep * pp
    if size and w % size == 0:
        return None
    return Violation(
        "PAR002",
        f"world_size ({w}) is not divisible by expert_tensor_model_pipeline_parallel size ({size})",
        f"ETP x EP x PP = {etp} x {ep} x {pp} = {size} does not divide W = {w}.", AFTER_GPUS,
        ("etp", "ep", "pp", "gpus_per_node", "nodes"))


@check("PAR003", "placement-exceeds-runner", Severity.ERROR,
       "The launch needs more GPUs than its runner has.")
def placement_exceeds_runner(v: View) -> Violation | None:
    """
    ## What it does
    Checks that the GPUs the launch asks Ray for fit the suite's runner: with `--colocate`,
    `max(W, R) <= G`; otherwise `W + R <= G` (`R` from `--rollout-num-gpus`). The actor's GPUs
    per node default to 8 when `--actor-num-gpus-per-node` is not given. For an SGLang server
    (`popen_launch_server(..., other_args=[...])`, `python -m sglang.launch_server`,
    `sgl.Engine(tp_size=...)`), checks `tp x pp` (times `dp` only when DP attention is
    explicitly off: SGLang may turn it on by itself) against the runner's GPUs.

    ## Why is this bad?
    There is no error message: the job waits for its placement group forever and the CI run
    times out, holding the runner. A server that asks for more GPUs than the runner has fails
    when it starts, after the test has waited for it.

    ## Example
    ```python
    "--actor-num-nodes 1 --colocate "  # 8 GPUs by default, on a 4-GPU runner
    ```
    Use instead:
    ```python
    "--actor-num-nodes 1 --actor-num-gpus-per-node 4 --colocate "
    ```
    """
    g = v.launch.gpus
    if g is None:
        return None
    w = v.world
    if v.flag("colocate"):
        r = v.rollout() or w
        need, how = max(w, r), f"colocated: max(W={w}, R={r})"
    else:
        r2 = v.rollout()
        if r2 is None:
            return None
        need, how = w + r2, f"W={w} actor GPUs + R={r2} rollout GPUs"
    if need <= g:
        return None
    return Violation(
        "PAR003", f"This launch needs {need} GPUs ({how}) but its runner has {g}: "
                  "the job waits for its placement group forever.",
        f"{need} GPUs requested, {g} available.", NEVER_STARTS,
        ("gpus_per_node", "nodes", "rollout_gpus"))


@check("PAR004", "rollout-engine-split", Severity.ERROR,
       "The rollout GPUs do not split into whole engines.")
def rollout_engine_split(v: View) -> Violation | None:
    """
    ## What it does
    Checks that the rollout GPUs `R` (the world size when colocated) are a multiple of the
    GPUs per engine `g` (`--rollout-num-gpus-per-engine`), and at least one engine's worth.
    An error when `R < g` (no engine at all), a warning when GPUs are left over.

    ## Why is this bad?
    The rollout server group starts `R // g` engines: leftover GPUs sit idle, and with
    `R < g` no engine starts and the job cannot generate.

    ## Example
    ```python
    "--actor-num-gpus-per-node 4 --colocate --rollout-num-gpus-per-engine 8 "
    ```
    Use instead:
    ```python
    "--actor-num-gpus-per-node 4 --colocate --rollout-num-gpus-per-engine 4 "
    ```
    """
    r = v.rollout()
    if r is None:
        return None
    g = v.get("engine_gpus")
    if g >= 1 and r >= g and r % g == 0:
        return None
    if g < 1:  # the server group divides by it when the engines start
        return Violation("PAR004", f"{g} GPUs per engine: no rollout engine starts.",
                         f"g = {g} < 1.", AFTER_GPUS, ("engine_gpus",))
    if r < g:
        return Violation("PAR004", f"{r} rollout GPUs cannot hold one engine of {g} GPUs: "
                                   "no rollout engine starts.",
                         f"R = {r} < g = {g}.", AFTER_GPUS, ("engine_gpus", "gpus_per_node"))
    return Violation("PAR004", f"{r} rollout GPUs do not split into engines of {g} GPUs: "
                               f"{r % g} GPUs stay idle.",
                     f"R = {r} is not a multiple of g = {g}.", IDLE,
                     ("engine_gpus", "gpus_per_node"), Severity.WARNING)


@check("PAR005", "sglang-ep-vs-tp", Severity.ERROR,
       "SGLang's expert parallel size does not divide its tensor parallel size.")
def sglang_ep_vs_tp(v: View) -> Violation | None:
    """
    ## What it does
    Checks that the SGLang engine's tensor parallel size (the GPUs per engine in miles)
    is a multiple of `--sglang-ep-size` (or `--sglang-expert-parallel-size`), and for an SGLang
    server its `--tp`/`--tp-size` against its `--ep`/`--ep-size` (or `tp_size`/`ep_size`).
    An error when the EP size is larger than the TP size, a warning otherwise.

    ## Why is this bad?
    For block-quantized models SGLang stops with `tp_size T must be divisible by ep_size E`
    when the engines start, after the GPUs are taken.

    ## Example
    ```python
    "--rollout-num-gpus-per-engine 2 --sglang-ep-size 4 "
    ```
    Use instead:
    ```python
    "--rollout-num-gpus-per-engine 4 --sglang-ep-size 4 "
    ```
    """
    sep = v.get("sglang_ep")
    stp = v.sglang_tp()
    if sep <= 1 or stp is None or (stp and stp % sep == 0):
        return None
    return Violation("PAR005", f"tp_size {stp} must be divisible by ep_size {sep}",
                     f"SGLang TP = {stp}, SGLang EP = {sep}.", ENGINE_START,
                     ("sglang_ep", "engine_gpus"),
                     Severity.ERROR if sep > stp else Severity.WARNING)


@check("PAR006", "sglang-dp-needs-dp-attention", Severity.ERROR,
       "`--sglang-dp-size` above 1 without `--sglang-enable-dp-attention`.")
def sglang_dp_needs_dp_attention(v: View) -> Violation | None:
    """
    ## What it does
    Checks that an SGLang data parallel size above 1 comes with
    `--sglang-enable-dp-attention`.

    ## Why is this bad?
    The launcher's argument validation asserts it, and the job stops at argument parsing with
    a bare `AssertionError` that does not say why.

    ## Example
    ```python
    "--rollout-num-gpus-per-engine 4 --sglang-dp-size 4 "
    ```
    Use instead:
    ```python
    "--rollout-num-gpus-per-engine 4 --sglang-dp-size 4 --sglang-enable-dp-attention "
    ```
    """
    sdp = v.get("sglang_dp")
    if sdp <= 1 or v.flag("dp_attention"):
        return None
    return Violation("PAR006", f"`--sglang-dp-size {sdp}` needs `--sglang-enable-dp-attention`: "
                               "argument parsing fails with a bare AssertionError.",
                     f"SGLang DP = {sdp} without DP attention.", PARSING,
                     ("dp_attention", "sglang_dp"))


@check("PAR007", "fsdp-replicate", Severity.ERROR,
       "The FSDP world size is not divisible by `--dp-replicate-size`.")
def fsdp_replicate(v: View) -> Violation | None:
    """
    ## What it does
    With `--train-backend fsdp`, checks that `--dp-replicate-size` is at least 1 and divides
    the world size.

    ## Why is this bad?
    The FSDP backend stops at argument parsing with
    `world_size(W) must be divisible by dp_replicate_size(r)`.

    ## Example
    ```python
    DP_REPLICATE_SIZE = 3  # on 4 GPUs
    ```
    Use instead:
    ```python
    DP_REPLICATE_SIZE = 2
    ```
    """
    if not v.fsdp:
        return None
    r = v.number("dp_replicate", 1)
    w = v.world
    assert r is not None
    if r >= 1 and w % r == 0:
        return None
    return Violation("PAR007", f"world_size({w}) must be divisible by dp_replicate_size({r})",
                     f"r = {r} does not divide W = {w}.", PARSING,
                     ("dp_replicate", "gpus_per_node", "nodes"))


@check("PAR008", "fsdp-no-cp", Severity.ERROR,
       "Context parallelism with the FSDP backend.")
def fsdp_no_cp(v: View) -> Violation | None:
    """
    ## What it does
    Checks that a launch with `--train-backend fsdp` does not set a context parallel size
    above 1.

    ## Why is this bad?
    The launcher stops at argument parsing with
    `Context parallelism is not supported for FSDP backend.`

    ## Example
    ```python
    "--train-backend fsdp --context-parallel-size 2 "
    ```
    Use instead:
    ```python
    "--train-backend fsdp "
    ```
    """
    if not v.fsdp or v.get("cp") == 1:
        return None
    return Violation("PAR008", "Context parallelism is not supported for FSDP backend.",
                     f"CP = {v.get('cp')} with the FSDP backend.", PARSING, ("cp",))


@check("PAR009", "layers-per-stage", Severity.ERROR,
       "The model's layers do not split evenly over the pipeline stages.")
def layers_per_stage(v: View) -> Violation | None:
    """
    ## What it does
    Without a virtual or uneven pipeline, checks that the number of layers (plus one for each
    of `--account-for-embedding-in-pipeline-split` and `--account-for-loss-in-pipeline-split`)
    is a multiple of the pipeline parallel size.

    ## Why is this bad?
    Megatron-LM's `validate_args` stops with
    `Number of layers should be divisible by the pipeline-model-parallel size`.

    ## Example
    ```python
    # a 36-layer model
    "--pipeline-model-parallel-size 8 "
    ```
    Use instead:
    ```python
    "--pipeline-model-parallel-size 4 "
    ```
    """
    if v.fsdp:
        return None
    pp = v.get("pp")
    if pp <= 1 or v.number("vpp") or v.number("vpp_layers") or v.number("uneven_first") or \
            v.number("uneven_last") or v.raw("pipeline_layout"):
        return None
    layers = v.model("layers")
    if layers is None:
        return None
    extra = int(v.flag("account_embedding")) + int(v.flag("account_loss"))
    if (layers + extra) % pp == 0:
        return None
    shown = f"{layers} + {extra}" if extra else f"{layers}"
    return Violation("PAR009", "Number of layers should be divisible by the "
                               "pipeline-model-parallel size",
                     f"{shown} layers do not split over PP = {pp}.", PARSING, ("pp",))


@check("PAR010", "heads-per-tp", Severity.ERROR,
       "The attention heads do not split over the tensor parallel ranks.")
def heads_per_tp(v: View) -> Violation | None:
    """
    ## What it does
    Checks that `--num-attention-heads` is a multiple of the tensor parallel size.

    ## Why is this bad?
    Megatron-LM's `TransformerConfig` raises
    `num_attention_heads (H) must be a multiple of tensor_model_parallel_size (TP).` when the
    model is built, after the GPUs are taken.

    ## Example
    ```python
    # 12 heads
    "--tensor-model-parallel-size 8 "
    ```
    Use instead:
    ```python
    "--tensor-model-parallel-size 4 "
    ```
    """
    tp = v.get("tp")
    if tp <= 1:
        return None
    heads = v.model("heads")
    if heads is None or heads % tp == 0:
        return None
    return Violation("PAR010", f"num_attention_heads ({heads}) must be a multiple of "
                               f"tensor_model_parallel_size ({tp}).",
                     f"H = {heads}, TP = {tp}.", MODEL_BUILD, ("tp",))


@check("PAR011", "query-groups-per-tp", Severity.ERROR,
       "The query groups are neither a multiple nor a divisor of the tensor parallel size.")
def query_groups_per_tp(v: View) -> Violation | None:
    """
    ## What it does
    Checks that `--num-query-groups` (default: the number of heads) is a multiple or a
    divisor of the tensor parallel size. (Megatron core 0.15 and older required a multiple.)

    ## Why is this bad?
    Megatron-LM's `TransformerConfig` raises `num_query_groups (K) must be a multiple or
    divisor of tensor_model_parallel_size (TP).` when the model is built.

    ## Example
    ```python
    # 6 query groups
    "--tensor-model-parallel-size 4 "
    ```
    Use instead:
    ```python
    "--tensor-model-parallel-size 2 "
    ```
    """
    tp = v.get("tp")
    if tp <= 1:
        return None
    groups = v.model("query_groups")
    if groups is None or groups % tp == 0 or tp % groups == 0:
        return None
    return Violation("PAR011", f"num_query_groups ({groups}) must be a multiple or divisor of "
                               f"tensor_model_parallel_size ({tp}).",
                     f"K = {groups}, TP = {tp}.", MODEL_BUILD, ("tp",))


@check("PAR012", "experts-per-ep", Severity.ERROR,
       "The experts do not split over the expert parallel ranks.")
def experts_per_ep(v: View) -> Violation | None:
    """
    ## What it does
    With an expert parallel size above 1, checks that `--num-experts` is a multiple of it.

    ## Why is this bad?
    Megatron-LM's `validate_args` stops with
    `Number of experts should be a multiple of expert model parallel_size.`

    ## Example
    ```python
    # 60 experts
    "--expert-model-parallel-size 8 "
    ```
    Use instead:
    ```python
    "--expert-model-parallel-size 4 "
    ```
    """
    ep = v.get("ep")
    if ep <= 1:
        return None
    experts = v.model("experts")
    if experts is None or experts % ep == 0:
        return None
    return Violation("PAR012", "Number of experts should be a multiple of expert model "
                               "parallel_size.",
                     f"E = {experts}, EP = {ep}.", PARSING, ("ep",))


@check("PAR013", "global-batch", Severity.WARNING,
       "The global batch is not a multiple of micro batch x data parallel size.")
def global_batch(v: View) -> Violation | None:
    """
    ## What it does
    When `--global-batch-size` and `--micro-batch-size` are both set and
    `--use-dynamic-batch-size` is not, checks `GBS % (MBS * DP) == 0` with
    `DP = W / (TP * PP * CP)`.

    ## Why is this bad?
    Megatron-LM's microbatch calculator stops with `global batch size (G) is not divisible by
    micro batch size (m) times data parallel size (d)`.

    ## Example
    ```python
    # W=4, TP1: DP=4
    "--global-batch-size 6 --micro-batch-size 1 "
    ```
    Use instead:
    ```python
    "--global-batch-size 8 --micro-batch-size 1 "
    ```
    """
    if v.fsdp or v.flag("dynamic_batch"):
        return None
    gbs, mbs = v.number("gbs"), v.number("mbs")
    if gbs is None or mbs is None:
        return None
    total = v.get("tp") * v.get("pp") * v.get("cp")
    if not total or v.world % total:
        return None
    dp = v.world // total
    if mbs * dp and gbs % (mbs * dp) == 0:
        return None
    return Violation("PAR013", f"global batch size ({gbs}) is not divisible by micro batch size "
                               f"({mbs}) times data parallel size ({dp})",
                     f"GBS = {gbs}, MBS x DP = {mbs} x {dp}.", PARSING, ("gbs", "mbs"),)


@check("PAR014", "cp-seq-length", Severity.ERROR,
       "The sequence length is not a multiple of 2 x CP.")
def cp_seq_length(v: View) -> Violation | None:
    """
    ## What it does
    With a context parallel size above 1, checks that `--seq-length` (when given) is a
    multiple of `2 * CP`.

    ## Why is this bad?
    Megatron-LM's `validate_args` stops with `seq-length should be a multiple of
    2 * context-parallel-size if context-parallel-size > 1.`

    ## Example
    ```python
    "--context-parallel-size 4 --seq-length 4100 "
    ```
    Use instead:
    ```python
    "--context-parallel-size 4 --seq-length 4096 "
    ```
    """
    cp = v.get("cp")
    if cp <= 1 or v.fsdp:
        return None
    seq = v.number("seq_length")
    if seq is None or seq % (2 * cp) == 0:
        return None
    return Violation("PAR014", "seq-length should be a multiple of 2 * context-parallel-size "
                               "if context-parallel-size > 1.",
                     f"seq_length = {seq}, 2 x CP = {2 * cp}.", PARSING, ("seq_length", "cp"))


@check("PAR015", "interleaved-needs-pp", Severity.ERROR,
       "An interleaved (virtual) pipeline with too few pipeline stages.")
def interleaved_needs_pp(v: View) -> Violation | None:
    """
    ## What it does
    When a virtual pipeline is set (`--num-layers-per-virtual-pipeline-stage` or
    `--num-virtual-stages-per-pipeline-rank`), checks that the pipeline parallel size is above
    2 (above 1 with `--overlap-p2p-comm`).

    ## Why is this bad?
    Megatron-LM's `validate_args` stops with `When interleaved schedule is used and p2p
    communication overlap is disabled, pipeline-model-parallel size should be greater than 2
    ...`.

    ## Example
    ```python
    "--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 4 "
    ```
    Use instead:
    ```python
    "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 4 "
    ```
    """
    if v.fsdp or not (v.number("vpp") or v.number("vpp_layers")):
        return None
    pp = v.get("pp")
    overlap = v.flag("overlap_p2p")
    least = 1 if overlap else 2
    if pp > least:
        return None
    if overlap:
        message = ("When interleaved schedule is used, pipeline-model-parallel size should be "
                   "greater than 1")
    else:
        message = ("When interleaved schedule is used and p2p communication overlap is "
                   "disabled, pipeline-model-parallel size should be greater than 2 to avoid "
                   "having multiple p2p sends and recvs between same 2 ranks per communication "
                   "batch")
    return Violation("PAR015", message, f"PP = {pp} with a virtual pipeline.", PARSING, ("pp",))


@check("PAR016", "ep-tp-needs-sp", Severity.WARNING,
       "Expert and tensor parallelism without `--sequence-parallel`.")
def ep_tp_needs_sp(v: View) -> Violation | None:
    """
    ## What it does
    Checks that a launch with both an expert parallel size and a tensor parallel size above 1
    sets `--sequence-parallel`.

    ## Why is this bad?
    Megatron-LM's `ModelParallelConfig` refuses it: `When using expert parallelism and tensor
    parallelism for training, sequence parallelism must be used`.

    ## Example
    ```python
    "--tensor-model-parallel-size 2 --expert-model-parallel-size 2 "
    ```
    Use instead:
    ```python
    "--tensor-model-parallel-size 2 --expert-model-parallel-size 2 --sequence-parallel "
    ```
    """
    if v.fsdp or v.get("ep") <= 1 or v.get("tp") <= 1 or v.flag("sequence_parallel"):
        return None
    return Violation("PAR016", "When using expert parallelism and tensor parallelism for "
                               "training, sequence parallelism must be used",
                     f"EP = {v.get('ep')}, TP = {v.get('tp')} without --sequence-parallel.",
                     MODEL_BUILD, ("sequence_parallel", "ep", "tp"))


@check("PAR017", "sglang-heads-per-tp", Severity.ERROR,
       "The attention heads do not split over SGLang's attention TP.")
def sglang_heads_per_tp(v: View) -> Violation | None:
    """
    ## What it does
    Checks the SGLang engine's attention tensor parallel size
    `a = TP / (DP if --sglang-enable-dp-attention else 1)` against the model: the heads must be
    a multiple of `a`, and the KV heads a multiple of `a` (or a divisor of it when fewer).

    ## Why is this bad?
    The SGLang model asserts it when it is loaded, after the GPUs are taken, with a bare
    assertion.

    ## Example
    ```python
    # 16 heads
    "--rollout-num-gpus-per-engine 32 "
    ```
    Use instead:
    ```python
    "--rollout-num-gpus-per-engine 8 "
    ```
    """
    stp = v.sglang_tp()
    if not stp:
        return None
    sdp = v.get("sglang_dp") if v.flag("dp_attention") else 1
    if sdp <= 0 or stp % sdp:
        return None
    a = stp // sdp
    heads = v.model("heads")
    if heads is None or a <= 1:
        return None
    groups = v.model("query_groups") or heads
    heads_ok = heads % a == 0
    groups_ok = groups % a == 0 if groups >= a else a % groups == 0
    if heads_ok and groups_ok:
        return None
    return Violation("PAR017", f"SGLang's attention TP {a} does not split {heads} heads and "
                               f"{groups} KV heads: the model fails a bare assertion.",
                     f"attention TP = {stp} / {sdp} = {a}, H = {heads}, K = {groups}.",
                     ENGINE_START, ("engine_gpus", "sglang_dp", "dp_attention"))


@check("PAR018", "sglang-experts-per-ep", Severity.ERROR,
       "The experts do not split over SGLang's expert parallel ranks.")
def sglang_experts_per_ep(v: View) -> Violation | None:
    """
    ## What it does
    With an SGLang expert parallel size above 1, checks that `--num-experts` is a multiple
    of it.

    ## Why is this bad?
    SGLang's expert location setup asserts it when the engines start, with a bare assertion.

    ## Example
    ```python
    # 60 experts
    "--sglang-ep-size 8 "
    ```
    Use instead:
    ```python
    "--sglang-ep-size 4 "
    ```
    """
    sep = v.get("sglang_ep")
    if sep <= 1:
        return None
    experts = v.model("experts")
    if experts is None or experts % sep == 0:
        return None
    return Violation("PAR018", f"SGLang EP {sep} does not split {experts} experts: "
                               "the engines fail a bare assertion.",
                     f"E = {experts}, SGLang EP = {sep}.", ENGINE_START, ("sglang_ep",))


@rule("PAR019", "unresolved", Severity.INFO,
      "A value a PAR rule needs cannot be determined statically.")
class Unresolved:
    """
    ## What it does
    Reports a value of a launch (a flag, the model, whether the launch runs at all) that the
    evaluator cannot decide without running code: an environment variable CI sets to what
    cannot be known, a function from outside the repository, a condition on either. A flag a
    branch on such a condition sets (an append, an assignment, an environment write) is one
    of them; so is a run that a `raise` ends before its launches. The rules that need it are
    not evaluated; rocmbot never guesses and never drops a launch silently.

    ## Why is this bad?
    It is not wrong, but it is not checked: a broken layout behind it reaches the GPU runner.

    ## Example
    ```python
    TP = int(os.environ["TP"])
    ```
    Use instead: a literal, a module constant or a dataclass field the test sets.
    """


# ----- evaluation ----------------------------------------------------------------------------

@dataclass(slots=True)
class Outcome:
    violations: list[Violation]
    needs: dict[tuple[str, int | None, str], tuple[Unknown, list[str], list[str]]]


def evaluate(launch: Launch, overrides: dict[str, int | bool] | None = None) -> Outcome:
    """Every rule on one launch: what fails, and what could not be checked."""
    view = View(launch, overrides)
    violations: list[Violation] = []
    needs: dict[tuple[str, int | None, str], tuple[Unknown, list[str], list[str]]] = {}
    for rule_id, fn in CHECKS.items():
        try:
            found = fn(view)
        except ArithmeticError:  # a size of zero where a rule divides: that rule cannot say
            log.warning("rule %s could not be evaluated on %s line %s", rule_id, launch.path, launch.line,
                        exc_info=True)
            continue
        except Need as need:
            origin = need.unknown.origin
            key = (origin.path if origin else "", origin.line if origin else None, need.unknown.text)
            entry = needs.setdefault(key, (need.unknown, [], []))
            entry[1].append(rule_id)  # each rule runs once, so it is never listed twice
            flag = CANONICAL.get(need.symbol, need.symbol)
            setting = launch.settings.get(need.symbol)
            flag = setting.flag if setting else flag
            if flag not in entry[2]:
                entry[2].append(flag)
            continue
        if found is not None:
            violations.append(found)
    return Outcome(violations, needs)


def describe(launch: Launch) -> str:
    """The launch's numbers: ``TP2 PP2 CP1 EP4 ETP1, W=4 on a 4-GPU runner``."""
    view = View(launch)
    try:
        fsdp = view.fsdp
    except Need:
        fsdp = False
    if launch.gpus is None:
        runner = "a runner of unknown size"
    else:
        article = "an" if str(launch.gpus).startswith("8") or launch.gpus in (11, 18) else "a"
        runner = f"{article} {launch.gpus}-GPU runner"
    try:
        w = f"W={view.world}"
    except Need:
        w = "W=?"
    if fsdp:
        try:
            grid = f"FSDP r={view.number('dp_replicate', 1)}"
        except Need:
            grid = "FSDP r=?"
    else:
        cells = []
        for name, sym in (("TP", "tp"), ("PP", "pp"), ("CP", "cp"), ("EP", "ep"), ("ETP", "etp")):
            try:
                cells.append(f"{name}{view.get(sym)}")
            except Need:
                cells.append(f"{name}?")
        grid = " ".join(cells)
    return f"{grid}, {w} on {runner}"


# ----- fixes -------------------------------------------------------------------------------

_FIXABLE = ("tp", "pp", "cp", "ep", "etp", "nodes", "gpus_per_node", "rollout_gpus",
            "engine_gpus", "sglang_ep", "sglang_dp", "sglang_pp", "dp_replicate", "gbs", "mbs",
            "seq_length", "dp_attention", "sequence_parallel", "colocate")
_ENABLE = frozenset({"dp_attention", "sequence_parallel", "colocate"})


@dataclass(frozen=True, slots=True)
class Fix:
    text: str
    origin: Origin | None  # the line to edit, when something sets the value


def _candidates(current: int, gpus: int | None) -> list[int]:
    top = max(2 * current, gpus or 8, 8)
    values = {1 << i for i in range(0, 13) if 1 << i <= max(top, 2)}
    values |= {d for d in range(1, current + 1) if current % d == 0} if current <= 4096 else set()
    if gpus:
        values.add(gpus)
    values.discard(current)
    return sorted(values, key=lambda c: (abs(c - current), c))


def _same_origin(a: Origin | None, b: Origin | None) -> bool:
    return a is not None and b is not None and a.name is not None and a == b


def fixes(launch: Launch, violations: list[Violation], prefer: tuple[str, ...] = (),
          limit: int = 3) -> list[Fix]:
    """The smallest single changes after which every rule holds."""
    order: list[str] = [s for s in prefer if s in _FIXABLE]
    for v in violations:
        order.extend(s for s in v.symbols if s in _FIXABLE)
    order.extend(_FIXABLE)
    tried: set[object] = set()
    found: list[Fix] = []
    base = View(launch)
    for symbol in dict.fromkeys(order):
        setting = launch.settings.get(symbol)
        if setting is not None and isinstance(setting.value, Unknown):
            continue
        group = [symbol]
        origin = setting.origin if setting else None
        if setting is not None and origin is not None and origin.name is not None:
            if origin in tried:
                continue
            tried.add(origin)
            if any(s.origin is not None and s.origin.via == origin for s in launch.settings.values()):
                continue
            group = [s for s, st in launch.settings.items() if _same_origin(st.origin, origin)]
        fix = _try(launch, base, symbol, group, setting)
        if fix is not None:
            found.append(fix)
            if len(found) >= limit:
                break
    return found


def _try(launch: Launch, base: View, symbol: str, group: list[str],
         setting: Setting | None) -> Fix | None:
    if symbol in _ENABLE:
        try:
            if base.flag(symbol):
                return None
        except Need:
            return None
        if _holds(launch, dict.fromkeys(group, True)):
            return Fix(f"add `{CANONICAL[symbol]}`", None)
        return None
    try:
        current = base.get(symbol) if symbol in ("etp", "nodes", "gpus_per_node", "engine_gpus") \
            else base.number(symbol)
    except Need:
        return None
    if current is None:
        if symbol not in ("tp", "pp", "cp", "ep", "sglang_ep", "sglang_dp", "sglang_pp",
                          "dp_replicate"):
            return None
        current = 1
    for value in _candidates(current, launch.gpus)[:24]:
        if _holds(launch, dict.fromkeys(group, value)):
            return Fix(_fix_text(symbol, value, setting), setting.origin if setting else None)
    return None


def _holds(launch: Launch, overrides: dict[str, int | bool]) -> bool:
    outcome = evaluate(launch, overrides)
    return not outcome.violations


def _fix_text(symbol: str, value: int, setting: Setting | None) -> str:
    if setting is None:
        return f"add `{CANONICAL[symbol]} {value}`"
    origin = setting.origin
    if origin is not None and origin.name is not None:
        if origin.kind == "constant":
            return f"`{origin.name} = {value}`"
        return f"`{origin.name}={value}`"
    return f"`{setting.flag} {value}`"

