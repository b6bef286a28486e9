"""rocmbot: a GitHub App that checks GPU ML training PRs and runs the affected ROCm tests."""

__version__ = "0.1.0"
