"""The webhook endpoint under hostile input, over real HTTP (uvicorn on loopback, real SQLite).

Whatever the headers, body, encoding or size: never a 5xx, every refusal a JSON object
`{"error": ...}`, and nothing stored unless the body carries a correct signature (the store
is counted after every example).
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from bot.service.app import create_app
from bot.service.webhooks import sign
from bot.store.store import Store
from config.settings import Settings
from tests.service.helpers import SECRET, comment_payload, pr_payload
from tests.service.server import Running, running

LIMIT = 16 * 1024  # max_body_bytes of the service under test
FUZZ = settings(max_examples=120, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@dataclass
class Answer:
    status: int
    headers: dict[bytes, bytes]
    body: bytes

    @property
    def from_the_app(self) -> bool:
        """Whether the app answered; uvicorn refuses malformed HTTP itself, in plain text."""
        return not (self.status == 400 and self.body == b"Invalid HTTP request received.")

    def json(self) -> Any:
        assert self.headers.get(b"content-type") == b"application/json", self.headers
        return json.loads(self.body)


def _parse_answer(raw: bytes) -> Answer:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    length = headers.get(b"content-length")
    return Answer(status, headers, body[: int(length)] if length is not None else body)


@dataclass
class Service:
    run: Running
    store: Store
    client: httpx.Client

    @property
    def url(self) -> str:
        return self.run.url

    def stored(self) -> int:
        """Deliveries stored once every request sent so far has been handled to its end."""
        self.run.wait_idle()
        return sum(self.store.counts().values())

    def post(self, headers: list[tuple[bytes, bytes]], body: bytes) -> Answer:
        """One request on its own connection, the header bytes sent exactly as given."""
        head = b"".join(name + b": " + value + b"\r\n" for name, value in headers)
        length = b"Content-Length: %d\r\n" % len(body)
        raw = b"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + length + head
        return _parse_answer(_raw_exchange(self.url, raw + b"\r\n" + body))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("hostile")
    settings_ = Settings(webhook_secret=SecretStr(SECRET.decode()),
                         database_url=f"sqlite:///{folder}/db.sqlite", max_body_bytes=LIMIT)
    with running(create_app(settings_)) as run, httpx.Client(timeout=30) as client:
        store = Store(settings_.database_url)
        try:
            yield Service(run, store, client)
        finally:
            store.close()


# ----------------------------------------------------------------------------- strategies

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63 - 2, max_value=10**40)
    | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
# Payload shapes the event model reads, with each field of the wrong kind now and then.
odd_payloads = st.fixed_dictionaries({}, optional={
    "action": json_values, "number": json_values, "pull_request": json_values, "issue": json_values,
    "repository": json_values | st.fixed_dictionaries({"full_name": json_values}),
    "installation": json_values | st.fixed_dictionaries({"id": json_values}),
    "sender": json_values, "check_run": json_values, "workflow_run": json_values,
    "comment": json_values,
})


def _text_json(payload: Any) -> bytes:
    return json.dumps(payload).encode()


SPECIAL_BODIES = [
    b"", b"{}", b"[]", b"null", b"0", b'"x"', b"{", b"\xff\xfe{}", b"\x00", b'{"a": NaN}',
    b'{"repository": {"full_name": "\\ud800"}}',  # a lone surrogate: valid JSON, not UTF-8
    b'{"repository": {"full_name": "a\\u0000b"}, "installation": {"id": 99999999999999999999}}',
    b'{"pull_request": {"number": -99999999999999999999, "head": {"sha": "\\udfff"}}}',
    b'{"a": 1, "a": 2}', b"\xef\xbb\xbf{}",  # duplicate keys; a BOM
    b"[" * 5000 + b"]" * 5000, b'{"a":' * 3000 + b"1" + b"}" * 3000,  # deep nesting
    b'{"x": "' + b"y" * (LIMIT - 12) + b'"}',  # just under the limit
]
bodies = st.one_of(
    st.binary(max_size=300),
    st.sampled_from(SPECIAL_BODIES),
    json_values.map(_text_json),
    odd_payloads.map(_text_json),
    st.builds(lambda n: pr_payload(number=n), st.integers(-2**70, 2**70)).map(_text_json),
    st.builds(comment_payload, body=st.text(max_size=40)).map(_text_json),
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.integers(LIMIT - 3, LIMIT + 3).map(lambda n: b'{"p": "' + b"z" * (n - 9) + b'"}'),
    odd_payloads.map(lambda p: urllib.parse.urlencode({"payload": json.dumps(p)}).encode()),
    st.text(max_size=60).map(lambda t: urllib.parse.urlencode({"payload": t, "other": t}).encode()),
    st.binary(max_size=60).map(lambda b: b"payload=" + b),
)
# Header values as bytes: anything but the line breaks that would end the header.
header_values = st.binary(max_size=120).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))
events = st.one_of(
    st.sampled_from([b"pull_request", b"issue_comment", b"ping", b"check_run", b"workflow_run",
                     b"push", b"", b"PULL_REQUEST", b"x" * 101]),
    header_values,
)
delivery_ids = st.one_of(st.uuids().map(lambda u: str(u).encode()), header_values,
                         st.just(b"d" * 101), st.just(b"   "))
content_types = st.one_of(
    st.sampled_from([None, b"application/json", b"application/json; charset=utf-8", b"APPLICATION/JSON",
                     b"application/x-www-form-urlencoded", b"text/plain", b"multipart/form-data; boundary=x",
                     b"", b";", b"application/json;;;", b"application/vnd.github+json"]),
    header_values,
)


@st.composite
def signatures(draw: st.DrawFn, body: bytes) -> bytes | None:
    """A signature header for ``body``: right, missing, or wrong in one of many ways."""
    right = sign(SECRET, body)
    # Right half the time, so that what comes after the signature check is fuzzed as well.
    choice = draw(st.sampled_from(["right"] * 10 + ["missing", "other-secret", "other-body", "upper",
                                                    "prefix", "sha1", "empty", "junk", "truncated",
                                                    "spaced"]))
    value = {
        "right": right,
        "missing": None,
        "other-secret": sign(b"not-the-secret", body),
        "other-body": sign(SECRET, body + b" "),
        "upper": "sha256=" + right[7:].upper(),
        "prefix": right[7:],
        "sha1": "sha1=" + right[7:47],
        "empty": "",
        "junk": draw(header_values).decode("latin-1"),
        "truncated": right[:-1],
        "spaced": " " + right + " ",
    }[choice]
    return None if value is None else value.encode("latin-1")


@dataclass
class Request:
    headers: list[tuple[bytes, bytes]]
    body: bytes

    def header(self, name: bytes) -> bytes | None:
        """The value the server reads: the first of that name, blanks around it dropped."""
        return next((v.strip(b" \t") for n, v in self.headers if n.lower() == name.lower()), None)

    @property
    def signed(self) -> bool:
        return self.header(b"X-Hub-Signature-256") == sign(SECRET, self.body).encode()


@st.composite
def requests(draw: st.DrawFn) -> Request:
    body = draw(bodies)
    headers: list[tuple[bytes, bytes]] = []
    for name, values in ((b"X-GitHub-Event", events), (b"X-GitHub-Delivery", delivery_ids),
                         (b"Content-Type", content_types)):
        value = draw(values)
        if value is not None and draw(st.integers(0, 9)):  # now and then, leave a header out
            headers.append((name, value))
    signature = draw(signatures(body))
    if signature is not None:
        headers.append((b"X-Hub-Signature-256", signature))
    # Repeated headers (a second signature, event or delivery id) and unrelated ones.
    headers.extend(draw(st.lists(st.tuples(
        st.sampled_from([b"X-GitHub-Hook-ID", b"X-Forwarded-For", b"Accept", b"X-GitHub-Event",
                         b"X-GitHub-Delivery", b"X-Hub-Signature-256"]),
        header_values), max_size=2)))
    return Request(headers, body)


def _assert_answer(answer: Answer, stored_before: int, stored_after: int, signed: bool) -> None:
    assert answer.status < 500, answer
    if not answer.from_the_app:
        assert stored_after == stored_before
        return
    document = answer.json()
    if answer.status >= 400:
        assert isinstance(document, dict) and list(document) == ["error"], document
        assert isinstance(document["error"], str) and document["error"]
    else:
        assert signed, f"an unsigned delivery was accepted: {document}"
        assert document["status"] in ("queued", "duplicate", "pong")
    assert stored_after == stored_before + (answer.status == 202), "stored without a 202"


# ----------------------------------------------------------------------------- tests


@FUZZ
@given(request=requests())
def test_any_request_gets_a_json_answer_below_500_and_only_signed_ones_are_stored(
    service: Service, request: Request
) -> None:
    before = service.stored()
    answer = service.post(request.headers, request.body)
    _assert_answer(answer, before, service.stored(), request.signed)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.integers(LIMIT - 64, LIMIT + 64), form=st.booleans())
def test_signed_bodies_around_the_size_limit(service: Service, size: int, form: bool) -> None:
    payload = pr_payload()
    payload["padding"] = ""
    text = json.dumps(payload)
    payload["padding"] = "p" * max(0, size - len(text) - (8 if form else 0))
    raw = json.dumps(payload)
    body = urllib.parse.urlencode({"payload": raw}).encode() if form else raw.encode()
    headers = [(b"X-GitHub-Event", b"pull_request"), (b"X-GitHub-Delivery", f"size-{size}-{form}".encode()),
               (b"Content-Type", b"application/x-www-form-urlencoded" if form else b"application/json"),
               (b"X-Hub-Signature-256", sign(SECRET, body).encode())]
    before = service.stored()
    answer = service.post(headers, body)
    after = service.stored()
    if len(body) > LIMIT:
        assert answer.status == 413 and "limit" in answer.json()["error"]
    else:
        assert answer.status in (200, 202), answer
    _assert_answer(answer, before, after, signed=True)


@pytest.mark.parametrize("body", SPECIAL_BODIES, ids=[f"special-{i}" for i in range(len(SPECIAL_BODIES))])
@pytest.mark.parametrize("content_type", [b"application/json", b"application/x-www-form-urlencoded"])
def test_signed_bodies_of_odd_shapes(service: Service, body: bytes, content_type: bytes) -> None:
    """Huge ids, NULs and lone surrogates the database cannot take, deep nesting, BOMs."""
    if content_type != b"application/json":
        body = b"payload=" + urllib.parse.quote_from_bytes(body).encode()
    headers = [(b"X-GitHub-Event", b"pull_request"), (b"Content-Type", content_type),
               (b"X-GitHub-Delivery", f"odd-{hash(body)}".encode()),
               (b"X-Hub-Signature-256", sign(SECRET, body).encode())]
    before = service.stored()
    answer = service.post(headers, body)
    _assert_answer(answer, before, service.stored(), signed=True)


def _raw_exchange(url: str, data: bytes, *, hang_up: bool = False) -> bytes:
    """Send bytes as they are (wrong lengths, broken framing) and read until the server closes;
    with ``hang_up``, close our side after sending, as a client that goes away does."""
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(data)
        if hang_up:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def _request(headers: dict[str, str], body: bytes) -> bytes:
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return f"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}\r\n".encode("latin-1") + body


@pytest.mark.parametrize(
    ("length", "sent", "extra"),
    [
        ("100", b"{}", {}),  # declares more than it sends, then hangs up
        ("99999999999999999999999", b"{}", {}),  # far over the limit, declared
        (str(LIMIT + 1), b"{" * 10, {}),
        ("-5", b"", {}),
        ("2, 2", b"{}", {}),
        ("0x10", b"{}", {}),
        ("2", b"{}" * 50, {}),  # sends more than it declares (the rest is a broken next request)
        (None, b"5\r\n{}{}{\r\n0\r\n\r\n", {"Transfer-Encoding": "chunked"}),
        (None, b"ffffffff\r\n{}", {"Transfer-Encoding": "chunked"}),  # a chunk larger than the limit
        ("2", b"{}", {"Transfer-Encoding": "chunked"}),  # both framings
    ],
)
@pytest.mark.parametrize("signed", [True, False])
def test_broken_framing_is_never_a_server_error_nor_stored(
    service: Service, length: str | None, sent: bytes, extra: dict[str, str], signed: bool
) -> None:
    body = sent
    delivery = f"frame-{length}-{len(sent)}-{extra}-{signed}"
    headers = {"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": delivery,
               "Content-Type": "application/json",
               "X-Hub-Signature-256": sign(SECRET if signed else b"wrong", body), **extra}
    if length is not None:
        headers["Content-Length"] = length
    before = service.stored()
    answer = _raw_exchange(service.url, _request(headers, body), hang_up=True)
    statuses = [line[9:12] for line in answer.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]
    assert not [s for s in statuses if s.startswith(b"5")], answer[:300]
    # A framing that was valid after all (`2, 2` is a legal list of one length) may store the
    # delivery, even when we hung up before its answer; but only the bytes that were signed.
    after = service.stored()
    record = service.store.get(delivery)
    if record is None or not signed:
        assert after == before and record is None
    else:
        assert record.payload_text == body.decode()


def test_a_client_that_hangs_up_mid_body_causes_no_server_error(
    service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    """Starlette raises ClientDisconnect into the endpoint; it must end as a 400, not a 500
    logged as "Exception in ASGI application"."""
    with caplog.at_level("INFO"):
        _raw_exchange(service.url, _request({"X-GitHub-Event": "push", "X-GitHub-Delivery": "gone",
                                             "Content-Length": "1000"}, b"{" * 10), hang_up=True)
        deadline = time.monotonic() + 60
        while not any("rejected" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
            time.sleep(0.02)
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    assert any(getattr(r, "status", None) == 400 and "went away" in str(getattr(r, "reason", ""))
               for r in caplog.records)


def test_unverified_event_names_do_not_grow_the_metrics(service: Service) -> None:
    for i in range(30):
        service.post([(b"X-GitHub-Event", f"made-up-{i}".encode()), (b"X-GitHub-Delivery", b"m")], b"{}")
    metrics = service.client.get(f"{service.url}/metrics").text
    assert "made-up-" not in metrics
    assert 'event="other",outcome="rejected_401"' in metrics


def test_the_openapi_description_documents_the_webhook_contract(service: Service) -> None:
    spec = service.client.get(f"{service.url}/openapi.json").json()
    operation = spec["paths"]["/webhook"]["post"]
    names = {p["name"] for p in operation["parameters"]}
    assert {"X-GitHub-Event", "X-GitHub-Delivery", "X-Hub-Signature-256"} <= names
    assert set(operation["requestBody"]["content"]) == {"application/json",
                                                        "application/x-www-form-urlencoded"}
    for status in ("400", "401", "413", "415", "503"):
        schema = operation["responses"][status]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorBody"}


# ------------------------------------------------------------------ memory under a flood

MIB = 1024 * 1024


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"not in time: {what}"
        time.sleep(0.005)


def _stalled(url: str, delivery: str, length: int, source: str = "127.0.0.1",
             sent: bytes = b"{" + b" " * 1023) -> socket.socket:
    """A client at ``source`` (any loopback address) that declares a body of ``length`` bytes,
    sends ``sent`` of it and waits."""
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    sock = socket.create_connection((host, int(port)), timeout=30, source_address=(source, 0))
    sock.sendall(_request({"X-GitHub-Event": "push", "X-GitHub-Delivery": delivery,
                           "X-Hub-Signature-256": "sha256=" + "0" * 64, "Content-Type": "application/json",
                           "Content-Length": str(length)}, sent))
    return sock


def _answer(sock: socket.socket) -> Answer:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    sock.close()
    return _parse_answer(b"".join(chunks))


@pytest.mark.slow
def test_bodies_read_at_once_are_capped_and_small_deliveries_keep_a_share(tmp_path: Path) -> None:
    """Unsigned bodies are held only within the budget: beyond it a large one is refused with
    503 before a byte of it is read, while a small signed delivery still gets in; once the
    held bodies end (401: unsigned), the budget is whole again."""
    settings_ = Settings(webhook_secret=SecretStr(SECRET.decode()), database_url=f"sqlite:///{tmp_path}/db.sqlite",
                         max_body_bytes=4 * MIB, body_buffer_bytes=10 * MIB,
                         body_read_seconds=600, body_chunk_seconds=600)
    app = create_app(settings_)
    budget = app.state.body_budget
    with running(app) as run:  # from two addresses: one may hold a quarter, at least one body
        held = [_stalled(run.url, f"big-{n}", 4 * MIB, f"127.0.0.{n + 2}") for n in range(2)]
        _wait_until(lambda: budget.used == 8 * MIB, "both large bodies are being read")
        refused = _parse_answer(_raw_exchange(run.url, _request(
            {"X-GitHub-Event": "push", "X-GitHub-Delivery": "big-2", "Content-Length": str(3 * MIB)}, b"")))
        assert refused.status == 503 and "too many deliveries" in refused.json()["error"]
        assert refused.headers[b"connection"] == b"close"
        body = json.dumps(pr_payload()).encode()
        small = httpx.post(f"{run.url}/webhook", content=body, timeout=30, headers={
            "X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "small",
            "X-Hub-Signature-256": sign(SECRET, body), "Content-Type": "application/json"})
        assert small.status_code == 202
        for sock in held:
            sock.sendall(b" " * (4 * MIB - 1025) + b"}")
            assert _answer(sock).status == 401
        _wait_until(lambda: budget.used == 0, "the held bodies are given back")
        again = httpx.post(f"{run.url}/webhook", content=b"{" + b" " * (4 * MIB - 2) + b"}", timeout=30,
                           headers={"X-GitHub-Event": "push", "X-GitHub-Delivery": "big-3",
                                    "X-Hub-Signature-256": "sha256=" + "0" * 64})
        assert again.status_code == 401
        assert budget.peak <= 10 * MIB and budget.used == 0


def test_a_body_that_does_not_come_in_time_is_408_and_gives_its_share_back(tmp_path: Path) -> None:
    settings_ = Settings(webhook_secret=SecretStr(SECRET.decode()), database_url=f"sqlite:///{tmp_path}/db.sqlite",
                         body_read_seconds=0.2)
    app = create_app(settings_)
    with running(app) as run:
        answer = _answer(_stalled(run.url, "slow", 2 * MIB))
        assert answer.status == 408 and "did not arrive" in answer.json()["error"]
        _wait_until(lambda: app.state.body_budget.used == 0, "the share is given back")


# ------------------------------------------------------------------ slow bodies

FLOOD = 80  # connections, each declaring a small body (a MiB) and sending a byte at a time


@dataclass
class Trickle:
    """A client that declares a body of ``length`` bytes and sends it a byte at a time, every
    ``every`` seconds, until the server answers or closes, or ``stop`` is set."""

    url: str
    source: str
    length: int = MIB
    every: float = 0.2
    status: str | None = None  # the answer's status code, "closed", or None while sending

    def run(self, stop: threading.Event) -> None:
        sock = _stalled(self.url, f"trickle-{self.source}-{id(self)}", self.length, self.source, sent=b"{")
        with sock:
            for _ in range(self.length - 1):
                readable, _, _ = select.select([sock], [], [], self.every)
                if readable:
                    break
                if stop.is_set():
                    return
                try:
                    sock.sendall(b" ")
                except OSError:
                    break
            try:
                answer = sock.recv(65536)
            except OSError:
                answer = b""
            self.status = answer[9:12].decode() if answer.startswith(b"HTTP/1.1 ") else "closed"


def _signed_post(client: httpx.Client, url: str, n: int) -> int:
    body = json.dumps(pr_payload(number=n)).encode()
    return client.post(f"{url}/webhook", content=body, headers={
        "X-GitHub-Event": "pull_request", "X-GitHub-Delivery": f"real-{n}",
        "Content-Type": "application/json",
        "X-Hub-Signature-256": sign(SECRET, body)}).status_code


@pytest.mark.slow
@pytest.mark.parametrize("addresses", [1, FLOOD // 2], ids=["one-address", "many-addresses"])
def test_signed_deliveries_get_in_while_slow_bodies_flood_the_intake(tmp_path: Path, addresses: int) -> None:
    """80 connections that declare a MiB each and send it a byte at a time, from one address or
    from 40, while signed deliveries come from another: every signed delivery is stored.
    (Before, each slow body held its declared MiB: the budget's 80 MiB were all taken.)"""
    settings_ = Settings(webhook_secret=SecretStr(SECRET.decode()), database_url=f"sqlite:///{tmp_path}/db.sqlite",
                         body_read_seconds=600, body_chunk_seconds=600)  # nobody is cut for slowness here
    app = create_app(settings_)
    budget = app.state.body_budget
    stop = threading.Event()
    with running(app) as run:
        flood = [Trickle(run.url, f"127.0.0.{2 + n % addresses}") for n in range(FLOOD)]
        threads = [threading.Thread(target=t.run, args=(stop,)) for t in flood]
        for thread in threads:
            thread.start()
        try:
            # Every slow body is being read, or was refused.
            _wait_until(lambda: len(run.server.server_state.tasks) + sum(t.status is not None for t in flood)
                        == FLOOD and all(t.status in (None, "503") for t in flood), "the flood is in")
            with httpx.Client(timeout=60) as client:
                statuses = Counter(_signed_post(client, run.url, n) for n in range(100))
            assert statuses == {202: 100}
            reading = sum(t.status is None for t in flood)
            assert reading == min(FLOOD, addresses * settings_.body_reads_per_client)
            assert budget.used < budget.total // 10  # a body that trickles in holds little
        finally:
            stop.set()
            for thread in threads:
                thread.join()
        _wait_until(lambda: budget.used == 0 and not budget.clients, "the slow bodies are given back")


def test_a_body_slower_than_the_minimum_rate_is_408_once_the_floor_is_over(tmp_path: Path) -> None:
    """A byte every 50 ms arrives within the wait for each piece, but under 1000 bytes a second:
    answered 408 and closed, its share given back, however long the body it declared."""
    settings_ = Settings(webhook_secret=SecretStr(SECRET.decode()), database_url=f"sqlite:///{tmp_path}/db.sqlite",
                         body_read_seconds=0.5, body_min_bytes_per_second=1000, body_chunk_seconds=600)
    app = create_app(settings_)
    with running(app) as run:
        slow = Trickle(run.url, "127.0.0.2", length=100_000, every=0.05)
        slow.run(threading.Event())
        assert slow.status == "408"
        answer = _answer(_stalled(run.url, "slow-2", 100_000, sent=b"{"))
        assert answer.status == 408 and "under 1000 bytes a second" in answer.json()["error"]
        _wait_until(lambda: app.state.body_budget.used == 0 and not app.state.body_budget.clients,
                    "the share is given back")


def test_a_body_that_stops_coming_is_408_after_the_wait_for_a_piece(tmp_path: Path) -> None:
    settings_ = Settings(webhook_secret=SecretStr(SECRET.decode()), database_url=f"sqlite:///{tmp_path}/db.sqlite",
                         body_read_seconds=600, body_chunk_seconds=0.3)
    app = create_app(settings_)
    with running(app) as run:
        answer = _answer(_stalled(run.url, "stopped", 100_000, sent=b"{" * 10))
        assert answer.status == 408 and "nothing came for 0.3 s" in answer.json()["error"]
        assert answer.headers[b"connection"] == b"close"
        _wait_until(lambda: app.state.body_budget.used == 0, "the share is given back")


def test_one_address_holds_at_most_a_quarter_of_the_budget_and_its_share_of_bodies(tmp_path: Path) -> None:
    settings_ = Settings(webhook_secret=SecretStr(SECRET.decode()), database_url=f"sqlite:///{tmp_path}/db.sqlite",
                         max_body_bytes=2 * MIB, body_buffer_bytes=10 * MIB, body_reads_per_client=3,
                         body_read_seconds=600, body_chunk_seconds=600)
    app = create_app(settings_)
    budget = app.state.body_budget
    with running(app) as run:
        large = _stalled(run.url, "large-1", 2 * MIB, "127.0.0.2")
        _wait_until(lambda: budget.used == 2 * MIB, "the first large body is being read")
        second = _answer(_stalled(run.url, "large-2", 2 * MIB, "127.0.0.2"))  # 4 MiB > 2.5 MiB
        assert second.status == 503 and "from one address" in second.json()["error"]
        other = _stalled(run.url, "large-3", 2 * MIB, "127.0.0.3")
        _wait_until(lambda: budget.used == 4 * MIB, "another address's large body is being read")
        small = [_stalled(run.url, f"small-{n}", 1000, "127.0.0.2", sent=b"{") for n in range(2)]
        _wait_until(lambda: budget.clients["127.0.0.2"].bodies == 3, "three bodies from one address")
        fourth = _answer(_stalled(run.url, "small-3", 1000, "127.0.0.2", sent=b"{"))
        assert fourth.status == 503 and "from one address" in fourth.json()["error"]
        for sock in [large, other, *small]:
            sock.close()
        _wait_until(lambda: budget.used == 0 and not budget.clients, "the bodies are given back")
