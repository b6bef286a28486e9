"""Write the HTML pages that `make.sh` screenshots: the sticky summary comment of the demo's PR,
of the replica of the PR rocmbot was born from (`tests/formats/seed_pr.py`) and of a generated
40-test environment PR, and that PR's check run, rendered by cmark-gfm
(GitHub's renderer) and styled with GitHub's markdown CSS (given as a path).

Run: `.venv/bin/python docs/screenshots/render.py CSS OUT_DIR` (make.sh does it).
"""

from __future__ import annotations

import html
import sys
import tempfile
from pathlib import Path

import cmarkgfm  # type: ignore[import-untyped]

from bot.analysis.engine import analyze
from bot.analysis.report import Report
from bot.analysis.tree import GitRepository
from bot.cli.demo import build_example
from bot.github.publish import CHECK_NAME, SummaryState, check_output, conclusion, summary_body
from tests.formats import big_pr, seed_pr

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>{css}</style>
<style>
body {{ margin: 0; padding: 16px; background: #fff; width: 860px; }}
.frame {{ border: 1px solid #d0d7de; border-radius: 6px; }}
.head {{ background: #f6f8fa; border-bottom: 1px solid #d0d7de; padding: 8px 16px;
  font: 14px -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; color: #57606a; }}
.head b {{ color: #1f2328; }}
.markdown-body {{ padding: 16px; font-size: 14px; }}
</style></head>
<body><div class="frame"><div class="head">{head}</div>
<article class="markdown-body">{body}</article></div></body></html>
"""


def _report(root: Path, base: str, head: str) -> Report:
    with GitRepository(root) as repo:
        return analyze(repo.tree(base), repo.tree(head))


def page(title: str, head: str, markdown: str, css: str) -> str:
    # GitHub's sanitizer keeps <details>/<summary>/<br>; the report escapes all PR text.
    unsafe = cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE
    body = cmarkgfm.github_flavored_markdown_to_html(markdown, options=unsafe)
    return PAGE.format(title=html.escape(title), css=css, head=head, body=body)


def main(css_path: str, out_dir: str) -> None:
    css = Path(css_path).read_text(encoding="utf-8")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rocmbot-shots-") as tmp:
        demo = _report(Path(tmp) / "demo", *build_example(Path(tmp) / "demo"))
        big = _report(Path(tmp) / "big", *big_pr.build(Path(tmp) / "big"))
        seed = _report(Path(tmp) / "seed", *seed_pr.build(Path(tmp) / "seed"))
    for name, report in (("summary-demo", demo), ("summary-seed-pr", seed),
                         ("summary-environment-pr", big)):
        body, _ = summary_body(report, SummaryState(), [])
        head = "<b>rocmbot</b> <span>bot</span> commented"
        (out / f"{name}.html").write_text(page(name, head, body, css), encoding="utf-8")
    result = check_output(big)
    head = (f"<b>{html.escape(CHECK_NAME)}</b> · {conclusion(big)} · "
            f"{html.escape(result['title'])}")
    # as a maintainer sees it after a click on its first collapsed section
    shown = page("check run", head, result["summary"], css).replace("<details>", "<details open>", 1)
    (out / "check-run-environment-pr.html").write_text(shown, encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:3])
