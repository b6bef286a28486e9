"""Audit speed against the parse floor, and the CLI's import cost.

Generates a git repository shaped like the target ones (1,000 test files over 20 harness
modules, model scripts, a ROCm Dockerfile and workflows), then times, in the same run:

- the floor: reading the same Python files from disk and `ast.parse`-ing each once;
- `audit` of the committed revision through the git tree (fresh caches every round), in
  one process and over the processes `rocmbot audit` uses by default (one per CPU), and in
  one process with launch resolution off (markers, imports and pins only);
- `python -c "import bot.cli"` against `python -c "pass"`, and which heavy modules
  `rocmbot analyze` imports (none is the target).

Run: `.venv/bin/python -m bench.audit [--tests N] [--rounds R]`. Prints a table; writes JSON to
`bench/results/audit.json`.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bot.analysis.engine import audit
from bot.analysis.parallel import default_jobs
from bot.analysis.tree import GitRepository
from bot.example import DOCKERFILE, HARNESS, MODEL, WORKFLOW
from config.repo import LoadedConfig, parse_config

TEST = '''\
"""Generated end-to-end test {n}."""

import os

from tests.e2e.group{g}._common import CaseConfig, execute, prepare

register_cuda_ci({est}, "stage-c-8-gpu-h200")
register_rocm_ci({est}, "stage-c-4-gpu-mi350"{disabled})

CASE = CaseConfig(
    num_gpus_per_node=4,
    tp_size={tp},
    pp_size={pp},
    cp_size=1,
    ep_size={ep},
    rollout_num_gpus_per_engine=4,
    sglang_ep_size=4,
    extra_args="--global-batch-size 64 --micro-batch-size 1 ",
)


EXPECTED_METRICS = {{
    "train/loss": (0.0, 12.0),
    "train/grad_norm": (0.0, 50.0),
    "rollout/response_len/mean": (16.0, 4096.0),
    "rollout/reward/mean": (-1.0, 1.0),
    "perf/tokens_per_gpu_per_sec": (10.0, 1.0e6),
}}


def _read_metrics(path: str) -> dict[str, float]:
    """Parse the last line of each metric from the job's log."""
    metrics: dict[str, float] = {{}}
    if not os.path.exists(path):
        return metrics
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if "=" not in line:
                continue
            key, _, value = line.strip().partition("=")
            try:
                metrics[key] = float(value)
            except ValueError:
                continue
    return metrics


def _check_metrics(metrics: dict[str, float]) -> list[str]:
    problems = []
    for key, (low, high) in EXPECTED_METRICS.items():
        if key not in metrics:
            problems.append(f"missing metric {{key}}")
        elif not low <= metrics[key] <= high:
            problems.append(f"{{key}}={{metrics[key]}} outside [{{low}}, {{high}}]")
    return problems


def _cleanup(paths: list[str]) -> None:
    for path in paths:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def test_case() -> None:
    if os.environ.get("CI_SKIP"):
        return
    prepare(CASE)
    try:
        execute(CASE)
    finally:
        _cleanup(["/tmp/ckpt/latest", "/tmp/rollout.jsonl"])
    problems = _check_metrics(_read_metrics("/tmp/metrics.log"))
    assert not problems, "; ".join(problems)


if __name__ == "__main__":
    test_case()
