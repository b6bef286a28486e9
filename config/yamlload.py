"""YAML read with a bound on alias expansion (no "billion laughs").

An alias (`*name`) stands for a whole earlier subtree, and a merge key (`<<: *name`) copies
one in, so a file of a few hundred bytes can describe a document of billions of nodes. The
composer shares aliased nodes, which costs nothing; what costs is any code that then walks
the document, following each alias again. So the node graph is measured right after
composing, before anything walks it: its expanded size (nodes, plus the characters of its
scalars, counting a subtree once per reference) must stay within a small multiple of the
text's length, and a recursive alias is refused outright.
"""

from __future__ import annotations

from typing import Any

import yaml

Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

EXPANSION_FACTOR = 2  # a document may expand to twice its text through aliases ...
EXPANSION_ALLOWANCE = 100_000  # ... plus this much, for ordinary reuse in short files


class ExpansionError(yaml.YAMLError):
    """The document's aliases expand too far, or refer to themselves."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def expansion_limit(text: str) -> int:
    return EXPANSION_FACTOR * len(text) + EXPANSION_ALLOWANCE


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def expanded_size(root: yaml.Node, limit: int) -> int:
    """Nodes plus scalar characters of the document with every alias followed (counting
    stops a little past ``limit``). Iterative, so deep nesting cannot exhaust the stack.

    Raises :class:`ExpansionError` for a recursive alias (a node inside itself).
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # expanded, not yet finished: the path from the root
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_nodes.discard(key)
            if isinstance(node, yaml.ScalarNode):
                size = 1 + len(str(node.value))
            else:
                size = 1 + sum(sizes[id(child)] for child in _children(node))
            sizes[key] = min(size, limit + 1)  # saturate: the exact excess does not matter
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise ExpansionError("an alias refers to a node that contains it (recursive alias)")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    return sizes[id(root)]


def check_expansion(root: yaml.Node, text: str) -> None:
    """Refuse a document whose aliases expand past :func:`expansion_limit`."""
    limit = expansion_limit(text)
    if expanded_size(root, limit) > limit:
        raise ExpansionError(
            f"aliases expand the document past {limit} nodes and characters "
            f"({EXPANSION_FACTOR}x its {len(text)} characters, plus {EXPANSION_ALLOWANCE})"
        )


def compose(text: str) -> yaml.Node | None:
    """The document's node graph, checked; raises ``yaml.YAMLError`` (or RecursionError)."""
    root = yaml.compose(text, Loader=Loader)
    if root is not None:
        check_expansion(root, text)
    return root


def safe_load(text: str) -> Any:
    """Like ``yaml.safe_load``, with the expansion checked before anything is constructed."""
    root = compose(text)
    if root is None:
        return None
    constructor = Loader("")
    try:
        return constructor.construct_document(root)
    finally:
        constructor.dispose()
