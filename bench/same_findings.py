"""Prove that an optimisation changed no finding: the same command's JSON at two revisions
of rocmbot, on a real repository.

The earlier revision of rocmbot is exported (`git archive`) to a temporary folder and run
from there by this virtualenv's interpreter; the later one is a revision too or, by default,
this work tree. Both run `rocmbot audit --format json` (or `analyze` with `--analyze
BASE..HEAD`) on the same repository and revision, and the two reports are compared whole.

Run: `.venv/bin/python -m bench.same_findings --repo GIT_DIR [--rev REV] --before ROCMBOT_REV
[--after ROCMBOT_REV] [--analyze BASE..HEAD] [-j N] [--after-jobs N]` (``--after-jobs``: the
later revision's audit over that many processes, to prove a split audit reports what one
process does). Exits 0 when the reports are
identical, 1 (printing the first differences) when they are not.
"""

from __future__ import annotations

import argparse
import difflib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

# Run the CLI from the folder given first, not from the editable install of this work tree.
_RUN = (
    "import runpy, sys; root = sys.argv.pop(1); sys.path.insert(0, root); "
    "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in type(f).__module__]; "
    "sys.argv[0] = 'rocmbot'; runpy.run_module('bot.cli', run_name='__main__')"
)


def export(rev: str, into: Path) -> Path:
    """The files of rocmbot at REV, in a folder of their own."""
    into.mkdir()
    archive = subprocess.run(["git", "-C", str(HERE), "archive", rev, "bot", "config"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def report(root: Path, args: list[str]) -> str:
    """The JSON the CLI prints from ROOT, normalised (keys sorted, indented)."""
    done = subprocess.run([sys.executable, "-c", _RUN, str(root), *args],
                          check=False, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"rocmbot from {root} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.dumps(json.loads(done.stdout), indent=1, sort_keys=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, help="the analysed repository (a git directory)")
    parser.add_argument("--rev", default="HEAD", help="its revision to audit (default HEAD)")
    parser.add_argument("--analyze", metavar="BASE..HEAD", help="compare `analyze` of this change instead")
    parser.add_argument("--before", required=True, help="the rocmbot revision to compare against")
    parser.add_argument("--after", help="the rocmbot revision to check (default: this work tree)")
    parser.add_argument("-j", "--jobs", default="1", help="processes of the audit (default 1)")
    parser.add_argument("--after-jobs", help="processes of the later revision's audit (default: -j)")
    ns = parser.parse_args()
    if ns.analyze:
        base, _, head = ns.analyze.partition("..")
        args = ["analyze", "--repo", ns.repo, "--base", base, "--head", head or "HEAD", "--format", "json"]
        after_args = args
    else:
        args = ["audit", "--repo", ns.repo, "--rev", ns.rev, "-j", ns.jobs, "--format", "json"]
        after_args = [*args[:-3], ns.after_jobs or ns.jobs, *args[-2:]]
    with tempfile.TemporaryDirectory(prefix="rocmbot-before-") as tmp:
        before = report(export(ns.before, Path(tmp, "before")), args)
        after = report(export(ns.after, Path(tmp, "after")) if ns.after else HERE, after_args)
    if before == after:
        print(f"identical: {len(json.loads(after).get('findings', []))} findings, {len(after)} bytes of JSON")
        return
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), "before", "after", lineterm=""))
    print("\n".join(diff[:200]))
    raise SystemExit(1)


if __name__ == "__main__":
    main()
