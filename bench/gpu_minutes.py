"""GPU-minutes the bot dispatches for synthetic PRs, against running the whole ROCm suite
for each, in the same run, and the recall of what it dispatches.

A generated repository holds 48 ROCm tests (4-GPU and 8-GPU MI350 suites, 6 estimated at
10 to 45 minutes) over four harness modules whose launch function runs `python3 train.py`,
a small training library that `train.py` imports, a model script, a ROCm Dockerfile and its
CI workflow (its jobs run in a prebuilt image). Twenty-four PRs of the kinds seen in
practice (one test's arguments, a harness, the Dockerfile, docs, re-enabling a test, a new
test, a library module every launch runs, a README) are analysed; what `/run-amd` would
dispatch is summed against whole-suite runs for each PR. **Recall** counts, per PR, the
enabled tests the change truly reaches (known by construction: the tests of a changed
harness, every test for a library module `train.py` imports or the model script, none for
docs, a README or a Dockerfile no job builds) that are dispatched.

Run: `.venv/bin/python -m bench.gpu_minutes`. Writes `bench/results/gpu_minutes.json`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bot.analysis.engine import analyze
from bot.analysis.tree import GitRepository
from bot.cli.example import DOCKERFILE, HARNESS, MODEL, WORKFLOW

TEST = """\
from tests.e2e.group{g}._common import CaseConfig, execute, prepare

register_rocm_ci({est}, "{suite}"{disabled})

CASE = CaseConfig(num_gpus_per_node={gpus}, tp_size=2, pp_size=1, ep_size={ep})

if __name__ == "__main__":
    prepare(CASE)
    execute(CASE)
