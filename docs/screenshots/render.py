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
from bot.analysis.unpark import removal
from bot.cli.demo import _commit, _git, build_example
from bot.cli.example import BASE_FILES, TEST_TEMPLATE
from bot.formats.markdown import Run, ready_line
from bot.github.publish import CHECK_NAME, SummaryState, check_output, conclusion, summary_body, with_runs
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
    parked_pages(out, css)
    result = check_output(big)
    head = (f"<b>{html.escape(CHECK_NAME)}</b> · {conclusion(big)} · "
            f"{html.escape(result['title'])}")
    # as a maintainer sees it after a click on its first collapsed section
    shown = page("check run", head, result["summary"], css).replace("<details>", "<details open>", 1)
    (out / "check-run-environment-pr.html").write_text(shown, encoding="utf-8")


def parked_pages(out: Path, css: str) -> None:
    """A parked test's way back: the summary of a PR that fixes its grid (`disabled=` kept),
    once its `/run-amd disabled` run passed, and the review comment whose suggestion removes
    `disabled=` (drawn as GitHub draws a suggestion)."""
    test = "tests/e2e/megatron/test_qwen35_moe.py"
    parked = ', disabled="FIXME: re-enable once this case passes on the MI350 runners."'
    with tempfile.TemporaryDirectory(prefix="rocmbot-shots-") as tmp:
        root = Path(tmp) / "parked"
        root.mkdir()
        _git(root, "init", "-q", "-b", "main")
        base = _commit(root, {**BASE_FILES, test: TEST_TEMPLATE.format(disabled=parked, ep=4)}, "Base")
        touched = TEST_TEMPLATE.format(disabled=parked, ep=2).replace("register_rocm_ci(1600,",
                                                                      "register_rocm_ci(1800,")
        head = _commit(root, {test: touched}, "Fit the parked MoE test's expert grid to its runner")
        report = _report(root, base, head)
    body, _ = summary_body(report, SummaryState(), [])
    url = "https://github.com/example/miles/actions/runs/170000019"
    run = Run("stage-c-4-gpu-mi350", (test,), "success", url, ready=(test,), head=head)
    body = with_runs(body, [run])
    said = "<b>rocmbot</b> <span>bot</span> commented"
    (out / "summary-parked-ready.html").write_text(page("parked test, ready", said, body, css),
                                                   encoding="utf-8")
    line = next(n for n, text in enumerate(touched.splitlines(), 1) if "register_rocm_ci" in text)
    edit = removal(test, touched, line, None)
    assert edit is not None
    old_line = touched.splitlines()[line - 1]
    rows = "".join(
        f'<tr class="del"><td class="n">{n}</td><td>- {html.escape(text)}</td></tr>'
        for n, text in enumerate(touched.splitlines()[edit.start - 1:edit.end], edit.start))
    rows += "".join(f'<tr class="add"><td class="n">{edit.start + i}</td><td>+ {html.escape(text)}</td></tr>'
                    for i, text in enumerate(edit.lines))
    note = ready_line(test, "stage-c-4-gpu-mi350", head, url)
    review = SUGGESTION.format(path=html.escape(test), line=line, old=html.escape(old_line), rows=rows,
                               note=cmarkgfm.github_flavored_markdown_to_html(note))
    head_line = "<b>rocmbot</b> <span>bot</span> reviewed"
    (out / "review-parked-suggestion.html").write_text(
        PAGE.format(title="suggestion", css=css, head=head_line, body=review), encoding="utf-8")


SUGGESTION = """{note}
<div class="frame"><div class="head"><b>{path}</b> line {line}</div>
<pre style="margin:0;border-radius:0">{old}</pre></div>
<p>Ready to come back: this removes <code>disabled=</code>.</p>
<div class="frame"><div class="head">Suggested change</div>
<table class="sugg">{rows}</table>
</div>
<style>
.sugg {{ width: 100%; font-family: monospace; font-size: 12px; border-collapse: collapse; }}
.sugg td {{ padding: 2px 8px; white-space: pre; border: 0; }}
.sugg .n {{ color: #57606a; width: 1%; }}
.sugg .del {{ background: #ffebe9; }} .sugg .add {{ background: #e6ffec; }}
</style>
<p><button disabled style="padding:4px 12px;border-radius:6px;border:1px solid #d0d7de;background:#f6f8fa">
Commit suggestion</button></p>"""


if __name__ == "__main__":
    main(*sys.argv[1:3])
