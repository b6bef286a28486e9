"""A throwaway PostgreSQL server for tests: its own data folder, port and socket, on loopback."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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


@dataclass
class PostgresServer:
    """A running throwaway server: its URL, and stop/start/restart for fault campaigns."""

    url: str
    bindir: Path
    root: Path
    port: int
    prefix: list[str]

    @property
    def data(self) -> Path:
        return self.root / "data"

    def ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([*self.prefix, str(self.bindir / "pg_ctl"), "-D", str(self.data), *args],
                              capture_output=True, cwd=self.root, check=check)

    def _options(self) -> str:
        return (f"-p {self.port} -k {self.root / 'sock'} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")

    def start(self) -> None:
        self.ctl("-l", str(self.root / "log"), "-w", "-t", "60", "-o", self._options(), "start")

    def stop(self, mode: str = "fast") -> None:
        """``fast`` disconnects every client and stops; ``immediate`` is a crash."""
        self.ctl("-m", mode, "-w", "-t", "60", "stop")

    def restart(self, mode: str = "fast", down_seconds: float = 0.0) -> None:
        """Stop (clients see their connections dropped), stay down a while, start again."""
        self.stop(mode)
        if down_seconds:
            time.sleep(down_seconds)
        self.start()


@contextmanager
def postgres_instance() -> Iterator[PostgresServer]:
    """Start a PostgreSQL server with an empty ``rocmbot`` database; yields it."""
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
    server = PostgresServer(f"postgresql+psycopg://postgres@127.0.0.1:{port}/rocmbot", bindir, root, port,
                            prefix)

    def run(*args: str) -> None:
        subprocess.run([*prefix, *args], check=True, capture_output=True, cwd=root)

    try:
        run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync",
            "-E", "UTF8")
        server.start()
        run(str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "rocmbot")
        yield server
    finally:
        server.ctl("-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a PostgreSQL server; yields a SQLAlchemy URL of an empty database."""
    with postgres_instance() as server:
        yield server.url
