"""Webhook ack latency and ingest throughput, against a bare endpoint measured in the same run.

Three servers, each a uvicorn process on loopback: a bare FastAPI endpoint that only answers
202 (the baseline), and `rocmbot serve --no-worker` on SQLite and on PostgreSQL (a throwaway
server from Debian's packages). Each gets the same signed `pull_request` deliveries from the
same client: first one at a time (latency p50/p99), then 16 at a time (deliveries per second).

Run: `.venv/bin/python -m bench.ingest [--requests N]`. Writes `bench/results/ingest.json`.
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
from contextlib import contextmanager
from pathlib import Path

import httpx

from bot.webhooks import sign

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


def _requests(n: int, tag: str) -> list[tuple[bytes, dict[str, str]]]:
    out = []
    for i in range(n):
        payload = {"action": "synchronize", "number": i % 100,
                   "pull_request": {"number": i % 100, "head": {"sha": f"{i:040x}"}},
                   "repository": {"full_name": "octo/miles"}, "installation": {"id": 1}}
        body = json.dumps(payload).encode()
        out.append((body, {"Content-Type": "application/json", "X-GitHub-Event": "pull_request",
                           "X-GitHub-Delivery": f"{tag}-{i}", "X-Hub-Signature-256": sign(SECRET, body)}))
    return out


def measure(url: str, n: int, tag: str) -> dict[str, float]:
    sequential = _requests(n, f"{tag}-seq")
    latencies = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for body, headers in sequential[:50]:  # warm-up, not counted
            client.post("/webhook", content=body, headers={**headers, "X-GitHub-Delivery": "w" + headers[
                "X-GitHub-Delivery"]})
        for body, headers in sequential:
            start = time.perf_counter()
            answer = client.post("/webhook", content=body, headers=headers)
            latencies.append(time.perf_counter() - start)
            assert answer.status_code == 202, answer.text
    parallel = _requests(n, f"{tag}-par")
    clients = [httpx.Client(base_url=url, timeout=30) for _ in range(16)]
    start = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(lambda ir: clients[ir[0] % 16].post("/webhook", content=ir[1][0],
                                                                  headers=ir[1][1]).status_code,
                              enumerate(parallel)))
    elapsed = time.perf_counter() - start
    for c in clients:
        c.close()
    assert codes.count(202) == n
    latencies.sort()
    return {
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
        "per_second": n / elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-") as tmp:
        (Path(tmp) / "bare_app.py").write_text(BARE_APP)
        with _server([python, "-m", "uvicorn", "--app-dir", tmp, "bare_app:app", "--log-level", "warning"],
                     {}, "/docs") as url:
            results["bare endpoint"] = measure(url, args.requests, "bare")
        service = [python, "-m", "bot.cli", "serve", "--no-worker"]
        env = {"ROCMBOT_WEBHOOK_SECRET": SECRET.decode()}  # INFO logs, as deployed
        sqlite_env = {**env, "ROCMBOT_DATABASE_URL": f"sqlite:///{tmp}/bench.db"}
        with _server(service, sqlite_env, "/readyz") as url:
            results["rocmbot, SQLite"] = measure(url, args.requests, "sqlite")
        from tests.pg import postgres_server

        with postgres_server() as pg, _server(
            service, {**env, "ROCMBOT_DATABASE_URL": pg, "ROCMBOT_AUTO_MIGRATE": "1"}, "/readyz"
        ) as url:
            results["rocmbot, PostgreSQL"] = measure(url, args.requests, "pg")
    base = results["bare endpoint"]
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "ingest.json").write_text(json.dumps(results, indent=2) + "\n")
    rows = [f"{'server':<22} {'p50 ms':>8} {'p99 ms':>8} {'p99/bare':>9} {'deliveries/s':>13} {'vs bare':>8}"]
    for name, r in results.items():
        p99_ratio = r["p99_ms"] / base["p99_ms"]
        rate_ratio = r["per_second"] / base["per_second"]
        rows.append(f"{name:<22} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {p99_ratio:>8.2f}x "
                    f"{r['per_second']:>13.0f} {rate_ratio:>7.2f}x")
    sys.stdout.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
