"""The service's commands: db, deliveries, replay, serve and worker."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main
from bot.store.store import Store
from tests.service.helpers import SECRET, event_of, pr_payload
from tests.service.server import serving


@pytest.fixture
def db_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path}/cli.db"
    monkeypatch.setenv("ROCMBOT_DATABASE_URL", url)
    monkeypatch.delenv("ROCMBOT_WEBHOOK_SECRET", raising=False)
    monkeypatch.delenv("ROCMBOT_DRY_RUN", raising=False)
    return url


def test_db_upgrade_and_current(db_env: str, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(db_env)
    latest = store.head_revision()  # the last migration, whichever it is
    store.close()
    assert latest is not None and latest.isdigit()
    assert main(["db", "current"]) == 0
    assert capsys.readouterr().out == f"empty (latest: {latest})\n"
    assert main(["db", "upgrade"]) == 0
    assert capsys.readouterr().out == f"database at revision {latest}\n"
    assert main(["db", "current"]) == 0
    assert capsys.readouterr().out.startswith(f"{latest} ")


def test_deliveries_list_show_and_retry(db_env: str, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(db_env)
    store.upgrade()
    payload = pr_payload(number=3)
    store.add_delivery(event_of("pull_request", "abc", payload), json.dumps(payload))
    (claimed,) = store.claim("w", lease_seconds=10, max_attempts=1)
    store.finish(claimed, "w", "dead", error="GitHub said 500")
    store.close()
    assert main(["deliveries", "list"]) == 0
    line = capsys.readouterr().out
    assert line.startswith("abc  ") and "dead" in line and "pull_request.synchronize  octo/miles#3" in line
    assert main(["deliveries", "list", "--json", "--status", "dead"]) == 0
    assert json.loads(capsys.readouterr().out)["last_error"] == "GitHub said 500"
    assert main(["deliveries", "show", "abc"]) == 0
    assert json.loads(capsys.readouterr().out)["payload"]["number"] == 3
    assert main(["deliveries", "retry", "abc"]) == 0
    assert capsys.readouterr().out == "abc queued again\n"
    assert main(["deliveries", "show", "nope"]) == 2
    assert "no delivery nope" in capsys.readouterr().err


def test_invalid_settings_are_one_line(db_env: str, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ROCMBOT_MAX_ATTEMPTS", "many")
    assert main(["deliveries", "list"]) == 2
    assert capsys.readouterr().err.startswith("rocmbot: error: invalid setting ROCMBOT_MAX_ATTEMPTS:")
    monkeypatch.delenv("ROCMBOT_MAX_ATTEMPTS")
    monkeypatch.setenv("ROCMBOT_PRIVATE_KEY", "k")
    monkeypatch.setenv("ROCMBOT_PRIVATE_KEY_PATH", "k.pem")
    assert main(["deliveries", "list"]) == 2
    assert capsys.readouterr().err == ("rocmbot: error: invalid settings: set ROCMBOT_PRIVATE_KEY or "
                                       "ROCMBOT_PRIVATE_KEY_PATH, not both\n")


def test_serve_refuses_without_a_secret(db_env: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--port", "1"]) == 2
    assert "ROCMBOT_WEBHOOK_SECRET is not set" in capsys.readouterr().err


def test_replay_dry_run_processes_in_process(tmp_path: Path, db_env: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "payload.json"
    file.write_text(json.dumps(pr_payload(number=8)))
    assert main(["replay", str(file), "--event", "pull_request", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("event pull_request.synchronize repository=octo/miles pr=8\n")
    file.write_text("[]")
    assert main(["replay", str(file), "--event", "pull_request", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err == f"rocmbot: error: {file}: not a valid delivery: payload must be a JSON object\n"
    file.write_text("{bad")
    assert main(["replay", str(file), "--event", "pull_request", "--dry-run"]) == 2
    assert "not a valid delivery: body is not valid JSON" in capsys.readouterr().err
    assert main(["replay", "--dry-run"]) == 2
    assert main(["replay", str(tmp_path / "missing.json"), "--event", "x", "--dry-run"]) == 2


def test_replay_signs_and_posts_to_a_running_service(tmp_path: Path, db_env: str,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from bot.service.app import create_app
    from config.settings import Settings

    monkeypatch.setenv("ROCMBOT_WEBHOOK_SECRET", SECRET.decode())
    file = tmp_path / "payload.json"
    file.write_text(json.dumps(pr_payload(number=8)))
    with serving(create_app(Settings())) as url:
        assert main(["replay", str(file), "--event", "pull_request", "--url", f"{url}/webhook"]) == 0
        assert capsys.readouterr().out.startswith("202 ")
        (stored,) = Store(db_env).recent()
        assert main(["replay", "--delivery", stored.delivery_id, "--url", f"{url}/webhook"]) == 0
        assert capsys.readouterr().out.startswith("202 ")
        monkeypatch.setenv("ROCMBOT_WEBHOOK_SECRET", "wrong")
        assert main(["replay", str(file), "--event", "pull_request", "--url", f"{url}/webhook"]) == 1
    assert main(["replay", "--delivery", "missing", "--dry-run"]) == 2


@pytest.mark.slow
def test_serve_and_worker_processes_stop_cleanly_on_sigterm(tmp_path: Path) -> None:
    env = {**os.environ, "ROCMBOT_DATABASE_URL": f"sqlite:///{tmp_path}/p.db", "ROCMBOT_DRY_RUN": "1"}
    serve = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve", "--port", "0"], env=env,
                             stderr=subprocess.PIPE, text=True)
    worker = subprocess.Popen([sys.executable, "-m", "bot.cli", "worker", "--concurrency", "2"], env=env,
                              stderr=subprocess.PIPE, text=True)
    # Each is signalled once it says it is running (the web process once uvicorn listens).
    serve_started = _lines_until(serve, "Uvicorn running on")
    worker_started = _lines_until(worker, '"message": "worker started"')
    for proc in (serve, worker):
        proc.send_signal(signal.SIGTERM)
    _, serve_err = serve.communicate(timeout=60)
    worker.communicate(timeout=60)
    # uvicorn shuts down gracefully, then re-raises the signal so the exit status tells it.
    assert serve.returncode in (0, -signal.SIGTERM) and worker.returncode == 0
    assert '"message": "service started"' in serve_started
    assert '"message": "service stopped"' in serve_err
    assert '"message": "worker started"' in worker_started


def _lines_until(proc: subprocess.Popen[str], wanted: str) -> str:
    """What ``proc`` wrote to stderr up to the line containing ``wanted``."""
    assert proc.stderr is not None
    lines: list[str] = []
    while not lines or wanted not in lines[-1]:
        line = proc.stderr.readline()
        assert line, f"the process ended before saying {wanted!r}: {''.join(lines)}"
        lines.append(line)
    return "".join(lines)


def test_replay_dry_run_against_a_local_clone_lists_what_would_be_posted(
    tmp_path: Path, db_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli.demo import build_example

    base, head = build_example(tmp_path / "clone")
    payload = pr_payload(number=1, sha=head, action="opened")
    payload["pull_request"]["base"]["sha"] = base
    file = tmp_path / "pr.json"
    file.write_text(json.dumps(payload))
    assert main(["replay", str(file), "--event", "pull_request", "--dry-run",
                 "--repo", str(tmp_path / "clone")]) == 0
    out = capsys.readouterr().out
    assert "handlers: handlers.review.review_pull_request" in out
    assert "- check run `rocmbot / analysis`: failure" in out
    assert "- summary comment on PR #1" in out


def test_reading_deliveries_needs_a_database_and_never_makes_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "none" / "rocmbot.db"
    path.parent.mkdir()
    monkeypatch.setenv("ROCMBOT_DATABASE_URL", f"sqlite:///{path}")
    for argv in (["deliveries", "list"], ["deliveries", "show", "abc"],
                 ["replay", "--delivery", "abc", "--dry-run"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"rocmbot: error: no database at {path}:") and err.count("\n") == 1
    assert not path.exists()  # nothing made as a side effect of a read
    sqlite3.connect(path).close()  # an empty database: no tables
    assert main(["deliveries", "list"]) == 2
    assert "holds no rocmbot tables: `rocmbot db upgrade` makes them" in capsys.readouterr().err
    assert main(["db", "upgrade"]) == 0 and main(["deliveries", "list"]) == 0


def _pem(key: object) -> str:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(  # type: ignore[attr-defined, no-any-return]
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()).decode()


@pytest.mark.parametrize(("setting", "says"), [
    ({"ROCMBOT_APP_ID": "1", "ROCMBOT_PRIVATE_KEY_PATH": "{tmp}/none.pem"},
     "ROCMBOT_PRIVATE_KEY_PATH: cannot read {tmp}/none.pem: No such file or directory"),
    ({"ROCMBOT_APP_ID": "1", "ROCMBOT_PRIVATE_KEY_PATH": "{tmp}/garbage.pem"},
     "ROCMBOT_PRIVATE_KEY_PATH: not a PEM private key ("),
    ({"ROCMBOT_APP_ID": "1", "ROCMBOT_PRIVATE_KEY_PATH": "{tmp}/ec.pem"},
     "ROCMBOT_PRIVATE_KEY_PATH: a GitHub App's key is an RSA private key, this one is not"),
    ({"ROCMBOT_DATABASE_URL": "postgresql+asyncpg://u@localhost/db"},
     "ROCMBOT_DATABASE_URL: its driver `asyncpg` is not installed"),
    ({"ROCMBOT_DATABASE_URL": "sqlite:///{tmp}/missing/rocmbot.db"},
     "ROCMBOT_DATABASE_URL: the folder {tmp}/missing of the SQLite file does not exist"),
    ({"ROCMBOT_LOCAL_REPO": "{tmp}"}, "ROCMBOT_LOCAL_REPO: {tmp} is not a git repository"),
])
def test_serve_and_worker_refuse_settings_that_would_fail_every_delivery(
        db_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], setting: dict[str, str], says: str) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    (tmp_path / "garbage.pem").write_text("not a key\n")
    (tmp_path / "ec.pem").write_text(_pem(ec.generate_private_key(ec.SECP256R1())))
    monkeypatch.setenv("ROCMBOT_WEBHOOK_SECRET", "s")
    for name, value in setting.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    for argv in (["serve", "--port", "8765"], ["worker"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("rocmbot: error: " + says.format(tmp=tmp_path)) and err.count("\n") == 1


def test_a_port_out_of_range_and_a_good_key_at_startup(
        db_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from cryptography.hazmat.primitives.asymmetric import rsa

    from bot.cli.serve import startup_problem
    from config.settings import Settings

    monkeypatch.setenv("ROCMBOT_WEBHOOK_SECRET", "s")
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--port", "99999"])
    assert exited.value.code == 2
    assert "argument --port: 99999 is not a port (0-65535)" in capsys.readouterr().err
    key = tmp_path / "app.pem"
    key.write_text(_pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)))
    monkeypatch.setenv("ROCMBOT_APP_ID", "1")
    monkeypatch.setenv("ROCMBOT_PRIVATE_KEY_PATH", str(key))
    assert startup_problem(Settings()) is None  # an RSA key, a database that opens
