"""HTTP_REQUEST against a real HTTP server on loopback: signing, classification, caps."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.unit.fulfillment.registry_support import builtin_registry
from tickwork.domain.errors import (
    InvalidActionData,
    PermanentFulfillmentError,
    TransientFulfillmentError,
)
from tickwork.domain.times import iso
from tickwork.fulfillment import FulfillmentRequest, HttpRequestData, HttpRequestFulfillment
from tickwork.fulfillment.http_request import refuse_unsafe_target
from tickwork.integrity.signature import SIGNATURE_HEADER, verify_signature

SECRET = b"webhook-secret"
NOW = datetime(2025, 1, 15, 8, 35, 17, tzinfo=UTC)
SLOW_SECONDS = 3.0
ENDLESS_SECONDS = 30.0
REGISTRY = builtin_registry()


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class _Receiver(BaseHTTPRequestHandler):
    server: _Server

    def _handle(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.received.append(
            Received(self.command, self.path, dict(self.headers.items()), body)
        )
        route, _, arg = self.path.partition("?")[0].strip("/").partition("/")
        if route == "status":
            code = int(arg)
            extra = {"Location": "/elsewhere"} if 300 <= code < 400 else {}
            self._answer(code, f"answer {code}".encode(), extra)
        elif route == "slow":
            self.server.stopping.wait(SLOW_SECONDS)
            self._answer(200, b"late")
        elif route == "big":
            self._answer(200, b"b" * (200 * 1024))
        elif route == "utf8":
            self._answer(200, ("a" + "é" * 1000).encode())
        elif route == "endless":
            self._endless()
        else:
            self._answer(200, b"ok")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    def _answer(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _endless(self) -> None:
        # No Content-Length: the body runs until the client hangs up (or the test ends).
        self.send_response(200)
        self.end_headers()
        give_up = time.monotonic() + ENDLESS_SECONDS
        try:
            while not self.server.stopping.is_set() and time.monotonic() < give_up:
                self.wfile.write(b"e" * 8192)
        except OSError:
            return

    def log_message(self, format: str, *args: Any) -> None:
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Receiver)
        self.received: list[Received] = []
        self.stopping = threading.Event()

    def url(self, path: str) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}{path}"


@pytest.fixture
def receiver() -> Iterator[_Server]:
    server = _Server()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.stopping.set()
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def _request(occurrence: int = 3, **data: Any) -> FulfillmentRequest:
    return FulfillmentRequest(
        action_id="invoice:inv-1",
        action="HTTP_REQUEST",
        occurrence=occurrence,
        scheduled_time=NOW,
        data=HttpRequestData.model_validate(data),
        idempotency_key=f"key-of-{occurrence}",
        attempt=1,
    )


def _signed() -> HttpRequestFulfillment:
    return HttpRequestFulfillment(secret=SECRET, clock=lambda: NOW, allow_private=True)


def test_success_returns_status_and_body_with_a_verifiable_signature(receiver: _Server) -> None:
    # GIVEN a signing fulfillment and a JSON body
    request = _request(url=receiver.url("/hook"), body={"invoice": "inv-1", "amount": 12.5})
    # WHEN it is fulfilled against a server answering 200
    result = _signed().fulfill(request)
    # THEN the result is the status and body
    assert result == {"status": 200, "body": "ok"}
    # AND the server got a POST of the JSON body, signed, with the idempotency headers
    (got,) = receiver.received
    assert got.method == "POST"
    assert json.loads(got.body) == {"invoice": "inv-1", "amount": 12.5}
    assert got.headers["Content-Type"] == "application/json"
    assert got.headers["X-Tickwork-Action-Id"] == "invoice:inv-1"
    assert got.headers["X-Tickwork-Occurrence"] == "3"
    assert got.headers["X-Tickwork-Scheduled-Time"] == iso(request.scheduled_time)
    assert got.headers["X-Tickwork-Attempt"] == "1"
    assert got.headers["X-Tickwork-Trigger"] == "SCHEDULED"
    assert got.headers["Idempotency-Key"] == "key-of-3"
    signature = got.headers[SIGNATURE_HEADER]
    assert signature.startswith(f"t={int(NOW.timestamp())},v1=")
    assert verify_signature(SECRET, signature, got.body, NOW) is True
    # AND the receiver rejects it once the body changed or the signature is too old
    assert verify_signature(SECRET, signature, got.body + b" ", NOW) is False
    assert verify_signature(SECRET, signature, got.body, NOW + timedelta(minutes=6)) is False


def test_method_and_headers_are_sent_as_given(receiver: _Server) -> None:
    # GIVEN a PUT with a custom header and no body
    request = _request(url=receiver.url("/items/7"), method="PUT", headers={"X-Team": "billing"})
    # WHEN it is fulfilled
    _signed().fulfill(request)
    # THEN the server saw that method, path and header, an empty body, and a valid signature
    (got,) = receiver.received
    assert (got.method, got.path, got.headers["X-Team"]) == ("PUT", "/items/7", "billing")
    assert got.body == b""
    assert "Content-Type" not in got.headers
    assert verify_signature(SECRET, got.headers[SIGNATURE_HEADER], b"", NOW) is True


def test_without_a_secret_no_signature_is_sent(receiver: _Server) -> None:
    # GIVEN a fulfillment without a secret WHEN it calls the server
    HttpRequestFulfillment(allow_private=True).fulfill(
        _request(url=receiver.url("/hook"), method="GET")
    )
    # THEN there is no signature, but the idempotency key is still there
    (got,) = receiver.received
    assert SIGNATURE_HEADER not in got.headers
    assert got.headers["Idempotency-Key"] == "key-of-3"


@pytest.mark.parametrize(
    "status",
    [pytest.param(s, id=str(s)) for s in (200, 201, 204, 302, 304)],
)
def test_2xx_and_3xx_succeed_without_following_redirects(receiver: _Server, status: int) -> None:
    # GIVEN a server answering `status` WHEN the request is fulfilled
    result = _signed().fulfill(_request(url=receiver.url(f"/status/{status}")))
    # THEN it succeeds with that status, and a redirect is not followed
    assert result["status"] == status
    assert [r.path for r in receiver.received] == [f"/status/{status}"]


@pytest.mark.parametrize(
    ("status", "error"),
    [
        pytest.param(500, TransientFulfillmentError, id="500-transient"),
        pytest.param(503, TransientFulfillmentError, id="503-transient"),
        pytest.param(429, TransientFulfillmentError, id="429-transient"),
        pytest.param(408, TransientFulfillmentError, id="408-transient"),
        pytest.param(404, PermanentFulfillmentError, id="404-permanent"),
        pytest.param(400, PermanentFulfillmentError, id="400-permanent"),
        pytest.param(401, PermanentFulfillmentError, id="401-permanent"),
        pytest.param(422, PermanentFulfillmentError, id="422-permanent"),
    ],
)
def test_error_statuses_are_classified(receiver: _Server, status: int, error: type) -> None:
    # GIVEN a server answering `status`
    request = _request(url=receiver.url(f"/status/{status}?token=s3cret"))
    # WHEN the request is fulfilled
    with pytest.raises(error) as caught:
        _signed().fulfill(request)
    # THEN the exact class the state machine matches is raised, naming status and body
    assert type(caught.value) is error
    message = str(caught.value)
    assert f"answered {status}: answer {status}" in message
    assert "s3cret" not in message


def test_a_timeout_is_transient(receiver: _Server) -> None:
    # GIVEN a server that answers after longer than the 1 s timeout
    request = _request(url=receiver.url("/slow"), timeout_seconds=1)
    started = time.monotonic()
    # WHEN the request is fulfilled
    with pytest.raises(TransientFulfillmentError, match="timed out") as caught:
        _signed().fulfill(request)
    # THEN it fails as transient after about the timeout, not the server's delay
    assert type(caught.value) is TransientFulfillmentError
    assert time.monotonic() - started < SLOW_SECONDS - 0.5


DRIP_SECONDS = 0.25  # a byte every quarter second: 40 bytes take 10 s


@pytest.fixture
def dripping() -> Iterator[tuple[str, threading.Event]]:
    """A raw TCP receiver that reads the request, then sends its answer one byte at a time,
    each byte well inside any socket timeout: ``/line`` drips the status line, ``/headers``
    the headers after a prompt status line, ``/body`` the body after prompt headers."""
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    answers = {
        "line": (b"", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + b" " * 40),
        "headers": (b"HTTP/1.1 200 OK\r\n", b"X-Slow: " + b"s" * 40 + b"\r\n\r\n"),
        "body": (b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n", b"b" * 40),
    }

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                request = conn.recv(65536).decode("latin-1")
                prompt, drip = answers[request.split(" ", 2)[1].strip("/")]
                try:
                    conn.sendall(prompt)
                    for byte in drip:
                        if stop.wait(DRIP_SECONDS):
                            return
                        conn.sendall(bytes([byte]))
                except OSError:
                    continue  # the client hung up: wait for the next one

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    host, port = listener.getsockname()[:2]
    yield f"http://{host}:{port}", stop
    stop.set()
    thread.join(timeout=5)
    listener.close()


@pytest.mark.parametrize("where", ["line", "headers", "body"])
def test_a_receiver_that_drips_is_cut_off_at_the_timeout(
    dripping: tuple[str, threading.Event], where: str
) -> None:
    # GIVEN a receiver that sends its status line, headers or body one byte at a time, taking
    # 10 s in all though no single read waits more than a quarter second
    base, _ = dripping
    request = _request(url=f"{base}/{where}", method="GET", timeout_seconds=1)
    started = time.monotonic()
    # WHEN the request is fulfilled with a 1 s timeout
    with pytest.raises(TransientFulfillmentError, match="timed out after 1s") as caught:
        _signed().fulfill(request)
    # THEN the attempt ends at its timeout (plus a margin for a busy machine), as a transient
    # failure to retry: not when the receiver is done, and never as a truncated success
    assert time.monotonic() - started < 1 + 4
    assert type(caught.value) is TransientFulfillmentError


def test_a_refused_connection_is_transient() -> None:
    # GIVEN a loopback port nobody listens on
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # WHEN a request is sent there
    with pytest.raises(TransientFulfillmentError, match="ConnectionRefusedError") as caught:
        _signed().fulfill(_request(url=f"http://127.0.0.1:{port}/hook"))
    # THEN it is transient
    assert type(caught.value) is TransientFulfillmentError


def test_an_endless_response_is_capped(receiver: _Server) -> None:
    # GIVEN a server whose response body never ends
    request = _request(url=receiver.url("/endless"), method="GET", timeout_seconds=10)
    started = time.monotonic()
    # WHEN the request is fulfilled
    result = _signed().fulfill(request)
    # THEN reading stops at the cap, long before the timeout, with the first 1 KiB returned
    assert time.monotonic() - started < 5
    assert result == {"status": 200, "body": "e" * 1024}


def test_a_large_response_body_is_cut_to_1_kib(receiver: _Server) -> None:
    # GIVEN a server answering 200 KiB WHEN the request is fulfilled
    result = _signed().fulfill(_request(url=receiver.url("/big"), method="GET"))
    # THEN the result holds the first 1 KiB as text
    assert result == {"status": 200, "body": "b" * 1024}


def test_the_body_is_not_cut_inside_a_character(receiver: _Server) -> None:
    # GIVEN a UTF-8 body whose 1024th byte is half of a two-byte character
    result = _signed().fulfill(_request(url=receiver.url("/utf8"), method="GET"))
    # THEN the text stops before that character, without a replacement mark
    assert result["body"] == "a" + "é" * 511


@pytest.mark.parametrize(
    ("data", "field"),
    [
        pytest.param({"url": "ftp://example.test/file"}, "data.url", id="not-http"),
        pytest.param({"url": "example.test/hook"}, "data.url", id="relative"),
        pytest.param({"url": "http://example.test:port/"}, "data.url", id="bad-port"),
        pytest.param({"url": "https://x.test", "method": "HEAD"}, "data.method", id="method"),
        pytest.param(
            {"url": "https://x.test", "timeout_seconds": 0}, "data.timeout_seconds", id="t0"
        ),
        pytest.param(
            {"url": "https://x.test", "headers": {"idempotency-key": "mine"}},
            "data.headers",
            id="reserved-header",
        ),
        pytest.param(
            {"url": "https://x.test", "headers": {"X-A": "one\r\nX-B: two"}},
            "data.headers",
            id="header-injection",
        ),
        pytest.param({"url": "https://x.test", "verb": "POST"}, "data.verb", id="unknown-field"),
        *(
            pytest.param(
                {"url": "https://x.test", "headers": {name: value}}, "data.headers", id=name
            )
            for name, value in [
                ("Host", "evil.example"),
                ("host ", "evil.example"),
                ("Content-Length", "1"),
                ("Transfer-Encoding", "chunked"),
                ("Connection", "close"),
                ("Upgrade", "websocket"),
                ("TE", "trailers"),
                ("Trailer", "X-A"),
                ("Keep-Alive", "timeout=5"),
                ("Proxy-Authorization", "Basic eA=="),
                ("Proxy-Connection", "keep-alive"),
                ("X-Nul", "a\x00b"),
                ("X(A)", "separators in the name"),
            ]
        ),
    ],
)
def test_invalid_http_request_data_is_refused(data: dict[str, Any], field: str) -> None:
    # GIVEN the default registry WHEN invalid HTTP_REQUEST data is validated
    with pytest.raises(InvalidActionData) as caught:
        REGISTRY.validate("HTTP_REQUEST", data)
    # THEN the field is named with a fix
    problems = {p.field: p for p in caught.value.problems}
    assert field in problems, caught.value.problems
    assert problems[field].fix


def test_http_request_defaults() -> None:
    # GIVEN only a URL WHEN it is validated THEN POST, no headers, no body, 10 s apply
    data = REGISTRY.validate("HTTP_REQUEST", {"url": "https://example.test/hook"})
    assert data == HttpRequestData(
        url="https://example.test/hook", method="POST", headers={}, body=None, timeout_seconds=10
    )


@pytest.mark.parametrize(
    ("url", "resolved", "allow_private"),
    [
        ("http://169.254.169.254/latest/meta-data/", [], True),  # metadata, even when allowed
        ("http://[fd00:ec2::254]/latest/meta-data/", [], True),
        ("http://169.254.10.1/", [], True),  # link-local
        ("http://metadata.attacker.example/", ["169.254.169.254"], True),  # via DNS
        ("http://[::ffff:169.254.169.254]/", [], True),  # IPv4-mapped
        ("http://10.0.0.5/hook", [], False),
        ("http://127.0.0.1:8080/hook", [], False),
        ("https://internal.example/hook", ["192.168.1.20"], False),
    ],
)
def test_metadata_link_local_and_unallowed_private_targets_are_refused(
    url: str, resolved: list[str], allow_private: bool
) -> None:
    fulfillment = HttpRequestFulfillment(allow_private=allow_private, resolve=lambda _: resolved)
    with pytest.raises(PermanentFulfillmentError, match="refused"):
        fulfillment.fulfill(_request(url=url, method="GET"))


def test_a_public_address_passes_the_guard() -> None:
    refuse_unsafe_target("https://hooks.example.com/x", lambda _: ["93.184.216.34"], False)
