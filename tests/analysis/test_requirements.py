"""Requirement specs and requirements files: names, pins, git URLs, paths, markers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.analysis.requirements import (
    Spec,
    allows,
    git_url,
    install_from,
    parse_editable,
    parse_requirements,
    parse_spec,
    relative_candidates,
    same_pin,
)
from bot.analysis.shell import pip_installs


def test_names_are_normalised_and_extras_ignored() -> None:
    spec = parse_spec("Numba_Fast.X[cuda,extra]==0.65.1")
    assert (spec.kind, spec.name, spec.specifier) == ("named", "numba-fast-x", "==0.65.1")
    assert spec.pin == ("version", "0.65.1")
    assert spec.shown == "==0.65.1"
    assert spec.requirement == "Numba_Fast.X[cuda,extra]==0.65.1"


@pytest.mark.parametrize(
    ("text", "pin"),
    [
        ("numba==0.65.1", ("version", "0.65.1")),
        ("numba===0.65.1", ("version", "0.65.1")),
        ("numba==0.65.*", None),
        ("numba>=0.60,<0.70", None),
        ("numba", None),
        ("numba @ https://example.invalid/numba-0.65.1.whl",
         ("url", "https://example.invalid/numba-0.65.1.whl")),
    ],
)
def test_only_an_exact_version_or_a_direct_reference_is_a_pin(
    text: str, pin: tuple[str, ...] | None,
) -> None:
    assert parse_spec(text).pin == pin


def test_shown_forms() -> None:
    assert parse_spec("numba").shown == "any"
    assert parse_spec("numba>=1").shown == ">=1"
    assert parse_spec("git+https://github.com/o/r").shown == "git (no ref)"
    assert parse_spec("git+https://github.com/o/r@abc").shown == "@abc"
    assert parse_spec("r @ https://h/r.whl").shown == "@ https://h/r.whl"


@pytest.mark.parametrize(
    ("text", "repo", "ref", "name"),
    [
        ("git+https://github.com/sgl-project/sglang.git@v0.4.1#subdirectory=python",
         "github.com/sgl-project/sglang", "v0.4.1", "sglang"),
        ("git+https://github.com/Org/Lib@1a2b3c#egg=Fancy_Lib[x]", "github.com/org/lib", "1a2b3c",
         "fancy-lib"),
        ("git+ssh://git@github.com/org/lib.git@v1", "github.com/org/lib", "v1", "lib"),
        ("git+git@github.com:org/lib.git@v2", "github.com/org/lib", "v2", "lib"),
        ("lib @ git+https://github.com/org/lib.git@v3", "github.com/org/lib", "v3", "lib"),
        ("git+https://github.com/org/lib.git/", "github.com/org/lib", None, "lib"),
        ("git+https://github.com/org/lib.git@", "github.com/org/lib", None, "lib"),
    ],
)
def test_git_urls_compare_by_repository_and_ref(
    text: str, repo: str, ref: str | None, name: str,
) -> None:
    spec = parse_spec(text)
    assert (spec.kind, spec.url, spec.ref, spec.name) == ("git", repo, ref, name)
    assert spec.pin == (("git", repo, ref) if ref else None)


def test_a_git_url_that_does_not_parse_is_kept_whole() -> None:
    assert git_url("git+https://[broken") == ("https://[broken", None, None, "")


def test_a_git_url_without_a_repository_name() -> None:
    spec = parse_spec("git+file:")
    assert spec.kind == "git" and spec.name is None and not spec.is_package


@pytest.mark.parametrize(
    "text",
    [".", "..", "./python", "./python[all]", ".[dev]", "/opt/wheels/x.whl", "~/src", "python/",
     "file:///tmp/x", "torch-2.5.1-cp311-linux_x86_64.whl", "https://h/pkg-1.0.tar.gz",
     "dist/pkg.zip"],
)
def test_paths_wheels_and_archives_are_not_named_packages(text: str) -> None:
    spec = parse_spec(text)
    assert spec.kind == "local" and not spec.is_package


@pytest.mark.parametrize("text", ["numba==${NUMBA}", "x==${{ inputs.v }}", "$PKG"])
def test_specs_holding_variables_are_unresolved(text: str) -> None:
    assert parse_spec(text).kind == "unresolved"


def test_text_that_is_no_requirement_is_invalid() -> None:
    spec = parse_spec("numba ==")
    assert spec.kind == "invalid" and spec.name is None


@pytest.mark.parametrize(
    ("marker", "applies"),
    [
        ("sys_platform == 'linux'", "always"),
        ("sys_platform == 'win32'", "never"),
        ("python_version >= '3.12'", "sometimes"),
        ("extra == 'gpu'", "never"),
        ("platform_release ~= 'abc'", "sometimes"),
    ],
)
def test_markers_are_evaluated_for_linux_cpython(marker: str, applies: str) -> None:
    spec = parse_spec(f"numba==1; {marker}")
    assert spec.applies == applies
    assert spec.is_package is (applies != "never")
    assert spec.requirement == "numba==1"


def test_pins_compare_per_pep_440() -> None:
    a, b = parse_spec("numba==0.65.1"), parse_spec("numba==0.65.1.0")
    assert same_pin(a, b)
    assert not same_pin(a, parse_spec("numba==0.65.2"))
    assert same_pin(parse_spec("x===weird"), parse_spec("x===weird"))
    assert not same_pin(parse_spec("x===weird"), parse_spec("x===other"))
    assert not same_pin(a, parse_spec("numba"))
    git = parse_spec("numba @ git+https://h/o/numba@1")
    assert not same_pin(a, git)
    assert same_pin(git, parse_spec("git+https://h/o/numba.git@1"))


def test_a_range_allows_the_pins_it_contains() -> None:
    pinned = parse_spec("numba==0.65.1")
    assert allows(parse_spec("numba"), pinned)
    assert allows(parse_spec("numba>=0.60"), pinned)
    assert not allows(parse_spec("numba<0.60"), pinned)
    assert allows(parse_spec("numba<0.60"), parse_spec("numba @ git+https://h/o/n@1"))
    assert allows(parse_spec("numba<0.60"), parse_spec("numba"))
    assert allows(parse_spec("x<1"), parse_spec("x===weird"))
    assert allows(parse_spec("git+https://h/o/numba"), pinned)
    loose = Spec("numba~=", "named", "numba", "~=")
    assert allows(loose, pinned)


def test_requirements_files_are_read_like_pip_reads_them() -> None:
    text = (
        "# pins for the image\r\n"
        "--index-url https://pypi.example/simple\n"
        "numba==0.65.1 --hash=sha256:abc \\\n"
        "    --hash=sha256:def\n"
        "polars>=1.0  # a comment\n"
        "\n"
        "-r ../base.txt\n"
        "--requirement=extra.txt\n"
        "-rci.txt\n"
        "-c constraints.txt\n"
        "-e .\n"
        "--editable git+https://h/o/lib@v1#egg=lib\n"
        "-e\n"
        "pywin32; sys_platform == 'win32'\n"
        "url#not-a-comment\n"
        "trailing \\"
    )
    parsed = parse_requirements("docker/requirements.txt", text)
    got = [(e.spec.text, e.line) for e in parsed.entries]
    assert got == [
        ("numba==0.65.1", 3), ("polars>=1.0", 5), (".", 11), ("git+https://h/o/lib@v1#egg=lib", 12),
        ("pywin32; sys_platform == 'win32'", 14), ("url#not-a-comment", 15), ("trailing", 16),
    ]
    assert [(f.text, f.line, f.constraint, f.candidates) for f in parsed.files] == [
        ("../base.txt", 7, False, ("base.txt",)),
        ("extra.txt", 8, False, ("docker/extra.txt",)),
        ("ci.txt", 9, False, ("docker/ci.txt",)),
        ("constraints.txt", 10, True, ("docker/constraints.txt",)),
    ]


def test_a_comment_on_the_last_continued_line() -> None:
    parsed = parse_requirements("r.txt", "numba==1 \\\n# gone \\")
    assert [e.spec.text for e in parsed.entries] == ["numba==1"]
    assert parse_requirements("r.txt", "# only \\").entries == ()


@pytest.mark.parametrize(
    ("base", "text", "expected"),
    [
        (".", "requirements.txt", ("requirements.txt",)),
        ("ci", "../requirements.txt", ("requirements.txt",)),
        (".", "../outside.txt", ()),
        (".", "..", ()),
        (".", "/abs/requirements.txt", ()),
        (".", "$DIR/requirements.txt", ()),
        (".", "", ()),
    ],
)
def test_relative_paths_become_repository_paths(
    base: str, text: str, expected: tuple[str, ...],
) -> None:
    assert relative_candidates(base, text) == expected


def test_an_install_is_built_from_a_command() -> None:
    script = "pip install numba==$V -r reqs.txt -c c.txt -e ."
    cmd = pip_installs(script)[0]
    install = install_from(
        cmd, lambda pos: 7, lambda t: t.replace("$V", "1"), lambda t: (f"x/{t}",),
    )
    assert install.line == 7 and install.tool == "pip"
    assert [e.spec.text for e in install.entries] == ["numba==1", "."]
    assert [(f.text, f.constraint, f.candidates) for f in install.files] == [
        ("reqs.txt", False, ("x/reqs.txt",)), ("c.txt", True, ("x/c.txt",)),
    ]


@pytest.mark.parametrize(
    ("text", "kind", "name"),
    [
        ("python", "local", None), ("python[all_hip]", "local", None), (".", "local", None),
        ("../lib", "local", None), ("file:///w/x", "local", None),
        ("git+https://github.com/org/lib@main#egg=lib", "git", "lib"),
        ("lib @ git+https://github.com/org/lib@main", "git", "lib"),
        ("name @ https://x.org/name.whl", "named", "name"), ("$X", "unresolved", None),
    ],
)
def test_the_target_of_an_editable_install_is_a_path_or_a_vcs_url(
    text: str, kind: str, name: str | None,
) -> None:
    spec = parse_editable(text)
    assert (spec.kind, spec.name) == (kind, name)


def test_bare_names_carry_the_folders_they_may_be() -> None:
    cmd = pip_installs('docker exec c pip install "python[all]" torch==2 ./x -e "python[hip]"')[0]
    install = install_from(cmd, lambda pos: 1, lambda t: t, lambda t: (f"w/{t}",))
    assert [(e.spec.kind, e.folders, e.extras) for e in install.entries] == [
        ("named", ("w/python",), ()), ("named", (), ()), ("local", (), ()),
        ("local", ("w/python",), ("hip",)),  # a project installed with extras: its folder
    ]
    assert install.container == "c"
    listed = parse_requirements("r.txt", "-e python\n-e git+https://h/o/lib@1#egg=lib\n")
    assert [e.spec.kind for e in listed.entries] == ["local", "git"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_no_text_crashes_the_requirements_reader(text: str) -> None:
    parse_requirements("requirements.txt", text)
    parse_spec(text)
