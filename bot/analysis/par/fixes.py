"""Fixes of PAR violations: the smallest single changes after which every rule holds."""

from __future__ import annotations

from dataclasses import dataclass

from bot.analysis.flags import CANONICAL, Setting
from bot.analysis.par.evaluation import evaluate
from bot.analysis.par.view import Launch, Need, View, Violation
from bot.analysis.values import Origin, Unknown

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
