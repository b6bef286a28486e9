from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from bot.cli import main
from bot.cli.demo import build_example
from tests.gitrepo import GitRepo


@pytest.fixture
def example(tmp_path: Path) -> tuple[Path, str, str]:
    root = tmp_path / "repo"
    base, head = build_example(root)
    return root, base, head


def test_analyze_json_follows_the_documented_schema(example: tuple[Path, str, str],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    root, base, head = example
    code = main(["analyze", "--repo", str(root), "--base", base, "--head", head, "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert (doc["base"], doc["head"]) == (base, head)
    assert [t["change"] for t in doc["tests"] if t["backend"] == "rocm"] == ["enabled", "unchanged"]
    # the example's re-enabled test keeps an impossible expert grid: held, with its finding
    assert doc["selected"] == [] and [(h["path"], h["rule"]) for h in doc["held"]] == [
        ("tests/e2e/megatron/test_qwen35_moe.py", "PAR002")]
    assert doc["held"][0]["finding"].startswith("PAR002:")
    assert code == (1 if any(f["severity"] == "error" for f in doc["findings"]) else 0)


@pytest.mark.parametrize(("fmt", "token"), [
    ("text", "test_qwen35_moe.py"), ("markdown", "test_qwen35_moe.py"),
    ("sarif", '"version": "2.1.0"'), ("github", "::notice title=rocmbot::"),
])
def test_every_format_renders(example: tuple[Path, str, str], fmt: str, token: str, tmp_path: Path) -> None:
    root, base, head = example
    out = tmp_path / "report.out"
    assert main(["analyze", "--repo", str(root), "--base", base, "--head", head,
                 "--format", fmt, "-o", str(out)]) in (0, 1)
    assert token in out.read_text()


def test_exit_status_1_on_error_findings(git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    git_repo.write("tests/test_a.py", "register_rocm_ci(T, 'stage-b-1-gpu-x')\n")
    git_repo.commit()
    assert main(["audit", "--repo", str(git_repo.root), "--rev", "HEAD"]) == 1
    assert "REG002" in capsys.readouterr().out
    assert main(["audit", "--repo", str(git_repo.root)]) == 1  # the working tree


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["analyze", "--base", "nope"], "unknown revision: nope"),
        (["analyze", "--repo", "{tmp}/absent", "--base", "x"], "not a folder"),
        (["analyze", "--repo", "{tmp}", "--base", "x"], "not a git repository"),
        (["audit", "--repo", "{repo}", "--rev", "nope"], "unknown revision: nope"),
        (["audit", "--repo", "{repo}", "--config", "{tmp}/none.yml"], "cannot read config"),
        (["analyze", "--repo", "{repo}", "--base", "HEAD", "-o", "{tmp}/absent/x"], "cannot write"),
        (["analyze"], "the following arguments are required: --base"),
        (["audit", "--format", "xml"], "invalid choice"),
        (["audit", "--jobs", "0"], "expected a number of processes, 1 or more: '0'"),
        (["audit", "-j", "many"], "expected a number of processes, 1 or more: 'many'"),
        (["audit", "--repo", "{repo}", "--config", "{tmp}/broken.yml"],
         "config {tmp}/broken.yml:3: not valid YAML: did not find expected ',' or ']'"),
        (["analyze", "--repo", "{repo}", "--base", "HEAD", "--config", "{tmp}/broken.yml"], "broken.yml:3: "),
        (["audit", "--repo", "{tmp}/bare.git"], "bare git repository, with no files checked out: pass"),
        (["config", "--repo", "{tmp}/bare.git"], "pass `--rev HEAD` to read its last commit"),
        (["audit", "--repo", "{tmp}/unborn"], "{tmp}/unborn has no files to analyse (nothing checked out)"),
        (["audit", "--repo", "{tmp}/nothing"], "{tmp}/nothing has no files to analyse"),
        (["audit", "--repo", "{tmp}/unborn", "--rev", "HEAD"], "unknown revision: HEAD"),
        (["analyze", "--repo", "{repo}", "--base", "HEAD", "--head", "{empty}"], "has no files to analyse"),
        (["audit", "--repo", "{repo}", "--rev", "{empty}"], "revision {empty} of {repo} has no files"),
        (["serve", "--port", "{port}"], "cannot listen on 127.0.0.1:{port}: Address already in use"),
        ([], "usage: rocmbot COMMAND [OPTIONS] (commands: analyze, explain, audit, config, demo, sandbox,"),
    ],
)
def test_usage_and_input_errors_exit_2_with_one_line(
    args: list[str], message: str, example: tuple[Path, str, str], tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, _, _ = example
    monkeypatch.chdir(root)
    monkeypatch.setenv("ROCMBOT_DRY_RUN", "1")
    monkeypatch.setenv("ROCMBOT_DATABASE_URL", f"sqlite:///{tmp_path}/never.db")
    (tmp_path / "broken.yml").write_text("select_nightly: true\nsuites: [1\nx: 2\n")
    subprocess.run(["git", "clone", "-q", "--bare", str(root), str(tmp_path / "bare.git")], check=True)
    subprocess.run(["git", "init", "-q", str(tmp_path / "unborn")], check=True)
    (tmp_path / "nothing").mkdir()
    git = GitRepo(root).git
    empty = git("commit-tree", "-m", "empty", git("hash-object", "-w", "-t", "tree", "/dev/null"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        values = {"tmp": tmp_path, "repo": root, "empty": empty, "port": busy.getsockname()[1]}
        argv = [a.format(**values) for a in args]
        with pytest.raises(SystemExit) as exc:
            raise SystemExit(main(argv))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message.format(**values) in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert not (tmp_path / "never.db").exists()


def test_an_unexpected_error_is_one_line_not_a_traceback(
    example: tuple[Path, str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _, _ = example

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("bot.analysis.engine.audit", boom)
    assert main(["audit", "--repo", str(root)]) == 2
    assert capsys.readouterr().err == (
        "rocmbot: error: RuntimeError: disk on fire (set ROCMBOT_DEBUG=1 for details)\n")


def test_audit_jobs_do_not_change_the_report(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    import bot.analysis.pool

    seen: list[int] = []
    usable = bot.analysis.pool.usable

    def spy(tree: object, jobs: int, files: int) -> int:
        seen.append(jobs)
        return usable(tree, jobs, max(files, 1000))  # split even this small example

    monkeypatch.setattr(bot.analysis.pool, "usable", spy)
    root = tmp_path / "repo"
    build_example(root)
    outputs = []
    for jobs in ([], ["-j", "1"], ["--jobs", "2"]):
        main(["audit", "--repo", str(root), "--rev", "HEAD", "--format", "json", *jobs])
        outputs.append(capsys.readouterr().out)
    assert seen == [bot.analysis.pool.default_jobs(), 1, 2]
    assert outputs[0] == outputs[1] == outputs[2]
    assert json.loads(outputs[0])["tests"]


def test_config_shows_sources_and_problems(git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    git_repo.write(".github/rocmbot.yml", "select_nightly: true\nsuite: {}\n")
    git_repo.commit()
    assert main(["config", "--repo", str(git_repo.root), "--rev", "HEAD"]) == 1
    out = capsys.readouterr().out
    assert "# select_nightly: from .github/rocmbot.yml\nselect_nightly: true" in out
    assert "# tests: from default" in out
    assert "# CFG001 suite (line 2): unknown key; did you mean `suites`?" in out


def test_config_shows_the_pin_groups_it_inferred(
    example: tuple[Path, str, str], capsys: pytest.CaptureFixture[str],
) -> None:
    root, _, _ = example
    assert main(["config", "--repo", str(root)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# effective configuration (no .github/rocmbot.yml: all defaults)\n")
    groups = yaml.safe_load(out.split("# dependency-pin groups (what PIN001..PIN006 compare)\n")[1])
    assert groups["pin_groups"] == [
        {"name": "rocm", "source": "inferred", "rocm": True,
         "dockerfiles": ["docker/Dockerfile.rocm"], "workflows": [".github/workflows/_run-ci-rocm.yml"],
         "requirements": [], "scripts": [], "hardware": "rocm", "callers": [],
         "install_paths": ["_run-ci-rocm.yml / test / Install (full)",
                           "_run-ci-rocm.yml / test / Install (miles only)"]},
    ]


def test_demo_analyses_the_example_pr(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["demo", "--format", "text", "--dir", str(tmp_path / "demo")]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"rocmbot: example repository at {tmp_path / 'demo'} (kept)\n"
    assert "2 errors\n  tests/e2e/megatron/test_qwen35_moe.py\n    11: PAR002 [expert-grid]" in captured.out
    assert (tmp_path / "demo" / ".git").is_dir()


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "markdown", "text"])
def test_demo_keeps_stdout_parseable_in_every_format(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo", "--format", fmt, "--dir", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    if fmt in ("json", "sarif"):
        json.loads(out)
    elif fmt == "github":
        assert all(line.startswith("::") for line in out.splitlines())
    else:
        assert out.startswith("### " if fmt == "markdown" else "rocmbot analyze ")  # the verdict


@pytest.mark.parametrize("kind", ["a git repository", "a non-empty folder", "a file"])
def test_demo_never_writes_into_a_folder_it_did_not_create(
    kind: str, git_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    if kind == "a git repository":
        git_repo.write("README.md", "mine\n")
        git_repo.commit("my work")
        target = git_repo.root
    elif kind == "a non-empty folder":
        target = tmp_path / "notes"
        target.mkdir()
        (target / "todo.txt").write_text("x\n")
    else:
        target = tmp_path / "file"
        target.write_text("x\n")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    head = git_repo.git("rev-parse", "HEAD") if kind == "a git repository" else None
    assert main(["demo", "--dir", str(target)]) == 2
    err = capsys.readouterr().err
    assert err == (f"rocmbot: error: {target} exists and is not empty: give a new or empty folder "
                   "(the demo builds a git repository of its own there)\n")
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    if head is not None:
        assert git_repo.git("rev-parse", "HEAD") == head


def test_analysis_commands_import_no_web_stack() -> None:
    probe = (
        "import sys; from bot.cli import main; "
        "main(['demo', '--format', 'json']); "
        "heavy = {'fastapi', 'uvicorn', 'sqlalchemy', 'github', 'starlette', 'httpx'} & set(sys.modules); "
        "sys.stderr.write(repr(sorted(heavy)))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert proc.stderr == "[]"


def test_importing_the_cli_imports_no_validation_yaml_or_web_library() -> None:
    probe = (
        "import sys, bot.cli; "
        "heavy = {'pydantic', 'yaml', 'fastapi', 'uvicorn', 'sqlalchemy', 'github', 'starlette', "
        "'httpx', 'bashlex', 'dockerfile_parse', 'packaging', 'bot.analysis', 'config'}; "
        "sys.stderr.write(repr(sorted({m.split('.')[0] for m in sys.modules} & heavy "
        "| {m for m in sys.modules if m.startswith('bot.analysis')})))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert proc.stderr == "[]"


def test_console_script_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0 and proc.stdout.startswith("rocmbot ")


def test_the_pre_commit_hook_audits_the_files_as_they_are(
    example: tuple[Path, str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = Path(__file__).resolve().parents[1]
    (hook,) = yaml.safe_load((project / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "rocmbot-audit" and f"- id: {hook['id']}" in (project / "README.md").read_text()
    assert (hook["language"], hook["pass_filenames"], hook["always_run"]) == ("python", False, True)
    command, *args = shlex.split(hook["entry"])
    scripts = tomllib.loads((project / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts[command] == "bot.cli:main"
    root, _, _ = example
    monkeypatch.chdir(root)
    assert main(args) == 1  # the head's PAR002 fails the commit
    assert "PAR002 [expert-grid]" in capsys.readouterr().out
    test = root / "tests/e2e/megatron/test_qwen35_moe.py"
    test.write_text(test.read_text().replace("ep_size=4", "ep_size=2"))  # fixed, not committed
    assert main(args) == 0
    assert capsys.readouterr().out.startswith("rocmbot audit working tree: no problems")


@pytest.mark.slow
def test_bin_run_is_a_command_run_where_it_is_called(git_repo: GitRepo) -> None:
    """Relative paths are the caller's, and the install step is skipped when nothing changed."""
    project = Path(__file__).resolve().parents[1]
    git_repo.write("tests/test_a.py", "register_rocm_ci(T, 'stage-b-1-gpu-x')\n")
    git_repo.commit()
    stamp = project / ".venv" / ".rocmbot-install"

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(project / "bin" / "run"), "audit", "--repo", ".", "--rev", "HEAD"],
                              cwd=git_repo.root, capture_output=True, text=True, check=False)

    first = run()
    assert first.returncode == 1 and "REG002" in first.stdout, first.stderr
    installed = stamp.stat().st_mtime_ns
    assert run().stdout == first.stdout
    assert stamp.stat().st_mtime_ns == installed  # no second install


@pytest.mark.parametrize(("tty", "no_color", "verbose", "coloured"), [
    (True, None, [], True), (True, "1", [], False), (False, None, ["-v"], False), (True, "", ["-v"], True),
])
def test_text_is_coloured_on_a_terminal_and_lists_tests_with_verbose(
    tty: bool, no_color: str | None, verbose: list[str], coloured: bool, example: tuple[Path, str, str],
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, base, head = example
    monkeypatch.setattr(sys.stdout, "isatty", lambda: tty)
    monkeypatch.delenv("TERM", raising=False)
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    assert main(["analyze", "--repo", str(root), "--base", base, "--head", head, *verbose]) == 1
    out = capsys.readouterr().out
    assert ("\x1b[1;31m2 errors\x1b[0m" in out) is coloured
    assert ("\x1b[" in out) is coloured
    assert ("enabled     rocm tests/e2e/megatron/test_qwen35_moe.py" in out) is bool(verbose)


def test_ci_run_needs_only_the_standard_library(tmp_path: Path) -> None:
    """What the ROCm job image holds: rocmbot installed with --no-deps, nothing else."""
    project = Path(__file__).resolve().parents[1]
    (tmp_path / "ok.py").write_text("print('fine')\n")
    (tmp_path / "bad.py").write_text("raise SystemExit(3)\n")
    probe = (  # -S: no site-packages, so any third-party import fails
        f"import sys; sys.path.insert(0, {str(project)!r}); from bot.cli import main; "
        "code = main(['ci', 'run', '--tests', 'ok.py bad.py', '--junit', 'r.xml']); "
        "top = {m.split('.')[0] for m in sys.modules}; "
        "third = sorted(top - set(sys.stdlib_module_names) - {'bot', '__main__'}); "
        "print(code, third)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-S", "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                          env={**env, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}, check=True)
    assert proc.stdout.strip().splitlines()[-1] == "1 []"
    assert 'tests="2" failures="1"' in (tmp_path / "r.xml").read_text()
    assert "| `ok.py` | ✅ passed |" in (tmp_path / "summary.md").read_text()
    dockerfile = (project / "Dockerfile.rocm").read_text()
    (install,) = [ln for ln in dockerfile.splitlines() if ln.startswith("RUN") and "/opt/rocmbot" in ln]
    assert "pip install --no-cache-dir --no-deps /opt/rocmbot" in install


def test_analyze_compares_from_the_merge_base_as_a_pull_request_does(
        git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    from bot.cli.example import BASE_FILES

    git_repo.write_all(BASE_FILES)
    start = git_repo.commit()
    git_repo.git("checkout", "-q", "-b", "docs")
    git_repo.write("README.md", "only the docs\n")
    branch = git_repo.commit()
    git_repo.git("checkout", "-q", "main")
    short = "tests/e2e/megatron/test_short.py"
    git_repo.write(short, BASE_FILES[short].replace('"stage-b-1-gpu-mi350"', '"stage-c-4-gpu-mi350"'))
    moved_on = git_repo.commit()  # main moves on after the branch left it
    argv = ["analyze", "--repo", str(git_repo.root), "--base", "main", "--head", branch,
            "--format", "json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["base"] == start  # where the branch left main, not main's tip
    assert all(t["change"] == "unchanged" for t in doc["tests"]) and doc["selected"] == []
    assert main([*argv, "--exact-base"]) in (0, 1)
    exact = json.loads(capsys.readouterr().out)
    assert exact["base"] == moved_on  # the old meaning: main's tip, whose change reads reverted
    assert any(t["change"] == "suite" for t in exact["tests"])
    git_repo.git("checkout", "-q", "--orphan", "alone")
    git_repo.write_all({**BASE_FILES, "README.md": "another history\n"})
    alone = git_repo.commit("alone")
    assert main(["analyze", "--repo", str(git_repo.root), "--base", "main", "--head", alone]) == 2
    assert "share no history: give --exact-base" in capsys.readouterr().err


def test_parked_lists_the_parked_tests_dated_from_history_ready_first(
    git_repo: GitRepo, capsys: pytest.CaptureFixture[str],
) -> None:
    git_repo.write("tests/test_ok.py", 'register_rocm_ci(60, "stage-a-4-gpu-mi350")\n')
    git_repo.write("tests/test_cpu.py", 'register_cpu_ci(60, "unit", disabled="no reason")\n')
    git_repo.commit("tests")
    git_repo.write("tests/test_ok.py",
                   'register_rocm_ci(60, "stage-a-4-gpu-mi350", disabled="FIXME: flaky on MI350")\n')
    parked_at = git_repo.commit("park it")
    git_repo.write("README.md", "later\n")
    git_repo.commit("later")
    assert main(["parked", "--repo", str(git_repo.root), "--rev", "HEAD", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (entry,) = doc["parked"]  # the CPU test is not a GPU test
    assert (entry["path"], entry["reason"]) == ("tests/test_ok.py", "FIXME: flaky on MI350")
    assert entry["since"]["commit"] == parked_at
    assert entry["since"]["date"].startswith("2026-01-01")
    assert entry["launch"]["state"] == "none" and entry["candidate"] is False
    assert main(["parked", "--repo", str(git_repo.root)]) == 0  # the working copy: HEAD's history
    text = capsys.readouterr().out
    assert text.startswith("rocmbot parked working tree: 1 parked GPU test;")
    assert f"since {parked_at[:12]}" in text and "reason: FIXME: flaky on MI350" in text
    assert main(["parked", "--repo", str(git_repo.root), "--format", "markdown"]) == 0
    assert "| `tests/test_ok.py` | `stage-a-4-gpu-mi350` |" in capsys.readouterr().out
    assert main(["audit", "--repo", str(git_repo.root), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["parked"][0]["since"]["commit"] == parked_at