"""

GROUPS = 4
TESTS = 48


def _test(n: int, *, ep: int = 2, disabled: bool = False) -> str:
    gpus = 4 if n % 3 else 8
    suite = f"stage-c-{gpus}-gpu-mi350"
    reason = ', disabled="FIXME: flaky on MI350"' if disabled else ""
    return TEST.format(g=n % GROUPS, est=600 + 150 * (n % 15), suite=suite, disabled=reason, gpus=gpus, ep=ep)


def _git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    return subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def _write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)


# the harness's launch runs the training entry point, as miles' `execute_train` does
LAUNCHING = HARNESS.replace(
    "def execute(case: CaseConfig) -> None:\n"
    '    raise SystemExit("runs on a GPU runner: " + build_args(case))\n',
    "def execute(case: CaseConfig) -> None:\n    execute_train(build_args(case))\n\n\n"
    "def execute_train(args: str) -> None:\n"
    '    subprocess.run(["python3", "train.py", *args.split()], check=True)\n',
).replace("import os\n", "import os\nimport subprocess\n")
TRAIN = ("from trainlib.arguments import parse_args\nfrom trainlib.backend import train\n\n"
         "train(parse_args())\n")
ARGUMENTS = "def parse_args():\n    return {}\n"
BACKEND = "def train(args):\n    return args\n"


def base_files() -> dict[str, str]:
    files = {
        "tests/__init__.py": "",
        "tests/e2e/__init__.py": "",
        "README.md": "a training library\n",
        "train.py": TRAIN,
        "trainlib/__init__.py": "",
        "trainlib/arguments.py": ARGUMENTS,
        "trainlib/backend.py": BACKEND,
        "scripts/models/qwen3.5-35B-A3B.py": MODEL,
        "docker/Dockerfile.rocm": DOCKERFILE,
        ".github/workflows/_run-ci-rocm.yml": WORKFLOW.replace(
            "--suite stage-c-4-gpu-mi350 --suite stage-b-1-gpu-mi350",
            "--suite stage-c-4-gpu-mi350 --suite stage-c-8-gpu-mi350",
        ),
    }
    for g in range(GROUPS):
        files[f"tests/e2e/group{g}/__init__.py"] = ""
        files[f"tests/e2e/group{g}/_common.py"] = LAUNCHING
    for n in range(TESTS):
        files[f"tests/e2e/group{n % GROUPS}/test_case_{n:02d}.py"] = _test(n, disabled=n == 7)
    return files


def _enabled(n: int) -> bool:
    return n != 7


def _path(n: int) -> str:
    return f"tests/e2e/group{n % GROUPS}/test_case_{n:02d}.py"


def _group(g: int) -> set[str]:
    return {_path(n) for n in range(TESTS) if n % GROUPS == g and _enabled(n)}


EVERY = {_path(n) for n in range(TESTS) if _enabled(n)}


def prs() -> list[tuple[str, dict[str, str], set[str]]]:
    """The PRs: what changes, as files at the head, and the tests the change reaches."""
    out: list[tuple[str, dict[str, str], set[str]]] = []
    for n in (1, 5, 10, 22, 31, 40):
        out.append((f"arguments of test {n}", {_path(n): _test(n).replace("tp_size=2", "tp_size=1")},
                    {_path(n)}))
    out.append(("re-enable test 7", {_path(7): _test(7)}, {_path(7)}))
    for g in range(GROUPS):
        out.append((f"harness of group {g}", {f"tests/e2e/group{g}/_common.py": LAUNCHING + "\n# tuned\n"},
                    _group(g)))
    # the jobs run a prebuilt image: the change reaches them once that image is rebuilt
    pinned = DOCKERFILE.replace("polars", "polars xxhash")
    out.append(("ROCm Dockerfile pin", {"docker/Dockerfile.rocm": pinned}, set()))
    for n in range(3):
        out.append((f"docs {n}", {f"docs/page{n}.md": f"page {n}\n"}, set()))
    out.append(("README only", {"README.md": "a training library, documented\n"}, set()))
    out.append(("a new test", {"tests/e2e/group0/test_case_new.py": _test(0)},
                {"tests/e2e/group0/test_case_new.py"}))
    out.append(("two tests", {_path(n): _test(n, ep=1) for n in (2, 3)}, {_path(2), _path(3)}))
    out.append(("model script", {"scripts/models/qwen3.5-35B-A3B.py": MODEL.replace("40", "48")}, EVERY))
    out.append(("library: argument parsing", {"trainlib/arguments.py": ARGUMENTS + "# a flag\n"}, EVERY))
    out.append(("library: backend", {"trainlib/backend.py": BACKEND + "# faster\n"}, EVERY))
    out.append(("train.py", {"train.py": TRAIN + "# logged\n"}, EVERY))
    return out


def main() -> None:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        _git(root, "init", "-q", "-b", "main")
        _write(root, base_files())
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "base")
        base = _git(root, "rev-parse", "HEAD")
        with GitRepository(root) as repo:
            tree = repo.tree(base)
            from bot.analysis.engine import audit

            suite_report = audit(tree)
            whole = sum(
                (t.est_time or 0) / 60 * (t.gpus or 0)
                for t in suite_report.tests
                if t.backend == "rocm" and t.disabled is None
            )
            for name, files, reached in prs():
                _git(root, "checkout", "-q", base)
                _write(root, files)
                _git(root, "add", "-A")
                _git(root, "commit", "-q", "-m", name)
                head = _git(root, "rev-parse", "HEAD")
                report = analyze(repo.tree(base), repo.tree(head))
                picked = {s.path for s in report.selected}
                rows.append(
                    {
                        "pr": name,
                        "selected": len(report.selected),
                        "reached": len(reached),
                        "reached_selected": len(reached & picked),
                        "gpu_minutes": report.gpu_minutes(),
                        "whole_suite": whole,
                        "errors": len(report.errors),
                    }
                )
    total = sum(r["gpu_minutes"] for r in rows)
    whole_total = sum(r["whole_suite"] for r in rows)
    reached = sum(r["reached"] for r in rows)
    recall = sum(r["reached_selected"] for r in rows) / reached if reached else 1.0
    result = {
        "prs": rows,
        "dispatched_gpu_minutes": total,
        "whole_suite_gpu_minutes": whole_total,
        "ratio": total / whole_total,
        "recall": recall,
    }
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "gpu_minutes.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"{'PR':<28} {'tests':>5} {'reached':>8} {'GPU-min':>8} {'whole suite':>12}"]
    lines.extend(
        f"{r['pr']:<28} {r['selected']:>5} {r['reached_selected']:>3}/{r['reached']:<4} "
        f"{r['gpu_minutes']:>8.0f} {r['whole_suite']:>12.0f}" for r in rows
    )
    lines.append(
        f"{'total':<28} {'':>5} {'':>8} {total:>8.0f} {whole_total:>12.0f}   ratio {total / whole_total:.3f}"
        f", recall {recall:.3f}"
    )
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
