"""Rewrite the vendored webhook examples and schemas from `@octokit/webhooks-examples` and `-schemas`.

Usage: ``python sim/ghsim/webhooks/regenerate.py [--version 7.6.1]
[--examples-tarball FILE] [--schemas-tarball FILE]``.

Keeps one example per (event, action) the bot handles (preferring one that carries an
``installation``, as deliveries to an App do) and the schema definitions those events reach.
Writes ``examples.json`` and ``schema.json`` beside this script, deterministically.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

EXAMPLES_PACKAGE = "@octokit/webhooks-examples"
SCHEMAS_PACKAGE = "@octokit/webhooks-schemas"
VERSION = "7.6.1"
HERE = Path(__file__).resolve().parent

# event -> actions kept (None: an event without actions, such as ping).
EVENTS: dict[str, tuple[str | None, ...]] = {
    "pull_request": ("opened", "synchronize", "reopened", "ready_for_review", "closed", "labeled",
                     "unlabeled"),
    "issue_comment": ("created", "edited"),
    "pull_request_review": ("submitted",),
    "check_run": ("requested_action", "rerequested"),
    "workflow_run": ("requested", "in_progress", "completed"),
    "workflow_job": ("queued", "in_progress", "completed"),
    "ping": (None,),
    "installation": ("created", "deleted"),
}


def definition_name(event: str, action: str | None) -> str:
    """The schema definition for one (event, action), as the schemas package names it."""
    return f"{event}${action or 'event'}"


def _pick(examples: list[dict[str, Any]], action: str | None, valid: Callable[[Any], bool]) -> Any:
    """The first example for ``action``, preferring valid ones, then those an App would receive."""
    matching = [e for e in examples if e.get("action") == action]
    ranked = sorted(
        range(len(matching)),
        key=lambda i: (
            not valid(matching[i]),
            "installation" not in matching[i],
            "repository" not in matching[i],
            i,
        ),
    )
    return matching[ranked[0]] if ranked else None


def trim_examples(index: list[dict[str, Any]], schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"event.action": payload}`` for EVENTS; actions without an upstream example are skipped."""
    import jsonschema

    by_event = {entry["name"]: entry["examples"] for entry in index}
    kept: dict[str, dict[str, Any]] = {}
    for event, actions in EVENTS.items():
        for action in actions:
            root = {
                "$ref": f"#/definitions/{definition_name(event, action)}",
                "definitions": schema["definitions"],
            }
            validator = jsonschema.Draft7Validator(root)
            example = _pick(by_event.get(event, []), action, validator.is_valid)
            if example is not None:
                kept[f"{event}.{action}" if action else event] = example
    return kept


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/definitions/"):
            found.add(ref.removeprefix("#/definitions/"))
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for item in node:
            found |= _refs(item)
    return found


def trim_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema restricted to the EVENTS definitions and what they reference."""
    roots = [definition_name(e, a) for e, actions in EVENTS.items() for a in actions]
    roots = [r for r in roots if r in schema["definitions"]]
    keep: dict[str, Any] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in keep:
            continue
        keep[name] = schema["definitions"][name]
        pending.extend(sorted(_refs(keep[name]) - keep.keys()))
    return {
        "$schema": schema["$schema"],
        "definitions": keep,
        "oneOf": [{"$ref": f"#/definitions/{name}"} for name in roots],
    }


def _fetch(package: str, version: str, workdir: Path) -> Path:
    proc = subprocess.run(
        ["npm", "pack", f"{package}@{version}", "--pack-destination", str(workdir), "--silent"],
        capture_output=True,
        text=True,
        check=True,
    )
    return workdir / proc.stdout.strip().splitlines()[-1]


def _member(tarball: Path, name: str) -> Any:
    with tarfile.open(tarball, "r:gz") as archive:
        handle = archive.extractfile(name)
        if handle is None:
            raise SystemExit(f"{name} missing from {tarball}")
        return json.loads(handle.read())


def _write(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    sys.stderr.write(f"wrote {path} ({path.stat().st_size} bytes)\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=VERSION)
    parser.add_argument("--examples-tarball", type=Path)
    parser.add_argument("--schemas-tarball", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        examples_tgz = args.examples_tarball or _fetch(EXAMPLES_PACKAGE, args.version, Path(tmp))
        schemas_tgz = args.schemas_tarball or _fetch(SCHEMAS_PACKAGE, args.version, Path(tmp))
        examples = _member(examples_tgz, "package/api.github.com/index.json")
        schema = _member(schemas_tgz, "package/schema.json")
    trimmed = trim_examples(examples, schema)
    trimmed["_source"] = {"package": EXAMPLES_PACKAGE, "version": args.version}
    _write(HERE / "examples.json", trimmed)
    out = trim_schema(schema)
    out["x-ghsim-source"] = f"{SCHEMAS_PACKAGE}@{args.version} schema.json, trimmed"
    _write(HERE / "schema.json", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
