"""The effective configuration as YAML, each top-level key annotated with where it came from."""

from __future__ import annotations

import yaml

from bot.analysis.tree import Tree
from config.repo import LoadedConfig


def describe(tree: Tree, loaded: LoadedConfig) -> str:
    del tree
    data = loaded.config.model_dump(mode="json")
    lines = [f"# effective configuration ({loaded.path or 'no .github/rocmbot.yml: all defaults'})"]
    for problem in loaded.problems:
        where = f" (line {problem.line})" if problem.line else ""
        lines.append(f"# CFG001 {problem.key}{where}: {problem.message}; the default is used")
    for key, value in data.items():
        lines.append(f"# {key}: from {loaded.sources.get(key, 'default')}")
        lines.append(yaml.safe_dump({key: value}, sort_keys=False, allow_unicode=True).rstrip())
    return "\n".join(lines) + "\n"
