"""`pip install` extraction from shell text: forms, options, fallbacks and positions."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.analysis import shell
from bot.analysis.shell import PipCommand, Word, commands, pip_installs, segments, shlex_words


def only(script: str) -> PipCommand:
    found = pip_installs(script)
    assert len(found) == 1, found
    return found[0]


def texts(words: tuple[Word, ...]) -> list[str]:
    return [w.text for w in words]


@pytest.mark.parametrize(
    ("script", "tool"),
    [
        ("pip install numba", "pip"),
        ("pip3 install numba", "pip"),
        ("pip3.11 install numba", "pip"),
        ("/usr/local/bin/pip install numba", "pip"),
        ("python -m pip install numba", "python -m pip"),
        ("python3 -m pip install numba", "python -m pip"),
        ("python3.10 -u -m pip install numba", "python -m pip"),
        ("uv pip install numba", "uv pip"),
        ("sudo -E pip install numba", "pip"),
        ("sudo -u root pip install numba", "pip"),
        ("env PIP_NO_CACHE_DIR=1 pip install numba", "pip"),
        ("PIP_NO_CACHE_DIR=1 pip install numba", "pip"),
        ("time pip install numba", "pip"),
        ("pip -q install numba", "pip"),
        ("docker exec -w /sglang -e X=1 -it ci_sglang pip install numba", "pip"),
        ("docker exec ci_sglang python3 -m pip install numba", "python -m pip"),
    ],
)
def test_every_spelling_of_pip_install_is_recognised(script: str, tool: str) -> None:
    cmd = only(script)
    assert cmd.tool == tool
    assert texts(cmd.specs) == ["numba"]


@pytest.mark.parametrize(
    "script",
    [
        "echo pip install numba",
        "pip download numba",
        "pip uninstall -y numba",
        "python -m venv .venv",
        "python -c 'import pip'",
        "python -m pytest",
        "uv add numba",
        "docker exec -w",
        "docker exec ci_sglang",
        "docker run img pip install numba",
        "pip",
        "python -u",
        "sudo",
        "",
        "   \n",
    ],
)
def test_commands_that_are_not_pip_install_are_ignored(script: str) -> None:
    assert pip_installs(script) == []


def test_quotes_are_removed_and_positions_point_at_the_written_word() -> None:
    script = 'pip install polars "numba==0.65.1" \'xxhash>=3\' --break-system-packages'
    cmd = only(script)
    assert texts(cmd.specs) == ["polars", "numba==0.65.1", "xxhash>=3"]
    assert script[cmd.specs[1].start:cmd.specs[1].end] == '"numba==0.65.1"'
    assert cmd.flags == ("--break-system-packages",)
    assert cmd.start == 0


def test_options_with_values_are_not_taken_for_packages() -> None:
    cmd = only(
        "pip install -i https://pypi.example/simple --extra-index-url=https://x "
        "-f ./wheels --target /opt/site --no-deps -U "
        "-r requirements.txt -rmore.txt --requirement=ci.txt "
        "-c constraints.txt --constraint=c2.txt -e . --editable=git+https://h/o/r@v1#egg=r "
        "--config-settings editable_mode=compat torch"
    )
    assert texts(cmd.specs) == ["torch"]
    assert texts(cmd.requirements) == ["requirements.txt", "more.txt", "ci.txt"]
    assert texts(cmd.constraints) == ["constraints.txt", "c2.txt"]
    assert texts(cmd.editables) == [".", "git+https://h/o/r@v1#egg=r"]
    assert "--no-deps" in cmd.flags and "-U" in cmd.flags


def test_attached_values_sit_at_the_end_of_their_word() -> None:
    script = "pip install -r=reqs.txt --requirement=ci.txt"
    cmd = only(script)
    first, second = cmd.requirements
    assert script[first.start:first.end] == "reqs.txt"
    assert script[second.start:second.end] == "ci.txt"


def test_double_dash_ends_the_options() -> None:
    cmd = only("pip install -- -weird-name numba")
    assert texts(cmd.specs) == ["-weird-name", "numba"]


def test_an_option_missing_its_value_at_the_end_is_harmless() -> None:
    cmd = only("pip install numba -r")
    assert texts(cmd.specs) == ["numba"]
    assert cmd.requirements == ()


def test_several_commands_and_compound_statements() -> None:
    script = (
        "set -e\n"
        "pip install -e . --no-deps && pip install a==1; pip3 install b | tee log\n"
        "if [ -n \"$X\" ]; then pip install c; fi\n"
        "for i in 1 2; do python -m pip install d; done\n"
        "(cd sub && uv pip install e)\n"
        "x=$(pip install f)\n"
    )
    found = pip_installs(script)
    assert [texts(c.specs) for c in found] == [[], ["a==1"], ["b"], ["c"], ["d"], ["e"], ["f"]]
    assert [script.count("\n", 0, c.start) for c in found] == [1, 1, 1, 2, 3, 4, 5]


def test_line_continuations_keep_each_spec_on_its_own_line() -> None:
    script = "pip install \\\n  polars \\\n  numba==1 \\\n  --no-deps"
    cmd = only(script)
    assert [script.count("\n", 0, w.start) for w in cmd.specs] == [1, 2]


@pytest.mark.parametrize(
    "script",
    [
        "case $GPU in mi300) pip install a==1;; mi350) pip install b==2;; esac",
        "echo $((1 + 2)) && pip install a==1 && pip install b==2",
        "[[ -n $X ]] && pip install a==1\npip install b==2",
    ],
)
def test_constructs_bashlex_cannot_parse_fall_back_per_segment(script: str) -> None:
    found = pip_installs(script)
    assert [texts(c.specs) for c in found] == [["a==1"], ["b==2"]]
    for cmd in found:
        spec = cmd.specs[0]
        assert script[spec.start:spec.end] == spec.text


def test_redirections_in_a_fallback_segment_are_not_packages() -> None:
    found = pip_installs("pip install a==1 > log 2>&1 >>x $((1))")
    assert [texts(c.specs) for c in found] == [["a==1", "$((1))"]]


def test_unclosed_quotes_fall_back_to_whitespace_words() -> None:
    found = pip_installs('[[ x ]] && pip install "a==1 b')
    assert [texts(c.specs) for c in found] == [['"a==1', "b"]]


def test_bash_dash_c_is_read_inside() -> None:
    script = "bash -c 'pip install a==1 && pip install b'"
    found = pip_installs(script)
    assert [texts(c.specs) for c in found] == [["a==1"], ["b"]]
    assert script[found[0].specs[0].start:found[0].specs[0].end] == "a==1"


def test_sh_dash_c_with_an_unquoted_script() -> None:
    assert [texts(c.specs) for c in pip_installs("sh -ec pip")] == []
    assert pip_installs("bash --norc x y") == []
    assert pip_installs("bash -x script.sh") == []


def test_nested_shells_stop_at_the_depth_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell, "MAX_DEPTH", 0)
    assert pip_installs("bash -c 'pip install a'") == []


def test_segments_respect_quotes_escapes_and_comments() -> None:
    script = "a 'x;y' \"p\\\"q;r\" && b\\;c # d; e\nf"
    spans = [script[s:e] for s, e in segments(script)]
    assert spans == ["a 'x;y' \"p\\\"q;r\" ", " b\\;c ", "f"]
    assert segments("# only a comment") == []


def test_shlex_words_know_where_they_start() -> None:
    words = shlex_words("  pip  'install'  x", 10)
    assert [(w.text, w.start) for w in words] == [("pip", 12), ("install", 17), ("x", 28)]


def test_commands_of_an_empty_script() -> None:
    assert commands("") == []
    assert commands("   ") == []


def test_a_segment_of_only_spaces_is_skipped() -> None:
    assert [texts(c.specs) for c in pip_installs("[[ x ]] ; ; pip install a")] == [["a"]]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from([
    "pip install ", "python -m pip install ", "uv pip install ", "-r ", "-e ", "--", "x==1 ",
    "'", '"', "\\", "\n", "&&", "||", ";", "|", "(", ")", "$(", "${", "}", "$((", "[[ ", "]]",
    "case ", " in ", "esac", "#", "bash -c ", "<<EOF\n", "EOF\n", " ", "a", "=",
]), max_size=30).map("".join))
def test_no_shell_text_crashes_the_extractor(script: str) -> None:
    for cmd in pip_installs(script):
        for word in (*cmd.specs, *cmd.requirements, *cmd.constraints, *cmd.editables):
            assert 0 <= word.start <= len(script)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_no_arbitrary_text_crashes_the_extractor(script: str) -> None:
    pip_installs(script)


def test_a_command_sent_into_a_container_keeps_the_container() -> None:
    script = (
        "docker exec -w /x ci_sglang pip install 'a==1'\n"
        'docker exec ci_sglang bash -c "pip install b==2 && pip install -e ."\n'
        "pip install c\n"
    )
    found = pip_installs(script)
    assert [(c.container, texts(c.specs) + texts(c.editables)) for c in found] == [
        ("ci_sglang", ["a==1"]), ("ci_sglang", ["b==2"]), ("ci_sglang", ["."]), (None, ["c"]),
    ]
    assert script[found[1].specs[0].start:found[1].specs[0].end] == "b==2"


def test_a_wrapper_function_of_the_script_is_skipped() -> None:
    script = (
        "install_with_retry() {\n  \"$@\"\n}\n"
        "function quietly { \"$@\" > /dev/null; }\n"
        "install_with_retry docker exec ci pip install 'a==1'\n"
        "quietly pip install b\n"
        "unknown_wrapper pip install c\n"
    )
    found = pip_installs(script)
    assert [(c.container, texts(c.specs)) for c in found] == [("ci", ["a==1"]), (None, ["b"])]


def test_a_docker_exec_without_a_container_name_names_none() -> None:
    assert shell._container([Word("docker", 0, 6), Word("exec", 7, 11)], frozenset()) is None


@pytest.mark.parametrize(
    ("script", "runs"),
    [
        ("bash scripts/ci/install.sh arg", ["scripts/ci/install.sh"]),
        ("sh -ex ./install.sh", ["./install.sh"]),
        ("./scripts/setup.sh && pip install x", ["./scripts/setup.sh"]),
        ("source env.sh\n. other.sh", ["env.sh", "other.sh"]),
        ("sudo -E bash docker/install.sh", ["docker/install.sh"]),
        ("bash -c 'x.sh'", []),
        ("bash --norc", []),
        ("bash run.py", []),
        ("echo run.sh", []),
        ("X=1", []),
        ("sudo A=b.sh", []),
        ("pip install x", []),
    ],
)
def test_the_shell_scripts_a_script_runs(script: str, runs: list[str]) -> None:
    assert [w.text for w in shell.script_runs(script)] == runs


def test_branches_of_if_elif_else_and_case_are_told_apart() -> None:
    from bot.analysis.shell import branches

    script = (
        'if [ "$A" = 1 ]; then pip install a==1; elif true; then pip install a==2; else\n'
        "  pip install a==3\nfi\n"
        'case "$X" in\n  x|y) pip install b==1 ;;\n  *) pip install b==2 ;;\nesac\n'
        "pip install c\n"
    )
    at = branches(script)
    found = [at(script.index(text)) for text in
             ("a==1", "a==2", "a==3", "b==1", "b==2", "pip install c")]
    if_at, case_at = script.index("if"), script.index("case")
    assert found == [((if_at, 1),), ((if_at, 2),), ((if_at, 3),),
                     ((case_at, 1),), ((case_at, 2),), ()]


def test_pip_installs_keep_their_branches_inside_bash_c() -> None:
    script = 'bash -c "if x; then pip install a==1; else pip install a==2; fi"'
    first, second = pip_installs(script)
    assert len(first.branches) == len(second.branches) == 1
    assert first.branches[0][0] == second.branches[0][0] and first.branches != second.branches


def test_assignments_give_the_values_known_at_an_install() -> None:
    from bot.analysis.dockerfile import substitute
    from bot.analysis.shell import assignments, branches, values_at

    script = ('X=1\nif a; then Y=2; fi\nV="$(cat f)"\nexport Z=3 W=${X}.5\n'
              "pip install x\n")
    found = assignments(script)
    assert [(a.name, a.value) for a in found] == [
        ("X", "1"), ("Y", "2"), ("V", None), ("Z", "3"), ("W", "${X}.5")]
    at = script.index("pip")
    known, unknown = values_at(found, at, branches(script)(at), substitute)
    assert known == {"X": "1", "Y": None, "V": None, "Z": "3", "W": "1.5"}
    assert unknown == {"Y", "V"}
