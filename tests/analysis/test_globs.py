"""Globs: the configuration's (``match``), GitHub's path filters and dorny/paths-filter's
picomatch patterns; an invalid pattern is taken literally and nothing raises."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.analysis.ci import ci_index
from bot.analysis.ci.filters import FilterProblem, FilterSet, evaluate_filters, read_filters
from bot.analysis.ci.globs import github_paths_match, glob_problem, paths_trigger, picomatch
from bot.analysis.engine import audit
from bot.analysis.snapshot import Snapshot
from bot.analysis.tree import FolderTree, match
from config.repo import defaults, parse_config

# --- the configuration's globs ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("tests/**/test_*.py", None),
        ("a/[!bc]/[]x]/[^-]/[a-]", None),
        ("a/[bc", None),  # no `]`: a plain `[`
        ("a\\b", None),  # a backslash is a plain character
        ("test/[z-a]*.py", "the range z-a in [z-a] runs backwards"),
        ("[linux-mi35x-gpu-8.fabric]", "the range x-m in [linux-mi35x-gpu-8.fabric] runs backwards"),
    ],
)
def test_glob_problem_names_a_range_that_runs_backwards(pattern: str, problem: str | None) -> None:
    assert glob_problem(pattern) == problem


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("test/[z-a]*.py", "test/a.py", False),
        ("test/[z-a]*.py", "test/[z-a]*.py", True),
        ("[linux-mi35x-gpu-8.fabric]", "l", False),
        ("[linux-mi35x-gpu-8.fabric]", "[linux-mi35x-gpu-8.fabric]", True),
        ("a**", "a/b/c", True),  # `**` not before a slash spans folders too
        ("a**/b", "ab", True),
        ("**.py", "a/b.py", True),
        ("a/[!b]", "a/b", False),
        ("a/[!b]/c", "a///c", True),  # a negated class is any other character
        ("a\\b", "a\\b", True),
        ("a/(b|c)@(d)", "a/(b|c)@(d)", True),  # no extended globs: the characters themselves
        ("a/{b,c}", "a/{b,c}", True),
        ("a/[]]", "a/]", True),
    ],
)
def test_an_invalid_glob_matches_only_itself_and_the_rest_keeps_its_meaning(
    pattern: str, path: str, expected: bool
) -> None:
    assert match(pattern, path) is expected


def test_a_tree_lists_an_invalid_glob_as_the_file_it_spells(tmp_path: Path) -> None:
    (tmp_path / "[z-a]").write_text("x")
    (tmp_path / "z").write_text("x")
    assert FolderTree(tmp_path).list("[z-a]") == ["[z-a]"]


def test_an_invalid_exclude_glob_is_cfg001_and_the_analysis_goes_on(tmp_path: Path) -> None:
    loaded = parse_config('exclude: ["test/[z-a]*.py"]\nselect_nightly: true\n')
    (problem,) = loaded.problems
    assert problem.key == "exclude" and problem.line == 1
    assert "'test/[z-a]*.py' is not a valid glob: the range z-a in [z-a] runs backwards" in problem.message
    assert loaded.config.exclude == [] and loaded.config.select_nightly is True
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/rocmbot.yml").write_text('exclude: ["test/[z-a]*.py"]\n')
    (tmp_path / "test").mkdir()
    (tmp_path / "test/test_a.py").write_text('register_rocm_ci(60, "stage-a")\n')
    report = audit(FolderTree(tmp_path))
    (cfg,) = [f for f in report.findings if f.rule == "CFG001"]
    assert "`exclude`" in cfg.message and "runs backwards" in cfg.message
    assert [t.path for t in report.tests] == ["test/test_a.py"]


@pytest.mark.parametrize("key", ["tests", "harness", "environment"])
def test_every_glob_key_refuses_an_invalid_glob(key: str) -> None:
    (problem,) = parse_config(f'{key}: ["ok/**", "x/[9-0]"]\n').problems
    assert problem.key == key and "the range 9-0 in [9-0] runs backwards" in problem.message


def test_the_pin_globs_refuse_an_invalid_glob() -> None:
    loaded = parse_config('pins:\n  exclude: ["[b-a]"]\n  groups:\n    g: {dockerfiles: ["d/[9-0]"]}\n')
    assert sorted(p.key for p in loaded.problems) == ["pins.exclude", "pins.groups.g.dockerfiles"]
    assert loaded.config.pins == defaults().pins


def test_a_runner_label_in_brackets_does_not_stop_the_rocm_environment(tmp_path: Path) -> None:
    """`runs-on: [linux-mi35x-gpu-8.fabric]` reads as a word with brackets: once a crash."""
    workflow = ("on: pull_request\njobs:\n  t:\n    runs-on: [linux-mi35x-gpu-8.fabric]\n"
                "    steps:\n      - run: bash scripts/ci/amd_setup.sh\n")
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / ".github/workflows/pr-amd.yml").write_text(workflow)
    index = ci_index(Snapshot(FolderTree(tmp_path), defaults()))
    changed = ["scripts/ci/amd_setup.sh", "[linux-mi35x-gpu-8.fabric]", "linux"]
    # a word with glob characters and no folder is no file the job reads: a label, a pattern
    assert index.environment(changed) == ["scripts/ci/amd_setup.sh"]


# --- GitHub's on.<event>.paths ----------------------------------------------------------------

# The examples of GitHub's "filter pattern cheat sheet" (workflow syntax), and the quantifiers
# `?` (the preceding character, optional) and `+` (repeated).
GITHUB = [
    (["*"], "README.md", True),
    (["*"], "docs/README.md", False),
    (["*.jsx?"], "page.js", True),
    (["*.jsx?"], "page.jsx", True),
    (["*.jsx?"], "page.jsxx", False),
    (["**"], "all/the/files.md", True),
    (["*.js"], "app.js", True),
    (["*.js"], "js/index.js", False),
    (["**.js"], "src/js/app.js", True),
    (["docs/*"], "docs/file.txt", True),
    (["docs/*"], "docs/mona/octocat.txt", False),
    (["docs/**"], "docs/mona/octocat.txt", True),
    (["docs/**/*.md"], "docs/README.md", True),
    (["docs/**/*.md"], "docs/a/markdown/file.md", True),
    (["**/docs/**"], "space/docs/plan/space.doc", True),
    (["**/README.md"], "README.md", True),
    (["**/README.md"], "js/README.md", True),
    (["**/*src/**"], "my-src/code/js/app.js", True),
    (["**/*-post.md"], "path/their-post.md", True),
    (["**/migrate-*.sql"], "db/sept/migrate-v1.sql", True),
    (["*.md", "!README.md"], "hello.md", True),
    (["*.md", "!README.md"], "README.md", False),
    (["*.md", "!README.md"], "docs/hello.md", False),
    (["*.md", "!README.md", "README*"], "README.md", True),
    (["*.md", "!README.md", "README*"], "README.doc", True),
    (["!README.md"], "hello.md", False),  # a `!` pattern takes back; it selects nothing
    (["[CB]at"], "Cat", True),
    (["[CB]at"], "Rat", False),
    (["[1-2]00"], "200", True),
    (["release/v[0-9].[0-9]"], "release/v1.2", True),
    (["colou?r"], "color", True),
    (["colou?r"], "colour", True),
    (["a+b"], "aaab", True),
    (["a+b"], "b", False),
    (["[0-9]+.txt"], "2024.txt", True),
    (["/?a"], "a", True),
    (["?a"], "?a", True),  # nothing before it: the character itself
    (["?a"], "a", False),
    (["*?.py"], "x.py", True),  # `?` after a star is lazy: it changes nothing
    (["**/?x"], "a/x", True),
    (["\\*.md"], "*.md", True),
    (["\\*.md"], "a.md", False),
    (["a/(b|c)"], "a/(b|c)", True),
    (["a/{b,c}"], "a/{b,c}", True),
    # invalid: taken literally
    (["a++"], "a++", True),
    (["a++"], "aa", False),
    (["*+"], "*+", True),
    (["[a_b]"], "[a_b]", True),
    (["[a_b]"], "a", False),
    (["[a-Z]"], "[a-Z]", True),
    (["[z-a]"], "[z-a]", True),
    (["[]"], "[]", True),
    (["[ab"], "[ab", True),
    (["a\\"], "a\\", True),
    (["!a\\", "x"], "x", True),
]


@pytest.mark.parametrize(("patterns", "path", "expected"), GITHUB)
def test_github_paths_follow_the_cheat_sheet(patterns: list[str], path: str, expected: bool) -> None:
    assert github_paths_match(patterns, path) is expected


def test_an_invalid_negative_github_pattern_takes_back_the_path_it_spells() -> None:
    assert github_paths_match(["**", "![z-a]"], "[z-a]") is False
    assert github_paths_match(["**", "![z-a]"], "z") is True


@pytest.mark.parametrize(
    ("paths", "ignore", "changed", "expected"),
    [
        (None, None, ["a.py"], True),
        ([], [], ["a.py"], True),  # an empty list filters nothing
        (["src/**"], None, ["README.md", "src/a.py"], True),
        (["src/**"], None, ["README.md"], False),
        (["src/**"], None, [], False),
        (["src/**", "!src/**/*.md"], None, ["src/x.md"], False),
        (None, ["docs/**", "*.md"], ["README.md", "docs/a.txt"], False),
        (None, ["docs/**", "*.md"], ["README.md", "a.py"], True),
        (None, ["docs/**", "!docs/api/**"], ["docs/api/x.md"], True),  # taken back: not ignored
        (None, ["docs/**"], [], False),
        (["src/**"], ["src/gen/**"], ["src/gen/a.py"], False),
        (["src/**"], ["src/gen/**"], ["src/gen/a.py", "src/b.py"], True),
    ],
)
def test_paths_trigger_runs_a_workflow_as_github_does(
    paths: list[str] | None, ignore: list[str] | None, changed: list[str], expected: bool
) -> None:
    assert paths_trigger(paths, ignore, changed) is expected


# --- dorny/paths-filter: picomatch --------------------------------------------------------------

# Each answer is picomatch 2.3.1's with `{dot: true}` (what dorny/paths-filter v3 runs).
PICOMATCH = [
    ("python/sglang/!(multimodal_gen|kernels)/**/!(*.md)", "python/sglang/srt/foo.py", True),
    ("python/sglang/!(multimodal_gen|kernels)/**/!(*.md)", "python/sglang/kernels/aot/x.cu", False),
    ("python/sglang/!(multimodal_gen|kernels)/**/!(*.md)", "python/sglang/kernels_extra/x.py", False),
    ("python/sglang/!(multimodal_gen|kernels)/**/!(*.md)", "python/sglang/foo.py", True),
    ("python/sglang/!(multimodal_gen|kernels)/**/!(*.md)", "python/sglang/README.md", True),
    ("python/sglang/!(multimodal_gen|kernels)/**/!(*.md)", "python/sglang/srt/README.md", False),
    ("python/sglang/!(multimodal_gen|kernels)/**/!(*.md)", "python/sglang/multimodal_gen/x.py", False),
    ("python/sglang/kernels/!(aot)/**", "python/sglang/kernels/README.md", True),
    ("python/sglang/kernels/!(aot)/**", "python/sglang/kernels/ops/x.py", True),
    ("python/sglang/kernels/!(aot)/**", "python/sglang/kernels/aot/x.cu", False),
    ("a/**", "a", True),
    ("a/**", "a/b/c", True),
    ("a/**", "b", False),
    ("a/**", "ab/c", False),
    ("**.md", "x.md", True),
    ("**.md", "a/b/x.md", True),
    ("**.md", "a/b.py", False),
    ("**/*.md", ".github/x.md", True),
    ("**/*.md", "x.md", True),
    ("*", ".env", True),
    ("*", "a/b", False),
    ("!**/*.md", "a/b.md", False),
    ("!**/*.md", "a/b.py", True),
    ("!!a/*", "a/b", True),
    ("!!a/*", "c", False),
    ("a/[!b]", "a/b", True),
    ("a/[!b]", "a/c", False),
    ("a/[!b]", "a/!", True),
    ("a/[!b]", "a/[!b]", True),
    ("a/[^b]", "a/b", False),
    ("a/[^b]", "a/c", True),
    ("a/[ab]", "a/[ab]", True),
    ("a/[ab]", "a/a", True),
    ("a/[ab]", "a/c", False),
    ("a/[a-c]", "a/[a-c]", True),
    ("a/[a-c]", "a/b", True),
    ("a/{b,c}.py", "a/b.py", True),
    ("a/{b,c}.py", "a/d.py", False),
    ("a/@(b|c)/*", "a/b/x", True),
    ("a/@(b|c)/*", "a/d/x", False),
    ("a/+(b).py", "a/bbb.py", True),
    ("a/+(b).py", "a/.py", False),
    ("a/?(b).py", "a/.py", True),
    ("a/?(b).py", "a/bb.py", False),
    ("a/*(b)c", "a/c", True),
    ("a/*(b)c", "a/bbc", True),
    ("a/*(b)c", "a/xc", False),
    ("a/!(*.d).ts", "a/x.d.ts", False),
    ("a/!(*.d).ts", "a/x.ts", True),
    ("./a/*", "a/b", True),
    ("a/!(b)c", "a/bxc", False),
    ("a/!(b)c", "a/xc", True),
    ("a/**/!(x)/c", "a/y/c", True),
    ("a/**/!(x)/c", "a/xy/c", False),
    ("a/**/!(x)/c", "a/c", False),
    ("test/[z-a]*.py", "test/a.py", False),
    ("test/[z-a]*.py", "test/[z-a]*.py", True),
    ("!a", "!a", True),
    ("!a", "b", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), PICOMATCH)
def test_picomatch_answers_as_picomatch_does(pattern: str, path: str, expected: bool) -> None:
    assert picomatch(pattern, path) is expected


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("a/**/?(x)", "a", True),  # `**` may end the path when what follows can match nothing
        ("a/**/*(x)", "a", True),
        ("a/**/!(*.md)", "a", True),
        ("a/**/!(x)y", "a", False),
        ("a/**/x?(y)", "a", False),
        ("a/**/b/**", "a/x/b", True),
        ("a/!(b|c/d)/e", "a/x/e", True),  # a negation holding a folder: as bash reads it
        ("{1..3}", "2", True),  # picomatch reads a range as a class; bash's expansion is the same here
        ("{" + ",".join(map(str, range(1100))) + "}", "5", False),  # past wcmatch's 1,000 patterns
    ],
)
def test_picomatch_edges(pattern: str, path: str, expected: bool) -> None:
    assert picomatch(pattern, path) is expected


def test_a_pattern_past_the_expansion_limit_matches_only_itself() -> None:
    pattern = "{a,b}" * 11  # 2,048 patterns
    assert picomatch(pattern, "a" * 11) is False
    assert picomatch(pattern, pattern) is True


# --- nothing raises ---------------------------------------------------------------------------

GLOB_TEXT = st.text(alphabet=st.sampled_from("ab/.*?+![]^-\\(){},|@ \n"), max_size=24)
ANY_TEXT = st.one_of(GLOB_TEXT, st.text(max_size=24))


@given(ANY_TEXT, ANY_TEXT, st.lists(ANY_TEXT, max_size=4), st.lists(ANY_TEXT, max_size=3))
def test_no_pattern_or_path_makes_a_glob_function_raise(
    pattern: str, path: str, patterns: list[str], changed: list[str]
) -> None:
    assert glob_problem(pattern) is None or isinstance(glob_problem(pattern), str)
    assert isinstance(match(pattern, path), bool)
    assert isinstance(picomatch(pattern, path), bool)
    assert isinstance(github_paths_match([*patterns, pattern], path), bool)
    assert isinstance(paths_trigger(patterns or None, [pattern], [path, *changed]), bool)
    filters = FilterSet({"f": (pattern, *patterns)}, "every")
    assert set(evaluate_filters(filters, [path, *changed])) == {"f"}
    if glob_problem(pattern) is not None:
        assert match(pattern, pattern)


@given(ANY_TEXT, st.sampled_from([None, "some", "every", "all"]), st.one_of(st.none(), ANY_TEXT))
def test_no_filters_text_makes_read_filters_raise(
    text: str, quantifier: str | None, file: str | None
) -> None:
    assert isinstance(read_filters(text, quantifier, lambda path: file), FilterSet | FilterProblem)
