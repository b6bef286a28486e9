"""The effective configuration as YAML, each top-level key annotated with where it came from,
followed by the dependency-pin groups it gives (configured or inferred)."""

from __future__ import annotations

import yaml

from bot.analysis.pins import describe_groups
from bot.analysis.snapshot import Snapshot
from bot.analysis.tree import Tree
from config.repo import LoadedConfig


def describe(tree: Tree, loaded: LoadedConfig) -> str:
    data = loaded.config.model_dump(mode="json")
    lines = [f"# effective configuration ({loaded.path or 'no .github/rocmbot.yml: all defaults'})"]
    for problem in loaded.problems:
        where = f" (line {problem.line})" if problem.line else ""
        lines.append(f"# CFG001 {problem.key}{where}: {problem.message}; the default is used")
    for key, value in data.items():
        lines.append(f"# {key}: from {loaded.sources.get(key, 'default')}")
        lines.append(yaml.safe_dump({key: value}, sort_keys=False, allow_unicode=True).rstrip())
    groups = describe_groups(Snapshot(tree, loaded.config))
    lines.append("")
    lines.append("# dependency-pin groups (what PIN001..PIN006 compare)")
    lines.append(yaml.safe_dump({"pin_groups": groups}, sort_keys=False, allow_unicode=True).rstrip()
                 if groups else "pin_groups: []  # no Dockerfile or install step found")
    return "\n".join(lines) + "\n"
