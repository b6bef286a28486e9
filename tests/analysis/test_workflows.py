"""Workflows with line numbers: jobs, steps, conditions, reusable calls, malformed YAML."""

from __future__ import annotations

import textwrap

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.analysis import workflow_nodes
from bot.analysis.source import Unreadable
from bot.analysis.workflows import Workflow, parse_workflow, strip_expression


def parse(text: str, path: str = ".github/workflows/_run-ci-rocm.yml") -> Workflow:
    parsed = parse_workflow(path, textwrap.dedent(text).lstrip("\n"))
    assert isinstance(parsed, Workflow), parsed
    return parsed


WORKFLOW = """
name: ROCm CI
on:
  workflow_call:
    inputs:
      skip_dependency_install: {type: boolean, default: false}
jobs:
  test:
    name: Test on MI350
    runs-on: [self-hosted, mi350]
    steps:
      - uses: actions/checkout@v4
      - name: Install (full)
        if: ${{ !inputs.skip_dependency_install }}
        run: |
          pip install -e . --no-deps --break-system-packages
          pip install polars "numba==0.65.1" --break-system-packages
      - name: Install (miles only)
        if: ${{ inputs.skip_dependency_install }}
        run: pip install polars "numba==0.65.1" --break-system-packages
      - run: python tests/ci/run_suite.py --suite stage-c-4-gpu-mi350
  call:
    uses: ./.github/workflows/_shared.yml
    with: {x: 1}
  remote:
    uses: org/repo/.github/workflows/x.yml@v1
"""


def test_jobs_steps_conditions_and_lines() -> None:
    wf = parse(WORKFLOW)
    test, call, remote = wf.jobs
    assert (test.id, test.name, test.line, test.condition) == ("test", "Test on MI350", 7, None)
    assert [(s.name, s.line, s.condition) for s in test.steps] == [
        ("actions/checkout@v4", 11, None),
        ("Install (full)", 12, "${{ !inputs.skip_dependency_install }}"),
        ("Install (miles only)", 17, "${{ inputs.skip_dependency_install }}"),
        ("Run python tests/ci/run_suite.py --suite st…", 20, None),
    ]
    full, miles = test.steps[1], test.steps[2]
    assert [(e.spec.text, e.line) for i in full.installs for e in i.entries] == [
        (".", 15), ("polars", 16), ("numba==0.65.1", 16),
    ]
    assert [i.line for i in miles.installs] == [19]
    assert call.calls == ".github/workflows/_shared.yml"
    assert remote.calls is None
    assert wf.calls == (".github/workflows/_shared.yml",)


def test_the_on_key_does_not_turn_into_true() -> None:
    wf = parse("on: push\njobs: {}\n")
    assert wf.jobs == ()


def test_steps_that_are_not_posix_shell_or_are_switched_off_install_nothing() -> None:
    wf = parse(
        """
        jobs:
          a:
            steps:
              - shell: python
                run: pip install a==1
              - if: false
                run: pip install b==1
              - if: ${{ false }}
                run: pip install c==1
              - shell: bash -el {0}
                run: pip install d==1
              - run: echo hello
              - name: Not a scalar
                run: [pip, install, e]
              - run: ""
              - {}
        """
    )
    steps = wf.jobs[0].steps
    assert [bool(s.installs) for s in steps] == [False, False, False, True, False, False, False,
                                                  False]
    assert steps[-2].name == "step 7"
    assert steps[-1].name == "step 8"


def test_folded_plain_and_quoted_runs_find_each_word_on_its_line() -> None:
    wf = parse(
        """
        jobs:
          a:
            steps:
              - run: >
                  pip install
                  a==1
                  b==2
              - run: "pip install \\"c==3\\""
              - run: pip install
                  d==4
              - run: 'pip install ${{ inputs.pkg }}'
        """
    )
    found = [(e.spec.text, e.line) for s in wf.jobs[0].steps for i in s.installs
             for e in i.entries]
    assert found == [("a==1", 6), ("b==2", 7), ("c==3", 8), ("d==4", 10),
                     ("${{ inputs.pkg }}", 11)]
    assert wf.jobs[0].steps[3].installs[0].entries[0].spec.kind == "unresolved"


