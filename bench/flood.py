"""The web process under floods of unsigned deliveries: large bodies, and slow small ones.

`rocmbot serve --no-worker` on SQLite, as a process on loopback, with its default settings.
Once it is ready its resident set is read (idle). Meanwhile one client sends small signed
deliveries one after another, to see whether real deliveries still get in. The resident set is
sampled every 10 ms (peak), and read again once the flood is over and the process has been idle
for a while (after). Figures are MB (10^6 bytes) and ratios to the idle set.

- Large bodies: ``--connections`` clients at once, each from an address of its own (127.0.1.x:
  loopback has them all), declare a ``--mib`` MiB body with a wrong signature and send it in
  64 KiB pieces, stopping when the server answers (a body refused before it is read gets its
  answer at once).
- Slow bodies: for ``--slow-seconds``, ``--slow-connections`` clients each declare a small body
  (a MiB) and send it a byte a second; when the server answers or closes, the client connects
  again at once. Run twice: every client from one address (127.0.0.2), and from one address
  per two clients (127.0.0.2 and up). The figure is the share of the signed deliveries stored
  (202).

The signed deliveries come from 127.0.0.1, an address no flooding client has.

Run: `.venv/bin/python -m bench.flood [--case large|slow] [--connections N] [--mib M]
[--slow-connections N] [--slow-seconds S]` (both cases without ``--case``). Writes
`bench/results/flood.json` (the large flood's figures at the top, the slow floods' under
`slow_bodies`; a case not run keeps its previous figures).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bot.service.webhooks import sign

SECRET = b"bench-secret"
PIECE = 64 * 1024
SMALL = 1024 * 1024  # the largest body the service counts as small
SETTLE_SECONDS = 3.0


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    """The process's resident set, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / 1e6
    raise RuntimeError("no VmRSS")


def _status(sock: socket.socket) -> str:
    """The status code of the answer on ``sock``, or what happened instead."""
    try:
        data = sock.recv(4096)
    except OSError as exc:
        return type(exc).__name__
    parts = data.split(b" ", 2)
    return parts[1].decode() if len(parts) > 1 and data.startswith(b"HTTP/") else "closed"


def unsigned_flood(port: int, index: int, body: memoryview) -> str:
    """One client, at an address of its own: a large body with a wrong signature, sent until
    the server answers."""
    head = (f"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: flood-{index}\r\n"
            f"X-Hub-Signature-256: sha256={'0' * 64}\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    source = (f"127.0.1.{1 + index % 250}", 0)
    with socket.create_connection(("127.0.0.1", port), timeout=120, source_address=source) as sock:
        sock.sendall(head)
        for start in range(0, len(body), PIECE):
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:  # answered before the whole body went: refused unread
                return _status(sock)
            try:
                sock.sendall(body[start:start + PIECE])
            except OSError as exc:
                return type(exc).__name__
        return _status(sock)


def signed_trickle(url: str, stop: threading.Event, statuses: Counter[str]) -> None:
    """Small signed deliveries, one after another, until ``stop``."""
    with httpx.Client(base_url=url, timeout=60) as client:
        n = 0
        while not stop.is_set():
            body = json.dumps({"action": "opened", "number": n, "zen": "x" * 2000}).encode()
            headers = {"Content-Type": "application/json", "X-GitHub-Event": "issues",
                       "X-GitHub-Delivery": f"real-{n}", "X-Hub-Signature-256": sign(SECRET, body)}
            try:
                statuses[str(client.post("/webhook", content=body, headers=headers).status_code)] += 1
            except httpx.TransportError as exc:
                statuses[type(exc).__name__] += 1
            n += 1


def slow_body(port: int, source: str, stop: threading.Event, answers: Counter[str]) -> None:
    """One client at ``source``: a small body declared and sent a byte a second, until the server
    answers or closes; then again, until ``stop``."""
    n = 0
    while not stop.is_set():
        head = (f"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"X-GitHub-Event: push\r\nX-GitHub-Delivery: slow-{source}-{n}\r\n"
                f"X-Hub-Signature-256: sha256={'0' * 64}\r\nContent-Length: {SMALL}\r\n\r\n{{").encode()
        n += 1
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=60, source_address=(source, 0))
        except OSError as exc:
            answers[type(exc).__name__] += 1
            stop.wait(1)
            continue
        with sock:
            try:
                sock.sendall(head)
                while not stop.is_set():
                    readable, _, _ = select.select([sock], [], [], 1.0)
                    if readable:
                        answers[_status(sock)] += 1
                        break
                    sock.sendall(b" ")
            except OSError as exc:
                answers[type(exc).__name__] += 1


