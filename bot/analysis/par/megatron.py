"""The PAR rules of Megatron-LM's model-parallel grid: the world size against TP, PP, CP, EP
and ETP; the model's layers, heads, query groups and experts over their ranks; the batch,
the sequence length, the virtual pipeline and sequence parallelism."""

from __future__ import annotations

from bot.analysis.findings import Severity
from bot.analysis.par.view import AFTER_GPUS, MODEL_BUILD, PARSING, View, Violation, check


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
        f"world size ({w}) is not divisible by total_model_size (total_model_size={total})",
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
        f"world_size ({w}) is not divisible by expert_tensor_model_pipeline_parallel size ({size})",
        f"ETP x EP x PP = {etp} x {ep} x {pp} = {size} does not divide W = {w}.", AFTER_GPUS,
        ("etp", "ep", "pp", "gpus_per_node", "nodes"))


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
    return Violation("Number of layers should be divisible by the "
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
    return Violation(f"num_attention_heads ({heads}) must be a multiple of "
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
    return Violation(f"num_query_groups ({groups}) must be a multiple or divisor of "
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
    return Violation("Number of experts should be a multiple of expert model "
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
    return Violation(f"global batch size ({gbs}) is not divisible by micro batch size "
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
    return Violation("seq-length should be a multiple of 2 * context-parallel-size "
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
    return Violation(message, f"PP = {pp} with a virtual pipeline.", PARSING, ("pp",))


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
    return Violation("When using expert parallelism and tensor parallelism for "
                     "training, sequence parallelism must be used",
                     f"EP = {v.get('ep')}, TP = {v.get('tp')} without --sequence-parallel.",
                     MODEL_BUILD, ("sequence_parallel", "ep", "tp"))
