"""The filters of a `dorny/paths-filter` step, read and evaluated against a change.

A step's ``with: filters:`` is YAML text, or the path of a YAML file in the repository (a
single line without a `:`, as the action decides). It maps each filter name to a list of
rules; a rule is a picomatch pattern, a list of rules (a YAML alias `*name` to another
list is flattened into it), or a mapping of change types to patterns (``added|modified:
'src/**'``), taken here as matching any change.

How the patterns combine is the action's ``predicate-quantifier``. With ``some`` (the
default) a changed file counts for a filter when at least one pattern matches it. A pattern
with a leading ``!`` matches every file it does not name, so in this mode it does not
exclude anything: ``['src/**', '!**/*.md']`` counts every file that is not Markdown,
anywhere. With ``every`` a file counts when all the patterns match it, and there ``!``
patterns exclude: the same list counts the files under `src/` that are not Markdown. A
filter is true when at least one changed file counts. (A change-type entry with a list of
patterns is one rule in the action, that matches when any of them does; here its patterns
are listed one by one, which differs only under ``every``.)
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import yaml

from bot.analysis.ci.globs import picomatch
from config import yamlload

QUANTIFIERS = ("some", "every")
_MERGE = "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class FilterSet:
    """The filters of one step: each name's patterns, in order."""

    filters: dict[str, tuple[str, ...]]
    quantifier: str = "some"  # dorny's predicate-quantifier: "some" | "every"
    source: str | None = None  # the filters file, when read from one


@dataclass(frozen=True)
class FilterProblem:
    """Why a step's filters cannot be read; ``line`` counts in the filters file when ``path``
    is set, in the step's ``filters:`` text otherwise."""

    message: str
    path: str | None = None
    line: int | None = None


class _MalformedError(Exception):
    """A filter that is not what the action accepts (caught in :func:`read_filters`)."""

    def __init__(self, message: str, node: yaml.Node) -> None:
        super().__init__(message)
        self.message = message
        self.line = int(node.start_mark.line) + 1


def read_filters(
    filters_text: str, quantifier: str | None, read_file: Callable[[str], str | None]
) -> FilterSet | FilterProblem:
    """The step's filters, from its ``filters:`` and ``predicate-quantifier:`` values;
    ``read_file`` reads a repository file (None when there is none). Never raises."""
    quantifier = quantifier or "some"
    if quantifier not in QUANTIFIERS:
        return FilterProblem(f"predicate-quantifier is {quantifier!r}; it must be 'some' or 'every'")
    source = None
    text = filters_text
    if "\n" not in filters_text and ":" not in filters_text:
        source = filters_text.strip().removeprefix("./")
        found = read_file(source)
        if found is None:
            return FilterProblem(f"the filters file {source} is not in the repository", source)
        text = found
    try:
        root = yamlload.compose(text)
    except yamlload.ExpansionError as exc:
        return FilterProblem(f"refused: {exc.problem}", source)
    except yaml.YAMLError as exc:
        reason = getattr(exc, "problem", None) or getattr(exc, "reason", None) or type(exc).__name__
        return FilterProblem(f"not valid YAML: {reason}", source, _error_line(exc, text))
    except RecursionError:
        return FilterProblem("not valid YAML: nested too deeply", source)
    if not isinstance(root, yaml.MappingNode):
        line = None if root is None else int(root.start_mark.line) + 1
        return FilterProblem("the filters must be a mapping of names to lists of patterns", source, line)
    try:
        filters = {name: _patterns(name, node) for name, node in _entries(root)}
    except _MalformedError as exc:
        return FilterProblem(exc.message, source, exc.line)
    return FilterSet(filters, quantifier, source)


def _error_line(exc: yaml.YAMLError, text: str) -> int | None:
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return int(mark.line) + 1
    position = getattr(exc, "position", None)  # a reader's error: an unreadable character
    return text.count("\n", 0, position) + 1 if isinstance(position, int) else None


def _entries(root: yaml.MappingNode) -> list[tuple[str, yaml.Node]]:
    """The filters in order; a merge key (`<<: *other`) adds the other mapping's filters."""
    out: dict[str, yaml.Node] = {}
    merged: dict[str, yaml.Node] = {}
    for key, value in root.value:
        if not isinstance(key, yaml.ScalarNode):
            raise _MalformedError("a filter's name must be a plain word", key)
        if key.tag == _MERGE and isinstance(value, yaml.MappingNode):
            merged.update(_entries(value))
        else:
            out[str(key.value)] = value
    return list({**merged, **out}.items())


def _patterns(name: str, node: yaml.Node) -> tuple[str, ...]:
    """A filter's patterns, lists (and aliases of lists) flattened, change types dropped."""
    out: list[str] = []
    todo = [node]
    while todo:
        item = todo.pop()
        if isinstance(item, yaml.SequenceNode):
            todo.extend(reversed(item.value))
        elif isinstance(item, yaml.MappingNode):
            for _, value in item.value:
                patterns = value.value if isinstance(value, yaml.SequenceNode) else [value]
                if not all(_is_text(p) for p in patterns):
                    raise _MalformedError(f"filter {name}: a change type must map to a pattern or a list "
                                     "of patterns", value)
                out.extend(str(p.value) for p in patterns)
        elif _is_text(item):
            out.append(str(item.value))
        else:
            raise _MalformedError(f"filter {name}: a rule must be a pattern, a list or a mapping of "
                             "change types to patterns", item)
    return tuple(out)


def _is_text(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag != "tag:yaml.org,2002:null"


def evaluate_filters(filter_set: FilterSet, changed: Collection[str]) -> dict[str, bool]:
    """Each filter's output for a change: whether some changed file counts (see the module)."""
    every = filter_set.quantifier == "every"
    out: dict[str, bool] = {}
    for name, patterns in filter_set.filters.items():
        if every:
            out[name] = any(all(picomatch(p, path) for p in patterns) for path in changed)
        else:
            out[name] = any(picomatch(p, path) for path in changed for p in patterns)
    return out
