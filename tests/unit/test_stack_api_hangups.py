"""GIVEN the HTTP API's client (the CLI's and a service's) WHEN the stack hangs up without an
answer (killed mid-call) THEN the call fails as ``ApiError`` ``Unreachable`` naming the URL, not
a raw ``http.client`` or socket traceback; one that never answers within the call's time is
``Timeout``."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from tickwork_client.stack_api import ApiError, BearerSigner, StackApi


@pytest.fixture
def hangs_up() -> Iterator[str]:
    """A loopback server that reads each request and closes the connection unanswered."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.05)  # looks at `stopping` between accepts
    port = server.getsockname()[1]
    stopping = threading.Event()

    def serve() -> None:
        while not stopping.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                connection.recv(65536)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/"
    stopping.set()
    thread.join(timeout=10)
    server.close()


def test_a_stack_that_hangs_up_mid_call_is_disconnected_naming_the_url(hangs_up: str) -> None:
    api = StackApi(hangs_up, BearerSigner("token"), timeout=30)
    with pytest.raises(ApiError) as failed:
        api.advance_time({"advance": "1h"})
    assert failed.value.status == 0 and failed.value.error == "Disconnected"
    assert hangs_up.rstrip("/") in str(failed.value)


def test_a_stack_that_never_answers_times_out_naming_the_url() -> None:
    server = socket.create_server(("127.0.0.1", 0))  # listens, never accepts nor answers
    try:
        url = f"http://127.0.0.1:{server.getsockname()[1]}/"
        with pytest.raises(ApiError) as failed:
            StackApi(url, BearerSigner("token")).call("GET", "/local/time", timeout=0.2)
        assert failed.value.error == "Timeout" and url.rstrip("/") in str(failed.value)
    finally:
        server.close()
