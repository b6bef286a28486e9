"""Dockerfile installs: continuations, stages, ARG/ENV, COPY mapping, exec form, heredocs."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.analysis import dockerfile
from bot.analysis.dockerfile import Dockerfile, parse_dockerfile, substitute
from bot.analysis.requirements import Install


def parse(text: str, path: str = "docker/Dockerfile.rocm") -> Dockerfile:
    return parse_dockerfile(path, textwrap.dedent(text).lstrip("\n"))


def specs(install: Install) -> list[tuple[str, int]]:
    return [(e.spec.text, e.line) for e in install.entries]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$A-${A}", "1-1"),
        ("${B:-two}", "two"),
        ("${E:-two}", "two"),
        ("${E-two}", ""),
        ("${A-two}", "1"),
        ("${A:+yes}${B:+no}${E:+no}", "yes"),
        ("${E+set}", "set"),
        ("${B:-${A}}", "1"),
        ("$UNKNOWN ${UNKNOWN}", "$UNKNOWN ${UNKNOWN}"),
        ("${N}", "${N}"),
    ],
)
def test_variables_expand_like_the_shell(text: str, expected: str) -> None:
    assert substitute(text, {"A": "1", "E": "", "N": None}) == expected


def test_continued_run_with_comments_anchors_each_spec_on_its_line() -> None:
    parsed = parse(
        """
        FROM rocm/sgl-dev:latest
        RUN pip install polars \\
            # numba is pinned for the MI350 kernels
            "numba==0.65.1" \\

            xxhash && \\
            pip3 install zstandard
        """
    )
    assert [specs(i) for i in parsed.installs] == [
        [("polars", 2), ("numba==0.65.1", 4), ("xxhash", 6)], [("zstandard", 7)],
    ]
    assert parsed.stages == 1


def test_arg_and_env_values_are_substituted_per_stage() -> None:
    parsed = parse(
        """
        ARG BASE=rocm/sgl-dev:latest
        ARG NUMBA=0.65.1
        ARG TORCH
        FROM ${BASE} AS base
        ARG NUMBA
        ARG TORCH
        ARG POLARS=1.2
        ENV XX_VERSION=3.5.0 ZSTD="0.23.0"
        ENV LEGACY 9.9
        RUN pip install numba==${NUMBA} torch==${TORCH} polars==$POLARS "xxhash==${XX_VERSION}" \\
            zstandard==${ZSTD} legacy==${LEGACY} other==${OTHER:-1.0}
        FROM base AS final
        RUN pip install keep==${XX_VERSION} gone==${POLARS}
        FROM ubuntu
        RUN pip install fresh==${XX_VERSION}
        """
    )
    first, second, third = parsed.installs
    assert [e.spec.text for e in first.entries] == [
        "numba==0.65.1", "torch==${TORCH}", "polars==1.2", "xxhash==3.5.0",
        "zstandard==0.23.0", "legacy==9.9", "other==1.0",
    ]
    assert [e.spec.kind for e in first.entries][1] == "unresolved"
    assert [e.spec.text for e in second.entries] == ["keep==3.5.0", "gone==${POLARS}"]
    assert [e.spec.text for e in third.entries] == ["fresh==${XX_VERSION}"]
    assert parsed.stages == 3


def test_requirements_files_map_back_through_copy() -> None:
    parsed = parse(
        """
        FROM rocm/sgl-dev:latest
        WORKDIR /workspace
        COPY requirements.txt requirements-rocm.txt /tmp/
        COPY ["ci/constraints.txt", "/etc/pip/c.txt"]
        COPY docker/ ./docker
        COPY --from=builder /wheels /wheels
        COPY --chown=1000 reqs/*.txt /reqs/
        ADD extra.txt /opt/extra.txt
        COPY only-one-word
        RUN pip install -r /tmp/requirements-rocm.txt -c /etc/pip/c.txt \\
            -r docker/dev.txt -r /reqs/a.txt -r /opt/extra.txt -r /wheels/r.txt -r /nowhere.txt
        """
    )
    files = parsed.installs[0].files
    assert [(f.text, f.constraint, f.candidates[:2]) for f in files] == [
        ("/tmp/requirements-rocm.txt", False,
         ("requirements-rocm.txt", "docker/requirements-rocm.txt")),
        ("docker/dev.txt", False, ("docker/dev.txt", "docker/docker/dev.txt")),
        ("/reqs/a.txt", False, ("reqs/a.txt", "docker/reqs/a.txt")),
        ("/opt/extra.txt", False, ("extra.txt", "docker/extra.txt")),
        ("/wheels/r.txt", False, ()),
        ("/nowhere.txt", False, ()),
        ("/etc/pip/c.txt", True, ("ci/constraints.txt", "docker/ci/constraints.txt")),
    ]


def test_a_whole_context_copy_and_relative_requirements() -> None:
    parsed = parse(
        """
        FROM python:3.11
        WORKDIR /src
        COPY . .
        RUN pip install -r requirements.txt -r ../../../../escape.txt -r $REQS
        """,
        path="Dockerfile",
    )
    files = parsed.installs[0].files
    assert [f.candidates for f in files] == [("requirements.txt",), (), ()]


def test_a_bind_mount_acts_as_a_copy_for_its_run_only() -> None:
    parsed = parse(
        """
        FROM rocm/sgl-dev:latest
        RUN --mount=type=cache,target=/root/.cache \\
            --mount=type=bind,source=ci/reqs.txt,target=/r.txt \\
            --mount=type=bind,from=builder,source=/x,target=/x \\
            --mount=type=bind,source=y \\
            --mount=type=bind,target=/ctx \\
            pip install -r /r.txt -r /ctx/docker/more.txt \\
            "numba==0.65.1"
        RUN pip install -r /r.txt
        """
    )
    first, second = parsed.installs
    assert [f.candidates[0] for f in first.files] == ["ci/reqs.txt", "docker/more.txt"]
    assert specs(first) == [("numba==0.65.1", 8)]
    assert second.files[0].candidates == ()


def test_exec_form_runs() -> None:
    parsed = parse(
        """
        FROM python:3.11
        RUN ["pip", "install", "numba==0.65.1"]
        RUN ["/bin/bash", "-c", "pip install a==1 &&\\npip install b==2"]
        RUN ["pip", "install", 3]
        RUN [not json] && pip install c==3
        """
    )
    assert [specs(i) for i in parsed.installs] == [
        [("numba==0.65.1", 2)], [("a==1", 3)], [("b==2", 3)], [("c==3", 5)],
    ]


def test_heredoc_bodies_are_the_script_unless_another_program_reads_them() -> None:
    parsed = parse(
        """
        FROM python:3.11
        RUN <<EOF
        set -e
        pip install numba==0.65.1
        EOF
        RUN bash -e <<'SCRIPT'
        pip install polars==1.0
        SCRIPT
        RUN python3 <<EOF
        import pip  # pip install not-this==1
        EOF
        RUN <<-EOF
        \tpip install tabbed==2
        \tEOF
        RUN pip install after==3
        RUN <<EOF
        pip install unterminated==4
        """
    )
    assert [specs(i) for i in parsed.installs] == [
        [("numba==0.65.1", 4)], [("polars==1.0", 7)], [("tabbed==2", 13)], [("after==3", 15)],
        [("unterminated==4", 17)],
    ]


def test_the_escape_directive_changes_the_continuation_character() -> None:
    parsed = parse(
        """
        # escape=`
        FROM mcr.microsoft.com/windows/servercore
        RUN pip install a==1 `
            b==2
        """
    )
    assert specs(parsed.installs[0]) == [("a==1", 3), ("b==2", 4)]


def test_instructions_before_from_and_odd_ones_are_tolerated() -> None:
    parsed = parse(
        """
        ENV X=1
        WORKDIR /x
        COPY a b
        RUN pip install early==1
        FROM --platform=linux/amd64 python:3.11
        ENV
        ARG
        ONBUILD RUN pip install never==1
        RUN echo no pip here
        """
    )
    assert [specs(i) for i in parsed.installs] == [[("early==1", 4)]]


def test_a_failing_instruction_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(self: object, value: str, instr: object) -> None:
        raise ValueError("boom")

    monkeypatch.setattr(dockerfile._Reader, "on_env", explode)
    parsed = parse(
        """
        FROM python:3.11
        ENV A=1
        RUN pip install a==1
        """
    )
    assert [specs(i) for i in parsed.installs] == [[("a==1", 3)]]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from([
    "FROM x\n", "FROM x AS b\n", "FROM b\n", "ARG A=1\n", "ARG A\n", "ENV B ${A}\n", "ENV =\n",
    "COPY a /b/\n", "COPY [\"a\", \"b\"]\n", "WORKDIR c\n", "RUN pip install ", "-r /b/a ",
    "x==$A ", "\\\n", "# c\n", "<<EOF\n", "EOF\n", "RUN --mount=type=bind,target=/b ", "[\"",
    "\n", " ", "`", "\"", "'", "$", "{", "}", "\r\n",
]), max_size=30).map("".join))
def test_no_dockerfile_text_crashes_the_reader(text: str) -> None:
    parse_dockerfile("Dockerfile", text)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_no_arbitrary_text_crashes_the_reader(text: str) -> None:
    parse_dockerfile("Dockerfile", text)


def test_expansion_stops_after_a_few_rounds() -> None:
    assert substitute("${A:-${B:-${C:-${D:-${E:-x}}}}}", {}) == "${A:-x}"


def test_a_continuation_at_the_end_of_the_file() -> None:
    parsed = parse_dockerfile("Dockerfile", "FROM x\nRUN pip install a==1 \\")
    assert [specs(i) for i in parsed.installs] == [[("a==1", 2)]]


def test_copies_to_the_root_and_from_outside_the_context() -> None:
    parsed = parse(
        """
        FROM x
        COPY requirements.txt /
        COPY ../outside.txt /o.txt
        RUN pip install -r /requirements.txt -r /o.txt
        """,
        path="Dockerfile",
    )
    assert [f.candidates for f in parsed.installs[0].files] == [("requirements.txt",), ()]
    parsed = parse(
        """
        FROM x
        COPY . /
        RUN pip install -r /ci/r.txt -r /
        """,
        path="Dockerfile",
    )
    assert [f.candidates for f in parsed.installs[0].files] == [("ci/r.txt",), (".",)]


def test_a_file_of_comments_only() -> None:
    assert parse_dockerfile("Dockerfile", "# escape=`\n# nothing else").installs == ()


def test_only_copies_into_the_file_s_folders_are_consulted() -> None:
    """Copies are set aside by destination first (a Dockerfile of thousands of COPYs and RUNs
    stays linear); a glob copy into a folder above the file, or one that does not match it,
    still lets an earlier copy answer."""
    parsed = parse(
        """
        FROM python:3.11
        COPY . /app/
        COPY ci/req*.txt /app/
        COPY other/ /elsewhere/
        RUN pip install -r /app/sub/dev.txt -r /app/other.txt -r /app/req-rocm.txt
        """,
        path="Dockerfile",
    )
    files = parsed.installs[0].files
    assert [f.candidates for f in files] == [("sub/dev.txt",), ("other.txt",), ("ci/req-rocm.txt",)]


def test_scripts_a_run_starts_map_back_through_copy_and_bases_are_kept() -> None:
    parsed = parse(
        """
        ARG BASE=rocm/sgl-dev:1
        FROM ${BASE} AS build
        COPY docker/install.sh /tmp/install.sh
        RUN bash /tmp/install.sh && echo done
        FROM build
        WORKDIR /w
        COPY . .
        RUN ./scripts/setup.sh $X
        RUN echo run.sh
        """
    )
    assert parsed.bases == ("rocm/sgl-dev:1",)
    assert [(f.text, f.line, f.candidates[:1]) for f in parsed.scripts] == [
        ("/tmp/install.sh", 4, ("docker/install.sh",)),
        ("./scripts/setup.sh", 8, ("scripts/setup.sh",)),
    ]


def test_a_variable_holding_the_pip_command_is_expanded() -> None:
    parsed = parse(
        """
        FROM x
        ARG PIP_INSTALL="python3 -m pip install --no-cache-dir"
        ARG V=2.10.0
        ARG MULTI="pip
        RUN ${PIP_INSTALL} "torchaudio==${V}" && \\
            $PIP_INSTALL a==1 ${NONE:-b} && echo ${PIP_INSTALL:-x}
        RUN echo $V
        """
    )
    assert [specs(i) for i in parsed.installs] == [
        [("torchaudio==2.10.0", 5)], [("a==1", 6), ("b", 6)],
    ]
