"""GitHub's OpenAPI description (the vendored subset): match requests to operations and validate them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

SPEC_PATH = Path(__file__).resolve().parent / "openapi" / "api.github.com.json"
_BASE_URI = "urn:ghsim:openapi"
MAX_PER_PAGE = 100
# Where the description contradicts what GitHub sends, answers follow GitHub; the mismatch is ignored here.
RESPONSE_QUIRKS = {
    # The inlined account is ``allOf`` [simple-user, enterprise] (``anyOf`` elsewhere): no account has both.
    "apps/list-installations": r"\d+/account: ",
}

# Where the description's prose accepts a request body its schema does not, requests follow the prose.
REQUEST_ALTERNATIVES: dict[str, dict[str, Any]] = {
    # "You can also pass an `array` of labels directly" (PyGithub's `add_to_labels` does)
    "issues/add-labels": {"type": "array", "minItems": 1, "items": {"type": "string"}},
}


def _to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema objects to JSON Schema: ``nullable`` becomes a null type, refs become absolute."""
    if isinstance(node, list):
        return [_to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _to_json_schema(v) for k, v in node.items() if k not in ("nullable", "discriminator")}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        out["$ref"] = _BASE_URI + ref
    if node.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


@dataclass(frozen=True)
class Parameter:
    name: str
    location: str
    required: bool
    schema: dict[str, Any]


@dataclass
class Operation:
    """One operation of the description."""

    method: str
    template: str
    operation_id: str
    parameters: list[Parameter]
    body_schema: dict[str, Any] | None
    body_required: bool
    responses: dict[str, dict[str, Any]]
    pattern: re.Pattern[str] = field(init=False)

    def __post_init__(self) -> None:
        regex = ""
        for literal, name in re.findall(r"([^{]*)(?:\{([^}]+)\})?", self.template):
            regex += re.escape(literal)
            if name:
                multi = any(p.name == name and p.schema.get("x-multi-segment") for p in self.parameters)
                regex += f"(?P<{name}>{'.+' if multi or name == 'path' else '[^/]+'})"
        self.pattern = re.compile(regex + "$")

    @property
    def literal_length(self) -> int:
        return len(re.sub(r"\{[^}]+\}", "", self.template))


class Spec:
    """The loaded description: operations and their validators."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        converted = _to_json_schema(document)
        resource: Resource[Any] = Resource.from_contents(converted, default_specification=DRAFT7)
        self._registry: Registry[Any] = Registry().with_resource(_BASE_URI, resource)
        self._validators: dict[str, Draft7Validator] = {}
        self.operations: list[Operation] = []
        for template, methods in document["paths"].items():
            for method, raw in methods.items():
                params = [self._parameter(p) for p in raw.get("parameters", [])]
                body = raw.get("requestBody", {})
                media = body.get("content", {}).get("application/json", {})
                responses = {code: self._resolve(r) for code, r in raw.get("responses", {}).items()}
                self.operations.append(
                    Operation(
                        method.upper(),
                        template,
                        raw["operationId"],
                        params,
                        media.get("schema"),
                        bool(body.get("required")),
                        responses,
                    )
                )
        self.operations.sort(key=lambda o: -o.literal_length)
        self.by_id = {o.operation_id: o for o in self.operations}

    def _resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            _, _, kind, name = node["$ref"].split("/", 3)
            node = self.document["components"][kind][name]
        return node

    def _parameter(self, raw: dict[str, Any]) -> Parameter:
        resolved = self._resolve(raw)
        return Parameter(
            resolved["name"],
            resolved["in"],
            bool(resolved.get("required")),
            {
                **resolved.get("schema", {}),
                **({"x-multi-segment": True} if resolved.get("x-multi-segment") else {}),
            },
        )

    def validator(self, schema: dict[str, Any]) -> Draft7Validator:
        key = json.dumps(schema, sort_keys=True)
        found = self._validators.get(key)
        if found is None:
            found = Draft7Validator(_to_json_schema(schema), registry=self._registry)
            self._validators[key] = found
        return found

    def match(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        """The operation serving ``method path`` and its path parameters."""
        for operation in self.operations:
            if operation.method != method.upper():
                continue
            found = operation.pattern.match(path)
            if found:
                return operation, found.groupdict()
        return None

    # -- requests --------------------------------------------------------------------------------
    def validate_parameters(
        self, operation: Operation, path_params: dict[str, str], query: dict[str, str]
    ) -> tuple[dict[str, Any], list[str]]:
        """Coerce and check path and query parameters (unknown query parameters are ignored, as by GitHub)."""
        values: dict[str, Any] = {}
        errors: list[str] = []
        for param in operation.parameters:
            source = path_params if param.location == "path" else query if param.location == "query" else None
            if source is None:
                continue
            if param.name not in source:
                if param.required:
                    errors.append(f"Missing required {param.location} parameter: {param.name}")
                continue
            raw = source[param.name]
            value = _coerce(raw, param.schema)
            schema = {k: v for k, v in param.schema.items() if k != "x-multi-segment"}
            for error in self.validator(schema).iter_errors(value):
                errors.append(f"{param.name}: {error.message}")
            if param.name == "per_page" and isinstance(value, int) and not 1 <= value <= MAX_PER_PAGE:
                errors.append(f"per_page: {value} is not between 1 and {MAX_PER_PAGE}")
            values[param.name] = value
        return values, errors

    def validate_body(self, operation: Operation, body: Any, present: bool) -> list[str]:
        if operation.body_schema is None:
            return []
        if not present:
            return ["Request body is required"] if operation.body_required else []
        errors = [_describe(e) for e in self.validator(operation.body_schema).iter_errors(body)]
        alternative = REQUEST_ALTERNATIVES.get(operation.operation_id)
        if errors and alternative is not None and self.validator(alternative).is_valid(body):
            return []
        return errors

    # -- responses -------------------------------------------------------------------------------
    def validate_response(self, operation: Operation, status: int, body: Any) -> list[str]:
        """Check an answer against the documented schema for its status (no schema: nothing to check)."""
        response = operation.responses.get(str(status))
        if response is None:
            return [f"status {status} is not documented"] if 200 <= status < 300 else []
        media = response.get("content", {}).get("application/json")
        if not media or "schema" not in media:
            return []
        problems = [_describe(e) for e in self.validator(media["schema"]).iter_errors(body)]
        quirk = RESPONSE_QUIRKS.get(operation.operation_id)
        return [p for p in problems if not (quirk and re.match(quirk, p))]


def _describe(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path) or "body"
    limits = {"maxItems": "items", "maxLength": "characters", "maxProperties": "properties"}
    if error.validator in limits:
        allowed = f"at most {error.validator_value} {limits[error.validator]} are allowed"
        return f"{where}: {allowed}, got {len(error.instance)}"
    message = error.message if len(error.message) <= 300 else error.message[:300] + "..."
    return f"{where}: {message}"


def _coerce(raw: str, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer" and re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if kind == "boolean" and raw in ("true", "false"):
        return raw == "true"
    return raw


@cache
def load_spec(path: Path = SPEC_PATH) -> Spec:
    """The vendored description, parsed once per process."""
    return Spec(json.loads(path.read_text(encoding="utf-8")))
