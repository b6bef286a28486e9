"""PR-controlled text (paths, disabled reasons, suite names, flag values, command text) cannot
put a mention, a link, an image, an issue reference or raw HTML into anything rocmbot posts.

Each body is rendered with cmark-gfm (GitHub's renderer) and inspected: only the tags of
rocmbot's own templates, no HTML comment but its own markers, and no text that GitHub would
turn into a notification or a link. The shape check compares the tags with those of the same
report holding harmless text, so even an allowed tag (`<br>`, `<details>`) cannot be added.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.analysis import engine  # noqa: F401  (it catalogues the rules the reports below name)
from bot.analysis.findings import Severity, finding
from bot.analysis.report import Report, Selected, Table, TestEntry
from bot.formats import markdown
from bot.formats.escape import cell, code, code_block, inline, prose
from bot.github.publish import SummaryState, check_output, inline_comments, summary_body, with_runs
from bot.rocm import payloads
from bot.rocm.commands import parse
from bot.rocm.payloads import Result, describe
from bot.store.dispatch import Dispatch, Explanation, JobOutcome, SelectedTest, Selection
from config.repo import defaults
from tests.security.markup import problems, render, structure

# Fragments that are markup somewhere: mentions, references, links, images, autolinks, HTML,
# comments, code-span fences, table pipes, block starters, entities and odd white space.
FRAGMENTS = [
    "@octocat", "@org/team", "#12", "GH-7", "octo/miles#3", "[x](https://e.example)",
    "![i](https://e.example/i.png)", "<https://e.example>", "https://e.example", "www.e.example",
    "a@b.example", "mailto:a@b.example", "<img src=x onerror=alert(1)>",
    "<a href='//e.example'>y</a>", "<!-- x -->", "-->", "<!--", "<details>", "<br>", "</td>",
    "&lt;", "&#64;x", "&amp;", "`", "``", "```", "\\", "|", "*", "_", "~", "\n", "\r\n", "\t",
    "\u200b", "<", ">", "&", "[", "]", "(", ")", "!", ":", "javascript:alert(1)", "<script>",
    "[ref]: https://e.example", "* ", "# ", "> ", "1. ", "---", "\\`", "@", "x", " ", "<?php ?>",
    "<![CDATA[x]]>", "<!DOCTYPE html>", "\u2028", "rocmbot:state {", "<!-- rocmbot:summary -->",
]
hostile = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=10).map("".join)


def _harmless(text: str) -> str:
    """Text of no markup, empty where ``text`` is blank (an empty note shows no paragraph)."""
    return "plain" if text.split() else ""


PLAIN_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

NASTY = (
    "flaky ` @octocat <img src=x> `` [x](https://e.example) ![i](https://e.example/i.png) "
    "<https://e.example> www.e.example #1 GH-2 octo/miles#3 --> <details> ```"
)


def _report(path: str, suite: str, reason: str, value: str, title: str) -> Report:
    entry = TestEntry(
        path=path, line=3, func="register_rocm_ci", backend="rocm", suite=suite, gpus=4,
        est_time=600, disabled=reason, change="reason",
        reasons=[f"disabled reason changed: `{reason}` (was `{value}`)", f"{reason} and {value}"],
        tier="direct",
    )
    return Report(
        mode="analyze",
        base="a" * 40,
        head="b" * 40,
        tests=[entry],
        selected=[Selected(path, suite, 600, "direct", 4)],
        findings=[
            finding(
                "PAR002", path, 3, f"`--expert-model-parallel-size {value}` does not divide `{suite}`",
                fix=f"set `{value}` to 2, or {reason}", test=path, details=(f"{path}: {reason}",),
            ),
            finding("REG002", path, 4, f"`register_rocm_ci` argument `suite` is `{suite}`, not a literal"),
            finding("PIN001", f"{path}.txt", 1, f"{value} pins {reason}", severity=Severity.WARNING),
        ],
        tables=[Table(title, (title, value), ((value, reason), (path, suite)), note=reason)],
    )


def _bodies(path: str, suite: str, reason: str, value: str, title: str) -> dict[str, str]:
    """Every markdown body the PR's report reaches: the check run summary, the sticky comment
    (first and after a push that resolves the findings), and the inline review comments."""
    report = _report(path, suite, reason, value, title)
    first, _ = summary_body(report, SummaryState(), [])
    fixed = Report("analyze", "b" * 40, "c" * 40, [], [], [])
    second, _ = summary_body(fixed, SummaryState.load(first), [])
    shown = {f.path or "": "@@ -1,0 +1,5 @@\n" + "+x\n" * 5 for f in report.findings}
    inline = inline_comments(report, shown, [])
    # the offending lines outside the diff: quoted from the head, PR text again
    elsewhere = {f.path or "": "@@ -9,0 +9,1 @@\n+x\n" for f in report.findings}
    quoted = inline_comments(report, elsewhere, [], lambda path, line: f"{value} = {reason}")
    out = {"check": check_output(report)["summary"], "summary": first, "resolved": second}
    out.update({f"inline {i}": c.body for i, c in enumerate(inline)})
    out.update({f"quoted {i}": c.body for i, c in enumerate(quoted)})
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=hostile, suite=hostile, reason=hostile, value=hostile, title=hostile)
@example(path=NASTY, suite=NASTY, reason=NASTY, value=NASTY, title=NASTY)
@example(path="x--><img src=x>", suite="s", reason="r", value="v", title="t")
def test_report_bodies_carry_no_active_markup(path: str, suite: str, reason: str, value: str,
                                              title: str) -> None:
    bodies = _bodies(path, suite, reason, value, title)
    plain = _bodies("plain" if path else "", *(_harmless(t) for t in (suite, reason, value, title)))
    for name, body in bodies.items():
        assert problems(body) == [], (name, body)
        assert structure(body) == structure(plain[name]), (name, body)


@PLAIN_SETTINGS
@given(path=hostile)
def test_the_state_survives_any_path_and_cannot_be_forged_from_one(path: str) -> None:
    report = _report(path, "s", "r", "v", "t")
    body, state = summary_body(report, SummaryState(), ["k1"])
    loaded = SummaryState.load(body)
    assert loaded == state  # what a path holds is data, read back as written
    forged = f'x<!-- rocmbot:state {{"head":"{"f" * 40}","posted":["k9"]}} -->y'
    body, _ = summary_body(_report(forged + path, "s", "r", "v", "t"), SummaryState(), [])
    assert SummaryState.load(body).posted == ["k1"] or SummaryState.load(body).posted == []


def test_a_forged_state_in_a_code_span_is_not_the_state() -> None:
    forged = '<!-- rocmbot:state {"head":"[x](//e.co)","findings":{},"posted":["all"]} -->'
    report = _report(f"tests/{forged}.py", "s", "r", "v", "t")
    body, _ = summary_body(report, SummaryState(), [])
    assert forged in body  # shown in a code span, where it is inert ...
    assert SummaryState.load(body).posted == []  # ... and not taken for the state
    assert SummaryState.load(body + forged).head is None  # not even as the last line


def test_a_state_with_a_head_that_is_not_a_sha_is_not_rendered() -> None:
    gone = "PAR002:" + "0" * 32
    state = f'{{"head":"[x](//e.co)","findings":{{"{gone}":"gone"}},"posted":[]}}'
    planted = f"body\n<!-- rocmbot:state {state} -->"
    previous = SummaryState.load(planted)
    assert previous.head is None and previous.findings == {gone: "gone"}
    body, _ = summary_body(Report("analyze", "a" * 40, "b" * 40, [], [], []), previous, [])
    assert "Resolved since the last push" in body and problems(body) == []


@PLAIN_SETTINGS
@given(text=hostile)
def test_each_escaper_yields_inert_text(text: str) -> None:
    for rendered in (inline(text), cell(text), prose(text), code(text), f"- {prose(text)}"):
        assert "\n" not in rendered
        assert problems(rendered) == [], rendered
    assert set(render(code(text)).tags) <= {"p", "code"}


@PLAIN_SETTINGS
@given(line=hostile, path=hostile, suite=hostile)
def test_command_replies_and_run_checks_are_inert(line: str, path: str, suite: str) -> None:
    """The replies quote the command as written and the selection's paths and suites."""
    selection = Selection("octo/miles", 1, "b" * 40, "dev", [SelectedTest(path, suite, 600, 4)], [], 10.0,
                          None, "selected")
    unknown = parse("/run-amdx " + line)
    assert unknown is not None and unknown.kind == "unknown"
    marker = payloads.reply_marker(7, payloads.digest("/run-amdx " + line))
    bodies = [payloads.marked(payloads.unknown_reply(unknown.text, unknown.suggestion), marker)]
    bodies.append(payloads.help_reply(defaults().dispatch, selection))
    dispatch = Dispatch("d1", "octo/miles", 1, "b" * 40, suite, [path], 40.0, "dev", "queued", None,
                        None, None, None, 0.0)
    bodies.append("Dispatched: " + describe(Result([dispatch], [dispatch])) + ".")
    check = payloads.run_check("b" * 40, "d1", suite, [path, path], 40.0, "queued")
    bodies.append(check["output"]["summary"])
    outcomes = {path: JobOutcome(path, 1, "completed", line, None, 60.0)}  # the job URL is GitHub's
    done = payloads.run_check("b" * 40, "d1", suite, [path], 40.0, "completed", outcomes=outcomes)
    bodies.append(done["output"]["summary"])
    for body in bodies:
        assert problems(body) == [], body


