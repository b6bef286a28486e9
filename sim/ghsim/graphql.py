"""A small GraphQL executor: repositories, git objects (``object(expression: "SHA:path")``), rate limits."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ghsim.diff import is_binary
from ghsim.objects import TREE_MODE, Commit
from ghsim.state import Account, Repository, SimulatorState, iso, node_id

_TOKEN = re.compile(
    r'''
    (?P<skip>[\s,]+|\#[^\n]*)
  | (?P<block>"""(?:[^"\\]|\\.|"(?!""))*""")
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<spread>\.\.\.)
  | (?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<name>[_A-Za-z][_0-9A-Za-z]*)
  | (?P<punct>[!$():=@\[\]{}|&])
''',
    re.VERBOSE,
)


class GraphQLError(Exception):
    """A query the executor cannot parse or validate."""


@dataclass
class Selection:
    name: str
    alias: str
    arguments: dict[str, Any] = field(default_factory=dict)
    children: list[Selection] = field(default_factory=list)
    on_type: str | None = None  # set for inline fragments (name is then "...")


@dataclass(frozen=True)
class _Variable:
    name: str


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            found = _TOKEN.match(text, pos)
            if not found:
                raise GraphQLError(f'Parse error on "{text[pos]}" at offset {pos}')
            pos = found.end()
            kind = found.lastgroup or "skip"
            if kind != "skip":
                self.tokens.append((kind, found.group()))
        self.index = 0

    def peek(self, value: str | None = None) -> bool:
        if self.index >= len(self.tokens):
            return False
        return value is None or self.tokens[self.index][1] == value

    def take(self, value: str | None = None) -> tuple[str, str]:
        if self.index >= len(self.tokens):
            raise GraphQLError("Parse error: unexpected end of query")
        token = self.tokens[self.index]
        if value is not None and token[1] != value:
            raise GraphQLError(f'Parse error on "{token[1]}": expected "{value}"')
        self.index += 1
        return token

    def document(self) -> list[Selection]:
        if self.peek("query"):
            self.take()
            if self.index < len(self.tokens) and self.tokens[self.index][0] == "name":
                self.take()
            if self.peek("("):
                self._variable_definitions()
        elif self.peek("mutation") or self.peek("subscription") or self.peek("fragment"):
            raise GraphQLError(f"The simulator only answers queries, not {self.tokens[self.index][1]}")
        selections = self.selection_set()
        if self.peek():
            raise GraphQLError(f'Parse error on "{self.tokens[self.index][1]}": one operation per request')
        return selections

    def _variable_definitions(self) -> None:
        self.take("(")
        while not self.peek(")"):
            self.take("$")
            self.take()
            self.take(":")
            self._type()
            if self.peek("="):
                self.take()
                self.value()
        self.take(")")

    def _type(self) -> None:
        if self.peek("["):
            self.take()
            self._type()
            self.take("]")
        else:
            self.take()
        if self.peek("!"):
            self.take()

    def selection_set(self) -> list[Selection]:
        self.take("{")
        out: list[Selection] = []
        while not self.peek("}"):
            if self.peek("..."):
                self.take()
                if not self.peek("on"):
                    raise GraphQLError("Named fragments are not supported by the simulator")
                self.take("on")
                on_type = self.take()[1]
                out.append(Selection("...", "...", children=self.selection_set(), on_type=on_type))
                continue
            alias = name = self.take()[1]
            if self.peek(":"):
                self.take()
                name = self.take()[1]
            selection = Selection(name, alias)
            if self.peek("("):
                self.take()
                while not self.peek(")"):
                    key = self.take()[1]
                    self.take(":")
                    selection.arguments[key] = self.value()
                self.take(")")
            if self.peek("{"):
                selection.children = self.selection_set()
            out.append(selection)
        self.take("}")
        return out

    def value(self) -> Any:
        kind, text = self.take()
        if text == "$":
            return _Variable(self.take()[1])
        if kind == "string":
            import json

            return json.loads(text)
        if kind == "block":
            return text[3:-3]
        if kind == "number":
            return float(text) if any(c in text for c in ".eE") else int(text)
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if text == "[":
            items = []
            while not self.peek("]"):
                items.append(self.value())
            self.take("]")
            return items
        if text == "{":
            obj = {}
            while not self.peek("}"):
                key = self.take()[1]
                self.take(":")
                obj[key] = self.value()
            self.take("}")
            return obj
        return text  # an enum value


@dataclass
class _Node:
    """A resolved object: its GraphQL type name and the Python value behind it."""

    typename: str
    value: Any


Resolver = Callable[["Executor", _Node, dict[str, Any]], Any]


class Executor:
    """Runs one parsed query against the simulator's state."""

    def __init__(
        self,
        state: SimulatorState,
        base: str,
        variables: dict[str, Any],
        allowed: Callable[[Repository], bool],
        rate: dict[str, Any],
    ) -> None:
        self.state, self.base, self.variables, self.allowed, self.rate = state, base, variables, allowed, rate
        self.errors: list[dict[str, Any]] = []

    def run(self, selections: list[Selection]) -> dict[str, Any]:
        return self._object(_Node("Query", None), selections, [])

    def _args(self, selection: Selection) -> dict[str, Any]:
        def resolve(value: Any) -> Any:
            if isinstance(value, _Variable):
                if value.name not in self.variables:
                    raise GraphQLError(f"Variable ${value.name} is used by the query but not provided")
                return self.variables[value.name]
            if isinstance(value, list):
                return [resolve(v) for v in value]
            return value

        return {k: resolve(v) for k, v in selection.arguments.items()}

    def _object(self, node: _Node, selections: list[Selection], path: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for selection in selections:
            if selection.on_type is not None:
                if selection.on_type == node.typename:
                    out.update(self._object(node, selection.children, path))
                continue
            out[selection.alias] = self._field(node, selection, [*path, selection.alias])
        return out

    def _field(self, node: _Node, selection: Selection, path: list[str]) -> Any:
        if selection.name == "__typename":
            return node.typename
        resolver = _FIELDS.get(node.typename, {}).get(selection.name)
        if resolver is None:
            raise GraphQLError(f"Field '{selection.name}' doesn't exist on type '{node.typename}'")
        result = resolver(self, node, self._args(selection))
        return self._complete(result, selection, path)

    def _complete(self, result: Any, selection: Selection, path: list[str]) -> Any:
        if isinstance(result, list):
            return [self._complete(item, selection, path) for item in result]
        if isinstance(result, _Node):
            if not selection.children:
                raise GraphQLError(
                    f"Field must have selections (field '{selection.name}' returns "
                    f"{result.typename} but has no selections)"
                )
            return self._object(result, selection.children, path)
        if isinstance(result, dict) and "__error__" in result:
            self.errors.append({"type": "NOT_FOUND", "path": path, "message": result["__error__"]})
            return None
        return result


# -- resolvers -----------------------------------------------------------------------------------
def _repository(ex: Executor, node: _Node, args: dict[str, Any]) -> Any:
    owner, name = args.get("owner"), args.get("name")
    repo = ex.state.repos.get(f"{owner}/{name}".lower())
    if repo is None or not ex.allowed(repo):
        return {"__error__": f"Could not resolve to a Repository with the name '{owner}/{name}'."}
    return _Node("Repository", repo)


def _object_at(ex: Executor, node: _Node, args: dict[str, Any]) -> Any:
    repo: Repository = node.value
    expression = args.get("expression") or args.get("oid")
    if not isinstance(expression, str):
        raise GraphQLError("object requires an expression or an oid")
    rev, sep, path = expression.partition(":")
    commit = repo.resolve(rev)
    if commit is None:
        blob = repo.store.blobs.get(expression)
        return _Node("Blob", (expression, blob)) if blob is not None and not sep else None
    if not sep:
        return _Node("Commit", (repo, commit))
    return _tree_or_blob(repo, commit, path.strip("/"))


def _tree_or_blob(repo: Repository, commit: Commit, path: str) -> _Node | None:
    if not path:
        return _Node("Tree", (repo, commit.tree, ""))
    entry = commit.files.get(path)
    if entry is not None:
        return _Node("Blob", (entry.sha, repo.store.blobs.get(entry.sha, b"")))
    tree_sha = commit.tree
    for part in path.split("/"):
        found = next(
            (e for e in repo.store.trees.get(tree_sha, []) if e.name == part and e.mode == TREE_MODE), None
        )
        if found is None:
            return None
        tree_sha = found.sha
    return _Node("Tree", (repo, tree_sha, path))


def _pull_request(ex: Executor, node: _Node, args: dict[str, Any]) -> Any:
    repo: Repository = node.value
    number = args.get("number")
    pull = ex.state.pull(repo, number) if isinstance(number, int) else None
    if pull is None:
        return {"__error__": f"Could not resolve to a PullRequest with the number of {number}."}
    return _Node("PullRequest", pull)


MAX_PAGE = 100


def _labels(ex: Executor, node: _Node, args: dict[str, Any]) -> Any:
    """A PR's labels, a connection: its first (or last) ``n``, as GitHub requires one of them."""
    first, last = args.get("first"), args.get("last")
    if first is None and last is None:
        raise GraphQLError("You must provide a `first` or `last` value to properly paginate the `labels` "
                           "connection.")
    which, count = ("first", first) if first is not None else ("last", last)
    if not isinstance(count, int):
        raise GraphQLError(f"Argument '{which}' on Field 'labels' has an invalid value ({count}). "
                           "Expected type 'Int'.")
    if count < 0:
        raise GraphQLError(f"`{which}` on the `labels` connection cannot be less than zero.")
    if count > MAX_PAGE:
        raise GraphQLError(f"Requesting {count} records on the `labels` connection exceeds the "
                           f"`{which}` limit of {MAX_PAGE} records.")
    pull = node.value
    labels = ex.state.labels_on(pull.repo, pull.number)
    page = labels[:count] if first is not None else labels[len(labels) - count:]
    return _Node("LabelConnection", (pull.repo, labels, page))


def _actor(account: Account) -> _Node:
    return _Node("Bot" if account.type == "Bot" else "User", account)


def _blob_text(ex: Executor, node: _Node, args: dict[str, Any]) -> Any:
    data: bytes = node.value[1]
    if is_binary(data):
        return None
    return data[: ex.state.graphql_blob_limit].decode("utf-8", "ignore")


def _tree_entries(ex: Executor, node: _Node, args: dict[str, Any]) -> Any:
    repo, sha, prefix = node.value
    return [
        _Node("TreeEntry", (entry, f"{prefix}/{entry.name}" if prefix else entry.name))
        for entry in repo.store.trees.get(sha, [])
    ]


_FIELDS: dict[str, dict[str, Resolver]] = {
    "Query": {
        "repository": _repository,
        "rateLimit": lambda ex, node, args: _Node("RateLimit", ex.rate),
    },
    "Repository": {
        "id": lambda ex, node, args: node.value.node_id,
        "name": lambda ex, node, args: node.value.name,
        "nameWithOwner": lambda ex, node, args: node.value.full_name,
        "url": lambda ex, node, args: f"{ex.base}/{node.value.full_name}",
        "isPrivate": lambda ex, node, args: node.value.private,
        "object": _object_at,
        "defaultBranchRef": lambda ex, node, args: _Node("Ref", (node.value, node.value.default_branch)),
        "pullRequest": _pull_request,
    },
    "PullRequest": {
        "number": lambda ex, node, args: node.value.number,
        "headRefOid": lambda ex, node, args: node.value.head_sha,
        "headRefName": lambda ex, node, args: node.value.head_ref,
        "baseRefOid": lambda ex, node, args: node.value.base_sha,
        "baseRefName": lambda ex, node, args: node.value.base_ref,
        "isDraft": lambda ex, node, args: node.value.draft,
        "state": lambda ex, node, args: "MERGED" if node.value.merged else node.value.state.upper(),
        "url": lambda ex, node, args: f"{ex.base}/{node.value.repo.full_name}/pull/{node.value.number}",
        "author": lambda ex, node, args: _actor(node.value.user),
        "headRepository": lambda ex, node, args: _Node("Repository", node.value.head_repo),
        "labels": _labels,
    },
    "LabelConnection": {
        "totalCount": lambda ex, node, args: len(node.value[1]),
        "nodes": lambda ex, node, args: [_Node("Label", (node.value[0], label)) for label in node.value[2]],
    },
    "Label": {
        "id": lambda ex, node, args: node_id("LA", node.value[1].id),
        "name": lambda ex, node, args: node.value[1].name,
        "color": lambda ex, node, args: node.value[1].color,
        "description": lambda ex, node, args: node.value[1].description,
        "isDefault": lambda ex, node, args: node.value[1].default,
        "url": lambda ex, node, args: f"{ex.base}/{node.value[0].full_name}/labels/"
        + urllib.parse.quote(node.value[1].name, safe=""),
    },
    "User": {"login": lambda ex, node, args: node.value.login},
    "Bot": {"login": lambda ex, node, args: node.value.login.removesuffix("[bot]")},
    "Ref": {
        "name": lambda ex, node, args: node.value[1],
        "target": lambda ex, node, args: _Node(
            "Commit", (node.value[0], node.value[0].resolve(node.value[1]))
        ),
    },
    "Blob": {
        "oid": lambda ex, node, args: node.value[0],
        "abbreviatedOid": lambda ex, node, args: node.value[0][:7],
        "byteSize": lambda ex, node, args: len(node.value[1]),
        "isBinary": lambda ex, node, args: is_binary(node.value[1]),
        "isTruncated": lambda ex, node, args: len(node.value[1]) > ex.state.graphql_blob_limit,
        "text": _blob_text,
    },
    "Tree": {
        "oid": lambda ex, node, args: node.value[1],
        "entries": _tree_entries,
    },
    "TreeEntry": {
        "name": lambda ex, node, args: node.value[0].name,
        "path": lambda ex, node, args: node.value[1],
        "oid": lambda ex, node, args: node.value[0].sha,
        "mode": lambda ex, node, args: int(node.value[0].mode, 8),
        "type": lambda ex, node, args: node.value[0].kind,
    },
    "Commit": {
        "oid": lambda ex, node, args: node.value[1].sha,
        "message": lambda ex, node, args: node.value[1].message,
        "committedDate": lambda ex, node, args: iso(node.value[1].committer.date),
        "tree": lambda ex, node, args: _Node("Tree", (node.value[0], node.value[1].tree, "")),
    },
    "RateLimit": {
        "limit": lambda ex, node, args: node.value["limit"],
        "cost": lambda ex, node, args: 1,
        "remaining": lambda ex, node, args: node.value["remaining"],
        "used": lambda ex, node, args: node.value["used"],
        "resetAt": lambda ex, node, args: node.value["resetAt"],
        "nodeCount": lambda ex, node, args: 0,
    },
}


def execute(
    state: SimulatorState,
    base: str,
    body: Any,
    *,
    allowed: Callable[[Repository], bool],
    rate: dict[str, Any],
) -> dict[str, Any]:
    """The answer to one ``POST /graphql`` body, as GitHub shapes it (``data`` and/or ``errors``)."""
    if not isinstance(body, dict) or not isinstance(body.get("query"), str):
        return {"errors": [{"message": "A query attribute must be specified and must be a string."}]}
    variables = body.get("variables") or {}
    try:
        selections = _Parser(body["query"]).document()
        executor = Executor(state, base, variables if isinstance(variables, dict) else {}, allowed, rate)
        with state.lock:
            data = executor.run(selections)
    except GraphQLError as exc:
        return {"errors": [{"message": str(exc), "extensions": {"code": "undefinedField"}}]}
    answer: dict[str, Any] = {"data": data}
    if executor.errors:
        answer["errors"] = executor.errors
    return answer
