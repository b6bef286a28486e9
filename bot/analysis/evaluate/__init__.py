"""A safe partial evaluator over Python syntax trees.

It runs a test file the way Python would, as far as it can be decided without running
anything: literals, names, arithmetic, comparisons, f-strings, containers, dataclasses,
calls to functions defined in the repository, ``if``/``match``/loops. Nothing is executed,
imported or evaluated by Python itself. What cannot be decided becomes :class:`Unknown`
carrying the expression's source text; an undecidable condition evaluates both branches
and merges what they leave. Calls the evaluator cannot follow are reported to a callback
(that is where launches are found). Step and depth limits bound the work; the evaluator
never raises.

Module top levels run once per interpreter and are shared by its runs. An interpreter
keeps track of what could make a run's result differ elsewhere: reads of the platform's
variables, modules whose top level depended on the run that loaded them, changes to a
loaded module's state. A run that depended on none of it leaves a :class:`Footprint` of
the module state it read, and any interpreter of the revision that :meth:`Interpreter.holds`
it would give the same result. What depends only on a syntax tree node (its text, the
value of a literal) is worked out once and kept on the node.

The parts, one module each: :mod:`.core` (what they all share), :mod:`.interpreter` (the
entry points), :mod:`.statements`, :mod:`.expressions`, :mod:`.operators`, :mod:`.calls`,
:mod:`.modules` (loading, importing, sharing runs across platforms), :mod:`.library` and
:mod:`.methods` (the modelled builtins and standard library, behind the :class:`Host` of
:mod:`.modelled`), :mod:`.literals` and :mod:`.nodes` (what is kept on syntax tree nodes).
"""

from bot.analysis.evaluate.core import (
    MAX_COMMAND_ROWS,
    MAX_INT_BITS,
    MAX_ITEMS,
    MAX_TEXT,
    ExternalCall,
    Footprint,
    Limits,
    ModuleState,
    RunResult,
    Scope,
    Stop,
    scope_set,
)
from bot.analysis.evaluate.interpreter import Interpreter, evaluate_source
from bot.analysis.evaluate.literals import _literal_display as _literal_display
from bot.analysis.evaluate.literals import split_literal
from bot.analysis.evaluate.nodes import _line_segment as _line_segment

__all__ = [
    "MAX_COMMAND_ROWS",
    "MAX_INT_BITS",
    "MAX_ITEMS",
    "MAX_TEXT",
    "ExternalCall",
    "Footprint",
    "Interpreter",
    "Limits",
    "ModuleState",
    "RunResult",
    "Scope",
    "Stop",
    "evaluate_source",
    "scope_set",
    "split_literal",
]
