"""Every PAR rule on one launch: what fails, and the values not known (PAR019) that kept a
rule from being evaluated; and the launch's numbers as the findings show them."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.analysis.findings import Severity, rule
from bot.analysis.flags import CANONICAL
from bot.analysis.par.view import CHECKS, Launch, Need, View, Violation
from bot.analysis.values import Unknown

log = logging.getLogger(__name__)


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
