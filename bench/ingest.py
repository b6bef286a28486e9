"""Webhook ack latency and ingest throughput, against a bare endpoint measured in the same run.

Three servers, each a uvicorn process on loopback with the same uvicorn options (the defaults,
access log off): a bare FastAPI endpoint that reads the body and answers 202 (the baseline),
and `rocmbot serve --no-worker` on SQLite and on PostgreSQL (a throwaway server from Debian's
packages, configured as the tests configure it). All three run for the whole measurement and
get the same signed `pull_request` deliveries from the same client:

- warm-up: ``--warm-up`` deliveries each, not counted, so that every server is measured in
  its steady state (a PostgreSQL server just created is still settling for a second or two);
- latency: one delivery at a time, in ``--rounds`` rounds of an equal share each, the servers
  taking turns in a rotating order, so that a slow spell of a shared machine falls on all
  three alike instead of on whichever server it happens to coincide with (each turn starts
  with a few uncounted deliveries, after the server's idle wait); p50 and p99 of all of a
  server's counted deliveries;
- throughput: 16 senders at a time, each server in turn (deliveries per second).

Run: `.venv/bin/python -m bench.ingest [--requests N] [--warm-up N] [--rounds N]`. Writes
`bench/results/ingest.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

from bot.service.webhooks import sign

SECRET = b"bench-secret"
BARE_APP = '''
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
app = FastAPI()
@app.post("/webhook")
async def webhook(request: Request) -> JSONResponse:
    await request.body()
    return JSONResponse({"status": "queued"}, status_code=202)
'''
SENDERS = 16
# Uncounted deliveries at the start of each turn: a server has been idle while the others took
# theirs, and its first answer after that would measure the pause, not the ingest path.
REWARM = 5

Request = tuple[bytes, dict[str, str]]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _server(argv: list[str], env: dict[str, str], ready_path: str) -> Iterator[str]:
    port = _port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([*argv, "--port", str(port)], env={**os.environ, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + ready_path).status_code < 500:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{argv} did not start")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


def _requests(n: int, tag: str) -> list[Request]:
    out = []
    for i in range(n):
        payload = {"action": "synchronize", "number": i % 100,
                   "pull_request": {"number": i % 100, "head": {"sha": f"{i:040x}"}},
                   "repository": {"full_name": "octo/miles"}, "installation": {"id": 1}}
        body = json.dumps(payload).encode()
        out.append((body, {"Content-Type": "application/json", "X-GitHub-Event": "pull_request",
                           "X-GitHub-Delivery": f"{tag}-{i}", "X-Hub-Signature-256": sign(SECRET, body)}))
    return out


def _post(client: httpx.Client, request: Request) -> float:
    body, headers = request
    start = time.perf_counter()
    answer = client.post("/webhook", content=body, headers=headers)
    elapsed = time.perf_counter() - start
    assert answer.status_code == 202, answer.text
    return elapsed


def latencies(urls: dict[str, str], n: int, warm_up: int, rounds: int) -> dict[str, list[float]]:
    """Each server's latency for ``n`` deliveries sent one at a time, the servers taking turns."""
    names = list(urls)
    clients = {name: httpx.Client(base_url=url, timeout=30) for name, url in urls.items()}
    try:
        for name in names:
            for request in _requests(warm_up, f"{name}-warm"):
                _post(clients[name], request)
        pending = {name: _requests(n, f"{name}-seq") for name in names}
        rewarm = {name: _requests(REWARM * rounds, f"{name}-rewarm") for name in names}
        out: dict[str, list[float]] = {name: [] for name in names}
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                for request in rewarm[name][r * REWARM:(r + 1) * REWARM]:
                    _post(clients[name], request)
                share = pending[name][r * n // rounds:(r + 1) * n // rounds]
                out[name].extend(_post(clients[name], request) for request in share)
        return out
    finally:
        for client in clients.values():
            client.close()


def throughput(url: str, n: int, tag: str) -> float:
    """Deliveries per second with ``SENDERS`` concurrent senders."""
    parallel = _requests(n, tag)
    clients = [httpx.Client(base_url=url, timeout=30) for _ in range(SENDERS)]
    start = time.perf_counter()
    with ThreadPoolExecutor(SENDERS) as pool:
        list(pool.map(lambda ir: _post(clients[ir[0] % SENDERS], ir[1]), enumerate(parallel)))
    elapsed = time.perf_counter() - start
    for c in clients:
        c.close()
    return n / elapsed


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[int(len(ordered) * 0.99) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="deliveries per server and phase")
    parser.add_argument("--warm-up", type=int, default=500, help="deliveries per server first, not counted")
    parser.add_argument("--rounds", type=int, default=20, help="turns each server takes in the latency phase")
    args = parser.parse_args()
    python = sys.executable
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-") as tmp, ExitStack() as stack:
        from tests.pg import postgres_server

        (Path(tmp) / "bare_app.py").write_text(BARE_APP)
        service = [python, "-m", "bot.cli", "serve", "--no-worker"]
        env = {"ROCMBOT_WEBHOOK_SECRET": SECRET.decode()}  # INFO logs, as deployed
        pg = stack.enter_context(postgres_server())
        urls = {
            "bare endpoint": stack.enter_context(_server(
                [python, "-m", "uvicorn", "--app-dir", tmp, "bare_app:app", "--log-level", "warning",
                 "--no-access-log"], {}, "/docs")),
            "rocmbot, SQLite": stack.enter_context(_server(
                service, {**env, "ROCMBOT_DATABASE_URL": f"sqlite:///{tmp}/bench.db"}, "/readyz")),
            "rocmbot, PostgreSQL": stack.enter_context(_server(
                service, {**env, "ROCMBOT_DATABASE_URL": pg, "ROCMBOT_AUTO_MIGRATE": "1"}, "/readyz")),
        }
        measured = latencies(urls, args.requests, args.warm_up, args.rounds)
        rates = {name: throughput(url, args.requests, name) for name, url in urls.items()}
    results = {
        name: {"p50_ms": statistics.median(measured[name]) * 1000, "p99_ms": _p99(measured[name]) * 1000,
               "per_second": rates[name]}
        for name in urls
    }
    run = {"requests": args.requests, "warm_up": args.warm_up, "rounds": args.rounds,
           "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)]}
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "ingest.json").write_text(json.dumps({"run": run, **results}, indent=2) + "\n")
    base = results["bare endpoint"]
    rows = [f"{'server':<22} {'p50 ms':>8} {'p99 ms':>8} {'p99/bare':>9} {'deliveries/s':>13} {'vs bare':>8}"]
    for name, r in results.items():
        p99_ratio = r["p99_ms"] / base["p99_ms"]
        rate_ratio = r["per_second"] / base["per_second"]
        rows.append(f"{name:<22} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {p99_ratio:>8.2f}x "
                    f"{r['per_second']:>13.0f} {rate_ratio:>7.2f}x")
    rows.append(f"load average {run['load_average'][0]} before, {run['load_average'][1]} after")
    sys.stdout.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
