"""A Task state reuses one boto3 client per service and region, not a new one per task.

Found: ``moto/stepfunctions/parser/asl/utils/boto_client.py``, ``boto_client_for``, builds a
new botocore client (~10 ms) for every Task state an execution enters.

Replaced: ``boto_client_for`` in every interpreter module that imported it, by one client per
(region, service, whether moto's in-process stubber is on, server port). botocore clients are
thread-safe, and the credentials of a state are the stack's own here.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock

__all__ = ["one_client_per_service"]


@contextmanager
def one_client_per_service() -> Iterator[None]:
    from moto.core.models import botocore_stubber
    from moto.settings import moto_server_port
    from moto.stepfunctions.parser.asl.utils import boto_client

    original: Callable[..., Any] = boto_client.boto_client_for
    clients: dict[tuple[str, str, bool, str], Any] = {}
    lock = threading.Lock()

    def boto_client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        key = (region, service, botocore_stubber.enabled, str(moto_server_port()))
        with lock:
            if key not in clients:
                clients[key] = original(region, service, state_credentials)
            return clients[key]

    users = [
        module
        for name, module in list(sys.modules.items())
        if name.startswith("moto.stepfunctions.parser")
        and getattr(module, "boto_client_for", None) is original
    ]
    with ExitStack() as patches:
        for module in users:
            patches.enter_context(mock.patch.object(module, "boto_client_for", boto_client_for))
        yield
