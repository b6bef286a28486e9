"""Size of the sticky summary comment: the demo's PR; a generated PR that re-enables four
of 40 ROCm tests and changes the ROCm image and its workflow (every test touched through the
environment, most of them nightly; nine pin conflicts the base already had); and the PR
rocmbot was born from (miles `597375f315`: four tests re-enabled, EP 4 -> 2, `numba==0.65.1`
pinned in three places), from a checkout of miles given with `--miles`, else its replica
(`tests/formats/seed_pr.py`).

Prints, for each, the comment's length, the part shown before the first `<details>`, and the
check run's summary (the full report), against the budgets: 8,000 characters for such a PR,
60,000 for any.

Run: `.venv/bin/python -m bench.summary_size [--miles GIT_DIR]`. Writes
`bench/results/summary_size.json`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bot.analysis.engine import analyze
from bot.analysis.report import Report
from bot.analysis.tree import GitRepository
from bot.cli.demo import build_example
from bot.github.publish import SummaryState, check_output, summary_body
from tests.formats import big_pr, seed_pr

SEED = "597375f3158fbcd0d9d8344471524811ce7f84ab"  # miles: [AMD] Enable four CI tests on ROCm


def sizes(report: Report) -> dict[str, int]:
    body, _ = summary_body(report, SummaryState(), [])
    return {
        "comment": len(body),
        "before_details": len(body.split("<details>", 1)[0]),
        "check_run_summary": len(check_output(report)["summary"]),
        "tests_touched": sum(t.change != "unchanged" for t in report.tests),
        "findings": len(report.findings),
    }


def _report(root: Path, base: str, head: str) -> Report:
    with GitRepository(root) as repo:
        return analyze(repo.tree(base), repo.tree(head))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--miles", type=Path, help="a git directory of miles holding the seed PR")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-") as tmp:
        demo = _report(Path(tmp) / "demo", *build_example(Path(tmp) / "demo"))
        big = _report(Path(tmp) / "big", *big_pr.build(Path(tmp) / "big"))
        if args.miles is not None:
            seed, seed_name = _report(args.miles, f"{SEED}^", SEED), "seed_pr_miles"
        else:
            seed = _report(Path(tmp) / "seed", *seed_pr.build(Path(tmp) / "seed"))
            seed_name = "seed_pr_replica"
    result = {"demo": sizes(demo), "environment_pr_40_tests": sizes(big), seed_name: sizes(seed),
              "budget_such_pr": 8_000, "budget_any": 60_000}
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "summary_size.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"{'PR':<26} {'tests':>5} {'findings':>8} {'comment':>8} {'open':>6} {'check run':>9}"]
    for name in ("demo", "environment_pr_40_tests", seed_name):
        r = result[name]
        assert isinstance(r, dict)
        lines.append(f"{name:<26} {r['tests_touched']:>5} {r['findings']:>8} {r['comment']:>8} "
                     f"{r['before_details']:>6} {r['check_run_summary']:>9}")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
