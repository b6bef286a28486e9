"""A generated PR like the ones the summary is sized for: it re-enables four ROCm tests of a
40-test repository and changes the ROCm image and the workflow that installs its
dependencies, so every test is touched through the environment, most of them nightly."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from bot.cli.example import HARNESS, MODEL

TESTS = 40
REENABLED = (1, 2, 3, 5)

TEST = """\
from tests.e2e.group{g}._common import CaseConfig, execute, prepare

register_rocm_ci({est}, "{suite}"{disabled})

CASE = CaseConfig(num_gpus_per_node={gpus}, tp_size=2, pp_size=1, ep_size=2)

if __name__ == "__main__":
    prepare(CASE)
    execute(CASE)
"""

DOCKERFILE = """\
ARG BASE_IMAGE=rocm/sgl-dev:{tag}
FROM ${{BASE_IMAGE}}
RUN pip install polars zstandard "numba==0.65.1"
RUN pip install "transformers=={tf}" "accelerate==1.10.0"
"""

WORKFLOW = """\
name: ROCm CI
on:
  pull_request:
  schedule:
    - cron: "0 3 * * *"
jobs:
  per-pr:
    if: github.event_name == 'pull_request'
    runs-on: [self-hosted, mi350]
    container: rocm/miles:ci
    steps:
      - run: pip install "numba==0.64.0" "transformers=={tf}" --break-system-packages
      - run: python tests/ci/run_suite.py --suite stage-c-4-gpu-mi350 --suite stage-c-8-gpu-mi350
  nightly:
    if: github.event_name == 'schedule'
    runs-on: [self-hosted, mi350]
    container: rocm/miles:ci
    steps:
{installs}
      - run: python tests/ci/run_suite.py --suite nightly-c-4-gpu-mi350 --suite nightly-c-8-gpu-mi350
"""


def _test(n: int, *, disabled: bool) -> str:
    gpus = 8 if n % 3 == 0 else 4
    suite = f"{'stage' if n < 8 else 'nightly'}-c-{gpus}-gpu-mi350"
    reason = ', disabled="FIXME: flaky on MI350"' if disabled else ""
    return TEST.format(g=n % 4, est=600 + 150 * (n % 12), suite=suite, disabled=reason, gpus=gpus)


def _workflow(tf: str) -> str:
    installs = "\n".join(f'      - run: pip install "numba==0.64.0" "accelerate==1.9.{n}"' for n in range(4))
    return WORKFLOW.format(tf=tf, installs=installs)


def files(*, head: bool) -> dict[str, str]:
    out = {
        "tests/__init__.py": "",
        "tests/e2e/__init__.py": "",
        "scripts/models/qwen3.5-35B-A3B.py": MODEL,
        "docker/Dockerfile.rocm": DOCKERFILE.format(tag="v0.5.2" if head else "v0.5.1",
                                                    tf="4.57.0" if head else "4.56.0"),
        ".github/workflows/rocm-ci.yml": _workflow("4.57.0" if head else "4.56.0"),
    }
    for g in range(4):
        out[f"tests/e2e/group{g}/__init__.py"] = ""
        out[f"tests/e2e/group{g}/_common.py"] = HARNESS
    for n in range(TESTS):
        out[f"tests/e2e/group{n % 4}/test_case_{n:02d}.py"] = _test(n, disabled=n in REENABLED and not head)
    return out


def _git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "g", "GIT_AUTHOR_EMAIL": "g@g", "GIT_COMMITTER_NAME": "g",
           "GIT_COMMITTER_EMAIL": "g@g", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def build(root: Path) -> tuple[str, str]:
    """The repository at ``root``: (base, head) commits."""
    return commit_pair(root, files)


def commit_pair(root: Path, files: Callable[..., dict[str, str]]) -> tuple[str, str]:
    """A repository at ``root`` with ``files(head=False)`` committed, then
    ``files(head=True)`` over it: (base, head) commits."""
    root.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q", "-b", "main")
    revs = []
    for head in (False, True):
        for path, text in files(head=head).items():
            full = root / path
            full.parent.mkdir(parents=True, exist_ok=True)
            full.write_text(text, encoding="utf-8")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "head" if head else "base")
        revs.append(_git(root, "rev-parse", "HEAD"))
    return revs[0], revs[1]
