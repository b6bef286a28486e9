"""Two web and three worker processes on one PostgreSQL: nothing lost, nothing done twice,
no PR processed by two workers at once, also when a worker is killed mid-batch."""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from bot.store.store import Store
from tests.service.helpers import SECRET, comment_payload, event_of, pr_payload, signed
from tests.service.recording_worker import LOG_TABLE


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    urls: list[str]
    workers: list[subprocess.Popen[str]]
    store: Store


@contextmanager
def cluster(database_url: str, *, web: int = 2, workers: int = 3, lease: float = 30.0) -> Iterator[Cluster]:
    env = {
        **os.environ,
        "ROCMBOT_DATABASE_URL": database_url,
        "ROCMBOT_WEBHOOK_SECRET": SECRET.decode(),
        "ROCMBOT_AUTO_MIGRATE": "0",
        "ROCMBOT_POLL_SECONDS": "0.02",
        "ROCMBOT_LEASE_SECONDS": str(lease),
        "ROCMBOT_WORKER_CONCURRENCY": "2",
        "ROCMBOT_LOG_LEVEL": "WARNING",
        "ROCMBOT_BACKOFF_BASE_SECONDS": "0.05",
    }
    store = Store(database_url)
    store.upgrade()
    with store.engine.begin() as conn:
        conn.execute(
            text(
                "TRUNCATE deliveries, pr_leases, effects, selections, approvals, dispatches RESTART IDENTITY"
            )
        )
        conn.execute(text(LOG_TABLE))
        conn.execute(text("TRUNCATE test_log"))
    procs: list[subprocess.Popen[str]] = []
    urls = []
    try:
        for _ in range(web):
            port = _free_port()
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "bot.cli", "serve", "--no-worker", "--port", str(port)],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
            )
            urls.append(f"http://127.0.0.1:{port}")
        worker_procs = [
            subprocess.Popen(
                [sys.executable, "-m", "tests.service.recording_worker"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            for _ in range(workers)
        ]
        procs.extend(worker_procs)
        for proc in worker_procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        for url in urls:
            while True:
                try:
                    if httpx.get(f"{url}/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "web process did not start"
                time.sleep(0.1)
        yield Cluster(urls, worker_procs, store)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        store.close()


def _plan(count: int, prs: int, seed: int) -> list[list[tuple[str, str, bytes, dict[str, str]]]]:
    """Batches of requests: 10% of deliveries sent twice; 5% sent in concurrent bursts per PR."""
    rng = random.Random(seed)
    requests = []
    for n in range(count):
        pr = rng.randrange(prs)
        if n % 4 == 0:
            body, headers = signed("pull_request", f"d{n}", pr_payload(pr, f"{n:040x}"))
        else:
            body, headers = signed("issue_comment", f"d{n}", comment_payload(pr, f"comment {n}"))
        requests.append((f"d{n}", f"octo/miles#{pr}", body, headers))
    twice = rng.sample(requests, count // 10)
    requests.extend(twice)
    rng.shuffle(requests)
    burst_prs = rng.sample(range(prs), max(1, prs // 20))
    bursts = [[r for r in requests if r[1] == f"octo/miles#{p}"] for p in burst_prs]
    in_bursts = {id(r) for b in bursts for r in b}
    singles = [[r] for r in requests if id(r) not in in_bursts]
    batches = singles + bursts
    rng.shuffle(batches)
    return batches


def _send(
    cl: Cluster,
    batches: list[list[tuple[str, str, bytes, dict[str, str]]]],
    after: int | None = None,
    hook: object = None,
) -> Counter[int]:
    statuses: Counter[int] = Counter()
    clients = [httpx.Client(base_url=u, timeout=30) for u in cl.urls]

    def post(index: int, request: tuple[str, str, bytes, dict[str, str]]) -> int:
        _, _, body, headers = request
        client = clients[index % len(clients)]
        try:
            return client.post("/webhook", content=body, headers=headers).status_code
        except httpx.RemoteProtocolError:
            # The server closed a kept-alive connection that sat idle past its keep-alive timeout
            # (a loaded machine stalls threads) just as this request went out on it: nothing was
            # read, so it is sent again on a new connection, as GitHub would redeliver it.
            return client.post("/webhook", content=body, headers=headers).status_code

    with ThreadPoolExecutor(16) as pool:
        for b, batch in enumerate(batches):
            if after is not None and b == after and callable(hook):
                hook()
            for status in pool.map(post, range(b, b + len(batch)), batch):
                statuses[status] += 1
    for c in clients:
        c.close()
    return statuses


def _wait_done(store: Store, timeout: float = 180) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        counts = store.counts()
        if counts["queued"] == counts["processing"] == 0:
            return counts
        time.sleep(0.2)
    raise AssertionError(f"not done in time: {store.counts()}")


def _check_no_pr_overlap(store: Store) -> Counter[str]:
    with store.engine.connect() as conn:
        rows = conn.execute(text("SELECT delivery_id, pr_key, owner, started, ended FROM test_log")).all()
    by_pr: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for _, pr, owner, started, ended in rows:
        by_pr[pr].append((started, ended, owner))
    for pr, spans in by_pr.items():
        spans.sort()
        for (_, e1, o1), (s2, _, o2) in itertools.pairwise(spans):
            assert s2 >= e1, f"{pr} processed by {o1} and {o2} at once"
    return Counter(d for d, *_ in rows)


@pytest.mark.timeout(600)
def test_a_thousand_deliveries_are_processed_exactly_once(postgres_url: str) -> None:
    """Three worker processes on one PostgreSQL (bench/flood.py measures the rate at scale)."""
    batches = _plan(1000, 100, seed=5)
    with cluster(postgres_url) as cl:
        statuses = _send(cl, batches)
        counts = _wait_done(cl.store)
        runs = _check_no_pr_overlap(cl.store)
        records = {d.delivery_id: d for d in cl.store.recent(limit=5000)}
    assert statuses[202] == 1000 and statuses[200] == 100 and sum(statuses.values()) == 1100
    assert len(records) == 1000
    assert counts["done"] + counts["superseded"] == 1000 and counts["dead"] == 0
    done = {d for d, r in records.items() if r.status == "done"}
    assert set(runs) == done
    assert all(n == 1 for n in runs.values()), [d for d, n in runs.items() if n > 1]


@pytest.mark.timeout(600)
def test_a_killed_worker_s_leases_expire_and_the_work_completes(postgres_url: str) -> None:
    batches = _plan(600, 60, seed=9)
    with cluster(postgres_url, lease=2.0) as cl:
        victim = cl.workers[0]

        def kill() -> None:
            victim.send_signal(signal.SIGKILL)

        statuses = _send(cl, batches, after=len(batches) // 2, hook=kill)
        counts = _wait_done(cl.store)
        runs = _check_no_pr_overlap(cl.store)
        records = {d.delivery_id: d for d in cl.store.recent(limit=5000)}
    assert victim.returncode == -signal.SIGKILL
    assert statuses[202] == 600
    assert counts["done"] + counts["superseded"] == 600 and counts["dead"] == 0
    done = {d for d, r in records.items() if r.status == "done"}
    assert set(runs) == done
    # At most the two deliveries the killed worker's threads held can have run twice.
    assert sum(n - 1 for n in runs.values()) <= 2


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not in time: {what}"
        time.sleep(0.05)


@pytest.mark.timeout(300)
def test_a_restarted_worker_takes_back_its_dead_predecessor_s_work_at_once(tmp_path: Path) -> None:
    """After a SIGKILL the next process of the host finds its predecessor gone and runs the
    work it held now, not when its lease (ten minutes here) runs out; leases of a process
    still running and of another host are left to expire."""
    url = f"sqlite:///{tmp_path / 'rocmbot.db'}"
    store = Store(url)
    store.upgrade()
    with store.engine.begin() as conn:
        conn.execute(text(LOG_TABLE))

    def add(delivery_id: str, number: int) -> None:
        payload = pr_payload(number)
        store.add_delivery(event_of("pull_request", delivery_id, payload), json.dumps(payload))

    alive_here, elsewhere = f"{socket.gethostname()}:{os.getpid()}:tester/0", "elsewhere:1:other/0"
    add("held-here", 2)
    store.claim(alive_here, lease_seconds=600, max_attempts=5)
    add("held-elsewhere", 3)
    store.claim(elsewhere, lease_seconds=600, max_attempts=5)
    add("d1", 1)
    env = {**os.environ, "ROCMBOT_DATABASE_URL": url, "ROCMBOT_WEBHOOK_SECRET": SECRET.decode(),
           "ROCMBOT_POLL_SECONDS": "0.02", "ROCMBOT_LEASE_SECONDS": "600",
           "ROCMBOT_WORKER_CONCURRENCY": "1", "ROCMBOT_LOG_LEVEL": "WARNING"}

    def worker(handler_seconds: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, "-m", "tests.service.recording_worker"],
                                env={**env, "TEST_HANDLER_SECONDS": handler_seconds},
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        return proc

    first = worker("600")  # stuck in its handler until killed
    try:
        _wait_for(lambda: store.get("d1").status == "processing", "the first worker claims")  # type: ignore[union-attr]
    finally:
        first.kill()
        first.wait()
    second = worker("0")
    try:
        _wait_for(lambda: store.get("d1").status == "done", "the second worker redoes it")  # type: ignore[union-attr]
        record = store.get("d1")
        assert record is not None and record.attempts == 2
        for delivery_id, owner in (("held-here", alive_here), ("held-elsewhere", elsewhere)):
            held = store.get(delivery_id)
            assert held is not None and (held.status, held.lease_owner) == ("processing", owner)
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(30)
        store.close()
