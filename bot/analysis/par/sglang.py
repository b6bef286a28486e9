"""The PAR rules of the SGLang rollout engines: their expert and data parallel sizes, and
the attention heads and experts over their ranks."""

from __future__ import annotations

from collections.abc import Callable

from bot.analysis.findings import Severity
from bot.analysis.par.view import ENGINE_START, PARSING, View, Violation, check


@check("PAR005", "sglang-ep-vs-tp", Severity.ERROR,
       "SGLang's expert parallel size does not divide its tensor parallel size.")
def sglang_ep_vs_tp(v: View) -> Violation | None:
    """
    ## What it does
    Checks that the SGLang engine's tensor parallel size (the GPUs per engine in miles)
    is a multiple of `--sglang-ep-size` (or `--sglang-expert-parallel-size`), and for an SGLang
    server its `--tp`/`--tp-size` against its `--ep`/`--ep-size` (or `tp_size`/`ep_size`).
    An error when the EP size is larger than the TP size, a warning otherwise.

    The EP size is the one SGLang runs with: an all-to-all MoE backend that spans the experts
    over the TP group (`--moe-a2a-backend` `deepep`, `megamoe`, `mooncake`, `nixl`,
    `ascend_fuseep`, `flashinfer`, `mori` or `pplx`, and `--enable-waterfill`, which turns
    the backend to `deepep`) sets it to the TP size (`_a2a_ep_size` in SGLang's
    `python/sglang/srt/arg_groups/overrides.py`), so the EP size asked for does not matter.

    ## Why is this bad?
    For block-quantized models (a `quantization_config` with a `weight_block_size`),
    SGLang's `check_quantized_moe_compatibility`
    (`python/sglang/srt/model_executor/model_runner_components/moe_ep_setup.py`) stops the
    engines when they start, after the GPUs are taken:

    ```python
    if tp_size % moe_ep_size != 0:
        raise ValueError(
            f"tp_size {tp_size} must be divisible by ep_size {moe_ep_size}"
        )
    ```

    Other models pass that check, so an EP size that divides the TP size unevenly is a
    warning. An EP size above the TP size leaves no MoE tensor parallel rank
    (`moe_tp_size = tp_size // moe_ep_size` is 0) for any model: an error.

    ## Example
    ```python
    "--rollout-num-gpus-per-engine 2 --sglang-ep-size 4 "
    ```
    Use instead:
    ```python
    "--rollout-num-gpus-per-engine 4 --sglang-ep-size 4 "
    ```
    """
    stp = v.sglang_tp()
    sep = v.get("sglang_ep")
    found = None if stp is None else ep_vs_tp(stp, sep, v.a2a_spans_experts)
    if found is None:
        return None
    message, severity = found
    return Violation(message, f"SGLang TP = {stp}, SGLang EP = {sep}.", ENGINE_START,
                     ("sglang_ep", "engine_gpus"), severity)


def ep_vs_tp(tp: int, ep: int, spans: Callable[[], bool]) -> tuple[str, Severity] | None:
    """PAR005 on an SGLang engine or server of TP ``tp`` asked for EP ``ep``: its message and
    severity, or None when it holds. ``spans`` says whether its all-to-all backend sets the
    EP to the TP (read only when the sizes do not fit, as it may not be known)."""
    if ep <= 1 or (tp >= 1 and tp % ep == 0) or spans():
        return None
    if ep > tp:
        return (f"tp_size {tp} must be divisible by ep_size {ep}: with more expert than "
                f"tensor parallel ranks SGLang has no MoE tensor parallel rank "
                f"({tp} // {ep} = 0).", Severity.ERROR)
    return (f"tp_size {tp} must be divisible by ep_size {ep}: SGLang stops with this when it "
            "loads a block-quantized model (`weight_block_size`).", Severity.WARNING)


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
    return Violation(f"`--sglang-dp-size {sdp}` needs `--sglang-enable-dp-attention`: "
                     "argument parsing fails with a bare AssertionError.",
                     f"SGLang DP = {sdp} without DP attention.", PARSING,
                     ("dp_attention", "sglang_dp"))


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
    return Violation(f"SGLang's attention TP {a} does not split {heads} heads and "
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
    experts = v.model("experts")
    if experts is None:
        return None
    sep = v.sglang_ep()
    if sep <= 1 or experts % sep == 0:
        return None
    return Violation(f"SGLang EP {sep} does not split {experts} experts: "
                     "the engines fail a bare assertion.",
                     f"E = {experts}, SGLang EP = {sep}.", ENGINE_START, ("sglang_ep",))