def test_a_word_the_search_cannot_find_falls_back_to_the_first_line() -> None:
    wf = parse('jobs:\n  a:\n    steps:\n      - run: "pip install \\\\\n          x==1"\n')
    assert [(e.spec.text, e.line) for i in wf.jobs[0].steps[0].installs for e in i.entries] == [
        ("x==1", 4),
    ]


def test_requirements_paths_follow_the_working_directory() -> None:
    wf = parse(
        """
        defaults:
          run:
            working-directory: python
        jobs:
          a:
            steps:
              - run: pip install -r requirements.txt
              - working-directory: ci
                run: pip install -r ../reqs/ci.txt
          b:
            defaults: {run: {working-directory: docs}}
            steps:
              - run: |
                  pip install -r ${{ github.workspace }}/req.txt -r $GITHUB_WORKSPACE/r2.txt
                  pip install -r ${{ inputs.reqs }} -r req.txt
        """
    )
    refs = [(f.text, f.candidates) for j in wf.jobs for s in j.steps for i in s.installs
            for f in i.files]
    assert refs == [
        ("requirements.txt", ("python/requirements.txt",)),
        ("../reqs/ci.txt", ("reqs/ci.txt",)),
        ("${{ github.workspace }}/req.txt", ("docs/req.txt",)),
        ("$GITHUB_WORKSPACE/r2.txt", ("docs/r2.txt",)),
        ("${{ inputs.reqs }}", ()),
        ("req.txt", ("docs/req.txt",)),
    ]


def test_runners_containers_inputs_and_the_scripts_steps_run() -> None:
    wf = parse(
        """
        jobs:
          a:
            runs-on: [self-hosted, mi300]
            container:
              image: rocm/sgl-dev:1
            defaults: {run: {working-directory: "${{ github.workspace }}"}}
            steps:
              - run: |
                  bash scripts/ci/amd/install.sh
                  bash $GITHUB_WORKSPACE/scripts/x.sh && bash ${{ github.workspace }}/y.sh
                  bash "$DIR/z.sh"
              - working-directory: docker
                run: ./build.sh
          b:
            runs-on: ubuntu-latest
            container: python:3.11
            steps: []
          c:
            uses: ./.github/workflows/shared.yml
            with: {runs_on: '["h200"]', image: lmsysorg/sglang}
        """
    )
    a, b, c = wf.jobs
    assert (a.runs_on, a.container, a.inputs) == ("self-hosted mi300", "rocm/sgl-dev:1", "")
    assert [(f.text, f.line, f.candidates) for f in a.steps[0].scripts] == [
        ("scripts/ci/amd/install.sh", 9, ("scripts/ci/amd/install.sh",)),
        ("$GITHUB_WORKSPACE/scripts/x.sh", 10, ("scripts/x.sh",)),
        ("${{ github.workspace }}/y.sh", 10, ("y.sh",)),
    ]
    assert [f.candidates for f in a.steps[1].scripts] == [("docker/build.sh", "build.sh")]
    assert (b.runs_on, b.container) == ("ubuntu-latest", "python:3.11")
    assert (c.runs_on, c.container, c.inputs) == ("", None, '["h200"] lmsysorg/sglang')


def test_a_container_without_an_image_and_nested_values() -> None:
    assert workflow_nodes._container(yaml.compose("{options: --gpus}")) == ""
    deep = yaml.compose("[[[[[[[[[[[x]]]]]]]]]]]")
    assert workflow_nodes._scalars(deep) == []
    assert workflow_nodes._scalars(yaml.compose("{a: [x, {b: y}]}")) == ["x", "y"]


