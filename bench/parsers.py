"""How the parsers' time grows on hostile files, as ratios measured in one run.

For every pathological input of `tests/security/test_parser_fuzz.py` (CORPORA): the time to
parse it at a quarter of its size and at full size (a linear parser takes about 4x as long, a
quadratic one 16x), and the full-size time against a benign file of the same size (a heavy
constant shows there). Each time is the best of `--rounds` runs. A case whose growth is over
8x, or which takes over 8x the benign file, is flagged, unless it stays under a second
(growth) or two (ratio): below that, timer noise decides.

Run: `.venv/bin/python -m bench.parsers [--rounds R] [--corpus NAME]`. Prints a table; writes
JSON to `bench/results/parsers.json`; exits 1 if a case is flagged.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.security.test_parser_fuzz import CORPORA

GROWTH = 8.0
RATIO = 8.0
FLOOR = 1.0
RATIO_FLOOR = 2.0


def _best(parse: Callable[[str], object], text: str, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        parse(text)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--corpus", choices=sorted(CORPORA), action="append")
    args = parser.parse_args(argv)
    rows: list[dict[str, object]] = []
    flagged = 0
    print(f"{'corpus':<13}{'case':<28}{'quarter s':>10}{'full s':>9}{'growth':>8}{'vs benign':>11}")
    for corpus in args.corpus or sorted(CORPORA):
        parse, size, benign, cases = CORPORA[corpus]
        baseline = _best(parse, benign(size), args.rounds)
        for name, build in cases.items():
            quarter = _best(parse, build(size // 4), args.rounds)
            full = _best(parse, build(size), args.rounds)
            growth = full / quarter if quarter else float("inf")
            ratio = full / baseline if baseline else float("inf")
            bad = (full > max(GROWTH * quarter, FLOOR)) or (full > max(RATIO * baseline, RATIO_FLOOR))
            flagged += bad
            rows.append({"corpus": corpus, "case": name, "bytes": size, "quarter_s": quarter, "full_s": full,
                         "benign_s": baseline, "growth": growth, "ratio": ratio, "flagged": bad})
            print(f"{corpus:<13}{name[:27]:<28}{quarter:>10.3f}{full:>9.3f}{growth:>7.1f}x{ratio:>10.1f}x"
                  + ("  FLAGGED" if bad else ""))
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "parsers.json").write_text(json.dumps({"rounds": args.rounds, "cases": rows}, indent=2) + "\n")
    print(f"{len(rows)} cases, {flagged} flagged")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
