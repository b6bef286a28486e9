"""The parallelism rules (PAR001..PAR019): does a resolved launch fit its runner and model?

Each rule is a small function over a :class:`View` of one launch, declared with
:func:`~bot.analysis.par.view.check` in the module of its topic: :mod:`.megatron` (the
model-parallel grid), :mod:`.placement` (Ray's placement and the rollout engines),
:mod:`.sglang` (the rollout engines' own sizes) and :mod:`.fsdp`. The SGLang servers a test
starts are a second kind of view (:mod:`.server`): the rules that apply to them are run there,
by the same declarations. A rule that needs a value
the evaluator could not decide is not evaluated, and PAR019 (:mod:`.evaluation`) says which
value and why; :mod:`.fixes` finds the smallest changes after which every rule holds.
"""

from __future__ import annotations

from bot.analysis.par import fsdp, megatron, placement, server, sglang
from bot.analysis.par.evaluation import Outcome, describe, evaluate
from bot.analysis.par.fixes import Fix, fixes
from bot.analysis.par.view import CHECKS, DEFAULTED, Check, Launch, Need, View, Violation

__all__ = ["CHECKS", "DEFAULTED", "Check", "Fix", "Launch", "Need", "Outcome", "View", "Violation",
           "describe", "evaluate", "fixes", "fsdp", "megatron", "placement", "server", "sglang"]

# The rules run in the order of their ids, whatever module declares them: PAR019 names the
# rules it kept from running, and the fixes try the symbols of the violations, in that order.
_ordered = sorted(CHECKS.items())
CHECKS.clear()
CHECKS.update(_ordered)
