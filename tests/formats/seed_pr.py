"""A replica of the PR rocmbot was born from, for a machine without a checkout of miles: it
re-enables four ROCm tests parked with the same `disabled=` reason, changes one of them from
EP 4 to EP 2 (EP 4 with PP 2 needs 8 GPUs of its 4-GPU runner), and pins `numba==0.65.1` in the
ROCm Dockerfile and in both install steps of the CI workflow. Its nightly suites run in no
workflow of the repository, so the base has an info for each of their tests.

``keep_ep=True`` builds the variant that keeps EP 4: that test is held."""

from __future__ import annotations

from pathlib import Path

from bot.cli.example import HARNESS, MODEL
from tests.formats.big_pr import commit_pair

TESTS = 40
REENABLED = (1, 2, 3, 5)
GRID = 5  # the re-enabled test whose expert grid the PR fixes
REASON = "FIXME: re-enable once this case passes on the MI350 runners."

TEST = """\
from tests.e2e.group{g}._common import CaseConfig, execute, prepare

register_rocm_ci({est}, "{suite}"{disabled})

CASE = CaseConfig(num_gpus_per_node=4, tp_size=2, pp_size={pp}, ep_size={ep})

if __name__ == "__main__":
    prepare(CASE)
    execute(CASE)
"""

DOCKERFILE = """\
ARG BASE_IMAGE=rocm/sgl-dev:v0.5.16
FROM ${{BASE_IMAGE}}
RUN pip install polars zstandard
{numba}RUN pip install "transformers==4.57.0"
"""

WORKFLOW = """\
name: ROCm CI
on:
  pull_request:
jobs:
  per-pr:
    runs-on: [self-hosted, mi350]
    container: rocm/miles:ci
    steps:
      - name: Install dependencies
        run: pip install "transformers==4.57.0" {numba}--break-system-packages
      - name: Install (miles only)
        run: pip install --no-deps -e . {numba}--break-system-packages
      - run: python tests/ci/run_suite.py --suite stage-c-4-gpu-mi350
"""


def _test(n: int, *, head: bool, keep_ep: bool) -> str:
    suite = "stage-c-4-gpu-mi350" if n in REENABLED else "nightly-stage-c-4-gpu-mi350"
    disabled = f', disabled="{REASON}"' if n in REENABLED and not head else ""
    pp, ep = (2, 4 if not head or keep_ep else 2) if n == GRID else (1, 2)
    return TEST.format(g=n % 4, est=600 + 150 * (n % 12), suite=suite, disabled=disabled, pp=pp, ep=ep)


def files(*, head: bool, keep_ep: bool = False) -> dict[str, str]:
    numba = '"numba==0.65.1" ' if head else ""
    out = {
        "tests/__init__.py": "",
        "tests/e2e/__init__.py": "",
        "scripts/models/qwen3.5-35B-A3B.py": MODEL,
        "docker/Dockerfile.rocm": DOCKERFILE.format(
            numba='RUN pip install "numba==0.65.1"\n' if head else ""),
        ".github/workflows/rocm-ci.yml": WORKFLOW.format(numba=numba),
    }
    for g in range(4):
        out[f"tests/e2e/group{g}/__init__.py"] = ""
        out[f"tests/e2e/group{g}/_common.py"] = HARNESS
    for n in range(TESTS):
        out[f"tests/e2e/group{n % 4}/test_case_{n:02d}.py"] = _test(n, head=head, keep_ep=keep_ep)
    return out


def build(root: Path, *, keep_ep: bool = False) -> tuple[str, str]:
    """The repository at ``root``: (base, head) commits."""
    return commit_pair(root, lambda head: files(head=head, keep_ep=keep_ep))


def test_path(n: int) -> str:
    return f"tests/e2e/group{n % 4}/test_case_{n:02d}.py"
