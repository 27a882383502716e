"""The emulated AWS endpoint on a loopback port: a moto server in this process.

In this process so that the in-process Lambda runtime answers the interpreter's invokes.
Binds 127.0.0.1 only. While inside ``serving()``, boto3 clients made in this process (ours
and the interpreter's) go to it through ``AWS_ENDPOINT_URL`` / ``MOTO_PORT``.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import requests
from moto.server import ThreadedMotoServer

__all__ = ["free_port", "serving"]

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(port: int | None = None) -> Iterator[str]:
    """Run the endpoint with moto's Step Functions interpreter on; yield its URL."""
    port = port or free_port()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address=LOOPBACK, port=port, verbose=False)
    server.start()
    url = f"http://{LOOPBACK}:{port}"
    saved = {key: os.environ.get(key) for key in ("AWS_ENDPOINT_URL", "MOTO_PORT")}
    try:
        response = requests.post(
            f"{url}/moto-api/config",
            json={"stepfunctions": {"execute_state_machine": True}},
            timeout=10,
        )
        response.raise_for_status()
        os.environ["AWS_ENDPOINT_URL"] = url
        os.environ["MOTO_PORT"] = str(port)  # the interpreter's own clients use it
        yield url
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()
