"""Selections against the repository's own CI, commit by commit, on a real repository.

    python -m bench.selection_truth --repo GIT_DIR --kind sglang|miles [--commits 30]

For each of the newest first-parent commits, analyses it against its parent and prints one row:
the changed files, what rocmbot says the PR affects, what it says the repository's own CI runs on
AMD (``repo-ci``: sure / undecided), what it dispatches, and the **truth**: the AMD tests the
repository's own CI runs for that PR, derived here by hand from its workflows, independently of
rocmbot's model of them:

- ``sglang``: `pr-test-amd-rocm720.yml` (the per-PR AMD gate) runs when a changed path is under
  its `on.pull_request.paths`; its `check-changes` filters decide the stages (stage-a/b/c on
  `main_package` or `sgl_kernel`, the jit-kernel suites on `jit_kernel`, `sgl-kernel-unit-test-2-gpu-amd`
  on `sgl_kernel`); the `extra-` suites need the `run-ci-extra` label (none here). The filters are
  written out below as plain path tests, read off the workflow at the time of writing.
- ``miles``: `tests/ci/stage_selection.py`: a PR whose changed paths are all docs (`docs/`, `.md`)
  runs no GPU stage; one that changes only registered test files runs their stages; anything
  else runs every stage; the ROCm stage `stage-c-4-gpu-mi350` runs its enabled tests that carry
  no label (labelled ones need a PR label; none here).

Misses (truth - repo-ci) and extras (repo-ci - truth) are listed per row.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable

from bot.analysis.engine import analyze
from bot.analysis.report import Report
from bot.analysis.tree import GitRepository

_WORKFLOW = ".github/workflows/pr-test-amd-rocm720.yml"
_TRIGGER = ("python/", "scripts/ci/", "test/", "python/sglang/kernels/aot/")
_MAIN_STAGES = (
    "stage-a-test-1-gpu-small-amd", "stage-b-test-1-gpu-small-amd",
    "stage-b-test-1-gpu-small-amd-nondeterministic", "stage-b-test-1-gpu-small-amd-mi35x",
    "stage-b-test-1-gpu-large-amd", "stage-b-test-2-gpu-large-amd", "stage-c-test-4-gpu-amd",
    "stage-c-test-large-8-gpu-amd", "stage-c-test-large-8-gpu-amd-mi35x",
    "stage-b-test-large-8-gpu-mi35x-disaggregation-amd", "nightly-amd-8-gpu-mi35x-deepseek-v4-flash",
)
_JIT_STAGES = ("jit-kernel-unit-test-amd", "jit-kernel-benchmark-test-amd")
_KERNEL_STAGES = ("sgl-kernel-unit-test-2-gpu-amd",)


def _segments(path: str, prefix: str) -> list[str]:
    return path[len(prefix):].split("/") if path.startswith(prefix) else []


def _main_package(p: str) -> bool:
    md = p.endswith(".md")
    rest = _segments(p, "python/sglang/")
    kernels = _segments(p, "python/sglang/kernels/")
    return (
        (len(rest) >= 2 and rest[0] not in ("multimodal_gen", "kernels") and not md)
        or (len(kernels) == 1 and not md)
        or (len(kernels) >= 2 and kernels[0] != "aot" and not md)
        or p in ("python/pyproject_rocm.toml", "python/pyproject_other.toml", _WORKFLOW)
        or len(_segments(p, "scripts/ci/amd/")) == 1
        or len(_segments(p, "scripts/ci/utils/")) == 1
        or (p.startswith("test/") and not md)
    )


def _sgl_kernel(p: str) -> bool:
    aot = _segments(p, "python/sglang/kernels/aot/")
    name = p.rsplit("/", 1)[-1]
    return (len(aot) >= 1 and not (name.endswith(".md") or name in ("THIRDPARTYNOTICES.txt", "LICENSE"))) \
        or p == _WORKFLOW


def _jit_kernel(p: str) -> bool:
    kernels = _segments(p, "python/sglang/kernels/")
    return (len(kernels) == 1 and not p.endswith(".md")) or (len(kernels) >= 2 and kernels[0] != "aot") \
        or p.startswith("test/registered/kernels/") or p == _WORKFLOW


def sglang_suites(changed: list[str]) -> set[str]:
    """The AMD suites SGLang's per-PR gate runs for these changed paths (no extra label)."""
    if not any(p.startswith(_TRIGGER) or p in (_WORKFLOW, "docker/rocm.Dockerfile") for p in changed):
        return set()
    out: set[str] = set()
    if any(_main_package(p) or _sgl_kernel(p) for p in changed):
        out.update(_MAIN_STAGES)
    if any(_jit_kernel(p) for p in changed):
        out.update(_JIT_STAGES)
    if any(_sgl_kernel(p) for p in changed):
        out.update(_KERNEL_STAGES)
    return out