@contextmanager
def service(tmp: str) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """`rocmbot serve --no-worker` on a fresh SQLite database, once it is ready."""
    port = _port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "ROCMBOT_WEBHOOK_SECRET": SECRET.decode(), "ROCMBOT_LOG_LEVEL": "ERROR",
           "ROCMBOT_DATABASE_URL": f"sqlite:///{tmp}/flood-{port}.db"}
    argv = [sys.executable, "-m", "bot.cli", "serve", "--no-worker", "--port", str(port)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit("the service did not start")
            time.sleep(0.1)
        time.sleep(SETTLE_SECONDS)
        yield proc, port
    finally:
        proc.terminate()
        proc.wait(30)


class Watch:
    """The resident set's peak, sampled every 10 ms, and small signed deliveries sent one after
    another, from the start of the block to its end."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int) -> None:
        self.pid = proc.pid
        self.idle = rss_mb(proc.pid)
        self.peak = self.idle
        self.real: Counter[str] = Counter()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._sample),
                        threading.Thread(target=signed_trickle,
                                         args=(f"http://127.0.0.1:{port}", self.stop, self.real))]

    def _sample(self) -> None:
        while not self.stop.wait(0.01):
            self.peak = max(self.peak, rss_mb(self.pid))

    def __enter__(self) -> Watch:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()

    def figures(self) -> dict[str, Any]:
        time.sleep(SETTLE_SECONDS)
        after = rss_mb(self.pid)
        return {"rss_mb": {"idle": round(self.idle, 1), "peak": round(self.peak, 1),
                           "after": round(after, 1)},
                "peak_over_idle": round(self.peak / self.idle, 2),
                "after_over_idle": round(after / self.idle, 2)}


def large(tmp: str, connections: int, mib: int) -> dict[str, Any]:
    body = memoryview(b"{" + b" " * (mib * 1024 * 1024 - 2) + b"}")
    with service(tmp) as (proc, port):
        with Watch(proc, port) as watch:
            started = time.monotonic()
            with ThreadPoolExecutor(connections) as pool:
                flood = Counter(pool.map(lambda i: unsigned_flood(port, i, body), range(connections)))
            seconds = time.monotonic() - started
        result = {"connections": connections, "mib_each": mib, "flood_seconds": round(seconds, 2),
                  **watch.figures(), "unsigned_answers": dict(sorted(flood.items())),
                  "signed_small_answers": dict(sorted(watch.real.items()))}
    print(f"{connections} unsigned {mib} MiB bodies at once in {seconds:.1f} s")
    _print_rss(result)
    print(f"unsigned answers: {result['unsigned_answers']}")
    print(f"small signed deliveries meanwhile: {result['signed_small_answers']}")
    return result


def slow(tmp: str, connections: int, seconds: float, addresses: int) -> dict[str, Any]:
    with service(tmp) as (proc, port):
        flood: Counter[str] = Counter()
        stop = threading.Event()
        sources = [f"127.0.0.{2 + n % addresses}" for n in range(connections)]
        clients = [threading.Thread(target=slow_body, args=(port, source, stop, flood)) for source in sources]
        with Watch(proc, port) as watch:
            for thread in clients:
                thread.start()
            time.sleep(seconds)
            stop.set()
            for thread in clients:
                thread.join()
        real = dict(sorted(watch.real.items()))
        sent = sum(real.values())
        accepted = round(100 * real.get("202", 0) / max(sent, 1), 2)
        result = {"connections": connections, "addresses": addresses, "seconds": seconds, **watch.figures(),
                  "signed_sent": sent, "signed_accepted_pct": accepted,
                  "signed_answers": real, "slow_answers": dict(sorted(flood.items()))}
    print(f"{connections} slow small bodies from {addresses} address(es) for {seconds:g} s")
    _print_rss(result)
    print(f"signed deliveries meanwhile: {result['signed_accepted_pct']}% of {sent} stored {real}")
    print(f"slow bodies' answers: {result['slow_answers']}")
    return result


def _print_rss(result: dict[str, Any]) -> None:
    rss = result["rss_mb"]
    print(f"resident set: idle {rss['idle']:.0f} MB, "
          f"peak {rss['peak']:.0f} MB ({result['peak_over_idle']:.2f}x), "
          f"after {rss['after']:.0f} MB ({result['after_over_idle']:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=["large", "slow"], help="run one case only")
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--mib", type=int, default=25)
    parser.add_argument("--slow-connections", type=int, default=80)
    parser.add_argument("--slow-seconds", type=float, default=40.0)
    args = parser.parse_args()
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    path = out / "flood.json"
    result: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.case in (None, "large"):
            result.update(large(tmp, args.connections, args.mib))
        if args.case in (None, "slow"):
            n = args.slow_connections
            result["slow_bodies"] = {
                "one_address": slow(tmp, n, args.slow_seconds, 1),
                "many_addresses": slow(tmp, n, args.slow_seconds, max(n // 2, 1)),
            }
    path.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
