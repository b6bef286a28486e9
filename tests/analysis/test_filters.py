"""dorny/paths-filter steps: their filters read (inline or from a file) and evaluated as the
action does, with picomatch's reading of each pattern."""

from __future__ import annotations

import pytest
import yaml

from bot.analysis.ci.filters import FilterProblem, FilterSet, evaluate_filters, read_filters
from config import yamlload

# The `with: filters:` of SGLang's pr-test-amd-rocm720.yml, as the step holds it.
SGLANG = """\
main_package:
  - "python/sglang/!(multimodal_gen|kernels)/**/!(*.md)"
  - "python/sglang/kernels/!(*.md)"
  - "python/sglang/kernels/!(aot)/**/!(*.md)"
  - "python/pyproject_rocm.toml"
  - "python/pyproject_other.toml"
  - "scripts/ci/amd/*"
  - "scripts/ci/utils/*"
  - "test/**/!(*.md)"
  - ".github/workflows/pr-test-amd-rocm720.yml"
sgl_kernel:
  - "python/sglang/kernels/aot/**/!(*.md|THIRDPARTYNOTICES.txt|LICENSE)"
  - ".github/workflows/pr-test-amd-rocm720.yml"
jit_kernel:
  - "python/sglang/kernels/!(*.md)"
  - "python/sglang/kernels/!(aot)/**"
  - "test/registered/kernels/**"
  - ".github/workflows/pr-test-amd-rocm720.yml"
multimodal_gen:
  - "python/sglang/multimodal_gen/**/!(*.md|*.ipynb)"
  - "python/sglang/cli/**"
  - "python/sglang/srt/observability/**"
  - "python/sglang/kernels/ops/diffusion/**"
  - "test/registered/kernels/ops/diffusion/**"
  - "test/registered/kernels/benchmark/diffusion/**"
  - "python/pyproject_rocm.toml"
  - "python/pyproject_other.toml"
"""


def _no_file(path: str) -> str | None:
    return None


def _sglang() -> FilterSet:
    read = read_filters(SGLANG, None, _no_file)
    assert isinstance(read, FilterSet)
    return read


# What dorny/paths-filter v3 answers (picomatch 2.3.1, `dot: true`) for a change of one file.
@pytest.mark.parametrize(
    ("changed", "true"),
    [
        ("README.md", []),
        ("python/sglang/srt/foo.py", ["main_package"]),
        ("python/sglang/kernels/aot/x.cu", ["sgl_kernel"]),
        ("python/sglang/kernels/aot/LICENSE", []),
        ("python/sglang/kernels/aot/csrc/README.md", []),
        ("python/sglang/kernels/foo.py", ["main_package", "jit_kernel"]),
        # picomatch reads `kernels/!(aot)/**/!(*.md)` as also matching `kernels/<any name>`
        ("python/sglang/kernels/README.md", ["main_package", "jit_kernel"]),
        ("python/sglang/kernels/ops/x.py", ["main_package", "jit_kernel"]),
        ("python/sglang/kernels_extra/x.py", []),  # `!(kernels)` refuses names starting with it
        ("python/sglang/multimodal_gen/x.py", ["multimodal_gen"]),
        ("python/sglang/multimodal_gen/x.md", []),
        ("python/sglang/utils.py", ["main_package"]),
        ("python/sglang/README.md", ["main_package"]),
        ("python/sglang/srt/observability/x.py", ["main_package", "multimodal_gen"]),
        ("test/registered/kernels/x.py", ["main_package", "jit_kernel"]),
        ("test/README.md", []),
        ("scripts/ci/amd/a/b.sh", []),
        (".github/workflows/pr-test-amd-rocm720.yml", ["main_package", "sgl_kernel", "jit_kernel"]),
    ],
)
def test_sglang_rocm720_filters_answer_as_the_action_does(changed: str, true: list[str]) -> None:
    outputs = evaluate_filters(_sglang(), [changed])
    assert list(outputs) == ["main_package", "sgl_kernel", "jit_kernel", "multimodal_gen"]
    assert [name for name, value in outputs.items() if value] == true


def test_a_filter_is_true_when_any_changed_file_counts() -> None:
    outputs = evaluate_filters(_sglang(), ["README.md", "python/sglang/cli/main.py"])
    assert outputs == {"main_package": True, "sgl_kernel": False, "jit_kernel": False,
                       "multimodal_gen": True}
    assert not any(evaluate_filters(_sglang(), []).values())


QUANTIFIED = "backend:\n  - 'pkg/a/**'\n  - '!**/*.jpeg'\n  - '!**/*.md'\n"


