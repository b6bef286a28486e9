"""A throwaway PostgreSQL server for tests: its own data folder, port and socket, on loopback."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresUnavailableError(RuntimeError):
    pass


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a PostgreSQL server; yields a SQLAlchemy URL of an empty database."""
    bindir = _bindir()
    if bindir is None:
        raise PostgresUnavailableError("PostgreSQL server binaries not found: bin/test installs them "
                                  "(apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="rocmbot-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    prefix: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
    port = _free_port()

    def run(*args: str) -> None:
        subprocess.run([*prefix, *args], check=True, capture_output=True, cwd=root)

    try:
        run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync",
            "-E", "UTF8")
        run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-w", "-t", "60", "-o",
            f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200", "start")
        run(str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "rocmbot")
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/rocmbot"
    finally:
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w",
                        "stop"], capture_output=True, cwd=root, check=False)
        shutil.rmtree(root, ignore_errors=True)
