"""The model of a repository's CI: its workflows and the events each job runs on, the GitHub
Actions expressions that gate them, path filters, labels, suite registries, and the files the
per-PR ROCm environment reads."""

from bot.analysis.ci.index import CiIndex, ci_index, suite_gpus

__all__ = ["CiIndex", "ci_index", "suite_gpus"]
