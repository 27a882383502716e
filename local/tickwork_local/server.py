"""The emulated AWS endpoint on a loopback port: a moto server in this process.

In this process so that the in-process Lambda runtime answers the interpreter's invokes.
Binds 127.0.0.1 only. While inside ``serving()``, boto3 clients made in this process (ours
and the interpreter's) go to it through ``AWS_ENDPOINT_URL`` / ``MOTO_PORT``.
"""

from __future__ import annotations

import copy
import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import requests
from moto.core.config import default_user_config
from moto.server import ThreadedMotoServer

__all__ = ["LOCAL_CREDENTIALS", "LOOPBACK", "free_port", "serving"]

LOOPBACK = "127.0.0.1"
# The emulator takes any credentials; these make sure no real ones are ever sent to it.
LOCAL_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "tickwork-local",
    "AWS_SECRET_ACCESS_KEY": "tickwork-local",
    "AWS_SESSION_TOKEN": "tickwork-local",
}


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
    # MOTO_PORT is where the interpreter's own clients go.
    settings = {"AWS_ENDPOINT_URL": url, "MOTO_PORT": str(port), **LOCAL_CREDENTIALS}
    saved = {key: os.environ.get(key) for key in settings}
    # The config call below switches moto's interpreter on for this whole process.
    saved_config = copy.deepcopy(default_user_config.get("stepfunctions"))
    try:
        response = requests.post(
            f"{url}/moto-api/config",
            json={"stepfunctions": {"execute_state_machine": True}},
            timeout=10,
        )
        response.raise_for_status()
        os.environ.update(settings)
        yield url
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        default_user_config["stepfunctions"] = saved_config
        server.stop()