def test_merge_keys_are_applied() -> None:
    wf = parse(
        """
        x-install: &install
          name: Install
          run: pip install a==1
        jobs:
          a:
            steps:
              - <<: *install
                if: inputs.full
              - <<: [*install]
                name: Install again
              - <<: *install
                <<: {if: "!inputs.full"}
        """
    )
    steps = wf.jobs[0].steps
    assert [(s.name, s.condition) for s in steps] == [
        ("Install", "inputs.full"), ("Install again", None), ("Install", "!inputs.full"),
    ]
    assert all(s.installs for s in steps)


def test_non_mapping_shapes_are_ignored() -> None:
    assert parse("- a\n- b\n").jobs == ()
    assert parse("").jobs == ()
    assert parse("jobs: [1, 2]\n").jobs == ()
    assert parse("jobs:\n  a: 1\n  ? [x]\n  : 2\n").jobs[0].steps == ()
    assert parse("jobs:\n  a:\n    steps: {x: 1}\n").jobs[0].steps == ()


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("jobs:\n  a:\n    steps:\n      - run: [\n", 5, "not valid YAML"),
        ("a: 1\n---\nb: 2\n", 2, "but found another document"),
        ("a: 1\n\x07\n", 2, "control characters are not allowed"),
        ("jobs:\n  a: {b: 1\n  c: 2\n", 3, "not valid YAML"),
    ],
)
def test_malformed_yaml_is_unreadable_with_its_line(text: str, line: int, reason: str) -> None:
    parsed = parse_workflow("w.yml", text)
    assert isinstance(parsed, Unreadable)
    assert parsed.line == line and reason in parsed.reason
    assert parsed.finding().rule == "REG004"


def test_deep_nesting_is_unreadable(monkeypatch: pytest.MonkeyPatch) -> None:
    def deep(*args: object, **kwargs: object) -> None:
        raise RecursionError

    monkeypatch.setattr(yaml, "compose", deep)
    parsed = parse_workflow("w.yml", "a: 1")
    assert isinstance(parsed, Unreadable) and parsed.line is None


def test_yaml_errors_without_a_mark_or_a_reason() -> None:
    bare = yaml.YAMLError()
    assert workflow_nodes._error_line(bare, "x") is None
    assert workflow_nodes._error_reason(bare) == "YAMLError"
    assert workflow_nodes._error_reason(yaml.YAMLError("first\nsecond")) == "first"


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("${{ !inputs.x }}", "!inputs.x"),
        ("  inputs.x  ", "inputs.x"),
        ("${{ a }} && ${{ b }}", "${{ a }} && ${{ b }}"),
    ],
)
def test_strip_expression(condition: str, expected: str) -> None:
    assert strip_expression(condition) == expected


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from([
    "jobs:\n", "  a:\n", "    steps:\n", "      - ", "run: ", "name: x\n", "if: ", "|\n",
    "        pip install x==1\n", "uses: ./.github/workflows/y.yml\n", "<<: *a\n", "&a ", "*a",
    "{", "}", "[", "]", "'", '"', "${{ inputs.x }}", "\n", "  ", ": ", "- ", "on:\n", "\t", "#",
]), max_size=30).map("".join))
def test_no_yaml_text_crashes_the_reader(text: str) -> None:
    parsed = parse_workflow("w.yml", text)
    if isinstance(parsed, Unreadable):
        assert parsed.path == "w.yml"
        assert parsed.line is None or parsed.line >= 1


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_no_arbitrary_text_crashes_the_reader(text: str) -> None:
    parse_workflow("w.yml", text)


@pytest.mark.parametrize(("on", "expected"), [
    ("on: pull_request", {"pull_request"}),
    ("on: [push, pull_request_target]", {"push", "pull_request_target"}),
    ("on:\n  schedule:\n    - cron: '0 3 * * *'\n  workflow_dispatch:", {"schedule", "workflow_dispatch"}),
    ("name: no trigger", set()),
])
def test_triggers_in_each_form_of_on(on: str, expected: set[str]) -> None:
    assert parse(on + "\njobs: {}\n").triggers == frozenset(expected)


