"""Size of the sticky summary comment: the demo's PR, and a generated PR that re-enables four
of 40 ROCm tests and changes the ROCm image and its workflow (every test touched through the
environment, most of them nightly; nine pin conflicts the base already had).

Prints, for each, the comment's length, the part shown before the first `<details>`, and the
check run's summary (the full report), against the budgets: 8,000 characters for such a PR,
60,000 for any.

Run: `.venv/bin/python -m bench.summary_size`. Writes `bench/results/summary_size.json`.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from bot.analysis.engine import analyze
from bot.analysis.report import Report
from bot.analysis.tree import GitRepository
from bot.cli.demo import build_example
from bot.github.publish import SummaryState, check_output, summary_body
from tests.formats import big_pr


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
    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-") as tmp:
        demo = _report(Path(tmp) / "demo", *build_example(Path(tmp) / "demo"))
        big = _report(Path(tmp) / "big", *big_pr.build(Path(tmp) / "big"))
    result = {"demo": sizes(demo), "environment_pr_40_tests": sizes(big),
              "budget_such_pr": 8_000, "budget_any": 60_000}
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "summary_size.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"{'PR':<26} {'tests':>5} {'findings':>8} {'comment':>8} {'open':>6} {'check run':>9}"]
    for name in ("demo", "environment_pr_40_tests"):
        r = result[name]
        assert isinstance(r, dict)
        lines.append(f"{name:<26} {r['tests_touched']:>5} {r['findings']:>8} {r['comment']:>8} "
                     f"{r['before_details']:>6} {r['check_run_summary']:>9}")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