@pytest.mark.parametrize(
    ("quantifier", "changed", "expected"),
    [
        (None, "pkg/a/x.ts", True),
        (None, "pkg/a/x.md", True),  # `pkg/a/**` matches it: one pattern is enough
        (None, "docs/x.txt", True),  # `!**/*.md` matches every file that is not Markdown
        (None, "docs/x.md", True),  # ... and `!**/*.jpeg` every file that is not a JPEG
        ("some", "docs/x.md", True),
        ("every", "pkg/a/x.ts", True),
        ("every", "pkg/a/x.md", False),  # all three must match: the `!` patterns exclude
        ("every", "pkg/a/x.jpeg", False),
        ("every", "docs/x.txt", False),
    ],
)
def test_the_predicate_quantifier_decides_how_exclusions_work(
    quantifier: str | None, changed: str, expected: bool
) -> None:
    read = read_filters(QUANTIFIED, quantifier, _no_file)
    assert isinstance(read, FilterSet) and read.quantifier == (quantifier or "some")
    assert evaluate_filters(read, [changed]) == {"backend": expected}


def test_anchors_nested_lists_and_change_types_flatten_in_order() -> None:
    text = """\
shared: &shared
  - common/**
  - config/**
src:
  - *shared
  - src/**
  - added|modified: 'new/**'
  - deleted: ['old/**', 'gone/**']
"""
    read = read_filters(text, None, _no_file)
    assert isinstance(read, FilterSet)
    assert read.filters == {
        "shared": ("common/**", "config/**"),
        "src": ("common/**", "config/**", "src/**", "new/**", "old/**", "gone/**"),
    }
    assert evaluate_filters(read, ["gone/x"]) == {"shared": False, "src": True}


def test_a_merge_key_adds_the_other_filters() -> None:
    read = read_filters("base: &b\n  x: [a/**]\n<<: *b\ny: [b/**]\nx: [c/**]\n", None, _no_file)
    assert isinstance(read, FilterSet)
    assert read.filters == {"base": ("a/**",), "x": ("c/**",), "y": ("b/**",)}


def test_filters_from_a_file_of_the_repository() -> None:
    files = {".github/filters.yml": "docs:\n  - 'docs/**'\n"}
    read = read_filters("./.github/filters.yml", "every", files.get)
    assert read == FilterSet({"docs": ("docs/**",)}, "every", ".github/filters.yml")
    missing = read_filters(".github/none.yml", None, files.get)
    assert missing == FilterProblem("the filters file .github/none.yml is not in the repository",
                                    ".github/none.yml")


@pytest.mark.parametrize(
    ("text", "quantifier", "expected"),
    [
        ("a: [x]", "all", FilterProblem("predicate-quantifier is 'all'; it must be 'some' or 'every'")),
        ("a: [x\nb: y\n", None, FilterProblem("not valid YAML: did not find expected ',' or ']'", None, 2)),
        ("- a\n- b\n", None, FilterProblem("the filters must be a mapping of names to lists of patterns",
                                          None, 1)),
        ("# nothing\n", None, FilterProblem("the filters must be a mapping of names to lists of patterns")),
        ("a:\n", None, FilterProblem("filter a: a rule must be a pattern, a list or a mapping of change "
                                     "types to patterns", None, 1)),
        ("a:\n  - x\n  - [y, {k: v}]\n  - [z, ~]\n", None,
         FilterProblem("filter a: a rule must be a pattern, a list or a mapping of change types to "
                       "patterns", None, 4)),
        ("a:\n  - added: {k: v}\n", None,
         FilterProblem("filter a: a change type must map to a pattern or a list of patterns", None, 2)),
        ("a:\n  - added: [x, [y]]\n", None,
         FilterProblem("filter a: a change type must map to a pattern or a list of patterns", None, 2)),
        ("? [a, b]\n: [x]\n", None, FilterProblem("a filter's name must be a plain word", None, 1)),
        ("a: &x [*x]\n", None, FilterProblem("refused: an alias refers to a node that contains it "
                                             "(recursive alias)")),
        ("a: [x\x07]", None, FilterProblem("not valid YAML: control characters are not allowed", None, 1)),
    ],
)
def test_filters_that_cannot_be_read_are_a_problem_with_its_line(
    text: str, quantifier: str | None, expected: FilterProblem
) -> None:
    assert read_filters(text, quantifier, _no_file) == expected


def test_filters_nested_too_deeply_are_a_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    deep = "a: " + "[" * 1500 + "]" * 1500 + "\n"  # past libyaml's limit (1,000) and Python's recursion
    assert read_filters(deep, None, _no_file) == FilterProblem(
        "not valid YAML: exceeded maximum nesting depth", None, 1)  # libyaml's limit
    monkeypatch.setattr(yamlload, "Loader", yaml.SafeLoader)  # PyYAML without libyaml: recursion
    assert read_filters(deep, None, _no_file) == FilterProblem("not valid YAML: nested too deeply")


def test_a_problem_in_a_filters_file_names_the_file() -> None:
    read = read_filters("filters.yml", None, {"filters.yml": "a: [x\n\nb: y\n"}.get)
    assert isinstance(read, FilterProblem)
    assert read.path == "filters.yml" and read.line == 3 and read.message.startswith("not valid YAML")
