from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from bot.cli import main
from bot.demo import build_example
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
    assert doc["selected"][0]["tier"] == "direct"
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
        ([], ""),
    ],
)
def test_usage_and_input_errors_exit_2_with_one_line(
    args: list[str], message: str, example: tuple[Path, str, str], tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, _, _ = example
    monkeypatch.chdir(root)
    argv = [a.format(tmp=tmp_path, repo=root) for a in args]
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(argv))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    if message:
        assert len(err.strip().splitlines()) == 1
        assert "Traceback" not in err


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
    import bot.analysis.parallel

    seen: list[int] = []
    usable = bot.analysis.parallel.usable

    def spy(tree: object, jobs: int, files: int) -> int:
        seen.append(jobs)
        return usable(tree, jobs, max(files, 1000))  # split even this small example

    monkeypatch.setattr(bot.analysis.parallel, "usable", spy)
    root = tmp_path / "repo"
    build_example(root)
    outputs = []
    for jobs in ([], ["-j", "1"], ["--jobs", "2"]):
        main(["audit", "--repo", str(root), "--rev", "HEAD", "--format", "json", *jobs])
        outputs.append(capsys.readouterr().out)
    assert seen == [bot.analysis.parallel.default_jobs(), 1, 2]
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
         "requirements": [],
         "install_paths": ["_run-ci-rocm.yml / test / Install (full)",
                           "_run-ci-rocm.yml / test / Install (miles only)"]},
        {"name": "default", "source": "inferred", "rocm": False, "dockerfiles": [],
         "workflows": [".github/workflows/pr-test.yml"], "requirements": [], "install_paths": []},
    ]


def test_demo_analyses_the_example_pr(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["demo", "--format", "text", "--dir", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert f"Example repository at {tmp_path / 'demo'} (kept)" in out
    assert "enabled     rocm tests/e2e/megatron/test_qwen35_moe.py" in out


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
    assert "error PAR002" in capsys.readouterr().out
    test = root / "tests/e2e/megatron/test_qwen35_moe.py"
    test.write_text(test.read_text().replace("ep_size=4", "ep_size=2"))  # fixed, not committed
    assert main(args) == 0
    assert capsys.readouterr().out.startswith("rocmbot audit working tree: no findings")
