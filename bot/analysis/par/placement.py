"""The PAR rules of Ray placement: the launch's GPUs against its runner's, and the rollout
GPUs split into whole engines."""

from __future__ import annotations

from bot.analysis.findings import Severity
from bot.analysis.par.view import AFTER_GPUS, IDLE, NEVER_STARTS, View, Violation, check


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
    explicitly off: SGLang may turn it on by itself) against the runner's GPUs. For a launch
    of ranks (`torchrun --nproc-per-node N`, `mp.spawn(fn, nprocs=N)`, a repository tool's
    `--tp`/`--pp`/`--cp`/`--nproc`), checks the ranks per node against the runner's GPUs.

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
        f"This launch needs {need} GPUs ({how}) but its runner has {g}: "
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
        return Violation(f"{g} GPUs per engine: no rollout engine starts.",
                         f"g = {g} < 1.", AFTER_GPUS, ("engine_gpus",))
    if r < g:
        return Violation(f"{r} rollout GPUs cannot hold one engine of {g} GPUs: "
                         "no rollout engine starts.",
                         f"R = {r} < g = {g}.", AFTER_GPUS, ("engine_gpus", "gpus_per_node"))
    return Violation(f"{r} rollout GPUs do not split into engines of {g} GPUs: "
                     f"{r % g} GPUs stay idle.",
                     f"R = {r} is not a multiple of g = {g}.", IDLE,
                     ("engine_gpus", "gpus_per_node"), Severity.WARNING)