def test_a_job_span_covers_its_node() -> None:
    text = "on: pull_request\njobs:\n  a:\n    steps:\n      - run: echo stage-a\n  b:\n    steps: []\n"
    first, second = parse(text).jobs
    assert "stage-a" in text[first.span[0]:first.span[1]]
    assert "stage-a" not in text[second.span[0]:second.span[1]]


def test_what_the_ci_model_reads_triggers_needs_outputs_and_steps() -> None:
    text = textwrap.dedent("""\
        name: PR Test (AMD)
        on:
          schedule:
            - cron: '0 0 * * *'
          pull_request:
            types: [opened, synchronize]
            paths: ["python/**", "!python/**/*.md"]
            paths-ignore: [docs/**]
          workflow_call:
            inputs:
              run_all: {type: boolean, default: false}
              ref: {type: string}
        jobs:
          changes:
            runs-on: ubuntu-latest
            outputs:
              lib: ${{ steps.filter.outputs.lib }}
            steps:
              - id: filter
                uses: dorny/paths-filter@v3
                with:
                  filters: |
                    lib: [python/**]
                env: {A: "1", B: {nested: true}}
              - run: echo "x=1" >> $GITHUB_OUTPUT
          test:
            name: ${{ format('test ({0})', 'amd') }}
            needs: [changes]
            uses: ./.github/workflows/_run.yml
            with: {suite: stage-b, gpus: 2}
        """)
    parsed = parse_workflow(".github/workflows/x.yml", text)
    assert isinstance(parsed, Workflow)
    assert parsed.name == "PR Test (AMD)"
    pr = parsed.trigger("pull_request")
    assert pr is not None
    assert pr.paths == ("python/**", "!python/**/*.md")
    assert pr.paths_ignore == ("docs/**",)
    assert pr.types == ("opened", "synchronize")
    call = parsed.trigger("workflow_call")
    assert call is not None and call.inputs == (("run_all", "false", "boolean"), ("ref", None, "string"))
    assert parsed.trigger("push") is None
    schedule = parsed.trigger("schedule")
    assert schedule is not None and schedule.paths is None
    changes, test = parsed.jobs
    assert changes.outputs == (("lib", "${{ steps.filter.outputs.lib }}"),)
    first, second = changes.steps
    assert (first.id, first.uses, first.run) == ("filter", "dorny/paths-filter@v3", None)
    assert first.param("filters") == "lib: [python/**]\n"
    assert first.param("missing") is None
    assert first.env == (("A", "1"),)
    assert second.run == 'echo "x=1" >> $GITHUB_OUTPUT' and second.id is None
    assert test.needs == ("changes",)
    assert test.raw_name == "${{ format('test ({0})', 'amd') }}"
    assert test.params == (("suite", "stage-b"), ("gpus", "2"))
    assert changes.needs == () and changes.raw_name is None


def test_a_step_substitutes_the_variables_its_script_assigns() -> None:
    text = textwrap.dedent("""
        on: push
        jobs:
          t:
            runs-on: x
            steps:
              - run: |
                  TORCH_VER="2.10.0"
                  WHEEL="$(ls dist/*.whl)"
                  pip install "torch==${TORCH_VER}" "a==${{ inputs.v }}" "b==$WHEEL"
    """).lstrip("\\n")
    parsed = parse_workflow("w.yml", text)
    assert isinstance(parsed, Workflow)
    (install,) = parsed.jobs[0].steps[0].installs
    assert [(e.spec.text, e.spec.kind) for e in install.entries] == [
        ("torch==2.10.0", "named"), ("a==${{ inputs.v }}", "unresolved"),
        ("b==$WHEEL", "unresolved")]
