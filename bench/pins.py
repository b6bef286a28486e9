"""Pin analysis speed on a repository with many Dockerfiles and workflows.

Generates a git repository with 10 Dockerfiles (2 of them ROCm), 40 workflows (10 of them
ROCm, each with two alternative install steps and a reusable-workflow call), requirements
files the Dockerfiles install, and a few pin problems; then times, in the same run:

- the floor: reading the same files from disk and parsing each once with the same parsers
  (YAML loaded, Dockerfiles by dockerfile-parse, every script naming pip by bashlex, every
  requirements line by packaging), without any checking;
- `analyze_pins` of the committed revision through the git tree (a fresh snapshot each round),
  with the number of groups, findings and matrix rows.

Run: `.venv/bin/python -m bench.pins [--dockerfiles N] [--workflows N] [--rounds R]`.
Prints a table; writes JSON to `bench/results/pins.json`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import bashlex
import yaml
from dockerfile_parse import DockerfileParser
from packaging.requirements import Requirement

from bot.analysis.pins import analyze_pins
from bot.analysis.snapshot import Snapshot
from bot.analysis.tree import GitRepository
from config.repo import defaults

PACKAGES = [f"pkg{i}" for i in range(40)]

DOCKERFILE = """\
ARG BASE_IMAGE=rocm/sgl-dev:latest
FROM ${{BASE_IMAGE}} AS base
ARG NUMBA_VERSION=0.65.{drift}
WORKDIR /workspace
COPY docker/requirements-{n}.txt /tmp/requirements.txt
RUN pip install -r /tmp/requirements.txt && \\
    pip install "numba==${{NUMBA_VERSION}}" \\
{pins}
RUN pip install "git+https://github.com/org/lib.git@{ref}"
"""

WORKFLOW = """\
name: CI {n}
on:
  workflow_call:
    inputs:
      skip_dependency_install: {{type: boolean, default: false}}
jobs:
  test:
    runs-on: [self-hosted, gpu]
    steps:
      - uses: actions/checkout@v4
      - name: Install (full)
        if: ${{{{ !inputs.skip_dependency_install }}}}
        run: |
          pip install -e . --no-deps --break-system-packages
          pip install polars zstandard {pins} "numba==0.65.1" --break-system-packages
      - name: Install (slim)
        if: ${{{{ inputs.skip_dependency_install }}}}
        run: |
          pip install polars zstandard {pins} {numba} --break-system-packages
      - name: Run
        run: python tests/ci/run_suite.py --suite stage-c-4-gpu-mi350
  call:
    uses: ./.github/workflows/_shared-{kind}.yml
"""

SHARED = """\
on: workflow_call
jobs:
  setup:
    steps:
      - run: pip install "xxhash==3.5.0"
"""


def generate(root: Path, dockerfiles: int, workflows: int) -> list[str]:
    files: dict[str, str] = {}
    for n in range(dockerfiles):
        name = f"docker/Dockerfile.rocm{n}" if n < 2 else f"docker/Dockerfile.cuda{n}"
        pins = " \\\n".join(f'    "{p}=={1 + n % 2}.0"' for p in PACKAGES[:20])
        files[name] = DOCKERFILE.format(n=n, drift=1 + (n == 1), pins=pins, ref="a" * (1 + n % 2))
        files[f"docker/requirements-{n}.txt"] = "\n".join(
            [f"{p}>=1.0" for p in PACKAGES[20:]] + ["polars", "zstandard"]
        ) + "\n"
    for n in range(workflows):
        kind = "rocm" if n < workflows // 4 else "cuda"
        pins = " ".join(f'"{p}==1.0"' for p in PACKAGES[:10])
        numba = '"numba==0.65.1"' if n % 5 else ""
        files[f".github/workflows/ci-{kind}-{n}.yml"] = WORKFLOW.format(
            n=n, pins=pins, numba=numba, kind=kind,
        )
    files[".github/workflows/_shared-rocm.yml"] = SHARED
    files[".github/workflows/_shared-cuda.yml"] = SHARED
    for path, text in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text, encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b",
           "GIT_CONFIG_GLOBAL": os.devnull}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)
    return sorted(files)


def best(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _shell(script: str) -> None:
    if "pip" in script:
        bashlex.parse(script)


def floor(root: Path, paths: list[str]) -> None:
    """Each file read and parsed once by its parser, and each script naming pip by bashlex."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path in paths:
        text = (root / path).read_text(encoding="utf-8")
        if path.endswith(".yml"):
            data = yaml.load(text, Loader=loader)  # a safe loader
            for job in (data.get("jobs") or {}).values():
                for step in job.get("steps") or []:
                    _shell(step.get("run") or "")
        elif path.endswith(".txt"):
            for line in text.splitlines():
                if line.strip():
                    Requirement(line)
        else:
            parser = DockerfileParser(fileobj=io.BytesIO(text.encode()))
            for instruction in parser.structure:
                if instruction["instruction"] == "RUN":
                    _shell(instruction["value"])


def run_pins(root: Path) -> dict[str, int]:
    with GitRepository(root) as repo:
        outcome = analyze_pins(Snapshot(repo.tree("HEAD"), defaults()), None)
    return {
        "findings": len(outcome.findings),
        "tables": len(outcome.tables),
        "matrix_rows": sum(len(t.rows) for t in outcome.tables),
        "environment_files": len(outcome.environment),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dockerfiles", type=int, default=10)
    parser.add_argument("--workflows", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-pins-") as tmp:
        root = Path(tmp) / "repo"
        paths = generate(root, args.dockerfiles, args.workflows)
        counts = run_pins(root)  # warm the page cache and git's object store
        floor_s = best(lambda: floor(root, paths), args.rounds)
        pins_s = best(lambda: run_pins(root), args.rounds)
    result = {
        "dockerfiles": args.dockerfiles,
        "workflows": args.workflows + 2,
        "files": len(paths),
        **counts,
        "floor_parse_s": floor_s,
        "pins_s": pins_s,
        "pins_over_floor": pins_s / floor_s,
    }
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "pins.json").write_text(json.dumps(result, indent=2) + "\n")
    rows = [
        ("files (Dockerfiles, workflows, requirements)", f"{len(paths)}"),
        ("findings / matrices / matrix rows",
         f"{counts['findings']} / {counts['tables']} / {counts['matrix_rows']}"),
        ("floor: read + parse (YAML, Dockerfile, bashlex, PEP 508)", f"{floor_s * 1000:.0f} ms"),
        ("analyze_pins (git tree, audit)", f"{pins_s * 1000:.0f} ms"),
        ("pins / floor", f"{pins_s / floor_s:.2f}x"),
    ]
    width = max(len(r[0]) for r in rows)
    sys.stdout.write("\n".join(f"{k.ljust(width)}  {v}" for k, v in rows) + "\n")


if __name__ == "__main__":
    main()