def _miles_docs(p: str) -> bool:
    return p in (".pre-commit-config.yaml", "scripts/tools/sync_example_docs.py") or \
        p.startswith("docs/") or p.endswith((".md", ".mdx"))


def truth(kind: str, report: Report, changed: list[str], labelled: set[str]) -> set[tuple[str, str]]:
    """The enabled AMD tests the repository's own CI runs for the change."""
    rocm = [t for t in report.tests if t.backend == "rocm" and t.disabled is None and t.suite
            and t.change != "removed"]
    if kind == "sglang":
        suites = sglang_suites(changed)
        return {(t.path, t.suite or "") for t in rocm if t.suite in suites}
    registered = {t.path for t in report.tests}
    mi350 = [t for t in rocm if t.suite == "stage-c-4-gpu-mi350"]
    if all(_miles_docs(p) for p in changed):
        return set()
    if all(p in registered or _miles_docs(p) for p in changed):
        return {(t.path, t.suite or "") for t in mi350 if t.path in changed}
    return {(t.path, t.suite or "") for t in mi350 if t.path not in labelled}


def _first_parents(git_dir: str, n: int) -> list[str]:
    out = subprocess.run(["git", "--git-dir", git_dir, "rev-list", "--first-parent", f"-{n}", "HEAD"],
                         capture_output=True, text=True, check=True).stdout.split()
    return out


def _changed(git_dir: str, base: str, head: str) -> list[str]:
    return subprocess.run(["git", "--git-dir", git_dir, "diff", "--name-only", base, head],
                          capture_output=True, text=True, check=True).stdout.split()


def _labelled(git_dir: str, rev: str) -> set[str]:
    """miles' ROCm tests whose marker names labels (`labels=[...]`), by a plain search."""
    found = subprocess.run(["git", "--git-dir", git_dir, "grep", "-l", "-E",
                            r"register_rocm_ci\([^)]*labels=\[[^]]", rev, "--", "tests"],
                           capture_output=True, text=True, check=False).stdout.split()
    return {line.split(":", 1)[1] for line in found}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", required=True, help="a git directory")
    parser.add_argument("--kind", choices=("sglang", "miles"), required=True)
    parser.add_argument("--commits", type=int, default=30)
    args = parser.parse_args(argv)
    write: Callable[[str], object] = sys.stdout.write
    write("| commit | files | affected | repo-ci sure/undecided | dispatched | truth | misses | extras |\n")
    write("|---|---|---|---|---|---|---|---|\n")
    totals = [0, 0, 0]
    with GitRepository(args.repo) as repo:
        for head in _first_parents(args.repo, args.commits):
            base = f"{head}^"
            changed = _changed(args.repo, base, head)
            report = analyze(repo.tree(base), repo.tree(head))
            sure = {k for k, (runs, _) in report.ci_runs.items() if runs is True}
            maybe = {k for k, (runs, _) in report.ci_runs.items() if runs is None}
            expected = truth(args.kind, report, changed, _labelled(args.repo, head))
            affected = {(s.path, s.suite) for s in report.selected} | {
                (k.path, k.suite) for k in report.skipped}
            misses = expected - sure - maybe
            extras = (sure | maybe) - expected if args.kind == "sglang" else sure - expected
            totals[0] += len(expected)
            totals[1] += len(misses)
            totals[2] += len(extras)
            shown = ", ".join(sorted(p.rsplit("/", 1)[-1] for p, _ in misses)[:3])
            more = ", ".join(sorted(p.rsplit("/", 1)[-1] for p, _ in extras)[:3])
            write(f"| {head[:10]} | {len(changed)} | {len(affected)} | {len(sure)}/{len(maybe)} | "
                  f"{len(report.selected)} | {len(expected)} | {len(misses)} {shown} | "
                  f"{len(extras)} {more} |\n")
    write(f"\ntruth {totals[0]} test-runs, misses {totals[1]}, extras {totals[2]}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
