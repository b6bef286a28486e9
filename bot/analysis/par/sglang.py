"""The PAR rules of the SGLang rollout engines: their expert and data parallel sizes, and
the attention heads and experts over their ranks."""

from __future__ import annotations

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