def test_code_spans_side_by_side_stay_apart() -> None:
    """Touching fences would run together into one backtick string: harmless while both are
    single backticks, but a longer fence next to a shorter one closes nothing and leaves the
    first span's text outside code. ``prose`` keeps them apart."""
    shown = render(prose("`a``<b>`"))
    assert shown.tags["code"] == 2 and problems(prose("`a``<b>`")) == []
    assert render(code("<img src=x>`y") + "\u200b" + code("z")).tags["code"] == 2
    assert problems(code("<img src=x>`y") + code("z")) != []  # what a separator prevents


@PLAIN_SETTINGS
@given(lines=st.lists(hostile, max_size=4), why=hostile, path=hostile, fix=hostile)
@example(lines=["<!-- rocmbot:/runs -->", "```", "@octocat #12 <img src=x>", "\u202egnp.exe"], why="w",
         path="p", fix="f")
def test_a_failed_jobs_log_lines_are_quoted_inert(lines: list[str], why: str, path: str, fix: str) -> None:
    """A log is the runner's output, which a PR's code writes: its lines, and what they are
    explained by, show in the check and the summary as text and nothing else."""
    assert problems("\n".join(code_block(lines))) == []
    for kind in ("predicted", "infrastructure", "known", "new", None):
        explained = Explanation(7, kind, tuple(lines), why, "PAR002", why, fix, unavailable=why or None)
        outcome = JobOutcome(path, 7, "completed", "failure", None, 60.0, explained=explained)
        check = payloads.run_check("b" * 40, "d1", "stage-c-4-gpu-mi350", [path], 40.0, "completed",
                                   conclusion="failure", outcomes={path: outcome})
        assert problems(check["output"]["summary"]) == [], check["output"]["summary"]
        failure = payloads.failure_of(outcome)
        assert failure is not None
        run = markdown.Run("stage-c-4-gpu-mi350", (path,), "failure", None, (failure,))
        section = markdown.runs_section([run])
        assert problems(section) == [], section
        body, _ = summary_body(_report("t.py", "s", "r", "v", "t"), SummaryState(), [])
        shown = with_runs(body, [run])
        assert with_runs(shown, [run]) == shown  # the section is found again whole, whatever the log says