'''

CUDA_WORKFLOW = "on: [pull_request]\njobs:\n  t:\n    steps:\n      - run: run --suite stage-c-8-gpu-h200\n"


def generate(root: Path, tests: int, groups: int = 20) -> list[str]:
    """Write and commit the repository; return the Python files the audit parses."""
    files: dict[str, str] = {
        "tests/__init__.py": "",
        "tests/e2e/__init__.py": "",
        "scripts/models/qwen3.5-35B-A3B.py": MODEL,
        "docker/Dockerfile.rocm": DOCKERFILE,
        ".github/workflows/_run-ci-rocm.yml": WORKFLOW,
        ".github/workflows/pr-test.yml": CUDA_WORKFLOW,
    }
    for g in range(groups):
        files[f"tests/e2e/group{g}/__init__.py"] = ""
        files[f"tests/e2e/group{g}/_common.py"] = HARNESS
    for n in range(tests):
        disabled = ', disabled="FIXME: flaky"' if n % 10 == 0 else ""
        files[f"tests/e2e/group{n % groups}/test_case_{n:04d}.py"] = TEST.format(
            n=n, g=n % groups, est=600 + n, disabled=disabled,
            tp=(1, 2)[n % 2], pp=(1, 2)[n % 3 == 0], ep=(1, 2, 4)[n % 3],
        )
    for path, text in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b", "GIT_CONFIG_GLOBAL": os.devnull}
    # packed, as a clone leaves a repository (a fresh commit's loose objects cost a file and
    # an inflate each to list with their sizes, eight times what a pack does)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "bench"],
                 ["repack", "-adq"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)
    return sorted(p for p in files if p.endswith(".py") and p.startswith("tests/"))


def best(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def floor(root: Path, paths: list[str]) -> None:
    for p in paths:
        ast.parse((root / p).read_text(encoding="utf-8"), filename=p)


def run_audit(root: Path, jobs: int = 1, loaded: LoadedConfig | None = None) -> int:
    with GitRepository(root) as repo:
        report = audit(repo.tree("HEAD"), jobs=jobs, loaded=loaded)
    return len(report.tests)


MARKERS_ONLY = parse_config("launch: {enabled: false}\n", ".github/rocmbot.yml")


def import_cost(rounds: int) -> dict[str, float | list[str]]:
    def run(code: str) -> float:
        return best(lambda: subprocess.run([sys.executable, "-c", code], check=True), rounds)

    bare = run("pass")
    cli = run("import bot.cli")
    analysis = run("import bot.cli, bot.analysis.engine, bot.formats")
    probe = subprocess.run(
        [sys.executable, "-c",
         "import sys; from bot.cli import main; import io, contextlib\n"
         "with contextlib.redirect_stdout(io.StringIO()): main(['demo', '--format', 'json'])\n"
         "print(sorted({'fastapi','uvicorn','sqlalchemy','github','starlette','httpx'} & set(sys.modules)))"],
        capture_output=True, text=True, check=True,
    )
    return {
        "python_startup_s": bare,
        "import_cli_s": cli,
        "import_analysis_s": analysis,
        "analysis_import_over_startup": analysis / bare,
        "web_modules_imported_by_analyze": json.loads(probe.stdout.strip().replace("'", '"')),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-") as tmp:
        root = Path(tmp) / "repo"
        paths = generate(root, args.tests)
        markers = run_audit(root)  # warm the page cache and git's object store
        floor_s = best(lambda: floor(root, paths), args.rounds)
        audit_s = best(lambda: run_audit(root), args.rounds)
        jobs = default_jobs()
        parallel_s = best(lambda: run_audit(root, jobs), args.rounds)
        markers_s = best(lambda: run_audit(root, 1, MARKERS_ONLY), args.rounds)
    imports = import_cost(args.rounds)
    startup, analysis = imports["python_startup_s"], imports["import_analysis_s"]
    assert isinstance(startup, float) and isinstance(analysis, float)
    result = {
        "test_files": args.tests,
        "python_files_parsed": len(paths),
        "markers": markers,
        "floor_parse_s": floor_s,
        "audit_s": audit_s,
        "audit_over_floor": audit_s / floor_s,
        "jobs": jobs,
        "audit_markers_only_s": markers_s,
        "audit_markers_only_over_floor": markers_s / floor_s,
        "audit_parallel_s": parallel_s,
        "audit_parallel_over_floor": parallel_s / floor_s,
        **imports,
    }
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "audit.json").write_text(json.dumps(result, indent=2) + "\n")
    rows = [
        ("python files parsed", f"{len(paths)}"),
        ("markers", f"{markers}"),
        ("floor: read + ast.parse", f"{floor_s * 1000:.0f} ms"),
        ("rocmbot audit (git tree), 1 process", f"{audit_s * 1000:.0f} ms"),
        ("audit / floor, 1 process", f"{audit_s / floor_s:.2f}x (target <= 1.5)"),
        (f"rocmbot audit, {jobs} processes", f"{parallel_s * 1000:.0f} ms"),
        (f"audit / floor, {jobs} processes", f"{parallel_s / floor_s:.2f}x (target <= 1.5)"),
        ("audit / floor, markers only, 1 process", f"{markers_s / floor_s:.2f}x"),
        ("import analysis / python startup",
         f"{analysis / startup:.2f}x ({analysis * 1000:.0f} ms vs {startup * 1000:.0f} ms)"),
        ("web modules imported by analyze", f"{imports['web_modules_imported_by_analyze']}"),
    ]
    width = max(len(r[0]) for r in rows)
    sys.stdout.write("\n".join(f"{k.ljust(width)}  {v}" for k, v in rows) + "\n")


if __name__ == "__main__":
    main()
