"""GitHub requests per analysed PR, against a naive per-file REST reader, and delivery-to-comment
latency, measured against the GitHub simulator over loopback in the same run.

For N = 1, 10, 50 and 100 changed test files in a repository of 200 registered tests, one
`pull_request` delivery goes through the running service (uvicorn, SQLite, in-process worker,
PyGithub with App credentials). Reads are every GET and GraphQL request the simulator answered
for the delivery (the installation token aside); writes are counted apart. The naive reader is
what a bot without batching does for the same PR: the PR, its files, then every changed file at
base and head and every test file at head through the contents API, one request each. The
end-to-end latency (delivery sent to summary comment posted: ingest, store, worker, reads,
analysis, writes) is set against the time the naive reader takes just to read the same PR.

Run: `.venv/bin/python -m bench.github_reads`. Writes `bench/results/github_reads.json`.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from github import Auth, Github

from bot.cli.example import HARNESS, MODEL, TEST_TEMPLATE
from tests.e2e.conftest import World, make_world

TOTAL_TESTS = 200


def _files() -> dict[str, str]:
    files = {
        "tests/__init__.py": "",
        "tests/e2e/__init__.py": "",
        "tests/e2e/megatron/__init__.py": "",
        "tests/e2e/megatron/_common.py": HARNESS,
        "scripts/models/qwen3.5-35B-A3B.py": MODEL,
        ".github/workflows/pr-test.yml": "on: [pull_request]\njobs: {t: {runs-on: x, steps: [{run: "
        "'run --suite stage-c-4-gpu-mi350 --suite stage-c-8-gpu-h200'}]}}\n",
    }
    for n in range(TOTAL_TESTS):
        files[f"tests/e2e/megatron/test_case_{n:03d}.py"] = TEST_TEMPLATE.format(disabled="", ep=2)
    return files


def _reads(world: World) -> list[Any]:
    return [c for c in world.sim.state.calls
            if not c.is_write and "access_tokens" not in c.path]


def naive_reads(world: World, number: int) -> int:
    """Requests a per-file REST reader makes for the same PR (counted by the simulator)."""
    state = world.sim.state
    state.reset_calls()
    token = state.issue_token(next(iter(state.installations.values()))).token
    gh = Github(auth=Auth.Token(token), base_url=world.sim.url, per_page=100, retry=None,
                seconds_between_requests=0, seconds_between_writes=0)  # no pacing: a fair baseline
    repo = gh.get_repo("octo/miles")
    pull = repo.get_pull(number)
    changed = [f.filename for f in pull.get_files()]
    for path in changed:
        for ref in (pull.base.sha, pull.head.sha):
            with contextlib.suppress(Exception):  # absent on one side
                repo.get_contents(path, ref=ref)
    for element in repo.get_git_tree(pull.head.sha, recursive=True).tree:
        if element.path.startswith("tests/") and element.path.endswith(".py"):
            repo.get_contents(element.path, ref=pull.head.sha)
    return len(_reads(world))


def measure(tmp: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for changed in (1, 10, 50, 100):
        (tmp / f"n{changed}").mkdir()
        worlds: Iterator[World] = make_world(tmp / f"n{changed}", _files())
        world = next(worlds)
        try:
            files: dict[str, str | None] = {
                f"tests/e2e/megatron/test_case_{n:03d}.py": TEST_TEMPLATE.format(disabled="", ep=4)
                for n in range(changed)
            }
            pr = world.open_pr(files)
            world.sim.state.reset_calls()
            start = time.perf_counter()
            world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
            while not world.bot_comments(pr):
                if time.perf_counter() - start > 300:
                    raise RuntimeError("no comment")
                time.sleep(0.005)
            latency = time.perf_counter() - start
            world.settle()
            reads = _reads(world)
            writes = len(world.sim.state.writes)
            started = time.perf_counter()
            naive = naive_reads(world, pr.number)
            naive_s = time.perf_counter() - started
            out[str(changed)] = {
                "reads": len(reads),
                "graphql": sum(1 for c in reads if c.path == "/graphql"),
                "writes": writes,
                "naive_reads": naive,
                "reads_over_naive": len(reads) / naive,
                "delivery_to_comment_s": latency,
                "naive_read_s": naive_s,
                "latency_over_naive_read": latency / naive_s,
            }
        finally:
            for _ in worlds:
                pass
    return out


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-") as tmp:
        results = measure(Path(tmp))
    target = Path(__file__).parent / "results"
    target.mkdir(exist_ok=True)
    (target / "github_reads.json").write_text(json.dumps(results, indent=2) + "\n")
    rows = [f"{'changed tests':>13} {'reads':>6} {'graphql':>8} {'naive reads':>12} {'ratio':>7} "
            f"{'writes':>7} {'delivery->comment':>18} {'naive read':>11} {'ratio':>7}"]
    for n, r in results.items():
        latency = r["delivery_to_comment_s"] * 1000
        rows.append(f"{n:>13} {r['reads']:>6} {r['graphql']:>8} {r['naive_reads']:>12} "
                    f"{r['reads_over_naive']:>6.3f}x {r['writes']:>7} {latency:>15.0f} ms "
                    f"{r['naive_read_s'] * 1000:>8.0f} ms {r['latency_over_naive_read']:>6.2f}x")
    sys.stdout.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
