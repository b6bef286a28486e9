"""The PAR rules of the FSDP training backend."""

from __future__ import annotations

from bot.analysis.findings import Severity
from bot.analysis.par.view import PARSING, View, Violation, check


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
    return Violation(f"world_size({w}) must be divisible by dp_replicate_size({r})",
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
    return Violation("Context parallelism is not supported for FSDP backend.",
                     f"CP = {v.get('cp')} with the FSDP backend.", PARSING, ("cp",))
