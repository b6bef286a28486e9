"""The web process's memory under a flood of large unsigned deliveries.

`rocmbot serve --no-worker` on SQLite, as a process on loopback. Once it is ready its resident
set is read (idle); then ``--connections`` clients at once each declare a ``--mib`` MiB body
with a wrong signature and send it in 64 KiB pieces, stopping when the server answers (a body
refused before it is read gets its answer at once). Meanwhile one client sends small signed
deliveries one after another, to see whether real deliveries still get in. The resident set
is sampled every 10 ms (peak), and read again once the flood is over and the process has been
idle for a while (after). Figures are MB (10^6 bytes) and ratios to the idle set.

Run: `.venv/bin/python -m bench.flood [--connections N] [--mib M]`. Writes
`bench/results/flood.json`.
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from bot.service.webhooks import sign

SECRET = b"bench-secret"
PIECE = 64 * 1024
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
    """One client: a large body with a wrong signature, sent until the server answers."""
    head = (f"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: flood-{index}\r\n"
            f"X-Hub-Signature-256: sha256={'0' * 64}\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--mib", type=int, default=25)
    args = parser.parse_args()
    body = memoryview(b"{" + b" " * (args.mib * 1024 * 1024 - 2) + b"}")
    port = _port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "ROCMBOT_WEBHOOK_SECRET": SECRET.decode(), "ROCMBOT_LOG_LEVEL": "ERROR",
               "ROCMBOT_DATABASE_URL": f"sqlite:///{tmp}/flood.db"}
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
            idle = rss_mb(proc.pid)
            peak = idle
            stop = threading.Event()

            def sample() -> None:
                nonlocal peak
                while not stop.wait(0.01):
                    peak = max(peak, rss_mb(proc.pid))

            real: Counter[str] = Counter()
            watchers = [threading.Thread(target=sample), threading.Thread(target=signed_trickle,
                                                                          args=(url, stop, real))]
            for thread in watchers:
                thread.start()
            started = time.monotonic()
            with ThreadPoolExecutor(args.connections) as pool:
                flood = Counter(pool.map(lambda i: unsigned_flood(port, i, body), range(args.connections)))
            seconds = time.monotonic() - started
            stop.set()
            for thread in watchers:
                thread.join()
            time.sleep(SETTLE_SECONDS)
            after = rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(30)
    result = {
        "connections": args.connections, "mib_each": args.mib, "flood_seconds": round(seconds, 2),
        "rss_mb": {"idle": round(idle, 1), "peak": round(peak, 1), "after": round(after, 1)},
        "peak_over_idle": round(peak / idle, 2), "after_over_idle": round(after / idle, 2),
        "unsigned_answers": dict(sorted(flood.items())), "signed_small_answers": dict(sorted(real.items())),
    }
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "flood.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"{args.connections} unsigned {args.mib} MiB bodies at once in {seconds:.1f} s")
    print(f"resident set: idle {idle:.0f} MB, peak {peak:.0f} MB ({peak / idle:.2f}x), "
          f"after {after:.0f} MB ({after / idle:.2f}x)")
    print(f"unsigned answers: {dict(sorted(flood.items()))}")
    print(f"small signed deliveries meanwhile: {dict(sorted(real.items()))}")


if __name__ == "__main__":
    main()
