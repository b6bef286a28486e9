"""The parsers under hostile files: they never raise, and pathological files are read to the end.

Every file of a PR is read by one of these parsers before anyone looks at it, so a file that
makes one crash or run for minutes is a denial of service on the bot. The pathological inputs
below (CORPORA) are parsed here at half their size, under pytest-timeout's guard against a hang; how
their time grows with their size (linear: 4x for 4x the size; quadratic: 16x) and how it
compares with a benign file of the same size is measured by `bench/parsers.py`, as ratios, where
a loaded machine cannot turn a slow second into a failed test.

Sizes (bench/parsers.py's; halved here): 200 KB for the parsers that are pure Python or C;
100 KB where every input reaches bashlex (Dockerfiles, workflows), which parses about 100 KB a
second. A parse that hangs, hangs at half the size too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.analysis.dockerfile import parse_dockerfile
from bot.analysis.engine import audit
from bot.analysis.markers import find_markers
from bot.analysis.requirements import parse_requirements, parse_spec
from bot.analysis.shell import pip_installs
from bot.analysis.source import Module, Unreadable, parse_python
from bot.analysis.tree import FolderTree
from bot.analysis.workflows import parse_workflow
from config.repo import parse_config
from config.yamlload import ExpansionError, expanded_size

SHRINK = 2  # the tests parse CORPORA at half the size bench/parsers.py measures
HANG = 300  # seconds: pytest-timeout's guard for one parse of a hostile file (it takes about one)
NAMES = {"register_rocm_ci": "rocm", "register_amd_ci": "rocm", "register_cuda_ci": "cuda"}

Build = Callable[[int], str]


def _fill(unit: str, head: str = "", tail: str = "") -> Build:
    return lambda size: head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


def _pair(opening: str, closing: str, head: str = "", tail: str = "") -> Build:
    def build(size: int) -> str:
        n = max(1, (size - len(head) - len(tail)) // (len(opening) + len(closing)))
        return head + opening * n + closing * n + tail

    return build


def _lines(template: str, head: str = "", tail: str = "") -> Build:
    """Distinct lines (``{i}`` numbered), so no cache makes the benign case look cheap."""

    def build(size: int) -> str:
        out, total, i = [head], len(head), 0
        while total < size - len(tail):
            line = template.format(i=i)
            out.append(line)
            total += len(line)
            i += 1
        return "".join([*out, tail])

    return build


# ------------------------------------------------------------------------------ parsers


def _python(text: str) -> object:
    module = parse_python("tests/test_x.py", text)
    return find_markers(module, NAMES) if isinstance(module, Module) else module


def _workflow(text: str) -> object:
    return parse_workflow(".github/workflows/ci.yml", text)


def _dockerfile(text: str) -> object:
    return parse_dockerfile("docker/Dockerfile.rocm", text)


def _requirements(text: str) -> object:
    return parse_requirements("requirements.txt", text)


def _config(text: str) -> object:
    return parse_config(text)


STEP = "      - run: pip install a{i}==1 b{i}==2\n"
RUN = "jobs:\n  j:\n    steps:\n      - run: "

# parser, size, benign builder, pathological builders
CORPORA: dict[str, tuple[Callable[[str], object], int, Build, dict[str, Build]]] = {
    "python": (_python, 200_000, _lines('register_rocm_ci(est_time={i}, suite="s")\nx{i} = f(a, b=1)\n'), {
        "deep parens": _pair("(", ")", head="x = "),
        "deep lists": _pair("[", "]", head="x = "),
        "deep lambdas": _fill("lambda: ", head="x = ", tail="1\n"),
        "deep unary": _fill("-", head="x = ", tail="1\n"),
        "attribute chain": _fill(".b", head="x = a", tail="\n"),
        "call chain": _fill("(0)", head="x = a", tail="\n"),
        "long sum": _fill("+x", head="x = x", tail="\n"),
        "long string": _fill("a", head="x = '", tail="'\n"),
        "odd line breaks": _fill("x = 1\r\x0c\v"),
        "null bytes": _fill("x = 1\n\0"),
        "markers of expressions": _lines("register_rocm_ci(est_time=f({i}), suite=g, disabled=h)\n"),
        "markers of huge literals": _lines("register_rocm_ci(est_time=1e999, suite='{i}', labels=[[1]])\n"),
        "markers of huge ints": _fill("register_rocm_ci(est_time=1" + "0" * 400 + ", suite='s')\n"),
        "marker spanning the file": _fill("a +\n", head="register_rocm_ci(est_time=f(\n",
                                          tail="a), suite='s')\n"),
    }),
    "requirements": (_requirements, 200_000, _lines("pkg-{i}[x]=={i}.2.3 ; python_version >= '3.8' # c\n"), {
        "runs of spaces": _fill(" ", head="a", tail="b\n"),
        "spaces around extras": lambda n: "a" + " " * (n // 2) + "[x]" + " " * (n // 2) + "b\n",
        "continuations": _fill("\\\n", head="a"),
        "comments": _fill(" #"),
        "marker chain": _fill(" and python_version > '3'", head="a; python_version > '3'", tail="\n"),
        "marker parens": _pair("(", ")", head="a; ", tail="\n"),
        "extras": _fill("x,", head="a[", tail="]\n"),
        "long version": _fill("1.", head="a==", tail="1\n"),
        "many specifiers": _fill(",>=1", head="a>=1", tail="\n"),
        "git refs": _fill("a@", head="git+https://e.example/y@", tail="\n"),
        "scp-like url": _fill("a", head="git+", tail="@b:c\n"),
        "file options": _lines("-r x{i}\n"),
        "at signs": _fill("a @", tail="\n"),
    }),
    "config": (_config, 200_000, _lines('  - "tests/**/test_{i}.py"\n', head="tests:\n"), {
        "unknown keys": _lines("key{i}: 1\n"),
        "deep lists": _pair("[", "]"),
        "deep maps": _pair("{a: ", "}"),
        "long list": _fill("x, ", head="exclude: [", tail="x]\n"),
        "anchors": _lines("a{i}: &a{i} x\n"),
    }),
    "workflow": (_workflow, 100_000, _lines("  j{i}:\n    steps:\n" + STEP * 2, head="jobs:\n"), {
        "unclosed expressions": _fill("${{ ", head=RUN + "|\n          pip install x "),
        "expressions in words": _fill("a${{ x }} ", head=RUN + "|\n          pip install "),
        "folded lines": _lines("          pip install pkg{i}==1\n", head=RUN + ">\n"),
        "plain scalar words": _lines("          x{i}==1\n", head=RUN + "pip install\n"),
        "quoted escapes": _fill("\\x41 ", head=RUN + '"pip install ', tail='"\n'),
        "literal lines": _lines("          pip install a{i}==1\n", head=RUN + "|\n"),
        "deep flow": _pair("[", "]"),
        "many jobs": _lines("  j{i}: {{runs-on: x, steps: [{{run: echo}}]}}\n", head="jobs:\n"),
    }),
    "dockerfile": (_dockerfile, 100_000, _lines("RUN pip install a{i}==1 b{i}==2\n", head="FROM x\n"), {
        "nested defaults": _pair("${A:-", "}", head="FROM x\nARG B=", tail="\nRUN pip install $B\n"),
        "many variables": _fill("$A", head="FROM x\nARG A=" + "a" * 40 + "\nRUN pip install ", tail="\n"),
        "continuations": _fill("  echo \\\n", head="FROM x\nRUN pip install x \\\n", tail="  true\n"),
        "continued comments": _fill("# c\n", head="FROM x\nRUN pip install x \\\n", tail="  y\n"),
        "heredoc starts": _fill("RUN <<EOF\n", head="FROM x\n"),
        "heredoc body": _lines("pip install a{i}==1\n", head="FROM x\nRUN <<EOF\n", tail="EOF\n"),
        "escape directive": _fill("RUN pip install a `\n", head="# escape=`\nFROM x\n"),
        "exec form": _fill('"a", ', head='FROM x\nRUN ["pip", "install", ', tail='"b"]\n'),
        "mount flags": _fill("--mount=type=bind,source=a,target=/b ", head="FROM x\nRUN ",
                             tail="pip install -r /b/r.txt\n"),
        "copies then runs": lambda n: _lines("COPY a{i} /d{i}/\n", head="FROM x\n")(n // 2)
        + _lines("RUN pip install -r /zz/r{i}.txt\n")(n // 2),
        "stages": _lines("FROM s{i} AS t{i}\nCOPY a{i} /b{i}/\n"),
        "environment": _lines("ENV A{i}=x\n", head="FROM x\n"),
        "blank lines": _fill("\n", head="FROM x\nRUN pip install x \\\n", tail="y\n"),
    }),
}


CASES = [(corpus, name) for corpus, (_, _, _, cases) in CORPORA.items() for name in cases]


@pytest.mark.timeout(HANG)
@pytest.mark.parametrize(("corpus", "case"), CASES, ids=[f"{c}: {n}" for c, n in CASES])
def test_pathological_files_are_read_to_the_end(corpus: str, case: str) -> None:
    parse, size, _, cases = CORPORA[corpus]
    size //= SHRINK
    text = cases[case](size)
    assert len(text) >= size // 2
    assert parse(text) is not None  # returned, whatever it made of the file


# ------------------------------------------------------------------------------ YAML bombs


def _laughs(levels: int, width: int, leaf: str) -> str:
    lines = [f"a0: &a0 {leaf}"]
    lines.extend(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels))
    return "\n".join(lines) + "\n"


def _merge_bomb(levels: int, width: int) -> str:
    lines = ["x0: &x0 {a: 1}"]
    lines.extend(f"x{i}: &x{i} {{<<: [" + ", ".join([f"*x{i - 1}"] * width) + "]}" for i in range(1, levels))
    return "\n".join(lines) + f"\njobs:\n  j:\n    <<: *x{levels - 1}\n    steps: []\n"


BOMBS = {
    "billion laughs": _laughs(10, 10, "{run: pip install a==1}") + "jobs:\n  j:\n    steps: *a9\n",
    "merge keys": _merge_bomb(9, 10),
    "steps shared by jobs": "s: &s {run: 'pip install a==1 b==2 c==3'}\nst: &st [" + ", ".join(["*s"] * 300)
    + "]\njobs:\n" + "".join(f"  j{i}: {{steps: *st}}\n" for i in range(300)),
    "a long script repeated": "s: &s {run: 'pip install " + "x " * 20_000 + "'}\njobs:\n  j:\n    steps: ["
    + ", ".join(["*s"] * 200) + "]\n",
    "recursive alias": "jobs: &j\n  a: *j\n",
    "recursive merge": "jobs: &j\n  a:\n    <<: *j\n",
}


@pytest.mark.timeout(HANG)
@pytest.mark.parametrize("name", list(BOMBS))
def test_yaml_bombs_are_refused_before_anything_walks_them(name: str) -> None:
    text = BOMBS[name]
    workflow = parse_workflow(".github/workflows/ci.yml", text)
    config = parse_config(text)
    assert isinstance(workflow, Unreadable) and workflow.reason.startswith("skipped: ")
    assert workflow.finding().rule == "REG004"
    assert [p.message.split(":")[0] for p in config.problems] == ["refused"]


def test_ordinary_anchors_are_still_read() -> None:
    text = (
        "defaults: &setup\n  - run: pip install a==1\n  - run: pip install b==2\n"
        "jobs:\n" + "".join(f"  j{i}:\n    steps: *setup\n" for i in range(20))
        + "  merged:\n    <<: {name: shared}\n    steps: *setup\n"
    )
    workflow = parse_workflow(".github/workflows/ci.yml", text)
    assert not isinstance(workflow, Unreadable)
    assert len(workflow.jobs) == 21 and all(len(j.steps) == 2 for j in workflow.jobs)
    assert workflow.jobs[-1].name == "shared"


def test_expanded_size_counts_each_reference_and_stops_at_the_limit() -> None:
    import yaml

    node = yaml.compose(_laughs(4, 3, "ab"))
    assert node is not None
    assert expanded_size(node, 10**9) > expanded_size(yaml.compose("a0: ab\n") or node, 10**9)
    assert expanded_size(node, 50) == 51  # saturates just past the limit
    with pytest.raises(ExpansionError):
        expanded_size(yaml.compose("&a [*a]") or node, 100)


ARG_BOMB = "FROM x\nARG A0=xxxxxxxxxx\n" + "".join(
    f"ARG A{i}=" + f"$A{i - 1}" * 10 + "\n" for i in range(1, 12)) + "RUN pip install $A11\n"


@pytest.mark.timeout(HANG)
def test_dockerfile_variable_expansion_is_bounded() -> None:
    text = ARG_BOMB
    (install,) = parse_dockerfile("Dockerfile", text).installs
    assert all(len(e.spec.text) <= 1 << 16 for e in install.entries)


@pytest.mark.parametrize("script", ["X='${'", "pip install a='${' b==1", "Y='${a' && pip install c",
                                    "#bash -c <<EOF\n='<<EOF\nbash -c \\ in <<EOF\n<<EOF\n${'"])
def test_an_unclosed_parameter_expansion_does_not_hang_the_shell_reader(script: str) -> None:
    """bashlex 0.18 loops for ever on a `${` that no `}` closes inside a word (found by
    tests/analysis/test_shell.py's fuzzing): a `run:` line `X='${'` held a worker for good."""
    import threading

    done: list[object] = []
    reader = threading.Thread(target=lambda: done.append(pip_installs(script)), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert done, "the shell reader did not return"
    body = script.replace("\n", "\n          ")
    wf = _workflow(f"jobs:\n  j:\n    steps:\n      - run: |\n          {body}\n          pip install z\n")
    assert not isinstance(wf, Unreadable)


# ------------------------------------------------------------------------------ Hypothesis

FRAGMENTS = {
    "python": ["register_rocm_ci(", "register_amd_ci(", ")", "(", "est_time=", "suite=", "disabled=",
               "labels=", "nightly=", "'s'", '"x"', "1e999", "10**400", "[", "]", "{", "}", ",", "*", "**",
               "\n", " ",
               "\\\n", "lambda: ", "None", "True", "f'{x}'", "#", "'''", "\t", "\0", "\ufeff", ":", "1" * 50],
    "dockerfile": ["FROM x\n", "FROM x AS b\n", "ARG A=", "ENV B ", "$A", "${A:-", "${B:+", "}", "RUN ",
                   "pip install ", "-r ", "/r.txt", "COPY a /b/\n", "ADD . /w\n", "WORKDIR /w\n", "\\\n",
                   "\n", "<<EOF\n", "EOF\n", "# escape=`\n", "`\n", '["pip", "install", "x"]',
                   "--mount=type=bind,target=/m ",
                   "&&", "'", '"', "#", " ", "==1", "bash -c '", "${{", "\0"],
    "shell": ["pip install ", "python -m pip install ", "uv pip install ", "bash -c \"", "sudo -E ",
              "env A=1 ",
              "docker exec c ", "-r ", "-e ", "--index-url ", "&&", "||", ";", "|", "&", "\n", "'", '"', "\\",
              "$(", ")", "${", "}", "<<EOF\n", "EOF\n", "#", " ", "a==1", "2>&1", "case x in a) ", "esac",
              "a='${'", "`", "$'"],
    "workflow": ["jobs:\n", "  j:\n", "    steps:\n", "      - run: ", "|\n", ">\n",
                 "        pip install x==1\n",
                 "${{ inputs.x }}", "${{ ", "}}", "&a ", "*a", "<<: *a\n", "[", "]", "{", "}", "'", '"', ": ",
                 "- ", "\n", "  ", "if: ${{ false }}\n", "shell: bash\n", "uses: ./.github/workflows/x.yml\n",
                 "working-directory: d\n", "defaults:\n  run:\n", "!!binary ", "? ", "%YAML 1.1\n", "---\n"],
    "requirements": ["a", "==1", ">=1,<2", "[x]", "; python_version < '3.9'", " and ", " or ", "(", ")", "@ ",
                     "git+https://e.example/r.git@v1", "#egg=x", " #", "\\\n", "\n", "-r ", "-c ", "-e ",
                     "--hash=",
                     " ", "\t", "file:", "./x", ".whl", "$X", "~=", "===", "!", "*"],
    "config": ["tests:\n", "  - ", "x\n", "markers:\n", "  f: rocm\n", "dispatch:\n", "  trusted_teams: [",
               "]",
               "max_file_bytes: ", "1\n", "&a ", "*a", "<<: *a\n", "{", "}", "[", "]", ": ", "\n", "  ", "- ",
               "!!python/object:os.system ", "? ", "---\n", "'", "\t", "suites:\n", "  s: {gpus: -1}\n"],
}
PARSERS: dict[str, Callable[[str], object]] = {
    "python": _python, "dockerfile": _dockerfile, "shell": pip_installs, "workflow": _workflow,
    "requirements": _requirements, "config": _config,
}
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _texts(parser: str) -> st.SearchStrategy[str]:
    pieces = st.one_of(st.sampled_from(FRAGMENTS[parser]), st.text(max_size=3))
    return st.lists(pieces, max_size=40).map("".join)


@pytest.mark.parametrize("parser", list(PARSERS))
def test_no_text_crashes_a_parser(parser: str) -> None:
    @FUZZ
    @given(text=_texts(parser))
    def run(text: str) -> None:
        PARSERS[parser](text)

    run()


@pytest.mark.timeout(HANG)
@pytest.mark.parametrize("parser", ["python", "requirements", "config", "workflow", "dockerfile", "shell"])
def test_repeated_fragments_are_read_to_the_end(parser: str) -> None:
    """A fragment repeated into a file of 20 KB (5 KB for what reaches bashlex): whatever
    Hypothesis picks, the parser returns (and pytest-timeout ends one that does not)."""
    size = 5_000 if parser in ("workflow", "dockerfile", "shell") else 20_000

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(unit=st.lists(st.sampled_from(FRAGMENTS[parser]), min_size=1, max_size=4).map("".join),
           head=st.sampled_from(["", "jobs:\n  j:\n    steps:\n      - run: |\n          pip install ",
                                 "FROM x\nRUN pip install ", "pip install "]))
    def run(unit: str, head: str) -> None:
        PARSERS[parser](head + unit * max(1, (size - len(head)) // len(unit)))

    run()


@given(text=st.text(max_size=200))
@FUZZ
def test_no_requirement_line_crashes_the_spec_reader(text: str) -> None:
    parse_spec(text)


# ------------------------------------------------------------------------------ audit


@pytest.mark.timeout(HANG)
def test_audit_of_a_tree_of_hostile_files_finishes_and_reports_what_it_skipped(tmp_path: Path) -> None:
    """Every parser at once, through the real entry point: the oversized file and the ones
    that cannot be read are REG004, and the rest is still analysed."""
    files: dict[str, str | bytes] = {
        ".github/rocmbot.yml": "max_file_bytes: 65536\n",
        "tests/test_oversized.py": "x = 1\n" * 20_000,  # 120 KB, over the 64 KB limit
        "tests/test_binary.py": b"register_rocm_ci(1, 's')\n\0\0",
        "tests/test_latin1.py": "register_rocm_ci(1, 'caf\xe9')\n".encode("latin-1"),
        "tests/test_deep.py": "register_rocm_ci(1, 's')\nx = " + "(" * 5000 + ")" * 5000 + "\n",
        "tests/test_markers.py": "".join(
            f"register_rocm_ci(est_time={v}, suite='stage-c-{i}-gpu-mi350', disabled={d})\n"
            for i, (v, d) in enumerate([("1e999", "None"), ("1" + "0" * 400, "'x'"), ("f()", "1"),
                                        ("600", "'@u <b>'")])
        ),
        "tests/test_ok.py": "register_rocm_ci(est_time=600, suite='stage-c-4-gpu-mi350')\n",
        "docker/Dockerfile.rocm": ARG_BOMB.replace("$A11", "$A11 'numba==0.65.1'"),
        ".github/workflows/rocm-ci.yml": _merge_bomb(9, 10),
        ".github/workflows/amd-ci.yml": BOMBS["steps shared by jobs"],
        ".github/workflows/ci-rocm.yml": "jobs:\n  j:\n    steps:\n      - run: |\n          pip install x "
        + "${{ " * 5000 + "\n          pip install -r requirements.txt\n",
        "requirements.txt": "a" + " " * 30_000 + "b\n" + "numba==0.65.2\n" + "c; " + "(" * 3000 + "\n",
    }
    for path, content in files.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    report = audit(FolderTree(tmp_path))
    skipped = {f.path: f.message for f in report.findings if f.rule == "REG004"}
    assert "over the 65536-byte limit" in skipped["tests/test_oversized.py"]
    assert "NUL" in skipped["tests/test_binary.py"]
    assert "not UTF-8" in skipped["tests/test_latin1.py"]
    assert "nested" in skipped["tests/test_deep.py"] or "parenthes" in skipped["tests/test_deep.py"]
    assert "aliases expand" in skipped[".github/workflows/rocm-ci.yml"]
    assert "aliases expand" in skipped[".github/workflows/amd-ci.yml"]
    reg002 = [f.message for f in report.findings if f.rule == "REG002" and f.path == "tests/test_markers.py"]
    assert sum("finite number" in m for m in reg002) == 2
    assert {t.path for t in report.tests} >= {"tests/test_ok.py", "tests/test_markers.py"}


def test_configuration_problems_keep_their_lines_after_one_pass() -> None:
    """Key lines come from one pass over the text (a search per unknown key was quadratic)."""
    loaded = parse_config("tests: [a]\nfoo:bar: 1\nbogus : 2\n" + ":".join("k" * 9) + ": 3\n")
    lines = {p.key: p.line for p in loaded.problems}
    assert lines["foo:bar"] == 2 and lines["bogus"] == 3
    assert ":".join("k" * 9) in lines  # reported; past eight colons its line is not looked for
